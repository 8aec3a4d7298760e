//! `irqlab replay DIR --batch`: the `top --batch` output of a recording,
//! through the same writer as live `top --batch` — text blocks end with
//! the `Average:` block over the whole recording, JSON Lines have none —
//! and `record --duration` gives the number of samples the one
//! end-of-run rule says (`sampler/pace.rs`). The recording is of a fake
//! tree whose LOC counter moves while it is recorded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::irqlab;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bump LOC in CPU column `col` of `tree` by `by` (in place: the recorder
/// keeps the file open).
fn bump_loc_on(tree: &Path, col: usize, by: u64) {
    let p = tree.join("proc/interrupts");
    let text = std::fs::read_to_string(&p).unwrap();
    let moved: Vec<String> = text
        .lines()
        .map(|l| match l.trim_start().strip_prefix("LOC:") {
            Some(rest) => {
                let mut w: Vec<String> = rest.split_whitespace().map(String::from).collect();
                let v: u64 = w[col].parse().unwrap();
                w[col] = (v + by).to_string();
                format!("LOC: {}", w.join(" "))
            }
            None => l.to_string(),
        })
        .collect();
    let body = moved.join("\n") + "\n";
    let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    std::io::Write::write_all(&mut f, body.as_bytes()).unwrap();
    f.set_len(body.len() as u64).unwrap();
}

/// A recording of a 2-CPU fake tree, `-i 50ms -d 300ms`, LOC moving.
fn recording(dir: &Path) -> PathBuf {
    recording_with(dir, &[], 0)
}

/// [`recording`] with more `record` flags, LOC moving on CPU `col`.
fn recording_with(dir: &Path, flags: &[&str], col: usize) -> PathBuf {
    let tree = dir.join("tree");
    common::synth_into(&common::spec(2, 3), &tree);
    let out = dir.join("rec");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args(["-i", "50ms", "-d", "300ms", "--host", "h", "-o"])
        .arg(&out)
        .args(flags)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(40));
        bump_loc_on(&tree, col, 500);
    }
    assert!(child.wait().unwrap().success(), "record failed");
    out
}

fn replay(rec: &Path, format: &str) -> String {
    let o = common::replay_batch(rec, &["--format", format]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The one end-of-run rule: `-d 300ms -i 50ms` is exactly 6 intervals
/// (the baseline and 6 samples), however late a busy machine wakes.
#[test]
fn record_duration_over_interval_gives_that_many_intervals() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording(d.path());
    let json = replay(&rec, "json");
    assert_eq!(json.lines().count(), 6, "{json}");
}

/// `replay --batch` text ends with `top --batch`'s `Average:` block, and
/// its SUM is the whole recording's rate (every row's count over the
/// recorded time), as the JSON lines of the same recording add up.
#[test]
fn replay_batch_text_ends_with_the_average_block() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording(d.path());
    let text = replay(&rec, "text");
    let json = replay(&rec, "json");
    let frames: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        text.matches("  SUM ").count(),
        frames.len() + 1,
        "one per block and Average: {text}"
    );
    assert!(
        text.lines().last().unwrap().starts_with("Average:"),
        "{text}"
    );
    assert!(!json.contains("Average"), "{json}");
    // the whole run's rate of every row, from the JSON lines
    let (mut count, mut secs) = (0.0, 0.0);
    for f in &frames {
        secs += f["interval_s"].as_f64().unwrap();
        for r in f["interrupts"]["rows"].as_array().unwrap() {
            count += r["total"].as_f64().unwrap_or(0.0);
        }
    }
    assert!(count > 0.0, "LOC moved: {json}");
    let sum = text
        .lines()
        .find(|l| l.starts_with("Average:") && l.contains(" SUM "))
        .unwrap();
    let total: f64 = sum
        .split("all rows")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let want = count / secs;
    assert!(
        (total - want).abs() <= want * 0.01 + 0.1,
        "Average SUM {total}, recording {want}: {sum}"
    );
}

