//! Live (feature `trace`, root, bpftool, bpftrace; host-changing: mounts
//! tracefs and attaches BPF programs): a second tracer attached beside
//! irqlab (bpftrace running tools/trace-bpftrace.bt, the same aggregation)
//! changes irqlab's mean durations by no more than the stated bound.
//!
//! Three windows under the same disk + loopback TCP load: A irqlab alone,
//! B with bpftrace attached after irqlab, C alone again. A program
//! attached later runs after irqlab's at each tracepoint, so inside a
//! span irqlab measures run the other tracer's entry program and its
//! programs on every tracepoint the handler hits (the softirqs it raises:
//! a disk completion raises BLOCK, the tick TIMER, RCU, SCHED, HRTIMER),
//! often cache-cold (docs/trace.md, "Where the timestamps are taken").
//! How many of those programs fall in one figure's spans is not known, but
//! their total is: the kernel's BPF run-time accounting (held on for the
//! three windows) gives the second tracer's run time T over window B.
//! Held: every figure's drift, |B - (A + C) / 2| beyond
//! max(|A - C|, 10 % of the mean) (the load's own drift, from the same
//! test), summed over the figures in ns (runs in B x ns per run), is at
//! most T; and no figure falls by more than its drift plus two of the
//! tracer's mean program runs. Figures with fewer than 300 runs in a
//! window, or whose runs differ by more than 2x between windows (a
//! different load: a mean depends on batch sizes), are printed, not held.
//!
//! `IRQLAB_TEST_SECOND_TRACER` replaces bpftrace by another command line
//! (e.g. libbpf-tools' `softirqs -N 1` or `hardirqs -N 1`; its first line
//! of output says it is attached): how docs/trace.md's figures for
//! libbpf-tools were taken.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;

use common::trace::{one_at_a_time, runs, Needs, Reap};
use irqlab::bench::workloads::{build, WorkloadKind, WorkloadOptions};
use irqlab::host::HostFs;
use irqlab::trace::interval::{between, Interval, IntervalView};
use irqlab::trace::sample::Sample;
use irqlab::trace::session::Session;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TEST: &str =
    "trace_concurrent_live: a_second_tracer_changes_irqlabs_durations_within_the_bound_or_skip";

/// Runs a figure needs in every window to be held to the bound.
const MIN_RUNS: u64 = 300;

fn skip_reason() -> Option<String> {
    let why = common::trace::skip_reason(Needs {
        bpftool: true,
        ..Needs::default()
    });
    if why.is_some() {
        return why;
    }
    if !runs("bpftrace", "--version") {
        return Some("bpftrace not installed (tools/install-trace-deps.sh --with-bpftrace)".into());
    }
    None
}

/// One window of load; the traced interval over it.
fn window(session: &mut Session) -> Interval {
    let tracker = irqlab::guard::Tracker::none();
    let mut a = Sample::default();
    session.read(&mut a).unwrap();
    for kind in [WorkloadKind::Disk, WorkloadKind::Net] {
        let mut w = build(kind, &WorkloadOptions::default(), &tracker).unwrap();
        w.setup().unwrap();
        w.run(
            Duration::from_millis(1500),
            &irqlab::sampler::Stop::unhooked(),
        )
        .unwrap();
        w.teardown().unwrap();
    }
    let mut b = Sample::default();
    session.read(&mut b).unwrap();
    between(&a, &b, &IntervalView::default())
}

/// Mean ns and runs per figure: softirq vectors, IRQ labels (actions
/// summed) and vectors.
fn figures(iv: &Interval) -> BTreeMap<String, (f64, u64)> {
    let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for s in &iv.softirqs {
        let e = m.entry(format!("softirq {} own", s.name)).or_default();
        e.0 += s.own_ns;
        e.1 += s.count;
    }
    for l in &iv.irqs {
        let e = m.entry(format!("irq {}", l.label)).or_default();
        e.0 += l.total_ns;
        e.1 += l.count;
    }
    m.into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(k, (ns, n))| (k, (ns as f64 / n as f64, n)))
        .collect()
}

