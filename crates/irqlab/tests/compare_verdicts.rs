//! Regression tests of `irqlab compare` verdicts built from reproductions:
//! runs of different workloads never pooled, metrics missing on a side,
//! usage errors, huge values, the sign of a verdict at a baseline centre
//! of 0, malformed Δmean intervals, ties at tiny n, the p floor in every
//! format, runs and boots as the unit of replication, the family of
//! metrics and the smallest detectable change.
#![allow(clippy::unwrap_used)]

mod common;
use common::compare::{json, numbers, ok, usage};
use serde_json::Value;
use std::fs;
use std::path::Path;
use tempfile::TempDir;

/// One bench run directory as bench writes it: `plan.json` and
/// `<variant>/trials.jsonl`, `values` per metric, one boot.
fn bench_run(dir: &Path, workload: &str, variant: &str, boot: &str, metrics: &[(&str, Vec<f64>)]) {
    let vdir = dir.join(variant);
    fs::create_dir_all(&vdir).unwrap();
    let plan = serde_json::json!({"argv": ["irqlab", "bench"], "variants": [variant],
        "workloads": [workload], "trials": metrics[0].1.len(), "warmup": 0, "duration_s": 2.0,
        "order": "alternate", "seed": 1, "created_at": "t"});
    fs::write(dir.join("plan.json"), plan.to_string()).unwrap();
    let mut lines = String::new();
    for t in 0..metrics[0].1.len() {
        let m: serde_json::Map<String, Value> = metrics
            .iter()
            .map(|(name, v)| {
                (
                    name.to_string(),
                    serde_json::json!({"value": v[t], "unit": "1/s", "direction": "higher"}),
                )
            })
            .collect();
        let rec = serde_json::json!({"schema": 2, "variant": variant, "trial": t + 1,
            "boot_id": boot, "started_at": "t", "duration_s": 2.0, "metrics": m});
        lines.push_str(&format!("{rec}\n"));
    }
    fs::write(vdir.join("trials.jsonl"), lines).unwrap();
}

fn around(centre: f64, n: usize) -> Vec<f64> {
    common::compare::spread(centre, centre * 0.002, n)
}

fn metric<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name}: {doc}"))
}

#[test]
fn runs_of_different_workloads_sharing_a_label_are_never_pooled() {
    let tmp = TempDir::new().unwrap();
    let mix = tmp.path().join("mix");
    let shared = |c: f64| ("softirq_timer_per_sec", around(c, 3));
    bench_run(
        &mix.join("ipi"),
        "ipi",
        "tip",
        "b1",
        &[shared(100.0), ("round_trips_per_sec", around(5e4, 3))],
    );
    bench_run(
        &mix.join("timer"),
        "timer",
        "tip",
        "b1",
        &[shared(250.0), ("wakeups_per_sec", around(900.0, 3))],
    );
    let doc = json(tmp.path(), &["mix", "--mixed-workloads"]);
    let labels: Vec<&str> = doc["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(labels, ["tip@ipi", "tip@timer"], "{doc}");
    let m = metric(&doc, "softirq_timer_per_sec");
    for l in &labels {
        assert_eq!(m["describe"][l]["count"], 3.0, "{m}");
    }
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("differ in workload (ipi vs timer)"),
        "{notes}"
    );
    // Pooling them explicitly is a usage error naming both inputs.
    bench_run(
        &tmp.path().join("ipi2"),
        "ipi",
        "tip",
        "b1",
        &[shared(100.0), ("round_trips_per_sec", around(5e4, 3))],
    );
    usage(
        tmp.path(),
        &["a=mix/ipi", "a=mix/timer", "b=ipi2", "--format", "json"],
        &["a= pools runs that differ in workload (ipi vs timer): mix/ipi and mix/timer"],
    );
}

