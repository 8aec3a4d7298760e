//! `irqlab show` against fake trees: a capture of this project's 2-CPU
//! Linux 6.18 VM (tests/fixtures/vm-2cpu-6.18), partial trees, malformed
//! files; plus one live run when /proc is readable.

#![allow(clippy::unwrap_used)]

mod common;
use common::{irqlab, show, tree_with};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    common::fixture("vm-2cpu-6.18")
}

fn json(root: &Path, extra: &[&str]) -> serde_json::Value {
    let out = irqlab()
        .args(["show", "--format", "json", "--root"])
        .arg(root)
        .args(extra)
        .output()
        .unwrap();
    common::stdout_json(&out)
}

#[test]
fn table_lists_irqs_softirqs_and_cpu_time() {
    irqlab()
        .args(["show", "--root"])
        .arg(fixture())
        .assert()
        .success()
        .stdout(predicate::str::contains("Interrupts (2 CPUs)"))
        .stdout(predicate::str::contains("virtio1-req.0"))
        .stdout(predicate::str::contains("LOC:"))
        .stdout(predicate::str::contains("NET_RX:"))
        .stdout(predicate::str::contains("CPU time (since boot)"));
}

/// The CPU-time table's columns are in mpstat's order (iowait after sys,
/// not after soft), named as `top`'s CPU-time panel names them, and each
/// holds its own share (the JSON's).
#[test]
fn cpu_time_columns_are_in_mpstat_order_with_top_s_names() {
    let (code, table, err) = show(&fixture(), &[]);
    assert_eq!(code, 0, "{err}");
    let mut lines = table.lines().skip_while(|l| !l.starts_with("CPU time"));
    let head: Vec<&str> = lines.nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        head,
        ["CPU", "USR%", "NICE%", "SYS%", "IOW%", "IRQ%", "SOFT%", "STL%", "IDLE%"]
    );
    let all: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(all[0], "all", "{table}");
    let v = json(&fixture(), &[]);
    let p = &v["stat"]["cpu_pct"][0];
    let keys = [
        "user_pct",
        "nice_pct",
        "system_pct",
        "iowait_pct",
        "irq_pct",
        "softirq_pct",
        "steal_pct",
        "idle_pct",
    ];
    for (k, cell) in keys.iter().zip(&all[1..]) {
        let (a, b) = (cell.parse::<f64>().unwrap(), p[*k].as_f64().unwrap());
        assert!((a - b).abs() < 0.006, "{k}: {a} vs {b}: {table}");
    }
}

#[test]
fn json_contract_for_numbered_and_single_value_rows() {
    let v = json(&fixture(), &["--affinity"]);
    let irqs = &v["interrupts"];
    assert_eq!(irqs["cpus"], serde_json::json!([0, 1]));
    let rows = irqs["rows"].as_array().unwrap();
    let text = std::fs::read_to_string(fixture().join("proc/interrupts")).unwrap();
    assert_eq!(rows.len(), text.lines().count() - 1);
    let r24 = &rows[0];
    assert_eq!(r24["label"], "24");
    assert_eq!(r24["irq"], 24);
    assert_eq!(r24["chip"], "IO-APIC");
    assert_eq!(r24["hwirq"], 5);
    assert_eq!(r24["actions"], serde_json::json!(["ACPI:Ged"]));
    let counts = r24["counts"].as_array().unwrap();
    assert_eq!(counts.len(), 2);
    let sum: u64 = counts.iter().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(r24["total"].as_u64().unwrap(), sum);
    assert_eq!(r24["affinity"], "0", "effective affinity from proc/irq/24");
    let r25 = rows.iter().find(|r| r["label"] == "25").unwrap();
    assert!(
        r25.get("affinity").is_none(),
        "no proc/irq/25 in the fixture"
    );
    let err = rows.iter().find(|r| r["label"] == "ERR").unwrap();
    assert!(err["irq"].is_null());
    assert!(err["counts"].is_null());
    assert_eq!(err["shape"], "single");
    assert_eq!(v["softirqs"]["rows"].as_array().unwrap().len(), 10);
    assert!(v["stat"]["cpu_pct"][0]["idle_pct"].as_f64().unwrap() > 0.0);
}

