//! Real Prometheus scraping `irqlab serve` on loopback: a temporary config
//! and storage, both on free ports, a 1 s scrape interval; waits for two
//! scrapes, then queries `rate(irqlab_interrupts_total[1m])` through the
//! HTTP API and expects a non-empty result. Skips, saying why, without the
//! `prometheus` binary (tools/install-prometheus.sh installs it). The same
//! Prometheus then evaluates every query of the Grafana dashboard
//! (docs/grafana/irqlab.json): each must be valid PromQL, and each whose
//! metrics this tree exposes must return data.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{have, request, serve, synth};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback port nothing listens on right now.
fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// GET `path` on `addr` until `ok(body)` or the deadline.
fn poll(addr: SocketAddr, path: &str, secs: u64, ok: impl Fn(&str) -> bool) -> Option<String> {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if let Ok((200, body)) = request(addr, "GET", path) {
            if ok(&body) {
                return Some(body);
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    None
}

#[test]
fn prometheus_scrapes_and_rates_or_skip() {
    if !have("prometheus") {
        crate::visible!("SKIP prometheus_scrapes_and_rates_or_skip: prometheus not installed (tools/install-prometheus.sh)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree, 4, 8);
    let s = serve(&tree, &["-i", "500ms"]);
    let prom_addr = free_port();
    let config = d.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: irqlab\n    static_configs:\n      - targets: ['{}']\n",
            s.addr
        ),
    )
    .unwrap();
    let prom = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            d.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={prom_addr}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _prom = Killed(prom);
    // Two scrapes: irqlab counts its /metrics requests.
    let two = poll(s.addr, "/metrics", 60, |_| true).and_then(|_| {
        poll(
            prom_addr,
            "/api/v1/query?query=irqlab_scrapes_total",
            60,
            |b| b.contains("\"result\":[{"),
        )
    });
    assert!(two.is_some(), "Prometheus never stored a scrape of irqlab");
    let q = "/api/v1/query?query=rate(irqlab_interrupts_total%5B1m%5D)";
    let body = poll(prom_addr, q, 60, |b| b.contains("\"result\":[{"));
    let body =
        body.unwrap_or_else(|| panic!("rate() stayed empty: {:?}", request(prom_addr, "GET", q)));
    assert!(body.contains("\"status\":\"success\""), "{body}");
    assert!(
        body.contains("\"__name__\"") || body.contains("\"irq\""),
        "{body}"
    );
    let (_, metrics) = request(s.addr, "GET", "/metrics").unwrap();
    dashboard_queries_evaluate(prom_addr, &metrics);
}

/// Every `expr` of the Grafana dashboard, with its variables set as
/// Grafana would (all instances, a 1 m rate window).
fn dashboard_exprs() -> Vec<String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/grafana/irqlab.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            let e = t["expr"].as_str().unwrap();
            out.push(
                e.replace("$__rate_interval", "1m")
                    .replace("$instance", ".*"),
            );
        }
    }
    assert!(out.len() >= 8, "{out:?}");
    out
}

fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn dashboard_queries_evaluate(prom: SocketAddr, metrics: &str) {
    for expr in dashboard_exprs() {
        let q = format!("/api/v1/query?query={}", encode(&expr));
        let present = expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("irqlab_"))
            .all(|m| {
                metrics
                    .lines()
                    .any(|l| l.starts_with(&format!("{m}{{")) || l.starts_with(&format!("{m} ")))
            });
        let body = if present {
            poll(prom, &q, 60, |b| b.contains("\"result\":[{"))
        } else {
            poll(prom, &q, 10, |b| b.contains("\"status\":\"success\""))
        };
        let body = body
            .unwrap_or_else(|| panic!("dashboard query {expr}: {:?}", request(prom, "GET", &q)));
        assert!(body.contains("\"status\":\"success\""), "{expr}: {body}");
    }
}
