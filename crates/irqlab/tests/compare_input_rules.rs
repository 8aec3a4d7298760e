//! compare's rules for what its inputs mean (docs/compare-input.md): one
//! unit and one direction per metric, runs as clusters in every input
//! format, the bench plan's order, missing values and half-written files.
#![allow(clippy::unwrap_used)]

mod common;

use common::compare::{json, numbers, ok, spread, usage};
use serde_json::{json as j, Value};
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// One `trials.jsonl` line of schema 2 with one metric.
fn record(variant: &str, trial: usize, boot: &str, metric: &str, m: Value) -> String {
    j!({"schema": 2, "variant": variant, "trial": trial, "boot_id": boot,
        "started_at": "t", "duration_s": 1.0, "metrics": {metric: m}})
    .to_string()
}

/// A bench run in `out`: `plan.json` listing `variants`, `env.json`, and per
/// variant `trials.jsonl` and its `trials.csv` twin, with one metric
/// `irqs_per_sec` stated in `unit` with direction `dir`.
fn bench(out: &Path, variants: &[(&str, f64)], unit: &str, dir: &str) {
    fs::create_dir_all(out).unwrap();
    let names: Vec<&str> = variants.iter().map(|v| v.0).collect();
    let plan = j!({"argv": ["irqlab", "bench"], "variants": names,
        "workloads": vec!["ipi"; names.len()], "trials": 10, "duration_s": 1.0,
        "created_at": "t"});
    fs::write(out.join("plan.json"), plan.to_string()).unwrap();
    fs::write(
        out.join("env.json"),
        r#"{"kernel_release":"6.1","root":"/"}"#,
    )
    .unwrap();
    for (v, centre) in variants {
        let dir_v = out.join(v);
        fs::create_dir_all(&dir_v).unwrap();
        let mut lines = Vec::new();
        let mut csv = String::from("variant,trial,boot_id,started_at,duration_s,irqs_per_sec\n");
        for (i, x) in spread(*centre, 0.1, 10).into_iter().enumerate() {
            let m = j!({"value": x, "unit": unit, "direction": dir});
            lines.push(record(v, i + 1, "b1", "irqs_per_sec", m));
            csv.push_str(&format!("{v},{},b1,t,1.0,{x}\n", i + 1));
        }
        fs::write(dir_v.join("trials.jsonl"), lines.join("\n") + "\n").unwrap();
        fs::write(dir_v.join("trials.csv"), csv).unwrap();
    }
}

/// The two-variant bench run of most tests in `d/out` (tip around 100,
/// patch around 105, `irqs_per_sec` in 1/s, higher is better), and the path
/// and text of one of its files, `file` (relative to `d`), for a test to
/// damage.
fn tip_and_patch(d: &Path, file: &str) -> (PathBuf, String) {
    bench(
        &d.join("out"),
        &[("tip", 100.0), ("patch", 105.0)],
        "1/s",
        "higher",
    );
    let f = d.join(file);
    let text = fs::read_to_string(&f).unwrap();
    (f, text)
}

fn metric<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let ms = doc["metrics"].as_array().unwrap();
    ms.iter().find(|m| m["name"] == name).unwrap()
}

fn notes(doc: &Value) -> String {
    doc["notes"].to_string()
}

#[test]
fn a_metric_stated_in_two_units_is_refused_naming_both_files() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    bench(&d.join("u1"), &[("a", 100.0)], "1/s", "higher");
    bench(&d.join("u2"), &[("a", 100.0)], "ms", "higher");
    bench(&d.join("u3"), &[("a", 100.0)], "1/s", "higher");
    let want = [
        "metric irqs_per_sec: unit 1/s in u1/a/trials.jsonl:1 but ms in u2/a/trials.jsonl:1",
        "neither pooled nor compared",
    ];
    usage(d, &["x=u1", "y=u2"], &want);
    usage(d, &["x=u1", "x=u2", "y=u3"], &want);
    // No flag settles a unit.
    usage(
        d,
        &["x=u1", "y=u2", "--direction", "irqs_per_sec=higher"],
        &want,
    );
}