#[test]
fn filters_by_regex_and_cpu_list() {
    let v = json(&fixture(), &["--irq", "^LOC$|virtio3", "--cpus", "1"]);
    let rows = v["interrupts"]["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["label"] == "LOC"
        || r["actions"][0]
            .as_str()
            .unwrap_or("")
            .starts_with("virtio3")));
    assert_eq!(rows.len(), 5);
    assert_eq!(v["interrupts"]["cpus"], serde_json::json!([1]));
    assert_eq!(rows[0]["counts"].as_array().unwrap().len(), 1);
}

#[test]
fn csv_is_long_format() {
    let out = irqlab()
        .args(["show", "--format", "csv", "--root"])
        .arg(fixture())
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("section,label,irq,cpu,value,rate_per_sec,actions,description\n"));
    assert!(s.contains("\ninterrupts,24,24,0,"));
    assert!(s.contains("\ninterrupts,ERR,,,0,,,\n"), "{s}");
    assert!(s.contains("\nsoftirqs,NET_RX,,1,"));
}

#[test]
fn interval_over_a_frozen_tree_gives_zero_rates() {
    let v = json(&fixture(), &["--interval", "50ms"]);
    assert!(v["interval_s"].as_f64().unwrap() >= 0.045);
    for r in v["interrupts"]["rows"].as_array().unwrap() {
        assert_eq!(r["total_rate"].as_f64().unwrap(), 0.0, "{r}");
        assert!(r.get("gaps").is_none());
    }
}

#[test]
fn partial_tree_shows_what_is_there() {
    let text = std::fs::read(fixture().join("proc/interrupts")).unwrap();
    let dir = tree_with(&[("proc/interrupts", &text)]);
    irqlab()
        .args(["show", "--root"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("LOC:"))
        .stderr(predicate::str::contains("proc/softirqs not shown"))
        .stderr(predicate::str::contains("proc/stat not shown"));
}

#[test]
fn empty_tree_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    irqlab()
        .args(["show", "--root"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("nothing readable under"));
}

#[test]
fn a_root_that_is_a_file_is_not_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    for extra in [&[][..], &["--interval", "10ms"][..]] {
        irqlab()
            .args(["show", "--root"])
            .arg(&file)
            .args(extra)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "--root {}: not a directory",
                file.display()
            )))
            .stderr(predicate::str::contains("nothing readable").not())
            .stderr(predicate::str::contains("not shown").not());
    }
}

