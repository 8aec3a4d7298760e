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
        "--irq",
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
            "--duration",
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
            "--duration",
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
            "--irq",
            "LOC",
            "--sysctl",
            "kernel.irqlab_test=1",
        ])
        .args([
            "--trials",
            trials,
            "--duration",
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
            "--irq",
            "LOC",
            "--trials",
            "2",
            "--duration",
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

#[test]
fn bad_input_fails_before_any_host_change() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(
        root.path(),
        &out,
        &[
            "--irq",
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
