//! `irqlab top --batch` end to end against fake trees (`--root`): JSON
//! Lines shape, text lines, forced strategies, no stdin/TTY, closed stdout.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;
use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

/// 4 CPUs (CPU 2 offline), 12 IRQs.
fn synth(out: &Path) {
    let mut spec = common::spec(4, 12);
    spec.offline = vec![2];
    common::synth_into(&spec, out);
}

/// `irqlab top --batch --root ROOT` with stdin null and no TTY anywhere.
fn top(root: &Path) -> Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
    c.arg("top").arg("--root").arg(root).arg("--batch");
    c.stdin(Stdio::null());
    Command::from_std(c)
}

fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8(out.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn json_lines_have_the_documented_fields() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let out = top(d.path())
        .args(["-i", "20ms", "-n", "3", "--format", "json", "--affinity"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3);
    for v in &lines {
        for key in [
            "timestamp",
            "mono_ns",
            "interval_s",
            "interrupts",
            "softirqs",
            "cpu_pct",
            "threads",
            "self_cost",
            "strategy",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert!(v["timestamp"].as_str().unwrap().ends_with('Z'));
        assert!(v["interval_s"].as_f64().unwrap() > 0.0);
        assert_eq!(v["interrupts"]["cpus"], serde_json::json!([0, 1, 3]));
        let rows = v["interrupts"]["rows"].as_array().unwrap();
        assert!(rows.iter().all(|r| r["total_rate"].as_f64() == Some(0.0)));
        // the README's row fields, no more (affinity, asked for, when
        // /proc/irq/N exists)
        for r in rows {
            let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(|k| k.as_str()).collect();
            keys.sort_unstable();
            keys.retain(|&k| k != "affinity" && k != "gaps");
            let want = [
                "actions",
                "description",
                "irq",
                "label",
                "rates",
                "total",
                "total_rate",
            ];
            assert_eq!(keys, want);
        }
        assert!(rows.iter().any(|r| r.get("affinity").is_some()));
        let soft = v["softirqs"].as_object().unwrap();
        assert!(soft.contains_key("cpus") && soft.contains_key("rows"));
        assert!(v["self_cost"]["wall_ns"].as_u64().unwrap() > 0);
        assert_eq!(v["strategy"], "proc_interrupts");
    }
    let m0 = lines[0]["mono_ns"].as_u64().unwrap();
    assert!(lines[2]["mono_ns"].as_u64().unwrap() > m0);
}

/// Without `--affinity`, JSON lines carry no `affinity` and no affinity
/// file is read: a file that is not a CPU list, which `--affinity` notes,
/// goes unremarked.
#[test]
fn json_lines_carry_affinity_only_when_asked() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    for e in std::fs::read_dir(d.path().join("proc/irq")).unwrap() {
        let file = e.unwrap().path().join("effective_affinity_list");
        if file.exists() {
            std::fs::write(file, "zz\n").unwrap();
        }
    }
    let run = |extra: &[&str]| {
        let out = top(d.path())
            .args(["-i", "20ms", "-n", "2", "--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{extra:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        let with = json_lines(&out.stdout).iter().any(|v| {
            let rows = v["interrupts"]["rows"].as_array().unwrap();
            rows.iter().any(|r| r.get("affinity").is_some())
        });
        (with, err)
    };
    let (with, err) = run(&[]);
    assert!(!with, "no affinity unless asked");
    assert_eq!(err, "", "no affinity file read");
    let (with, err) = run(&["--affinity"]);
    assert!(with, "--affinity: rows carry it");
    assert!(err.contains("effective_affinity_list not shown"), "{err}");
}

#[test]
fn text_lines_start_with_the_time_and_cpus_filter_applies() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    top(d.path())
        .args(["-i", "10ms", "-n", "2", "--cpus", "0-1", "-v"])
        .assert()
        .success()
        .stdout(
            contains(" IRQ ")
                .and(contains("CPU0"))
                .and(contains("self: cpu")),
        )
        .stdout(contains("CPU3").not())
        .stderr(contains("strategy proc_interrupts: no --irq selection"));
    let out = top(d.path())
        .args(["-i", "10ms", "-n", "1"])
        .output()
        .unwrap();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        if line.starts_with("Average:") {
            continue;
        }
        let t = line.get(..12).unwrap();
        assert!(t.as_bytes()[2] == b':' && t.as_bytes()[8] == b'.', "{line}");
    }
}

fn add_cpu_files(root: &Path) {
    let dir = root.join("sys/devices/system/cpu");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("online"), "0-1,3\n").unwrap();
    std::fs::write(dir.join("possible"), "0-3\n").unwrap();
}

