//! `irqlab bench` end to end against a fake tree (`--root`): the guard
//! writes a fake sysctl through HostFs, a `command` workload logs what it
//! sees, and the tests prove the order of events and that the host is
//! restored after success, a failing command, SIGINT and (with
//! `irqlab restore`) SIGKILL; plus results, resume and bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

const SYSCTL: &str = "proc/sys/kernel/irqlab_test";

fn fake_tree() -> tempfile::TempDir {
    common::bench_tree("6.18.44-fake", "boot-1", &[(SYSCTL, "0\n")])
}

fn sysctl(root: &Path) -> String {
    std::fs::read_to_string(root.join(SYSCTL))
        .unwrap()
        .trim()
        .to_string()
}

fn bench(root: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::cargo_bin("irqlab").unwrap();
    c.args(["bench", "--root"]).arg(root).arg("--out").arg(out);
    c.args([
        "--warmup",
        "0",
        "--measure",
        "LOC",
        "--sysctl",
        "kernel.irqlab_test=1",
    ]);
    c.args(extra);
    c
}

fn trials(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn order_of_events_and_restore_after_success() {
    let root = fake_tree();
    let out = root.path().join("out");
    let log = root.path().join("log");
    let probe = format!(
        "echo start $(cat {}) >> {}",
        root.path().join(SYSCTL).display(),
        log.display()
    );
    bench(
        root.path(),
        &out,
        &[
            "--label",
            "tip",
            "--trials",
            "3",
            "--trial-length",
            "100ms",
            "--workload",
            "command",
        ],
    )
    .args([
        "--start",
        &probe,
        "--stop",
        &format!("echo stop >> {}", log.display()),
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains("irq_loc_per_sec"));
    let log = std::fs::read_to_string(log).unwrap();
    assert_eq!(log, "start 1\nstop\nstart 1\nstop\nstart 1\nstop\n");
    assert_eq!(sysctl(root.path()), "0", "restored after success");
    assert!(!root.path().join(".irqlab-journal.jsonl").exists());
    let t = trials(&out.join("tip"));
    assert_eq!(t.len(), 3);
    assert_eq!(t[0]["variant"], "tip");
    assert_eq!(t[0]["boot_id"], "boot-1");
    assert_eq!(t[2]["metrics"]["irq_loc_per_sec"]["value"], 0.0);
    assert_eq!(t[0]["schema"], 2);
    assert_eq!(t[0]["trial"], 1, "trials are numbered from 1");
    assert_eq!(t[0]["metrics"]["irq_loc_per_sec"]["direction"], "none");
    // the one selected IRQ is the command workload's headline, for compare
    assert_eq!(t[0]["metrics"]["irq_loc_per_sec"]["headline"], true);
    let env: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("env.json")).unwrap()).unwrap();
    assert_eq!(env["kernel_release"], "6.18.44-fake");
    assert!(out.join("summary.json").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("tip/trials.csv"))
            .unwrap()
            .lines()
            .count(),
        4
    );
}

/// A summary that cannot be written names stdout, as every command's
/// output does: "stdout: No space left on device (os error 28)", exit 1.
#[test]
fn a_full_stdout_is_named() {
    if !Path::new("/dev/full").exists() {
        eprintln!("SKIPPED: no /dev/full");
        return;
    }
    let root = fake_tree();
    let run = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["bench", "--root"])
        .arg(root.path())
        .arg("--out")
        .arg(root.path().join("out"))
        .args(["--warmup", "0", "--measure", "LOC"])
        .args(["--sysctl", "kernel.irqlab_test=1", "--trials", "1"])
        .args(["--trial-length", "100ms", "--workload", "command"])
        .args(["--", "true"])
        .stdout(common::failing_stdio(true))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("irqlab: error: stdout: No space left on device (os error 28)"),
        "{err}"
    );
    assert_eq!(sysctl(root.path()), "0", "host restored");
}

#[test]
fn failing_command_is_reported_and_host_restored() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &[
            "--trials",
            "3",
            "--trial-length",
            "300ms",
            "--workload",
            "command",
            "--",
            "sh",
            "-c",
            "echo boom >&2; exit 3",
        ],
    )
    .assert()
    .code(1)
    .stderr(predicate::str::contains("exit status 3").or(predicate::str::contains("exit code 3")))
    .stderr(predicate::str::contains("boom"));
    assert_eq!(sysctl(root.path()), "0");
}

