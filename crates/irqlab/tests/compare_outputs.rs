//! Regression tests of compare's outputs (scale, the text
//! report for commit messages, escaping, CSV deltas, the JSON schema) and
//! of the extra output files (`--plot`, `--html`) being written whole or
//! not at all. Each test is named after what it protects. The headless
//! browser check of `--html` is tests/compare_browser.rs.
#![allow(clippy::unwrap_used)]

mod common;

use common::compare::{compare, numbers, ok, spread};
use serde_json::Value;
use std::fs;
use std::path::Path;
use tempfile::TempDir;

/// A CSV table (`variant,trial,<metrics>`) of `n` trials per variant;
/// `value(variant, metric, trial)` fills the cells.
fn table(
    path: &Path,
    variants: &[&str],
    metrics: &[String],
    n: usize,
    value: impl Fn(usize, usize, usize) -> f64,
) {
    let mut text = format!("variant,trial,{}\n", metrics.join(","));
    for (v, label) in variants.iter().enumerate() {
        for t in 0..n {
            let cells: Vec<String> = (0..metrics.len())
                .map(|m| value(v, m, t).to_string())
                .collect();
            text.push_str(&format!("{label},{t},{}\n", cells.join(",")));
        }
    }
    fs::write(path, text).unwrap();
}

#[test]
fn item10_large_inputs_keep_hodges_lehmann_and_a_small_plot() {
    // 2 × 100 000 values: 10^10 pairwise differences, which Hodges–Lehmann
    // must still compute (by selection); the SVG must stay small.
    let tmp = TempDir::new().unwrap();
    let n = 100_000;
    let wave = |i: usize| ((i * 7919) % 1000) as f64 / 10.0;
    numbers(&tmp.path().join("a.txt"), (0..n).map(|i| 1000.0 + wave(i)));
    numbers(&tmp.path().join("b.txt"), (0..n).map(|i| 1010.0 + wave(i)));
    let out = ok(
        tmp.path(),
        &[
            "a.txt",
            "b.txt",
            "--format",
            "json",
            "--resamples",
            "200",
            "--plot",
            "p.svg",
        ],
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    let cmp = &doc["metrics"][0]["comparisons"][0];
    assert_eq!(cmp["refused"], Value::Null, "{cmp}");
    let hl = &cmp["hodges_lehmann"];
    assert!((hl["shift"].as_f64().unwrap() - 10.0).abs() < 1e-9, "{hl}");
    assert!(hl["lo"].as_f64().unwrap() <= 10.0 && 10.0 <= hl["hi"].as_f64().unwrap());
    assert!(!out.contains("too many"), "{out}");
    let svg = fs::metadata(tmp.path().join("p.svg")).unwrap().len();
    assert!(svg < 1_000_000, "SVG of 2 x 100k values is {svg} bytes");
}

/// 30 metrics: m00–m01 change by +10 %, m02–m04 are noise only,
/// z05… are all zero; four variants with long labels.
fn commit_message_set(dir: &Path) -> (Vec<&'static str>, Vec<String>) {
    let variants = vec![
        "baseline-kernel-6.9",
        "candidate-with-long-name-a",
        "candidate-with-long-name-b",
        "candidate-with-long-name-c",
    ];
    let metrics: Vec<String> = (0..30)
        .map(|m| match m {
            0..=1 => format!("m{m:02}_per_sec"),
            2..=4 => format!("m{m:02}_per_sec"),
            _ => format!("z{m:02}_drops"),
        })
        .collect();
    table(&dir.join("net.csv"), &variants, &metrics, 10, |v, m, t| {
        let noise = spread(0.0, 0.5, 10)[t];
        match m {
            0..=1 => 1000.0 * if v == 0 { 1.0 } else { 1.1 } + noise,
            2..=4 => 1000.0 + spread(0.0, 0.5, 10)[(t + 3 * v) % 10],
            _ => 0.0,
        }
    });
    (variants, metrics)
}

#[test]
fn item11_text_leads_with_changed_metrics_in_72_columns() {
    let tmp = TempDir::new().unwrap();
    commit_message_set(tmp.path());
    let base = [
        "net.csv",
        "--format",
        "text",
        "--resamples",
        "300",
        "--direction",
        "higher",
    ];
    let out = ok(tmp.path(), &base);
    let lines: Vec<&str> = out.lines().collect();
    for l in &lines {
        assert!(l.chars().count() <= 72, "{} columns: {l}\n{out}", l.len());
    }
    // The summary comes first: one entry per changed metric and variant
    // (an entry may be word-wrapped onto indented continuation lines).
    let changed_at = lines
        .iter()
        .position(|l| *l == "Changed (vs baseline-kernel-6.9):")
        .unwrap();
    assert!(lines[..changed_at]
        .iter()
        .all(|l| l.is_empty() || l.contains("baseline") || l.starts_with("    ")));
    let quiet_at = lines
        .iter()
        .position(|l| l.starts_with("No significant change; a change smaller than"))
        .unwrap();
    let joined = out.replace("\n    ", " ");
    for m in ["m02_per_sec", "m03_per_sec", "m04_per_sec"] {
        assert!(joined.contains(&format!("{m} ±1.")), "{out}");
    }
    assert!(
        joined.contains("could not be detected with these runs: m02_per_sec"),
        "{out}"
    );
    let mut summary: Vec<String> = Vec::new();
    for l in &lines[changed_at + 1..quiet_at] {
        match l.strip_prefix("      ") {
            Some(more) => summary.last_mut().unwrap().push_str(&format!(" {more}")),
            None => summary.push(l.to_string()),
        }
    }
    assert_eq!(summary.len(), 6, "{out}");
    for (i, l) in summary.iter().enumerate() {
        let metric = format!("m{:02}_per_sec", i / 3);
        assert!(l.starts_with(&format!("  {metric} (")), "{l}\n{out}");
        assert!(l.contains("+10.") && l.ends_with("improved"), "{l}");
    }
    let zero_at = lines
        .iter()
        .position(|l| l.starts_with("All zero or identical: z05_drops"))
        .unwrap();
    assert!(out.contains("z29_drops"), "{out}");
    // Details only for the changed metrics, after the summary.
    let titles: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("is better)") || l.contains("direction unknown)"))
        .collect();
    assert_eq!(titles.len(), 2, "{out}");
    assert!(
        lines
            .iter()
            .position(|l| l.starts_with("m00_per_sec ("))
            .unwrap()
            > zero_at
    );
    // Grid rows are not wrapped: with three long variant labels the grid
    // is split into blocks, each of them with all 8 describe rows.
    let rows = |name: &str| lines.iter().filter(|l| l.starts_with(name)).count();
    assert!(rows("  count") >= 2 * 2, "{out}");
    for name in [
        "  mean", "  std", "  min", "  50%", "  90%", "  99%", "  max",
    ] {
        assert_eq!(rows(name), rows("  count"), "{name}\n{out}");
    }
    // --all details every metric.
    let mut all_args = base.to_vec();
    all_args.push("--all");
    let all = ok(tmp.path(), &all_args);
    let titles = all
        .lines()
        .filter(|l| l.contains("is better)") || l.contains("direction unknown)"))
        .count();
    assert_eq!(titles, 30, "{all}");
    assert!(all.lines().all(|l| l.chars().count() <= 72), "{all}");
    assert!(lines.len() * 3 < all.lines().count(), "{out}");
}

