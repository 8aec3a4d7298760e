//! Regression tests of compare's inputs, statistics and output, directions
//! and probe runs as one trial. Each test is named after what it protects.
#![allow(clippy::unwrap_used)]

mod common;

use common::compare::{err, json, numbers, ok, spread, usage};
use serde_json::Value;
use std::fs;
use std::path::Path;
use tempfile::TempDir;

#[test]
fn item1_plain_files_are_variants_named_by_stem() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("results/a.txt"), spread(100.0, 1.0, 10));
    numbers(&tmp.path().join("results/b.txt"), spread(110.0, 1.0, 10));
    for args in [
        vec!["results/a.txt", "results/b.txt"],
        vec![
            tmp.path().join("results/a.txt").to_str().unwrap(),
            tmp.path().join("results/b.txt").to_str().unwrap(),
        ],
    ] {
        let doc = json(tmp.path(), &args);
        assert_eq!(doc["variants"], serde_json::json!(["a", "b"]), "{args:?}");
        assert_eq!(doc["metrics"][0]["name"], "value");
        assert_eq!(doc["metrics"][0]["only_in"], Value::Null);
        assert_eq!(doc["metrics"].as_array().unwrap().len(), 1);
    }
    // same stem in two directories: shortest distinguishing suffix
    numbers(&tmp.path().join("p/same/x.txt"), spread(100.0, 1.0, 10));
    numbers(&tmp.path().join("q/same/x.txt"), spread(101.0, 1.0, 10));
    let doc = json(tmp.path(), &["p/same/x.txt", "q/same/x.txt"]);
    assert_eq!(doc["variants"], serde_json::json!(["p/same/x", "q/same/x"]));
    let doc = json(
        tmp.path(),
        &["p/same/x.txt", "q/same/x.txt", "--metric", "m"],
    );
    assert_eq!(doc["metrics"][0]["name"], "m");
}

#[test]
fn item2_comparing_nothing_is_an_error() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 10));
    fs::write(d.join("empty.txt"), "# nothing\n").unwrap();
    let e = err(d, &["a.txt", "empty.txt"]);
    assert!(
        e.contains("empty.txt: no values found: expected one number a line"),
        "{e}"
    );
    fs::write(d.join("h.csv"), "variant,x\r\n").unwrap();
    let e = err(d, &["a.txt", "h.csv"]);
    let want = "h.csv: no values found: expected a header line, then rows of numbers";
    assert!(e.contains(want), "{e}");
    fs::write(d.join("nan.csv"), "x\nNaN\n-\n").unwrap();
    let e = err(d, &["a.txt", "nan.csv"]);
    assert!(
        e.contains("nan.csv: no values found: expected a header line"),
        "{e}"
    );
    assert!(
        e.contains("; nan.csv: x: no value at line 2, line 3"),
        "{e}"
    );
    fs::write(d.join("e.json"), "[]").unwrap();
    let e = err(d, &["a.txt", "e.json"]);
    assert!(
        e.contains("e.json: no values found: expected an array of row objects"),
        "{e}"
    );
    fs::create_dir_all(d.join("e1")).unwrap();
    fs::create_dir_all(d.join("e2")).unwrap();
    let e = err(d, &["e1", "e2"]);
    assert!(e.contains("e1: empty directory"), "{e}");
    assert!(e.contains("trials.jsonl"), "{e}");
    fs::create_dir_all(d.join("run")).unwrap();
    fs::write(d.join("run/env.json"), "{\"kernel\":\"6.1\"}").unwrap();
    fs::write(d.join("run/plan.json"), "{}").unwrap();
    let e = err(d, &["a.txt", "run"]);
    assert!(
        e.contains("bench result directory without trials.jsonl"),
        "{e}"
    );
    assert!(!e.contains("expected a number"), "{e}");
    fs::write(d.join("x.csv"), "x\n1\n2\n3\n").unwrap();
    fs::write(d.join("y.csv"), "y\n1\n2\n3\n").unwrap();
    let e = err(d, &["x.csv", "y.csv"]);
    assert!(e.contains("nothing to compare"), "{e}");
    assert!(e.contains("x has x; y has y"), "{e}");
}

