//! CLI tests of `irqlab compare`: every input format, every output format,
//! the pandas-table parity check against committed reference values, and
//! bad input. Fixtures are generated in temp dirs.
#![allow(clippy::unwrap_used)]

mod common;

use assert_cmd::Command;
use common::compare::{numbers, ok, usage};
use serde_json::Value;
use std::fs;
use std::path::Path;
use tempfile::TempDir;

fn irqlab() -> Command {
    Command::cargo_bin("irqlab").unwrap()
}

fn reference() -> Value {
    let text = include_str!("fixtures/compare/reference.json");
    serde_json::from_str(text).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// A directory of per-iteration files `iter-1.txt` …, one number each.
fn iter_dir(root: &Path, name: &str, values: &[f64]) -> String {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    for (i, v) in values.iter().enumerate() {
        fs::write(dir.join(format!("iter-{}.txt", i + 1)), format!("{v}\n")).unwrap();
    }
    dir.display().to_string()
}

fn series(mean: f64, step: f64, n: usize) -> Vec<f64> {
    // deterministic, non-monotone spread around `mean`
    (0..n)
        .map(|i| mean + step * (((i * 7) % n) as f64 - n as f64 / 2.0))
        .collect()
}

fn run_ok(args: &[&str]) -> String {
    let out = irqlab().arg("compare").args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        out.status.success(),
        "args {args:?}\nstdout {stdout}\nstderr {stderr}"
    );
    assert!(
        !stdout.contains("NaN") && !stdout.contains("nan"),
        "{stdout}"
    );
    stdout
}

fn run_err(args: &[&str]) -> String {
    let out = irqlab().arg("compare").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "args {args:?}");
    String::from_utf8(out.stderr).unwrap()
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-7 * want.abs().max(1e-9)
}

