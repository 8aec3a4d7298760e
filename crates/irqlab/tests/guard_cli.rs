//! The SystemGuard end to end through the real binary (hidden
//! `guard-selftest` subcommand) on fake trees: SIGINT and SIGTERM restore
//! and exit 130/143, a panic and an error restore, SIGKILL leaves the
//! journal for `irqlab restore`, and the journal-before-write order; the
//! run lock released on signals; tracefs mounted under the run lock and
//! never used or unmounted by another run (`--mount`: fake mount points
//! are symlinks to a real mount; real mounts only with the host-change
//! opt-in).

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

/// Every file byte for byte as it was (its newline too), the journal gone.
fn assert_restored(root: &Path) {
    assert_eq!(read(root, "proc/sys/vm/stat_interval"), "1\n");
    assert_eq!(read(root, "proc/irq/26/smp_affinity_list"), "0-1\n");
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
    assert!(
        !dir.path().join(".irqlab-run.lock").exists(),
        "run lock left after {name}"
    );
    for line in err.lines() {
        assert!(line.starts_with("irqlab: "), "unprefixed message {line:?}");
    }
}

#[test]
fn sigint_restores_and_exits_130() {
    signalled("-INT", 130, "SIGINT");
}

#[test]
fn sigterm_restores_and_exits_143() {
    signalled("-TERM", 143, "SIGTERM");
}

/// A signal undoes the newest guard first, as Drop does: the second
/// guard's change (`--then-set`) is restored before the first's, and a
/// normal end restores in the same order.
#[test]
fn sigterm_restores_the_newest_guard_first() {
    let order = |err: &str| -> Vec<String> {
        err.lines()
            .filter_map(|l| l.split("restored ").nth(1))
            .filter_map(|c| c.split(" = ").next())
            .map(str::to_string)
            .collect()
    };
    let dir = tree(&[("a", "1\n"), ("b", "x\n")]);
    let run = start(dir.path(), &["--set", "a=2", "--then-set", "b=y"]);
    assert_eq!(read(dir.path(), "b"), "y");
    signal(&run, "-TERM");
    let (status, err) = finish(run);
    assert_eq!(status, Some(143), "{err}");
    assert_eq!(order(&err), ["b", "a"], "{err}");
    assert_eq!(
        (read(dir.path(), "a"), read(dir.path(), "b")),
        ("1\n".into(), "x\n".into())
    );

    let out = common::irqlab()
        .args([
            "guard-selftest",
            "--set",
            "a=2",
            "--then-set",
            "b=y",
            "--root",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(order(&text), ["b", "a"], "{text}");
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
            "irqlab: restored proc/irq/26/smp_affinity_list = \"0-1\" (was set to \"1\")\nirqlab: restored proc/sys/vm/stat_interval",
        ));
    assert_restored(root);
    common::irqlab()
        .args(["restore", "--root"])
        .arg(root)
        .assert()
        .success()
        .stdout(contains("nothing to restore"));
}

/// `restore` with a stdout that fails: the undo comes first, then the
/// write's error (exit 1 naming stdout for a full device; a closed pipe
/// ends the run as any closed stdout does, exit 0), never a panic.
#[test]
fn restore_undoes_before_a_failing_stdout_is_reported() {
    for sink in ["full", "closed pipe"] {
        let dir = tree(&FILES);
        let root = dir.path();
        let run = start(root, &SETS);
        signal(&run, "-KILL");
        let _ = finish(run);
        assert_changed(root);
        let stdout = failing_stdout(sink);
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
            .args(["restore", "--root"])
            .arg(root)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{sink}: {err}");
        assert_restored(root);
        match sink {
            "full" => {
                assert_eq!(out.status.code(), Some(1), "{err}");
                assert!(err.contains("stdout: No space left on device"), "{err}");
            }
            _ => assert_eq!(out.status.code(), Some(0), "{err}"),
        }
    }
}

/// A stdout that fails: /dev/full, or a pipe whose read end is closed.
fn failing_stdout(sink: &str) -> Stdio {
    if sink == "full" {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        return Stdio::from(full);
    }
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    Stdio::from(write)
}

