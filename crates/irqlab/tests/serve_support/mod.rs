//! Shared by the serve_* tests: a synth tree, an `irqlab serve` child on a
//! free loopback port (killed on drop), a tiny HTTP GET (with or without an
//! `Accept` header), `promtool check metrics`, and a real Prometheus
//! scraping given targets.
#![allow(clippy::unwrap_used, dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Write a small fake tree under `out`.
pub fn synth(out: &Path, cpus: u32, irqs: u32) {
    let st = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args([
            "synth",
            "--ncpus",
            &cpus.to_string(),
            "--irqs",
            &irqs.to_string(),
            "--out",
        ])
        .arg(out)
        .status()
        .unwrap();
    assert!(st.success());
}

/// A running child listening on `addr` (`irqlab serve`, node_exporter,
/// Prometheus); killed and reaped on drop.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `irqlab serve --root root --listen 127.0.0.1:0 ARGS` and wait for
/// its "serving http://ADDR/metrics" line.
pub fn serve(root: &Path, args: &[&str]) -> Server {
    serve_noting(root, args).0
}

/// [`serve`], and what the server said on stderr before its "serving"
/// line.
pub fn serve_noting(root: &Path, args: &[&str]) -> (Server, String) {
    let child = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("serve")
        .arg("--root")
        .arg(root)
        .args(["--listen", "127.0.0.1:0", "--duration", "120s"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Owned by the guard at once: killed and reaped whatever happens next.
    let mut server = Server {
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let mut err = BufReader::new(server.child.stderr.take().unwrap());
    let mut line = String::new();
    let mut before = String::new();
    loop {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("irqlab serve exited before listening: {before}{line}");
        }
        if let Some(rest) = line.split("serving http://").nth(1) {
            server.addr = rest.split('/').next().unwrap().parse().unwrap();
            // Keep draining stderr so the child never blocks on it.
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                let _ = err.read_to_end(&mut sink);
            });
            return (server, before);
        }
        before.push_str(&line);
    }
}

/// Run `irqlab serve --root root --listen 127.0.0.1:0 ARGS` (stdin
/// closed) to its end (ARGS hold a `--duration`): its exit status and
/// output.
pub fn serve_to_end(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("serve")
        .arg("--root")
        .arg(root)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A loopback address whose port nothing listens on right now.
pub fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// `METHOD path` over a fresh connection: (status code, body).
pub fn request(addr: SocketAddr, method: &str, path: &str) -> std::io::Result<(u16, String)> {
    let (head, body) = exchange(addr, method, path, "")?;
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok((code, body))
}

/// `METHOD path` with the header lines `extra` (each ending in `\r\n`)
/// over a fresh connection: (head, body); a GET body shorter than its
/// `Content-Length` is an error.
fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    extra: &str,
) -> std::io::Result<(String, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: test\r\n{extra}Connection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    if let Some(len) = header(head, "Content-Length").and_then(|v| v.trim().parse::<usize>().ok()) {
        if method == "GET" && len != body.len() {
            return Err(std::io::Error::other(format!(
                "short body: {} of {len} bytes",
                body.len()
            )));
        }
    }
    Ok((head.to_string(), body.to_string()))
}

/// The value of the header line `name: ` in `head`.
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(": ")))
}

/// GET /metrics with an optional `Accept` header, which must answer 200
/// with a Content-Type: (Content-Type, body).
pub fn scrape_as(addr: SocketAddr, accept: Option<&str>) -> (String, String) {
    let extra = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    let (head, body) = exchange(addr, "GET", "/metrics", &extra).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let ctype = header(&head, "Content-Type")
        .unwrap_or_else(|| panic!("no Content-Type in {head}"))
        .to_string();
    (ctype, body)
}

/// GET /metrics, which must answer 200.
pub fn scrape(addr: SocketAddr) -> String {
    let (code, body) = request(addr, "GET", "/metrics").unwrap();
    assert_eq!(code, 200, "{body}");
    body
}

/// The value of the first sample line starting with `prefix`.
pub fn value(body: &str, prefix: &str) -> Option<f64> {
    body.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// `name` found on PATH.
pub fn have(name: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// `promtool check metrics` on `body`, which must pass (`what` names the
/// body in the failure). Callers skip, saying so, without promtool
/// ([`have`]).
pub fn promtool_check(body: &str, what: &str) {
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    p.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = p.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool rejects {what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `q` percent-encoded for a query string (a PromQL query for the HTTP
/// API).
pub fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A real Prometheus on a free loopback port, storing under `dir`,
/// scraping each `(job, target)` every 1 s (timeout 1 s, evaluation every
/// 1 s). Callers skip, saying so, without prometheus ([`have`]).
pub fn prometheus(dir: &Path, jobs: &[(&str, SocketAddr)]) -> Server {
    let addr = free_port();
    let config = dir.join("prometheus.yml");
    let mut yml = String::from(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n",
    );
    for (job, target) in jobs {
        yml +=
            &format!("  - job_name: {job}\n    static_configs:\n      - targets: ['{target}']\n");
    }
    std::fs::write(&config, yml).unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Server { child, addr }
}
