//! Live (feature `trace`, root, tracefs directory): `irqlab trace --cost`
//! measures what its programs cost with the kernel's own BPF run-time
//! accounting (issue 15 item 5) and says it at the end; the accounting is
//! on only while the run holds it. A thread sleeping 1 ms at a time makes
//! timer interrupts, so an idle machine has events to count too.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn skip_reason() -> Option<&'static str> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root");
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("no BTF at /sys/kernel/btf/vmlinux");
    }
    if !Path::new("/sys/kernel/tracing").is_dir() {
        return Some("no /sys/kernel/tracing directory");
    }
    None
}

/// The number after `key` in `line` (`"3524 program runs"` -> 3524).
fn number_before(line: &str, key: &str) -> f64 {
    let head = &line[..line.find(key).unwrap()];
    head.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn cost_is_measured_by_the_kernel_and_said_at_the_end_or_skip() {
    if let Some(why) = skip_reason() {
        eprintln!("trace_cost: cost_is_measured_by_the_kernel_and_said_at_the_end_or_skip: SKIPPED: {why}");
        return;
    }
    let stats_before = std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled").ok();
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let out = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["trace", "-i", "1s", "-d", "2s", "--cost"])
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    ticker.join().unwrap();
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