fn trial(variant: &str, n: usize, v: f64) -> String {
    format!(
        r#"{{"variant":"{variant}","trial":{n},"boot_id":"b","started_at":"t","duration_s":1.0,"metrics":{{"irq_res_per_sec":{{"value":{v},"unit":"1/s","direction":"none"}}}}}}"#
    )
}

fn bench_run(dir: &Path, variant: &str, centre: f64) {
    fs::create_dir_all(dir).unwrap();
    let lines: Vec<String> = spread(centre, 1.0, 8)
        .iter()
        .enumerate()
        .map(|(i, v)| trial(variant, i, *v))
        .collect();
    fs::write(dir.join("trials.jsonl"), lines.join("\n") + "\n").unwrap();
    fs::write(dir.join("env.json"), "{}").unwrap();
}

#[test]
fn item3_bench_runs_with_the_same_label_are_named_by_directory() {
    let tmp = TempDir::new().unwrap();
    bench_run(&tmp.path().join("before"), "6.1.0-13-amd64", 1000.0);
    bench_run(&tmp.path().join("after"), "6.1.0-13-amd64", 1100.0);
    let out = ok(tmp.path(), &["before", "after"]);
    assert!(out.contains("after vs before"), "{out}");
    assert!(out.contains("named by their paths"), "{out}");
    // explicit equal labels still pool
    // (one variant is a usage error)
    usage(
        tmp.path(),
        &["k=before", "k=after"],
        &["found 1 (k)", "LABEL=PATH"],
    );
}

/// `LABEL=` on a path of two variants is a usage error (exit 2), as the
/// other ways of naming variants wrongly are (before: exit 1).
#[test]
fn a_label_for_a_path_of_two_variants_is_a_usage_error() {
    let tmp = TempDir::new().unwrap();
    bench_run(&tmp.path().join("bv/tip"), "tip", 1000.0);
    bench_run(&tmp.path().join("bv/patch"), "patch", 1100.0);
    bench_run(&tmp.path().join("base"), "base", 1000.0);
    usage(
        tmp.path(),
        &["base", "x=bv"],
        &["x= given but the path holds 2 variants", "without it"],
    );
}

#[test]
fn item4_result_does_not_depend_on_argument_order() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), spread(100.0, 0.7, 15));
    numbers(&tmp.path().join("b.txt"), spread(95.0, 0.9, 15));
    let one = json(tmp.path(), &["tip=a.txt", "patch=b.txt"]);
    let two = json(
        tmp.path(),
        &["patch=b.txt", "tip=a.txt", "--baseline", "tip"],
    );
    let c1 = &one["metrics"][0]["comparisons"][0];
    let c2 = &two["metrics"][0]["comparisons"][0];
    assert_eq!(c1["variant"], "patch");
    assert_eq!(c1, c2);
    // Nor on which other variants are compared: each side's bootstrap
    // replicates are seeded by (metric, variant) and drawn once.
    numbers(&tmp.path().join("c.txt"), spread(97.0, 0.8, 15));
    let three = json(
        tmp.path(),
        &[
            "other=c.txt",
            "patch=b.txt",
            "tip=a.txt",
            "--baseline",
            "tip",
        ],
    );
    let cmp = three["metrics"][0]["comparisons"].as_array().unwrap();
    let c3 = cmp.iter().find(|c| c["variant"] == "patch").unwrap();
    assert_eq!(c1, c3);
}

