//! CLI tests of `irqlab compare`'s statistics and how its outputs state
//! them: the `--resamples` range, values near the float limits, what a
//! comparison without a significant change could have detected, pairs that
//! lose their verdict to the family correction, units that differ between
//! variants and changes too small for two decimals. Fixtures are number
//! files and CSV tables written into temp dirs.
#![allow(clippy::unwrap_used)]

mod common;
use common::compare::{compare, numbers, ok, usage};
use tempfile::TempDir;

#[test]
fn resamples_outside_100_to_100000_are_a_usage_error_naming_the_range() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [1.0, 2.0, 3.0]);
    numbers(&tmp.path().join("b.txt"), [2.0, 3.0, 4.0]);
    for n in ["100001", "1000000000000", "99"] {
        usage(
            tmp.path(),
            &["a.txt", "b.txt", "--resamples", n],
            &["--resamples", "from 100 to 100000", n],
        );
    }
    let out = ok(
        tmp.path(),
        &[
            "a.txt",
            "b.txt",
            "--resamples",
            "100000",
            "--format",
            "json",
        ],
    );
    assert!(out.contains("\"resamples\":100000"), "{out}");
    // The bound is in --help.
    let help = compare(tmp.path(), &["--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("from 100 to 100000"), "{help}");
}

/// Six metrics of two variants, ten trials each: `lat_ns` (lower is
/// better) rises ~3 % with Mann-Whitney p 0.023 and `other1_ns` ~2.9 %
/// with p 0.043; the rest do not move. Over the family of six metrics
/// both lose their verdict (adjusted p 0.13).
const FAMILY_CSV: &str = "\
variant,trial,lat_ns,other0_ns,other1_ns,other2_ns,other3_ns,other4_ns
a,0,100.284,51.25,49.069,50.992,49.741,49.738
a,1,105.699,50.158,49.957,50.729,51.127,49.969
a,2,101.764,49.026,49.633,49.562,48.668,48.491
a,3,95.119,49.761,49.828,49.68,50.069,48.664
a,4,99.762,50.238,50.751,49.154,49.6,47.985
a,5,98.489,47.803,48.581,51.102,47.798,50.799
a,6,100.984,49.688,50.459,50.527,51.045,49.77
a,7,98.223,49.395,49.014,49.955,49.214,51.069
a,8,94.392,48.906,49.047,47.907,51.902,47.592
a,9,99.15,49.475,51.656,48.015,51.072,49.269
b,0,102.534,49.329,50.64,48.862,49.921,50.353
b,1,108.521,47.595,51.525,50.948,49.516,50.305
b,2,101.602,51.647,50.21,49.784,49.772,49.8
b,3,102.47,49.121,52.058,48.089,46.394,49.877
b,4,102.56,50.372,49.795,49.852,50.332,50.968
b,5,101.656,49.627,51.941,50.53,49.015,52.324
b,6,105.328,49.411,48.826,50.298,49.168,48.942
b,7,99.112,49.494,51.108,49.566,48.551,50.669
b,8,103.197,50.844,51.202,49.831,49.855,49.955
b,9,99.596,50.669,51.372,50.174,49.763,49.74
";

/// The lines of `out` from the one equal to `head` to the next line that
/// is not indented (the heading's list).
fn section<'a>(out: &'a str, head: &str) -> Vec<&'a str> {
    out.lines()
        .skip_while(|l| *l != head)
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect()
}

