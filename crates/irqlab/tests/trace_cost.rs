//! Live (feature `trace`, root, tracefs directory): `irqlab trace --cost`
//! measures what its programs cost with the kernel's own BPF run-time
//! accounting and says it at the end; the accounting is
//! on only while the run holds it. A thread sleeping 1 ms at a time makes
//! timer interrupts, so an idle machine has events to count too. SIGINT
//! still gets the cost said (as interrupted); one after the last interval
//! still gives exit 130.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)]

mod common;

use common::trace::{one_at_a_time, Needs, Reap, Ticker};
use std::process::Command;

fn skip_reason() -> Option<String> {
    common::trace::skip_reason(Needs {
        btf: true,
        ..Needs::default()
    })
}

/// The number after `key` in `line` (`"3524 program runs"` -> 3524).
fn number_before(line: &str, key: &str) -> f64 {
    let head = &line[..line.find(key).unwrap()];
    head.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn cost_is_measured_by_the_kernel_and_said_at_the_end_or_skip() {
    if !common::host_changes_allowed(
        "trace_cost: cost_is_measured_by_the_kernel_and_said_at_the_end_or_skip",
    ) {
        return;
    }
    if common::trace::skipped(
        "trace_cost: cost_is_measured_by_the_kernel_and_said_at_the_end_or_skip",
        skip_reason(),
    ) {
        return;
    }
    let _one = one_at_a_time();
    let stats_before = std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled").ok();
    let ticker = Ticker::start();
    let out = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["trace", "-i", "1s", "-d", "2s", "--cost"])
        .output()
        .unwrap();
    drop(ticker);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("irqlab: tracing cost: "))
        .unwrap_or_else(|| panic!("no cost line: {err}"));
    // 2 s of 1-ms sleeps: hundreds of timer interrupts at least
    let runs = number_before(line, "program runs");
    let per = number_before(line, "ns per run");
    assert!(runs >= 100.0, "{line}");
    assert!(per > 0.0 && per < 1e6, "{line}");
    // the accounting was the run's, not left on
    let stats_after = std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled").ok();
    assert_eq!(stats_before, stats_after);
}

/// Ctrl-C ends `trace --cost` with what it measured so far, said as
/// interrupted (the cost line and the interval it cut short), and exit
/// 130; it never ends silently.
#[test]
fn cost_is_said_on_sigint_or_skip() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    if !common::host_changes_allowed("trace_cost: cost_is_said_on_sigint_or_skip") {
        return;
    }
    if common::trace::skipped("trace_cost: cost_is_said_on_sigint_or_skip", skip_reason()) {
        return;
    }
    let _one = one_at_a_time();
    let stats_before = std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled").ok();
    let _ticker = Ticker::start();
    let child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["trace", "-i", "300ms", "--cost"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let mut line = String::new();
    // the first interval is printed: the programs ran and were accounted
    while out.read_line(&mut line).unwrap() > 0 && !line.starts_with("interval 1") {
        line.clear();
    }
    assert!(line.starts_with("interval 1"), "no interval printed");
    common::trace::signal(child.0.id(), nix::sys::signal::Signal::SIGINT);
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let (status, err) = child.finish();
    assert_eq!(status.code(), Some(130), "{err}");
    let cost = err
        .lines()
        .find(|l| l.starts_with("irqlab: tracing cost: "))
        .unwrap_or_else(|| panic!("no cost line after SIGINT: {err}"));
    assert!(cost.ends_with("(interrupted by SIGINT)"), "{cost}");
    // the interval the signal cut short is printed too, marked
    assert!(
        rest.lines()
            .any(|l| l.starts_with("interval ") && l.ends_with("(cut short by SIGINT)")),
        "{rest}"
    );
    // 300 ms of 1-ms sleeps went by: timer interrupts ran the programs
    assert!(number_before(cost, "program runs") >= 1.0, "{cost}");
    let stats_after = std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled").ok();
    assert_eq!(stats_before, stats_after, "accounting left on");
}

/// A signal caught after the loop ended (here while `trace --cost` says
/// its cost, held there by a full stderr, before the programs detach)
/// still ends the run as a signal does: exit 130, as in the loop; it was
/// exit 0. Nothing it printed is marked: the run had reached `-d`.
#[test]
fn a_signal_after_the_last_interval_still_exits_130_or_skip() {
    use common::stall::{wait_blocked, Stall};
    use std::io::Read;
    use std::process::Stdio;
    let test = "trace_cost: a_signal_after_the_last_interval_still_exits_130_or_skip";
    if !common::host_changes_allowed(test) || common::trace::skipped(test, skip_reason()) {
        return;
    }
    let _one = one_at_a_time();
    let _ticker = Ticker::start();
    let mut err = Stall::new();
    let child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args([
            "trace", "-i", "200ms", "-d", "1s", "--cost", "--format", "json",
        ])
        .stdout(Stdio::piped())
        .stderr(err.stdio())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let mut stdout = child.0.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    // attached: nothing more goes to stderr until the cost line
    let mut start = String::new();
    let alive = || child.0.try_wait().unwrap().is_none();
    assert!(
        err.read_until("Ctrl-C to stop\n", alive, &mut start),
        "{start}"
    );
    err.fill();
    assert!(
        wait_blocked(child.0.id(), std::time::Duration::from_secs(30)),
        "trace never wrote its cost line"
    );
    common::trace::signal(child.0.id(), nix::sys::signal::Signal::SIGINT);
    let rest = err.drain();
    let status = child.0.wait().unwrap();
    let (rest, out) = (rest.join().unwrap(), out.join().unwrap());
    let cost = rest
        .lines()
        .find(|l| l.starts_with("irqlab: tracing cost: "))
        .unwrap_or_else(|| panic!("no cost line: {rest}"));
    assert!(!cost.contains("interrupted"), "{cost}");
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(!out.contains("interrupted"), "{out}");
    assert_eq!(status.code(), Some(130), "{rest}");
}
