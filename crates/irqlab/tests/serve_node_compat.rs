//! `serve --compat node` beside a real node_exporter (Debian's
//! `prometheus-node-exporter`, 1.5.0 here; skipped visibly without it):
//! the same series (names, label names and values) for every family both
//! emit, on a fake tree (equal values) and on this host's /proc (irqlab's
//! value between two node_exporter scrapes around it); through a real
//! Prometheus (skipped visibly without it), Node Exporter Full's queries
//! give the same series for both jobs.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{encode, free_port, have, prometheus, request, scrape, serve, synth, Server};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NODE_EXPORTER: &str = "prometheus-node-exporter";

/// node_exporter families `--compat node` emits that node_exporter 1.5.0
/// has too (`node_softirqs_functions_total` came with 1.6.0).
const SHARED: [&str; 6] = [
    "node_interrupts_total",
    "node_intr_total",
    "node_softirqs_total",
    "node_cpu_seconds_total",
    "node_cpu_guest_seconds_total",
    "node_uname_info",
];

/// node_exporter with only the collectors `--compat node` mirrors, reading
/// `procfs`, on a free loopback port; `None` when not installed.
fn node_exporter(test: &str, procfs: &Path) -> Option<Server> {
    if !have(NODE_EXPORTER) {
        crate::visible!(
            "SKIP {test}: {NODE_EXPORTER} not installed (apt-get install prometheus-node-exporter)"
        );
        return None;
    }
    let addr = free_port();
    let child = Command::new(NODE_EXPORTER)
        .arg(format!("--web.listen-address={addr}"))
        .arg(format!("--path.procfs={}", procfs.display()))
        .args([
            "--collector.disable-defaults",
            "--collector.interrupts",
            "--collector.stat",
            "--collector.stat.softirq",
            "--collector.cpu",
            "--collector.uname",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let e = Server { child, addr };
    let start = Instant::now();
    while request(e.addr, "GET", "/").is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "node_exporter did not answer"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(e)
}

/// Series of the shared families: (name, sorted labels) -> value.
type Series = BTreeMap<(String, Vec<(String, String)>), f64>;

fn parse(body: &str) -> Series {
    let mut out = Series::new();
    for l in body.lines().filter(|l| !l.starts_with('#')) {
        let Some((id, v)) = l.rsplit_once(' ') else {
            continue;
        };
        let (name, labels) = match id.split_once('{') {
            Some((n, rest)) => (n, rest.strip_suffix('}').unwrap()),
            None => (id, ""),
        };
        if !SHARED.contains(&name) {
            continue;
        }
        let mut labs = Vec::new();
        let mut rest = labels;
        while let Some((k, r)) = rest.split_once("=\"") {
            // Label values here hold no escaped quotes.
            let (v, r) = r.split_once('"').unwrap();
            labs.push((k.trim_start_matches(',').to_string(), v.to_string()));
            rest = r;
        }
        labs.sort();
        out.insert((name.to_string(), labs), v.parse().unwrap());
    }
    out
}

/// GET /metrics over HTTP/1.0 (node_exporter answers HTTP/1.1 chunked).
fn get(addr: SocketAddr) -> String {
    get_path(addr, "/metrics").unwrap()
}

/// GET `path` over HTTP/1.0: the body of a 200 answer.
fn get_path(addr: SocketAddr, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    (head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200")).then(|| body.to_string())
}

/// The series of `a` not in `b`.
fn missing<'a>(a: &'a Series, b: &Series) -> Vec<&'a (String, Vec<(String, String)>)> {
    a.keys().filter(|k| !b.contains_key(*k)).collect()
}

fn keys(s: &Series) -> BTreeSet<&(String, Vec<(String, String)>)> {
    s.keys().collect()
}

fn families(s: &Series) -> BTreeSet<&str> {
    s.keys().map(|k| k.0.as_str()).collect()
}

#[test]
fn node_compat_series_equal_node_exporter_on_a_fake_tree() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 8);
    let Some(ne) = node_exporter(
        "node_compat_series_equal_node_exporter_on_a_fake_tree",
        &d.path().join("proc"),
    ) else {
        return;
    };
    let s = serve(d.path(), &["--compat", "node", "--per-cpu", "all"]);
    let want = parse(&get(ne.addr));
    let got = parse(&scrape(s.addr));
    assert_eq!(families(&got), SHARED.into_iter().collect());
    assert!(
        keys(&got) == keys(&want),
        "only irqlab: {:?}\nonly node_exporter: {:?}",
        missing(&got, &want),
        missing(&want, &got)
    );
    for (k, v) in &want {
        assert!(
            (got[k] - v).abs() < 1e-6,
            "{k:?}: irqlab {} node_exporter {v}",
            got[k]
        );
    }
    // The per-CPU softirq family of node_exporter 1.6.0 and later.
    let b = scrape(s.addr);
    assert!(
        b.contains("node_softirqs_functions_total{cpu=\"1\",type=\"NET_RX\"} "),
        "{b}"
    );
    assert!(b.contains("node_softirqs_total{vector=\"net_rx\"} "));
}