/// `guard-selftest` with stdout and/or stderr failing (full, closed):
/// never a panic (exit 101) or an abort (a panic while unwinding, in the
/// guard's drop or the panic hook), and the changes are undone. A full
/// stdout is an error naming it (exit 1), a closed one a normal end;
/// stderr notes (`--trace`, the restore report of `--fail`) are dropped.
#[test]
fn selftest_with_a_failing_stdout_or_stderr_restores_without_a_panic() {
    let cases: [(&str, &str, &str, i32); 6] = [
        ("full", "pipe", "", 1),
        ("closed pipe", "pipe", "", 0),
        ("null", "full", "--trace", 0),
        ("full", "full", "--trace", 1),
        ("null", "full", "--fail", 1),
        ("closed pipe", "closed pipe", "--fail", 0),
    ];
    for (out_sink, err_sink, flag, code) in cases {
        let case = format!("stdout {out_sink}, stderr {err_sink}, {flag:?}");
        let dir = tree(&FILES);
        let root = dir.path();
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
        cmd.args(["guard-selftest", "--root"]).arg(root).args(SETS);
        if !flag.is_empty() {
            cmd.arg(flag);
        }
        let out = cmd
            .stdout(sink(out_sink))
            .stderr(sink(err_sink))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{case}: {err}");
        assert_eq!(out.status.code(), Some(code), "{case}: {err}");
        if (out_sink, err_sink) == ("full", "pipe") {
            assert!(err.contains("stdout: No space left on device"), "{err}");
        }
        assert_restored(root);
    }
}

/// A panic with stderr full: the panic hook's restore report is dropped,
/// not a second panic (which would abort before the restore).
#[test]
fn selftest_panic_with_stderr_full_restores() {
    let dir = tree(&FILES);
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["guard-selftest", "--panic", "--root"])
        .arg(dir.path())
        .args(SETS)
        .stdout(Stdio::null())
        .stderr(sink("full"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(101));
    assert_restored(dir.path());
}

/// `failing_stdout`, or a pipe read to its end, or /dev/null.
fn sink(kind: &str) -> Stdio {
    match kind {
        "pipe" => Stdio::piped(),
        "null" => Stdio::null(),
        _ => failing_stdout(kind),
    }
}

/// A `--root` that is not there is an error naming it (exit 1), not
/// "nothing to restore" (exit 0): a mistyped root would pass for a host
/// with nothing left to undo; nor is it made (the run lock's directory
/// was, as the root). So is a root that is a file.
#[test]
fn restore_with_a_missing_root_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent");
    common::irqlab()
        .args(["restore", "--root"])
        .arg(&missing)
        .assert()
        .code(1)
        .stdout("")
        .stderr(contains(format!(
            "--root {}: No such file",
            missing.display()
        )));
    assert!(!missing.exists(), "the missing root is not made");
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    common::irqlab()
        .args(["restore", "--root"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(contains(format!(
            "--root {}: not a directory",
            file.display()
        )));
}

/// A journal holding no complete entry, only a line without its newline
/// (a run's first entry cut short, or not a journal at all), is neither
/// replayed nor removed: `restore` fails (exit 1) naming it and keeps it
/// byte for byte, and a new guard refuses to append to it (its entry
/// would join the torn line, and no restore could read it back).
#[test]
fn a_journal_with_only_a_torn_line_is_kept_not_called_empty() {
    let dir = tempfile::tempdir().unwrap();
    for text in ["important notes without trailing newline", "{\"broken"] {
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, text).unwrap();
        common::irqlab()
            .args(["restore", "--root"])
            .arg(dir.path())
            .arg("--journal")
            .arg(&notes)
            .assert()
            .code(1)
            .stdout(contains("empty").not())
            .stderr(contains(format!(
                "{}: no complete journal entry",
                notes.display()
            )));
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), text, "kept");
    }
    let root = tree(&FILES);
    std::fs::write(journal(root.path()), "{\"kind\":\"fi").unwrap();
    common::irqlab()
        .args(["guard-selftest", "--root"])
        .arg(root.path())
        .args(SETS)
        .assert()
        .code(1)
        .stderr(contains("no complete journal entry"));
    assert_eq!(read(root.path(), "proc/sys/vm/stat_interval"), "1\n");
    assert_eq!(
        std::fs::read_to_string(journal(root.path())).unwrap(),
        "{\"kind\":\"fi"
    );
}

use predicates::prelude::PredicateBooleanExt;

