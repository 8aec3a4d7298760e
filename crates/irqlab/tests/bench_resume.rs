//! A resumed bench run never mixes environments: `compare` keeps a
//! resumed part of another environment (`env-resume-*.json`) apart from
//! the run's first part, with a note; parts of one environment pool as
//! before.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{json, Value};
use std::fs;
use std::path::Path;

const T0: &str = "2026-12-04T05:00:00Z";
const T1: &str = "2026-12-04T06:00:00Z";
const T2: &str = "2026-12-04T07:00:00Z";

fn env(kernel: &str, boot: &str, started: &str, warnings: &[&str]) -> Value {
    json!({"root": "/w/t", "kernel_release": kernel, "hostname": "h", "cpu_model": "EPYC",
        "online_cpus": "0-1", "boot_id": boot, "started_at": started,
        "command": ["irqlab", "bench", "--root", "/w/t"], "warnings": warnings})
}

/// A run of variants tip and patch written by hand: trials 1-3 in boot
/// b1 (env.json, kernel 6.1), 4-6 in boot b2 (resumed at T1 on
/// `resumed_kernel`), 7-8 in boot b3 (resumed at T2, kernel 6.1 again);
/// the boot-b2 trials of tip are ten times the others.
fn resumed_run(dir: &Path, resumed_kernel: &str) {
    let plan = json!({"argv": ["irqlab", "bench", "--root", "/w/t"],
        "variants": ["tip", "patch"], "workloads": ["ipi"], "trials": 8, "warmup": 0,
        "duration_s": 2.0, "order": "alternate", "seed": 1, "created_at": T0});
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("plan.json"), plan.to_string()).unwrap();
    fs::write(dir.join("env.json"), env("6.1", "b1", T0, &[]).to_string()).unwrap();
    let resumed = env(
        resumed_kernel,
        "b2",
        T1,
        &["load average 3.00 before start"],
    );
    let name = |t: &str| format!("env-resume-{}.json", t.replace(':', ""));
    fs::write(dir.join(name(T1)), resumed.to_string()).unwrap();
    fs::write(dir.join(name(T2)), env("6.1", "b3", T2, &[]).to_string()).unwrap();
    for (variant, scale) in [("tip", 10.0), ("patch", 1.0)] {
        let mut lines = String::new();
        for n in 1..=8u32 {
            let (boot, at, v) = match n {
                1..=3 => ("b1", T0.replace("00:00Z", &format!("00:0{n}Z")), 100.0),
                4..=6 => ("b2", T1.to_string(), 100.0 * scale),
                _ => ("b3", T2.replace("00:00Z", &format!("00:0{n}Z")), 100.0),
            };
            let value = v + f64::from(n) * 0.1;
            let rec = json!({"schema": 2, "variant": variant, "trial": n, "boot_id": boot,
                "started_at": at, "duration_s": 2.0, "metrics": {"round_trips_per_sec":
                {"value": value, "unit": "1/s", "direction": "higher"}}});
            lines.push_str(&format!("{rec}\n"));
        }
        fs::create_dir_all(dir.join(variant)).unwrap();
        fs::write(dir.join(variant).join("trials.jsonl"), lines).unwrap();
    }
}

/// Each variant and its number of values, in the report's order.
fn counts(doc: &Value) -> Vec<(String, u64)> {
    let labels = doc["variants"].as_array().unwrap();
    let m = &doc["metrics"][0];
    labels
        .iter()
        .map(|l| {
            let l = l.as_str().unwrap();
            let n = m["values"][l].as_array().map_or(0, Vec::len);
            (l.to_string(), n as u64)
        })
        .collect()
}

#[test]
fn compare_keeps_a_part_resumed_in_another_environment_apart() {
    let tmp = tempfile::tempdir().unwrap();
    resumed_run(&tmp.path().join("run"), "6.8");
    let doc = common::compare::json(tmp.path(), &["run"]);
    let part = "env-resume-2026-12-04T060000Z";
    assert_eq!(
        counts(&doc),
        vec![
            ("patch@run".to_string(), 5),
            (format!("patch@{part}"), 3),
            ("tip@run".to_string(), 5),
            (format!("tip@{part}"), 3),
        ],
        "{doc}"
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "the part resumed at {T1} (run/{part}.json) ran on another environment than \
             env.json records: kernel (6.1 vs 6.8)"
        )),
        "{notes}"
    );
    assert!(
        notes.contains(&format!(
            "run: bench ({part}.json): load average 3.00 before start"
        )),
        "{notes}"
    );
    // the same environment throughout: one run, as before
    let same = tmp.path().join("same");
    resumed_run(&same, "6.1");
    let doc = common::compare::json(tmp.path(), &["same"]);
    assert_eq!(
        counts(&doc),
        vec![("patch".to_string(), 8), ("tip".to_string(), 8)],
        "{doc}"
    );
    assert!(
        !doc["notes"].to_string().contains("another environment"),
        "{doc}"
    );
}
