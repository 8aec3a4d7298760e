//! Live (feature `trace`, root, tracefs directory, bpftool): `irqlab trace`
//! leaves no BPF program behind and unmounts tracefs if it mounted it,
//! whichever way it ends: normal end of `-d`, SIGINT, SIGTERM, a panic, an
//! error (stdout closed), and SIGKILL (programs gone with the process;
//! `irqlab restore` unmounts). Each case lists the child's programs from
//! its /proc/PID/fdinfo while it runs and asks bpftool for each id after.
//! One test function: the cases must not overlap.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TRACING: &str = "/sys/kernel/tracing";

fn skip_reason() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root".into());
    }
    if !Path::new(TRACING).is_dir() {
        return Some(format!("{TRACING} does not exist"));
    }
    let bpftool = Command::new("bpftool").arg("version").output();
    if !bpftool.is_ok_and(|o| o.status.success()) {
        return Some("bpftool not installed (tools/install-trace-deps.sh)".into());
    }
    None
}

fn mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(TRACING))
}

/// BPF program ids held by `pid` (fdinfo `prog_id:` lines).
fn prog_ids(pid: u32) -> Vec<u32> {
    let dir = format!("/proc/{pid}/fdinfo");
    let mut ids = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            if let Some(id) = l.strip_prefix("prog_id:") {
                ids.push(id.trim().parse().unwrap());
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn loaded(id: u32) -> bool {
    Command::new("bpftool")
        .args(["prog", "show", "id", &id.to_string()])
        .output()
        .unwrap()
        .status
        .success()
}

/// Ids still loaded after a grace period (freeing waits for RCU).
fn still_loaded(ids: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<u32> = ids.iter().copied().filter(|&id| loaded(id)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn(extra: &[&str], env_panic: bool) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_irqlab"));
    c.args(["trace", "-i", "100ms"]).args(extra);
    if env_panic {
        c.env("IRQLAB_TRACE_TEST_PANIC", "1");
    }
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for the first interval on stdout; return the program ids then.
fn running_ids(child: &mut Child) -> (Vec<u32>, BufReader<std::process::ChildStdout>) {
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 {
        if line.starts_with("interval 1") {
            break;
        }
        line.clear();
    }
    assert!(line.starts_with("interval 1"), "no interval printed");
    let ids = prog_ids(child.id());
    assert!(
        ids.len() >= 5,
        "expected the programs in fdinfo, got {ids:?}"
    );
    assert!(ids.iter().all(|&id| loaded(id)));
    (ids, out)
}

fn signal(child: &Child, sig: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, sig).unwrap();
}

fn check_clean(case: &str, ids: &[u32], was_mounted: bool) {
    assert_eq!(
        still_loaded(ids),
        Vec::<u32>::new(),
        "{case}: programs left loaded"
    );
    assert_eq!(
        mounted(),
        was_mounted,
        "{case}: tracefs mount state changed"
    );
}

#[test]
fn no_program_or_mount_left_on_any_exit_or_skip() {
    if let Some(why) = skip_reason() {
        eprintln!("trace_detach: no_program_or_mount_left_on_any_exit_or_skip: SKIPPED: {why}");
        return;
    }
    use nix::sys::signal::Signal;
    let was_mounted = mounted();

    // normal end of -d
    let mut c = spawn(&["-d", "600ms"], false);
    let (ids, mut out) = running_ids(&mut c);
    std::io::copy(&mut out, &mut std::io::sink()).unwrap();
    assert!(c.wait().unwrap().success());
    check_clean("-d", &ids, was_mounted);

    for (case, sig) in [("SIGINT", Signal::SIGINT), ("SIGTERM", Signal::SIGTERM)] {
        let mut c = spawn(&[], false);
        let (ids, out) = running_ids(&mut c);
        signal(&c, sig);
        let status = c.wait().unwrap();
        drop(out);
        assert!(!status.success(), "{case}: {status:?}");
        check_clean(case, &ids, was_mounted);
    }

    // panic after the first interval
    let mut c = spawn(&[], true);
    let (ids, out) = running_ids(&mut c);
    let status = c.wait().unwrap();
    drop(out);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut c.stderr.take().unwrap(), &mut err).unwrap();
    assert!(
        !status.success() && err.contains("test panic"),
        "panic: {status:?} {err}"
    );
    check_clean("panic", &ids, was_mounted);

    // error: stdout closed under it (EPIPE on the next interval)
    let mut c = spawn(&[], false);
    let (ids, out) = running_ids(&mut c);
    drop(out);
    let status = c.wait().unwrap();
    assert!(status.code().is_some(), "error path: {status:?}");
    check_clean("closed stdout", &ids, was_mounted);

    // SIGKILL: the kernel drops the programs; the journal undoes the mount
    let mut c = spawn(&[], false);
    let (ids, out) = running_ids(&mut c);
    signal(&c, Signal::SIGKILL);
    c.wait().unwrap();
    drop(out);
    assert_eq!(
        still_loaded(&ids),
        Vec::<u32>::new(),
        "SIGKILL: programs left"
    );
    let restore = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("restore")
        .output()
        .unwrap();
    assert!(restore.status.success(), "{restore:?}");
    if !was_mounted {
        let said = String::from_utf8_lossy(&restore.stdout);
        assert!(
            said.contains("sys/kernel/tracing"),
            "restore did not unmount: {said}"
        );
    }
    check_clean("SIGKILL + restore", &ids, was_mounted);
}