#[test]
fn a_metric_stated_with_two_directions_needs_direction() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    bench(&d.join("d1"), &[("a", 100.0)], "1/s", "higher");
    bench(&d.join("d2"), &[("a", 101.0)], "1/s", "lower");
    bench(&d.join("d3"), &[("a", 100.0)], "1/s", "higher");
    let want = [
        "metric irqs_per_sec: direction higher in d1/a/trials.jsonl:1 but lower in \
         d2/a/trials.jsonl:1",
        "give --direction irqs_per_sec=higher|lower|none",
        "schema 1",
    ];
    usage(d, &["x=d1", "y=d2"], &want);
    usage(d, &["x=d1", "x=d2", "y=d3"], &want);
    let doc = json(d, &["x=d1", "y=d2", "--direction", "irqs_per_sec=lower"]);
    assert_eq!(metric(&doc, "irqs_per_sec")["direction"], "lower");
    // A run resumed by a newer irqlab: schema 1 lines say `higher`, schema
    // 2 lines `none` for the same interrupt rate, in one file.
    let run = d.join("mixed/a");
    fs::create_dir_all(&run).unwrap();
    let old = |t: usize| {
        j!({"variant": "a", "trial": t, "boot_id": "b", "started_at": "t", "duration_s": 1.0,
            "metrics": {"irq_res_per_sec": {"value": 5.0, "unit": "1/s", "direction": "higher"}}})
        .to_string()
    };
    let new = |t: usize| {
        let m = j!({"value": 5.0, "unit": "1/s", "direction": "none"});
        record("a", t, "b", "irq_res_per_sec", m)
    };
    fs::write(
        run.join("trials.jsonl"),
        [old(0), old(1), new(3)].join("\n") + "\n",
    )
    .unwrap();
    numbers(&d.join("b.txt"), [1.0, 2.0, 3.0]);
    usage(
        d,
        &["mixed", "b.txt"],
        &["direction higher in mixed/a/trials.jsonl:1 but none in mixed/a/trials.jsonl:3"],
    );
}

#[test]
fn trials_csv_pooled_runs_are_runs_as_their_trials_jsonl() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    for (run, v, c) in [
        ("r1", "tip", 100.0),
        ("r2", "tip", 100.6),
        ("r3", "patch", 100.3),
        ("r4", "patch", 100.9),
    ] {
        bench(&d.join(run), &[(v, c)], "1/s", "higher");
    }
    let unit =
        |doc: &Value| metric(doc, "irqs_per_sec")["comparisons"][0]["unit_of_replication"].clone();
    let dirs = json(d, &["tip=r1", "tip=r2", "patch=r3", "patch=r4"]);
    let csv = json(
        d,
        &[
            "tip=r1/tip/trials.csv",
            "tip=r2/tip/trials.csv",
            "patch=r3/patch/trials.csv",
            "patch=r4/patch/trials.csv",
        ],
    );
    for doc in [&dirs, &csv] {
        assert_eq!(unit(doc)["level"], "run", "{doc}");
        assert_eq!(unit(doc)["counts"], j!([2, 2]), "{doc}");
    }
    let p = |doc: &Value| unit(doc)["welch_p"].as_f64().unwrap();
    assert!((p(&csv) - p(&dirs)).abs() < 1e-9, "{csv}");
    let names: Vec<&Value> = csv["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["name"])
        .collect();
    assert_eq!(names, [&j!("irqs_per_sec")], "duration_s is no metric");
}