#[test]
fn a_bad_file_after_a_missing_one_fails_and_says_both() {
    // the missing file is noted even though the run then fails (show's
    // rule, kept now that show reads through the sampler)
    let dir = tree_with(&[("proc/stat", "cpu  1 2 x\n")]);
    let out = irqlab()
        .args(["show", "--format", "json", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    let missing = err
        .find("proc/interrupts not shown")
        .unwrap_or_else(|| panic!("{err}"));
    let bad = err.find("proc/stat:1:").unwrap_or_else(|| panic!("{err}"));
    assert!(missing < bad, "{err}");
}

fn assert_clean_failure(body: &[u8], needle: &str) {
    let dir = tree_with(&[("proc/interrupts", body)]);
    let out = irqlab()
        .args(["show", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "stderr: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn malformed_input_names_file_line_and_expectation() {
    let h = "           CPU0       CPU1       \n";
    assert_clean_failure(
        format!("{h} 1:  1 2  IO-APIC 1-edge i8042\n 2:  1 x  IO-APIC 2-edge x\n").as_bytes(),
        "proc/interrupts:3: expected 2 per-CPU counts",
    );
    assert_clean_failure(
        format!("{h} 1:  1 2  IO-APIC 1-edge i8042\n 8:  1").as_bytes(),
        "proc/interrupts:3:",
    );
    assert_clean_failure(b"\n\n", "proc/interrupts: file is empty");
    assert_clean_failure(
        b"      foo bar\n",
        "proc/interrupts:1: expected a header cell like CPU0",
    );
    assert_clean_failure(
        &[0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0xff, b'\n', 3],
        "proc/interrupts:1:",
    );
    let mut big = h.as_bytes().to_vec();
    big.extend(b" 1:");
    big.extend(std::iter::repeat_n(b' ', 10 << 20));
    assert_clean_failure(&big, "proc/interrupts: a line longer than 4194305 bytes");
}

/// A CPU twice in a header (or two `cpuN` lines of one CPU) is a
/// malformed file: exit 1, naming the file, the line and the CPU.
#[test]
fn a_duplicate_cpu_is_a_malformed_file() {
    assert_clean_failure(
        b"       CPU0   CPU1   CPU2   CPU1\n  1:  1  2  3  4  IO-APIC  1-edge  i8042\n",
        "proc/interrupts:1: duplicate CPU1 in the header",
    );
    let irqs: &[u8] = b"       CPU0   CPU1\n  1:  1  2  IO-APIC  1-edge  i8042\n";
    let stat: &[u8] = b"cpu  2 0 2 8\ncpu0 1 0 1 4\ncpu0 1 0 1 4\nintr 3 3\n";
    let dir = tree_with(&[("proc/interrupts", irqs), ("proc/stat", stat)]);
    let (code, _, err) = show(dir.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("proc/stat:3: duplicate cpu0 line"), "{err}");
}

/// A count above what the kernel prints is a note naming the file's real
/// path and line once (its deltas are gaps), not the file twice.
#[test]
fn a_count_out_of_the_kernel_range_is_noted_at_its_path_and_line() {
    let irqs: &[u8] =
        b"       CPU0   CPU1\n  1:  18446744073709551615  2  IO-APIC  1-edge  i8042\n";
    let softirqs: &[u8] = b"    CPU0 CPU1\n  TIMER: 18446744073709551615 2\n";
    let dir = tree_with(&[("proc/interrupts", irqs), ("proc/softirqs", softirqs)]);
    let (code, _, err) = show(dir.path(), &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    for file in ["interrupts", "softirqs"] {
        let want = format!(
            "{}/proc/{file}:2: expected a count the kernel can print",
            dir.path().display()
        );
        assert!(err.contains(&want), "{want} in {err}");
        assert!(!err.contains(&format!(": /proc/{file}")), "{err}");
    }
}

/// Bad values are usage errors (exit 2, clap's message),
/// refused before anything is read; an absurd interval is refused at once
/// instead of sleeping.
#[test]
fn bad_values_exit_2_before_sampling() {
    let cases: [(&[&str], &str); 7] = [
        (&["--irq", "("], "not a valid regular expression"),
        (&["--cpus", "5-2"], "--cpus"),
        (&["--interval", "5 parsecs"], "duration"),
        (&["-i", "0"], "greater than 0"),
        (&["-i", "-1s"], "the duration is negative"),
        (&["-i", "10000000000s"], "longest interval"),
        (&["-i", "99999999999999999999999s"], "out of range"),
    ];
    for (args, needle) in cases {
        let start = std::time::Instant::now();
        let out = irqlab()
            .args(["show", "--root"])
            .arg(fixture())
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(start.elapsed().as_secs() < 30, "{args:?} took too long");
    }
}

/// Without `--interval` the threshold is a count since boot: a bad one is
/// told so (as a rate with `--interval`), not only "a rate" as `top`'s,
/// and `--help` names it `MIN` as README.md does.
#[test]
fn a_bad_threshold_is_told_it_is_a_count_or_a_rate() {
    for (value, needle) in [
        (
            "-1",
            "\"-1\" is not a count (with --interval a rate per second) of 0 or more",
        ),
        (
            "lots",
            "expected a count like 1000 (with --interval a rate per second like 0.5), \
             found \"lots\"",
        ),
    ] {
        for interval in [&[][..], &["-i", "10ms"]] {
            let out = irqlab()
                .args(["show", "--root"])
                .arg(fixture())
                .args(interval)
                .args(["--threshold", value])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{value}: {err}");
            assert!(err.contains(needle), "{value}: {err}");
            assert!(!err.contains("not a rate"), "{value}: {err}");
        }
    }
    let help = irqlab().args(["show", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("--threshold <MIN>"), "{help}");
}

/// `--compact` / `--pretty` set the JSON layout: with a table or CSV they
/// are refused in one line (exit 2), not ignored.
#[test]
fn json_layout_flags_without_json_are_refused() {
    for format in ["table", "csv"] {
        for flag in ["--compact", "--pretty"] {
            let out = irqlab()
                .args(["show", "--root"])
                .arg(fixture())
                .args(["--format", format, flag])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{format} {flag}: {err}");
            let want = format!(
                "irqlab: error: the argument '{flag}' cannot be used with '--format {format}'"
            );
            assert!(err.starts_with(&want), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(out.stdout.is_empty());
        }
    }
    let v = json(&fixture(), &["--pretty"]);
    assert!(v["interrupts"].is_object());
}

#[test]
fn live_system_when_available() {
    if !Path::new("/proc/interrupts").exists() {
        crate::visible!("skipping: /proc/interrupts not present");
        return;
    }
    let v = json(Path::new("/"), &["--interval", "200ms", "--irq", "^LOC$"]);
    let loc = &v["interrupts"]["rows"][0];
    assert_eq!(loc["label"], "LOC");
    assert!(loc["total_rate"].as_f64().unwrap() >= 1.0, "{loc}");
}

/// `--irq` drops rows before parsing their counts when their text cannot
/// match (crate::filter::prefilter): a broken row the filter keeps is still an
/// error naming its line, a broken row it cannot keep is not read, and a
/// kept row after it keeps its line number in errors.
#[test]
fn irq_filter_reads_only_rows_it_can_keep_and_names_lines_right() {
    let h = "           CPU0       CPU1       \n";
    let body = format!(
        "{h} 1:  1 2  IO-APIC 1-edge i8042\n 2:  1 x  IO-APIC 2-edge virtio\nNMI:  3 4  Non-maskable interrupts\n"
    );
    let dir = tree_with(&[("proc/interrupts", &body)]);
    let run = |re: &str| {
        irqlab()
            .args(["show", "--format", "json", "--irq", re, "--root"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let o = run("^NMI$");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["interrupts"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    assert_eq!(rows[0]["label"], "NMI");
    assert_eq!(rows[0]["total"], 7);
    let o = run("virtio");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("proc/interrupts:3: expected 2 per-CPU counts"),
        "{err}"
    );
}

/// IRQ 24's affinity files hold `zz` (effective) and `0-` (configured):
/// its affinity is unknown, as for unreadable files, with one note per
/// file on stderr naming it, its text and what was expected. IRQ 36's
/// good one is shown as before.
#[test]
fn an_affinity_file_that_is_not_a_cpu_list_is_unknown_with_a_note() {
    let dir = common::fixture_copy("vm-2cpu-6.18");
    let irq24 = dir.path().join("proc/irq/24");
    std::fs::write(irq24.join("effective_affinity_list"), "zz\n").unwrap();
    std::fs::write(irq24.join("smp_affinity_list"), "0-\n").unwrap();
    let want = |file: &str, text: &str| {
        format!(
            "irqlab: note: {} not shown: expected a CPU list like `0-3,8`, found \"{text}\"\n",
            irq24.join(file).display()
        )
    };
    let notes = want("effective_affinity_list", "zz") + &want("smp_affinity_list", "0-");
    for args in [
        &["--format", "json", "--affinity"][..],
        &["--format", "json", "--affinity", "--sort", "total"],
        &["--format", "json", "--affinity", "--interval", "10ms"],
        &[
            "--format",
            "json",
            "--affinity",
            "--interval",
            "10ms",
            "--sort",
            "total",
        ],
    ] {
        let (code, out, err) = show(dir.path(), args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(err, notes, "{args:?}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let rows = v["interrupts"]["rows"].as_array().unwrap();
        let row = |label: &str| rows.iter().find(|r| r["label"] == label).unwrap();
        assert_eq!(row("24").get("affinity"), None, "{args:?}: unknown");
        assert!(row("36").get("affinity").is_some(), "{args:?}");
    }
    // the table too: no affinity column text for 24, the notes said
    let (code, out, err) = show(dir.path(), &[]);
    assert_eq!((code, err), (0, notes));
    assert!(
        !out.contains("[cpus zz]") && !out.contains("[cpus 0-]"),
        "{out}"
    );
    assert!(out.contains("[cpus 1]"), "IRQ 36's: {out}");
}

/// JSON carries affinity only with `--affinity`: every affinity file of
/// the tree holds `zz`, so a file read would give a note. Without the
/// flag no row has `affinity` and nothing is noted (none was read), in
/// each JSON path (one look streamed, sorted, pretty; over an interval,
/// sorted or not); with it every numbered row is noted. CSV, which has
/// no column for it, refuses the flag.
#[test]
fn json_carries_affinity_only_when_asked() {
    let dir = common::fixture_copy("vm-2cpu-6.18");
    for e in std::fs::read_dir(dir.path().join("proc/irq")).unwrap() {
        let d = e.unwrap().path();
        if d.is_dir() {
            for f in ["effective_affinity_list", "smp_affinity_list"] {
                std::fs::write(d.join(f), "zz\n").unwrap();
            }
        }
    }
    for args in [
        &["--format", "json"][..],
        &["--format", "json", "--sort", "total"],
        &["--format", "json", "--pretty"],
        &["--format", "json", "--interval", "10ms"],
        &["--format", "json", "--interval", "10ms", "--sort", "total"],
    ] {
        let (code, out, err) = show(dir.path(), args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert!(!out.contains("affinity"), "{args:?}: {out}");
        let asked = [args, &["--affinity"]].concat();
        let (code, out, err) = show(dir.path(), &asked);
        assert_eq!(code, 0, "{asked:?}: {err}");
        assert!(
            err.contains("effective_affinity_list not shown"),
            "{asked:?}: {err}"
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["interrupts"]["rows"].as_array().unwrap().len() > 1);
    }
    for args in [&[][..], &["--interval", "10ms"]] {
        let out = irqlab()
            .args(["show", "--format", "csv", "--affinity", "--root"])
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        common::refused(&out, "--affinity: CSV lines show no affinity");
        // and without the flag CSV reads none
        let (code, _, err) = show(dir.path(), &[&["--format", "csv"][..], args].concat());
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
    }
}

/// A line without `label:` fails `show` with the same error whether
/// `--irq` rules it out unread or not, in every format: a filter does not
/// make a malformed file look whole.
#[test]
fn a_line_without_a_label_fails_with_or_without_irq() {
    let dir = common::fixture_copy("vm-2cpu-6.18");
    let path = dir.path().join("proc/interrupts");
    let text = std::fs::read_to_string(&path).unwrap();
    let (head, tail) = text.split_at(text.find('\n').unwrap() + 1);
    std::fs::write(&path, format!("{head}garbage line here\n{tail}")).unwrap();
    for extra in [
        &[][..],
        &["--irq", "virtio"][..],
        &["--irq", "virtio", "--format", "json"][..],
        &["--irq", "virtio", "--format", "csv"][..],
    ] {
        let (code, out, err) = show(dir.path(), extra);
        assert_eq!(code, 1, "{extra:?}: {out}");
        assert!(out.is_empty(), "{extra:?}: {out}");
        assert!(
            err.contains("proc/interrupts:2: expected `label:` at the start of the line"),
            "{extra:?}: {err}"
        );
    }
}

/// A numbered row cut after its label (nothing, blanks, or a description
/// without its counts) fails `show` with the same error whether `--irq`
/// rules it out unread or not: the prefilter drops rows, not errors.
#[test]
fn a_numbered_row_without_its_counts_fails_with_or_without_irq() {
    let dir = common::fixture_copy("vm-2cpu-6.18");
    let path = dir.path().join("proc/interrupts");
    let text = std::fs::read_to_string(&path).unwrap();
    let (head, tail) = text.split_at(text.find('\n').unwrap() + 1);
    let (_, rest) = tail.split_at(tail.find('\n').unwrap() + 1);
    for cut in [" 24:", " 24:      ", " 24:  IO-APIC   5-edge      ACPI:Ged"] {
        std::fs::write(&path, format!("{head}{cut}\n{rest}")).unwrap();
        let (code, _, whole) = show(dir.path(), &[]);
        assert_eq!(code, 1, "{cut:?}: {whole}");
        assert!(whole.contains("proc/interrupts:2: "), "{cut:?}: {whole}");
        for extra in [
            &["--irq", "virtio"][..],
            &["--irq", "^NMI$", "--format", "json"][..],
            &["--irq", "virtio", "--format", "csv"][..],
        ] {
            let (code, out, err) = show(dir.path(), extra);
            assert_eq!(code, 1, "{cut:?} {extra:?}: {out}");
            assert!(out.is_empty(), "{cut:?} {extra:?}: {out}");
            assert_eq!(err, whole, "{cut:?} {extra:?}");
        }
    }
}

/// A summary row with more counts than the header has CPUs (an old vendor
/// kernel prints its IPI rows for the possible CPUs under a header of the
/// online ones: docs/formats/interrupts.md) is an irregular row kept
/// whole — every count in its total, none in its description — by the
/// whole parse and by `--irq`'s path alike; a numbered row with an extra
/// count is refused.
#[test]
fn a_summary_row_of_more_counts_than_cpus_is_kept_whole_with_or_without_irq() {
    let body = "           CPU0       \n 29:      85682         -  timer\nIPI1:      75373     107711      43906      30716  Rescheduling interrupts\nIPI2:         72         65  7  Function call interrupts\nErr:          0\n";
    let dir = tree_with(&[("proc/interrupts", body)]);
    for extra in [&[][..], &["--irq", "^IPI1$"][..], &["--irq", "timer"][..]] {
        let v = json(dir.path(), extra);
        let rows = v["interrupts"]["rows"].as_array().unwrap();
        for r in rows.iter().filter(|r| r["label"] == "IPI1") {
            assert_eq!(r["shape"], "irregular", "{extra:?}: {r}");
            assert_eq!(r["total"], 75373 + 107711 + 43906 + 30716, "{extra:?}");
            assert_eq!(r["description"], "Rescheduling interrupts", "{extra:?}");
        }
        let want = if extra.is_empty() { 4 } else { 1 };
        assert_eq!(rows.len(), want, "{extra:?}: {v}");
        let (code, out, err) = show(dir.path(), extra);
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(!out.is_empty(), "{extra:?}");
    }
    // (without `--irq`: a numbered row `--irq` drops is not read, so its
    // extra count is not seen there)
    let numbered = "           CPU0       \n 29:      85682      7  timer\nIPI1:      1     2  Rescheduling interrupts\n";
    let dir = tree_with(&[("proc/interrupts", numbered)]);
    let (code, _, err) = show(dir.path(), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("proc/interrupts:2: expected 1 per-CPU count"),
        "{err}"
    );
}