#[test]
fn item12_markdown_escapes_pipes_and_html_in_names() {
    let tmp = TempDir::new().unwrap();
    let column = |centre: f64| -> String {
        let rows: Vec<String> = spread(centre, 1.0, 10).iter().map(f64::to_string).collect();
        format!("lat|<p99>&co_ns\n{}\n", rows.join("\n"))
    };
    fs::write(tmp.path().join("a.csv"), column(100.0)).unwrap();
    fs::write(tmp.path().join("b.csv"), column(90.0)).unwrap();
    let md = ok(
        tmp.path(),
        &[
            "a|<old>&=a.csv",
            "b|new=b.csv",
            "--format",
            "markdown",
            "--resamples",
            "300",
        ],
    );
    assert!(md.contains("lat\\|&lt;p99>&amp;co_ns"), "{md}");
    assert!(
        md.contains("a\\|&lt;old>&amp;") && md.contains("b\\|new"),
        "{md}"
    );
    assert!(!md.contains("<p99") && !md.contains("<old"), "{md}");
    // Every table row has as many unescaped `|` as its header.
    let cells = |l: &str| l.replace("\\|", "").matches('|').count();
    let mut header = None;
    for l in md.lines() {
        if !l.starts_with('|') {
            header = None;
            continue;
        }
        let h = *header.get_or_insert(cells(l));
        assert_eq!(cells(l), h, "{l}\n{md}");
    }
}