fn wait_for_trials(dir: &Path, n: usize, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if trials(dir).len() >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn spawn(root: &Path, out: &Path, trials: &str) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["bench", "--root"])
        .arg(root)
        .arg("--out")
        .arg(out)
        .args([
            "--label",
            "tip",
            "--warmup",
            "0",
            "--measure",
            "LOC",
            "--sysctl",
            "kernel.irqlab_test=1",
        ])
        .args([
            "--trials",
            trials,
            "--trial-length",
            "300ms",
            "--workload",
            "command",
            "--",
            "sleep",
            "1",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn signal(child: &std::process::Child, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn sigint_restores_and_keeps_finished_trials() {
    let root = fake_tree();
    let out = root.path().join("out");
    let mut child = spawn(root.path(), &out, "50");
    assert!(wait_for_trials(
        &out.join("tip"),
        2,
        Duration::from_secs(20)
    ));
    assert_eq!(sysctl(root.path()), "1", "changed while running");
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(sysctl(root.path()), "0", "restored after SIGINT");
    assert!(trials(&out.join("tip")).len() >= 2);
}

#[test]
fn sigkill_keeps_trials_and_restore_replays_the_journal_then_resume_finishes() {
    let root = fake_tree();
    let out = root.path().join("out");
    let mut child = spawn(root.path(), &out, "5");
    assert!(wait_for_trials(
        &out.join("tip"),
        3,
        Duration::from_secs(20)
    ));
    signal(&child, "-KILL");
    child.wait().unwrap();
    let kept = trials(&out.join("tip")).len();
    assert!((3..5).contains(&kept), "kept {kept}");
    assert_eq!(
        sysctl(root.path()),
        "1",
        "a SIGKILLed run cannot restore itself"
    );
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["restore", "--root"])
        .arg(root.path())
        .assert()
        .success();
    assert_eq!(sysctl(root.path()), "0", "irqlab restore undid the change");
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--resume"])
        .arg(&out)
        .assert()
        .success();
    let t = trials(&out.join("tip"));
    assert_eq!(t.len(), 5);
    let nums: Vec<u64> = t.iter().map(|x| x["trial"].as_u64().unwrap()).collect();
    assert_eq!(nums, vec![1, 2, 3, 4, 5]);
    assert_eq!(sysctl(root.path()), "0");
}

#[test]
fn variants_interleave_into_their_own_sets() {
    let root = fake_tree();
    let out = root.path().join("out");
    let log = root.path().join("log");
    let start = |name: &str| {
        format!(
            "--workload command --start 'echo {name} >> {}'",
            log.display()
        )
    };
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--root"])
        .arg(root.path())
        .arg("--out")
        .arg(&out)
        .args([
            "--warmup",
            "0",
            "--measure",
            "LOC",
            "--trials",
            "2",
            "--trial-length",
            "50ms",
        ])
        .args([
            "--variant",
            &format!("a={}", start("a")),
            "--variant",
            &format!("b={}", start("b")),
        ])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\nb\nb\na\n");
    assert_eq!(trials(&out.join("a")).len(), 2);
    assert_eq!(trials(&out.join("b")).len(), 2);
    Command::cargo_bin("irqlab")
        .unwrap()
        .arg("compare")
        .arg(&out)
        .assert()
        .success();
}

/// A variant's warm-up runs with the variant's own host preparation, as
/// its trials do (it ran on the host as the run left it: a variant's
/// sysctl was not set while it warmed up).
#[test]
fn a_variant_warms_up_with_its_own_preparation() {
    let root = fake_tree();
    let out = root.path().join("out");
    let log = root.path().join("log");
    let variant = |name: &str, value: u32| {
        format!(
            "{name}=--sysctl kernel.irqlab_test={value} --workload command \
             --start 'cat {} >> {}'",
            root.path().join(SYSCTL).display(),
            log.display()
        )
    };
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--root"])
        .arg(root.path())
        .arg("--out")
        .arg(&out)
        .args(["--warmup", "1", "--measure", "LOC", "--trials", "1"])
        .args(["--trial-length", "50ms"])
        .args(["--variant", &variant("a", 1), "--variant", &variant("b", 2)])
        .assert()
        .success();
    // warm-ups a, b, then round 1: a, b (the guard writes a value without
    // a newline; the tree's own "0\n" would show as a line)
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "1212");
    assert_eq!(sysctl(root.path()), "0");
}

/// `--cooldown` is the pause between trials: a run of one trial ends
/// without waiting it out (it waited after the last trial too, for
/// nothing, the run's host changes still made).
#[test]
fn no_cooldown_after_the_last_trial() {
    let root = fake_tree();
    let out = root.path().join("out");
    let t0 = Instant::now();
    bench(
        root.path(),
        &out,
        &["--trials", "1", "--trial-length", "50ms"],
    )
    .args(["--cooldown", "120s", "--workload", "command", "--", "true"])
    .assert()
    .success();
    assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
    assert_eq!(trials(&out.join("6.18.44-fake")).len(), 1);
    assert_eq!(sysctl(root.path()), "0");
}

#[test]
fn bad_input_fails_before_any_host_change() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &[
            "--measure",
            "no-such-irq",
            "--workload",
            "command",
            "--",
            "true",
        ],
    )
    .assert()
    .code(2)
    .stderr(predicate::str::contains("matches no interrupt; available"))
    .stderr(predicate::str::contains("virtio1-req.0"));
    assert_eq!(sysctl(root.path()), "0");
    let ro = root.path().join("ro");
    std::fs::write(&ro, "a file, not a directory").unwrap();
    bench(
        root.path(),
        &ro.join("sub"),
        &["--workload", "command", "--", "true"],
    )
    .assert()
    .code(1)
    .stderr(predicate::str::contains("cannot create output directory"));
    assert_eq!(sysctl(root.path()), "0");
    assert!(!root.path().join(".irqlab-journal.jsonl").exists());
}

