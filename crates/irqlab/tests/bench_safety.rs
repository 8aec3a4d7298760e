//! `irqlab bench` never mixes, drops or leaks: an output directory holding
//! a run is refused without `--resume`, `--resume` refuses changed flags,
//! a command after `--` runs the command workload, bad flags fail with
//! exit code 2 before any file, and SIGINT/SIGTERM/SIGKILL (+ `irqlab
//! restore`) leave no process of the workload's group and no temporary
//! file behind. Against a fake tree (`--root`); the workloads are real.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use nix::errno::Errno;
use nix::sys::signal::killpg;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SYSCTL: &str = "proc/sys/kernel/irqlab_test";

fn fake_tree() -> tempfile::TempDir {
    common::bench_tree("6.18-fake", "b", &[(SYSCTL, "0\n")])
}

fn bench(root: &Path) -> Command {
    let mut c = Command::cargo_bin("irqlab").unwrap();
    c.args(["bench", "--root"]).arg(root);
    c.args(["--warmup", "0", "--measure", "LOC", "--label", "tip"]);
    c
}

fn trials(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn quick_run(root: &Path, out: &Path, n: &str) {
    bench(root)
        .arg("--out")
        .arg(out)
        .args(["--trials", n, "--trial-length", "50ms", "--", "true"])
        .assert()
        .success();
}

#[test]
fn out_dir_with_results_refuses_without_resume() {
    let root = fake_tree();
    let out = root.path().join("out");
    quick_run(root.path(), &out, "3");
    let plan = std::fs::read(out.join("plan.json")).unwrap();
    bench(root.path())
        .arg("--out")
        .arg(&out)
        .args(["--trials", "1", "--trial-length", "50ms", "-w", "timer"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "already holds the results of a run",
        ))
        .stderr(predicate::str::contains("--resume"));
    assert_eq!(
        std::fs::read(out.join("plan.json")).unwrap(),
        plan,
        "untouched"
    );
    assert_eq!(trials(&out.join("tip")).len(), 3);
}

#[test]
fn resume_refuses_changed_trials_flag() {
    let root = fake_tree();
    let out = root.path().join("out");
    quick_run(root.path(), &out, "2");
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--resume"])
        .arg(&out)
        .args(["--trials", "4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--trials differs from the stored run (2 there, 4 here)",
        ));
    // The same value, or no flag at all, continues (nothing left to run).
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--resume"])
        .arg(&out)
        .args(["--trials", "2"])
        .assert()
        .success();
    assert_eq!(trials(&out.join("tip")).len(), 2);
}

#[test]
fn command_after_dashdash_runs_command_workload() {
    let root = fake_tree();
    let out = root.path().join("out");
    let mark = root.path().join("ran");
    bench(root.path())
        .arg("--out")
        .arg(&out)
        // 2 s: on a busy machine starting a shell may take a while.
        .args(["--trials", "2", "--trial-length", "2s", "--", "sh", "-c"])
        .arg(format!("echo x >> {}", mark.display()))
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "x\nx\n");
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["workloads"][0], "command");
    // With another workload named explicitly it is a usage error.
    bench(root.path())
        .arg("--out")
        .arg(root.path().join("out2"))
        .args(["-w", "ipi", "--start", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs --workload command"));
    assert!(!root.path().join("out2").exists());
}

#[test]
fn bad_flags_fail_before_any_file() {
    let root = fake_tree();
    let out = root.path().join("out");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--trials", "0", "--", "true"],
            "expected a whole number from 1 to 4294967295, found \"0\"",
        ),
        (&["--trial-length", "0s", "--", "true"], "--trial-length 0s"),
        (
            &["--trial-length", "1ns", "--", "true"],
            "--trial-length 1ns: a trial must last at least 10ms",
        ),
        (
            &["-w", "ipi", "--trial-length", "4000000000000000h"],
            "--trial-length 4000000000000000h: at most 8760h (365 days)",
        ),
        (
            &["--cooldown", "8761h", "--", "true"],
            "--cooldown 8761h: at most 8760h (365 days)",
        ),
        (
            &["--sysctl", "kernel.no_such_knob=1", "--", "true"],
            "unknown sysctl",
        ),
        (
            &["--sysctl", "kernel.irqlab_test=abc", "--", "true"],
            "--sysctl kernel.irqlab_test=abc: expected a whole number",
        ),
        (
            &["--pin-thread", "no-such-thread*=0", "--", "true"],
            "no thread named like",
        ),
        (
            &["--governor", "--strict", "--", "true"],
            "--strict: no cpufreq",
        ),
        (&["--irq-affinity", "999=0", "--", "true"], "IRQ 999"),
        (&["--", "no-such-command-irqlab"], "not found"),
        (&["--workload-cpus", "5-2", "--", "true"], "--workload-cpus"),
        (
            &["--measure", "(", "--", "true"],
            "not a number, label or valid regex",
        ),
    ];
    for (flags, msg) in cases {
        let mut c = Command::cargo_bin("irqlab").unwrap();
        c.args(["bench", "--root"])
            .arg(root.path())
            .arg("--out")
            .arg(&out);
        c.args(["--warmup", "0"]).args(*flags);
        c.assert()
            .code(2)
            .stderr(predicate::str::contains(*msg))
            .stderr(predicate::str::starts_with("irqlab: "));
        assert!(!out.exists(), "{flags:?} left {}", out.display());
    }
    assert!(!root.path().join(".irqlab-journal.jsonl").exists());
    let s = std::fs::read_to_string(root.path().join(SYSCTL)).unwrap();
    assert_eq!(s, "0\n");
}