#[test]
fn item12_csv_carries_the_delta_of_every_describe_row() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), spread(100.0, 1.0, 12));
    numbers(&tmp.path().join("b.txt"), spread(110.0, 1.5, 12));
    let out = ok(
        tmp.path(),
        &["a.txt", "b.txt", "--format", "csv", "--resamples", "300"],
    );
    let mut rdr = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "{out}");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let b = &rows[1];
    assert_eq!(&b[col("variant")], "b");
    for key in ["count", "mean", "std", "min", "p50", "p90", "p99", "max"] {
        let base: f64 = rows[0][col(key)].parse().unwrap();
        let cand: f64 = b[col(key)].parse().unwrap();
        let delta: f64 = b[col(&format!("delta_{key}_pct"))].parse().unwrap();
        let want = (cand - base) / base.abs() * 100.0;
        assert!((delta - want).abs() < 1e-9 * want.abs().max(1.0), "{key}");
        assert_eq!(&rows[0][col(&format!("delta_{key}_pct"))], "", "{key}");
    }
}

/// CSV numbers are rounded to 12 significant digits (percents to 10
/// decimals) and printed in their shortest form: no float noise such as
/// `2.1999999999999997`, small p-values in scientific notation, never 0.
#[test]
fn csv_numbers_carry_no_float_noise() {
    let tmp = TempDir::new().unwrap();
    let a = [1.1, 1.2, 1.3, 1.1, 1.25, 1.15, 1.05, 1.3];
    numbers(&tmp.path().join("a.txt"), a);
    numbers(&tmp.path().join("b.txt"), a.map(|v| v + 1.0));
    let out = ok(tmp.path(), &["a.txt", "b.txt", "--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let b = &rows[1];
    for (name, want) in [
        ("mean", "2.18125"),
        ("p50", "2.175"),
        ("delta_std_pct", "0"),
        ("hl_lo", "0.9"),
        ("welch_df", "14"),
        ("welch_p", "6.29401354091e-12"),
    ] {
        assert_eq!(&b[col(name)], want, "{name}: {out}");
    }
    let is_pct =
        |h: &str| h.ends_with("_pct") || h.starts_with("median_") || h.starts_with("mean_");
    for (h, cell) in rows.iter().flat_map(|r| header.iter().zip(r.iter())) {
        let Ok(x) = cell.parse::<f64>() else {
            continue;
        };
        let sci = format!("{x:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap();
        let fraction = mantissa.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
        let digits = mantissa.chars().filter(char::is_ascii_digit).count();
        let decimals = fraction - exp.parse::<i32>().unwrap();
        if is_pct(h) {
            assert!(decimals <= 10, "{h} {cell} has {decimals} decimals: {out}");
        } else {
            assert!(digits <= 12, "{h} {cell} has {digits} digits: {out}");
        }
        assert!(!cell.starts_with("0.0000"), "{h} {cell}: {out}");
    }
}

/// The JSON Schema of `--format json`, compiled.
fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../docs/schemas/compare.json");
    let schema: Value = serde_json::from_str(text).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}\n{doc:#}");
}

fn trial(variant: &str, t: usize, boot: &str, rate: f64, pct: f64) -> String {
    format!(
        r#"{{"variant":"{variant}","trial":{t},"boot_id":"{boot}","started_at":"t","duration_s":1.0,"metrics":{{"irqs_per_sec":{{"value":{rate},"unit":"1/s","direction":"higher"}},"softirq_cpu_pct":{{"value":{pct},"unit":"%","direction":"lower"}}}}}}"#
    )
}

#[test]
fn item12_json_output_matches_the_schema() {
    let v = schema();
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    // plain files, a tiny sample (HL at 2 vs 2), constant values, a
    // refused comparison (one value), a metric only in some variants, percent points
    // and boot levels (bench trials), three variants (CSV).
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 10));
    numbers(&d.join("b.txt"), spread(105.0, 1.0, 10));
    numbers(&d.join("c.txt"), [1.0, 2.0]);
    numbers(&d.join("e.txt"), [5.0, 7.0]);
    numbers(&d.join("k1.txt"), [3.0; 6]);
    numbers(&d.join("k2.txt"), [3.0; 6]);
    numbers(&d.join("one.txt"), [4.0]);
    let mut lines = Vec::new();
    for boot in 0..3 {
        for t in 0..6 {
            let k = (t * 5 % 6) as f64;
            let b = format!("b{boot}");
            lines.push(trial("tip", t, &b, 10_000.0 + k, 3.0 + k / 100.0));
            lines.push(trial("patch", t, &b, 10_300.0 + k, 3.2 + k / 100.0));
        }
    }
    fs::create_dir_all(d.join("run")).unwrap();
    fs::write(d.join("run/trials.jsonl"), lines.join("\n")).unwrap();
    let metrics: Vec<String> = ["x_ns", "y"].map(String::from).to_vec();
    table(
        &d.join("t.csv"),
        &["p", "q", "r"],
        &metrics,
        8,
        |v, m, t| {
            if m == 1 && v == 2 {
                f64::NAN
            } else {
                50.0 + v as f64 + spread(0.0, 0.3, 8)[t]
            }
        },
    );
    let csv = fs::read_to_string(d.join("t.csv"))
        .unwrap()
        .replace("NaN", "");
    fs::write(d.join("t.csv"), csv).unwrap();
    let cases: [&[&str]; 6] = [
        &["a.txt", "b.txt"],
        &["c.txt", "e.txt"],
        &["k1.txt", "k2.txt"],
        &["k1.txt", "one.txt"],
        &["run"],
        &["t.csv", "--baseline", "q"],
    ];
    let mut refused = false;
    for args in cases {
        let mut a = args.to_vec();
        a.extend(["--format", "json", "--resamples", "300"]);
        let doc: Value = serde_json::from_str(&ok(d, &a)).unwrap();
        assert_valid(&v, &doc, &format!("{args:?}"));
        assert_eq!(doc["schema"], "irqlab.compare/1");
        refused |= doc["metrics"][0]["comparisons"][0]["refused"].is_string();
    }
    assert!(refused, "no refused comparison among the cases");
    // The schema is not vacuous: a wrong verdict or a missing field fails.
    let mut doc: Value = serde_json::from_str(&ok(
        d,
        &["a.txt", "b.txt", "--format", "json", "--resamples", "300"],
    ))
    .unwrap();
    doc["metrics"][0]["comparisons"][0]["verdict"] = Value::from("better");
    assert!(!v.is_valid(&doc));
    doc["metrics"][0]["comparisons"][0]["verdict"] = Value::from("improved");
    assert!(v.is_valid(&doc));
    doc["metrics"][0]
        .as_object_mut()
        .unwrap()
        .remove("describe");
    assert!(!v.is_valid(&doc));
}

