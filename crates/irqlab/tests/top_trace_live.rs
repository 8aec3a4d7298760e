//! Live (feature `trace`, root, BTF, tracefs directory, bpftool): `top
//! --batch --trace --format json -n 2 -i 200ms` carries the traced figures
//! on every line, read in the same tick as /proc (the traced LOC count
//! matches the line's own /proc LOC count), and leaves no BPF program
//! loaded and the tracefs mount state as it found it. Skips visibly
//! otherwise (test names end in `_or_skip`).
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TRACING: &str = "/sys/kernel/tracing";

/// One tracing run at a time: the mount state is shared.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn skip_reason() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root".into());
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("no BTF at /sys/kernel/btf/vmlinux".into());
    }
    if !Path::new(TRACING).is_dir() {
        return Some(format!("{TRACING} does not exist"));
    }
    let bpftool = Command::new("bpftool").arg("version").output();
    if !bpftool.is_ok_and(|o| o.status.success()) {
        return Some("bpftool not installed (tools/install-trace-deps.sh)".into());
    }
    None
}

fn mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(TRACING))
}

/// BPF program ids held by `pid` (fdinfo `prog_id:` lines).
fn prog_ids(pid: u32) -> Vec<u32> {
    let mut ids = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            if let Some(id) = l.strip_prefix("prog_id:") {
                ids.push(id.trim().parse().unwrap());
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn loaded(id: u32) -> bool {
    Command::new("bpftool")
        .args(["prog", "show", "id", &id.to_string()])
        .output()
        .unwrap()
        .status
        .success()
}

/// Ids still loaded after a grace period (freeing waits for RCU).
fn still_loaded(ids: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<u32> = ids.iter().copied().filter(|&id| loaded(id)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Kills and reaps the child if the test fails first.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// A thread sleeping 1 ms at a time until dropped: local timer interrupts
/// on an idle machine too.
struct Ticker(Arc<AtomicBool>, Option<std::thread::JoinHandle<()>>);

impl Ticker {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let h = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        Ticker(stop, Some(h))
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        if let Some(h) = self.1.take() {
            let _ = h.join();
        }
    }
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
    if let Some(why) = skip_reason() {
        eprintln!(
            "top_trace_live: json_lines_carry_traced_time_and_programs_detach_or_skip: SKIPPED: {why}"
        );
        return;
    }
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let was_mounted = mounted();
    let _ticker = Ticker::start();
    let child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["top", "--batch", "--trace", "--format", "json"])
        .args(["-n", "2", "-i", "200ms"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    // the programs while it runs (before the second line is due)
    let ids = prog_ids(child.0.id());
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let status = child.0.wait().unwrap();
    let mut err = String::new();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    assert!(ids.len() >= 5, "programs in fdinfo while running: {ids:?}");
    let lines: Vec<Value> = std::iter::once(first.as_str())
        .chain(rest.lines())
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 2, "{first}{rest}");
    let ncpu = lines[0]["interrupts"]["cpus"].as_array().unwrap().len();
    let (mut proc_loc, mut bpf_loc) = (0, 0);
    for v in &lines {
        check_fields(v, ncpu);
        let (p, b) = (loc_total(v), traced_loc(v));
        // the maps are read right after /proc: a handler in flight on each
        // CPU at either read, and what fires between the two reads
        // (a small share of the line's own count), may differ
        let slack = 2 * ncpu as u64 + p / 10;
        assert!(p.abs_diff(b) <= slack, "LOC: /proc {p} vs traced {b}");
        proc_loc += p;
        bpf_loc += b;
    }
    assert!(
        bpf_loc > 0 && proc_loc > 0,
        "400 ms of 1-ms sleeps: no LOC?"
    );
    assert_eq!(
        still_loaded(&ids),
        Vec::<u32>::new(),
        "programs left loaded"
    );
    assert_eq!(mounted(), was_mounted, "tracefs mount state changed");
}

/// SIGINT/SIGTERM end `top --batch --trace` like `top --batch`: the
/// `Average:` block is printed, exit 128 + signal, and still no program
/// is left loaded nor the mount state changed (the guard waits for top to
/// detach instead of exiting under it).
#[test]
fn signals_print_average_and_detach_or_skip() {
    if let Some(why) = skip_reason() {
        eprintln!("top_trace_live: signals_print_average_and_detach_or_skip: SKIPPED: {why}");
        return;
    }
    use nix::sys::signal::Signal;
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let was_mounted = mounted();
    for (sig, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143)] {
        let child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
            .args(["top", "--batch", "--trace", "-i", "200ms"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut child = Reap(child);
        let mut out = BufReader::new(child.0.stdout.take().unwrap());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 && !line.contains("TRACE CPU") {
            line.clear();
        }
        assert!(line.contains("TRACE CPU"), "no traced block");
        let ids = prog_ids(child.0.id());
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.0.id()).unwrap());
        nix::sys::signal::kill(pid, sig).unwrap();
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        let status = child.0.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{sig:?}");
        assert!(rest.contains("Average:  SUM"), "{sig:?}: {rest}");
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
