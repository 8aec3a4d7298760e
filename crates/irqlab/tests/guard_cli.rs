//! The SystemGuard end to end through the real binary (hidden
//! `guard-selftest` subcommand) on fake trees: SIGINT and SIGTERM restore
//! and exit 130/143, a panic and an error restore, SIGKILL leaves the
//! journal for `irqlab restore`, and the journal-before-write order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use predicates::str::contains;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{read, tree_with as tree};

fn journal(root: &Path) -> std::path::PathBuf {
    root.join(".irqlab-journal.jsonl")
}

/// A running `guard-selftest`, killed on drop if the test fails early.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `guard-selftest --root ROOT ARGS --sleep 30s` and wait for `ready`.
fn start(root: &Path, args: &[&str]) -> Running {
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let child = std::process::Command::new(bin)
        .arg("guard-selftest")
        .arg("--root")
        .arg(root)
        .args(args)
        .args(["--sleep", "30s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn irqlab");
    let mut run = Running(child);
    let mut line = String::new();
    let out = run.0.stdout.take().expect("stdout");
    BufReader::new(out)
        .read_line(&mut line)
        .expect("read stdout");
    assert!(line.starts_with("ready"), "no ready line: {line:?}");
    run
}

fn signal(run: &Running, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &run.0.id().to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
}

/// Wait (at most 10 s) for the exit code and stderr.
fn finish(mut run: Running) -> (Option<i32>, String) {
    let t0 = Instant::now();
    while run.0.try_wait().expect("try_wait").is_none() {
        assert!(t0.elapsed() < Duration::from_secs(10), "did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut err = String::new();
    if let Some(mut e) = run.0.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).expect("stderr");
    }
    let status = run.0.wait().expect("wait");
    (status.code(), err)
}

const FILES: [(&str, &str); 2] = [
    ("proc/sys/vm/stat_interval", "1\n"),
    ("proc/irq/26/smp_affinity_list", "0-1\n"),
];
const SETS: [&str; 4] = ["--sysctl", "vm.stat_interval=7", "--irq-affinity", "26=1"];

fn assert_changed(root: &Path) {
    assert_eq!(read(root, "proc/sys/vm/stat_interval"), "7");
    assert_eq!(read(root, "proc/irq/26/smp_affinity_list"), "1");
}

fn assert_restored(root: &Path) {
    assert_eq!(read(root, "proc/sys/vm/stat_interval").trim(), "1");
    assert_eq!(read(root, "proc/irq/26/smp_affinity_list").trim(), "0-1");
    assert!(!journal(root).exists(), "journal left behind");
}

fn signalled(sig: &str, code: i32, name: &str) {
    let dir = tree(&FILES);
    let run = start(dir.path(), &SETS);
    assert_changed(dir.path());
    signal(&run, sig);
    let (status, err) = finish(run);
    assert_eq!(status, Some(code), "{err}");
    assert!(err.contains(name) && err.contains("restored"), "{err}");
    assert_restored(dir.path());
}

#[test]
fn sigint_restores_and_exits_130() {
    signalled("-INT", 130, "SIGINT");
}

#[test]
fn sigterm_restores_and_exits_143() {
    signalled("-TERM", 143, "SIGTERM");
}

#[test]
fn sigkill_leaves_journal_for_irqlab_restore() {
    let dir = tree(&FILES);
    let root = dir.path();
    let run = start(root, &SETS);
    signal(&run, "-KILL");
    let (status, _) = finish(run);
    assert_eq!(status, None);
    assert_changed(root);
    assert!(journal(root).exists());
    let again = common::irqlab()
        .args(["guard-selftest", "--set", "x=1", "--root"])
        .arg(root)
        .assert()
        .failure();
    again.stderr(contains("unrestored").and(contains("irqlab restore")));
    common::irqlab()
        .args(["restore", "--root"])
        .arg(root)
        .assert()
        .success()
        .stdout(contains(
            "restored proc/irq/26/smp_affinity_list = \"0-1\" (was set to \"1\")\nrestored proc/sys/vm/stat_interval",
        ));
    assert_restored(root);
    common::irqlab()
        .args(["restore", "--root"])
        .arg(root)
        .assert()
        .success()
        .stdout(contains("nothing to restore"));
}

use predicates::prelude::PredicateBooleanExt;

#[test]
fn panic_and_error_restore() {
    for (flag, code) in [("--panic", 101), ("--fail", 1)] {
        let dir = tree(&FILES);
        let out = common::irqlab()
            .args(["guard-selftest", flag, "--root"])
            .arg(dir.path())
            .args(SETS)
            .assert()
            .code(code);
        out.stderr(contains(flag.trim_start_matches('-')));
        assert_restored(dir.path());
    }
}

#[test]
fn trace_shows_journal_before_write_and_reverse_restore() {
    let dir = tree(&[("a", "1"), ("b", "x")]);
    let out = common::irqlab()
        .args([
            "guard-selftest",
            "--trace",
            "--set",
            "a=2",
            "--set",
            "b=y",
            "--root",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let steps: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("guard: "))
        .map(|l| l.split(" {").next().unwrap_or(""))
        .collect();
    assert_eq!(
        steps,
        [
            "journaled",
            "applied",
            "journaled",
            "applied",
            "restored",
            "restored"
        ],
        "{err}"
    );
    let order: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split("\"path\":\"").nth(1))
        .filter_map(|r| r.get(..1))
        .collect();
    assert_eq!(order, ["a", "a", "b", "b", "b", "a"]);
    assert_eq!(
        (read(dir.path(), "a"), read(dir.path(), "b")),
        ("1".into(), "x".into())
    );
}

#[test]
fn governor_on_fake_cpufreq_and_strict_without_it() {
    let cf = "sys/devices/system/cpu/cpufreq";
    let files: Vec<(String, String)> = (0..4)
        .flat_map(|p| {
            [
                (
                    format!("{cf}/policy{p}/scaling_governor"),
                    "powersave\n".to_string(),
                ),
                (
                    format!("{cf}/policy{p}/scaling_available_governors"),
                    "performance powersave\n".to_string(),
                ),
            ]
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = tree(&refs);
    let run = start(dir.path(), &["--governor"]);
    for p in 0..4 {
        assert_eq!(
            read(dir.path(), &format!("{cf}/policy{p}/scaling_governor")),
            "performance"
        );
    }
    signal(&run, "-INT");
    assert_eq!(finish(run).0, Some(130));
    for p in 0..4 {
        assert_eq!(
            read(dir.path(), &format!("{cf}/policy{p}/scaling_governor")),
            "powersave"
        );
    }

    let bare = tree(&FILES);
    common::irqlab()
        .args([
            "guard-selftest",
            "--governor",
            "--strict",
            "--sysctl",
            "vm.stat_interval=7",
            "--root",
        ])
        .arg(bare.path())
        .assert()
        .code(1)
        .stderr(contains("--strict").and(contains("no cpufreq on this machine")));
    assert_restored(bare.path());
}

#[test]
fn restore_is_listed_and_selftest_hidden() {
    common::irqlab()
        .arg("--help")
        .assert()
        .success()
        .stdout(contains("Undo host changes after a crash").and(contains("guard-selftest").not()));
}