#[test]
fn pandas_table_from_per_iteration_dirs() {
    let r = reference();
    let t = &r["pandas_table"];
    let tmp = TempDir::new().unwrap();
    let tip = iter_dir(tmp.path(), "tip", &floats(&t["tip"]));
    let patch = iter_dir(tmp.path(), "patch", &floats(&t["patch"]));
    let out = run_ok(&[
        &tip,
        &patch,
        "--format",
        "json",
        "--resamples",
        "1000",
        "--direction",
        "higher",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let m = &doc["metrics"][0];
    assert_eq!(m["name"], "value");
    let want = &t["describe"];
    for row in ["count", "mean", "std", "min", "50%", "90%", "99%", "max"] {
        for col in ["tip", "patch"] {
            let got = m["describe"][col][row].as_f64().unwrap();
            assert!(
                close(got, want[col][row].as_f64().unwrap()),
                "{col} {row}: {got}"
            );
        }
        let got = m["delta_pct"]["patch"][row].as_f64().unwrap();
        let w = want["delta"][row].as_f64().unwrap() * 100.0;
        assert!(
            (got - w).abs() <= 1e-7 * w.abs().max(1e-9),
            "delta {row}: {got} vs {w}"
        );
    }
    assert_eq!(m["comparisons"][0]["verdict"], "improved");
}

#[test]
fn plain_files_and_all_text_formats() {
    let tmp = TempDir::new().unwrap();
    let a = tmp.path().join("a.txt");
    let b = tmp.path().join("b.txt");
    let text = |v: Vec<f64>| v.iter().map(|x| format!("{x}\n")).collect::<String>();
    fs::write(
        &a,
        format!("# tip run\n\n{}", text(series(1000.0, 1.0, 20))),
    )
    .unwrap();
    fs::write(&b, text(series(1030.0, 1.0, 20))).unwrap();
    let (a, b) = (
        format!("tip={}", a.display()),
        format!("patch={}", b.display()),
    );
    let table = run_ok(&[
        &a,
        &b,
        "--metric",
        "irqs_per_sec",
        "--direction",
        "irqs_per_sec=higher",
    ]);
    assert!(
        table.contains("irqs_per_sec (1/s, higher is better)"),
        "{table}"
    );
    assert!(table.contains("patch vs tip: improved"), "{table}");
    let text = run_ok(&[&a, &b, "--format", "text"]);
    assert!(text.lines().all(|l| l.chars().count() <= 72), "{text}");
    assert!(text.contains("Mann-Whitney U"));
    let md = run_ok(&[&a, &b, "--format", "markdown"]);
    assert!(
        md.contains("|  | tip | patch | delta |") && md.contains("| --- | ---: |"),
        "{md}"
    );
    let csv = run_ok(&[&a, &b, "--format", "csv", "--direction", "lower"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("metric,unit,direction,variant"));
    let cols = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == cols));
    assert!(lines[2].contains(",regressed,"), "{csv}");
}

#[test]
fn plots_and_html() {
    let tmp = TempDir::new().unwrap();
    let a = iter_dir(tmp.path(), "tip", &series(50.0, 0.1, 12));
    let b = iter_dir(tmp.path(), "patch", &series(50.5, 0.1, 12));
    let svg = tmp.path().join("p.svg");
    let html = tmp.path().join("r.html");
    run_ok(&[
        &a,
        &b,
        "--plot",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let svg = fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("by trial order") && svg.contains("<polyline"));
    let html = fs::read_to_string(html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<table>"));
    assert!(html.contains("<svg") && !html.contains("<script"));
}

fn trial(variant: &str, n: usize, boot: &str, irqs: f64, pct: f64) -> String {
    format!(
        r#"{{"variant":"{variant}","trial":{n},"boot_id":"{boot}","started_at":"t","duration_s":1.0,"metrics":{{"irqs_per_sec":{{"value":{irqs},"unit":"1/s","direction":"higher"}},"softirq_cpu_pct":{{"value":{pct},"unit":"%","direction":"lower"}}}}}}"#
    )
}

#[test]
fn bench_dirs_with_boots_and_truncated_line() {
    let tmp = TempDir::new().unwrap();
    let mut lines = Vec::new();
    for boot in 0..3 {
        for t in 0..8 {
            let k = (t * 5 % 8) as f64;
            lines.push(trial(
                "tip",
                t,
                &format!("b{boot}"),
                10_000.0 + k,
                3.0 + k / 100.0,
            ));
            lines.push(trial(
                "patch",
                t,
                &format!("b{boot}"),
                10_300.0 + k,
                3.2 + k / 100.0,
            ));
        }
    }
    let run = tmp.path().join("results/2024-06-01T10:00");
    fs::create_dir_all(&run).unwrap();
    let mut text = lines.join("\n");
    text.push_str("\n{\"variant\":\"tip\",\"tri");
    fs::write(run.join("trials.jsonl"), text).unwrap();
    let dir = tmp.path().join("results").display().to_string();
    let out = run_ok(&[&dir]);
    assert!(
        out.contains("trials.jsonl:49: truncated trial skipped"),
        "{out}"
    );
    assert!(out.contains("boot level (3 vs 3)"), "{out}");
    assert!(out.contains("softirq_cpu_pct (%, lower is better)") && out.contains("points"));
    let json: Value = serde_json::from_str(&run_ok(&[&dir, "--format", "json"])).unwrap();
    let m = &json["metrics"][1];
    assert_eq!(m["comparisons"][0]["verdict"], "regressed");
    assert!(m["delta_points"]["patch"]["mean"].as_f64().unwrap() > 0.19);
    assert_eq!(
        json["metrics"][0]["comparisons"][0]["boot_level"]["tested"],
        true
    );
    let base = run_ok(&[&dir, "--baseline", "patch", "--format", "json"]);
    assert!(base.contains("\"baseline\":\"patch\""), "{base}");
}

#[test]
fn probe_csv_and_json_inputs() {
    let tmp = TempDir::new().unwrap();
    let probe = |boot: &str, vals: &[f64]| {
        serde_json::json!({"kind": "probe", "boot_id": boot, "results": [
            {"metric": "proc_interrupts_read_ns", "unit": "ns", "direction": "lower", "values": vals}]})
        .to_string()
    };
    // A probe run is one trial: runs are pooled per label.
    let mut args = Vec::new();
    for (label, centre) in [("old", 5000.0), ("new", 4500.0)] {
        for run in 0..5 {
            let p = tmp.path().join(format!("{label}{run}.json"));
            let vals = series(centre + run as f64 * 7.0, 3.0, 15);
            fs::write(&p, probe(&format!("b{run}"), &vals)).unwrap();
            args.push(format!("{label}={}", p.display()));
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_ok(&args);
    assert!(
        out.contains("proc_interrupts_read_ns (ns, lower is better)"),
        "{out}"
    );
    assert!(out.contains("new vs old: improved"), "{out}");
    assert!(out.contains("boot level (5 vs 5)"), "{out}");

    let csv = tmp.path().join("runs.csv");
    let mut text = String::from("variant,trial,boot_id,irqs_per_sec,latency_ns\n");
    for i in 0..10 {
        text.push_str(&format!(
            "tip,{i},b1,{},{}\n",
            100.0 + (i % 3) as f64,
            50 + i
        ));
        text.push_str(&format!(
            "patch,{i},b1,{},{}\n",
            100.5 + (i % 3) as f64,
            49 + i
        ));
    }
    fs::write(&csv, text).unwrap();
    let json: Value =
        serde_json::from_str(&run_ok(&[csv.to_str().unwrap(), "--format", "json"])).unwrap();
    assert_eq!(json["variants"], serde_json::json!(["tip", "patch"]));
    assert_eq!(json["metrics"][1]["unit"], "ns");

    let rows = tmp.path().join("rows.json");
    let obj = tmp.path().join("obj.json");
    let r: Vec<Value> = (0..6)
        .map(|i| serde_json::json!({"trial": i, "x": 10.0 + i as f64}))
        .collect();
    fs::write(&rows, Value::Array(r).to_string()).unwrap();
    fs::write(&obj, r#"{"x": [11, 12, 13, 14, 15, 16], "y": [1, 2]}"#).unwrap();
    let out = run_ok(&[rows.to_str().unwrap(), obj.to_str().unwrap()]);
    assert!(out.contains("rows") && out.contains("obj vs rows"), "{out}");
    assert!(out.contains("only in: obj"), "{out}");
}

#[test]
fn bad_inputs() {
    let tmp = TempDir::new().unwrap();
    let bad = tmp.path().join("bad.txt");
    fs::write(&bad, "1.0\n2.0\nabc\n").unwrap();
    let good = tmp.path().join("good.txt");
    fs::write(&good, "1\n2\n3\n").unwrap();
    let err = run_err(&[good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert!(
        err.contains(&format!(
            "{}:3: expected a number, found \"abc\"",
            bad.display()
        )),
        "{err}"
    );

    let csv = tmp.path().join("t.csv");
    fs::write(&csv, "variant,v\ntip,1\ntip,2\npatch,x\n").unwrap();
    let err = run_err(&[csv.to_str().unwrap()]);
    assert!(
        err.contains("t.csv:4: expected a number, found \"x\""),
        "{err}"
    );

    let one = tmp.path().join("one.txt");
    fs::write(&one, "5\n").unwrap();
    for format in ["table", "text", "markdown", "json", "csv"] {
        let out = run_ok(&[
            &format!("tip={}", good.display()),
            &format!("patch={}", one.display()),
            "--metric",
            "m",
            "--format",
            format,
        ]);
        assert!(
            out.contains("refused: fewer than 2 values on a side (tip 3, patch 1)"),
            "{format}: {out}"
        );
    }
    let (g, o) = (
        format!("tip={}", good.display()),
        format!("patch={}", one.display()),
    );
    let json: Value = serde_json::from_str(&run_ok(&[&g, &o, "--format", "json"])).unwrap();
    let d = &json["metrics"][0]["describe"]["patch"];
    assert_eq!((d["count"].as_f64(), &d["std"]), (Some(1.0), &Value::Null));
    assert_eq!(json["metrics"][0]["comparisons"][0]["verdict"], Value::Null);

    usage(
        tmp.path(),
        &[
            good.to_str().unwrap(),
            one.to_str().unwrap(),
            "--baseline",
            "nope",
        ],
        &["--baseline nope: no such variant"],
    );
    usage(
        tmp.path(),
        &[good.to_str().unwrap()],
        &["need at least two variants"],
    );
}

#[test]
fn text_format_snapshot() {
    let r = reference();
    let t = &r["pandas_table"];
    let tmp = TempDir::new().unwrap();
    let tip = iter_dir(tmp.path(), "tip", &floats(&t["tip"]));
    let patch = iter_dir(tmp.path(), "patch", &floats(&t["patch"]));
    let out = run_ok(&[&tip, &patch, "--format", "text", "--metric", "irqs_per_sec"]);
    insta::assert_snapshot!("compare_text_pandas_table", out);
}

/// `--all` outside the text format and `--metric` with no input it can
/// name are refused (exit 2, one line naming the flag), not ignored; so
/// are two bare `--direction`s. Where they apply they still work.
#[test]
fn flags_that_cannot_apply_are_usage_errors() {
    let tmp = TempDir::new().unwrap();
    let d = |name: &str| tmp.path().join(name).display().to_string();
    fs::write(d("a.txt"), "1\n2\n3\n4\n").unwrap();
    fs::write(d("b.txt"), "2\n3\n4\n5\n").unwrap();
    let (a, b) = (d("a.txt"), d("b.txt"));
    for format in [
        None,
        Some("table"),
        Some("markdown"),
        Some("json"),
        Some("csv"),
    ] {
        let mut args = vec![a.as_str(), b.as_str(), "--all"];
        args.extend(format.iter().flat_map(|f| ["--format", f]));
        let e = usage(tmp.path(), &args, &[]);
        let shown = format.unwrap_or("table");
        assert_eq!(
            e,
            format!(
                "irqlab: error: --all: only --format text leaves out unchanged metrics; \
                 --format {shown} prints every metric already\n"
            )
        );
    }
    run_ok(&[&a, &b, "--all", "--format", "text", "--resamples", "200"]);

    fs::write(d("t1.csv"), "x\n1\n2\n3\n").unwrap();
    fs::write(d("t2.csv"), "x\n2\n3\n4\n").unwrap();
    fs::write(d("j1.json"), r#"{"x":[1,2,3]}"#).unwrap();
    fs::write(d("j2.json"), r#"{"x":[2,3,4]}"#).unwrap();
    let mut lines = Vec::new();
    for t in 0..4 {
        lines.push(trial("tip", t, "b0", 100.0 + t as f64, 3.0));
        lines.push(trial("patch", t, "b0", 110.0 + t as f64, 3.0));
    }
    fs::create_dir_all(d("bench")).unwrap();
    fs::write(d("bench/trials.jsonl"), lines.join("\n") + "\n").unwrap();
    for inputs in [
        vec![d("t1.csv"), d("t2.csv")],
        vec![d("j1.json"), d("j2.json")],
        vec![d("bench")],
    ] {
        let mut args: Vec<&str> = inputs.iter().map(String::as_str).collect();
        args.extend(["--metric", "m"]);
        let e = usage(tmp.path(), &args, &[]);
        assert!(
            e.starts_with(
                "irqlab: error: --metric m: only plain files and directories of \
                 per-iteration files take a metric name;"
            ) && e.contains(&inputs[0])
                && e.lines().count() == 1,
            "{e}"
        );
    }
    // One plain input is enough for --metric to name something.
    let out = run_ok(&[&a, &d("t2.csv"), "--metric", "x", "--format", "csv"]);
    assert!(out.lines().any(|l| l.starts_with("x,,none,a,")), "{out}");

    usage(
        tmp.path(),
        &[&a, &b, "--direction", "higher", "--direction", "lower"],
        &["--direction: more than one default given"],
    );
}

/// `a=` (a label, no path) and `=a.txt` (a path, no label) are usage
/// errors naming the input and its position, checked before any input is
/// read (`a=` read a file named `a=`); such a file is read as `./a=`.
#[test]
fn a_label_without_a_path_or_a_path_without_a_label_is_a_usage_error() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), series(100.0, 1.0, 8));
    numbers(&d.join("a="), series(110.0, 1.0, 8));
    numbers(&d.join("=b"), series(120.0, 1.0, 8));
    let e = usage(
        d,
        &["a.txt", "a=", "missing.txt"],
        &[
            "irqlab: error: invalid value 'a=' for '<[LABEL=]PATH>' (input 2 of 3): \
             the path after the label a= is empty",
            "./a= is a file named a=",
        ],
    );
    assert!(!e.contains("missing.txt"), "{e}");
    usage(
        d,
        &["a.txt", "=b"],
        &["invalid value '=b' for '<[LABEL=]PATH>' (input 2 of 2): the label before =b is empty"],
    );
    usage(
        d,
        &["=", "a.txt"],
        &["(input 1 of 2): the label before = is empty"],
    );
    let text = ok(d, &["a.txt", "./a=", "./=b", "--format", "text", "--all"]);
    assert!(text.contains("value (a=):"), "{text}");
    assert!(text.contains("value (=b):"), "{text}");
}