/// The command workload's timed window holds the command's steady state
/// only: it opens once the command runs (after --settle) and closes before
/// the command is stopped, so a command that is slow to start and ignores
/// SIGTERM (1 s to SIGKILL) adds nothing to `duration_s`: every trial is
/// within 1 % of --trial-length (4 s: 40 ms for a busy machine's wake-ups;
/// a window that waited for the command's stop would add 1.2 s and more).
#[test]
fn command_window_excludes_start_and_termination() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &[
            "--label",
            "tip",
            "--trials",
            "2",
            "--trial-length",
            "4s",
            "--settle",
            "300ms",
            "--",
            "sh",
            "-c",
            "trap '' TERM; sleep 0.2; exec sleep 30",
        ],
    )
    .assert()
    .success();
    let t = trials(&out.join("tip"));
    assert_eq!(t.len(), 2);
    for x in &t {
        let d = x["duration_s"].as_f64().unwrap();
        assert!(
            (4.0..=4.04).contains(&d),
            "duration_s {d} is not within 1 % of --trial-length 4s: {x}"
        );
    }
}

fn spawn_piped(root: &Path, out: &Path, trials: &str) -> std::process::Child {
    spawn_with(root, out, trials, std::process::Stdio::piped())
}

fn spawn_with(
    root: &Path,
    out: &Path,
    trials: &str,
    stdout: std::process::Stdio,
) -> std::process::Child {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
    c.args(["bench", "--root"])
        .arg(root)
        .arg("--out")
        .arg(out)
        .args([
            "--label",
            "tip",
            "--warmup",
            "0",
            "--measure",
            "LOC",
            "--sysctl",
            "kernel.irqlab_test=1",
            "--trials",
            trials,
            "--trial-length",
            "300ms",
            "--",
            "sleep",
            "10",
        ])
        .stdout(stdout)
        .stderr(std::process::Stdio::piped());
    c.spawn().unwrap()
}

/// A bench ended by a signal exits 128 + signal even when its summary
/// cannot be printed: a closed stdout is silent, a full one is named, and
/// neither hides that the run was interrupted (before, a closed stdout
/// made it exit 0).
#[test]
fn an_interrupted_bench_keeps_its_exit_code_when_stdout_fails() {
    for full in [false, true] {
        let root = fake_tree();
        let out = root.path().join("out");
        let child = spawn_with(root.path(), &out, "50", common::failing_stdio(full));
        assert!(wait_for_trials(
            &out.join("tip"),
            1,
            Duration::from_secs(30)
        ));
        signal(&child, "-INT");
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(130), "full {full}: {err}");
        assert!(err.contains("interrupted by SIGINT"), "full {full}: {err}");
        assert_eq!(err.contains("stdout: No space left"), full, "{err}");
        assert_eq!(summary(&out)["interrupted"], "SIGINT");
        assert_eq!(sysctl(root.path()), "0", "restored");
    }
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

