//! The one row filter (`--irq`, `--exclude`, `--cpus`) end to end: every
//! command that filters rows keeps the same rows (label, description,
//! chip or one action), `--exclude` drops rows in show, top, serve and
//! record, and a command that cannot filter rows refuses the flags.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{scrape, serve};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

/// Rows matched by different fields: `^eth0$` only by IRQ 30's action,
/// `^MYCHIP$` only by IRQ 31's chip; `eth0-rx` is IRQ 40's action.
const INTERRUPTS: &str = "           CPU0       CPU1
  24:          5          7   IO-APIC   9-fasteoi   acpi
  30:         11         13   PCI-MSI 524288-edge      eth0
  31:          2          3   MYCHIP    1-edge      nvme0q1
  40:          1          1   PCI-MSI 524289-edge      eth0-rx
 LOC:        100        200   Local timer interrupts
";

/// A 2-CPU synth tree whose `/proc/interrupts` is [`INTERRUPTS`] (no
/// per-IRQ sysfs or procfs directories, so every command reads the file).
fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    common::synth_into(&common::spec(2, 4), d.path());
    for dir in ["sys/kernel/irq", "proc/irq"] {
        let _ = std::fs::remove_dir_all(d.path().join(dir));
    }
    std::fs::write(d.path().join("proc/interrupts"), INTERRUPTS).unwrap();
    d
}

fn labels(rows: &serde_json::Value) -> BTreeSet<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The rows of one `top --batch --format json` line with `args`.
fn top_rows(root: &Path, args: &[&str]) -> BTreeSet<String> {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args([
            "top", "--batch", "--format", "json", "-i", "20ms", "-n", "1",
        ])
        .arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    let line = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    labels(&v["interrupts"]["rows"])
}

/// The rows of `show --format json` with `args`.
fn show_rows(root: &Path, args: &[&str]) -> BTreeSet<String> {
    let mut a = vec!["--format", "json"];
    a.extend_from_slice(args);
    let (code, out, err) = common::show(root, &a);
    assert_eq!(code, 0, "{args:?}: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    labels(&v["interrupts"]["rows"])
}

/// The `irq` labels of the `irqlab_interrupts_total` series of one scrape.
fn serve_rows(root: &Path, args: &[&str]) -> BTreeSet<String> {
    let mut a = vec!["-i", "100ms"];
    a.extend_from_slice(args);
    let s = serve(root, &a);
    let body = scrape(s.addr);
    body.lines()
        .filter(|l| l.starts_with("irqlab_interrupts_total{"))
        .map(|l| {
            let irq = l.split("irq=\"").nth(1).unwrap();
            irq[..irq.find('"').unwrap()].to_string()
        })
        .collect()
}

/// `serve --irq` tested label or description only, so it dropped rows
/// `top --irq` keeps: a row matched only by an action (`^eth0$`) or only
/// by its chip (`^MYCHIP$`). Every command now keeps the same rows.
#[test]
fn serve_keeps_exactly_the_rows_top_keeps() {
    let d = tree();
    for (irq, want) in [
        ("^eth0$", set(&["30"])),
        ("^MYCHIP$", set(&["31"])),
        ("eth0", set(&["30", "40"])),
        ("^LOC$", set(&["LOC"])),
    ] {
        let top = top_rows(d.path(), &["--irq", irq]);
        assert_eq!(top, want, "top --irq {irq}");
        assert_eq!(
            serve_rows(d.path(), &["--irq", irq]),
            top,
            "serve --irq {irq}"
        );
        assert_eq!(
            show_rows(d.path(), &["--irq", irq]),
            top,
            "show --irq {irq}"
        );
    }
}

/// `--exclude` drops the rows any field of which matches, after `--irq`,
/// in show, top and serve alike (IRQ 30 only by its action).
#[test]
fn exclude_drops_rows_in_show_top_and_serve() {
    let d = tree();
    let ex = ["--exclude", "^(LOC|eth0)$"];
    let want = set(&["24", "31", "40"]);
    assert_eq!(top_rows(d.path(), &ex), want);
    assert_eq!(show_rows(d.path(), &ex), want);
    assert_eq!(serve_rows(d.path(), &ex), want);
    let both = ["--irq", "eth0", "--exclude", "rx"];
    assert_eq!(top_rows(d.path(), &both), set(&["30"]));
    assert_eq!(show_rows(d.path(), &both), set(&["30"]));
    assert_eq!(serve_rows(d.path(), &both), set(&["30"]));
}

/// `record --exclude`: the excluded rows are not in the recording (its
/// replay shows the others only).
#[test]
fn record_exclude_leaves_the_rows_out_of_the_recording() {
    let d = tree();
    let out = tempfile::tempdir().unwrap();
    let rec = out.path().join("rec");
    let o = common::irqlab()
        .arg("record")
        .arg("--root")
        .arg(d.path())
        .args([
            "-i",
            "50ms",
            "-d",
            "300ms",
            "--exclude",
            "^(LOC|MYCHIP)$",
            "-o",
        ])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = common::irqlab()
        .arg("replay")
        .arg(&rec)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8(r.stdout).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        labels(&first["interrupts"]["rows"]),
        set(&["24", "30", "40"])
    );
}

