//! Live (feature `trace`, root, BTF, tracefs directory, bpftool): `record
//! --trace` carries the tracing maps with every sample, `replay --batch`
//! gives each line the traced interval (over the run, the traced LOC
//! counts match the lines' /proc LOC counts, both recorded in the same
//! tick), and the run leaves no BPF program loaded and the tracefs mount
//! state as it found it — after `--duration` and after SIGINT. Skips visibly otherwise
//! (test names end in `_or_skip`).
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;

use common::trace::{mounted, one_at_a_time, prog_ids, signal, still_loaded, Needs, Reap, Ticker};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn skip_reason() -> Option<String> {
    common::trace::skip_reason(Needs {
        btf: true,
        bpftool: true,
        ..Needs::default()
    })
}

fn irqlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irqlab"))
}

/// `record --trace -i 200ms -o OUT ARGS`, stderr piped.
fn spawn_record(out: &Path, args: &[&str]) -> Reap {
    let child = irqlab()
        .args(["record", "--trace", "-i", "200ms", "--host", "t", "-o"])
        .arg(out)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Reap(child)
}

/// The BPF programs `pid` holds once it has attached (up to 10 s).
fn attached(pid: u32) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ids = prog_ids(pid);
        if ids.len() >= 5 || Instant::now() > deadline {
            return ids;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn row_count(rows: &Value, label: &str, field: &str) -> u64 {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .map_or(0, |r| r[field].as_u64().unwrap())
}

/// `replay --batch --format json` of `out`: every line has a `trace`
/// object, and over all lines the traced LOC counts match /proc's.
fn check_replay(out: &Path) -> usize {
    let o = irqlab()
        .args(["replay", "--batch", "--format", "json"])
        .arg(out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (mut proc_loc, mut bpf_loc, mut ncpu) = (0, 0, 0);
    for v in &lines {
        let t = &v["trace"];
        assert!(t.is_object(), "no trace object: {v}");
        ncpu = v["interrupts"]["cpus"].as_array().unwrap().len() as u64;
        let p = row_count(&v["interrupts"]["rows"], "LOC", "total");
        let b = row_count(&t["irqs"], "LOC", "count");
        if p.abs_diff(b) > 2 * ncpu + p / 10 {
            // the maps are read right after /proc in the same tick; on a
            // busy machine the reader can be preempted between the two
            // reads, and the next line gets back what this one missed
            eprintln!("record_trace_live: one line: LOC /proc {p} vs traced {b}");
        }
        let iv = v["interval_s"].as_f64().unwrap();
        let traced = t["elapsed_ns"].as_f64().unwrap() / 1e9;
        assert!((traced - iv).abs() < iv / 4.0, "{traced} vs {iv}");
        proc_loc += p;
        bpf_loc += b;
    }
    assert!(proc_loc > 0 && bpf_loc > 0, "1-ms sleeps: no LOC? {text}");
    // per-line differences telescope: over the run only the gaps at the
    // first and last reads remain (handlers in flight, what fired between)
    let slack = 4 * ncpu + proc_loc / 10;
    assert!(
        proc_loc.abs_diff(bpf_loc) <= slack,
        "LOC over the run: /proc {proc_loc} vs traced {bpf_loc}"
    );
    lines.len()
}

/// One `record --trace` run into a fresh directory, with timer interrupts
/// on demand; `during` acts on the running child once its programs are
/// attached. Checks what every run must leave behind: the programs it held
/// unloaded and the tracefs mount state as found. Returns the dataset
/// directory (inside the returned TempDir) and the run's stderr.
fn record_run(
    args: &[&str],
    during: impl FnOnce(u32),
) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let _one = one_at_a_time();
    let was_mounted = mounted();
    let _ticker = Ticker::start();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rec");
    let mut child = spawn_record(&out, args);
    let ids = attached(child.0.id());
    during(child.0.id());
    let (status, err) = child.finish();
    assert!(status.success(), "{err}");
    assert!(ids.len() >= 5, "programs in fdinfo while running: {ids:?}");
    assert_eq!(
        still_loaded(&ids),
        Vec::<u32>::new(),
        "programs left loaded"
    );
    assert_eq!(mounted(), was_mounted, "tracefs mount state changed");
    (d, out, err)
}

#[test]
fn recorded_trace_replays_and_programs_detach_or_skip() {
    if !common::host_changes_allowed(
        "record_trace_live: recorded_trace_replays_and_programs_detach_or_skip",
    ) {
        return;
    }
    if common::trace::skipped(
        "record_trace_live: recorded_trace_replays_and_programs_detach_or_skip",
        skip_reason(),
    ) {
        return;
    }
    let (_d, out, _) = record_run(&["-d", "1200ms"], |_| {});
    assert!(check_replay(&out) >= 4, "1.2 s at 200 ms");
}

#[test]
fn sigint_closes_the_segment_and_detaches_or_skip() {
    if !common::host_changes_allowed(
        "record_trace_live: sigint_closes_the_segment_and_detaches_or_skip",
    ) {
        return;
    }
    if common::trace::skipped(
        "record_trace_live: sigint_closes_the_segment_and_detaches_or_skip",
        skip_reason(),
    ) {
        return;
    }
    let (_d, out, err) = record_run(&[], |pid| {
        std::thread::sleep(Duration::from_millis(900));
        signal(pid, nix::sys::signal::Signal::SIGINT);
    });
    assert!(err.contains("segment(s)"), "the summary is printed: {err}");
    let dir = irqlab::record::layout::one_boot_dir(&out).unwrap();
    assert!(
        !dir.join("journal.jsonl").exists(),
        "the journal became a segment"
    );
    assert!(check_replay(&out) >= 2);
}

/// Under loopback TCP and disk load (several device IRQ actions and
/// NET_RX/NET_TX on both CPUs), `record --trace` writes no negative
/// increment: every traced counter of every recorded sample is at least
/// the previous sample's, each (IRQ, action) is one row, and `replay
/// --batch` gives every frame its `trace` object with nothing to warn
/// about. (Split BPF keys once collapsed into one recorded key: two rows
/// for one cell, increments of -112, and frames without `trace`.)
/// tools/trace-record-check.sh runs the same check for 10 minutes.
#[test]
fn under_load_no_traced_counter_goes_back_and_every_frame_is_traced_or_skip() {
    const TEST: &str = "record_trace_live: under_load_no_traced_counter_goes_back_and_every_frame_is_traced_or_skip";
    if !common::host_changes_allowed(TEST) || common::trace::skipped(TEST, skip_reason()) {
        return;
    }
    use irqlab::bench::workloads::{build, WorkloadKind, WorkloadOptions};
    let (_d, out, err) = record_run(&["-d", "5s"], |_| {
        let tracker = irqlab::guard::Tracker::none();
        for kind in [WorkloadKind::Net, WorkloadKind::Disk, WorkloadKind::Net] {
            let mut w = build(kind, &WorkloadOptions::default(), &tracker).unwrap();
            w.setup().unwrap();
            w.run(
                Duration::from_millis(1400),
                &irqlab::sampler::Stop::unhooked(),
            )
            .unwrap();
            w.teardown().unwrap();
        }
    });
    assert!(!err.contains("went back"), "{err}");
    let dir = irqlab::record::layout::one_boot_dir(&out).unwrap();
    let rec = irqlab::record::reader::open(&dir).unwrap();
    let mut replayer = irqlab::record::reader::Replayer::default();
    let mut prev: Option<irqlab::trace::sample::Sample> = None;
    let mut traced = 0;
    for step in &rec.steps {
        let Some(mut t) = replayer.trace(step).unwrap() else {
            continue;
        };
        traced += 1;
        let mut keys: Vec<_> = t.irqs.iter().map(|(k, _)| k.clone()).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "sample {}: one row per key", step.time.seq);
        if let Some(p) = &prev {
            let back = t.hold_monotonic(p);
            assert!(
                back.is_empty(),
                "sample {}: negative increment in {back:?}",
                step.time.seq
            );
        }
        prev = Some(t);
    }
    assert!(traced >= 15, "{traced} traced samples in 5 s at 200 ms");
    let o = irqlab()
        .args(["replay", "--batch", "--format", "json"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let text = String::from_utf8(o.stdout).unwrap();
    let frames: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(frames.len() >= 15, "{} frames", frames.len());
    for v in &frames {
        assert!(v["trace"].is_object(), "a frame without trace: {v}");
        assert!(v["trace"]["softirqs"].is_array(), "{v}");
    }
}