#[test]
fn item5_verdict_follows_the_shift_for_negative_values() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), spread(-100.0, 0.2, 12));
    numbers(&tmp.path().join("b.txt"), spread(-90.0, 0.2, 12));
    let doc = json(tmp.path(), &["a.txt", "b.txt", "--direction", "higher"]);
    let m = &doc["metrics"][0];
    let c = &m["comparisons"][0];
    assert!(c["hodges_lehmann"]["shift"].as_f64().unwrap() > 0.0);
    assert!(c["median_change_pct"]["estimate"].as_f64().unwrap() > 0.0);
    assert!(m["delta_pct"]["b"]["mean"].as_f64().unwrap() > 0.0);
    assert_eq!(c["verdict"], "improved");
    // centre 0: relative change undefined, verdict from the shift
    numbers(&tmp.path().join("z.txt"), (-4..=4).map(f64::from));
    numbers(&tmp.path().join("w.txt"), (6..=14).map(f64::from));
    let doc = json(tmp.path(), &["z.txt", "w.txt", "--direction", "lower"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(c["median_change_pct"], Value::Null);
    assert_eq!(c["verdict"], "regressed");
}

#[test]
fn item6_direction_per_metric_none_and_inference() {
    let tmp = TempDir::new().unwrap();
    let mut csv = String::from("variant,irqs_per_sec,read_latency_ns,cpu_pct\n");
    for (i, v) in spread(100.0, 0.5, 12).iter().enumerate() {
        csv.push_str(&format!("tip,{v},{v},{v}\n"));
        let w = v * 1.1 + (i % 2) as f64 * 0.01;
        csv.push_str(&format!("patch,{w},{w},{w}\n"));
    }
    fs::write(tmp.path().join("r.csv"), csv).unwrap();
    let verdicts = |doc: &Value| -> Vec<(String, String, String)> {
        doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["name"].as_str().unwrap().to_string(),
                    m["direction"].as_str().unwrap().to_string(),
                    m["comparisons"][0]["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let doc = json(tmp.path(), &["r.csv"]);
    let v = verdicts(&doc);
    assert_eq!(
        v[0],
        ("irqs_per_sec".into(), "none".into(), "changed".into())
    );
    assert_eq!(
        v[1],
        ("read_latency_ns".into(), "lower".into(), "regressed".into())
    );
    assert_eq!(v[2], ("cpu_pct".into(), "lower".into(), "regressed".into()));
    let doc = json(
        tmp.path(),
        &[
            "r.csv",
            "--direction",
            "higher",
            "--direction",
            "cpu_pct=none",
        ],
    );
    let v = verdicts(&doc);
    assert_eq!(v[0].2, "improved");
    assert_eq!(
        v[1].2, "improved",
        "a bare --direction applies to every metric without its own rule"
    );
    assert_eq!(v[2].2, "changed");
    // a file's `direction: none` is honoured; the flag overrides it (two
    // sequential runs: one run a side, so the verdict is only what the
    // trials say within this run pair)
    bench_run(&tmp.path().join("b1"), "tip", 1000.0);
    bench_run(&tmp.path().join("b2"), "patch", 1100.0);
    let out = ok(tmp.path(), &["b1", "b2"]);
    assert!(out.contains("changed within this run pair"), "{out}");
    assert!(
        !out.contains("improved") && !out.contains("regressed"),
        "{out}"
    );
    let out = ok(
        tmp.path(),
        &["b1", "b2", "--direction", "irq_res_per_sec=lower"],
    );
    assert!(out.contains("regressed within this run pair"), "{out}");
    usage(
        tmp.path(),
        &["b1", "b2", "--direction", "up"],
        &["expected higher, lower or none"],
    );
}

#[test]
fn item8_warnings_are_true_of_the_numbers_beside_them() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [1.0, 2.0, 3.0]);
    numbers(&tmp.path().join("b.txt"), spread(10.0, 0.1, 10));
    let out = ok(tmp.path(), &["a.txt", "b.txt"]);
    assert!(out.contains("p 0.0070"), "{out}");
    assert!(
        !out.contains("cannot be reached") && !out.contains("need 4"),
        "{out}"
    );
    numbers(&tmp.path().join("c.txt"), [11.0, 12.0, 13.0]);
    let out = ok(tmp.path(), &["a.txt", "c.txt"]);
    assert!(out.contains("smallest possible p is 0.1000"), "{out}");
    numbers(&tmp.path().join("d.txt"), [1.0, 2.0]);
    numbers(&tmp.path().join("e.txt"), [5.0, 7.0]);
    let out = ok(tmp.path(), &["d.txt", "e.txt"]);
    assert!(out.contains("(confidence 0.667)"), "{out}");
    numbers(&tmp.path().join("f.txt"), spread(10.0, 0.1, 5));
    numbers(&tmp.path().join("g.txt"), spread(20.0, 0.1, 5));
    let out = ok(tmp.path(), &["f.txt", "g.txt"]);
    assert!(
        out.contains("(confidence 0.968)") && !out.contains("no 95 %"),
        "{out}"
    );
}

#[test]
fn item9_underflowing_p_prints_a_bound() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), (0..1000).map(|i| i as f64));
    numbers(
        &tmp.path().join("b.txt"),
        (0..1000).map(|i| 5000.0 + i as f64),
    );
    let out = ok(tmp.path(), &["a.txt", "b.txt", "--resamples", "100"]);
    assert!(out.contains("p < 1e-300"), "{out}");
    assert!(!out.contains("p 0.0e0"), "{out}");
}