#[test]
fn forced_per_cpu_count_reads_only_selected_irqs() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    add_cpu_files(d.path());
    let first: u32 = std::fs::read_dir(d.path().join("sys/kernel/irq"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse().ok())
        .min()
        .unwrap();
    let re = format!("^{first}$");
    let out = top(d.path())
        .args(["-i", "10ms", "-n", "2", "--format", "json", "-v"])
        .args(["--irq", &re, "--strategy", "per-cpu-count"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("per_cpu_count: forced"), "{err}");
    for v in json_lines(&out.stdout) {
        assert_eq!(v["strategy"], "per_cpu_count");
        assert_eq!(v["interrupts"]["cpus"], serde_json::json!([0, 1, 3]));
        let rows = v["interrupts"]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["irq"], first);
        assert_eq!(rows[0]["rates"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn auto_strategy_reports_both_measurements() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    add_cpu_files(d.path());
    top(d.path())
        .args(["-i", "10ms", "-n", "1", "-v", "--irq", "."])
        .assert()
        .success()
        .stderr(contains("arch row"));
    let first = std::fs::read_dir(d.path().join("sys/kernel/irq"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse::<u32>().ok())
        .min()
        .unwrap();
    top(d.path())
        .args([
            "-i",
            "10ms",
            "-n",
            "1",
            "-v",
            "--irq",
            &format!("^{first}$"),
        ])
        .assert()
        .success()
        .stderr(contains("median of 20 reads: proc/interrupts"));
}

#[test]
fn closed_stdout_ends_quietly() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let mut child = std::process::Command::new(bin)
        .args([
            "top", "--batch", "--format", "json", "-i", "10ms", "-n", "200", "--root",
        ])
        .arg(d.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with('{'));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn interactive_without_a_terminal_and_zero_interval_are_refused() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["top", "--root"])
        .arg(d.path())
        .assert()
        .code(1)
        .stderr(contains(
            "needs a terminal on stdout (use --batch for scripts)",
        ));
}

#[test]
fn zero_and_negative_intervals_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    for (i, why) in [
        ("0", "must be greater than 0"),
        ("0s", "must be greater than 0"),
        ("-1s", "is negative"),
    ] {
        top(d.path())
            .args(["-i", i])
            .assert()
            .code(2)
            .stderr(contains(why));
    }
    top(d.path())
        .args(["--threshold", "-3"])
        .assert()
        .code(2)
        .stderr(contains("not a rate of 0 or more"));
}

/// `top --threshold` (and `replay`'s, which is top's) is a rate: `--help`
/// names it `RATE` as README.md does, where `show`'s is `MIN`.
#[test]
fn threshold_is_named_a_rate_in_help() {
    for cmd in ["top", "replay"] {
        Command::cargo_bin("irqlab")
            .unwrap()
            .args([cmd, "--help"])
            .assert()
            .success()
            .stdout(contains("--threshold <RATE>"));
    }
}

#[test]
fn batch_only_flags_are_refused_without_batch() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    for flags in [&["--format", "json"][..], &["-n", "3"]] {
        Command::cargo_bin("irqlab")
            .unwrap()
            .args(["top", "--root"])
            .arg(d.path())
            .args(flags)
            .assert()
            .code(2)
            .stderr(contains("--batch"));
    }
}

/// The text of `top --batch` with `args`.
fn text_of(root: &Path, args: &[&str]) -> String {
    let out = top(root).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The IRQ rows (label, device) of the first block of `text`.
fn irq_rows(text: &str) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) == Some(&"SUM") {
            break;
        }
        rows.push((f[1].to_string(), f[2].to_string()));
    }
    rows
}

#[test]
fn text_has_a_device_column_and_cpu_time_has_nice_and_iowait() {
    // (rows with their device names: unit tests in report/rates/text.rs, on
    // synth samples; a fake tree does not move between samples)
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let text = text_of(d.path(), &["-i", "10ms", "-n", "1"]);
    let header = text.lines().next().unwrap();
    assert!(
        header.contains(" IRQ ") && header.contains("DEVICE"),
        "{header}"
    );
    assert!(
        text.contains("%usr") && text.contains("%nice") && text.contains("%iowait"),
        "{text}"
    );
}

#[test]
fn sort_threshold_sum_and_average() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    // a fake tree does not move: every row is idle, and idle rows are hidden
    let text = text_of(d.path(), &["-i", "10ms", "-n", "2", "--threshold", "0"]);
    assert!(irq_rows(&text).is_empty(), "{text}");
    assert_eq!(
        text.matches(" SUM ").count(),
        3,
        "one per block and Average"
    );
    let avg: Vec<&str> = text.lines().filter(|l| l.starts_with("Average:")).collect();
    assert!(avg.iter().any(|l| l.contains(" SUM ")), "{text}");
    assert!(avg.iter().any(|l| l.contains("%iowait")), "{text}");
    assert!(text.lines().last().unwrap().starts_with("Average:"));
    for sort in ["rate", "total", "irq", "name"] {
        text_of(d.path(), &["-i", "10ms", "-n", "1", "--sort", sort]);
    }
    top(d.path()).args(["--sort", "size"]).assert().code(2);
}