/// Names of the files in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn plot_and_html_are_written_whole_or_not_at_all() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("in/a.txt"), spread(100.0, 1.0, 40));
    numbers(&d.join("in/b.txt"), spread(104.0, 1.0, 40));
    fs::create_dir(d.join("out")).unwrap();
    // A write that fails half way (the file size limit: EFBIG, with
    // SIGXFSZ ignored) leaves the previous file and no temporary file.
    for flag in ["--plot", "--html"] {
        fs::write(d.join("out/old"), "previous report\n").unwrap();
        let out = std::process::Command::new("sh")
            .current_dir(d)
            .arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f 2; exec \"$0\" compare in/a.txt in/b.txt \
                 --resamples 200 {flag} out/old"
            ))
            .arg(assert_cmd::cargo::cargo_bin("irqlab"))
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(
            err.starts_with("irqlab:") && err.contains("writing out/old: File too large"),
            "{flag}: {err}"
        );
        assert_eq!(
            fs::read_to_string(d.join("out/old")).unwrap(),
            "previous report\n"
        );
        assert_eq!(names(&d.join("out")), ["old"], "{flag}");
    }
    // A complete write replaces the file, readable like a `>` file.
    ok(
        d,
        &[
            "in/a.txt",
            "in/b.txt",
            "--resamples",
            "200",
            "--plot",
            "out/p.svg",
            "--html",
            "out/old",
        ],
    );
    assert!(fs::read_to_string(d.join("out/old"))
        .unwrap()
        .trim_end()
        .ends_with("</html>"));
    assert!(fs::read_to_string(d.join("out/p.svg"))
        .unwrap()
        .trim_end()
        .ends_with("</svg>"));
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(d.join("out/p.svg"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o044, 0, "mode {mode:o}");
    assert_eq!(names(&d.join("out")), ["old", "p.svg"]);
    // A directory at the path is refused, naming it.
    let out = compare(d, &["in/a.txt", "in/b.txt", "--html", "out"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("writing out: is a directory"), "{err}");
}

/// `--plot` or `--html` naming a file the comparison reads (a typo, a
/// completed name) would replace measured data with a report: refused
/// (exit 2) before anything is written, as are two outputs naming one
/// file. A new file inside a run directory is written.
#[test]
fn plot_and_html_never_replace_an_input() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 10));
    numbers(&d.join("b.txt"), spread(104.0, 1.0, 10));
    let before = fs::read_to_string(d.join("b.txt")).unwrap();
    let refused = |args: &[&str], want: &str| {
        common::compare::usage(d, args, &[want]);
        assert_eq!(fs::read_to_string(d.join("b.txt")).unwrap(), before);
    };
    refused(
        &["a.txt", "b.txt", "--plot", "./b.txt"],
        "--plot ./b.txt: the comparison reads it (input b.txt)",
    );
    refused(
        &["a.txt", "x=b.txt", "--html", "b.txt"],
        "--html b.txt: the comparison reads it (input b.txt)",
    );
    refused(
        &["a.txt", "b.txt", "--plot", "r.svg", "--html", "r.svg"],
        "--html r.svg: --plot writes the same file",
    );
    // an SVG under another image format's name is refused, nothing written
    for name in ["cmp.png", "cmp.PDF"] {
        let ext = name.rsplit_once('.').unwrap().1.to_ascii_lowercase();
        refused(
            &["a.txt", "b.txt", "--plot", name],
            &format!("--plot {name}: the plot is SVG, not {ext}; name it .svg"),
        );
        assert!(!d.join(name).exists(), "{name}");
    }
    // a bench run: its trials and the records beside them
    let run = d.join("run/tip");
    fs::create_dir_all(&run).unwrap();
    let line = |t: usize, x: f64| {
        format!(
            r#"{{"schema":2,"variant":"tip","trial":{t},"boot_id":"b","started_at":"t","duration_s":1.0,"metrics":{{"x_per_sec":{{"value":{x},"unit":"1/s","direction":"none"}}}}}}"#
        )
    };
    let lines: Vec<String> = (1..=5).map(|t| line(t, 100.0 + t as f64)).collect();
    fs::write(run.join("trials.jsonl"), lines.join("\n") + "\n").unwrap();
    fs::write(run.join("trials.csv"), "kept\n").unwrap();
    fs::write(d.join("run/plan.json"), "{}").unwrap();
    for out in [
        "run/tip/trials.jsonl",
        "run/tip/trials.csv",
        "run/plan.json",
    ] {
        let want = format!("--html {out}: the comparison reads it (input run)");
        common::compare::usage(d, &["run", "b=b.txt", "--html", out], &[&want]);
    }
    assert_eq!(
        fs::read_to_string(run.join("trials.csv")).unwrap(),
        "kept\n"
    );
    ok(
        d,
        &[
            "run",
            "b=b.txt",
            "--resamples",
            "200",
            "--plot",
            "run/cmp.svg",
            "--metric",
            "x_per_sec",
        ],
    );
    assert!(d.join("run/cmp.svg").is_file());
}