/// README's exit-code table: a bench ended by SIGINT or SIGTERM prints
/// what was measured and writes summary.json marked interrupted, with the
/// number of finished trials (the trial cut short is not one of them).
#[test]
fn interrupted_bench_prints_and_writes_the_summary_of_finished_trials() {
    for (sig, code, name) in [("-INT", 130, "SIGINT"), ("-TERM", 143, "SIGTERM")] {
        let root = fake_tree();
        let out = root.path().join("out");
        let child = spawn_piped(root.path(), &out, "50");
        assert!(wait_for_trials(
            &out.join("tip"),
            2,
            Duration::from_secs(30)
        ));
        signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(code), "{stderr}");
        assert_eq!(sysctl(root.path()), "0", "restored after {name}");
        let kept = trials(&out.join("tip")).len();
        assert!(kept >= 2, "{kept}");
        assert!(
            stdout.contains("irq_loc_per_sec"),
            "summary table: {stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "interrupted by {name}: {kept} of 50 trials finished"
            )),
            "{stdout}"
        );
        assert!(stderr.contains("--resume"), "{stderr}");
        let s = summary(&out);
        assert_eq!(s["interrupted"], name);
        assert_eq!(s["complete"], false);
        assert_eq!(s["finished_trials"], kept);
        assert_eq!(s["planned_trials"], 50);
        assert_eq!(s["variants"]["tip"]["irq_loc_per_sec"]["count"], kept);
    }
}

/// `--resume` of a run whose trials all finished runs nothing, writes
/// nothing, and says so.
#[test]
fn resume_of_a_finished_run_has_nothing_to_do() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &["--trials", "2", "--trial-length", "50ms", "--", "true"],
    )
    .assert()
    .success();
    let before: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--resume"])
        .arg(&out)
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("nothing to do"));
    let after: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before.len(), after.len(), "no env-resume file, nothing new");
    assert_eq!(summary(&out)["complete"], true);
}

/// Bad values are usage errors (exit 2) found before anything is
/// written: the --out directory is not created, so a retry with the same
/// --out is not blocked.
#[test]
fn refused_bench_creates_nothing() {
    let root = fake_tree();
    let irq = root.path().join("proc/irq/26");
    std::fs::create_dir_all(&irq).unwrap();
    std::fs::write(irq.join("smp_affinity_list"), "0-1\n").unwrap();
    let cpu = root.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::write(cpu.join("possible"), "0-1\n").unwrap();
    std::fs::write(cpu.join("online"), "0-1\n").unwrap();
    let out = root.path().join("out");
    let cases: [(&[&str], &str); 7] = [
        (&["--irq-affinity", "26=9"], "CPU 9 does not exist"),
        (
            &["--compact"],
            "'--compact' cannot be used with '--format table'",
        ),
        (
            &["--threads", "0"],
            "expected a whole number from 1 to 1048576",
        ),
        (&["--threads", "1"], "one thread wakes no one"),
        (&["--label", ""], "a variant needs a name"),
        (&["--label", " "], "a variant needs a name"),
        (&["--settle", "x"], "--settle"),
    ];
    for (args, says) in cases {
        let mut c = Command::cargo_bin("irqlab").unwrap();
        c.args(["bench", "--root"])
            .arg(root.path())
            .arg("--out")
            .arg(&out)
            .args(["--warmup", "0", "--trials", "1", "--trial-length", "50ms"])
            .args(["--sysctl", "kernel.irqlab_test=1"])
            .args(args);
        c.assert().code(2).stderr(predicate::str::contains(says));
        assert!(!out.exists(), "{args:?} created {}", out.display());
        assert_eq!(sysctl(root.path()), "0");
    }
}