/// `--set` restores the original bytes: a newline, leading blanks and a
/// second line come back, at a normal end and through `irqlab restore`.
#[test]
fn set_restores_the_file_byte_for_byte() {
    let original = " 4\t4\t1\t7\nsecond line\n";
    for killed in [false, true] {
        let dir = tree(&[("k", original)]);
        let root = dir.path();
        if killed {
            let run = start(root, &["--set", "k=9"]);
            assert_eq!(read(root, "k"), "9");
            signal(&run, "-KILL");
            let _ = finish(run);
            common::irqlab()
                .args(["restore", "--root"])
                .arg(root)
                .assert()
                .success()
                .stdout(contains("restored k = \"4\\t4\\t1\\t7\\nsecond line\""));
        } else {
            common::irqlab()
                .args(["guard-selftest", "--set", "k=9", "--root"])
                .arg(root)
                .assert()
                .success();
        }
        assert_eq!(read(root, "k"), original, "killed: {killed}");
        assert!(!journal(root).exists());
    }
}

/// A journal that names a file outside the root (planted or corrupt) is
/// refused whole, naming the line: nothing is written, inside or outside
/// the tree, and the journal is kept.
#[test]
fn restore_refuses_a_journal_entry_outside_the_root() {
    let dir = tree(&[("t/k", "9"), ("outside", "precious\n")]);
    let root = dir.path().join("t");
    let lines = [
        r#"{"kind":"file","path":"k","old":"1\n","new":"9"}"#,
        r#"{"kind":"file","path":"../outside","old":"","new":"x"}"#,
    ];
    std::fs::write(journal(&root), lines.join("\n") + "\n").unwrap();
    common::irqlab()
        .args(["restore", "--root"])
        .arg(&root)
        .assert()
        .code(1)
        .stderr(contains(".irqlab-journal.jsonl:2: not a journal entry"))
        .stderr(contains("not a relative path under the root"));
    assert_eq!(read(dir.path(), "outside"), "precious\n");
    assert_eq!(read(&root, "k"), "9");
    assert_eq!(journal_lines(&root), lines);
}

/// A FIFO where a tree's journal or run lock belongs (a `--root` is
/// untrusted input) is refused at once, never waited on: `restore` and a
/// guarded run fail naming it, and leave it there.
#[test]
fn a_fifo_journal_or_lock_is_refused_not_waited_on() {
    for name in [".irqlab-journal.jsonl", ".irqlab-run.lock"] {
        let dir = tree(&FILES);
        let fifo = dir.path().join(name);
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for args in [
            &["restore"][..],
            &["guard-selftest", "--sysctl", "vm.stat_interval=7"],
        ] {
            common::irqlab()
                .args(args)
                .arg("--root")
                .arg(dir.path())
                .timeout(Duration::from_secs(20))
                .assert()
                .code(1)
                .stderr(contains(format!(
                    "{} is a FIFO (named pipe), expected a regular file",
                    fifo.display()
                )));
        }
        assert!(fifo.exists());
        assert_eq!(read(dir.path(), "proc/sys/vm/stat_interval"), "1\n");
    }
}