#[test]
fn a_run_column_and_pooled_files_make_runs_and_rows_are_said_independent() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let mut csv = String::from("variant,run,x\n");
    for (v, run, c) in [
        ("tip", 1, 10.0),
        ("tip", 2, 11.0),
        ("patch", 1, 10.5),
        ("patch", 2, 11.5),
    ] {
        for x in spread(c, 0.01, 5) {
            csv.push_str(&format!("{v},{run},{x}\n"));
        }
    }
    fs::write(d.join("t.csv"), csv).unwrap();
    let doc = json(d, &["t.csv"]);
    let u = &metric(&doc, "x")["comparisons"][0]["unit_of_replication"];
    assert_eq!(
        (&u["level"], &u["counts"]),
        (&j!("run"), &j!([2, 2])),
        "{doc}"
    );
    assert!(!notes(&doc).contains("independent run"), "{doc}");

    for (f, c) in [("a1", 10.0), ("a2", 11.0), ("b1", 10.5), ("b2", 11.5)] {
        numbers(&d.join(format!("{f}.txt")), spread(c, 0.01, 5));
    }
    let doc = json(d, &["a=a1.txt", "a=a2.txt", "b=b1.txt", "b=b2.txt"]);
    let u = &metric(&doc, "value")["comparisons"][0]["unit_of_replication"];
    assert_eq!(
        (&u["level"], &u["counts"]),
        (&j!("run"), &j!([2, 2])),
        "{doc}"
    );
    assert!(notes(&doc).contains("a1.txt: names no runs: taken as one run of variant a"));

    // Values with no run: each is a run of its own, and the note says so.
    let doc = json(d, &["a1.txt", "b1.txt"]);
    assert!(
        notes(&doc)
            .contains("a1: its input names no runs: each value is taken as an independent run"),
        "{doc}"
    );
    let u = &metric(&doc, "value")["comparisons"][0]["unit_of_replication"];
    assert_eq!(u["level"], "trial");
    // Beside an input with runs, each of them is one run.
    let rows = "irqs_per_sec\n10\n10.2\n10.1\n10.3\n10.4\n";
    fs::write(d.join("t.csv"), rows).unwrap();
    bench(&d.join("r"), &[("tip", 10.0)], "1/s", "higher");
    let doc = json(d, &["r/tip/trials.csv", "t.csv"]);
    let u = &metric(&doc, "irqs_per_sec")["comparisons"][0]["unit_of_replication"];
    assert_eq!(
        (&u["level"], &u["counts"]),
        (&j!("run"), &j!([1, 5])),
        "{doc}"
    );
}

#[test]
fn the_bench_plan_orders_the_variants_and_its_first_is_the_baseline() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    // `patch` sorts before `tip` by name; the plan ran tip first.
    tip_and_patch(d, "out/tip/trials.jsonl");
    for args in [vec!["out"], vec!["out/patch", "out/tip"]] {
        let doc = json(d, &args);
        assert_eq!(doc["variants"], j!(["tip", "patch"]), "{args:?}");
        assert_eq!(doc["baseline"], "tip", "{args:?}");
        assert_eq!(
            metric(&doc, "irqs_per_sec")["comparisons"][0]["verdict"],
            "improved"
        );
    }
    assert!(notes(&json(d, &["out"])).contains("in the order of their bench plan (tip, patch)"));
    let doc = json(d, &["new=out/patch", "old=out/tip"]);
    assert_eq!(doc["variants"], j!(["old", "new"]));
    let doc = json(d, &["out", "--baseline", "patch"]);
    assert_eq!(doc["baseline"], "patch");
    let out = ok(d, &["out", "--format", "text", "--resamples", "200"]);
    assert!(out.starts_with("baseline tip;"), "{out}");
}