/// A duration out of `--trial-length`'s or `--cooldown`'s range is
/// echoed as given (`9000h`, `5ms`), not in seconds (`32400000s`,
/// `0.005s`), and a negative one is told it is negative, as every other
/// duration flag's: exit 2, before anything is written.
#[test]
fn out_of_range_durations_are_echoed_as_given() {
    let root = fake_tree();
    let out = root.path().join("out");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--cooldown", "9000h"],
            "irqlab: error: --cooldown 9000h: at most 8760h (365 days)",
        ),
        (
            &["--cooldown", "540000m"],
            "irqlab: error: --cooldown 9000h: at most 8760h (365 days)",
        ),
        (
            &["--trial-length", "5ms"],
            "irqlab: error: --trial-length 5ms: a trial must last at least 10ms",
        ),
        (&["--cooldown", "-1s"], "the duration is negative: \"-1s\""),
        (
            &["--trial-length", "-2s"],
            "the duration is negative: \"-2s\"",
        ),
        (&["--settle", "-1s"], "the duration is negative: \"-1s\""),
        (
            &["--settle", "9000h"],
            "irqlab: error: --settle 9000h: at most 8760h (365 days)",
        ),
    ];
    for (args, says) in cases {
        let o = Command::cargo_bin("irqlab")
            .unwrap()
            .args(["bench", "--root"])
            .arg(root.path())
            .arg("--out")
            .arg(&out)
            .args(*args)
            .args(["--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("00000s"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} created {}", out.display());
    }
}

/// A count flag given something other than a whole number in its range
/// is told what is expected (not clap's "is not in 0..=4294967295" for a
/// flag that refuses 0, nor "invalid digit found in string"), exit 2,
/// before anything is written; `--variant`'s `--threads` alike.
#[test]
fn counts_that_are_not_whole_numbers_say_what_is_expected() {
    let root = fake_tree();
    let out = root.path().join("out");
    let all = "from 0 to 4294967295";
    let cases: &[(&str, &str, &str)] = &[
        ("--trials", "99999999999999", "from 1 to 4294967295"),
        ("--trials", "1e12", "from 1 to 4294967295"),
        ("--trials", "0", "from 1 to 4294967295"),
        ("--trials", "-1", "from 1 to 4294967295"),
        ("--warmup", "1e3", all),
        ("--warmup", "-1", all),
        ("--threads", "2.5", "from 1 to 1048576"),
        ("--seed", "-3", "from 0 to 18446744073709551615"),
    ];
    for &(flag, value, range) in cases {
        let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
            .args(["bench", "--root"])
            .arg(root.path())
            .arg("--out")
            .arg(&out)
            .args([flag, value, "--", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(
            err.contains(&format!("'{flag} <"))
                && err.contains(&format!(
                    "expected a whole number {range}, found \"{value}\""
                )),
            "{flag} {value}: {err}"
        );
        assert!(!out.exists(), "{flag} {value}");
    }
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["bench", "--root"])
        .arg(root.path())
        .arg("--out")
        .arg(&out)
        .args(["--variant", "a=--threads 1e3 -w timer", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("expected a whole number from 1 to 1048576, found \"1e3\""),
        "{err}"
    );
}

/// A run that fails before its first trial is finished (here: the
/// command fails in trial 1) removes what it wrote, so the same --out can
/// be used again.
#[test]
fn failed_run_without_trials_does_not_block_a_retry() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &[
            "--trials",
            "2",
            "--trial-length",
            "100ms",
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
    )
    .assert()
    .code(1);
    assert!(!out.exists(), "plan.json/env.json of a failed run remain");
    bench(
        root.path(),
        &out,
        &["--trials", "1", "--trial-length", "50ms", "--", "true"],
    )
    .assert()
    .success();
}

/// A command that exits cleanly before the window closes is said to on
/// stderr, per trial: the rest of the window measured what it left
/// running, not the command.
#[test]
fn a_command_that_ends_before_the_window_closes_is_warned_about() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &["--trials", "2", "--trial-length", "300ms", "--", "true"],
    )
    .assert()
    .success()
    .stderr(predicate::function(|e: &str| {
        e.matches("irqlab: warning: command `true` exited").count() == 2
            && e.matches("window (300 ms)").count() == 2
            && !e.contains("opened, before")
    }));
}