/// Bench runs of one workload, one reading a fake tree (`bench --root`)
/// and one the live host (their `env.json`), are never pooled: refused
/// under one `LABEL=` (exit 2, naming both runs), kept apart as
/// `label@run` variants with a note inside one directory.
#[test]
fn bench_runs_of_a_fake_tree_and_the_live_host_are_never_pooled() {
    let tmp = TempDir::new().unwrap();
    let runs = tmp.path().join("runs");
    let env = |dir: &str, root: Option<&str>, kernel: Option<&str>| {
        let mut command = vec!["irqlab", "bench"];
        command.extend(root.iter().flat_map(|r| ["--root", r]));
        let env = serde_json::json!({"command": command, "kernel_release": kernel,
            "hostname": kernel.map(|_| "host42"), "cpu_model": kernel.map(|_| "EPYC"),
            "boot_id": "b1", "warnings": []});
        fs::write(runs.join(dir).join("env.json"), env.to_string()).unwrap();
    };
    let metrics = |c: f64| vec![("round_trips_per_sec", around(c, 5))];
    bench_run(&runs.join("live"), "ipi", "tip", "b1", &metrics(5e4));
    bench_run(&runs.join("live2"), "ipi", "tip", "b2", &metrics(5e4));
    bench_run(&runs.join("fake"), "ipi", "tip", "b1", &metrics(1e4));
    env("live", None, Some("6.1.0"));
    env("live2", None, Some("6.1.0"));
    env("fake", Some("/tmp/tree"), None);
    usage(
        tmp.path(),
        &[
            "a=runs/live",
            "a=runs/fake",
            "b=runs/live2",
            "--format",
            "json",
        ],
        &[
            "a= pools runs that differ in root (/ vs /tmp/tree), kernel (6.1.0 vs unknown)",
            "runs/live and runs/fake",
        ],
    );
    let doc = json(tmp.path(), &["runs"]);
    assert_eq!(
        doc["variants"],
        serde_json::json!(["tip@fake", "tip@live", "tip@live2"]),
        "{doc}"
    );
    assert!(
        doc["notes"]
            .to_string()
            .contains("differ in root (/tmp/tree vs /)"),
        "{doc}"
    );
    // Two live runs of one machine pool as before.
    bench_run(&tmp.path().join("live3"), "ipi", "tip", "b3", &metrics(5e4));
    fs::copy(
        runs.join("live/env.json"),
        tmp.path().join("live3/env.json"),
    )
    .unwrap();
    let doc = json(tmp.path(), &["a=runs/live", "a=runs/live2", "b=live3"]);
    assert_eq!(doc["variants"], serde_json::json!(["a", "b"]), "{doc}");
}

/// Bench runs are told apart by the tree their `env.json` records
/// (`root`, absolute): `--root t` typed in two directories is two trees,
/// kept apart. Older runs without it pool by the root their command line
/// typed, `./t` as `t`, with a note that the working directory is unknown.
#[test]
fn bench_runs_are_told_apart_by_the_recorded_tree_not_the_typed_root() {
    let tmp = TempDir::new().unwrap();
    let env = |dir: &Path, typed: &str, root: Option<&str>| {
        let mut env = serde_json::json!({"command": ["irqlab", "bench", "--root", typed],
            "kernel_release": "6.1.0", "boot_id": "b1", "warnings": []});
        if let Some(r) = root {
            env["root"] = r.into();
        }
        fs::write(dir.join("env.json"), env.to_string()).unwrap();
    };
    let metrics = |c: f64| vec![("round_trips_per_sec", around(c, 5))];
    for (i, (run, typed, root)) in [
        ("new/one", "t", Some("/w/one/t")),
        ("new/two", "t", Some("/w/two/t")),
        ("old/one", "./t", None),
        ("old/two", "t/", None),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tmp.path().join(run);
        // four runs, not copies of one: their values differ
        bench_run(&dir, "ipi", "tip", "b1", &metrics(5e4 + i as f64));
        env(&dir, typed, root);
    }
    let doc = json(tmp.path(), &["new"]);
    assert_eq!(
        doc["variants"],
        serde_json::json!(["tip@one", "tip@two"]),
        "{doc}"
    );
    assert!(
        doc["notes"]
            .to_string()
            .contains("differ in root (/w/one/t vs /w/two/t)"),
        "{doc}"
    );
    let doc = json(tmp.path(), &["a=old", "b=new/one"]);
    assert_eq!(doc["variants"], serde_json::json!(["a", "b"]), "{doc}");
    let typed = "variant \"tip\" pools runs by the root their command lines typed (t, relative)";
    assert!(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(typed)),
        "{doc}"
    );
}