fn probe_run(path: &Path, boot: &str, reads: &[f64]) {
    let doc = serde_json::json!({"kind": "probe", "version": 1, "boot_id": boot,
        "results": [{"metric": "proc_interrupts_open_4k_wall_ns", "unit": "ns",
                     "direction": "lower", "values": reads}]});
    fs::write(path, doc.to_string()).unwrap();
}

/// Reads of one run: a noisy sample whose level is the run's own.
fn reads(level: f64, n: usize, k: usize) -> Vec<f64> {
    (0..n)
        .map(|i| level + ((i * 37 + k * 11) % 97) as f64 * 3.0)
        .collect()
}

/// Two runs' results joined in one probe file (a metric twice) would be
/// two trials of one run: refused, naming the file and both results.
#[test]
fn a_metric_twice_in_one_probe_run_is_refused_not_two_trials() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    probe_run(&d.join("a.json"), "b1", &reads(50_000.0, 100, 0));
    probe_run(&d.join("b.json"), "b1", &reads(50_000.0, 100, 3));
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("b.json")).unwrap()).unwrap();
    let r = doc["results"][0].clone();
    doc["results"].as_array_mut().unwrap().push(r);
    fs::write(d.join("b.json"), doc.to_string()).unwrap();
    let e = common::compare::err(d, &["a.json", "b.json"]);
    assert!(
        e.contains("b.json: result 2: metric proc_interrupts_open_4k_wall_ns is already result 1"),
        "{e}"
    );
}

#[test]
fn issue10_item14_probe_runs_are_one_trial_each() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    probe_run(&d.join("aa1.json"), "b1", &reads(50_000.0, 1000, 0));
    probe_run(&d.join("aa2.json"), "b1", &reads(50_000.0, 1000, 3));
    let out = ok(d, &["aa1.json", "aa2.json"]);
    assert!(
        out.contains("refused: fewer than 2 values on a side (aa1 1, aa2 1)"),
        "{out}"
    );
    assert!(out.contains("a probe run is one trial"), "{out}");
    assert!(
        !out.contains("improved") && !out.contains("regressed"),
        "{out}"
    );
    assert!(!out.contains(": changed"), "{out}");
    // directories of runs: one trial per file, an A/A claims nothing
    for (dir, shift) in [("runs_a", 0.0), ("runs_b", 0.0)] {
        fs::create_dir_all(d.join(dir)).unwrap();
        for k in 0..6 {
            let level = 50_000.0 + shift + ((k * 7) % 5) as f64 * 40.0;
            probe_run(
                &d.join(dir).join(format!("run{k}.json")),
                "b1",
                &reads(level, 500, k),
            );
        }
    }
    let doc = json(d, &["runs_a", "runs_b"]);
    for m in doc["metrics"].as_array().unwrap() {
        assert_eq!(m["describe"]["runs_a"]["count"], 6.0, "{m}");
        assert_eq!(m["comparisons"][0]["verdict"], "~", "{m}");
    }
    let notes = doc["notes"].to_string();
    assert!(!notes.contains("probe run is one trial"), "{notes}");
}

