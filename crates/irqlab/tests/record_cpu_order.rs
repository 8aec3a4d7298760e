//! A `/proc/interrupts` header that lists the same CPUs in another order
//! between two samples (`CPU0 CPU1`, then `CPU1 CPU0` with the columns
//! swapped) keeps every count with its CPU id end to end: `record` →
//! `replay --batch --format json` (and `tools/read-recording.py` when
//! python3 has duckdb or pyarrow; a visible skip otherwise) and live
//! `top --batch --format json` give each CPU its own counts and the same
//! per-interval increments, with no jump and no gap from the order alone.
//!
//! The tree changes between samples only: a change is made once a sample
//! of the state before is taken (journal lines, or top's output lines),
//! and the next state once a sample of it is, so each change lands in
//! exactly one interval whatever the machine's load.
#![allow(clippy::unwrap_used)]

mod common;
use irqlab::record::layout;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The per-CPU rows written: label, description, counts by CPU id (0, 1).
type Counts = [(&'static str, &'static str, [u64; 2]); 3];

/// The first state: very different counts per CPU, so that a count taken
/// for the other CPU's is a jump (or a reset) of thousands.
const A: Counts = [
    ("24", "IO-APIC   4-edge      ttyS0", [1_000, 500_000]),
    ("LOC", "Local timer interrupts", [200_000, 3_000]),
    ("RES", "Rescheduling interrupts", [5, 5]),
];

/// Increments by CPU id from A to B (B is written as `CPU1 CPU0`).
const STEP_B: [[u64; 2]; 3] = [[0, 50], [100, 7], [0, 0]];
/// Increments by CPU id from B to C (C is written as `CPU0 CPU1` again).
const STEP_C: [[u64; 2]; 3] = [[3, 0], [20, 1], [2, 0]];

fn plus(c: Counts, step: [[u64; 2]; 3]) -> Counts {
    let mut c = c;
    for (row, s) in c.iter_mut().zip(step) {
        row.2 = [row.2[0] + s[0], row.2[1] + s[1]];
    }
    c
}

/// `/proc/interrupts` text of `counts` with its columns in `order` (CPU ids).
fn interrupts(counts: &Counts, order: [usize; 2]) -> String {
    let mut s = format!("           CPU{:<7} CPU{:<7}\n", order[0], order[1]);
    for (label, desc, by_id) in counts {
        s += &format!(
            "{label:>4}: {:>10} {:>10}   {desc}\n",
            by_id[order[0]], by_id[order[1]]
        );
    }
    s + " ERR:          0\n"
}

/// The three states, in order: A as `CPU0 CPU1`, B as `CPU1 CPU0`, C as
/// `CPU0 CPU1`.
fn states() -> [String; 3] {
    let b = plus(A, STEP_B);
    let c = plus(b, STEP_C);
    [
        interrupts(&A, [0, 1]),
        interrupts(&b, [1, 0]),
        interrupts(&c, [0, 1]),
    ]
}

/// The increments of one interval: (label, CPU id) → count, nonzero only.
type Step = BTreeMap<(String, u64), u64>;

fn step(s: [[u64; 2]; 3]) -> Step {
    let mut m = Step::new();
    for ((label, _, _), by_id) in A.iter().zip(s) {
        for (cpu, n) in by_id.into_iter().enumerate() {
            if n > 0 {
                m.insert((label.to_string(), cpu as u64), n);
            }
        }
    }
    m
}

/// The nonzero increments of one `top`/`replay` JSON line's interrupts
/// rows (rate × interval, by the line's CPU ids), checking that no rate is
/// a gap or negative.
fn frame_step(line: &str) -> Step {
    let v: Value = serde_json::from_str(line).unwrap();
    let secs = v["interval_s"].as_f64().unwrap();
    let ints = &v["interrupts"];
    let cpus: Vec<u64> = ints["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    let mut m = Step::new();
    for r in ints["rows"].as_array().unwrap() {
        let label = r["label"].as_str().unwrap();
        if label == "ERR" {
            continue;
        }
        let rates = r["rates"].as_array().unwrap();
        assert_eq!(rates.len(), cpus.len(), "{line}");
        for (cpu, rate) in cpus.iter().zip(rates) {
            let rate = rate
                .as_f64()
                .unwrap_or_else(|| panic!("{label} CPU {cpu}: no rate: {line}"));
            assert!(rate >= 0.0, "{label} CPU {cpu}: {line}");
            let n = (rate * secs).round() as u64;
            if n > 0 {
                m.insert((label.to_string(), *cpu), n);
            }
        }
        if let Some(gaps) = r["gaps"].as_array() {
            assert!(gaps.iter().all(Value::is_null), "{label}: a gap: {line}");
        }
    }
    m
}

/// The intervals of `lines` that moved a counter: exactly the two steps.
fn assert_two_steps<'a>(what: &str, lines: impl IntoIterator<Item = &'a str>) {
    let moved: Vec<Step> = lines
        .into_iter()
        .map(frame_step)
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(
        moved,
        [step(STEP_B), step(STEP_C)],
        "{what}: the intervals that moved a counter"
    );
}