/// Two bench runs of different workloads are not variants of one
/// experiment: refused (exit 2) naming both workloads, whichever is the
/// baseline, also when one directory splits into `label@run` variants;
/// `--mixed-workloads` compares them with a note.
#[test]
fn variants_of_different_workloads_are_refused_unless_asked() {
    let tmp = TempDir::new().unwrap();
    let shared = |c: f64| vec![("softirq_timer_per_sec", around(c, 5))];
    bench_run(&tmp.path().join("a"), "ipi", "a", "b1", &shared(100.0));
    bench_run(&tmp.path().join("b"), "timer", "b", "b1", &shared(250.0));
    bench_run(&tmp.path().join("c"), "ipi", "c", "b1", &shared(100.0));
    let refused = |args: &[&str], want: &str| {
        let e = usage(tmp.path(), args, &[want, "--mixed-workloads"]);
        assert!(e.starts_with("irqlab: error: "), "{e}");
    };
    refused(
        &["a", "b"],
        "variant b ran workload timer, the baseline a ran ipi",
    );
    refused(
        &["a", "b", "--baseline", "b"],
        "variant a ran workload ipi, the baseline b ran timer",
    );
    refused(
        &["a", "c", "b"],
        "variant b ran workload timer, the baseline a ran ipi",
    );
    fs::create_dir_all(tmp.path().join("mix")).unwrap();
    bench_run(
        &tmp.path().join("mix/ipi"),
        "ipi",
        "tip",
        "b1",
        &shared(1.0),
    );
    bench_run(
        &tmp.path().join("mix/timer"),
        "timer",
        "tip",
        "b1",
        &shared(2.0),
    );
    refused(&["mix"], "variant tip@timer ran workload timer");
    // Runs of one workload compare as before; asked for, two workloads too.
    let doc = json(tmp.path(), &["a", "c"]);
    assert_eq!(doc["variants"], serde_json::json!(["a", "c"]), "{doc}");
    let doc = json(tmp.path(), &["a", "b", "--mixed-workloads"]);
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("variant b ran workload timer, the baseline a ran ipi: compared as asked"),
        "{notes}"
    );
    // with nothing to mix it would be ignored: refused, saying why
    usage(
        tmp.path(),
        &["a", "c", "--mixed-workloads"],
        &["--mixed-workloads: every variant that records a workload ran ipi, as the baseline a did"],
    );
    numbers(&tmp.path().join("x.txt"), [1.0, 2.0, 3.0]);
    numbers(&tmp.path().join("y.txt"), [2.0, 3.0, 4.0]);
    usage(
        tmp.path(),
        &["x.txt", "y.txt", "--mixed-workloads"],
        &["--mixed-workloads: the baseline x records no workload"],
    );
}