/// Every loaded BPF program: (id, run time ns, runs), from bpftool.
fn programs() -> Vec<(u32, u64, u64)> {
    let o = Command::new("bpftool")
        .args(["-j", "prog", "show"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                u32::try_from(p["id"].as_u64().unwrap()).unwrap(),
                p["run_time_ns"].as_u64().unwrap_or(0),
                p["run_cnt"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The second tracer's programs' mean run time (ns) and runs: those
/// loaded since `before` was listed.
fn second_ns_per_run(before: &[(u32, u64, u64)]) -> (f64, u64) {
    let (mut ns, mut n) = (0u64, 0u64);
    for (id, t, c) in programs() {
        if !before.iter().any(|b| b.0 == id) {
            ns += t;
            n += c;
        }
    }
    (ns as f64 / n.max(1) as f64, n)
}

#[test]
fn a_second_tracer_changes_irqlabs_durations_within_the_bound_or_skip() {
    if !common::host_changes_allowed(TEST) || common::trace::skipped(TEST, skip_reason()) {
        return;
    }
    let _one = one_at_a_time();
    let mut session = Session::start(&HostFs::new("/")).unwrap();
    session.account_cost().unwrap();

    let a = figures(&window(&mut session));

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/trace-bpftrace.bt");
    let second: Vec<String> = match std::env::var("IRQLAB_TEST_SECOND_TRACER") {
        Ok(cmd) => cmd.split_whitespace().map(String::from).collect(),
        Err(_) => vec!["bpftrace".into(), script.display().to_string()],
    };
    let comm: String = Path::new(&second[0])
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .take(15)
        .collect();
    let _tracefs = common::trace::TracefsForAnotherTracer::mount();
    let before = programs();
    let mut child = Command::new(&second[0])
        .args(&second[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let mut bt = Reap(child);
    let mut lines = BufReader::new(out).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let l = lines.next().and_then(Result::ok).unwrap_or_default();
        if !l.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "{comm} did not attach");
    }
    std::thread::sleep(Duration::from_millis(500));
    let b = figures(&window(&mut session));
    let (bt_ns, bt_runs) = second_ns_per_run(&before);
    bt.0.kill().unwrap();
    bt.0.wait().unwrap();
    drop(lines);

    let c = figures(&window(&mut session));
    crate::visible!("{TEST}: {comm}: {bt_runs} program runs, {bt_ns:.0} ns per run");
    assert!(
        bt_runs > 0 && bt_ns > 0.0,
        "{comm}'s programs were not accounted"
    );
    let total_ns = bt_ns * bt_runs as f64;
    let (mut held, mut beyond_ns) = (0, 0.0);
    for (k, &(bv, bn)) in &b {
        let (Some(&(av, an)), Some(&(cv, cn))) = (a.get(k), c.get(k)) else {
            continue;
        };
        let mean = (av + cv) / 2.0;
        let drift = (av - cv).abs().max(0.1 * mean);
        let d = bv - mean;
        crate::visible!(
            "{TEST}: {k}: alone {av:.0} / {cv:.0} ns ({an}/{cn} runs), with {comm} {bv:.0} ns \
             ({bn} runs): {d:+.0} ns ({:+.1} %), drift {drift:.0} ns",
            d * 100.0 / mean
        );
        // a mean depends on the load (batch sizes): windows whose runs
        // differ by more than 2x had a different load and are not compared
        let (lo, hi) = (an.min(bn).min(cn), an.max(bn).max(cn));
        if k.starts_with("irq ") && lo >= MIN_RUNS && hi <= 2 * lo {
            let floor = drift + 2.0 * bt_ns;
            assert!(d >= -floor, "{k}: {d:+.0} ns, below -{floor:.0} ns");
            beyond_ns += (d - drift).max(0.0) * bn as f64;
            held += 1;
        }
    }
    crate::visible!(
        "{TEST}: held figures' growth beyond their drift: {:.1} ms; {comm}'s programs ran {:.1} ms",
        beyond_ns / 1e6,
        total_ns / 1e6
    );
    assert!(
        held >= 1,
        "only {held} figures with {MIN_RUNS} runs per window"
    );
    assert!(
        beyond_ns <= total_ns,
        "irqlab's figures grew by {:.1} ms beyond their drift, more than the {:.1} ms {comm}'s \
         programs ran",
        beyond_ns / 1e6,
        total_ns / 1e6
    );
    session.stop().unwrap();
}
