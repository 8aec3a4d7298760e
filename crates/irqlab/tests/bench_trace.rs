//! `irqlab bench --trace`. With the `trace` feature, as root (live): during
//! `bench -w net --trace` every trial's traced NET_RX count matches the
//! kernel's own /proc/softirqs delta of that trial within 2 % (+2 for the
//! edges: the traced window sits inside the sampled one), softirq time is
//! non-zero, the latency quantiles are there, and the host is left as
//! found (tracefs mounted or not as before). Without the feature: a usage
//! error naming the way to get it, before any file is written.
#![allow(clippy::unwrap_used)]

mod common;

use serde_json::Value;
use std::path::Path;

#[cfg(feature = "trace")]
fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP bench_trace: {why}");
}

#[cfg(feature = "trace")]
fn tracefs_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/sys/kernel/tracing"))
}

#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn trials(out: &Path) -> Vec<Value> {
    let mut v = Vec::new();
    for e in walk(out) {
        if e.file_name().is_some_and(|n| n == "trials.jsonl") {
            for l in std::fs::read_to_string(&e).unwrap().lines() {
                v.push(serde_json::from_str(l).unwrap());
            }
        }
    }
    v
}

#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[cfg(feature = "trace")]
#[test]
fn net_rx_traced_count_matches_proc_softirqs_within_2_percent_or_skip() {
    if !common::host_changes_allowed(
        "bench_trace: net_rx_traced_count_matches_proc_softirqs_within_2_percent_or_skip",
    ) {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        skip("not root");
        return;
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        skip("no BTF at /sys/kernel/btf/vmlinux");
        return;
    }
    if common::host_lock_held(
        "bench_trace: net_rx_traced_count_matches_proc_softirqs_within_2_percent_or_skip",
    ) {
        return;
    }
    let mounted_before = tracefs_mounted();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("run");
    let o = common::irqlab()
        .args(["bench", "-w", "net", "--trace", "--trials", "3"])
        .args(["--trial-length", "1s", "--cooldown", "0s", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(tracefs_mounted(), mounted_before, "tracefs as found");
    let ts = trials(&out);
    assert_eq!(ts.len(), 3, "{err}");
    for t in &ts {
        let m = &t["metrics"];
        let d = t["duration_s"].as_f64().unwrap();
        let kernel = m["softirq_net_rx_per_sec"]["value"].as_f64().unwrap() * d;
        let traced = m["trace_softirq_net_rx_count"]["value"].as_f64().unwrap();
        assert!(kernel >= 100.0, "the workload raised only {kernel} NET_RX");
        assert!(
            (traced - kernel).abs() <= kernel * 0.02 + 2.0,
            "traced {traced} vs /proc/softirqs {kernel}"
        );
        assert!(m["trace_softirq_time_pct"]["value"].as_f64().unwrap() > 0.0);
        assert!(
            m["trace_softirq_net_rx_time_pct"]["value"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        assert!(
            m["trace_softirq_net_rx_latency_p50_ns"]["value"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        assert_eq!(m["trace_softirq_net_rx_p99_ns"]["direction"], "lower");
    }
    // Without IRQ time accounting /proc/stat's irq and softirq shares are
    // tick samples: with --trace they are the traced time, never a tick 0.
    let env: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("env.json")).unwrap()).unwrap();
    if env["irq_time_accounting"]
        .as_str()
        .is_some_and(|a| a.starts_with("off"))
    {
        for t in &ts {
            let m = &t["metrics"];
            for (stat, traced) in [
                ("irq_cpu_pct", "trace_irq_time_pct"),
                ("softirq_cpu_pct", "trace_softirq_time_pct"),
            ] {
                assert_eq!(m[stat]["value"], m[traced]["value"], "{stat}: {t}");
            }
            assert!(
                t["notes"].to_string().contains("from the traced time"),
                "{t}"
            );
        }
    }
}

#[cfg(not(feature = "trace"))]
#[test]
fn trace_without_the_feature_is_a_usage_error_before_any_file() {
    let d = tempfile::tempdir().unwrap();
    let tree = common::bench_tree("6.1.0-test", "boot-a", &[]);
    let out = d.path().join("run");
    let o = common::irqlab()
        .args([
            "bench",
            "--trace",
            "--trials",
            "1",
            "--trial-length",
            "100ms",
            "--root",
        ])
        .arg(tree.path())
        .arg("--journal")
        .arg(d.path().join("journal.jsonl"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--trace") && err.contains("--features trace"),
        "{err}"
    );
    assert!(!out.exists(), "a refused run creates nothing");
}