#[test]
fn missing_values_are_skipped_with_a_note_naming_file_line_trial_and_metric() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    // Trial 3 of tip (the third line) lost its value.
    let (f, text) = tip_and_patch(d, "out/tip/trials.jsonl");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen(r#""value":"#, r#""value":null,"was":"#, 1);
    fs::write(&f, lines.join("\n") + "\n").unwrap();
    let doc = json(d, &["out"]);
    assert!(
        notes(&doc).contains(
            "out/tip/trials.jsonl: irqs_per_sec: no value at line 3 (trial 3): skipped \
             (1 value; n counts only the values present)"
        ),
        "{doc}"
    );
    assert_eq!(
        metric(&doc, "irqs_per_sec")["values"]["tip"]
            .as_array()
            .unwrap()
            .len(),
        9
    );

    fs::write(
        d.join("t.csv"),
        "variant,trial,x\ntip,1,1\ntip,2,\ntip,3,NaN\ntip,4,2\ntip,5,3\npatch,1,5\npatch,2,-\npatch,3,6\npatch,4,7\n",
    )
    .unwrap();
    let doc = json(d, &["t.csv"]);
    let n = notes(&doc);
    assert!(n.contains("t.csv: x: no value at line 3 (trial 2), line 4 (trial 3), line 8 (trial 2): skipped (3 values"), "{n}");
    assert_eq!(metric(&doc, "x")["values"]["tip"], j!([1.0, 2.0, 3.0]));
    fs::write(d.join("o.json"), r#"{"x": [1, null, 2, "NaN", 3]}"#).unwrap();
    numbers(&d.join("p.txt"), [4.0, 5.0, 6.0]);
    fs::write(d.join("q.txt"), "4\nNaN\n5\n6\n").unwrap();
    let doc = json(d, &["o.json", "q.txt", "--metric", "x"]);
    let n = notes(&doc);
    assert!(
        n.contains("o.json: x: no value at item 2, item 4: skipped (2 values"),
        "{n}"
    );
    assert!(
        n.contains("q.txt: x: no value at line 2: skipped (1 value"),
        "{n}"
    );
    assert_eq!(metric(&doc, "x")["values"]["o"], j!([1.0, 2.0, 3.0]));
}

/// A rate, count, size, duration or share cannot be negative: a negative
/// one in a bench result (an edited or damaged file) is an error naming
/// the file, line, trial and metric, as a value that is not a number is,
/// never a verdict of "-200 %, regressed". A table's own metrics, whose
/// units nobody states, may be negative.
#[test]
fn a_negative_rate_in_a_bench_result_is_an_error_naming_line_trial_and_metric() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let (f, text) = tip_and_patch(d, "out/patch/trials.jsonl");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen(r#""value":"#, r#""value":-"#, 1);
    fs::write(&f, lines.join("\n") + "\n").unwrap();
    let e = common::compare::err(d, &["out"]);
    assert!(
        e.contains("out/patch/trials.jsonl:3 (variant patch, trial 3): metric irqs_per_sec is -"),
        "{e}"
    );
    assert!(
        e.contains("expected 0 or more (a rate cannot be negative)"),
        "{e}"
    );
    // bench's trials.csv: the unit its name says
    let csv = d.join("out/tip/trials.csv");
    let text = fs::read_to_string(&csv)
        .unwrap()
        .replacen(",b1,t,1.0,", ",b1,t,1.0,-", 1);
    fs::write(&csv, text).unwrap();
    let e = common::compare::err(d, &["out/tip/trials.csv", "x=out/patch/trials.csv"]);
    assert!(
        e.contains("out/tip/trials.csv:2 (trial 1): metric irqs_per_sec is -"),
        "{e}"
    );
    // a table of the user's: no unit stated, any sign
    fs::write(
        d.join("t.csv"),
        "variant,x_per_sec\na,-1\na,-2\nb,-3\nb,-4\n",
    )
    .unwrap();
    ok(d, &["t.csv"]);
}

/// Runs of one label made on different sets of online CPUs (or hosts, CPU
/// models) are not pooled, as `bench --resume` refuses to continue a run
/// on them; variants from different machines are compared with a note
/// naming what differs (not the kernel: that is what variants differ in).
#[test]
fn runs_of_other_machines_or_online_cpus_are_not_pooled_and_variants_say_so() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let env = |out: &str, kernel: &str, host: &str, cpu: &str, cpus: &str| {
        let e = j!({"kernel_release": kernel, "root": "/", "hostname": host,
            "cpu_model": cpu, "online_cpus": cpus});
        fs::write(d.join(out).join("env.json"), e.to_string()).unwrap();
    };
    bench(&d.join("before"), &[("x", 100.0)], "1/s", "higher");
    bench(&d.join("after"), &[("x", 101.0)], "1/s", "higher");
    env("before", "6.1", "h", "Intel X", "0");
    env("after", "6.1", "h", "Intel X", "0-1");
    usage(
        d,
        &["X=before", "X=after"],
        &["X= pools runs that differ in online_cpus (0 vs 0-1)"],
    );
    env("after", "6.8", "otherhost", "AMD EPYC Fake", "0-63");
    let doc = json(d, &["A=before", "B=after"]);
    let n = notes(&doc);
    assert!(
        n.contains(
            "variant B ran on another machine or set of CPUs than the baseline A: hostname \
             (h vs otherhost), cpu_model (Intel X vs AMD EPYC Fake), online_cpus (0 vs 0-63)"
        ),
        "{n}"
    );
    assert!(!n.contains("kernel"), "{n}");
    // another kernel on the same machine is the comparison itself: no note
    env("after", "6.8", "h", "Intel X", "0");
    let doc = json(d, &["A=before", "B=after"]);
    assert!(!notes(&doc).contains("another machine"), "{doc}");
}