/// The one-trial note is for a variant that has one probe run only, not
/// for every file of a variant given several.
#[test]
fn the_probe_run_note_is_for_variants_of_one_run_only() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    for k in 0..3 {
        let level = 50_000.0 + k as f64 * 40.0;
        probe_run(&d.join(format!("p_a{k}.json")), "b1", &reads(level, 300, k));
        probe_run(
            &d.join(format!("p_b{k}.json")),
            "b1",
            &reads(level, 300, k + 5),
        );
    }
    let three = ["a=p_a0.json", "a=p_a1.json", "a=p_a2.json"];
    let mut args = three.to_vec();
    args.extend(["b=p_b0.json", "b=p_b1.json", "b=p_b2.json"]);
    let notes = json(d, &args)["notes"].to_string();
    assert!(!notes.contains("probe run is one trial"), "{notes}");
    let mut args = three.to_vec();
    args.push("b=p_b0.json");
    let notes = json(d, &args)["notes"].to_string();
    assert_eq!(
        notes.matches("probe run is one trial").count(),
        1,
        "{notes}"
    );
    assert!(
        notes.contains("p_b0.json: a probe run is one trial") && notes.contains("variant b"),
        "{notes}"
    );
}

/// Direction by name is decided only for known cost families: a rate per
/// µs, a hit ratio and an idle share going up are not regressions, and a
/// bare `--direction higher` applies to all of them.
#[test]
fn direction_by_name_is_narrow_and_a_bare_direction_applies_to_all() {
    let tmp = TempDir::new().unwrap();
    let mut csv = String::from("variant,ops_per_us,cache_hit_pct,idle_pct,wake_us\n");
    for i in 0..10 {
        let v = 100.0 + (i % 5) as f64 * 0.1;
        let w = v * 1.05;
        csv.push_str(&format!("tip,{v},{v},{v},{v}\n"));
        csv.push_str(&format!("patch,{w},{w},{w},{w}\n"));
    }
    fs::write(tmp.path().join("r.csv"), csv).unwrap();
    let verdicts = |doc: &Value| -> Vec<String> {
        doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["comparisons"][0]["verdict"].as_str().unwrap().to_string())
            .collect()
    };
    let v = verdicts(&json(tmp.path(), &["r.csv"]));
    assert_eq!(v, ["changed", "changed", "changed", "regressed"]);
    let v = verdicts(&json(tmp.path(), &["r.csv", "--direction", "higher"]));
    assert_eq!(v, ["improved"; 4]);
}

/// A bare `--direction` fills in what nobody stated: it never turns a
/// direction a bench result states for its own metric, and where every
/// metric has one it would be ignored, so it is refused (exit 2).
#[test]
fn a_bare_direction_never_overrides_what_a_bench_result_states() {
    let tmp = TempDir::new().unwrap();
    bench_run(&tmp.path().join("b1"), "tip", 1000.0);
    bench_run(&tmp.path().join("b2"), "patch", 1100.0);
    usage(
        tmp.path(),
        &["b1", "b2", "--direction", "higher"],
        &[
            "--direction higher: every metric already has a direction",
            "--direction METRIC=higher",
        ],
    );
    // beside a plain file's metric it applies to that one only
    numbers(&tmp.path().join("c.txt"), spread(1050.0, 1.0, 8));
    let doc = json(
        tmp.path(),
        &[
            "b1",
            "b2",
            "c.txt",
            "--metric",
            "x_per_sec",
            "--direction",
            "higher",
        ],
    );
    let dir = |name: &str| {
        let ms = doc["metrics"].as_array().unwrap();
        ms.iter().find(|m| m["name"] == name).unwrap()["direction"].clone()
    };
    assert_eq!(dir("irq_res_per_sec"), "none", "{doc}");
    assert_eq!(dir("x_per_sec"), "higher", "{doc}");
    let doc = json(
        tmp.path(),
        &["b1", "b2", "--direction", "irq_res_per_sec=higher"],
    );
    assert_eq!(doc["metrics"][0]["direction"], "higher");
}

