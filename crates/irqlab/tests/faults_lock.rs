//! The run lock through the real binary: two bench runs on one root.
//! The second refuses, naming the first (pid, output directory, start),
//! and creates no output directory; after a SIGKILL of the first,
//! `irqlab restore` takes charge of its stale lock and undoes everything;
//! then a new run may start. And the live tests' view of the host's lock
//! (`common::run_lock_taken`): another run's lock skips them, naming it,
//! or fails them under CI.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

const A: &str = "proc/sys/kernel/printk_ratelimit";
const B: &str = "proc/sys/kernel/printk_ratelimit_burst";

fn fake_tree() -> tempfile::TempDir {
    common::bench_tree("6.18.44-fake", "boot-1", &[(A, "5\n"), (B, "10\n")])
}

fn value(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel))
        .unwrap()
        .trim()
        .to_string()
}

fn bench_args(root: &Path, out: &Path, sysctl: &str, trials: &str, cmd: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec!["bench".into(), "--root".into()];
    v.push(root.display().to_string());
    v.extend(["--out".into(), out.display().to_string()]);
    for a in [
        "--label",
        "tip",
        "--warmup",
        "0",
        "--measure",
        "LOC",
        "--sysctl",
    ] {
        v.push(a.into());
    }
    v.push(sysctl.into());
    for a in [
        "--trials",
        trials,
        "--trial-length",
        "200ms",
        "--workload",
        "command",
        "--",
    ] {
        v.push(a.into());
    }
    v.extend(cmd.iter().map(|s| s.to_string()));
    v
}

/// The first run, killed on drop if the test fails early.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn second_bench_refuses_and_restore_after_sigkill_restores_everything() {
    let root = fake_tree();
    let r = root.path();
    let out_a = r.join("A");
    let out_b = r.join("B");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(bench_args(
            r,
            &out_a,
            "kernel.printk_ratelimit=7",
            "50",
            &["sleep", "1"],
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = Running(child);
    let pid = first.0.id();
    assert!(
        common::wait_until(Duration::from_secs(30), || value(r, A) == "7"),
        "the first run never changed the host"
    );

    // the second run refuses, names the first and creates nothing
    let second = Command::cargo_bin("irqlab")
        .unwrap()
        .args(bench_args(
            r,
            &out_b,
            "kernel.printk_ratelimit_burst=11",
            "2",
            &["true"],
        ))
        .timeout(Duration::from_secs(60))
        .assert()
        .failure()
        .code(1);
    let err = String::from_utf8_lossy(&second.get_output().stderr).into_owned();
    assert!(err.starts_with("irqlab:"), "{err}");
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    assert!(err.contains(&out_a.display().to_string()), "{err}");
    assert!(err.contains("started 20"), "{err}");
    assert!(
        !out_b.exists(),
        "a refused run created its output directory"
    );
    assert_eq!(value(r, B), "10", "a refused run changed the host");

    // SIGKILL the first: its change stays, its lock is stale
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    assert_eq!(value(r, A), "7");
    let restore = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["restore", "--root"])
        .arg(r)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let said = String::from_utf8_lossy(&restore.get_output().stdout).into_owned();
    assert!(
        said.contains("stale lock") && said.contains(&format!("pid {pid}")),
        "{said}"
    );
    assert!(
        said.contains("restored proc/sys/kernel/printk_ratelimit"),
        "{said}"
    );
    assert_eq!(value(r, A), "5", "restore undid the killed run's change");
    assert_eq!(value(r, B), "10");
    assert!(!r.join(".irqlab-journal.jsonl").exists());
    assert!(
        !r.join(".irqlab-run.lock").exists(),
        "restore released the lock"
    );

    // the host is free again: a new run goes ahead and restores its change
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(bench_args(
            r,
            &out_b,
            "kernel.printk_ratelimit_burst=11",
            "1",
            &["true"],
        ))
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    assert!(out_b.exists());
    assert_eq!(value(r, B), "10");
}

#[test]
fn restore_refuses_under_a_live_run() {
    let root = fake_tree();
    let r = root.path();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["guard-selftest", "--root"])
        .arg(r)
        .args(["--sysctl", "kernel.printk_ratelimit=7", "--sleep", "30s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = Running(child);
    assert!(common::wait_until(Duration::from_secs(30), || value(r, A) == "7"));
    let out = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["restore", "--root"])
        .arg(r)
        .timeout(Duration::from_secs(60))
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains(&format!("pid {}", first.0.id())), "{err}");
    assert!(err.contains("guard-selftest"), "{err}");
    assert_eq!(
        value(r, A),
        "7",
        "restore must not undo a live run's change"
    );
}

