//! x86's single global values `ERR` and `MIS` through the real binary:
//! 32-bit counters (`atomic_t`, docs/limits.md), so a wrap between two
//! samples of a fake tree is its modular difference, not a `reset` gap,
//! and a value above 2^32 - 1 is an `out_of_range` gap, not a rate —
//! live (`top --batch`) and in a replayed recording (`record`, then
//! `replay --batch`) alike. arm64's `Err` stays 64-bit.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

/// `/proc/interrupts` of two CPUs whose single value `label` is `value`.
fn interrupts(label: &str, value: u64) -> String {
    format!(
        "           CPU0       CPU1       \n\
         LOC:         10         20   Local timer interrupts\n\
         {label}: {value:>10}\n"
    )
}

const SOFTIRQS: &str = "                    CPU0       CPU1\n          HI:          1          2\n";

/// A tree whose `label` row is at `value`.
fn tree(label: &str, value: u64) -> tempfile::TempDir {
    common::tree_with(&[
        ("proc/interrupts", interrupts(label, value)),
        ("proc/softirqs", SOFTIRQS.to_string()),
    ])
}

/// The row labelled `label` of a `top --batch` JSON line.
fn row<'a>(doc: &'a Value, label: &str) -> &'a Value {
    doc["interrupts"]["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["label"] == label))
        .unwrap_or_else(|| panic!("no {label} row: {doc}"))
}

/// The counts the rates of `label` account for over `docs` (each line's
/// total rate times its interval), and the gaps named in them.
fn counted(docs: &[Value], label: &str) -> (f64, Vec<String>) {
    let mut n = 0.0;
    let mut gaps = Vec::new();
    for d in docs {
        let r = row(d, label);
        n += r["total_rate"].as_f64().unwrap_or(0.0) * d["interval_s"].as_f64().unwrap();
        if let Some(g) = r["gaps"].as_array() {
            gaps.extend(g.iter().filter_map(|g| g.as_str().map(String::from)));
        }
    }
    (n, gaps)
}

/// `top --batch --format json -i 300ms -n 3` on a tree whose `label` row
/// goes from `from` to `to` after the first line.
fn live(label: &str, from: u64, to: u64) -> (f64, Vec<String>) {
    let d = tree(label, from);
    let (mut child, lines) = common::top_batch_started(d.path(), 3);
    common::replace(&d.path().join("proc/interrupts"), &interrupts(label, to));
    let docs: Vec<Value> = lines.map(|l| serde_json::from_str(&l).unwrap()).collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(docs.len(), 3);
    counted(&docs, label)
}

/// `record -i 50ms -d 300ms` of a tree whose `label` row goes from `from`
/// to `to` while it is recorded, then `replay --batch --format json`.
fn replayed(label: &str, from: u64, to: u64) -> (f64, Vec<String>) {
    let d = tree(label, from);
    let out = d.path().join("rec");
    let mut child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(d.path())
        .args(["-i", "50ms", "-d", "300ms", "--host", "h", "-o"])
        .arg(&out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(120));
    common::replace(&d.path().join("proc/interrupts"), &interrupts(label, to));
    assert!(child.wait().unwrap().success(), "record failed");
    let o = common::irqlab()
        .arg("replay")
        .arg(&out)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let docs: Vec<Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(docs.len() >= 2, "{docs:?}");
    counted(&docs, label)
}

/// `ERR` 4294967290 -> 5 is 11 errors, live and replayed; `MIS` alike.
#[test]
fn an_x86_err_or_mis_wrap_is_its_modular_difference() {
    for label in ["ERR", "MIS"] {
        for (how, (n, gaps)) in [
            ("live", live(label, 4294967290, 5)),
            ("replayed", replayed(label, 4294967290, 5)),
        ] {
            assert!(gaps.is_empty(), "{how} {label}: {gaps:?}");
            assert!((n - 11.0).abs() < 0.01, "{how} {label}: {n} counted");
        }
    }
}

/// `ERR` at 2^32 is no kernel value: an `out_of_range` gap, not a rate of
/// 4294967289 per interval; arm64's `Err` there is a value (5 errors).
#[test]
fn an_x86_err_above_32_bits_is_a_gap_and_arm64_err_is_not() {
    for (how, (n, gaps)) in [
        ("live", live("ERR", 7, 1 << 32)),
        ("replayed", replayed("ERR", 7, 1 << 32)),
    ] {
        assert_eq!(n, 0.0, "{how}");
        assert!(!gaps.is_empty(), "{how}: no gap");
        assert!(gaps.iter().all(|g| g == "out_of_range"), "{how}: {gaps:?}");
    }
    for (how, (n, gaps)) in [
        ("live", live("Err", 1 << 32, (1 << 32) + 5)),
        ("replayed", replayed("Err", 1 << 32, (1 << 32) + 5)),
    ] {
        assert!(gaps.is_empty(), "{how}: {gaps:?}");
        assert!((n - 5.0).abs() < 0.01, "{how}: {n} counted");
    }
}