/// `--pin-thread` to a CPU the machine does not have is refused (exit 2)
/// before anything is changed, as `--irq-affinity` is; an ordinary thread
/// is never called a per-CPU kernel thread.
#[test]
fn pin_thread_to_a_missing_cpu_is_a_usage_error() {
    let root = fake_tree();
    let task = root.path().join("proc/4194999/task/4194999");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(task.join("comm"), "victimthr\n").unwrap();
    std::fs::write(
        task.join("stat"),
        "4194999 (victimthr) S 1 0 0 0 -1 4194560 0 0\n",
    )
    .unwrap();
    let cpu = root.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::write(cpu.join("possible"), "0-3\n").unwrap();
    std::fs::write(cpu.join("online"), "0-3\n").unwrap();
    let out = root.path().join("out");
    bench(root.path())
        .arg("--out")
        .arg(&out)
        .args(["--pin-thread", "victimthr=9", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--pin-thread victimthr=9"))
        .stderr(predicate::str::contains("CPU 9 does not exist"))
        .stderr(predicate::str::contains("per-CPU").not());
    assert!(!out.exists());
}

/// An `--irq-affinity` or `--governor` target that cannot be written is
/// refused (exit 2) before any change, the file named with what was
/// expected: a read-only `scaling_governor`, a policy without
/// `scaling_available_governors` or `scaling_governor`, and with
/// `--strict` a read-only `smp_affinity_list` (without it the IRQ is
/// skipped with a note, as one the kernel refuses to move).
#[test]
fn unwritable_irq_affinity_and_governor_targets_are_refused_before_any_change() {
    use std::os::unix::fs::PermissionsExt as _;
    const CPUFREQ: &str = "sys/devices/system/cpu/cpufreq/policy0";
    let irq = "proc/irq/26/smp_affinity_list";
    let governor = format!("{CPUFREQ}/scaling_governor");
    let available = format!("{CPUFREQ}/scaling_available_governors");
    let offered = [
        (governor.as_str(), "powersave\n"),
        (available.as_str(), "performance powersave\n"),
    ];
    // flag, files written, the one made read-only, the error expected
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, String);
    let cases: [Case; 4] = [
        (
            "--irq-affinity=26=1",
            &[(irq, "0-1\n")],
            irq,
            format!(
                "{irq} is read-only, expected a writable file: the kernel does not let IRQ 26 move"
            ),
        ),
        (
            "--governor=performance",
            &offered,
            &governor,
            format!("{governor} is read-only, expected a writable file"),
        ),
        (
            "--governor=performance",
            &offered[..1],
            "",
            format!("{available} is not readable, expected the governors policy0 offers"),
        ),
        (
            "--governor=performance",
            &offered[1..],
            "",
            format!("{governor} is not readable, expected policy0's current governor"),
        ),
    ];
    for (flag, files, read_only, msg) in cases {
        let root = fake_tree();
        common::write_files(root.path(), files.iter().map(|(r, t)| (*r, t.as_bytes())));
        if !read_only.is_empty() {
            let ro = std::fs::Permissions::from_mode(0o444);
            std::fs::set_permissions(root.path().join(read_only), ro).unwrap();
        }
        let out = root.path().join("out");
        bench(root.path())
            .arg("--out")
            .arg(&out)
            .args([flag, "--strict", "--sysctl", "kernel.irqlab_test=1"])
            .args(["--trial-length", "50ms"])
            .args(["--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(flag.split('=').next().unwrap()))
            .stderr(predicate::str::contains(msg));
        assert!(!out.exists(), "{flag} left {}", out.display());
        assert!(!root.path().join(".irqlab-journal.jsonl").exists());
        let s = std::fs::read_to_string(root.path().join(SYSCTL)).unwrap();
        assert_eq!(s, "0\n", "{flag}: the sysctl was changed");
    }

    let root = fake_tree();
    common::write_files(root.path(), [(irq, b"0-1\n".as_slice())]);
    let ro = std::fs::Permissions::from_mode(0o444);
    std::fs::set_permissions(root.path().join(irq), ro).unwrap();
    bench(root.path())
        .arg("--out")
        .arg(root.path().join("out"))
        .args([
            "--irq-affinity",
            "26=1",
            "--trials",
            "1",
            "--trial-length",
            "50ms",
        ])
        .args(["--", "true"])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "irqlab: prepare: skipped: IRQ 26: {}",
            root.path().join(irq).display()
        )))
        .stderr(predicate::str::contains(
            "the kernel does not let IRQ 26 move",
        ));
    assert_eq!(
        std::fs::read_to_string(root.path().join(irq)).unwrap(),
        "0-1\n"
    );
}