/// `--threshold` hides the same rows in JSON Lines as in text: it was
/// ignored there (every row written). On a fake tree every row is idle:
/// none is written at any threshold, and without one every row is.
#[test]
fn json_lines_apply_the_threshold_as_text_does() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let rows = |args: &[&str]| -> Vec<usize> {
        let out = top(d.path())
            .args(["-i", "10ms", "-n", "2", "--format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out.stdout)
            .iter()
            .map(|l| l["interrupts"]["rows"].as_array().unwrap().len())
            .collect()
    };
    assert_eq!(rows(&["--threshold", "0"]), [0, 0]);
    assert_eq!(rows(&["--threshold", "5"]), [0, 0]);
    assert!(rows(&[]).iter().all(|&n| n > 0));
    let text = text_of(d.path(), &["-i", "10ms", "-n", "1", "--threshold", "5"]);
    assert!(irq_rows(&text).is_empty(), "{text}");
}

#[test]
fn sigterm_prints_the_average_and_exits_143() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["top", "--batch", "-i", "50ms", "--root"])
        .arg(d.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains(" IRQ "), "{line}");
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "128 + SIGTERM, as bench");
    assert!(rest.lines().any(|l| l.starts_with("Average:")), "{rest}");
}

/// True once `pid` catches SIGINT (bit 2 of `SigCgt` in /proc/PID/status).
fn catches_sigint(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let hex = s.lines().find_map(|l| l.strip_prefix("SigCgt:"))?.trim();
            u64::from_str_radix(hex, 16).ok()
        })
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

/// SIGINT ends a 600-s interval at once (exit 130); no interval ended,
/// so stdout is empty and stderr says that nothing was measured (it said
/// nothing).
#[test]
fn sigint_wakes_a_long_interval_at_once_and_exits_130() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args([
            "top", "--batch", "--format", "json", "-i", "600s", "-n", "2", "--root",
        ])
        .arg(d.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        common::wait_until(std::time::Duration::from_secs(60), || catches_sigint(pid)),
        "irqlab never installed its SIGINT handler"
    );
    let sent = std::time::Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "128 + SIGINT");
    // no interval ended: nothing on stdout, and stderr says why
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "irqlab: SIGINT before the first interval (-i 10m) ended: nothing measured\n"
    );
    // the sleep until the 600-s deadline is interrupted, not waited out
    // (bound generous for a loaded machine: the point is 60 s << 600 s)
    assert!(
        sent.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        sent.elapsed()
    );
}

/// A background job of a non-interactive shell starts with SIGINT
/// ignored (here `trap '' INT` before the exec). `top --batch` catches
/// SIGINT and SIGTERM before it reads anything, so a signal while it
/// starts (here while its `-v` lines wait on a full stderr, after the
/// baseline, before the first frame) ends the run at once with 128 +
/// signal and no frame; the handler came after that point, so SIGINT
/// was lost (the run went on to `-n`) and SIGTERM killed the process
/// (no exit code).
#[test]
fn a_signal_while_top_batch_starts_ends_it_with_128_plus_the_signal() {
    use common::stall::signal_at_first_stderr;
    use nix::sys::signal::Signal;
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    for (sig, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143)] {
        let stdout = tempfile::NamedTempFile::new().unwrap();
        let args = format!(
            "top --batch -v -i 50ms -n 600 --root '{}'",
            d.path().display()
        );
        let (status, text) = signal_at_first_stderr(&args, stdout.reopen().unwrap(), sig);
        let status = status.unwrap_or_else(|| panic!("{sig}: top still runs 10 s after it"));
        assert_eq!(status.code(), Some(code), "{sig}: 128 + signal");
        assert!(text.contains("interrupt threads tracked"), "{text}");
        let out = std::fs::read_to_string(stdout.path()).unwrap();
        assert!(out.is_empty(), "{sig}: no frame, so no Average: {out}");
    }
}

/// `top --trace` in a binary built without the `trace` feature: refused
/// before anything is read, exit 2, saying how to build it.
#[cfg(not(feature = "trace"))]
#[test]
fn trace_without_the_feature_says_how_to_build_it() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    for mode in [["-n", "1"], ["--format", "json"]] {
        top(d.path())
            .arg("--trace")
            .args(mode)
            .assert()
            .code(2)
            .stdout("")
            .stderr(contains(
                "irqlab: error: top --trace: this irqlab was built without eBPF tracing",
            ))
            .stderr(contains("cargo build --release -p irqlab --features trace"))
            .stderr(contains("clang"));
    }
    // the interactive view too (refused before it needs a terminal)
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
    c.arg("top")
        .arg("--root")
        .arg(d.path())
        .stdin(Stdio::null());
    Command::from_std(c)
        .arg("--trace")
        .assert()
        .code(2)
        .stderr(contains("--features trace"));
}