/// Variants whose bench plans ran trials of different lengths are compared
/// with a note naming both lengths: a count per trial scales with the
/// length, so a change in it may be the length's.
#[test]
fn variants_of_other_trial_lengths_say_so() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    bench(&d.join("before"), &[("x", 100.0)], "1/s", "higher");
    bench(&d.join("after"), &[("x", 101.0)], "1/s", "higher");
    let doc = json(d, &["A=before", "B=after"]);
    assert!(!notes(&doc).contains("trials of"), "{doc}");
    let plan = d.join("after/plan.json");
    let text = fs::read_to_string(&plan).unwrap();
    fs::write(
        &plan,
        text.replace(r#""duration_s":1.0"#, r#""duration_s":5.0"#),
    )
    .unwrap();
    let n = notes(&json(d, &["A=before", "B=after"]));
    assert!(
        n.contains("variant B ran trials of 5 s, the baseline A trials of 1 s"),
        "{n}"
    );
}

/// A run that did not finish its plan (Ctrl-C: `summary.json` says so; a
/// kill or a run still going: no `summary.json`) is compared on the trials
/// it has, with a note saying so.
#[test]
fn an_unfinished_run_is_said_to_be_one() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    bench(
        &d.join("out"),
        &[("tip", 100.0), ("patch", 105.0)],
        "1/s",
        "higher",
    );
    let summary = d.join("out/summary.json");
    let n = notes(&json(d, &["out"]));
    assert!(
        n.contains("out: bench: no summary.json: the run is still running"),
        "{n}"
    );
    fs::write(
        &summary,
        r#"{"complete":true,"finished_trials":20,"planned_trials":20}"#,
    )
    .unwrap();
    assert!(!notes(&json(d, &["out"])).contains("the run"));
    fs::write(
        &summary,
        r#"{"complete":false,"interrupted":"SIGINT","finished_trials":20,"planned_trials":30,"notes":[]}"#,
    )
    .unwrap();
    let n = notes(&json(d, &["out"]));
    assert!(
        n.contains(
            "out: bench: the run ended by SIGINT after 20 of 30 planned trials; compared on \
             the trials it finished (bench --resume continues it)"
        ),
        "{n}"
    );
}