/// `bench --irq`, `--cpus` and `--duration` meant other things than in
/// the row-filtering commands and `record` (IRQs to measure, the
/// workload's CPUs, one trial's length): renamed `--measure`,
/// `--workload-cpus`, `--trial-length`, the old spellings still accepted
/// for one release with a deprecation note, and hidden from `--help`.
#[test]
fn old_flag_spellings_still_work_and_warn() {
    let root = fake_tree();
    let out = root.path().join("out");
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["--duration", "0s"],
            "--duration is deprecated",
            "--trial-length 0s",
        ),
        (
            &["--cpus", "5-2"],
            "--cpus is deprecated",
            "--workload-cpus \"5-2\"",
        ),
        (&["--irq", "("], "--irq is deprecated", "--measure \"(\""),
        (
            &["--trial-length", "0s"],
            "--trial-length 0s",
            "--trial-length 0s",
        ),
    ];
    for (flags, note, msg) in cases {
        let mut c = Command::cargo_bin("irqlab").unwrap();
        c.args(["bench", "--root"])
            .arg(root.path())
            .arg("--out")
            .arg(&out);
        c.args(["--warmup", "0"]).args(*flags).args(["--", "true"]);
        c.assert()
            .code(2)
            .stderr(predicate::str::contains(*note))
            .stderr(predicate::str::contains(*msg));
        assert!(!out.exists(), "{flags:?} left {}", out.display());
    }
    let help = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for new in [
        "--measure <IRQ>",
        "--workload-cpus <LIST>",
        "--trial-length <",
    ] {
        assert!(help.contains(new), "{new}: {help}");
    }
    for old in ["--irq <", "--cpus <", "--duration <"] {
        assert!(!help.contains(old), "{old}: {help}");
    }
}

#[test]
fn progress_shows_headline_and_numbers_trials_from_1() {
    let root = fake_tree();
    let out = root.path().join("out");
    bench(root.path())
        .arg("--out")
        .arg(&out)
        .args(["--trials", "2", "--trial-length", "50ms", "--", "true"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "trial 1/2: tip #1 irq_loc_per_sec=",
        ))
        .stderr(predicate::str::contains(
            "trial 2/2: tip #2 irq_loc_per_sec=",
        ));
    let t = trials(&out.join("tip"));
    assert_eq!(t[0]["trial"], 1);
    let m = &t[0]["metrics"];
    assert_eq!(m["irq_loc_per_sec"]["direction"], "none");
    assert_eq!(m["softirq_timer_per_sec"]["direction"], "none");
    assert_eq!(m["irqlab_sample_cpu_ns"]["direction"], "lower");
}