/// With the feature: a tree without tracefs is an error naming it (or
/// naming root), exit 1, and nothing on stdout.
#[cfg(feature = "trace")]
#[test]
fn trace_on_a_tree_without_tracefs_is_named() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let expect = if nix::unistd::geteuid().is_root() {
        "tracefs is not mountable"
    } else {
        "trace needs root"
    };
    top(d.path())
        .args(["--trace", "-n", "1", "--format", "json"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(contains(
            "irqlab: error: --trace: attaching the tracing programs",
        ))
        .stderr(contains(expect));
}

/// Filters that select nothing are said as `show` says them; a selection
/// of some CPUs is labelled `sel` and names its CPUs (text and JSON); a
/// selection of none has no aggregate line at all.
#[test]
fn filters_that_select_nothing_warn_and_the_aggregate_names_its_cpus() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path()); // CPUs 0, 1, 3 online
    for format in ["text", "json"] {
        let out = top(d.path())
            .args(["-i", "20ms", "-n", "1", "--format", format, "--cpus", "99"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            err.contains(
                "irqlab: warning: --cpus 99 selects no CPU: the sampled files list 4 CPUs (0-3)"
            ),
            "{format}: {err}"
        );
        // CPU 2 is offline: only /proc/softirqs lists it, and shows it
        let out = top(d.path())
            .args(["-i", "20ms", "-n", "1", "--format", format, "--cpus", "2"])
            .output()
            .unwrap();
        let err2 = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err2}");
        assert!(
            err2.contains(
                "irqlab: warning: --cpus 2: CPU 2 has no column in /proc/interrupts and no line \
                 in /proc/stat (offline?); its softirqs are shown"
            ),
            "{format}: {err2}"
        );
        assert!(!err2.contains("selects no CPU"), "{format}: {err2}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("\"cpu\":null"), "{stdout}");
        if format == "json" {
            let v = &json_lines(&out.stdout)[0];
            assert_eq!(v["cpu_pct"], serde_json::json!([]), "{v}");
            assert_eq!(v["aggregate_cpus"], serde_json::json!([]), "{v}");
        } else {
            let second = |l: &str| l.split_whitespace().nth(1).map(str::to_string);
            assert!(
                !stdout
                    .lines()
                    .any(|l| matches!(second(l).as_deref(), Some("all" | "sel"))),
                "{stdout}"
            );
        }
        let out = top(d.path())
            .args(["-i", "20ms", "-n", "1", "--format", format, "--irq", "zzz"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            err.contains("irqlab: warning: --irq \"zzz\" matches no interrupt row"),
            "{format}: {err}"
        );
    }
    // one CPU: the aggregate is `sel`, summing CPU 1, never `all`
    let out = top(d.path())
        .args(["-i", "20ms", "-n", "1", "--cpus", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().nth(1) == Some("sel")),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some("all")),
        "{text}"
    );
    assert!(text.contains("sel = CPU 1 together (--cpus)"), "{text}");
    let out = top(d.path())
        .args(["-i", "20ms", "-n", "1", "--cpus", "1-2", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cpus 1-2: CPU 2 has no column in /proc/interrupts"),
        "{err}"
    );
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["aggregate_cpus"], serde_json::json!([1]), "{v}");
    assert!(v["cpu_pct"][0]["cpu"].is_null(), "{v}");
    assert_eq!(v["cpu_pct"][1]["cpu"], 1, "{v}");
    // no --cpus: the kernel's all-CPU line, no aggregate_cpus
    let out = top(d.path())
        .args(["-i", "20ms", "-n", "1", "--format", "json"])
        .output()
        .unwrap();
    let v = &json_lines(&out.stdout)[0];
    assert!(v.get("aggregate_cpus").is_none(), "{v}");
}

/// Bad flag values are usage errors (exit 2, before anything is read), as
/// in `show`, for `--batch` and the interactive view alike (said before
/// "needs a terminal").
#[test]
fn bad_values_are_usage_errors_before_sampling() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let cases: [(&[&str], &str); 6] = [
        (&["--cpus", "5-2"], "--cpus"),
        (&["--irq", "("], "not a valid regular expression"),
        (&["-i", "10000000000s"], "longest interval (24h)"),
        (&["-i", "99999999999999999999999s"], "out of range"),
        (&["-n", "0"], "the count must be at least 1 interval"),
        (
            &["-n", "-1"],
            "expected a whole number of intervals, found \"-1\"",
        ),
    ];
    for (args, needle) in cases {
        let start = std::time::Instant::now();
        let out = top(d.path()).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.starts_with("irqlab: error:"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
        if args[0] == "-n" {
            continue; // --count needs --batch
        }
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
        c.arg("top").arg("--root").arg(d.path()).args(args);
        c.stdin(Stdio::null());
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "interactive {args:?}: {err}");
        assert!(!err.contains("needs a terminal"), "{args:?}: {err}");
    }
}

/// A one-frame text run's `Average:` block is its frame's block (the same
/// two snapshots and rows), line for line after the stamp column: the
/// run does not compute that report twice, and must print the same.
#[test]
fn one_frame_text_run_averages_to_its_frame() {
    let d = tempfile::tempdir().unwrap();
    common::synth_into(&common::spec(2, 4), d.path());
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
    c.arg("top").arg("--root").arg(d.path());
    c.args(["--batch", "-n", "1", "-i", "300ms"]);
    let child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // move IRQ 0 on CPU0 between the baseline and the frame (in place:
    // top keeps the file open); a late bump only leaves rates at zero
    std::thread::sleep(std::time::Duration::from_millis(120));
    let p = d.path().join("proc/interrupts");
    let text = std::fs::read_to_string(&p).unwrap();
    let body: String = text
        .lines()
        .map(|l| match l.trim_start().strip_prefix("0:") {
            Some(rest) => {
                let mut w: Vec<String> = rest.split_whitespace().map(String::from).collect();
                w[0] = (w[0].parse::<u64>().unwrap() + 900).to_string();
                format!("  0: {}\n", w.join(" "))
            }
            None => format!("{l}\n"),
        })
        .collect();
    let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    std::io::Write::write_all(&mut f, body.as_bytes()).unwrap();
    f.set_len(body.len() as u64).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    let rest = |l: &str| l.split_once("  ").unwrap().1.to_string();
    let (avg, frame): (Vec<&str>, Vec<&str>) = out.lines().partition(|l| l.starts_with("Average:"));
    assert!(!frame.is_empty(), "{out}");
    assert_eq!(
        frame.iter().map(|l| rest(l)).collect::<Vec<_>>(),
        avg.iter().map(|l| rest(l)).collect::<Vec<_>>(),
        "{out}"
    );
}

