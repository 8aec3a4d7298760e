//! Measurement (not a check; run by tools/trace-overhead.sh, ignored
//! otherwise): what tracing costs per traced event, from the `ipi` bench
//! workload's round-trip throughput without tracing, with `irqlab trace`'s
//! programs attached, and with `bpftrace` running the same aggregation
//! (tools/trace-bpftrace.bt). Windows alternate (plain, irqlab, plain,
//! bpftrace) `ROUNDS` times; medians are reported.
//!
//! ns per event = (1 - r_traced / r_plain) / e_traced, with r the round
//! trips per second and e the traced events per second (every interrupt
//! and softirq run /proc counted in the window): the CPU time tracing adds
//! per second, spread over the events of that second.
//!
//! Then one window each with the kernel's own BPF run-time accounting on
//! (`BPF_ENABLE_STATS`, held only for those windows, so it does not touch
//! the throughput windows): nanoseconds the programs of each tool ran per
//! program run, irqlab's from its programs' info, bpftrace's from
//! `bpftool prog show -j` (its programs by pid). This resolves what the
//! throughput method cannot (its window-to-window spread is ~1 µs per
//! event); it leaves out the tracepoint's dispatch, which both pay alike.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)]

use irqlab::bench::workloads::{build, WorkloadKind, WorkloadOptions};
use irqlab::host::HostFs;
use irqlab::trace::session::Session;
use std::process::{Command, Stdio};
use std::time::Duration;

const WINDOW: Duration = Duration::from_secs(2);
const ROUNDS: usize = 3;

/// Every /proc/interrupts and /proc/softirqs count, summed.
fn events() -> u64 {
    let mut n = 0;
    for file in ["/proc/interrupts", "/proc/softirqs"] {
        let text = std::fs::read_to_string(file).unwrap();
        let mut lines = text.lines();
        let ncpu = lines.next().unwrap().split_whitespace().count();
        for l in lines {
            if let Some((label, rest)) = l.split_once(':') {
                if label.trim() == "ERR" || label.trim() == "MIS" {
                    continue;
                }
                n += rest
                    .split_whitespace()
                    .take(ncpu)
                    .map_while(|f| f.parse::<u64>().ok())
                    .sum::<u64>();
            }
        }
    }
    n
}

/// (round trips / s, events / s) of one window.
fn window(w: &mut Box<dyn irqlab::bench::workload::Workload>) -> (f64, f64) {
    let e0 = events();
    let t0 = std::time::Instant::now();
    let m = w.run(WINDOW, &irqlab::sampler::Stop::unhooked()).unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let e1 = events();
    let r = m
        .iter()
        .find(|m| m.name == "round_trips_per_sec")
        .unwrap()
        .value;
    (r, (e1 - e0) as f64 / secs)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ns_per_event(plain: f64, traced: f64, ev: f64) -> f64 {
    (1.0 - traced / plain) / ev * 1e9
}

#[test]
#[ignore = "measurement for BENCHMARKS.md: run tools/trace-overhead.sh"]
fn overhead_per_event_vs_bpftrace() {
    let mut w = build(
        WorkloadKind::Ipi,
        &WorkloadOptions::default(),
        &irqlab::guard::Tracker::none(),
    )
    .unwrap();
    w.setup().unwrap();
    let bt = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/trace-bpftrace.bt");
    let (mut plain, mut ours, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        plain.push(window(&mut w));
        let s = Session::start(&HostFs::new("/")).unwrap();
        ours.push(window(&mut w));
        s.stop().unwrap();
        plain.push(window(&mut w));
        let child = start_bpftrace(bt);
        theirs.push(window(&mut w));
        stop_bpftrace(child);
    }
    let (ours_k, theirs_k) = kernel_accounted(&mut w, bt);
    w.teardown().unwrap();
    let rp = median(plain.iter().map(|p| p.0).collect());
    let (ro, eo) = (
        median(ours.iter().map(|p| p.0).collect()),
        median(ours.iter().map(|p| p.1).collect()),
    );
    let (rt, et) = (
        median(theirs.iter().map(|p| p.0).collect()),
        median(theirs.iter().map(|p| p.1).collect()),
    );
    let (a, b) = (ns_per_event(rp, ro, eo), ns_per_event(rp, rt, et));
    println!("plain windows (round trips/s, events/s): {plain:?}");
    println!("irqlab windows: {ours:?}");
    println!("bpftrace windows: {theirs:?}");
    println!(
        "| ipi round trips/s | {rp:.0} plain | {ro:.0} irqlab trace | {rt:.0} bpftrace |\n\
         | ns per traced event | | {a:.0} | {b:.0} | ratio bpftrace/irqlab {:.2} |",
        b / a
    );
    let per = |r: irqlab_bpf::RunStats| r.ns_per_run().unwrap_or(f64::NAN);
    println!(
        "| kernel run-time accounting (ns per program run) | | {:.0} ({} runs) | {:.0} ({} runs) | ratio bpftrace/irqlab {:.2} |",
        per(ours_k),
        ours_k.runs,
        per(theirs_k),
        theirs_k.runs,
        per(theirs_k) / per(ours_k)
    );
}

/// bpftrace running `bt`, its probes attached.
fn start_bpftrace(bt: &str) -> std::process::Child {
    let child = Command::new("bpftrace")
        .arg(bt)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // bpftrace prints "Attaching N probes..." before it attaches; give it time
    std::thread::sleep(Duration::from_secs(4));
    child
}

/// SIGINT (bpftrace prints its maps and detaches), then wait for it.
fn stop_bpftrace(child: std::process::Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let _ = child.wait_with_output();
}

/// Every loaded program as bpftool lists it.
fn bpftool_progs() -> Vec<serde_json::Value> {
    let out = Command::new("bpftool")
        .args(["prog", "show", "-j"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array().cloned().unwrap_or_default()
}

/// Ids of the loaded programs.
fn prog_ids() -> std::collections::BTreeSet<u64> {
    bpftool_progs()
        .iter()
        .filter_map(|p| p["id"].as_u64())
        .collect()
}

/// Run time and count of the programs not in `old` (bpftrace's: loaded
/// after `old` was listed; bpftool here has no pid column).
fn bpftool_stats(old: &std::collections::BTreeSet<u64>) -> irqlab_bpf::RunStats {
    let mut sum = irqlab_bpf::RunStats::default();
    for p in bpftool_progs() {
        if p["id"].as_u64().is_some_and(|id| !old.contains(&id)) {
            sum.ns += p["run_time_ns"].as_u64().unwrap_or(0);
            sum.runs += p["run_cnt"].as_u64().unwrap_or(0);
        }
    }
    sum
}

/// One window each with the kernel's run-time accounting on: what the
/// programs of irqlab and of bpftrace ran.
fn kernel_accounted(
    w: &mut Box<dyn irqlab::bench::workload::Workload>,
    bt: &str,
) -> (irqlab_bpf::RunStats, irqlab_bpf::RunStats) {
    let stats = irqlab_bpf::enable_run_stats().unwrap();
    let s = Session::start(&HostFs::new("/")).unwrap();
    let before = s.run_stats();
    window(w);
    let ours = s.run_stats().since(before);
    s.stop().unwrap();
    let old = prog_ids();
    let child = start_bpftrace(bt);
    let before = bpftool_stats(&old);
    window(w);
    let theirs = bpftool_stats(&old).since(before);
    stop_bpftrace(child);
    drop(stats);
    (ours, theirs)
}