#[test]
fn plot_of_values_at_the_float_limits_has_only_finite_coordinates() {
    // Opposite signs near the float limit: their range, and the midpoint
    // of two large values of one sign, overflow unless scaled.
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("x.txt"), [1.7e308, 1.6e308, f64::MAX]);
    numbers(&d.join("y.txt"), [-1.7e308, -1.6e308, -f64::MAX]);
    numbers(&d.join("a.txt"), [1e308, 1.1e308]);
    numbers(&d.join("b.txt"), [1.5e308, 1.7e308]);
    for (x, y) in [("x.txt", "y.txt"), ("a.txt", "b.txt")] {
        ok(d, &[x, y, "--plot", "p.svg", "--html", "p.html"]);
        for file in ["p.svg", "p.html"] {
            let text = fs::read_to_string(d.join(file)).unwrap();
            let text = text.split_once("<svg").unwrap().1;
            let bad = ["NaN", "inf", "overflow"];
            assert!(
                !bad.iter().any(|b| text.contains(b)),
                "{file} of {x} {y}: {text}"
            );
            assert!(text.contains("<circle cx=") && text.contains("<polyline"));
        }
    }
}

/// The CSV gives a pair without a verdict the same `detectable_change_note`
/// as JSON, in a column after the older ones (their positions kept; only
/// `delta_note` comes after it).
#[test]
fn csv_carries_the_detectable_change_note_of_json() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 12));
    numbers(&d.join("same.txt"), spread(100.1, 1.0, 12));
    numbers(&d.join("up.txt"), spread(130.0, 1.0, 12));
    numbers(&d.join("few_a.txt"), [1.0, 2.0, 3.0]);
    numbers(&d.join("few_b.txt"), [1.5, 2.5, 3.5]);
    for (x, y, want) in [
        ("a.txt", "same.txt", Some("could not be detected")),
        ("few_a.txt", "few_b.txt", Some("no change of any size")),
        ("a.txt", "up.txt", None),
    ] {
        let args = [x, y, "--resamples", "300", "--format"];
        let out = ok(d, &[&args[..], &["csv"]].concat());
        let mut rdr = csv::Reader::from_reader(out.as_bytes());
        let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header[41], "unit_of_replication");
        assert_eq!(header[header.len() - 2], "detectable_change_note");
        let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
        let note = &rows[1][header.len() - 2];
        assert_eq!(&rows[0][header.len() - 2], "");
        let doc: Value = serde_json::from_str(&ok(d, &[&args[..], &["json"]].concat())).unwrap();
        let json = &doc["metrics"][0]["comparisons"][0]["detectable_change_note"];
        match want {
            Some(w) => {
                assert!(note.contains(w), "{x} {y}: {out}");
                assert_eq!(json.as_str(), Some(note), "{x} {y}");
            }
            None => assert!(note.is_empty() && json.is_null(), "{x} {y}: {out}"),
        }
    }
}