/// `text` with the first count of the row labelled `label` raised by
/// `add`, in the same width (the file keeps its length).
fn bump_first_count(text: &str, label: &str, add: u64) -> String {
    text.lines()
        .map(|l| match l.split_once(':') {
            Some((lab, rest)) if lab.trim() == label => {
                let first = rest.find(|c: char| c.is_ascii_digit()).unwrap();
                let end = first + rest[first..].find(' ').unwrap_or(rest.len() - first);
                let n: u64 = rest[first..end].parse().unwrap();
                format!("{lab}:{:>end$}{}\n", n + add, &rest[end..])
            }
            _ => format!("{l}\n"),
        })
        .collect()
}

/// s390: `EXT` (a class row) and `CLK` (its sub-class, "[EXT] Clock
/// Comparator") count the same interrupts; the SUM line adds them once.
#[test]
fn s390_sum_counts_a_sub_class_row_once() {
    let d = tempfile::tempdir().unwrap();
    let mut spec = common::spec(4, 10);
    spec.arch = irqlab_core::render::Arch::S390;
    common::synth_into(&spec, d.path());
    let ints = d.path().join("proc/interrupts");
    let original = std::fs::read_to_string(&ints).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (ints, stop) = (ints.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut k = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                k += 1;
                let text = bump_first_count(&original, "EXT", 100 * k);
                let text = bump_first_count(&text, "CLK", 100 * k);
                assert_eq!(text.len(), original.len());
                // in place: the sampler keeps the file open
                let mut f = std::fs::OpenOptions::new().write(true).open(&ints).unwrap();
                std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        })
    };
    let text = text_of(d.path(), &["-i", "200ms", "-n", "6"]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    let mut active = 0;
    let mut ext = None;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.get(1) {
            Some(&"IRQ") => ext = Some("0.0"),
            Some(&"EXT") => ext = Some(f[3]),
            Some(&"SUM") => {
                let sum = f[4];
                assert_eq!(Some(sum), ext, "SUM is EXT's rate alone:\n{text}");
                active += usize::from(sum != "0.0");
            }
            _ => {}
        }
    }
    assert!(active > 0, "EXT never moved:\n{text}");
    assert!(text.contains("[EXT] Clock Comparator"), "{text}");
}

/// On a still tree no CPU accounts a tick: every online CPU keeps its
/// `cpu_pct` line with zeros (JSON) and its text line (no `-` gap).
#[test]
fn cpus_without_ticks_keep_zero_lines() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    let out = top(d.path())
        .args(["-i", "20ms", "-n", "1", "--format", "json"])
        .output()
        .unwrap();
    let lines = json_lines(&out.stdout);
    let pct = lines[0]["cpu_pct"].as_array().unwrap();
    let cpus: Vec<&Value> = pct.iter().map(|l| &l["cpu"]).collect();
    assert_eq!(cpus, [&Value::Null, &0.into(), &1.into(), &3.into()]);
    assert!(pct.iter().all(|l| l["user_pct"] == 0.0), "{pct:?}");
    let text = text_of(d.path(), &["-i", "20ms", "-n", "1"]);
    let all = text
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("all"))
        .unwrap();
    assert!(
        all.contains("0.00") && !all.trim_end().ends_with('-'),
        "{text}"
    );
}

/// The same IRQ prints the same `description` under either strategy, the
/// text `show` prints (the `/proc/interrupts` row, its spacing kept).
#[test]
fn description_is_the_same_under_every_strategy() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    add_cpu_files(d.path());
    let (_, shown, _) = common::show(d.path(), &["--irq", "^0$", "--format", "json"]);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    let want = &shown["interrupts"]["rows"][0]["description"];
    assert!(want.as_str().unwrap().contains("   "), "{want}");
    for strategy in ["proc-interrupts", "per-cpu-count"] {
        let out = top(d.path())
            .args(["-i", "10ms", "-n", "1", "--format", "json"])
            .args(["--irq", "^0$", "--strategy", strategy])
            .output()
            .unwrap();
        let v = &json_lines(&out.stdout)[0];
        assert_eq!(
            &v["interrupts"]["rows"][0]["description"], want,
            "{strategy}"
        );
    }
}