#[test]
fn node_compat_matches_node_exporter_on_this_host_within_a_scrape() {
    let Some(ne) = node_exporter(
        "node_compat_matches_node_exporter_on_this_host_within_a_scrape",
        Path::new("/proc"),
    ) else {
        return;
    };
    // Read at scrape time: irqlab's values come from between the two
    // node_exporter scrapes (its start-up read is older than 5 ms then).
    let s = serve(
        Path::new("/"),
        &[
            "--compat",
            "node",
            "--per-cpu",
            "all",
            "--min-interval",
            "10ms",
        ],
    );
    std::thread::sleep(Duration::from_millis(50));
    let before = parse(&get(ne.addr));
    let got = parse(&scrape(s.addr));
    let after = parse(&get(ne.addr));
    // An IRQ can appear or go between the two node_exporter scrapes.
    let stable: BTreeSet<_> = keys(&before).intersection(&keys(&after)).copied().collect();
    assert_eq!(families(&got), SHARED.into_iter().collect());
    let only =
        |a: &BTreeSet<_>, b: &BTreeSet<_>| a.difference(b).copied().cloned().collect::<Vec<_>>();
    let got_keys = keys(&got);
    assert!(
        got_keys == stable,
        "only irqlab: {:?}\nonly node_exporter: {:?}",
        only(&got_keys, &stable),
        only(&stable, &got_keys)
    );
    for k in stable {
        let (lo, hi, v) = (before[k], after[k], got[k]);
        // idle and iowait may step back a tick on a tickless kernel.
        let slack = if k
            .1
            .iter()
            .any(|(n, m)| n == "mode" && (m == "idle" || m == "iowait"))
        {
            0.05
        } else {
            1e-6
        };
        assert!(
            v >= lo - slack && v <= hi + slack,
            "{k:?}: irqlab {v} outside node_exporter's [{lo}, {hi}]"
        );
    }
}

/// The label sets (without `instance` and `job`) of a query's result.
fn result_labels(body: &str) -> BTreeSet<String> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut m = r["metric"].as_object().unwrap().clone();
            m.remove("instance");
            m.remove("job");
            serde_json::Value::Object(m).to_string()
        })
        .collect()
}

/// Node Exporter Full's interrupt, softirq, CPU and variable queries
/// (`$node`/`$job` filled in per job, `$__rate_interval` as 1m).
const DASHBOARD: [&str; 7] = [
    "count(count(node_cpu_seconds_total{instance=\"$node\",job=\"$job\"}) by (cpu))",
    "sum by(instance) (irate(node_cpu_seconds_total{instance=\"$node\",job=\"$job\", mode!=\"idle\"}[1m])) / on(instance) group_left sum by (instance)((irate(node_cpu_seconds_total{instance=\"$node\",job=\"$job\"}[1m])))",
    "sum(irate(node_cpu_seconds_total{instance=\"$node\",job=\"$job\", mode=\"softirq\"}[1m])) / scalar(count(count(node_cpu_seconds_total{instance=\"$node\",job=\"$job\"}) by (cpu)))",
    "irate(node_softirqs_total{instance=\"$node\",job=\"$job\"}[1m])",
    "irate(node_interrupts_total{instance=\"$node\",job=\"$job\"}[1m])",
    "irate(node_intr_total{instance=\"$node\",job=\"$job\"}[1m])",
    "node_uname_info{instance=\"$node\",job=\"$job\"}",
];

#[test]
fn node_exporter_full_queries_give_the_same_series_through_prometheus() {
    let test = "node_exporter_full_queries_give_the_same_series_through_prometheus";
    if !have("prometheus") {
        crate::visible!("SKIP {test}: prometheus not installed (tools/install-prometheus.sh)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree, 4, 8);
    let Some(ne) = node_exporter(test, &tree.join("proc")) else {
        return;
    };
    let s = serve(&tree, &["--compat", "node", "--per-cpu", "all"]);
    let prom = prometheus(d.path(), &[("node", ne.addr), ("irqlab", s.addr)]);
    let prom_addr = prom.addr;
    let query = |q: &str| -> Option<String> {
        let path = format!("/api/v1/query?query={}", encode(q));
        get_path(prom_addr, &path).filter(|b| b.contains("\"result\":[{"))
    };
    // Node Exporter Full's $job and $node variables: label_values of
    // node_uname_info. Wait for three scrapes of each job (irate needs two).
    let end = Instant::now() + Duration::from_secs(90);
    let ready = |job: &str| {
        query(&format!(
            "count_over_time(node_uname_info{{job=\"{job}\"}}[1m]) >= 3"
        ))
        .is_some()
    };
    while !(ready("node") && ready("irqlab")) {
        assert!(Instant::now() < end, "Prometheus never scraped both jobs");
        std::thread::sleep(Duration::from_millis(500));
    }
    for expr in DASHBOARD {
        let per_job = |job: &str, node: SocketAddr| {
            let q = expr
                .replace("$node", &node.to_string())
                .replace("$job", job);
            let b = query(&q).unwrap_or_else(|| panic!("no data for {job}: {q}"));
            result_labels(&b)
        };
        assert_eq!(
            per_job("irqlab", s.addr),
            per_job("node", ne.addr),
            "{expr}"
        );
    }
}
