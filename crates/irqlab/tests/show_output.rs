//! `irqlab show` output guarantees against fake trees: a closed stdout is a
//! normal end, `/dev/null` a sink however opened, filters that select
//! nothing say so, nothing is folded or dropped from the table and CSV, a
//! directory where a file belongs is named, and the wording is singular
//! for one.

#![allow(clippy::unwrap_used)]

mod common;
use common::show;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn fixture() -> PathBuf {
    common::fixture("vm-2cpu-6.18")
}

/// A synth tree (`cpus`, `irqs`, offline CPUs) under `dir/tree`.
fn synth(dir: &Path, cpus: u32, irqs: u32, offline: &[u32]) -> PathBuf {
    let root = dir.join("tree");
    let mut spec = common::spec(cpus, irqs);
    spec.offline = offline.to_vec();
    common::synth_into(&spec, &root);
    root
}

/// Runs irqlab with stdout a pipe whose reading end is already closed
/// (deterministic EPIPE on the first write).
/// `irqlab ARGS --root ROOT`: its exit status and stderr.
fn run_at(root: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = common::irqlab()
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn with_closed_pipe(args: &[&str]) -> std::process::Output {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    std::process::Command::new(bin)
        .args(args)
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Runs irqlab through `sh` with descriptor 1 closed (`>&-`).
fn with_stdout_closed(args: &[&str]) -> (std::process::Output, Duration) {
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let start = Instant::now();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" >&-")
        .arg(bin)
        .args(args)
        .output()
        .unwrap();
    (out, start.elapsed())
}

#[test]
fn closed_stdout_is_a_normal_end_for_every_format() {
    let dir = tempfile::tempdir().unwrap();
    // 64 CPUs: every format is larger than a pipe buffer.
    let root = synth(dir.path(), 64, 40, &[]);
    let root = root.to_str().unwrap();
    for format in ["table", "json", "csv"] {
        let out = with_closed_pipe(&["show", "--root", root, "--format", format]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{format}: {err}");
        assert!(err.is_empty(), "{format}: {err}");
    }
    let out = with_closed_pipe(&["probe", "--root", root, "--reads", "2", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs irqlab with stdout `/dev/null` opened read-write, as Python's
/// `subprocess.DEVNULL` and systemd's `StandardOutput=null` hand it over.
fn with_rw_dev_null(args: &[&str]) -> (std::process::Output, Duration) {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let start = Instant::now();
    let out = std::process::Command::new(bin)
        .args(args)
        .stdout(Stdio::from(null))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (out, start.elapsed())
}

#[test]
fn read_write_dev_null_stdout_is_a_sink_that_keeps_exit_statuses() {
    let root = fixture();
    let root = root.to_str().unwrap();
    // the run goes to its end: 3 intervals of 300 ms after the baseline
    let (out, took) =
        with_rw_dev_null(&["top", "--batch", "--root", root, "-i", "300ms", "-n", "3"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        took >= Duration::from_millis(850),
        "top --batch ran {took:?}"
    );
    let (out, took) = with_rw_dev_null(&["show", "--root", root, "-i", "400ms"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(took >= Duration::from_millis(390), "show -i ran {took:?}");
    // errors and warnings are still said, with their exit status
    let (out, _) = with_rw_dev_null(&["show", "--root", "/nonexistent"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("irqlab: error:"), "{err}");
    let bad = common::tree_with(&[("proc/interrupts", "      foo bar\n")]);
    let (out, _) = with_rw_dev_null(&["show", "--root", bad.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("proc/interrupts:1:"), "{err}");
    let (out, _) = with_rw_dev_null(&["show", "--root", root, "--cpus", "99"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("--cpus 99 selects no CPU"), "{err}");
    // probe without --out measures
    let (out, _) = with_rw_dev_null(&["probe", "--root", root, "--reads", "2"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn python_devnull_child_runs_top_batch_to_its_count() {
    if !common::trace::runs("python3", "--version") {
        crate::visible!(
            "show_output: python_devnull_child_runs_top_batch_to_its_count: SKIPPED: no python3"
        );
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let root = fixture();
    let script = "import subprocess, sys, time\n\
        t = time.monotonic()\n\
        top = subprocess.run([sys.argv[1], 'top', '--batch', '-i', '300ms', '-n', '3', '--root', sys.argv[2]], stdout=subprocess.DEVNULL)\n\
        took = time.monotonic() - t\n\
        show = subprocess.run([sys.argv[1], 'show', '--root', '/nonexistent'], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n\
        print(top.returncode, took, show.returncode, show.stderr.decode().strip())\n";
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&bin)
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.split_whitespace().collect();
    assert!(f.len() > 3, "{out:?}");
    assert_eq!(f[0], "0", "{text}");
    let took: f64 = f[1].parse().unwrap();
    assert!(
        took >= 0.85,
        "top --batch -i 300ms -n 3 ended after {took} s"
    );
    assert_eq!(f[2], "1", "show --root /nonexistent: {text}");
    assert!(text.contains("irqlab: error:"), "{text}");
}

#[test]
fn stdout_closed_at_start_writes_nowhere_without_crashing() {
    let root = fixture();
    let root = root.to_str().unwrap();
    // main.rs's start reopens a closed descriptor 1 on /dev/null: a sink
    for format in ["table", "json", "csv"] {
        let (out, _) = with_stdout_closed(&["show", "--root", root, "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{format}: {out:?}");
        assert!(out.stderr.is_empty(), "{format}: {out:?}");
    }
    let (out, took) = with_stdout_closed(&[
        "top", "--batch", "--root", root, "-i", "200ms", "--count", "2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    assert!(
        took >= Duration::from_millis(390),
        "top --batch ran {took:?}"
    );
    let (out, _) = with_stdout_closed(&["show", "--root", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn cpu_filters_that_select_nothing_or_less_warn() {
    let (code, stdout, err) = show(&fixture(), &["--cpus", "99", "--format", "json"]);
    assert_eq!(code, 0);
    assert!(
        err.contains(
            "irqlab: warning: --cpus 99 selects no CPU: the sampled files list 2 CPUs (0-1)"
        ),
        "{err}"
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["interrupts"]["cpus"], serde_json::json!([]));
    // nothing summed: no aggregate `{"cpu": null}` line
    assert_eq!(v["stat"]["cpu_pct"], serde_json::json!([]), "{stdout}");
    assert_eq!(
        v["stat"]["aggregate_cpus"],
        serde_json::json!([]),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path(), 8, 4, &[6]);
    let (code, stdout, err) = show(&root, &["--cpus", "6,7", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    // CPU 6 is offline, not absent: its softirqs are shown
    assert!(
        err.contains(
            "--cpus 6-7: CPU 6 has no column in /proc/interrupts and no line in /proc/stat \
             (offline?); its softirqs are shown"
        ),
        "{err}"
    );
    assert!(!err.contains("not online"), "{err}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v["interrupts"]["cpus"],
        serde_json::json!([7]),
        "honest cpus"
    );
    // /proc/softirqs lists every possible CPU (offline ones with frozen
    // counts), so CPU6 stays there, honestly.
    assert_eq!(v["softirqs"]["cpus"], serde_json::json!([6, 7]));
}

#[test]
fn irq_filter_matching_nothing_warns() {
    let (code, _, err) = show(&fixture(), &["--irq", "^no-such-device$"]);
    assert_eq!(code, 0);
    assert!(
        err.contains("irqlab: warning: --irq \"^no-such-device$\" matches no interrupt row"),
        "{err}"
    );
    let (_, _, err) = show(&fixture(), &["--irq", "^LOC$"]);
    assert!(err.is_empty(), "{err}");
}

#[test]
fn aggregate_cpu_time_covers_the_selected_cpus() {
    let (_, stdout, _) = show(&fixture(), &["--cpus", "1", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let stat = &v["stat"];
    assert_eq!(stat["aggregate_cpus"], serde_json::json!([1]));
    let pct = stat["cpu_pct"].as_array().unwrap();
    assert_eq!(pct.len(), 2);
    assert!(pct[0]["cpu"].is_null() && pct[1]["cpu"] == 1);
    for k in [
        "user_pct",
        "nice_pct",
        "system_pct",
        "idle_pct",
        "softirq_pct",
    ] {
        let (a, b) = (pct[0][k].as_f64().unwrap(), pct[1][k].as_f64().unwrap());
        assert!((a - b).abs() < 1e-9, "{k}: aggregate {a} vs CPU1 {b}");
    }
    let (_, table, _) = show(&fixture(), &["--cpus", "1"]);
    assert!(table.contains("\nsel "), "{table}");
    assert!(table.contains("sel = CPU 1 together (--cpus)"), "{table}");
    let (_, table, _) = show(&fixture(), &[]);
    assert!(
        table.contains("\nall ") && !table.contains("sel ="),
        "{table}"
    );
}

#[test]
fn table_and_csv_keep_nice_actions_and_description() {
    let (_, table, _) = show(&fixture(), &[]);
    let head = table
        .lines()
        .find(|l| l.trim_start().starts_with("CPU ") && l.contains('%'))
        .unwrap();
    assert!(head.contains("USR%") && head.contains("NICE%"), "{head}");
    let (_, csv, _) = show(&fixture(), &["--format", "csv"]);
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "section",
            "label",
            "irq",
            "cpu",
            "value",
            "rate_per_sec",
            "actions",
            "description"
        ]
    );
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let irq24 = rows
        .iter()
        .find(|r| &r[0] == "interrupts" && &r[1] == "24")
        .unwrap();
    assert_eq!(&irq24[6], "ACPI:Ged");
    assert!(irq24[7].contains("IO-APIC"), "{irq24:?}");
    assert!(rows.iter().any(|r| &r[0] == "stat" && &r[1] == "nice_pct"));
    // Rates carry no float noise.
    let (_, csv, _) = show(&fixture(), &["--format", "csv", "-i", "20ms"]);
    for line in csv.lines().skip(1) {
        let rate = line.split(',').nth(5).unwrap_or("");
        let decimals = rate.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 3, "{line}");
    }
}

/// A directory where any of the three stats files belongs is refused by
/// name (exit 1) in `show`, `show -i` and `top --batch`, as README says:
/// never taken for a missing file and skipped.
#[test]
fn directory_where_a_file_belongs_is_named() {
    for rel in ["proc/interrupts", "proc/softirqs", "proc/stat"] {
        let dir = tempfile::tempdir().unwrap();
        let root = synth(dir.path(), 2, 3, &[]);
        std::fs::remove_file(root.join(rel)).unwrap();
        std::fs::create_dir(root.join(rel)).unwrap();
        let runs: [&[&str]; 3] = [
            &["show"],
            &["show", "-i", "10ms"],
            &["top", "--batch", "-i", "10ms", "-n", "1"],
        ];
        for args in runs {
            let (code, err) = run_at(&root, args);
            assert_eq!(code, Some(1), "{rel} {args:?}: {err}");
            let want = format!(
                "{} is a directory, expected a regular file",
                root.join(rel).display()
            );
            assert!(err.contains(&want), "{rel} {args:?}: {err}");
        }
    }
}

#[test]
fn one_cpu_is_singular() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path(), 1, 3, &[]);
    let (code, table, err) = show(&root, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("Interrupts (1 CPU)"), "{table}");
    assert!(table.contains("Softirqs (1 CPU)"), "{table}");
    assert!(!table.contains("1 CPUs"), "{table}");
    let (_, _, err) = show(&fixture(), &["--cpus", "5"]);
    assert!(err.contains("2 CPUs (0-1)"), "{err}");
    for line in err.lines() {
        assert!(line.starts_with("irqlab: "), "{line}");
    }
}

/// build.rs links GCC's unwinder into the binary when the C compiler has
/// `libgcc_eh.a`: then the binary names no `libgcc_s.so.1` to load at
/// start, and a panic still unwinds (`guard_cli`'s panic test restores
/// the host through it).
#[test]
fn the_binary_loads_no_libgcc_s_when_the_static_unwinder_is_there() {
    let eh = std::process::Command::new("cc")
        .arg("-print-file-name=libgcc_eh.a")
        .output();
    let found = eh.ok().and_then(|o| {
        let p = std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        (p.is_absolute() && p.is_file()).then_some(p)
    });
    if found.is_none() {
        visible!("the_binary_loads_no_libgcc_s_when_the_static_unwinder_is_there: SKIPPED: cc knows no libgcc_eh.a");
        return;
    }
    let bin = std::fs::read(assert_cmd::cargo::cargo_bin("irqlab")).unwrap();
    let needle = b"libgcc_s.so.1";
    assert!(
        !bin.windows(needle.len()).any(|w| w == needle),
        "the irqlab binary still names libgcc_s.so.1"
    );
}

/// A CPU that accounted no tick over the interval (a still fake tree)
/// keeps its line, with zeros, in the table, JSON and CSV; the CSV names
/// the `--cpus` sum `sel`, apart from the whole machine's line.
#[test]
fn cpus_without_ticks_keep_their_lines_and_csv_names_the_selected_sum() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path(), 4, 3, &[]);
    let (code, table, err) = show(&root, &["-i", "20ms"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("CPU time"))
        .skip(2)
        .collect();
    let labels: Vec<&str> = rows
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(labels, ["all", "0", "1", "2", "3"], "{table}");
    assert!(rows.iter().all(|l| l.contains("0.00")), "{table}");

    let (_, json, _) = show(&root, &["-i", "20ms", "--cpus", "1,2", "--format", "json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let pct = v["stat"]["cpu_pct"].as_array().unwrap();
    assert_eq!(pct.len(), 3, "{json}");
    assert!(pct.iter().all(|l| l["idle_pct"] == 0.0), "{json}");

    let (_, csv, _) = show(&root, &["-i", "20ms", "--cpus", "1,2", "--format", "csv"]);
    let cpus: Vec<&str> = csv
        .lines()
        .filter(|l| l.starts_with("stat,user_pct,"))
        .map(|l| l.split(',').nth(3).unwrap())
        .collect();
    assert_eq!(cpus, ["sel", "1", "2"], "{csv}");
    let (_, csv, _) = show(&root, &["--format", "csv"]);
    let first = csv.lines().find(|l| l.starts_with("stat,")).unwrap();
    assert_eq!(first.split(',').nth(3), Some(""), "whole machine: {csv}");
}

/// Files that disagree on the CPUs (`/proc/interrupts` lists 4, `/proc/stat`
/// 2) get one note on stderr in `show`, `show -i` and `top --batch`; a
/// consistent tree with an offline CPU (softirqs lists every possible CPU)
/// gets none.
#[test]
fn files_that_disagree_on_the_cpus_get_one_note() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path(), 4, 3, &[]);
    let stat = std::fs::read_to_string(root.join("proc/stat")).unwrap();
    let two: String = stat
        .lines()
        .filter(|l| !l.starts_with("cpu2 ") && !l.starts_with("cpu3 "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(root.join("proc/stat"), two).unwrap();
    let want = format!(
        "irqlab: note: the files disagree on the CPUs: {} lists 4 CPUs (0-3), {} lists 2 CPUs (0-1)",
        root.join("proc/interrupts").display(),
        root.join("proc/stat").display()
    );
    let runs: [&[&str]; 4] = [
        &["show"],
        &["show", "--format", "json"],
        &["show", "-i", "10ms", "--format", "json"],
        &["top", "--batch", "-i", "10ms", "-n", "2"],
    ];
    for args in runs {
        let (code, err) = run_at(&root, args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert_eq!(err.matches(&want).count(), 1, "{args:?}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path(), 4, 3, &[2]);
    let (_, _, err) = show(&root, &[]);
    assert!(!err.contains("disagree"), "{err}");
}

/// `tree`'s `rel` with `edit` applied to its text.
fn edit_file(root: &Path, rel: &str, edit: impl FnOnce(&str) -> String) {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, edit(&text)).unwrap();
}

/// Files that list the same CPUs in another order (a `CPU1 CPU0` header,
/// or `/proc/stat`'s `cpu1` line before `cpu0`) agree on the CPUs: no
/// note that two files disagree while naming the same CPUs in both, and
/// each count stays with its header's CPU id.
#[test]
fn the_same_cpus_in_another_order_are_no_disagreement() {
    let dir = tempfile::tempdir().unwrap();
    let header = synth(&dir.path().join("header"), 2, 3, &[]);
    edit_file(&header, "proc/interrupts", |t| {
        let (head, rest) = t.split_once('\n').unwrap();
        let swapped = head
            .replace("CPU0", "CPUx")
            .replace("CPU1", "CPU0")
            .replace("CPUx", "CPU1");
        format!("{swapped}\n{rest}")
    });
    let stat = synth(&dir.path().join("stat"), 2, 3, &[]);
    edit_file(&stat, "proc/stat", |t| {
        let line = |p: &str| t.lines().find(|l| l.starts_with(p)).unwrap().to_owned();
        let (cpu0, cpu1) = (line("cpu0 "), line("cpu1 "));
        t.replace(&cpu0, "CPU-A")
            .replace(&cpu1, &cpu0)
            .replace("CPU-A", &cpu1)
    });
    let runs: [&[&str]; 4] = [
        &["show"],
        &["show", "--format", "json"],
        &["show", "-i", "10ms", "--format", "json"],
        &["top", "--batch", "-i", "10ms", "-n", "2"],
    ];
    for root in [&header, &stat] {
        for args in runs {
            let (code, err) = run_at(root, args);
            assert_eq!(code, Some(0), "{args:?}: {err}");
            assert!(!err.contains("disagree"), "{args:?}: {err}");
        }
    }
    // the first count of `0:` is CPU1's under the swapped header
    let text = std::fs::read_to_string(header.join("proc/interrupts")).unwrap();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    let (_, csv, _) = show(&header, &["--format", "csv"]);
    for (cpu, count) in [("1", row[1]), ("0", row[2])] {
        let want = format!("interrupts,0,0,{cpu},{count},");
        assert!(csv.lines().any(|l| l.starts_with(&want)), "{want}: {csv}");
    }
}

/// An offline CPU has no column in `/proc/interrupts` nor a line in
/// `/proc/stat`, but `/proc/softirqs` lists every possible CPU: `--cpus`
/// of it shows its softirqs, and the warning says which files lack it
/// (not "selects no CPU"), in every format, with and without
/// `--interval`.
#[test]
fn cpus_of_an_offline_cpu_say_its_softirqs_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path(), 4, 3, &[3]);
    let want = "irqlab: warning: --cpus 3: CPU 3 has no column in /proc/interrupts and no line \
                in /proc/stat (offline?); its softirqs are shown";
    let modes: [&[&str]; 7] = [
        &[],
        &["--format", "csv"],
        &["--format", "json"],
        &["--format", "json", "--pretty"],
        &["--format", "json", "--sort", "irq"],
        &["-i", "20ms"],
        &["-i", "20ms", "--format", "json"],
    ];
    for extra in modes {
        let args: Vec<&str> = ["--cpus", "3"].iter().chain(extra).copied().collect();
        let (code, stdout, err) = show(&root, &args);
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!err.contains("selects no CPU"), "{extra:?}: {err}");
        if extra.contains(&"json") {
            let v: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(v["softirqs"]["cpus"], serde_json::json!([3]), "{extra:?}");
        }
    }
    // a CPU no file lists still selects nothing
    let (_, _, err) = show(&root, &["--cpus", "9"]);
    assert!(
        err.contains("--cpus 9 selects no CPU: the sampled files list 4 CPUs (0-3)"),
        "{err}"
    );
}

/// A row whose description holds terminal control bytes (ESC, BEL, NUL,
/// DEL, C1 CSI): the table and CSV show each as `\xNN`, columns measured
/// on the escaped text; JSON keeps the exact text.
#[test]
fn control_characters_from_the_tree_are_escaped() {
    let d = tempfile::tempdir().unwrap();
    let root = synth(d.path(), 4, 8, &[]);
    let path = root.join("proc/interrupts");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(
        "  7:          1          2          3          4  IO-APIC 1-edge \x1b[2J\x1b]0;pwned\x07evil\0nul\x7f\u{9b}c1\n",
    );
    std::fs::write(&path, text).unwrap();
    let bad = |s: &str| s.chars().any(|c| c != '\n' && (c.is_control()));
    let want = "\\x1b[2J\\x1b]0;pwned\\x07evil\\x00nul\\x7f\\x9bc1";
    let (code, table, err) = show(&root, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!bad(&table), "{table:?}");
    let row = table.lines().find(|l| l.contains("pwned")).unwrap();
    assert!(row.ends_with(want), "{row}");
    let head = table.lines().find(|l| l.contains("TOTAL")).unwrap();
    assert_eq!(row.find("  IO-APIC"), head.find("  CHIP"), "{table}");
    let (code, csv, err) = show(&root, &["--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(!bad(&csv), "{csv:?}");
    assert!(csv.contains(&format!(",IO-APIC 1-edge {want}\n")), "{csv}");
    let (_, json, _) = show(&root, &["--format", "json"]);
    assert!(json.contains("\\u001b]0;pwned\\u0007evil"), "{json}");
}

/// An `effective_affinity_list` that is a directory gets the note a file
/// that is not a CPU list gets (the configured list is shown instead),
/// the same with `--interval` (the live sampler's affinity reader), with
/// and without a filter of numbered IRQs.
#[test]
fn an_effective_affinity_that_is_a_directory_is_noted() {
    let d = tempfile::tempdir().unwrap();
    let root = synth(d.path(), 4, 8, &[]);
    let file = root.join("proc/irq/0/effective_affinity_list");
    let _ = std::fs::remove_file(&file);
    std::fs::create_dir(&file).unwrap();
    let (code, _, err) = show(&root, &[]);
    assert_eq!(code, 0, "{err}");
    let want = format!(
        "irqlab: note: {} not shown: expected a CPU list like `0-3,8`",
        file.display()
    );
    assert!(err.contains(&want), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let runs: [&[&str]; 4] = [
        &["--irq", "^0$"],
        &["-i", "10ms", "--irq", "^0$"],
        &["-i", "10ms", "--irq", "^0$", "--format=json", "--affinity"],
        &["-i", "10ms"],
    ];
    for run in runs {
        let (code, _, got) = show(&root, run);
        assert_eq!(code, 0, "{run:?}: {got}");
        assert_eq!(got, err, "{run:?}");
    }
}

/// Whether process `pid` holds `path` open (one of its descriptors).
fn holds_open(pid: u32, path: &Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == path))
    })
}

/// A row gone during `show -i` is said with `--format csv` too (on
/// stderr: the CSV has a line per row and CPU only), as the table and
/// JSON list it; the rows still there keep their lines.
#[test]
fn csv_interval_says_which_rows_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path(), 2, 4, &[]).canonicalize().unwrap();
    let path = root.join("proc/interrupts");
    let text = std::fs::read_to_string(&path).unwrap();
    let gone = text.lines().nth(1).unwrap();
    let label = gone.split(':').next().unwrap().trim().to_string();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["show", "-i", "2s", "--format", "csv", "--root"])
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the first sample is read once its last file is open
    let stat = root.join("proc/stat");
    assert!(common::wait_until(Duration::from_secs(20), || holds_open(
        child.id(),
        &stat
    )));
    common::replace(&path, &text.replacen(&format!("{gone}\n"), "", 1));
    let out = child.wait_with_output().unwrap();
    let (csv, err) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "irqlab: note: gone since the first sample (no CSV line): {label}\n"
        )),
        "{err}"
    );
    assert!(!csv.contains(&format!("interrupts,{label},")), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("interrupts,")), "{csv}");
}