/// A journal left by a run of another boot (the tree's boot id changed
/// since): its file changes are not written back (a reboot reset them;
/// this boot's IRQ numbers and values are not that boot's), restore says
/// so and removes the journal.
#[test]
fn restore_leaves_the_changes_of_another_boot_alone() {
    let boot = "proc/sys/kernel/random/boot_id";
    let dir = tree(&[(boot, "boot-1\n"), ("proc/sys/vm/stat_interval", "1\n")]);
    let root = dir.path();
    let run = start(root, &["--sysctl", "vm.stat_interval=7"]);
    signal(&run, "-KILL");
    let _ = finish(run);
    assert!(journal_lines(root)[0].contains(r#""boot_id":"boot-1""#));
    std::fs::write(root.join(boot), "boot-2\n").unwrap();
    std::fs::write(root.join("proc/sys/vm/stat_interval"), "3\n").unwrap();
    common::irqlab()
        .args(["restore", "--root"])
        .arg(root)
        .assert()
        .success()
        .stdout(contains(
            "irqlab: skipped proc/sys/vm/stat_interval = \"1\" (was set to \"7\"): \
             made during another boot (boot-1; this one is boot-2)",
        ));
    assert_eq!(read(root, "proc/sys/vm/stat_interval"), "3\n");
    assert!(!journal(root).exists());
}

/// A bench killed during the trial of a variant with flags of its own
/// leaves the variant's journal beside the run's: `irqlab restore` (as
/// printed) undoes both, the variant's first, byte for byte.
#[test]
fn restore_undoes_a_killed_bench_variant_journal() {
    let sysctl = "proc/sys/kernel/irqlab_test";
    for attempt in 0..5 {
        let dir = common::bench_tree("6.18-fake", "boot-1", &[(sysctl, "0\n")]);
        let root = dir.path();
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
            .args(["bench", "--root"])
            .arg(root)
            .arg("--out")
            .arg(root.join("out"))
            .args(["--warmup", "0", "--measure", "LOC", "--trials", "50"])
            .args(["--trial-length", "300ms", "--cooldown", "0s"])
            .args(["--variant", "a=--sysctl kernel.irqlab_test=1"])
            .args(["--variant", "b=--sysctl kernel.irqlab_test=2"])
            .args(["--workload", "command", "--", "sleep", "1"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let variant = root.join(".irqlab-journal.jsonl.variant");
        assert!(common::wait_until(Duration::from_secs(30), || variant.exists()));
        child.kill().unwrap();
        child.wait().unwrap();
        if !variant.exists() || read(root, sysctl) == "0\n" {
            eprintln!("attempt {attempt}: killed between two trials, again");
            continue;
        }
        common::irqlab()
            .args(["restore", "--root"])
            .arg(root)
            .assert()
            .success()
            .stdout(contains(
                "irqlab: restored proc/sys/kernel/irqlab_test = \"0\"",
            ))
            .stdout(contains(format!("irqlab: removed {}", variant.display())));
        assert_eq!(read(root, sysctl), "0\n");
        assert!(!variant.exists() && !journal(root).exists());
        return;
    }
    panic!("never killed during a variant's trial");
}

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

/// A preparation step that fails ends with an error that says which of
/// the changes made before it were undone, the host then as it was.
#[test]
fn a_failed_step_says_which_earlier_changes_were_undone() {
    let dir = tree(&FILES);
    common::irqlab()
        .args(["guard-selftest", "--root"])
        .arg(dir.path())
        .args(SETS)
        .args(["--irq-affinity", "99=1"])
        .assert()
        .code(1)
        .stderr(contains(
            "irqlab: error: --irq-affinity 99=1: IRQ 99 has no",
        ))
        .stderr(contains(
            "irqlab: the host changes made before it were undone:\n\
             irqlab: restored proc/irq/26/smp_affinity_list = \"0-1\" (was set to \"1\")\n\
             irqlab: restored proc/sys/vm/stat_interval = \"1\" (was set to \"7\")\n",
        ));
    assert_restored(dir.path());
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
            "powersave\n"
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

const TRACEFS: &str = "sys/kernel/tracing";

fn journal_lines(root: &Path) -> Vec<String> {
    std::fs::read_to_string(journal(root))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `guard-selftest --mount` (what `trace` does) beside a live run whose
/// journal holds the mount: refused naming that run, the journal keeps
/// the run's entries, `restore` and a second guarded run are refused
/// with the lock's message (never "unrestored host change(s)"); after a
/// SIGKILL the message points to `irqlab restore`.
#[test]
fn mount_of_a_live_run_is_never_used_nor_its_journal_touched() {
    let dir = tree(&[("x", "1\n")]);
    let root = dir.path();
    std::fs::create_dir_all(root.join("sys/kernel")).unwrap();
    // a fake mount point: a symlink to a real mount (another device)
    std::os::unix::fs::symlink("/proc", root.join(TRACEFS)).unwrap();
    let a = start(root, &["--set", "x=2"]);
    let pid = a.0.id();
    let mount_line = r#"{"kind":"mount","path":"sys/kernel/tracing","fstype":"tracefs"}"#;
    let mut j = journal_lines(root);
    j.push(mount_line.into());
    std::fs::write(journal(root), j.join("\n") + "\n").unwrap();

    let out = common::irqlab()
        .args(["guard-selftest", "--mount", TRACEFS, "--root"])
        .arg(root)
        .assert()
        .code(1);
    out.stderr(
        contains("was mounted by another irqlab run")
            .and(contains(format!("pid {pid}")))
            .and(contains("unrestored").not()),
    );
    assert_eq!(
        journal_lines(root).len(),
        2,
        "the journal kept both entries"
    );
    for args in [&["restore"][..], &["guard-selftest", "--set", "x=3"]] {
        common::irqlab()
            .args(args)
            .arg("--root")
            .arg(root)
            .assert()
            .code(1)
            .stderr(
                contains("another run is changing this host")
                    .and(contains(format!("pid {pid}")))
                    .and(contains("unrestored").not()),
            );
    }
    assert_eq!(journal_lines(root).len(), 2);
    assert_eq!(read(root, "x"), "2");

    signal(&a, "-KILL");
    assert_eq!(finish(a).0, None);
    common::irqlab()
        .args(["guard-selftest", "--mount", TRACEFS, "--root"])
        .arg(root)
        .assert()
        .code(1)
        .stderr(contains("which was killed").and(contains("irqlab restore")));
    // never let a restore near the symlinked mount: keep the file entry only
    let j = journal_lines(root);
    std::fs::write(journal(root), format!("{}\n", j[0])).unwrap();
    common::irqlab()
        .args(["restore", "--root"])
        .arg(root)
        .assert()
        .success()
        .stdout(
            contains("irqlab: taking charge of the stale lock").and(contains("irqlab: removed")),
        );
    assert_eq!(read(root, "x").trim(), "1");
    assert!(!root.join(".irqlab-run.lock").exists());
}

/// Unmounts a real test mount if a test fails half-way.
struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = nix::mount::umount2(&self.0, nix::mount::MntFlags::UMOUNT_NOFOLLOW);
    }
}

fn is_mountpoint(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| std::fs::metadata(p).unwrap().dev();
    dev(p) != dev(p.parent().unwrap())
}

/// Two traces started at once and staggered, with real tracefs mounts on
/// a temporary directory: one mounts, the other is refused with whose
/// mount it is or who holds the lock; the journal keeps the winner's
/// mount; `restore` is refused while the winner lives; after SIGKILL
/// `restore` unmounts. A SIGTERM'd winner unmounts and leaves no lock.
#[test]
fn two_tracefs_users_one_mounts_and_restore_unmounts_after_sigkill() {
    if !common::host_changes_allowed(
        "guard_cli: two_tracefs_users_one_mounts_and_restore_unmounts_after_sigkill",
    ) {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        visible!("guard_cli: two_tracefs_users…: SKIPPED: mounting needs root");
        return;
    }
    let dir = tree(&[("x", "1\n")]);
    let root = dir.path();
    let target = root.join(TRACEFS);
    std::fs::create_dir_all(&target).unwrap();
    let _cleanup = Unmount(target.clone());
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let spawn = || {
        std::process::Command::new(&bin)
            .args([
                "guard-selftest",
                "--mount",
                TRACEFS,
                "--sleep",
                "30s",
                "--root",
            ])
            .arg(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // simultaneous starts
    let (mut p, mut q) = (Running(spawn()), Running(spawn()));
    let first_line = |r: &mut Running| {
        let mut line = String::new();
        let _ = BufReader::new(r.0.stdout.take().unwrap()).read_line(&mut line);
        line
    };
    let (lp, lq) = (first_line(&mut p), first_line(&mut q));
    let (winner, loser) = match (
        lp.starts_with("ready: mounted\n"),
        lq.starts_with("ready: mounted\n"),
    ) {
        (true, false) => (p, q),
        (false, true) => (q, p),
        other => panic!("exactly one mounts: {other:?} {lp:?} {lq:?}"),
    };
    let (code, err) = finish(loser);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        (err.contains("another run is changing this host")
            || err.contains("was mounted by another irqlab run"))
            && !err.contains("unrestored"),
        "{err}"
    );
    assert!(is_mountpoint(&target));
    assert_eq!(
        journal_lines(root).len(),
        1,
        "the winner's mount stays journaled"
    );
    // staggered: the mount is there now
    common::irqlab()
        .args(["guard-selftest", "--mount", TRACEFS, "--root"])
        .arg(root)
        .assert()
        .code(1)
        .stderr(contains("was mounted by another irqlab run"));
    common::irqlab()
        .args(["restore", "--root"])
        .arg(root)
        .assert()
        .code(1)
        .stderr(contains("another run is changing this host"));
    assert!(
        is_mountpoint(&target),
        "restore left the live run's mount alone"
    );
    signal(&winner, "-KILL");
    assert_eq!(finish(winner).0, None);
    assert!(is_mountpoint(&target));
    common::irqlab()
        .args(["restore", "--root"])
        .arg(root)
        .assert()
        .success()
        .stdout(contains("unmounted"));
    assert!(!is_mountpoint(&target));
    assert!(!journal(root).exists());

    let again = start(root, &["--mount", TRACEFS]);
    assert!(is_mountpoint(&target));
    signal(&again, "-TERM");
    finish(again);
    assert!(!is_mountpoint(&target), "unmounted on SIGTERM");
    assert!(!journal(root).exists());
    assert!(!root.join(".irqlab-run.lock").exists());
}

/// True while `pid` runs (exists and is not a zombie).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with(['Z', 'X']))
        })
        .is_some_and(|zombie| !zombie)
}

fn read_pid(path: &Path) -> i32 {
    let t0 = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no pid in {path:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gone_soon(pid: i32) -> bool {
    let t0 = Instant::now();
    while running(pid) {
        if t0.elapsed() > Duration::from_secs(10) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A command that calls `setsid` (`sh -c 'setsid sleep … &
/// sleep …'`) leaves nothing running after a normal end, SIGTERM, or
/// SIGKILL then `irqlab restore`, with the tracking `extra` selects.
fn setsid_escapees_are_stopped(extra: &[&str]) {
    for end in ["normal", "-TERM", "-KILL"] {
        let dir = tree(&[("x", "1\n")]);
        let root = dir.path();
        let pidfile = root.join("escaped.pid");
        let script = format!(
            "setsid sh -c 'echo $$ > {}; exec sleep 98764' & sleep 98765",
            pidfile.display()
        );
        let mut args = vec!["--spawn", script.as_str()];
        args.extend_from_slice(extra);
        if end == "normal" {
            common::irqlab()
                .args(["guard-selftest", "--sleep", "1s", "--root"])
                .arg(root)
                .args(&args)
                .assert()
                .success();
            let pid = read_pid(&pidfile);
            assert!(gone_soon(pid), "{extra:?} {end}: setsid'd {pid} survives");
            continue;
        }
        let run = start(root, &args);
        let pid = read_pid(&pidfile);
        assert!(running(pid));
        signal(&run, end);
        if end == "-KILL" {
            // not `finish`: the survivor holds the stderr pipe until restore
            let mut run = run;
            assert_eq!(run.0.wait().unwrap().code(), None);
            assert!(running(pid), "alive until restore");
            common::irqlab()
                .args(["restore", "--root"])
                .arg(root)
                .assert()
                .success()
                .stdout(contains("process group"));
        } else {
            let (code, err) = finish(run);
            assert_eq!(code, Some(143), "{err}");
        }
        assert!(gone_soon(pid), "{extra:?} {end}: setsid'd {pid} survives");
        assert!(!journal(root).exists());
    }
}

#[test]
fn setsid_escapees_are_stopped_without_a_cgroup() {
    setsid_escapees_are_stopped(&["--no-cgroup"]);
}

/// The same with the group in a cgroup v2 of its own (root; creates and
/// removes a cgroup, so only with the host-change opt-in).
#[test]
fn setsid_escapees_are_stopped_with_a_cgroup() {
    if !common::host_changes_allowed("guard_cli: setsid_escapees_are_stopped_with_a_cgroup") {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        visible!("guard_cli: setsid_escapees_are_stopped_with_a_cgroup: SKIPPED: needs root");
        return;
    }
    let before = irqlab_cgroups();
    setsid_escapees_are_stopped(&[]);
    assert_eq!(irqlab_cgroups(), before, "every irqlab cgroup removed");
}

/// The irqlab-* cgroups under the cgroup2 mount (this test's own cgroup).
fn irqlab_cgroups() -> Vec<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let Some(mount) = info.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (post.starts_with("cgroup2 ")).then(|| pre.split_whitespace().nth(4).map(str::to_string))?
    }) else {
        return Vec::new();
    };
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let own = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("/");
    let dir = Path::new(&mount).join(own.trim_start_matches('/'));
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("irqlab-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