/// An affinity file that is not a CPU list: the row has no `affinity`
/// (unknown) in every line, and the note is said once, not per sample.
#[test]
fn an_affinity_file_that_is_not_a_cpu_list_is_unknown_and_noted_once() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    // the first IRQ with both files
    let irq = std::fs::read_dir(d.path().join("proc/irq"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse::<u32>().ok())
        .filter(|n| {
            let dir = d.path().join(format!("proc/irq/{n}"));
            dir.join("effective_affinity_list").exists() && dir.join("smp_affinity_list").exists()
        })
        .min()
        .unwrap();
    let eff = d
        .path()
        .join(format!("proc/irq/{irq}/effective_affinity_list"));
    let conf = d.path().join(format!("proc/irq/{irq}/smp_affinity_list"));
    std::fs::write(&eff, "0-\n").unwrap();
    std::fs::write(&conf, "\x1b[2J\n").unwrap();
    let out = top(d.path())
        .args(["-i", "20ms", "-n", "3", "--format", "json", "--affinity"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let note = |p: &Path, text: &str| {
        format!(
            "irqlab: note: {} not shown: expected a CPU list like `0-3,8`, found {text}\n",
            p.display()
        )
    };
    assert_eq!(err, note(&eff, "\"0-\"") + &note(&conf, "\"\\u{1b}[2J\""));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3);
    for v in &lines {
        let rows = v["interrupts"]["rows"].as_array().unwrap();
        let bad = rows.iter().find(|r| r["irq"] == irq).unwrap();
        assert_eq!(bad.get("affinity"), None, "{bad}");
        assert!(rows.iter().any(|r| r.get("affinity").is_some()));
    }
}

/// A statistics file the tree lacks at the start is named once, saying
/// that it is not shown until a sample can read it: every sample tries
/// it, and the lines have it from the interval after the first sample
/// that reads it.
#[test]
fn a_statistics_file_missing_at_the_start_is_shown_once_a_sample_reads_it() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let softirqs = tree.join("proc/softirqs");
    let text = std::fs::read(&softirqs).unwrap();
    std::fs::remove_file(&softirqs).unwrap();
    let (child, mut lines) = common::top_batch_started_as(&tree, "json", "50ms", 30);
    // whole or absent to the sampler
    let part = d.path().join("softirqs.part");
    std::fs::write(&part, &text).unwrap();
    std::fs::rename(&part, &softirqs).unwrap();
    let all: String = lines.by_ref().map(|l| l + "\n").collect();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let said = format!(
        "irqlab: note: not shown until a sample can read it: {}: ",
        softirqs.display()
    );
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("not shown")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].starts_with(&said), "{err}");
    let lines = json_lines(all.as_bytes());
    assert_eq!(lines.len(), 30);
    assert!(lines[0]["softirqs"].is_null(), "{}", lines[0]);
    let from = lines
        .iter()
        .position(|v| !v["softirqs"].is_null())
        .expect("a line with proc/softirqs");
    assert!(lines[from..]
        .iter()
        .all(|v| !v["softirqs"]["rows"].as_array().unwrap().is_empty()));
}

#[test]
fn batch_with_a_root_that_is_a_file_says_it_is_not_a_directory() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("file");
    std::fs::write(&file, "").unwrap();
    top(&file)
        .args(["-i", "10ms", "-n", "1"])
        .assert()
        .code(1)
        .stderr(contains(format!(
            "--root {}: not a directory",
            file.display()
        )))
        .stderr(contains("nothing readable").not());
}