/// `--root TREE` with a live workload: the workload runs here, the
/// counters come from TREE. A tree that is not this running kernel (another
/// boot id) is said to be so in the warnings, env.json, every trial and
/// the summary.
#[test]
fn root_of_another_kernel_is_said_to_give_the_trees_counters() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &[
            "--label",
            "tip",
            "--trials",
            "1",
            "--trial-length",
            "50ms",
            "--",
            "true",
        ],
    )
    .assert()
    .success()
    .stderr(predicate::str::contains(
        "counters come from that tree (boot id boot-1)",
    ))
    .stdout(predicate::str::contains("note: --root"));
    let t = trials(&out.join("tip"));
    let notes = t[0]["notes"].to_string();
    assert!(notes.contains("not the workload's"), "{notes}");
    let env: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("env.json")).unwrap()).unwrap();
    assert!(env["warnings"].to_string().contains("--root"), "{env}");
    assert!(summary(&out)["notes"].to_string().contains("--root"));
    // no -0 from an empty sum of thread CPU
    assert_eq!(
        t[0]["metrics"]["irq_threads_cpu_pct"]["value"].to_string(),
        "0.0"
    );
}

/// The report's `--irq-affinity 36=1 --strict` on this VM: the disk's
/// queue IRQ is managed, the kernel refuses to move it, and under
/// --strict that is a usage error (exit 2) that leaves no --out behind.
/// Live (it asks the kernel to move an IRQ): only with the host-changes
/// opt-in, as root, on a machine with a managed queue IRQ.
#[test]
fn strict_refusal_of_a_managed_irq_creates_nothing() {
    if !common::host_changes_allowed("bench_cli: strict_refusal_of_a_managed_irq_creates_nothing") {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        visible!("strict_refusal_of_a_managed_irq_creates_nothing: SKIPPED: needs root");
        return;
    }
    let text = std::fs::read_to_string("/proc/interrupts").unwrap();
    let re = regex::Regex::new(r"^\s*(\d+):.*\b(virtio\d+-req\.\d+|nvme\d+q\d+)\s*$").unwrap();
    let Some(irq) = text
        .lines()
        .find_map(|l| re.captures(l).map(|c| c[1].to_string()))
    else {
        visible!("strict_refusal_of_a_managed_irq_creates_nothing: SKIPPED: no queue IRQ");
        return;
    };
    if common::host_lock_held("bench_cli: strict_refusal_of_a_managed_irq_creates_nothing") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--out"])
        .arg(&out)
        .args([
            "--trials",
            "1",
            "--warmup",
            "0",
            "--trial-length",
            "50ms",
            "--strict",
        ])
        .args(["--irq-affinity", &format!("{irq}=1"), "--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        visible!("strict_refusal_of_a_managed_irq_creates_nothing: SKIPPED: IRQ {irq} moved");
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    // a read-only affinity file is refused by validation, before any
    // change; a writable one the kernel refuses, by the write
    let said = stderr.contains("does not let IRQ") || stderr.contains("refuses");
    assert!(stderr.contains("--strict") && said, "{stderr}");
    assert!(!out.exists(), "a refused bench left {}", out.display());
}

/// `--target-effect` says, from the spread measured, how many trials per
/// variant compare needs for that change; a value that is no percentage
/// is a usage error before anything is written.
#[test]
fn target_effect_plans_the_trial_count_and_bad_values_are_usage_errors() {
    let root = fake_tree();
    let out = root.path().join("out");
    let o = bench(
        root.path(),
        &out,
        &[
            "--trials",
            "3",
            "--trial-length",
            "100ms",
            "--workload",
            "command",
            "--target-effect",
            "2%",
        ],
    )
    .args(["--", "sleep", "10"])
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(text.contains("target effect 2 %"), "{text}");
    assert!(text.contains("irq_loc_per_sec"), "{text}");
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let notes = s["notes"].to_string();
    assert!(notes.contains("target effect 2 %"), "{notes}");
    for bad in ["0", "abc", "100%", "-1%"] {
        let out = root.path().join(format!("bad-{bad}"));
        bench(root.path(), &out, &["--target-effect", bad])
            .assert()
            .code(2);
        assert!(!out.exists(), "{bad}: nothing is written");
    }
}

/// The first CPU this process may run on (from /proc/self/status).
fn first_allowed_cpu() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    list.split([',', '-']).next().unwrap().to_string()
}

/// An ipi ring confined to one CPU wakes its threads without an IPI: a
/// `--workload-cpus` of one CPU is refused like `--threads 1` (exit 2,
/// before any file or host change), for the run and for a variant.
#[test]
fn ipi_ring_on_one_cpu_is_refused() {
    let root = fake_tree();
    let out = root.path().join("out");
    let cpu = first_allowed_cpu();
    let one = format!("one=--workload-cpus {cpu}");
    let cases: [&[&str]; 2] = [
        &["--workload", "ipi", "--workload-cpus", &cpu],
        &["--variant", "two=--threads 2", "--variant", &one],
    ];
    for extra in cases {
        bench(root.path(), &out, extra)
            .args(["--trials", "1", "--trial-length", "50ms"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "--workload-cpus {cpu}: the ipi workload is a ring"
            )))
            .stderr(predicate::str::contains("send no IPI"));
        assert!(!out.exists(), "{extra:?} left {}", out.display());
        assert_eq!(sysctl(root.path()), "0");
    }
}