/// `--format` applies to `--batch` only: without it, it is refused
/// (exit 2, naming `--batch`) as in `top`, before the recording is read,
/// rather than accepted and ignored by the interactive view.
#[test]
fn format_without_batch_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    for format in ["json", "text"] {
        let o = irqlab()
            .args(["replay", "--format", format])
            .arg(d.path().join("absent"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{format}: {err}");
        assert!(err.contains("--batch"), "{format}: {err}");
    }
}

/// Row filters that select nothing, or less than asked, are warned about
/// on stderr as `top --batch` warns about them; the replay goes on.
#[test]
fn replay_batch_warns_about_filters_that_select_nothing() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording(d.path());
    let cases: [(&[&str], &str); 3] = [
        (
            &["--cpus", "0,3"],
            "--cpus 0,3: CPU 3 is not in the recording",
        ),
        (&["--cpus", "5"], "--cpus 5 selects no CPU of the recording"),
        (&["--irq", "zzz"], "--irq \"zzz\" matches no interrupt row"),
    ];
    for (args, needle) in cases {
        let o = common::replay_batch(&rec, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let o = common::replay_batch(&rec, &[]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
}

/// `replay --batch` of `rec` with `flags`: stdout and stderr.
fn replay_with(rec: &Path, flags: &[&str]) -> (String, String) {
    let o = common::replay_batch(rec, flags);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success(), "{flags:?}: {err}");
    (String::from_utf8(o.stdout).unwrap(), err)
}

/// A recording of CPU 1 alone (`record --cpus 1`) replays as `top --cpus
/// 1` showed it: its CPU columns are CPU 1 (LOC moved there), the first
/// CPU-time line sums CPU 1 (`sel`, JSON `aggregate_cpus`), not the whole
/// machine's `all` beside it, and stderr says which filter it was
/// recorded with. `--cpus 0-1` says that CPU 0 is not in the recording
/// (it is online: it was not recorded).
#[test]
fn a_cpu_subset_recording_replays_with_its_recorded_cpus() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording_with(d.path(), &["--cpus", "1"], 1);
    let (json, err) = replay_with(&rec, &["--format", "json"]);
    let said: Vec<&str> = err.lines().filter(|l| l.contains("recorded")).collect();
    assert_eq!(said, ["irqlab: recorded with --cpus 1"], "{err}");
    let mut moved = 0.0;
    for l in json.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["interrupts"]["cpus"], serde_json::json!([1]), "{l}");
        assert_eq!(v["softirqs"]["cpus"], serde_json::json!([1]), "{l}");
        assert_eq!(v["aggregate_cpus"], serde_json::json!([1]), "{l}");
        let cpus: Vec<&Value> = v["cpu_pct"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["cpu"])
            .collect();
        assert_eq!(cpus, [&Value::Null, &serde_json::json!(1)], "{l}");
        let rows = v["interrupts"]["rows"].as_array().unwrap();
        let loc = rows.iter().find(|r| r["label"] == "LOC").unwrap();
        moved += loc["rates"][0].as_f64().unwrap();
    }
    assert!(moved > 0.0, "LOC moved on CPU 1: {json}");
    let (text, _) = replay_with(&rec, &[]);
    let cpu_lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|w| ["all", "sel"].contains(w))
        .collect();
    assert!(
        !cpu_lines.is_empty() && cpu_lines.iter().all(|w| *w == "sel"),
        "{text}"
    );
    let (_, err) = replay_with(&rec, &["--cpus", "0-1"]);
    assert!(
        err.contains("--cpus 0-1: CPU 0 is not in the recording (it holds 1 CPU (1)); showing 1"),
        "{err}"
    );
    assert!(!err.contains("not online"), "{err}");
}