#[test]
fn verdicts_the_family_correction_takes_away_are_listed_as_no_significant_change_after_it() {
    let tmp = TempDir::new().unwrap();
    std::fs::write(tmp.path().join("fam.csv"), FAMILY_CSV).unwrap();
    let args = ["fam.csv", "--resamples", "2000"];
    let text = ok(tmp.path(), &[&args[..], &["--format", "text"]].concat());
    let listed = section(&text, "No significant change after correction:").join("\n");
    assert!(
        listed.contains("lat_ns (b): +3.06%") && listed.contains("regressed before correction"),
        "{text}"
    );
    assert!(listed.contains("adjusted p 0.1298"), "{text}");
    assert!(!text.contains("Changed (vs"), "{text}");
    assert!(
        section(&text, "No verdict possible:").is_empty(),
        "a verdict was possible: {text}"
    );
    let md = ok(tmp.path(), &[&args[..], &["--format", "markdown"]].concat());
    let head = md
        .find("**No significant change after correction:**")
        .unwrap_or_else(|| panic!("{md}"));
    let first = md[head..].lines().nth(2).unwrap_or("");
    assert!(first.starts_with("- lat_ns (b): +3.06%"), "{md}");
    assert!(!md.contains("**Changed"), "{md}");
    let doc = common::compare::json(tmp.path(), &["fam.csv"]);
    let lat = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(lat["verdict"], "~", "{lat}");
    assert!(
        lat["notes"][0]
            .as_str()
            .unwrap()
            .contains("before it: regressed"),
        "{lat}"
    );
}

/// The smallest detectable change of each comparison of the first metric.
fn pairs_of(doc: &serde_json::Value) -> Vec<f64> {
    doc["metrics"][0]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["detectable_change_pct"].as_f64().unwrap())
        .collect()
}

/// `text` with its word-wrapped continuation lines joined, each by one
/// space. The text format indents a continuation 4 columns past the line
/// it wraps (`wrap` in src/compare/format.rs): 4 spaces under a line at
/// the margin, 6 under an item of a list (`  name (variant): …` under
/// "No verdict possible:", `  note: …` under a metric), 8 under a line
/// indented 4; the widest indent is joined first.
fn unwrapped(text: &str) -> String {
    text.replace("\n        ", " ")
        .replace("\n      ", " ")
        .replace("\n    ", " ")
}

#[test]
fn a_comparison_without_a_verdict_says_what_change_it_could_have_detected() {
    let tmp = TempDir::new().unwrap();
    let spread = common::compare::spread;
    numbers(&tmp.path().join("a.txt"), spread(100.0, 0.5, 12));
    numbers(&tmp.path().join("b.txt"), spread(100.2, 0.5, 12));
    numbers(&tmp.path().join("c.txt"), spread(130.0, 0.5, 12));
    let doc = common::compare::json(tmp.path(), &["a.txt", "b.txt", "c.txt"]);
    let pairs = &doc["metrics"][0]["comparisons"];
    let (quiet, moved) = (&pairs[0], &pairs[1]);
    assert_eq!(quiet["verdict"], "~", "{quiet}");
    let d = quiet["detectable_change_pct"].as_f64().unwrap();
    let want = format!("a change smaller than ±{d:.2}% could not be detected with these runs");
    assert_eq!(quiet["detectable_change_note"], want.as_str(), "{quiet}");
    assert_eq!(moved["verdict"], "changed", "{moved}");
    assert!(moved["detectable_change_note"].is_null(), "{moved}");
    let two = ["a.txt", "b.txt", "--resamples", "500", "--format"];
    let text = unwrapped(&ok(tmp.path(), &[&two[..], &["text"]].concat()));
    assert!(
        text.contains(&format!(
            "No significant change; a change smaller than the ± after a name could \
             not be detected with these runs: value ±{d:.2}%"
        )),
        "{text}"
    );
    for format in ["table", "markdown"] {
        let out = unwrapped(&ok(tmp.path(), &[&two[..], &[format]].concat()));
        assert!(out.contains(&want), "{format}: {out}");
    }
    // Two variants against the baseline: the quiet line gives the range.
    numbers(&tmp.path().join("d.txt"), spread(99.9, 0.5, 12));
    let text = unwrapped(&ok(
        tmp.path(),
        &[
            "a.txt",
            "b.txt",
            "d.txt",
            "--resamples",
            "500",
            "--format",
            "text",
        ],
    ));
    let d2 = pairs_of(&common::compare::json(
        tmp.path(),
        &["a.txt", "b.txt", "d.txt"],
    ));
    let (lo, hi) = (d2[0].min(d2[1]), d2[0].max(d2[1]));
    assert!(
        text.contains(&format!("value ±{lo:.2}–{hi:.2}%"))
            || text.contains(&format!("value ±{lo:.2}%")),
        "{text}"
    );
}