/// A copy of a run beside it (`cp -r`) pools under its label with the
/// original: every trial twice, and the copy taken as a second run, which
/// makes a verdict out of one run a side. Refused, naming both places;
/// two runs (other start times) still pool.
#[test]
fn a_copy_of_a_run_pooled_with_it_is_refused() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    for dir in ["res/one", "res/two"] {
        bench(
            &d.join(dir),
            &[("tip", 100.0), ("patch", 105.0)],
            "1/s",
            "higher",
        );
    }
    let two = d.join("res/two/tip/trials.jsonl");
    let text = fs::read_to_string(&two)
        .unwrap()
        .replace(r#""started_at":"t""#, r#""started_at":"u""#);
    fs::write(&two, text).unwrap();
    let two = d.join("res/two/patch/trials.jsonl");
    let text = fs::read_to_string(&two)
        .unwrap()
        .replace(r#""started_at":"t""#, r#""started_at":"u""#);
    fs::write(&two, text).unwrap();
    json(d, &["res"]);
    bench(
        &d.join("res/copy"),
        &[("tip", 100.0), ("patch", 105.0)],
        "1/s",
        "higher",
    );
    let want = "res/one/patch/trials.jsonl:1: trial 1 of variant patch (boot b1, started t) \
                is also read from res/copy/patch/trials.jsonl:1: the same trial twice in one \
                variant (a copy of a run?) would count twice; give each run once";
    let e = common::compare::err(d, &["res"]);
    assert!(e.contains(want), "{e}");
    let e = common::compare::err(d, &["X=res/one/tip", "X=res/copy/tip", "res/two/patch"]);
    assert!(
        e.contains("trial 1 of variant X (boot b1, started t) is also read from"),
        "{e}"
    );
    // probe runs: a copy in a directory of runs, or pooled by a label
    let probe = |at: &str, c: f64| {
        let doc = j!({"kind": "probe", "boot_id": "b1", "started_at": at,
            "results": [{"metric": "read_ns", "unit": "ns", "direction": "lower",
                "values": [c, c + 1.0, c + 2.0]}]});
        doc.to_string()
    };
    fs::create_dir_all(d.join("old")).unwrap();
    fs::write(d.join("old/r1.json"), probe("s1", 100.0)).unwrap();
    fs::write(d.join("old/r2.json"), probe("s2", 101.0)).unwrap();
    fs::write(d.join("new.json"), probe("s3", 90.0)).unwrap();
    fs::write(d.join("new2.json"), probe("s4", 91.0)).unwrap();
    json(d, &["old", "n=new.json", "n=new2.json"]);
    fs::write(d.join("old/r1-copy.json"), probe("s1", 100.0)).unwrap();
    let e = common::compare::err(d, &["old", "new.json"]);
    assert!(e.contains("old/r1.json: trial 1 of variant old (boot b1, started s1) is also read from old/r1-copy.json"), "{e}");
    fs::write(d.join("new-copy.json"), probe("s3", 90.0)).unwrap();
    let e = common::compare::err(d, &["old/r2.json", "n=new.json", "n=new-copy.json"]);
    assert!(
        e.contains(
            "new-copy.json: trial 1 of variant n (boot b1, started s3) is also read from new.json"
        ),
        "{e}"
    );
}

/// A run's `trials.csv` pooled with its copy's under one label holds
/// every trial twice, as its `trials.jsonl` would: refused the same way,
/// naming both rows, and so is a `trials.csv` pooled with its copy's
/// `trials.jsonl`. Two runs' (other start times) still pool.
#[test]
fn a_copy_of_a_runs_trials_csv_pooled_with_it_is_refused() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    for dir in ["one", "two", "copy"] {
        bench(
            &d.join(dir),
            &[("tip", 100.0), ("patch", 105.0)],
            "1/s",
            "higher",
        );
    }
    let two = d.join("two/tip/trials.csv");
    let text = fs::read_to_string(&two)
        .unwrap()
        .replace(",b1,t,", ",b1,u,");
    fs::write(&two, text).unwrap();
    json(
        d,
        &[
            "X=one/tip/trials.csv",
            "X=two/tip/trials.csv",
            "one/patch/trials.csv",
        ],
    );
    let e = common::compare::err(
        d,
        &[
            "X=one/tip/trials.csv",
            "X=copy/tip/trials.csv",
            "one/patch/trials.csv",
        ],
    );
    let want = "copy/tip/trials.csv:2: trial 1 of variant X (boot b1, started t) is also read \
                from one/tip/trials.csv:2: the same trial twice in one variant (a copy of a \
                run?) would count twice; give each run once";
    assert!(e.contains(want), "{e}");
    let e = common::compare::err(
        d,
        &[
            "X=one/tip/trials.csv",
            "X=copy/tip/trials.jsonl",
            "one/patch/trials.csv",
        ],
    );
    assert!(
        e.contains("copy/tip/trials.jsonl:1: trial 1 of variant X (boot b1, started t) is also read from one/tip/trials.csv:2"),
        "{e}"
    );
}