#[test]
fn a_metric_present_in_one_run_only_is_listed_as_missing_in_every_format() {
    let tmp = TempDir::new().unwrap();
    bench_run(
        &tmp.path().join("ipi"),
        "ipi",
        "ipi",
        "b1",
        &[
            ("round_trips_per_sec", around(5e4, 5)),
            ("x_per_sec", around(10.0, 5)),
        ],
    );
    // One workload (a metric such as a traced one only in one run).
    bench_run(
        &tmp.path().join("timer"),
        "ipi",
        "timer",
        "b1",
        &[
            ("wakeups_per_sec", around(900.0, 5)),
            ("x_per_sec", around(10.0, 5)),
        ],
    );
    let text = ok(
        tmp.path(),
        &["ipi", "timer", "--format", "text", "--resamples", "200"],
    );
    assert!(text.contains("Missing on one side:"), "{text}");
    assert!(
        text.contains("round_trips_per_sec: missing in timer"),
        "{text}"
    );
    assert!(
        text.contains("wakeups_per_sec: missing in the baseline ipi"),
        "{text}"
    );
    let quiet = text
        .lines()
        .find(|l| l.starts_with("No significant change"))
        .unwrap_or("");
    assert!(
        !quiet.contains("round_trips") && !quiet.contains("wakeups"),
        "{text}"
    );
    assert!(!text.contains("Changed (vs"), "{text}");
    // x_per_sec is in both, one run a side: said once, not per metric.
    assert!(
        text.contains("One run a side: between-run variation is unseen"),
        "{text}"
    );
    for format in ["table", "markdown", "csv"] {
        let out = ok(
            tmp.path(),
            &["ipi", "timer", "--format", format, "--resamples", "200"],
        );
        assert!(out.contains("missing in timer"), "{format}: {out}");
        assert!(
            out.contains("missing in the baseline ipi"),
            "{format}: {out}"
        );
    }
    let doc = json(tmp.path(), &["ipi", "timer"]);
    let c = &metric(&doc, "wakeups_per_sec")["comparisons"][0];
    assert_eq!(
        (c["missing"].as_bool(), c["verdict"].is_null()),
        (Some(true), true),
        "{c}"
    );
    let html = tmp.path().join("r.html");
    ok(
        tmp.path(),
        &[
            "ipi",
            "timer",
            "--resamples",
            "200",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert!(fs::read_to_string(&html)
        .unwrap()
        .contains("missing in timer"));
}

#[test]
fn out_of_range_flags_and_unknown_direction_metrics_are_usage_errors() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [1.0, 2.0, 3.0]);
    numbers(&tmp.path().join("b.txt"), [1.5, 2.5, 3.5]);
    for bad in [
        ["--alpha", "2"],
        ["--resamples", "0"],
        ["--alpha", "0"],
        ["--noise", "-1"],
    ] {
        let mut args = vec!["a.txt", "b.txt"];
        args.extend(bad);
        usage(tmp.path(), &args, &[]);
    }
    usage(
        tmp.path(),
        &["a.txt", "b.txt", "--direction", "typo=lower"],
        &["no metric \"typo\"", "they have: value"],
    );
}

/// One metric given two directions is refused (the flags' order would
/// pick which way is better); given the same direction twice it is one
/// rule.
#[test]
fn one_metric_with_two_directions_is_a_usage_error() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [1.0, 2.0, 3.0]);
    numbers(&tmp.path().join("b.txt"), [1.5, 2.5, 3.5]);
    for (first, second) in [("lower", "higher"), ("higher", "none")] {
        let e = usage(
            tmp.path(),
            &[
                "a.txt",
                "b.txt",
                "--direction",
                &format!("value={first}"),
                "--direction",
                &format!("value={second}"),
            ],
            &[],
        );
        assert_eq!(
            e,
            format!(
                "irqlab: error: --direction value={second}: value was given \
                 {first} already; give each metric one direction\n"
            )
        );
    }
    let args = ["a.txt", "b.txt", "--direction", "value=lower"];
    let twice = [&args[..], &args[2..]].concat();
    let doc = json(tmp.path(), &twice);
    assert_eq!(doc["metrics"][0]["direction"], "lower", "{doc}");
}

/// `--noise 2%` is `--noise 2`: the gate is a percent either way.
#[test]
fn noise_takes_its_percent_sign() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [1.0, 2.0, 3.0]);
    numbers(&tmp.path().join("b.txt"), [1.5, 2.5, 3.5]);
    for noise in ["2.5", "2.5%"] {
        let doc = json(tmp.path(), &["a.txt", "b.txt", "--noise", noise]);
        assert_eq!(doc["settings"]["noise_pct"], 2.5, "{noise}: {doc}");
    }
    usage(
        tmp.path(),
        &["a.txt", "b.txt", "--noise", "x%"],
        &["expected a percent of 0 or more, such as 1 or 2.5%, found \"x%\""],
    );
}