/// `irqlab probe --root TREE --format json --out OUT` on a fake tree.
fn probe_fake(tree: &Path, out: &Path) {
    common::irqlab()
        .args([
            "probe", "--reads", "5", "--buffer", "4k", "--format", "json",
        ])
        .arg("--root")
        .arg(tree)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

/// A copy of probe run `from` as a run on the live host records it: no
/// `--root` in its command, the host's kernel and name.
fn as_live_run(from: &Path, to: &Path) {
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(from).unwrap()).unwrap();
    let env = &mut doc["env"];
    env["kernel"] = "6.1.0".into();
    env["machine"]["kernel_release"] = "6.1.0".into();
    env["machine"]["hostname"] = "host42".into();
    env["machine"]["command"] = serde_json::json!(["irqlab", "probe", "--format", "json"]);
    env["root"] = "/".into();
    fs::write(to, doc.to_string()).unwrap();
}

/// Probe runs of a fake tree and of the live host are never pooled under
/// one label, nor in one directory of runs: a usage error names both
/// files and what differs. Runs of the same tree still pool.
#[test]
fn probe_runs_of_a_fake_tree_and_the_live_host_are_never_pooled() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let tree = common::synth_tree(&common::spec(4, 8));
    for k in 1..=3 {
        probe_fake(tree.path(), &d.join(format!("fake{k}.json")));
    }
    as_live_run(&d.join("fake3.json"), &d.join("live1.json"));
    as_live_run(&d.join("fake2.json"), &d.join("live2.json"));
    let root = fs::canonicalize(tree.path()).unwrap().display().to_string();
    let e = usage(
        d,
        &[
            "a=live1.json",
            "a=fake1.json",
            "b=live2.json",
            "b=fake2.json",
        ],
        &[
            &format!("root (/ vs {root})"),
            "kernel (6.1.0 vs unknown)",
            "hostname (host42 vs unknown)",
            "live1.json and fake1.json",
        ],
    );
    assert!(
        e.starts_with("irqlab: error: a= pools runs that differ in "),
        "{e}"
    );
    fs::create_dir_all(d.join("runs")).unwrap();
    for f in ["fake1.json", "live1.json"] {
        fs::copy(d.join(f), d.join("runs").join(f)).unwrap();
    }
    usage(
        d,
        &["runs", "b=live2.json", "b=fake2.json"],
        &[
            "runs: pools probe runs that differ in root",
            "runs/fake1.json and runs/live1.json",
        ],
    );
    // Runs of one tree pool as before.
    let doc = json(
        d,
        &[
            "a=fake1.json",
            "a=fake2.json",
            "b=live1.json",
            "b=live2.json",
        ],
    );
    assert_eq!(doc["variants"], serde_json::json!(["a", "b"]), "{doc}");
}