/// A tree of the vm-2cpu fixture's softirqs and stat with state A.
fn tree() -> tempfile::TempDir {
    let d = common::stats_tree();
    common::replace(&d.path().join("proc/interrupts"), &states()[0]);
    d
}

/// The samples `record` has flushed to its journal so far.
fn journal_samples(out: &Path) -> usize {
    let journal = layout::boot_dirs(out)
        .ok()
        .and_then(|b| b.first().map(|b| b.join("journal.jsonl")));
    journal
        .and_then(|j| std::fs::read_to_string(j).ok())
        .map_or(0, |t| t.lines().filter(|l| l.ends_with('}')).count())
}

/// `record` the three states into `out` (each in at least one sample),
/// ended by SIGINT.
fn record_states(tree: &Path, out: &Path) {
    let child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(tree)
        .args(["-i", "50ms", "--segment", "1h", "-o"])
        .arg(out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let limit = Duration::from_secs(30);
    for next in states().iter().skip(1).map(Some).chain([None]) {
        // counted after the change: the second sample flushed after this
        // count was read after the change
        let want = journal_samples(out) + 2;
        assert!(
            common::wait_until(limit, || journal_samples(out) >= want),
            "record took no sample of the tree's state in {limit:?}"
        );
        if let Some(text) = next {
            common::replace(&tree.join("proc/interrupts"), text);
        }
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("disagree"), "{err}");
}

#[test]
fn a_swapped_cpu_order_keeps_each_cpus_counts_in_record_replay_and_top() {
    let d = tree();
    let rec = tempfile::tempdir().unwrap();
    let out = rec.path().join("rec");
    record_states(d.path(), &out);

    let o = common::replay_batch(&out, &["--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("disagree"), "{err}");
    let replayed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_two_steps("replay", replayed.lines());

    read_back_by_python(&out);
    top_sees_the_same_steps();
}

/// `top --batch --format json` over the same three states: the same two
/// steps.
fn top_sees_the_same_steps() {
    let d = tree();
    let (mut child, mut lines) = common::top_batch_started(d.path(), 100);
    let mut seen = vec![];
    for text in states().iter().skip(1) {
        common::replace(&d.path().join("proc/interrupts"), text);
        // the interval that rates the change (the next or the one after,
        // as the change fell before or after the next sample was read)
        loop {
            let l = lines.next().expect("top ended before rating a change");
            let moved = !frame_step(&l).is_empty();
            seen.push(l);
            if moved {
                break;
            }
            assert!(seen.len() < 60, "no change rated: {seen:?}");
        }
    }
    let next = lines.next().unwrap();
    seen.push(next);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_two_steps("top", seen.iter().map(String::as_str));
}

/// `tools/read-recording.py` with each installed engine: every sample's
/// interrupt counters by CPU id are those of one state, the states in
/// order, each seen.
fn read_back_by_python(out: &Path) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/read-recording.py");
    let engines: Vec<&str> = ["duckdb", "pyarrow"]
        .into_iter()
        .filter(|e| {
            Command::new("python3")
                .args(["-c", &format!("import {e}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .collect();
    if engines.is_empty() {
        visible!(
            "SKIP record_cpu_order: read-recording.py not checked: neither duckdb nor pyarrow is installed for python3 (tools/install-python-readers.sh)"
        );
        return;
    }
    let b = plus(A, STEP_B);
    let by_state: Vec<Counts> = vec![A, b, plus(b, STEP_C)];
    for engine in engines {
        let o = Command::new("python3")
            .arg(&script)
            .arg(out)
            .args(["--engine", engine])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut states: Vec<usize> = vec![];
        for l in String::from_utf8_lossy(&o.stdout).lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            let got =
                |label: &str, cpu: usize| v["values"][format!("interrupts|{label}|{cpu}")].as_u64();
            let which = by_state.iter().position(|c| {
                c.iter()
                    .all(|(label, _, n)| got(label, 0) == Some(n[0]) && got(label, 1) == Some(n[1]))
            });
            let which = which.unwrap_or_else(|| panic!("{engine}: a sample of no state: {l}"));
            if states.last() != Some(&which) {
                states.push(which);
            }
        }
        assert_eq!(states, [0, 1, 2], "{engine}: the states sampled, in order");
    }
}
