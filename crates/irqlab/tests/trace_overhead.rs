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
    let m = w.run(WINDOW).unwrap();
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
        let child = Command::new("bpftrace")
            .arg(bt)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // bpftrace prints "Attaching N probes..." before it attaches; give it time
        std::thread::sleep(Duration::from_secs(4));
        theirs.push(window(&mut w));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
            nix::sys::signal::Signal::SIGINT,
        )
        .unwrap();
        let _ = child.wait_with_output();
    }
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
}
