//! Live (feature `trace`, root, bpftrace, bpftool, python3): the
//! independent cross-check of `irqlab trace`: its per softirq
//! vector and per CPU counts and times next to bcc-style per-event sums
//! made by bpftrace (tools/trace-crosscheck.bt) over the same window under
//! a loopback TCP workload, driven by tools/trace-crosscheck.py. Every
//! difference must lie within the tolerance the tool derives from the same
//! run (window-edge steps of bpftrace's 20-ms snapshots, runs in flight,
//! both tools' measured per-run program cost; docs/trace.md), and the
//! kernel's own accounting over the same window (/proc/stat's softirq
//! column, the ksoftirqd threads' run time) must bound irqlab's times.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;

use common::trace::{runs, Needs};

fn skip_reason() -> Option<String> {
    let why = common::trace::skip_reason(Needs {
        bpftool: true,
        ..Needs::default()
    });
    if why.is_some() {
        return why;
    }
    for (cmd, arg) in [("bpftrace", "--version"), ("python3", "--version")] {
        if !runs(cmd, arg) {
            return Some(format!(
                "{cmd} not installed (tools/install-trace-deps.sh --with-bpftrace)"
            ));
        }
    }
    None
}

#[test]
fn irqlab_and_bpftrace_agree_within_the_runs_tolerance_or_skip() {
    if !common::host_changes_allowed(
        "trace_crosscheck: irqlab_and_bpftrace_agree_within_the_runs_tolerance_or_skip",
    ) {
        return;
    }
    if common::trace::skipped(
        "trace_crosscheck: irqlab_and_bpftrace_agree_within_the_runs_tolerance_or_skip",
        skip_reason(),
    ) {
        return;
    }
    let (v, stderr, ok) = common::trace::python_tool("trace-crosscheck.py", &["--duration", "3"]);
    let rows = v["rows"].as_array().unwrap();
    let row = |what: &str| rows.iter().find(|r| r["what"] == what);
    // the workload ran: NET_RX on both sides, and per-CPU hard IRQ rows
    let net = row("softirq NET_RX").unwrap_or_else(|| panic!("no NET_RX: {v}"));
    assert!(net["irqlab_count"].as_f64().unwrap() > 0.0, "{net}");
    assert!(net["bpftrace_count"].as_f64().unwrap() > 0.0, "{net}");
    let hard = rows
        .iter()
        .filter(|r| r["what"].as_str().unwrap().ends_with("hardirq+vectors"))
        .count();
    assert!(hard >= 1, "no per-CPU hard IRQ row: {v}");
    for r in rows {
        let f = |k: &str| r[k].as_f64().unwrap();
        let (dc, dn) = (
            (f("irqlab_count") - f("bpftrace_count")).abs(),
            (f("irqlab_ns") - f("bpftrace_ns")).abs(),
        );
        assert!(dc <= f("count_tolerance"), "count: {r}");
        assert!(dn <= f("ns_tolerance"), "time: {r}");
    }
    // the kernel's own accounting (no osnoise here): one-sided bounds
    let krows = v["kernel_rows"].as_array().unwrap();
    assert!(
        krows
            .iter()
            .any(|r| r["what"] == "ksoftirqd vs its run time"),
        "{v}"
    );
    assert!(krows.len() >= 2, "a /proc/stat row per CPU: {v}");
    for r in krows {
        let f = |k: &str| r[k].as_f64().unwrap();
        assert!(f("irqlab_ns") <= f("high_ns"), "kernel accounting: {r}");
    }
    // the runs the kernel skipped bpftrace's programs for are in the
    // tolerance, so they are measured
    for kind in ["soft", "hard"] {
        assert!(v["bpftrace_missed"][kind].is_u64(), "{v}");
    }
    assert_eq!(v["within_tolerance"], true, "{v}");
    assert!(ok, "{stderr}");
    assert!(
        v["bpftrace_ns_per_run"].as_f64().unwrap() > 0.0,
        "bpftrace's programs were not accounted: {v}"
    );
}