/// `irqlab probe --root ROOT` run in `cwd` (ROOT as typed), JSON to `out`.
fn probe_in(cwd: &Path, root: &str, out: &Path) {
    common::irqlab()
        .current_dir(cwd)
        .args([
            "probe", "--reads", "5", "--buffer", "4k", "--format", "json",
        ])
        .args(["--root", root])
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

/// A probe run records the tree it read absolute and canonical, so the
/// same tree typed `./t`, `t` or `t/` pools, and the same name typed in
/// two working directories (two trees) does not.
#[test]
fn probe_runs_are_told_apart_by_the_tree_read_not_by_the_root_as_typed() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    for cwd in ["one", "two"] {
        common::synth_into(&common::spec(4, 8), &d.join(cwd).join("t"));
    }
    fs::create_dir_all(d.join("same")).unwrap();
    fs::create_dir_all(d.join("mixed")).unwrap();
    probe_in(&d.join("one"), "./t", &d.join("same/a.json"));
    probe_in(&d.join("one"), "t", &d.join("same/b.json"));
    probe_in(&d.join("one"), "t/", &d.join("c.json"));
    probe_in(&d.join("one"), "t", &d.join("mixed/a.json"));
    probe_in(&d.join("two"), "t", &d.join("mixed/b.json"));
    let tree = fs::canonicalize(d.join("one/t")).unwrap();
    let doc: Value = serde_json::from_str(&fs::read_to_string(d.join("c.json")).unwrap()).unwrap();
    assert_eq!(doc["env"]["root"], tree.display().to_string());
    let doc = json(d, &["same", "c.json"]);
    assert_eq!(doc["variants"], serde_json::json!(["same", "c"]), "{doc}");
    let doc = json(d, &["x=same/a.json", "x=same/b.json", "c.json"]);
    assert_eq!(doc["variants"], serde_json::json!(["x", "c"]), "{doc}");
    let other = fs::canonicalize(d.join("two/t")).unwrap();
    usage(
        d,
        &["mixed", "c.json"],
        &[
            "mixed: pools probe runs that differ in root",
            &format!("root ({} vs {})", tree.display(), other.display()),
        ],
    );
}

/// Runs of an older irqlab record no root, only their command line: the
/// root typed there is compared without `.` components (`./t` is `t`),
/// and runs pooled by a relative one are flagged, since the working
/// directory it was typed in is unknown.
#[test]
fn older_probe_runs_pool_by_their_typed_root_with_a_warning() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    common::synth_into(&common::spec(4, 8), &d.join("t"));
    fs::create_dir_all(d.join("old")).unwrap();
    for (name, typed) in [("a", "./t"), ("b", "t/"), ("c", "t"), ("e", "t")] {
        let file = d.join(format!("old/{name}.json"));
        probe_in(d, typed, &file);
        let mut doc: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
        doc["env"].as_object_mut().unwrap().remove("root");
        fs::write(&file, doc.to_string()).unwrap();
    }
    fs::rename(d.join("old/c.json"), d.join("c.json")).unwrap();
    fs::rename(d.join("old/e.json"), d.join("e.json")).unwrap();
    let warned = |doc: &Value, want: &str| {
        let w = doc["notes"].as_array().unwrap();
        assert!(
            w.iter().any(|w| w.as_str().unwrap().contains(want)),
            "{w:?}"
        );
    };
    let doc = json(d, &["old", "c.json"]);
    assert_eq!(doc["variants"], serde_json::json!(["old", "c"]), "{doc}");
    warned(
        &doc,
        "old: pools probe runs by the root their command lines typed (t, relative): these \
         runs do not record their working directory",
    );
    let doc = json(d, &["x=old/a.json", "x=c.json", "y=old/b.json", "y=e.json"]);
    assert_eq!(doc["variants"], serde_json::json!(["x", "y"]), "{doc}");
    warned(
        &doc,
        "x= pools runs by the root their command lines typed (t, relative)",
    );
}

#[test]
fn a_directory_of_subdirectories_is_not_called_empty() {
    // a fake host tree: proc/ and sys/, no result file anywhere
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("num.txt"), spread(100.0, 1.0, 10));
    fs::create_dir_all(d.join("tree/proc/irq/0")).unwrap();
    fs::create_dir_all(d.join("tree/sys/kernel")).unwrap();
    fs::write(d.join("tree/.hidden"), "1\n").unwrap();
    let e = err(d, &["num.txt", "tree"]);
    assert!(!e.contains("empty directory"), "{e}");
    assert!(
        e.contains("tree: holds no result file compare reads"),
        "{e}"
    );
    assert!(
        e.contains("trials.jsonl at any depth, or else one file per iteration directly in it"),
        "{e}"
    );
    assert!(
        e.contains("found only 2 subdirectories and 1 hidden or non-regular file"),
        "{e}"
    );
}