/// The tlb workload on one CPU sends no shootdown (its spinners were
/// dropped, --threads with them): refused like an ipi ring on one CPU.
#[test]
fn tlb_on_one_cpu_is_refused() {
    let root = fake_tree();
    let out = root.path().join("out");
    let cpu = first_allowed_cpu();
    bench(root.path(), &out, &["-w", "tlb", "--workload-cpus", &cpu])
        .args(["--threads", "3", "--trials", "1", "--trial-length", "50ms"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--workload-cpus {cpu}: the tlb workload unmaps"
        )))
        .stderr(predicate::str::contains("no TLB shootdown"));
    assert!(!out.exists(), "left {}", out.display());
    assert_eq!(sysctl(root.path()), "0");
}

/// A flag that nothing in the run would use is refused (exit 2, one line
/// naming it, before any file or host change) instead of being accepted
/// and ignored.
#[test]
fn flags_the_run_would_ignore_are_refused() {
    let root = fake_tree();
    let out = root.path().join("out");
    let cpu = first_allowed_cpu();
    let two = ["--variant", "a=--threads 2", "--variant", "b=--threads 3"];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--settle", "1s"],
            "--settle applies to --workload command (the wait before its timed window), \
             not --workload ipi",
        ),
        (
            &["-w", "timer", "--tmp-dir", "/tmp"],
            "--tmp-dir applies to --workload disk (the directory of its file), \
             not --workload timer",
        ),
        (
            &["--order", "random"],
            "--order random: a run of one variant has nothing to reorder",
        ),
        (
            &["--order", "random", "--variant", "a=--threads 2"],
            "--order random: a run of one variant",
        ),
        (
            &["--seed", "3", two[0], two[1], two[2], two[3]],
            "--seed seeds --order random only",
        ),
        (
            &["--label", "x", two[0], two[1], two[2], two[3]],
            "--label \"x\" names the variant of a run without --variant",
        ),
        (
            &["--threads", "2", "--", "true"],
            "--threads applies to --workload ipi, tlb, timer and disk, not --workload command",
        ),
        (
            &["-w", "net", "--threads", "2"],
            "--threads applies to --workload ipi, tlb, timer and disk, not --workload net",
        ),
        (
            &["--workload-cpus", &cpu, "--", "true"],
            "--workload-cpus places the built-in workloads, not --workload command",
        ),
        (
            &[
                "--variant",
                "a=--threads 2",
                "--variant",
                "b=--threads 3 -- true",
            ],
            "--variant b: --threads applies to",
        ),
    ];
    for (extra, msg) in cases {
        bench(root.path(), &out, extra)
            .args(["--trials", "1", "--trial-length", "50ms"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("irqlab: error: {msg}")));
        assert!(!out.exists(), "{extra:?} left {}", out.display());
        assert_eq!(sysctl(root.path()), "0");
    }
}

/// `--preset irq-rate` pins the workload to the last CPU, but not an ipi
/// ring (on one CPU it sends no IPI) or a command (irqlab does not place
/// it): the run goes on unpinned and says why.
#[test]
fn preset_leaves_an_ipi_ring_and_a_command_unpinned() {
    let root = fake_tree();
    let cases: [(&[&str], &str); 2] = [
        (&[], "an ipi ring on one CPU sends no IPI"),
        (&["--", "true"], "a command runs where it is started"),
    ];
    for (i, (extra, why)) in cases.iter().enumerate() {
        let out = root.path().join(format!("out{i}"));
        bench(root.path(), &out, &["--preset", "irq-rate"])
            .args(["--trials", "1", "--trial-length", "50ms"])
            .args(*extra)
            .assert()
            .success()
            .stderr(predicate::str::contains(format!(
                "--preset irq-rate: --governor performance (no --workload-cpus: {why})"
            )));
    }
}