/// `bench` as an ordinary user (`runuser -u nobody`): runs with its lock
/// and journal in /tmp/irqlab-UID (not /var/lib/irqlab), leaves no lock,
/// and a flag that needs root is refused (exit 2) before the output
/// directory exists.
#[test]
fn unprivileged_bench_uses_a_user_lock_and_refuses_root_flags_first() {
    let test = "faults_lock: unprivileged_bench_uses_a_user_lock_and_refuses_root_flags_first";
    if !nix::unistd::geteuid().is_root() || which("runuser").is_none() {
        visible!("{test}: SKIPPED: needs root and runuser to become nobody");
        return;
    }
    let Some(nobody) = nix::unistd::User::from_name("nobody").ok().flatten() else {
        visible!("{test}: SKIPPED: no user nobody");
        return;
    };
    // a bench by anyone waits for a run that holds the host, which is
    // right, but leaves nothing to test here
    if common::host_lock_held(test) {
        return;
    }
    // the user's lock directory: removed at the end when this test made it
    let user_dir = format!("/tmp/irqlab-{}", nobody.uid.as_raw());
    struct Tidy(Option<String>);
    impl Drop for Tidy {
        fn drop(&mut self) {
            if let Some(d) = &self.0 {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
    let _tidy = Tidy((!Path::new(&user_dir).exists()).then(|| user_dir.clone()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let run = |out: &Path, extra: &[&str]| {
        std::process::Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(&bin)
            .args([
                "bench",
                "--trials",
                "1",
                "--trial-length",
                "300ms",
                "--warmup",
                "0",
            ])
            .args(extra)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let out = run(&dir.path().join("b"), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !Path::new(&user_dir).join("run.lock").exists(),
        "lock released"
    );
    assert!(!Path::new(&user_dir).join("journal.jsonl").exists());
    let refused = dir.path().join("c");
    let out = run(&refused, &["--sysctl", "vm.stat_interval=2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--sysctl") && err.contains("needs root"),
        "{err}"
    );
    assert!(!refused.exists(), "refused before anything was created");
}

/// A live lock held by a process that is neither this test nor one it
/// started (init, pid 1) is a skip naming the holder as its lock file
/// does, and under CI a failure; a lock of this process, of its child, of
/// a dead run, or none, is no reason to skip.
#[test]
fn another_runs_live_lock_skips_naming_it_or_fails_under_ci() {
    use irqlab::guard::Holder;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, h: &Holder| {
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_string(h).unwrap()).unwrap();
        p
    };
    let stat = std::fs::read("/proc/1/stat").unwrap();
    let init = Holder {
        pid: 1,
        starttime: irqlab_core::PidStat::parse(&stat).unwrap().starttime,
        ..Holder::me("bench", Some(Path::new("/results/other")))
    };
    assert!(init.is_live());
    let held = write("init.lock", &init);
    let why = common::run_lock_taken(std::slice::from_ref(&held), false)
        .unwrap()
        .unwrap();
    assert_eq!(
        why,
        format!(
            "another irqlab run holds the host: {init} (lock {})",
            held.display()
        )
    );
    assert!(
        why.contains("pid 1,") && why.contains("/results/other"),
        "{why}"
    );
    let e = common::run_lock_taken(std::slice::from_ref(&held), true).unwrap_err();
    assert!(e.starts_with(&why) && e.contains("CI is set"), "{e}");
    // this process's, its child's, a dead run's lock or none: run
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let mine = Holder::me("trace", None);
    let ours = [
        write("me.lock", &mine),
        write(
            "child.lock",
            &Holder {
                pid: child.id(),
                starttime: None,
                ..mine.clone()
            },
        ),
        write(
            "dead.lock",
            &Holder {
                pid: u32::MAX - 1,
                ..mine.clone()
            },
        ),
        dir.path().join("absent.lock"),
    ];
    let taken = common::run_lock_taken(&ours, true);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(taken, Ok(None));
}

fn which(tool: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(tool))
            .find(|f| f.is_file())
    })
}