/// A delta cell whose baseline value is 0 is `-` (a relative change is
/// undefined): every format that prints the grid says why once per metric,
/// naming the rows, and JSON has it as the metric's `delta_note` beside a
/// null `delta_pct`. Without such rows there is no note.
#[test]
fn a_delta_undefined_by_a_zero_baseline_says_why() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), [-1.0, 0.0, 1.0, 0.0, 0.0]);
    numbers(&d.join("b.txt"), [0.0, 1.0, 0.0, 2.0, 0.0]);
    numbers(&d.join("c.txt"), [1.0, 2.0, 3.0, 2.0, 2.0]);
    let want = "delta \"-\" in rows mean, 50%: the baseline's value is 0, so a relative \
                change is undefined";
    let base = ["a.txt", "b.txt", "--resamples", "300", "--html", "p.html"];
    for format in ["table", "markdown"] {
        let out = ok(d, &[&base[..], &["--format", format]].concat());
        assert_eq!(out.matches("note: delta").count(), 1, "{out}");
        assert!(out.contains(&format!("note: {want}")), "{format}: {out}");
    }
    let out = ok(d, &[&base[..], &["--format", "text", "--all"]].concat());
    assert!(out.contains("note: delta \"-\" in rows mean, 50%: the baseline's value"));
    let html = fs::read_to_string(d.join("p.html")).unwrap();
    assert!(
        html.contains("<p>note: delta &quot;-&quot; in rows mean, 50%"),
        "{html}"
    );
    let doc: Value =
        serde_json::from_str(&ok(d, &[&base[..], &["--format", "json"]].concat())).unwrap();
    assert_valid(&schema(), &doc, "zero baseline");
    let m = &doc["metrics"][0];
    assert_eq!(m["delta_note"], want);
    assert!(m["delta_pct"]["b"]["mean"].is_null() && m["delta_pct"]["b"]["50%"].is_null());
    let plain = ["c.txt", "b.txt", "--resamples", "300"];
    let doc: Value =
        serde_json::from_str(&ok(d, &[&plain[..], &["--format", "json"]].concat())).unwrap();
    assert!(doc["metrics"][0]["delta_note"].is_null(), "{doc}");
    assert!(!ok(d, &[&plain[..], &["--format", "table"]].concat()).contains("note: delta"));
    // CSV: the last column, on the row whose delta cells it explains
    for (args, note) in [(&base[..4], want), (&plain[..], "")] {
        let out = ok(d, &[args, &["--format", "csv"]].concat());
        let mut rdr = csv::Reader::from_reader(out.as_bytes());
        assert_eq!(
            rdr.headers().unwrap().iter().next_back(),
            Some("delta_note")
        );
        let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
        let last = |r: &csv::StringRecord| r.iter().next_back().unwrap_or_default().to_string();
        assert_eq!(
            (last(&rows[0]), last(&rows[1])),
            (String::new(), note.to_string())
        );
    }
}

