//! Shared by the serve_* tests: a synth tree, an `irqlab serve` child on a
//! free loopback port (killed on drop), and a tiny HTTP GET.
#![allow(clippy::unwrap_used, dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
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

/// A running `irqlab serve`; killed and reaped on drop.
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
    loop {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("irqlab serve exited before listening: {line}");
        }
        if let Some(rest) = line.split("serving http://").nth(1) {
            server.addr = rest.split('/').next().unwrap().parse().unwrap();
            // Keep draining stderr so the child never blocks on it.
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                let _ = err.read_to_end(&mut sink);
            });
            return server;
        }
    }
}

/// `METHOD path` over a fresh connection: (status code, body).
pub fn request(addr: SocketAddr, method: &str, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        if method == "GET" && len != body.len() {
            return Err(std::io::Error::other(format!(
                "short body: {} of {len} bytes",
                body.len()
            )));
        }
    }
    Ok((code, body.to_string()))
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