/// `replay --batch --format json` carries each numbered row's recorded
/// affinity only with `--affinity`, as `top` does; with text lines the
/// flag is refused.
#[test]
fn replay_json_carries_affinity_only_when_asked() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording(d.path());
    let with = |flags: &[&str]| {
        let (json, _) = replay_with(&rec, flags);
        json.lines().any(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let rows = v["interrupts"]["rows"].as_array().unwrap().clone();
            rows.iter().any(|r| r.get("affinity").is_some())
        })
    };
    assert!(!with(&["--format", "json"]));
    assert!(with(&["--format", "json", "--affinity"]));
    let o = common::replay_batch(&rec, &["--affinity"]);
    common::refused(&o, "replay --affinity: text lines show no affinity");
}

/// The IRQ row labels of each block of `replay --batch` text (not
/// `Average:`).
fn text_rows(text: &str) -> Vec<Vec<String>> {
    let mut blocks: Vec<Vec<String>> = Vec::new();
    let mut open = false;
    for l in text.lines().filter(|l| !l.starts_with("Average:")) {
        match l.split_whitespace().nth(1) {
            Some("IRQ") => {
                blocks.push(Vec::new());
                open = true;
            }
            Some("SUM") => open = false,
            Some(label) if open => blocks.last_mut().unwrap().push(label.to_string()),
            _ => {}
        }
    }
    blocks
}

/// `replay --threshold` hides the same rows in JSON as in text, as `top
/// --batch --threshold` does (JSON ignored it): only LOC moves, so only
/// LOC is written, in the frames where it moved fast enough.
#[test]
fn replay_batch_threshold_hides_the_same_rows_in_json_and_text() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording(d.path());
    let (json, _) = replay_with(&rec, &["--format", "json", "--threshold", "1"]);
    let json_rows: Vec<Vec<String>> = json
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["interrupts"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["label"].as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    assert!(json_rows.iter().flatten().all(|l| l == "LOC"), "{json}");
    assert!(json_rows.iter().any(|r| !r.is_empty()), "LOC moved: {json}");
    let (text, _) = replay_with(&rec, &["--threshold", "1"]);
    assert_eq!(text_rows(&text), json_rows, "{text}");
    let (all, _) = replay_with(&rec, &["--format", "json"]);
    assert!(all.matches("\"label\"").count() > json.matches("\"label\"").count());
}

/// A `record` of one sample (killed right after its baseline: SIGINT
/// would take a last sample of the interval it cuts short) into `out` of
/// `tree`; its journal holds the sample.
fn one_sample_recording(tree: &Path, out: &Path) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(tree)
        .args(["-i", "1h", "--host", "h", "-o"])
        .arg(out)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let journal = || {
        irqlab::record::layout::boot_dirs(out)
            .ok()
            .and_then(|v| v.first().cloned())
            .and_then(|b| std::fs::read_to_string(b.join("journal.jsonl")).ok())
            .map_or(0, |t| t.lines().count())
    };
    for _ in 0..1000 {
        if journal() >= 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(journal(), 1, "one sample in the journal");
}

/// A recording of one sample: `replay --batch` says so and exits 1, as
/// the interactive view does; a run of one sample among others is a note
/// and the others are replayed (exit 0).
#[test]
fn replay_batch_of_one_sample_says_rates_need_two() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    common::synth_into(&common::spec(2, 3), &tree);
    let out = d.path().join("rec");
    one_sample_recording(&tree, &out);
    let o = common::replay_batch(&out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("one sample only; rates need two"), "{err}");
    assert!(o.stdout.is_empty());
    // a second run of several samples: the first is a note
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args(["-i", "50ms", "-d", "150ms", "--host", "h", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let o = common::replay_batch(&out, &["--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("run 1 of 2: ") && err.contains("one sample only (rates need two)"),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        3,
        "{err}"
    );
    // that run alone: the error
    let o = common::replay_batch(&out, &["--run", "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("one sample only; rates need two"), "{err}");
}