/// No format prints `inf` or `NaN` (as a word).
fn no_inf_or_nan(tmp: &std::path::Path, args: &[&str]) {
    for format in ["table", "text", "markdown", "csv", "json"] {
        let out = ok(
            tmp,
            &[args, &["--format", format, "--resamples", "500"]].concat(),
        );
        let bad = out
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| ["inf", "Infinity", "NaN", "nan"].contains(w));
        assert!(bad.is_none(), "{format} {args:?}: {bad:?} in {out}");
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1e-9)
}

#[test]
fn huge_and_tiny_values_give_the_statistics_of_ordinary_ones() {
    let tmp = TempDir::new().unwrap();
    let spread = common::compare::spread;
    let unit = |k: f64, name: &str, centre: f64| {
        let v = spread(centre, 0.01, 10).into_iter().map(|v| v * k);
        numbers(&tmp.path().join(format!("{name}.txt")), v);
    };
    let mut docs = Vec::new();
    for (k, tag) in [(1.0, "one"), (1e300, "huge"), (1e-300, "tiny")] {
        unit(k, &format!("{tag}_a"), 1.0);
        unit(k, &format!("{tag}_b"), 1.1);
        let (a, b) = (format!("a={tag}_a.txt"), format!("b={tag}_b.txt"));
        no_inf_or_nan(tmp.path(), &[&a, &b]);
        docs.push(common::compare::json(tmp.path(), &[&a, &b]));
    }
    let pair = |d: &serde_json::Value| d["metrics"][0]["comparisons"][0].clone();
    let want = pair(&docs[0]);
    for (doc, tag) in docs[1..].iter().zip(["huge", "tiny"]) {
        let got = pair(doc);
        assert_eq!(got["verdict"], want["verdict"], "{tag}: {got}");
        for field in [
            "/median_change_pct/estimate",
            "/median_change_pct/lo",
            "/mean_change_pct/hi",
            "/welch/t",
            "/welch/df",
            "/detectable_change_pct",
        ] {
            let (g, w) = (got.pointer(field), want.pointer(field));
            let (g, w) = (g.and_then(|v| v.as_f64()), w.and_then(|v| v.as_f64()));
            assert!(
                matches!((g, w), (Some(g), Some(w)) if close(g, w)),
                "{tag} {field}: {g:?} vs {w:?}\n{got}"
            );
        }
        let std = doc["metrics"][0]["describe"]["a"]["std"].as_f64().unwrap();
        let one = docs[0]["metrics"][0]["describe"]["a"]["std"]
            .as_f64()
            .unwrap();
        let k = if tag == "huge" { 1e300 } else { 1e-300 };
        assert!(close(std / k, one), "{tag}: std {std}");
    }
}