/// Spawn a bench whose command writes its pid (= process group) to a file.
fn spawn_group_bench(root: &Path, pidfile: &Path) -> std::process::Child {
    let script = format!(
        "echo $$ > {}; sleep 1001 & while :; do :; done",
        pidfile.display()
    );
    std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["bench", "--root"])
        .arg(root)
        .arg("--out")
        .arg(root.join("out"))
        .args(["--warmup", "0", "--measure", "LOC", "--label", "tip"])
        .args([
            "--trials",
            "5",
            "--trial-length",
            "60s",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn read_pid(pidfile: &Path) -> i32 {
    assert!(
        common::wait_until(Duration::from_secs(30), || std::fs::read_to_string(pidfile)
            .is_ok_and(|s| s.ends_with('\n'))),
        "the command never started"
    );
    std::fs::read_to_string(pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// True once no process (not even a zombie) of group `pgid` remains;
/// reaps members reparented to this test process.
fn group_gone(pgid: i32) -> bool {
    common::wait_until(Duration::from_secs(5), || {
        while let Ok(ws) = waitpid(Pid::from_raw(-pgid), Some(WaitPidFlag::WNOHANG)) {
            if ws == WaitStatus::StillAlive {
                break;
            }
        }
        killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
    })
}

fn signal(child: &std::process::Child, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

fn signal_kills_whole_process_group(sig: &str, code: i32) {
    // Members orphaned by a killed irqlab come to us, so we can reap them.
    nix::sys::prctl::set_child_subreaper(true).unwrap();
    let root = fake_tree();
    let pidfile = root.path().join("pid");
    let mut child = spawn_group_bench(root.path(), &pidfile);
    let pgid = read_pid(&pidfile);
    assert_eq!(killpg(Pid::from_raw(pgid), None), Ok(()), "group running");
    signal(&child, sig);
    assert_eq!(child.wait().unwrap().code(), Some(code));
    assert!(group_gone(pgid), "a process of group {pgid} remains");
    assert!(!root.path().join(".irqlab-journal.jsonl").exists());
}

#[test]
fn sigint_kills_whole_process_group() {
    signal_kills_whole_process_group("-INT", 130);
}

#[test]
fn sigterm_kills_whole_process_group() {
    signal_kills_whole_process_group("-TERM", 143);
}

#[test]
fn sigkill_then_restore_kills_leftover_group() {
    nix::sys::prctl::set_child_subreaper(true).unwrap();
    let root = fake_tree();
    let pidfile = root.path().join("pid");
    let mut child = spawn_group_bench(root.path(), &pidfile);
    let pgid = read_pid(&pidfile);
    signal(&child, "-KILL");
    child.wait().unwrap();
    assert_eq!(
        killpg(Pid::from_raw(pgid), None),
        Ok(()),
        "survives SIGKILL"
    );
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["restore", "--root"])
        .arg(root.path())
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("process group {pgid}")));
    assert!(group_gone(pgid), "a process of group {pgid} remains");
}

/// A directory on a real block device (the target dir), not tmpfs.
fn disk_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn disk_files(dir: &Path, pid: u32) -> Vec<PathBuf> {
    let prefix = format!("irqlab-disk-{pid}-");
    [dir, Path::new("/var/tmp")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect()
}

fn spawn_disk_bench(root: &Path, tmp: &Path) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["bench", "--root"])
        .arg(root)
        .arg("--out")
        .arg(root.join("out"))
        .args([
            "--warmup",
            "0",
            "--measure",
            "LOC",
            "--label",
            "tip",
            "-w",
            "disk",
        ])
        .arg("--tmp-dir")
        .arg(tmp)
        .args(["--trials", "5", "--trial-length", "60s"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn disk_tempfile_removed_on_sigterm() {
    let root = fake_tree();
    let tmp = disk_dir();
    let mut child = spawn_disk_bench(root.path(), tmp.path());
    let pid = child.id();
    assert!(
        common::wait_until(Duration::from_secs(30), || !disk_files(tmp.path(), pid)
            .is_empty()),
        "the disk workload never created its file"
    );
    signal(&child, "-TERM");
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert_eq!(disk_files(tmp.path(), pid), Vec::<PathBuf>::new());
    assert!(!root.path().join(".irqlab-journal.jsonl").exists());
}

#[test]
fn disk_tempfile_removed_by_restore_after_sigkill() {
    let root = fake_tree();
    let tmp = disk_dir();
    let mut child = spawn_disk_bench(root.path(), tmp.path());
    let pid = child.id();
    assert!(common::wait_until(Duration::from_secs(30), || !disk_files(
        tmp.path(),
        pid
    )
    .is_empty()));
    signal(&child, "-KILL");
    child.wait().unwrap();
    assert_eq!(disk_files(tmp.path(), pid).len(), 1, "left by SIGKILL");
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["restore", "--root"])
        .arg(root.path())
        .assert()
        .success();
    assert_eq!(disk_files(tmp.path(), pid), Vec::<PathBuf>::new());
}

#[test]
fn help_example_pins_movable_threads_not_per_cpu_kthreads() {
    let out = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(!help.contains("'ksoftirqd/*=0'"), "{help}");
    assert!(help.contains("'irq/*-eth0=0'"), "{help}");
}