/// Commands that do not filter interrupt rows do not declare the filter
/// flags: clap refuses them (exit 2) instead of ignoring them.
#[test]
fn filter_flags_are_refused_where_they_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["synth", "--ncpus", "2", "--irqs", "2", "--irq", "x"],
        vec!["bench", "--exclude", "LOC", "--", "true"],
        vec!["compare", "--exclude", "x", "a", "b"],
        vec!["recover", "--cpus", "0"],
    ] {
        let o = common::irqlab()
            .args(&args)
            .arg("--out")
            .arg(dir.path().join("o"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("unexpected argument"), "{args:?}: {err}");
    }
    assert!(!dir.path().join("o").exists());
}

/// An empty `--cpus` is a usage error naming the flag in every command
/// that takes it (as `--cpus 0,1,`'s empty item is), not a warning and
/// every row with a total of 0.
#[test]
fn an_empty_cpu_list_is_a_usage_error_everywhere() {
    let d = tree();
    let root = d.path().to_str().unwrap();
    let out = d.path().join("o");
    let out = out.to_str().unwrap();
    for args in [
        vec!["show", "--root", root],
        vec!["top", "--batch", "-n", "1", "-i", "10ms", "--root", root],
        [common::serve_args("1s").as_slice(), &[root]].concat(),
        vec!["record", "-o", out, "--duration", "1s", "--root", root],
        vec!["replay", out, "--batch"],
        vec!["trace", "--root", root],
    ] {
        for empty in ["", " "] {
            let o = common::irqlab()
                .args(&args)
                .args(["--cpus", empty])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?} --cpus {empty:?}: {err}");
            assert!(o.stdout.is_empty(), "{args:?} --cpus {empty:?}");
            assert!(
                err.contains("--cpus <LIST>") && err.contains("the CPU list is empty"),
                "{args:?} --cpus {empty:?}: {err}"
            );
        }
    }
    assert!(!d.path().join("o").exists());
}

/// One help text for the filter flags in every command that has them.
#[test]
fn the_filter_flags_have_one_help_text() {
    let help = |cmd: &str| {
        let o = common::irqlab().args([cmd, "--help"]).output().unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let want = help("show");
    // from --irq to the end of --cpus' text, whitespace collapsed (the
    // column and the wrapping depend on each command's longest flag)
    let flag_help = |h: &str| -> String {
        let words: Vec<&str> = h.split_whitespace().collect();
        let at = |flag: [&str; 2]| words.windows(2).position(|w| w == flag).unwrap();
        let (from, cpus) = (at(["--irq", "<REGEX>"]), at(["--cpus", "<LIST>"]));
        let end = words[cpus..]
            .iter()
            .position(|w| w.ends_with("8`)"))
            .unwrap();
        words[from..=cpus + end].join(" ")
    };
    assert!(flag_help(&want).contains("--exclude <REGEX>"), "{want}");
    for cmd in ["top", "replay", "record", "serve", "trace"] {
        assert_eq!(flag_help(&help(cmd)), flag_help(&want), "{cmd}");
    }
}

/// A filter pair that keeps no interrupt row blames the flag that removed
/// them: `--irq` only when it alone matches none, else `--exclude`
/// (also without `--irq`), in show (each of its paths) and top alike.
#[test]
fn empty_selection_blames_the_flag_that_emptied_it() {
    let d = tree();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--irq", "^LOC$", "--exclude", "^LOC$"],
            "irqlab: warning: --exclude \"^LOC$\" removes every interrupt row --irq \"^LOC$\" keeps\n",
        ),
        (&["--exclude", ""], "irqlab: warning: --exclude \"\" removes every interrupt row\n"),
        (
            &["--irq", "zzz", "--exclude", "eth"],
            "irqlab: warning: --irq \"zzz\" matches no interrupt row\n",
        ),
        (&["--irq", "^LOC$", "--exclude", "^eth0$"], ""),
    ];
    let runs: [&[&str]; 5] = [
        &["show"],
        &["show", "--format", "json"],
        &["show", "-i", "10ms"],
        &["show", "-i", "10ms", "--format", "json"],
        &["top", "--batch", "-n", "1", "-i", "10ms"],
    ];
    for (flags, want) in cases {
        for run in runs {
            let out = common::irqlab()
                .args(run)
                .arg("--root")
                .arg(d.path())
                .args(flags)
                .output()
                .unwrap();
            assert!(out.status.success(), "{run:?} {flags:?}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err, want, "{run:?} {flags:?}");
        }
    }
}