#[test]
fn an_unterminated_last_line_of_several_values_gets_a_note() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("b.txt"), spread(110.0, 1.0, 10));
    let torn = "a.txt:3: the last line has no newline; its value \"12\" is read as it stands";
    let cases = [
        ("100\n101\n12", true),
        ("100\n101\n102\n", false),
        ("100\n101\n# end", false),
        ("100\n101\n   ", false),
    ];
    for (text, noted) in cases {
        fs::write(d.join("a.txt"), text).unwrap();
        let notes = note_lines(&json(d, &["a.txt", "b.txt"]));
        assert_eq!(notes.contains(torn), noted, "{text:?}: {notes}");
        assert_eq!(notes.contains("no newline"), noted, "{text:?}: {notes}");
    }
    // one value without a newline (`printf %s`) is a whole file
    fs::write(d.join("a.txt"), "100").unwrap();
    let notes = note_lines(&json(d, &["a.txt", "b.txt"]));
    assert!(!notes.contains("no newline"), "{notes}");
    // a user CSV of several rows: the row is kept, with the note
    fs::write(d.join("t.csv"), "variant,ms\nx,1\nx,2\ny,3\ny,4").unwrap();
    let doc = json(d, &["t.csv"]);
    let notes = note_lines(&doc);
    assert!(
        notes.contains("t.csv:5: the last line has no newline; its row \"y,4\""),
        "{notes}"
    );
    assert_eq!(doc["metrics"][0]["describe"]["y"]["count"], 2.0, "{doc}");
}

/// A comparison's notes, one a line.
fn note_lines(doc: &Value) -> String {
    let notes = doc["notes"].as_array().unwrap().iter();
    notes
        .map(|n| n.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_byte_order_mark_is_skipped_in_plain_json_and_per_iteration_files() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let bom = "\u{feff}";
    fs::write(d.join("a.txt"), format!("{bom}1\n2\n3\n")).unwrap();
    fs::write(d.join("b.txt"), "4\n5\n6\n").unwrap();
    let doc = json(d, &["a.txt", "b.txt"]);
    assert_eq!(doc["metrics"][0]["describe"]["a"]["mean"], 2.0, "{doc}");
    let rows = r#"[{"variant":"x","m":1},{"variant":"x","m":2},{"variant":"y","m":3},{"variant":"y","m":4}]"#;
    fs::write(d.join("t.json"), format!("{bom}{rows}")).unwrap();
    let doc = json(d, &["t.json"]);
    assert_eq!(doc["metrics"][0]["describe"]["y"]["mean"], 3.5, "{doc}");
    fs::create_dir_all(d.join("it")).unwrap();
    fs::write(d.join("it/1"), format!("{bom}7")).unwrap();
    fs::write(d.join("it/2"), "8").unwrap();
    let doc = json(d, &["it", "b.txt"]);
    assert_eq!(doc["metrics"][0]["describe"]["it"]["mean"], 7.5, "{doc}");
}

/// Trials files named without a directory (`compare a.jsonl b.jsonl`, run
/// in their directory) belong to the run in the current directory: read
/// as `./a.jsonl` is, not an error about an empty path.
#[test]
fn trials_files_named_without_a_directory_are_read() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    for (name, centre) in [("a", 1000.0), ("b", 1100.0)] {
        let lines: Vec<String> = spread(centre, 1.0, 8)
            .iter()
            .enumerate()
            .map(|(i, v)| trial(name, i, *v) + "\n")
            .collect();
        fs::write(d.join(format!("{name}.jsonl")), lines.concat()).unwrap();
    }
    let bare = json(d, &["a.jsonl", "b.jsonl"]);
    assert_eq!(bare["variants"], serde_json::json!(["a", "b"]), "{bare}");
    let dotted = json(d, &["./a.jsonl", "./b.jsonl"]);
    assert_eq!(bare["metrics"], dotted["metrics"]);
}