/// A probe result set's missing values (`null`, `"NaN"`) are skipped with a
/// note naming the file, the result (numbered from 1 as in `results`) and
/// the metric, as trials.jsonl's are: version 3 (`summary`) and the
/// unversioned form (per-read `values`), alone or in a directory of runs.
#[test]
fn probe_nulls_are_skipped_with_a_note() {
    use serde_json::json;
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let v3 = |p50: Value, p99: Value| {
        json!({"kind": "probe", "version": 3, "boot_id": "b", "results": [
            {"metric": "x_ns", "unit": "ns", "direction": "lower", "values": [p50],
             "summary": {"p50": p50, "p99": p99, "reads": 10}},
            {"metric": "y_ns", "unit": "ns", "direction": "lower", "values": [5.0],
             "summary": {"p50": 5.0, "p99": 7.0, "reads": 10}}]})
    };
    let v1 = |reads: Value| {
        json!({"kind": "probe", "boot_id": "b", "results": [
            {"metric": "x_ns", "unit": "ns", "direction": "lower", "values": reads}]})
    };
    let write = |name: &str, doc: Value| {
        let path = d.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, doc.to_string()).unwrap();
    };
    write("a1.json", v3(json!(10.0), Value::Null));
    write("a2.json", v3(Value::Null, Value::Null));
    write("b1.json", v3(json!(11.0), json!(12.0)));
    write("b2.json", v3(json!(12.0), json!(13.0)));
    let out = ok(
        d,
        &[
            "a=a1.json",
            "a=a2.json",
            "b=b1.json",
            "b=b2.json",
            "--format",
            "text",
            "--all",
        ],
    );
    for want in [
        "a1.json: x_ns_p99: no value at result 1 (p99): skipped (1 value",
        "a2.json: x_ns: no value at result 1 (p50): skipped (1 value",
        "a2.json: x_ns_p99: no value at result 1 (p99): skipped (1 value",
    ] {
        assert!(out.replace("\n    ", " ").contains(want), "{want}: {out}");
    }
    let doc: Value = serde_json::from_str(&ok(
        d,
        &[
            "a=a1.json",
            "a=a2.json",
            "b=b1.json",
            "b=b2.json",
            "--format",
            "json",
        ],
    ))
    .unwrap();
    let x = doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "x_ns")
        .unwrap();
    assert_eq!(x["values"]["a"], json!([10.0]), "{x}");

    write("runs/a/r1.json", v1(json!([1.0, null, 3.0, "NaN", 5.0])));
    write("runs/a/r2.json", v1(json!([2.0, 3.0, 4.0])));
    write("runs/b/r1.json", v1(json!([2.0, 3.0, 4.0])));
    write("runs/b/r2.json", v1(json!([3.0, 4.0, 5.0])));
    let out = ok(d, &["runs/a", "runs/b", "--format", "markdown"]);
    let want = "r1.json: x_ns: no value at result 1 (read 2), result 1 (read 4): skipped (2 \
                values";
    assert!(out.contains(want), "{out}");
    assert_eq!(out.matches("no value at").count(), 1, "{out}");
}

/// JSON follows show's layout rule: one line on a pipe, indented with
/// `--pretty`, the same document either way; `--compact` or `--pretty`
/// with another format is a usage error (exit 2).
#[test]
fn json_is_one_line_unless_pretty_and_layout_flags_need_json() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    fs::write(d.join("a.txt"), "1\n2\n3\n4\n").unwrap();
    fs::write(d.join("b.txt"), "2\n3\n4\n5\n").unwrap();
    let base = ["a.txt", "b.txt", "--format", "json"];
    let piped = ok(d, &base);
    assert_eq!(piped.lines().count(), 1, "{piped}");
    assert_eq!(ok(d, &[&base[..], &["--compact"]].concat()), piped);
    let pretty = ok(d, &[&base[..], &["--pretty"]].concat());
    assert!(pretty.lines().count() > 10, "{pretty}");
    let (a, b): (Value, Value) = (
        serde_json::from_str(&piped).unwrap(),
        serde_json::from_str(&pretty).unwrap(),
    );
    assert_eq!(a, b);
    for flag in ["--compact", "--pretty"] {
        let out = compare(d, &["a.txt", "b.txt", "--format", "text", flag]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("'{flag}' cannot be used with '--format text'")),
            "{err}"
        );
    }
}