/// `--strategy per-cpu-count` with an `--irq` selection that keeps an
/// arch row (no `per_cpu_count` file, ever) is refused before anything
/// runs, the flags and the row named; an `--exclude` that drops the arch
/// row leaves numbered IRQs only, which it reads.
#[test]
fn per_cpu_count_with_an_arch_row_selected_is_refused() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    add_cpu_files(d.path());
    let want = |flags: &str| {
        format!(
            "irqlab: error: top --strategy per-cpu-count: {flags} keeps the arch row NMI, \
             which has no /sys/kernel/irq/N/per_cpu_count file (only /proc/interrupts \
             counts it); select numbered IRQs only, or use --strategy auto or proc-interrupts\n"
        )
    };
    let cases: [(&[&str], String); 2] = [
        (&["--irq", "^NMI$"], want("--irq \"^NMI$\"")),
        (
            &["--irq", "^(0|NMI)$", "--exclude", "^1$"],
            want("--irq \"^(0|NMI)$\" --exclude \"^1$\""),
        ),
    ];
    for (flags, want) in cases {
        let out = top(d.path())
            .args(["-n", "1", "-i", "10ms", "--strategy", "per-cpu-count"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{flags:?}");
        assert!(out.stdout.is_empty(), "{flags:?}");
    }
    // the interactive view: refused before it looks for a terminal
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("top")
        .arg("--root")
        .arg(d.path())
        .args(["--strategy", "per-cpu-count", "--irq", "^NMI$"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err, want("--irq \"^NMI$\""));
    let out = top(d.path())
        .args(["-n", "1", "-i", "10ms", "--format", "json"])
        .args(["--strategy", "per-cpu-count"])
        .args(["--irq", "^(0|NMI)$", "--exclude", "^NMI$"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(json_lines(&out.stdout)[0]["strategy"], "per_cpu_count");
    top(d.path())
        .args(["-n", "1", "-i", "10ms", "--irq", "^NMI$"])
        .assert()
        .success();
}

/// `--strategy per-cpu-count` is refused before anything runs, the flags
/// named, when `--irq` (less `--exclude`) keeps no numbered IRQ, or when
/// the selected IRQs' `per_cpu_count` files cannot be read (a kernel
/// without `/sys/kernel/irq`): it never falls back to `/proc/interrupts`
/// quietly. The same flags under `--strategy auto` run.
#[test]
fn per_cpu_count_that_cannot_apply_is_refused() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    add_cpu_files(d.path());
    let tail = "--strategy auto or proc-interrupts\n";
    let none = format!(
        "irqlab: error: top --strategy per-cpu-count: --irq \"^0$\" --exclude \".\" keeps no \
         numbered IRQ, so no /sys/kernel/irq/N/per_cpu_count file to read; select numbered \
         IRQs, or use {tail}"
    );
    let none_flags: &[&str] = &["--irq", "^0$", "--exclude", "."];
    let run = |root: &Path, flags: &[&str], strategy: &str| {
        top(root)
            .args(["-n", "1", "-i", "10ms", "--strategy", strategy])
            .args(flags)
            .output()
            .unwrap()
    };
    let refused = |out: std::process::Output, want: &str| {
        assert_eq!(out.status.code(), Some(2), "{want}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want);
        assert!(out.stdout.is_empty(), "{want}");
    };
    refused(run(d.path(), none_flags, "per-cpu-count"), &none);
    let out = run(d.path(), none_flags, "auto");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // the interactive view: refused before it looks for a terminal
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("top")
        .arg("--root")
        .arg(d.path())
        .args(["--strategy", "per-cpu-count"])
        .args(none_flags)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    refused(out, &none);
    // a kernel without /sys/kernel/irq (no CONFIG_SPARSE_IRQ, before 4.9)
    std::fs::remove_dir_all(d.path().join("sys/kernel/irq")).unwrap();
    let file = d.path().join("sys/kernel/irq/0/per_cpu_count");
    let unreadable = format!(
        "irqlab: error: top --strategy per-cpu-count: --irq \"^0$\" selects IRQs whose counts \
         cannot be read from /sys/kernel/irq/N/per_cpu_count (reading {}: No such file or \
         directory (os error 2); the files need Linux 4.9+ with CONFIG_SPARSE_IRQ); use {tail}",
        file.display()
    );
    refused(
        run(d.path(), &["--irq", "^0$"], "per-cpu-count"),
        &unreadable,
    );
    let out = run(d.path(), &["--irq", "^0$"], "auto");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Flags that cannot apply are refused (exit 2, the flag named) before
/// anything runs: `--sort` other than rate with JSON Lines (documented as
/// always by rate), `--strategy per-cpu-count` without an `--irq`
/// selection, `--affinity` with text lines; the same flags that can
/// apply run.
#[test]
fn sort_with_json_and_per_cpu_count_without_irq_are_refused() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path());
    for sort in ["name", "irq", "total"] {
        let out = top(d.path())
            .args(["--format", "json", "-n", "1", "-i", "10ms", "--sort", sort])
            .output()
            .unwrap();
        common::refused(
            &out,
            &format!("--sort {sort}: JSON Lines rows are always by rate"),
        );
    }
    top(d.path())
        .args([
            "--format", "json", "-n", "1", "-i", "10ms", "--sort", "rate",
        ])
        .assert()
        .success();
    let out = top(d.path())
        .args(["-n", "1", "-i", "10ms", "--strategy", "per-cpu-count"])
        .output()
        .unwrap();
    common::refused(&out, "--strategy per-cpu-count needs --irq");
    let out = top(d.path())
        .args(["-n", "1", "-i", "10ms", "--affinity"])
        .output()
        .unwrap();
    common::refused(
        &out,
        "--affinity: text lines show no affinity (use --format json",
    );
}

/// `top --batch --format FORMAT -i 100ms -n 8` on `root`, its `file`
/// replaced by `then` once the first frame is out: the child's whole
/// stdout (the first frame read with the baseline's rows in it).
fn run_with_a_row_freed(root: &Path, format: &str, file: &str, then: &str) -> String {
    let (child, mut lines) = common::top_batch_started_as(root, format, "100ms", 8);
    let mut text = String::new();
    // the first frame's lines are read: the change falls in a later one
    common::replace(&root.join(file), then);
    for line in lines.by_ref() {
        text += &line;
        text.push('\n');
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    text
}

/// An IRQ freed between two samples: text names it, in the frame whose
/// interval lost it (`gone since the previous sample:`, the labels JSON's
/// `gone` lists) and in `Average:` (`gone since the first sample:`, as
/// `show` says it); no other block has a gone line.
#[test]
fn text_names_the_rows_gone_between_samples_as_json_does() {
    let d = tempfile::tempdir().unwrap();
    common::synth_into(&common::spec(2, 4), d.path());
    let text = common::read(d.path(), "proc/interrupts");
    let numbered = |l: &&str| {
        l.split_once(':')
            .is_some_and(|(lab, _)| lab.trim().parse::<u32>().is_ok())
    };
    let freed = text.lines().rfind(numbered).unwrap();
    let label = freed.split_once(':').unwrap().0.trim().to_string();
    let then: String = text
        .lines()
        .filter(|l| *l != freed)
        .map(|l| format!("{l}\n"))
        .collect();
    let json = run_with_a_row_freed(d.path(), "json", "proc/interrupts", &then);
    let frames = json_lines(json.as_bytes());
    let gone: Vec<&Value> = frames
        .iter()
        .map(|v| &v["interrupts"]["gone"])
        .filter(|g| !g.is_null())
        .collect();
    assert_eq!(gone, [&serde_json::json!([label])], "{json}");

    common::synth_into(&common::spec(2, 4), d.path());
    let out = run_with_a_row_freed(d.path(), "text", "proc/interrupts", &then);
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("gone")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    let (stamp, rest) = lines[0].split_once("  ").unwrap();
    assert!(stamp.contains(':') && stamp != "Average:", "{out}");
    assert_eq!(rest, format!("gone since the previous sample: {label}"));
    assert_eq!(
        lines[1],
        format!("Average:  gone since the first sample: {label}")
    );
    // the frame's gone line follows its SUM line
    let at = out.find(lines[0]).unwrap();
    let before = out[..at].lines().last().unwrap();
    assert!(before.contains(" SUM "), "{out}");
}

/// A softirq vector gone between two samples: JSON lists it in
/// `softirqs.gone` and text names it after the frame's softirq lines and
/// in `Average:`, as it names a gone interrupt row.
#[test]
fn text_names_the_softirq_vectors_gone_between_samples_as_json_does() {
    let d = tempfile::tempdir().unwrap();
    common::synth_into(&common::spec(2, 4), d.path());
    let text = common::read(d.path(), "proc/softirqs");
    let freed = text.lines().find(|l| l.contains("TASKLET:")).unwrap();
    let then: String = text
        .lines()
        .filter(|l| *l != freed)
        .map(|l| format!("{l}\n"))
        .collect();
    let json = run_with_a_row_freed(d.path(), "json", "proc/softirqs", &then);
    let gone: Vec<Value> = json_lines(json.as_bytes())
        .into_iter()
        .map(|v| v["softirqs"]["gone"].clone())
        .filter(|g| !g.is_null())
        .collect();
    assert_eq!(gone, [serde_json::json!(["TASKLET"])], "{json}");

    common::synth_into(&common::spec(2, 4), d.path());
    let out = run_with_a_row_freed(d.path(), "text", "proc/softirqs", &then);
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("gone")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    let (stamp, rest) = lines[0].split_once("  ").unwrap();
    assert!(stamp.contains(':') && stamp != "Average:", "{out}");
    assert_eq!(rest, "gone since the previous sample: TASKLET");
    assert_eq!(lines[1], "Average:  gone since the first sample: TASKLET");
    // the frame's gone line follows its softirq lines
    let at = out.find(lines[0]).unwrap();
    let before = out[..at].lines().last().unwrap();
    assert!(before.contains(" RCU "), "{out}");
}

/// Text's `Average:` block lists the interrupt threads, as pidstat's
/// does: each one's share of a CPU from the baseline to the last sample,
/// with no last CPU (`-`). ksoftirqd/0 runs 150 ms between the first
/// frame and the last; ksoftirqd/1 never runs.
#[test]
fn average_lists_each_thread_over_the_whole_run() {
    let d = tempfile::tempdir().unwrap();
    common::synth_into(&common::spec(2, 4), d.path());
    common::fake_thread(d.path(), 14, "ksoftirqd/0", 1_000_000);
    common::fake_thread(d.path(), 24, "ksoftirqd/1", 2_000_000);
    let (mut child, lines) = common::top_batch_started_as(d.path(), "text", "300ms", 3);
    // in place: top keeps the file open
    let p = d.path().join("proc/14/schedstat");
    let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    std::io::Write::write_all(&mut f, b"151000000 0 2\n").unwrap();
    let out: Vec<String> = lines.collect();
    assert!(child.wait().unwrap().success());
    let avg: Vec<Vec<&str>> = out
        .iter()
        .filter_map(|l| l.strip_prefix("Average:"))
        .map(|l| l.split_whitespace().collect())
        .filter(|w: &Vec<&str>| w.last().is_some_and(|n| n.starts_with("ksoftirqd/")))
        .collect();
    assert_eq!(avg.len(), 2, "{out:#?}");
    let share = |pid: &str| -> f64 {
        let w = avg.iter().find(|w| w[0] == pid).unwrap();
        assert_eq!(w[2], "-", "no last CPU over a run: {w:?}");
        w[1].parse().unwrap()
    };
    // 150 ms over the run's ~0.9 s (3 intervals of 300 ms; a late last
    // sample only lengthens it)
    let a = share("14");
    assert!((10.0..=16.7).contains(&a), "{a}: {out:#?}");
    assert_eq!(share("24"), 0.0, "{out:#?}");
    // the frames' own lines keep their last CPU
    assert!(out
        .iter()
        .any(|l| !l.starts_with("Average:") && l.ends_with("ksoftirqd/0")));
}