#[test]
fn huge_values_give_finite_tests_and_no_false_zero_centre() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [1.0, 2.0, 3.0, 2.0, 2.0]);
    numbers(
        &tmp.path().join("b.txt"),
        [1e308, 1.1e308, 1.2e308, 1.3e308, 1.05e308],
    );
    let out = ok(tmp.path(), &["a.txt", "b.txt", "--resamples", "200"]);
    assert!(!out.contains("NaN"), "{out}");
    assert!(
        !out.contains("baseline centre is 0") && !out.contains("is 0)"),
        "{out}"
    );
    assert!(out.contains("Welch t +"), "{out}");
    let doc = json(tmp.path(), &["a.txt", "b.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert!(c["welch"]["p"].as_f64().unwrap() < 0.01, "{c}");
    assert!(
        doc["metrics"][0]["describe"]["b"]["mean"].as_f64().unwrap() > 1e308,
        "{doc}"
    );
}

#[test]
fn a_zero_baseline_median_takes_the_verdict_from_the_hl_sign_not_the_mean() {
    let tmp = TempDir::new().unwrap();
    // Baseline near 0 with one outlier (mean 6, median 0); B about 3 lower
    // than A's bulk would be... B is lower than A: HL negative.
    numbers(
        &tmp.path().join("A.txt"),
        [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 60.0],
    );
    numbers(
        &tmp.path().join("B.txt"),
        [-3.0, -3.5, -2.5, -3.0, -4.0, -3.2, -2.8, -3.1, -3.3, -2.9],
    );
    let doc = json(tmp.path(), &["A=A.txt", "B=B.txt", "--direction", "higher"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert!(c["hodges_lehmann"]["shift"].as_f64().unwrap() < 0.0, "{c}");
    assert_eq!(c["verdict"], "regressed", "{c}");
    let text = ok(
        tmp.path(),
        &[
            "A=A.txt",
            "B=B.txt",
            "--direction",
            "higher",
            "--format",
            "text",
        ],
    );
    assert!(text.contains("value (B): -3"), "{text}");
    assert!(!text.contains("improved"), "{text}");
}

#[test]
fn a_mean_interval_never_excludes_its_estimate_nor_has_a_missing_bound() {
    let tmp = TempDir::new().unwrap();
    numbers(
        &tmp.path().join("a.txt"),
        [-50.0, 60.0, -40.0, 45.0, 1.0, -30.0, 20.0, 0.5],
    );
    numbers(
        &tmp.path().join("b.txt"),
        [100.0, 120.0, 90.0, 130.0, 110.0, 95.0, 105.0, 115.0],
    );
    let doc = json(tmp.path(), &["a.txt", "b.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    let mean = &c["mean_change_pct"];
    if mean.is_null() {
        assert!(c["mean_note"].as_str().unwrap().contains("0"), "{c}");
    } else {
        let (e, lo, hi) = (
            mean["estimate"].as_f64(),
            mean["lo"].as_f64(),
            mean["hi"].as_f64(),
        );
        let (e, lo, hi) = (e.unwrap(), lo.unwrap(), hi.unwrap());
        assert!(lo <= e && e <= hi && hi.abs() < 1e6, "{mean}");
    }
    let text = ok(tmp.path(), &["a.txt", "b.txt", "--format", "text", "--all"]);
    assert!(
        text.contains("Δmean   - (undefined: baseline mean within 2 standard errors of 0)"),
        "{text}"
    );
}

#[test]
fn tied_three_vs_three_gets_no_verdict_and_says_why_in_every_format() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [100.0, 100.0, 100.0]);
    numbers(&tmp.path().join("b.txt"), [110.0, 110.0, 110.0]);
    let args = ["a.txt", "b.txt", "--direction", "higher"];
    let doc = json(tmp.path(), &args);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert!(
        (c["mann_whitney"]["p"].as_f64().unwrap() - 0.1).abs() < 1e-12,
        "{c}"
    );
    assert_eq!(c["mann_whitney"]["method"], "exact_ties");
    assert_eq!(c["verdict"], "~");
    assert!((c["p_floor"].as_f64().unwrap() - 0.1).abs() < 1e-12, "{c}");
    assert!(
        c["notes"][0]
            .as_str()
            .unwrap()
            .contains("smallest possible p is 0.1"),
        "{c}"
    );
    // 3 vs 3 at +500 %, no ties: the p floor is said in every format.
    numbers(&tmp.path().join("c.txt"), [100.0, 101.0, 102.0]);
    numbers(&tmp.path().join("d.txt"), [600.0, 610.0, 605.0]);
    for format in ["text", "table", "markdown", "csv", "json"] {
        let out = if format == "json" {
            json(tmp.path(), &["c.txt", "d.txt"]).to_string()
        } else {
            ok(
                tmp.path(),
                &["c.txt", "d.txt", "--format", format, "--resamples", "200"],
            )
        };
        assert!(
            out.contains("smallest possible p is 0.1"),
            "{format}: {out}"
        );
        if format == "text" {
            assert!(out.contains("No verdict possible:"), "{out}");
            assert!(!out.contains("No metric changed significantly"), "{out}");
        }
    }
}

#[test]
fn when_every_comparison_is_refused_text_says_so_without_an_empty_list() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("old.txt"), [5.0]);
    numbers(&tmp.path().join("new.txt"), [6.0]);
    let out = ok(tmp.path(), &["old.txt", "new.txt", "--format", "text"]);
    assert!(!out.contains("Changed (vs"), "{out}");
    assert!(out.contains("No metric could be tested."), "{out}");
    assert!(
        out.contains("Not tested:\n  value (new): refused: fewer than 2"),
        "{out}"
    );
    let md = ok(tmp.path(), &["old.txt", "new.txt", "--format", "markdown"]);
    assert!(md.contains("not tested: refused"), "{md}");
    assert!(!md.contains("| ~ |"), "{md}");
}

#[test]
fn sequential_runs_one_a_side_withhold_the_verdict_interleaved_ones_do_not() {
    let tmp = TempDir::new().unwrap();
    // Two back-to-back runs (one run a side): a clear trial-level change is
    // reported only as "within this run pair".
    bench_run(
        &tmp.path().join("a"),
        "ipi",
        "tip",
        "b1",
        &[("round_trips_per_sec", around(1000.0, 8))],
    );
    bench_run(
        &tmp.path().join("b"),
        "ipi",
        "patch",
        "b1",
        &[("round_trips_per_sec", around(1100.0, 8))],
    );
    let doc = json(tmp.path(), &["a", "b"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(c["verdict"], "~", "{c}");
    assert_eq!(c["unit_of_replication"]["level"], "run");
    assert_eq!(c["unit_of_replication"]["within_pair"], "improved");
    let text = ok(tmp.path(), &["a", "b", "--format", "text"]);
    assert!(text.contains("improved within this run pair"), "{text}");
    // Both variants in one (interleaved) run: the trial is the unit.
    let one = tmp.path().join("one");
    bench_run(
        &one,
        "ipi",
        "tip",
        "b1",
        &[("round_trips_per_sec", around(1000.0, 8))],
    );
    fs::create_dir_all(one.join("patch")).unwrap();
    fs::copy(
        tmp.path().join("b/patch/trials.jsonl"),
        one.join("patch/trials.jsonl"),
    )
    .unwrap();
    let doc = json(tmp.path(), &["one", "--baseline", "tip"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(c["verdict"], "improved", "{c}");
    assert_eq!(c["unit_of_replication"]["level"], "trial");
    // Three runs a side: the verdict is taken on the run means too.
    let mut args = Vec::new();
    for (label, centre) in [("tip", 1000.0), ("patch", 1100.0)] {
        for r in 0..3 {
            let d = tmp.path().join(format!("{label}{r}"));
            bench_run(
                &d,
                "ipi",
                label,
                &format!("b{r}"),
                &[("round_trips_per_sec", around(centre + r as f64, 5))],
            );
            args.push(format!("{label}={}", d.display()));
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let doc = json(tmp.path(), &args);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(c["unit_of_replication"]["level"], "boot", "{c}");
    assert_eq!(
        c["unit_of_replication"]["counts"],
        serde_json::json!([3, 3])
    );
    assert!(
        c["unit_of_replication"]["welch_p"].as_f64().unwrap() < 0.05,
        "{c}"
    );
    assert_eq!(c["verdict"], "improved", "{c}");
}

#[test]
fn near_duplicate_metrics_count_once_and_every_pair_has_a_detectable_change() {
    let tmp = TempDir::new().unwrap();
    let mut csv = String::from("variant,a_per_sec,b_per_sec,c_per_sec\n");
    for i in 0..10 {
        let v = 1000.0 + ((i * 7) % 10) as f64;
        let w = v * 1.05;
        csv.push_str(&format!(
            "tip,{v},{},{}\n",
            v * 2.0,
            50.0 + ((i * 3) % 10) as f64
        ));
        csv.push_str(&format!(
            "patch,{w},{},{}\n",
            w * 2.0,
            50.0 + ((i * 3 + 1) % 10) as f64
        ));
    }
    fs::write(tmp.path().join("r.csv"), csv).unwrap();
    let doc = json(tmp.path(), &["r.csv"]);
    let a = &metric(&doc, "a_per_sec")["comparisons"][0];
    assert_eq!(a["moves_with"], serde_json::json!(["b_per_sec"]), "{a}");
    assert!(a["verdict_p"].as_f64().unwrap() >= a["mann_whitney"]["p"].as_f64().unwrap());
    for m in doc["metrics"].as_array().unwrap() {
        let d = m["comparisons"][0]["detectable_change_pct"]
            .as_f64()
            .unwrap();
        assert!(d > 1.0 && d < 10.0, "{m}");
    }
}

#[test]
fn the_headline_metric_leads_the_text_summary_and_bench_warnings_travel() {
    let tmp = TempDir::new().unwrap();
    let one = tmp.path().join("one");
    bench_run(
        &one,
        "ipi",
        "tip",
        "b1",
        &[
            ("a_per_sec", around(10.0, 8)),
            ("round_trips_per_sec", around(1000.0, 8)),
        ],
    );
    bench_run(
        &tmp.path().join("b"),
        "ipi",
        "patch",
        "b1",
        &[
            ("a_per_sec", around(10.0, 8)),
            ("round_trips_per_sec", around(1001.0, 8)),
        ],
    );
    fs::create_dir_all(one.join("patch")).unwrap();
    for v in ["tip", "patch"] {
        let src = if v == "tip" {
            one.join("tip/trials.jsonl")
        } else {
            tmp.path().join("b/patch/trials.jsonl")
        };
        let text = fs::read_to_string(&src).unwrap().replace(
            r#""round_trips_per_sec":{"direction":"higher","#,
            r#""round_trips_per_sec":{"headline":true,"direction":"higher","#,
        );
        assert!(text.contains("headline"), "{text}");
        fs::write(one.join(format!("{v}/trials.jsonl")), text).unwrap();
    }
    fs::write(
        one.join("env.json"),
        r#"{"warnings":["machine is busy (load 3.1)"]}"#,
    )
    .unwrap();
    let out = ok(
        tmp.path(),
        &["one", "--baseline", "tip", "--format", "text"],
    );
    let first = out.lines().nth(2).unwrap_or("");
    assert!(
        first.starts_with("Headline round_trips_per_sec (patch):"),
        "{out}"
    );
    assert!(out.contains("smallest detectable change ±"), "{out}");
    assert!(out.contains("bench: machine is busy (load 3.1)"), "{out}");
    // summary.json: its notes travel, its data-quality warnings are
    // compare's own and are not given twice
    fs::write(
        one.join("summary.json"),
        r#"{"notes":["irq_cpu_pct: IRQ time accounting off"],
            "warnings":["tip round_trips_per_sec: drifts with trial order (from bench)"]}"#,
    )
    .unwrap();
    let out = ok(
        tmp.path(),
        &["one", "--baseline", "tip", "--format", "text"],
    );
    assert!(
        out.contains("bench: irq_cpu_pct: IRQ time accounting off"),
        "{out}"
    );
    assert!(!out.contains("(from bench)"), "{out}");
}