/// The text between `start` and the next `end` in `text`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start:?}: {text}"))
        + start.len();
    let len = text[from..].find(end).unwrap();
    &text[from..from + len]
}

/// `irqlab` run with the words of `cmd` (as printed) in `cwd`.
fn run_printed(cmd: &str, cwd: &Path) -> std::process::Output {
    let words = shlex::split(cmd).unwrap();
    assert_eq!(words[0], "irqlab", "{cmd}");
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(&words[1..])
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// After a SIGKILL of a bench with `--root`, the commands irqlab prints
/// work as printed: the resume hint names `--root`, the resume refusal
/// names the `irqlab restore --root …` that undoes the tree's changes, and
/// the resume then finishes; a `--root` given to `--resume` is the one
/// used (from another directory, where the stored relative root is not).
#[test]
fn after_sigkill_the_printed_restore_and_resume_commands_work() {
    let root = fake_tree();
    let tree = root.path();
    let err_file = tree.join("stderr");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .current_dir(tree)
        .args(["bench", "--root", ".", "--out", "out", "--label", "tip"])
        .args(["--warmup", "0", "--measure", "LOC"])
        .args(["--sysctl", "kernel.irqlab_test=1"])
        .args(["--trials", "4", "--trial-length", "300ms"])
        .args(["--workload", "command", "--", "sleep", "1"])
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .unwrap();
    assert!(wait_for_trials(
        &tree.join("out/tip"),
        1,
        Duration::from_secs(20)
    ));
    signal(&child, "-KILL");
    child.wait().unwrap();
    assert_eq!(sysctl(tree), "1");
    let printed = std::fs::read_to_string(&err_file).unwrap();
    let resume = between(&printed, "(if interrupted: ", ")\n").to_string();
    assert_eq!(resume, "irqlab bench --resume out --root .");
    let refused = run_printed(&resume, tree);
    assert_eq!(refused.status.code(), Some(1));
    let refused = String::from_utf8_lossy(&refused.stderr);
    let restore = between(&refused, "undo them with `", "`");
    assert_eq!(restore, "irqlab restore --root .");
    assert!(run_printed(restore, tree).status.success());
    assert_eq!(sysctl(tree), "0", "the printed restore undid the change");
    let elsewhere = tempfile::tempdir().unwrap();
    let out = tree.join("out");
    let resumed = Command::cargo_bin("irqlab")
        .unwrap()
        .current_dir(elsewhere.path())
        .args(["bench", "--resume"])
        .arg(&out)
        .arg("--root")
        .arg(tree)
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(trials(&out.join("tip")).len(), 4);
    assert_eq!(sysctl(tree), "0");
}

/// Two variants whose labels name one results directory (`a b` and `a_b`
/// both write `<out>/a_b/`) would mix their trials in one file, and each
/// variant's summary would count the other's trials as its own: refused
/// as a usage error before anything is written.
#[test]
fn variants_that_share_a_results_directory_are_refused() {
    let root = fake_tree();
    let out = root.path().join("out");
    let o = bench(
        root.path(),
        &out,
        &[
            "--trials",
            "2",
            "--trial-length",
            "50ms",
            "--variant",
            "a b=-- true",
            "--variant",
            "a_b=-- true",
        ],
    )
    .output()
    .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("variants \"a b\" and \"a_b\" would both write their trials to <out>/a_b/"),
        "{e}"
    );
    assert!(!out.exists(), "nothing written");
}

/// The JSON summary follows show's layout rule: one line on a pipe,
/// indented with `--pretty`; the same document as summary.json.
#[test]
fn json_summary_is_one_line_on_a_pipe_unless_pretty() {
    let root = fake_tree();
    let run = |name: &str, extra: &[&str]| {
        let out = root.path().join(name);
        let args = [
            &[
                "--trials",
                "1",
                "--trial-length",
                "50ms",
                "--format",
                "json",
            ],
            extra,
            &["--", "true"],
        ]
        .concat();
        let o = bench(root.path(), &out, &args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc, summary(&out));
        text.lines().count()
    };
    assert_eq!(run("piped", &[]), 1);
    assert_eq!(run("compact", &["--compact"]), 1);
    assert!(run("pretty", &["--pretty"]) > 5);
}