#[test]
fn values_of_both_signs_near_the_float_limit_are_compared_or_said_not_to_fit() {
    let tmp = TempDir::new().unwrap();
    // 1e308 and 1 mixed: the bootstrap resamples of the mean are kept (the
    // sums overflowed and the resamples holding many 1e308 were dropped:
    // 233 of 1000 were left).
    let mix = |i: usize, every: usize| if i % every == 0 { 1e308 } else { 1.0 };
    numbers(&tmp.path().join("mix_a.txt"), (0..10).map(|i| mix(i, 2)));
    numbers(&tmp.path().join("mix_b.txt"), (0..10).map(|i| mix(i, 3)));
    no_inf_or_nan(tmp.path(), &["mix_a.txt", "mix_b.txt"]);
    let doc = common::compare::json(tmp.path(), &["mix_a.txt", "mix_b.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    // (A resample of ten equal values has no t: a few of 500 may go.)
    let kept = c["mean_change_pct"]["resamples"].as_u64().unwrap();
    assert!(kept >= 490, "{c}");
    // From +1.7e308 to -1.7e308: -200 %, although the difference of the
    // two does not fit in a float; the HL shift does not, and says so.
    let lim = [1.7e308, 1.6e308, 1.75e308, 1.65e308, 1.7e308, 1.72e308];
    numbers(&tmp.path().join("pos.txt"), lim);
    numbers(&tmp.path().join("neg.txt"), lim.map(|v| -v));
    no_inf_or_nan(tmp.path(), &["pos.txt", "neg.txt"]);
    let doc = common::compare::json(tmp.path(), &["pos.txt", "neg.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    let est = c["median_change_pct"]["estimate"].as_f64().unwrap();
    assert!(close(est, -200.0), "{c}");
    assert_eq!(c["verdict"], "changed", "{c}");
    let table = ok(tmp.path(), &["pos.txt", "neg.txt", "--resamples", "500"]);
    assert!(table.contains("HL shift overflow"), "{table}");
    // Baseline median 0 (Δmedian undefined) and an HL interval beyond the
    // float range: no verdict, and the reason, not "changed" over
    // "+1.7e308 [+1.7e308, -]".
    let x = [-1.7e308, -1.7e308, -1.7e308, 0.0, 0.0, 1.0, 1.0, 1.0];
    let y = [
        1.7e308, 1.71e308, 1.69e308, 1.72e308, 1.7e308, 1.68e308, 1.73e308, 1.71e308,
    ];
    numbers(&tmp.path().join("x.txt"), x);
    numbers(&tmp.path().join("y.txt"), y);
    no_inf_or_nan(tmp.path(), &["x.txt", "y.txt"]);
    let doc = common::compare::json(tmp.path(), &["x.txt", "y.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(c["verdict"], "~", "{c}");
    assert!(c["notes"][0]
        .as_str()
        .unwrap()
        .contains("does not fit in a 64-bit float"));
    let text = unwrapped(&ok(
        tmp.path(),
        &["x.txt", "y.txt", "--format", "text", "--resamples", "500"],
    ));
    assert!(!text.contains("Changed (vs"), "{text}");
    assert!(text.contains("does not fit in a 64-bit float"), "{text}");
    // the shift itself fits (+1.7e308): only its interval does not
    let note = c["notes"][0].as_str().unwrap();
    assert!(
        note.starts_with(
            "the interval of the Hodges–Lehmann shift does not fit in a 64-bit float \
             (the shift itself does and is shown)"
        ),
        "{note}"
    );
}

/// Δmedian whose point estimate fits in a float but whose bootstrap
/// interval does not (resampled baseline medians of 1e-300) says so and
/// gives the estimate; one whose estimate itself overflows says that the
/// change does not fit.
#[test]
fn a_change_whose_interval_alone_overflows_is_told_from_one_that_does_not_fit() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let big = [1e300, 1.1e300, 0.9e300, 1e300, 1.2e300, 1e300, 1e300];
    numbers(
        &d.join("a.txt"),
        [1e-300, 1e-300, 1e-300, 1.0, 1.0, 1.0, 1.0],
    );
    numbers(
        &d.join("tiny.txt"),
        [1e-300, 1e-300, 1e-300, 1e-300, 1.0, 1.0, 1.0],
    );
    numbers(&d.join("b.txt"), big);
    let doc = common::compare::json(d, &["a.txt", "b.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    let note = c["median_note"].as_str().unwrap();
    assert_eq!(
        note,
        "undefined interval: the change of the median is +1.000e302%, but a bound of its \
         bootstrap interval does not fit in a 64-bit float (beyond ±1.8e308 %)"
    );
    let doc = common::compare::json(d, &["tiny.txt", "b.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(
        c["median_note"],
        "undefined: the change does not fit in a 64-bit float (beyond ±1.8e308 %)",
        "{c}"
    );
}

/// A Hodges–Lehmann shift that is itself beyond the float range (most
/// pairwise differences are 1.7e308 - -1.7e308), on a pair whose Δmedian
/// (+200 %) fits but has no interval (resampled baseline medians of
/// 1e-300): no verdict, and the note names the shift, not "the change",
/// which the Δmedian note gives.
#[test]
fn an_hl_shift_beyond_the_float_range_is_named_in_the_note() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let lim = 1.7e308;
    numbers(&d.join("x.txt"), [-lim, -lim, -lim, -lim, 1e-300, lim, lim]);
    numbers(
        &d.join("y.txt"),
        [lim, 1.71e308, 1.69e308, 1.72e308, lim, 1.68e308, 1.73e308],
    );
    no_inf_or_nan(d, &["x.txt", "y.txt"]);
    let doc = common::compare::json(d, &["x.txt", "y.txt"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(c["verdict"], "~", "{c}");
    assert_eq!(c["hodges_lehmann"]["shift"], serde_json::Value::Null, "{c}");
    let median = c["median_note"].as_str().unwrap();
    assert!(
        median.starts_with("undefined interval: the change of the median is +200.00%"),
        "{median}"
    );
    let note = "the Hodges–Lehmann shift does not fit in a 64-bit float (values of \
                opposite signs near ±1.8e308); no verdict is given";
    assert_eq!(c["notes"], serde_json::json!([note]), "{c}");
    let text = unwrapped(&ok(
        d,
        &["x.txt", "y.txt", "--format", "text", "--resamples", "500"],
    ));
    assert!(
        text.contains(&format!(
            "value (y): overflow [+1.00000e306, overflow] ~, {note}"
        )),
        "{text}"
    );
    assert!(text.contains(&format!("note: {note}")), "{text}");
    assert!(!text.contains("the change does not fit"), "{text}");
}

/// One bench run directory (`plan.json`, `<variant>/trials.jsonl`) of
/// interleaved variants, each `(variant, unit, values)` of one metric
/// `lat_ns` (lower is better), one boot.
fn bench_run(dir: &std::path::Path, sides: &[(&str, &str, Vec<f64>)]) {
    bench_run_of(dir, "lat_ns", sides);
}

/// [`bench_run`] of the metric `metric`.
fn bench_run_of(dir: &std::path::Path, metric: &str, sides: &[(&str, &str, Vec<f64>)]) {
    let names: Vec<&str> = sides.iter().map(|s| s.0).collect();
    let plan = serde_json::json!({"argv": ["irqlab", "bench"], "variants": names,
        "workloads": ["ipi"], "trials": sides[0].2.len(), "warmup": 0, "duration_s": 2.0,
        "order": "alternate", "seed": 1, "created_at": "t"});
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("plan.json"), plan.to_string()).unwrap();
    for (variant, unit, values) in sides {
        let lines: String = values
            .iter()
            .enumerate()
            .map(|(t, v)| {
                let m = serde_json::json!({metric: {"value": v, "unit": unit,
                    "direction": "lower"}});
                let rec = serde_json::json!({"schema": 2, "variant": variant, "trial": t + 1,
                    "boot_id": "b1", "started_at": "t", "duration_s": 2.0, "metrics": m});
                format!("{rec}\n")
            })
            .collect();
        std::fs::create_dir_all(dir.join(variant)).unwrap();
        std::fs::write(dir.join(variant).join("trials.jsonl"), lines).unwrap();
    }
}

#[test]
fn a_metric_whose_variants_state_different_units_is_not_compared() {
    let tmp = TempDir::new().unwrap();
    let spread = common::compare::spread;
    // tip in ns, patch the same latencies in µs: a 1000-fold "change".
    bench_run(
        &tmp.path().join("one"),
        &[
            ("tip", "ns", spread(100.0, 0.5, 8)),
            ("patch", "us", spread(0.1, 0.0005, 8)),
        ],
    );
    usage(
        tmp.path(),
        &["one", "--baseline", "tip"],
        &[
            "metric lat_ns: unit",
            "one/patch/trials.jsonl:1",
            "one/tip/trials.jsonl:1",
            "convert one of the inputs",
        ],
    );
}

#[test]
fn a_unit_taken_from_a_name_does_not_refuse_a_stated_one() {
    let tmp = TempDir::new().unwrap();
    let spread = common::compare::spread;
    // bytes_per_sec: B/s in the bench result, 1/s by its name in the table
    bench_run_of(
        &tmp.path().join("one"),
        "bytes_per_sec",
        &[("tip", "B/s", spread(1000.0, 1.0, 8))],
    );
    let rows: String = spread(1100.0, 1.0, 8)
        .iter()
        .map(|v| format!("{v}\n"))
        .collect();
    std::fs::write(tmp.path().join("p.csv"), format!("bytes_per_sec\n{rows}")).unwrap();
    let doc = common::compare::json(tmp.path(), &["tip=one/tip/trials.jsonl", "patch=p.csv"]);
    let c = &doc["metrics"][0]["comparisons"][0];
    assert!(c["refused"].is_null(), "{c}");
    assert!(c["verdict"].is_string(), "{c}");
}

#[test]
fn a_change_below_a_hundredth_of_a_percent_is_not_printed_as_zero() {
    let tmp = TempDir::new().unwrap();
    let spread = common::compare::spread;
    numbers(&tmp.path().join("a.txt"), spread(1000.0, 0.0001, 40));
    numbers(&tmp.path().join("b.txt"), spread(1000.03, 0.0001, 40));
    let args = ["a.txt", "b.txt", "--noise", "0", "--direction", "higher"];
    let text = ok(
        tmp.path(),
        &[&args[..], &["--format", "text", "--resamples", "500"]].concat(),
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("  value (b):"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.ends_with("improved"), "{text}");
    assert!(!line.contains("0.00%"), "{line}");
    assert!(line.starts_with("  value (b): +0.0030%"), "{line}");
}

#[test]
fn one_run_on_one_side_only_is_not_called_one_run_a_side() {
    let tmp = TempDir::new().unwrap();
    let spread = common::compare::spread;
    for r in 0..3 {
        let c = 100.0 + 0.1 * r as f64;
        bench_run(
            &tmp.path().join(format!("tip/r{r}")),
            &[("tip", "ns", spread(c, 0.2, 8))],
        );
    }
    bench_run(
        &tmp.path().join("patch/r0"),
        &[("patch", "ns", spread(120.0, 0.2, 8))],
    );
    let args = ["tip=tip", "patch=patch", "--resamples", "500", "--format"];
    for format in ["text", "table", "markdown", "json"] {
        let out = unwrapped(&ok(tmp.path(), &[&args[..], &[format]].concat()));
        assert!(
            out.contains("regressed within these runs; one run of patch (3 of tip)"),
            "{format}: {out}"
        );
        assert!(!out.contains("one run a side"), "{format}: {out}");
    }
    // No change: the summary line does not say "One run a side" either.
    bench_run(
        &tmp.path().join("same/r0"),
        &[("same", "ns", spread(100.05, 0.2, 8))],
    );
    let text = unwrapped(&ok(
        tmp.path(),
        &[
            "tip=tip",
            "same=same",
            "--resamples",
            "500",
            "--format",
            "text",
        ],
    ));
    assert!(
        text.contains("One run on one side (or both): between-run variation"),
        "{text}"
    );
}
