//! `irqlab compare` usage errors (exit 2): an unknown `--baseline`, fewer
//! than two variants, a `--baseline` naming a variant that was split
//! into `label@run` variants (the message says so, why, and their names),
//! one result set given twice, and a variant left out for want of trials.
#![allow(clippy::unwrap_used)]

mod common;
use common::compare::{compare, err, json, numbers, ok, spread, usage};
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
/// naming the file; two bench runs with the same bytes compare, with a
/// note that they are probably copies (on stderr with `--format csv`, with
/// the other notes elsewhere: one run a side gives no verdict).
#[test]
fn one_result_set_given_twice_is_a_usage_error_and_a_bench_copy_a_note() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 8));
    numbers(&d.join("b.txt"), spread(110.0, 1.0, 8));
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

    fs::create_dir_all(d.join("copy")).unwrap();
    fs::copy(d.join("res/r1/plan.json"), d.join("copy/plan.json")).unwrap();
    fs::create_dir_all(d.join("copy/tip")).unwrap();
    fs::copy(
        d.join("res/r1/tip/trials.jsonl"),
        d.join("copy/tip/trials.jsonl"),
    )
    .unwrap();
    bench_run(&d.join("other"), 2.0, 110.0);
    let copy = "res/r1/tip/trials.jsonl and copy/tip/trials.jsonl hold the same bytes: \
                probably copies of one run";
    let args = ["a=res/r1", "b=copy", "--format", "csv"];
    let out = compare(d, &args);
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{e}");
    assert!(e.contains(&format!("irqlab: note: {copy}")), "{e}");
    let doc = json(d, &["a=res/r1", "b=copy", "c=other"]);
    assert!(doc["notes"].to_string().contains(copy), "{doc}");
    let doc = json(d, &["a=res/r1", "c=other"]);
    assert!(!doc["notes"].to_string().contains("same bytes"), "{doc}");
}

/// Two variants of plain inputs with the same values in the same order
/// are refused naming both files: a copy of a number file or table (its
/// bytes, its rows with CRLF line ends or under other variant names, a
/// directory of per-iteration files) compared with the run gives "no
/// change" whatever was measured, and pooled with it counts twice.
/// Before, a copy compared with a note and an edited copy without one.
#[test]
fn a_copy_of_a_plain_input_is_refused_naming_both_files() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 8));
    numbers(&d.join("b.txt"), spread(110.0, 1.0, 8));
    fs::copy(d.join("a.txt"), d.join("c.txt")).unwrap();
    let same = "hold the same values (8 of metric value, in the same order): copies of one run";
    let e = err(d, &["a.txt", "c.txt"]);
    assert!(e.contains(&format!("a.txt and c.txt {same}")), "{e}");
    let e = err(d, &["a.txt", "b.txt", "c.txt", "--format", "csv"]);
    assert!(e.contains("a.txt and c.txt hold the same values"), "{e}");
    let e = err(d, &["x=a.txt", "x=c.txt", "b.txt"]);
    assert!(e.contains("a.txt and c.txt hold the same values"), "{e}");
    fs::write(d.join("t.csv"), "variant,x,y\nA,1,5\nA,2,6\nB,3,7\nB,4,9\n").unwrap();
    fs::write(
        d.join("u.csv"),
        "variant,y,x\r\nP,5,1\r\nP,6,2\r\nQ,7,3\r\nQ,4,4\r\n",
    )
    .unwrap();
    let e = err(d, &["t.csv", "u.csv"]);
    let want = "t.csv (variant A) and u.csv (variant P) hold the same values (4 of 2 metrics";
    assert!(e.contains(want), "{e}");
    fs::write(d.join("v.csv"), "variant,x\nA,1\nA,2\nB,1\nB,2\n").unwrap();
    let e = err(d, &["v.csv"]);
    assert!(
        e.contains("v.csv (variant A) and v.csv (variant B) hold"),
        "{e}"
    );
    fs::write(d.join("t.json"), r#"{"x": [1, 2, 3], "y": [4, 5, 6]}"#).unwrap();
    fs::write(d.join("u.json"), r#"{"y": [4, 5, 6], "x": [1, 2, 3]}"#).unwrap();
    let e = err(d, &["t.json", "u.json"]);
    assert!(e.contains("t.json and u.json hold the same values"), "{e}");
    for (dir, v) in [("i1", 1.0), ("i2", 1.0)] {
        numbers(&d.join(dir).join("1.txt"), [v]);
        numbers(&d.join(dir).join("2.txt"), [v + 1.0]);
    }
    let e = err(d, &["i1", "i2"]);
    assert!(e.contains("i1 and i2 hold the same values"), "{e}");
    // the same values in another order, and two runs of a counter that
    // stays at one number, are compared
    let mut back = spread(100.0, 1.0, 8);
    back.reverse();
    numbers(&d.join("r.txt"), back);
    ok(d, &["a.txt", "r.txt"]);
    numbers(&d.join("z1.txt"), [0.0; 4]);
    numbers(&d.join("z2.txt"), [0.0; 4]);
    ok(d, &["z1.txt", "z2.txt"]);
}

#[test]
fn allow_copies_compares_copies_with_a_note_and_is_refused_without_any() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    // runs of a few discrete values can match without being copies
    numbers(&d.join("a.txt"), [0.0, 1.0, 0.0, 2.0, 0.0]);
    numbers(&d.join("b.txt"), [0.0, 1.0, 0.0, 2.0, 0.0]);
    numbers(&d.join("c.txt"), [3.0, 1.0, 4.0, 1.0, 5.0]);
    let e = err(d, &["a.txt", "b.txt"]);
    assert!(
        e.contains("(--allow-copies compares them all the same)"),
        "{e}"
    );
    let out = compare(d, &["a.txt", "b.txt", "--allow-copies"]);
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{e}");
    // text's notes end the report
    let o = String::from_utf8(out.stdout).unwrap();
    let want = "note: a.txt and b.txt hold the same values (5 of metric value, in the same \
                order): compared as given (--allow-copies)";
    assert!(o.contains(want), "{o}");
    assert!(o.contains("b vs a: ~"), "{o}");
    // the flag with no copies to allow would be ignored: a usage error
    usage(
        d,
        &["a.txt", "c.txt", "--allow-copies"],
        &["--allow-copies: no two plain inputs hold the same values"],
    );
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

/// A negative `--resamples` or `--seed` is told the range it must be in,
/// not taken for an unknown flag.
#[test]
fn negative_counts_are_told_their_range() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 8));
    usage(
        d,
        &["a.txt", "a=a.txt", "--resamples", "-5"],
        &["'--resamples <RESAMPLES>': expected a whole number from 100 to 100000, found \"-5\""],
    );
    usage(
        d,
        &["a.txt", "a=a.txt", "--seed", "-1"],
        &["'--seed <SEED>': expected a whole number from 0 to 18446744073709551615, found \"-1\""],
    );
}