#[test]
fn a_half_written_trials_csv_row_is_skipped_not_read_short() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    // A run killed while bench wrote tip's 11th row: `1` of `100.3`.
    let (f, mut text) = tip_and_patch(d, "out/tip/trials.csv");
    text.push_str("tip,11,b1,t,1.0,1");
    fs::write(&f, text).unwrap();
    let doc = json(d, &["out/tip/trials.csv", "out/patch/trials.csv"]);
    assert_eq!(
        metric(&doc, "irqs_per_sec")["values"]["tip"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
    assert!(
        notes(&doc).contains("out/tip/trials.csv:12: truncated trial skipped"),
        "{doc}"
    );
}

#[test]
fn a_column_named_twice_is_refused_not_counted_twice() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    fs::write(
        d.join("t.csv"),
        "variant,x,x\ntip,1,1\ntip,2,2\npatch,4,4\npatch,5,5\n",
    )
    .unwrap();
    let e = common::compare::err(d, &["t.csv"]);
    assert!(
        e.contains("t.csv:1: column \"x\" is in the header twice (columns 2 and 3)"),
        "{e}"
    );
}

/// A trial twice in one input (a `trials.jsonl` appended to itself, a
/// table's row repeated) would count its values twice: refused, naming
/// the file and both lines; the same trial number in another run, boot or
/// variant is another trial.
#[test]
fn a_trial_repeated_in_one_input_is_refused_not_counted_twice() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let (f, text) = tip_and_patch(d, "out/patch/trials.jsonl");
    let n = text.lines().count();
    fs::write(&f, format!("{text}{text}")).unwrap();
    let e = common::compare::err(d, &["out"]);
    assert!(
        e.contains(&format!(
            "trials.jsonl:{}: trial 1 of variant patch is already recorded at line 1",
            n + 1
        )),
        "{e}"
    );
    fs::write(
        d.join("t.csv"),
        "variant,trial,x\ntip,0,1\ntip,1,2\ntip,2,3\npatch,0,4\npatch,1,5\npatch,1,5\n",
    )
    .unwrap();
    let e = common::compare::err(d, &["t.csv"]);
    assert!(
        e.contains("t.csv:7: trial 1 of variant patch is already at line 6"),
        "{e}"
    );
    fs::write(
        d.join("t.json"),
        r#"[{"trial":0,"x":1},{"trial":1,"x":2},{"trial":0,"x":3}]"#,
    )
    .unwrap();
    numbers(&d.join("u.txt"), spread(2.0, 1.0, 3));
    let e = common::compare::err(d, &["t.json", "u.txt"]);
    assert!(
        e.contains("t.json: item 3: trial 0 is already at item 1"),
        "{e}"
    );
    // numbered per run: two runs' trial 0 are two trials
    fs::write(
        d.join("r.csv"),
        "variant,run,trial,x\ntip,r1,0,1\ntip,r1,1,2\ntip,r2,0,3\ntip,r2,1,4\npatch,r1,0,5\npatch,r1,1,6\npatch,r2,0,7\npatch,r2,1,8\n",
    )
    .unwrap();
    ok(d, &["r.csv"]);
}

#[test]
fn a_trials_csv_beside_its_trials_jsonl_is_one_result_set_given_twice() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    tip_and_patch(d, "out/tip/trials.csv");
    usage(
        d,
        &["out", "out/tip/trials.csv"],
        &["is read through both out and out/tip/trials.csv"],
    );
    usage(
        d,
        &["a=out/tip", "a=out/tip/trials.csv", "b=out/patch"],
        &["is read through both out/tip and out/tip/trials.csv"],
    );
}
