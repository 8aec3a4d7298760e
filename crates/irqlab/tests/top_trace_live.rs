//! Live (feature `trace`, root, BTF, tracefs directory, bpftool): `top
//! --batch --trace --format json -n 5 -i 200ms` carries the traced figures
//! on every line, read in the same tick as /proc (over the run the traced
//! LOC count matches the /proc LOC count), and leaves no BPF program
//! loaded and the tracefs mount state as it found it — after -n, SIGINT,
//! SIGTERM and a closed stdout. Skips visibly
//! otherwise (test names end in `_or_skip`).
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;

use common::trace::{mounted, one_at_a_time, prog_ids, signal, still_loaded, Needs, Reap, Ticker};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

fn skip_reason() -> Option<String> {
    common::trace::skip_reason(Needs {
        btf: true,
        bpftool: true,
        ..Needs::default()
    })
}

/// `irqlab top --batch --trace ARGS` with stdout and stderr piped; its
/// stdout as a line reader.
fn spawn_top(args: &[&str]) -> (Reap, BufReader<std::process::ChildStdout>) {
    let child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["top", "--batch", "--trace"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let out = BufReader::new(child.0.stdout.take().unwrap());
    (child, out)
}

fn loc_total(v: &Value) -> u64 {
    v["interrupts"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "LOC")
        .map_or(0, |r| r["total"].as_u64().unwrap())
}

fn traced_loc(v: &Value) -> u64 {
    v["trace"]["irqs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "LOC")
        .map_or(0, |r| r["count"].as_u64().unwrap())
}

/// The documented `trace` fields of one line.
fn check_fields(v: &Value, ncpu: usize) {
    let t = &v["trace"];
    assert!(t.is_object(), "no trace object: {v}");
    let cpus = t["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), ncpu, "{t}");
    for c in cpus {
        for k in ["cpu", "irq_ns", "softirq_ns", "irq_pct", "softirq_pct"] {
            assert!(c[k].is_number(), "cpus[].{k}: {t}");
        }
    }
    let mean: f64 = cpus
        .iter()
        .map(|c| c["irq_pct"].as_f64().unwrap())
        .sum::<f64>()
        / ncpu as f64;
    assert!((t["irq_pct"].as_f64().unwrap() - mean).abs() < 1e-9, "{t}");
    for s in t["softirqs"].as_array().unwrap() {
        for k in ["name", "count", "own_ns", "us_per_s"] {
            assert!(!s[k].is_null(), "softirqs[].{k}: {t}");
        }
        for k in ["latency_p50_ns", "latency_p99_ns", "p50_ns", "p99_ns"] {
            assert!(s.get(k).is_some(), "softirqs[].{k}: {t}");
        }
    }
    // handler time only for rows the line shows
    let labels: Vec<&str> = v["interrupts"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    for x in t["irqs"].as_array().unwrap() {
        assert!(labels.contains(&x["label"].as_str().unwrap()), "{x}");
        assert!(x["us_per_s"].is_number() && x["total_ns"].is_number());
    }
    // both read in one tick: the same interval, up to the read jitter
    let iv = v["interval_s"].as_f64().unwrap();
    let traced = t["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!((traced - iv).abs() < iv / 4.0, "{traced} vs {iv}");
}

#[test]
fn json_lines_carry_traced_time_and_programs_detach_or_skip() {
    if !common::host_changes_allowed(
        "top_trace_live: json_lines_carry_traced_time_and_programs_detach_or_skip",
    ) {
        return;
    }
    if common::trace::skipped(
        "top_trace_live: json_lines_carry_traced_time_and_programs_detach_or_skip",
        skip_reason(),
    ) {
        return;
    }
    let _one = one_at_a_time();
    let was_mounted = mounted();
    let _ticker = Ticker::start();
    let (mut child, mut out) = spawn_top(&["--format", "json", "-n", "5", "-i", "200ms"]);
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    // the programs while it runs (before the second line is due)
    let ids = prog_ids(child.0.id());
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let (status, err) = child.finish();
    assert!(status.success(), "{err}");
    assert!(ids.len() >= 5, "programs in fdinfo while running: {ids:?}");
    let lines: Vec<Value> = std::iter::once(first.as_str())
        .chain(rest.lines())
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 5, "{first}{rest}");
    let ncpu = lines[0]["interrupts"]["cpus"].as_array().unwrap().len();
    let (mut proc_loc, mut bpf_loc) = (0, 0);
    for v in &lines {
        check_fields(v, ncpu);
        proc_loc += loc_total(v);
        bpf_loc += traced_loc(v);
    }
    assert!(bpf_loc > 0 && proc_loc > 0, "1 s of 1-ms sleeps: no LOC?");
    // the maps are read right after /proc; a reader preempted between the
    // two reads moves counts from one line to the next, so the per-line
    // differences telescope: over the run only the gaps at the first and
    // last reads remain (handlers in flight, what fired between)
    let slack = 4 * ncpu as u64 + proc_loc / 10;
    assert!(
        proc_loc.abs_diff(bpf_loc) <= slack,
        "LOC over the run: /proc {proc_loc} vs traced {bpf_loc}"
    );
    assert_eq!(
        still_loaded(&ids),
        Vec::<u32>::new(),
        "programs left loaded"
    );
    assert_eq!(mounted(), was_mounted, "tracefs mount state changed");
}

/// SIGINT/SIGTERM end `top --batch --trace` like `top --batch`: the
/// `Average:` block (with its traced lines) is printed, exit 128 + signal, and still no program
/// is left loaded nor the mount state changed (the guard waits for top to
/// detach instead of exiting under it).
#[test]
fn signals_print_average_and_detach_or_skip() {
    if !common::host_changes_allowed("top_trace_live: signals_print_average_and_detach_or_skip") {
        return;
    }
    if common::trace::skipped(
        "top_trace_live: signals_print_average_and_detach_or_skip",
        skip_reason(),
    ) {
        return;
    }
    use nix::sys::signal::Signal;
    let _one = one_at_a_time();
    let was_mounted = mounted();
    for (sig, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143)] {
        let (mut child, mut out) = spawn_top(&["-i", "200ms"]);
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 && !line.contains("TRACE CPU") {
            line.clear();
        }
        assert!(line.contains("TRACE CPU"), "no traced block");
        let ids = prog_ids(child.0.id());
        signal(child.0.id(), sig);
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        let (status, err) = child.finish();
        assert_eq!(status.code(), Some(code), "{sig:?}: {err}");
        assert!(rest.contains("Average:  SUM"), "{sig:?}: {rest}");
        assert!(rest.contains("Average:  TRACE CPU"), "{sig:?}: {rest}");
        assert!(ids.len() >= 5, "{ids:?}");
        assert_eq!(
            still_loaded(&ids),
            Vec::<u32>::new(),
            "{sig:?}: programs left"
        );
        assert_eq!(
            mounted(),
            was_mounted,
            "{sig:?}: tracefs mount state changed"
        );
    }
}

/// A signal caught after the loop ended (once `Average:` is printed,
/// while the programs detach) still ends `top --batch --trace` as a
/// signal does: exit 130, as in the loop; it was exit 0. The run is
/// stopped (SIGSTOP) as soon as `Average:` shows, signalled, then
/// continued; a run that ended before it could be stopped is tried
/// again.
#[test]
fn a_signal_after_average_still_exits_130_or_skip() {
    let test = "top_trace_live: a_signal_after_average_still_exits_130_or_skip";
    if !common::host_changes_allowed(test) || common::trace::skipped(test, skip_reason()) {
        return;
    }
    use nix::sys::signal::Signal;
    let _one = one_at_a_time();
    let was_mounted = mounted();
    // R(unning), S(leeping), D, T(stopped), Z(ombie): of /proc/PID/stat
    let state = |pid: u32| {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        s.rsplit(')')
            .next()
            .unwrap()
            .trim_start()
            .chars()
            .next()
            .unwrap()
    };
    for _ in 0..10 {
        let (mut child, mut out) = spawn_top(&["-n", "2", "-i", "100ms"]);
        let pid = child.0.id();
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 && !line.starts_with("Average:") {
            line.clear();
        }
        assert!(line.starts_with("Average:"), "no Average:");
        signal(pid, Signal::SIGSTOP);
        let mut now = state(pid);
        while !matches!(now, 'T' | 'Z') {
            std::thread::sleep(std::time::Duration::from_millis(1));
            now = state(pid);
        }
        if now == 'Z' {
            child.finish();
            continue;
        }
        signal(pid, Signal::SIGINT);
        signal(pid, Signal::SIGCONT);
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        let (status, err) = child.finish();
        assert!(rest.contains("Average:  TRACE CPU"), "{rest}");
        assert_eq!(status.code(), Some(130), "{err}");
        assert_eq!(mounted(), was_mounted, "tracefs mount state changed");
        return;
    }
    panic!("top --batch --trace ended before it could be stopped, 10 times");
}

/// The error path: stdout closed under `top --batch --trace` (EPIPE at the
/// next line) ends the run quietly (exit 0, as without --trace) and still
/// detaches and restores the mount state.
#[test]
fn closed_stdout_ends_quietly_and_detaches_or_skip() {
    if !common::host_changes_allowed(
        "top_trace_live: closed_stdout_ends_quietly_and_detaches_or_skip",
    ) {
        return;
    }
    if common::trace::skipped(
        "top_trace_live: closed_stdout_ends_quietly_and_detaches_or_skip",
        skip_reason(),
    ) {
        return;
    }
    let _one = one_at_a_time();
    let was_mounted = mounted();
    let (mut child, mut out) = spawn_top(&["--format", "json", "-i", "100ms"]);
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.contains("\"trace\":"), "{first}");
    let ids = prog_ids(child.0.id());
    drop(out);
    let (status, err) = child.finish();
    assert!(status.success(), "{status:?}: {err}");
    assert!(ids.len() >= 5, "{ids:?}");
    assert_eq!(still_loaded(&ids), Vec::<u32>::new(), "programs left");
    assert_eq!(mounted(), was_mounted, "tracefs mount state changed");
}
