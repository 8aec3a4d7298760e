//! `irqlab compare` usage errors (exit 2): an unknown `--baseline`, fewer
//! than two variants, a `--baseline` naming a variant that was split
//! into `label@run` variants (the message says so, why, and their names),
//! one result set given twice, and a variant left out for want of trials.
#![allow(clippy::unwrap_used)]

mod common;
use common::compare::{compare, err, json, numbers, spread, usage};
use std::fs;
use std::path::Path;
use tempfile::TempDir;

#[test]
fn unknown_baseline_and_a_single_variant_are_usage_errors() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), spread(100.0, 1.0, 8));
    numbers(&tmp.path().join("b.txt"), spread(110.0, 1.0, 8));
    usage(
        tmp.path(),
        &["a.txt", "b.txt", "--baseline", "zzz"],
        &["--baseline zzz: no such variant"],
    );
    usage(tmp.path(), &["a.txt"], &["need at least two variants"]);
    usage(
        tmp.path(),
        &["a=a.txt", "a=b.txt"],
        &["need at least two variants"],
    );
}

/// A bench run of variant `tip` with trials of `duration_s` seconds.
fn bench_run(dir: &Path, duration_s: f64, centre: f64) {
    let vdir = dir.join("tip");
    fs::create_dir_all(&vdir).unwrap();
    let plan = serde_json::json!({"argv": ["irqlab", "bench"], "variants": ["tip"],
        "workloads": ["ipi"], "trials": 5, "warmup": 0, "duration_s": duration_s,
        "order": "alternate", "seed": 1, "created_at": "t"});
    fs::write(dir.join("plan.json"), plan.to_string()).unwrap();
    let mut lines = String::new();
    for (t, v) in spread(centre, 1.0, 5).into_iter().enumerate() {
        let rec = serde_json::json!({"schema": 2, "variant": "tip", "trial": t + 1,
            "boot_id": "b1", "started_at": "t", "duration_s": duration_s,
            "metrics": {"round_trips_per_sec":
                {"value": v, "unit": "1/s", "direction": "higher"}}});
        lines.push_str(&format!("{rec}\n"));
    }
    fs::write(vdir.join("trials.jsonl"), lines).unwrap();
}

/// A variant whose `trials.jsonl` holds no trial (its run stopped before
/// one finished) is left out with a note, which the error for too few
/// variants then gives.
#[test]
fn a_variant_without_trials_is_named_in_the_too_few_variants_error() {
    let tmp = TempDir::new().unwrap();
    let res = tmp.path().join("res");
    bench_run(&res, 2.0, 100.0);
    fs::create_dir_all(res.join("patch")).unwrap();
    fs::write(res.join("patch/trials.jsonl"), "").unwrap();
    usage(
        tmp.path(),
        &["res"],
        &[
            "need at least two variants to compare, found 1 (tip)",
            "note: res/patch/trials.jsonl: holds no trial (its run ended before one finished?): left out",
        ],
    );
}

#[test]
fn a_baseline_that_was_split_says_so_and_lists_the_split_names() {
    let tmp = TempDir::new().unwrap();
    let res = tmp.path().join("res");
    bench_run(&res.join("r1"), 2.0, 100.0);
    bench_run(&res.join("r2"), 5.0, 120.0);
    usage(
        tmp.path(),
        &["res", "--baseline", "tip"],
        &[
            "--baseline tip",
            "was split",
            "differ in",
            "tip@r1, tip@r2",
            "--baseline tip@r1",
        ],
    );
}

/// The notes of the other formats go to stderr with `--format csv`; a
/// torn (unterminated) last line is such a note, a complete garbage last
/// line an error naming the file and line.
#[test]
fn csv_notes_go_to_stderr_and_only_a_torn_last_line_is_skipped() {
    let tmp = TempDir::new().unwrap();
    let res = tmp.path().join("res");
    bench_run(&res.join("r1"), 2.0, 100.0);
    numbers(&tmp.path().join("b.txt"), spread(110.0, 1.0, 8));
    let trials = res.join("r1/tip/trials.jsonl");
    let good = fs::read_to_string(&trials).unwrap();
    fs::write(&trials, format!("{good}{{\"variant\":\"ti")).unwrap();
    let args = [
        "res",
        "b=b.txt",
        "--metric",
        "round_trips_per_sec",
        "--format",
        "csv",
    ];
    let out = compare(tmp.path(), &args);
    let (o, e) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(out.status.success(), "{o}{e}");
    assert!(
        e.contains("irqlab: note: ") && e.contains("trials.jsonl:6: truncated trial skipped"),
        "{e}"
    );
    assert!(!o.contains("truncated"), "{o}");
    fs::write(&trials, format!("{good}{{\"variant\":\"ti\n")).unwrap();
    let e = err(tmp.path(), &args);
    assert!(e.contains("trials.jsonl") && e.contains('6'), "{e}");
}

/// One result set given twice (the same file however typed, through a
/// symlink, or a run inside a directory also given) is a usage error
/// naming the file; two files with the same bytes compare, with a note
/// that they are probably copies (on stderr with `--format csv`, with the
/// other notes elsewhere).
#[test]
fn one_result_set_given_twice_is_a_usage_error_and_a_copy_a_note() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 8));
    numbers(&d.join("b.txt"), spread(110.0, 1.0, 8));
    fs::copy(d.join("a.txt"), d.join("c.txt")).unwrap();
    std::os::unix::fs::symlink(d.join("a.txt"), d.join("l.txt")).unwrap();
    let twice = "its runs would be compared with themselves, or counted twice in one variant";
    usage(
        d,
        &["a.txt", "a.txt"],
        &["irqlab: error: a.txt is given twice: ", twice],
    );
    usage(
        d,
        &["x=a.txt", "x=a.txt", "b.txt"],
        &["a.txt is given twice"],
    );
    let canon = fs::canonicalize(d.join("a.txt")).unwrap();
    let same = format!("a.txt and ./a.txt are the same file ({})", canon.display());
    usage(d, &["x=a.txt", "y=./a.txt"], &[&same, twice]);
    usage(
        d,
        &["a.txt", "l.txt"],
        &["a.txt and l.txt are the same file"],
    );
    bench_run(&d.join("res/r1"), 2.0, 100.0);
    let trials = fs::canonicalize(d.join("res/r1/tip/trials.jsonl")).unwrap();
    let through = format!("{} is read through both res and res/r1", trials.display());
    usage(d, &["res", "b=res/r1"], &[&through]);

    let copy = "a.txt and c.txt hold the same bytes: probably copies of one run";
    let out = compare(d, &["a.txt", "c.txt", "--format", "csv"]);
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{e}");
    assert!(e.contains(&format!("irqlab: note: {copy}")), "{e}");
    let doc = json(d, &["a.txt", "c.txt", "b.txt"]);
    assert!(doc["notes"].to_string().contains(copy), "{doc}");
    let doc = json(d, &["a.txt", "b.txt"]);
    assert!(!doc["notes"].to_string().contains("same bytes"), "{doc}");
}

/// An empty input is a usage error naming its position among the
/// inputs (not a missing file with an empty name), checked before any
/// input is read; an empty `--plot` or `--html` names its flag.
#[test]
fn an_empty_input_is_a_usage_error_naming_its_position() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 8));
    let empty = "the path is empty (give a file or directory; `.` is the current one)";
    let e = usage(
        d,
        &[""],
        &[
            "irqlab: error: invalid value '' for '<[LABEL=]PATH>' (input 1 of 1): ",
            empty,
        ],
    );
    assert!(!e.contains("No such file"), "{e}");
    usage(
        d,
        &["a.txt", "missing.txt", ""],
        &["(input 3 of 3): ", empty],
    );
    for flag in ["--plot", "--html"] {
        usage(
            d,
            &["a.txt", "a=a.txt", flag, ""],
            &[&format!("invalid value '' for '{flag} <"), empty],
        );
    }
}
