//! Live (feature `trace`, root, tracefs directory, bpftool): `irqlab trace`
//! leaves no BPF program behind and unmounts tracefs if it mounted it,
//! whichever way it ends: normal end of `-d`, SIGINT, SIGTERM, a panic, an
//! error (stdout closed), and SIGKILL (programs gone with the process;
//! `irqlab restore` unmounts a mount it made; with the kernel's BTF it
//! makes none). Each case lists the child's programs from
//! its /proc/PID/fdinfo while it runs and asks bpftool for each id after.
//! One test function: the cases must not overlap. The panic case's child
//! is this test binary running [`panic_child`]: the library's trace run
//! (`cmd::trace::run_to`) with a writer that panics on the second
//! interval, so no test hook sits in the irqlab binary.
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;

use clap::Parser;
use common::trace::{mounted, prog_ids, signal, still_loaded, Needs};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

fn skip_reason() -> Option<String> {
    common::trace::skip_reason(Needs {
        bpftool: true,
        ..Needs::default()
    })
}

fn spawn(extra: &[&str]) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_irqlab"));
    c.args(["trace", "-i", "100ms"]).args(extra);
    piped(c)
}

fn piped(mut c: Command) -> Child {
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Set in the environment of [`panic_child`]'s process: it runs only
/// when started by the test below.
const CHILD: &str = "IRQLAB_TRACE_DETACH_PANIC_CHILD";

/// What the writer's panic says.
const PANIC: &str = "trace_detach: test panic in the trace run's writer";

/// This test binary running only [`panic_child`].
fn spawn_panic_child() -> Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "panic_child",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
        // terse: no `test panic_child ... ` before the first interval
        "--quiet",
    ])
    .env(CHILD, "1");
    piped(c)
}

/// Stdout until the first interval is written, then a panic on the next
/// write (the second interval, one `-i` later: time for the test to list
/// the programs).
struct PanicOnSecondInterval {
    out: std::io::Stdout,
    flushed: bool,
}

impl Write for PanicOnSecondInterval {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.flushed {
            panic!("{PANIC}");
        }
        self.out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.flushed = true;
        self.out.flush()
    }
}

/// Not a test on its own: the panic case's child process. `irqlab trace
/// -i 100ms` through the library, whose writer panics on the second
/// interval (inside the run, with the programs attached and tracefs
/// mounted if it was not).
#[test]
#[ignore = "the panic case's child: run by no_program_or_mount_left_on_any_exit_or_skip"]
fn panic_child() {
    if std::env::var_os(CHILD).is_none() {
        visible!("trace_detach: panic_child: SKIPPED: run by no_program_or_mount_left_on_any_exit_or_skip only");
        return;
    }
    let cli = irqlab::cli::Cli::try_parse_from(["irqlab", "trace", "-i", "100ms"]).unwrap();
    let irqlab::cli::Command::Trace(args) = cli.command else {
        panic!("not the trace subcommand");
    };
    let mut out = PanicOnSecondInterval {
        out: std::io::stdout(),
        flushed: false,
    };
    let ended = irqlab::cmd::trace::run_to(args, &mut out);
    panic!("the trace run ended before its writer panicked: {ended:?}");
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
    assert!(ids.iter().all(|&id| common::trace::loaded(id)));
    (ids, out)
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
    if !common::host_changes_allowed("trace_detach: no_program_or_mount_left_on_any_exit_or_skip") {
        return;
    }
    if common::trace::skipped(
        "trace_detach: no_program_or_mount_left_on_any_exit_or_skip",
        skip_reason(),
    ) {
        return;
    }
    use nix::sys::signal::Signal;
    let _one = common::trace::one_at_a_time();
    let was_mounted = mounted();

    // normal end of -d
    let mut c = spawn(&["-d", "600ms"]);
    let (ids, mut out) = running_ids(&mut c);
    std::io::copy(&mut out, &mut std::io::sink()).unwrap();
    assert!(c.wait().unwrap().success());
    check_clean("-d", &ids, was_mounted);

    for (case, sig) in [("SIGINT", Signal::SIGINT), ("SIGTERM", Signal::SIGTERM)] {
        let mut c = spawn(&[]);
        let (ids, out) = running_ids(&mut c);
        signal(c.id(), sig);
        let status = c.wait().unwrap();
        drop(out);
        assert!(!status.success(), "{case}: {status:?}");
        check_clean(case, &ids, was_mounted);
    }

    // a panic inside the run, after the first interval
    let mut c = spawn_panic_child();
    let (ids, out) = running_ids(&mut c);
    let status = c.wait().unwrap();
    drop(out);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut c.stderr.take().unwrap(), &mut err).unwrap();
    assert!(
        !status.success() && err.contains(PANIC),
        "panic: {status:?} {err}"
    );
    check_clean("panic", &ids, was_mounted);

    // error: stdout closed under it (EPIPE on the next interval)
    let mut c = spawn(&[]);
    let (ids, out) = running_ids(&mut c);
    drop(out);
    let status = c.wait().unwrap();
    assert!(status.code().is_some(), "error path: {status:?}");
    check_clean("closed stdout", &ids, was_mounted);

    // SIGKILL: the kernel drops the programs; the journal undoes a mount.
    // With the kernel's BTF a trace needs no tracefs and mounts none.
    let mut c = spawn(&[]);
    let (ids, out) = running_ids(&mut c);
    let mounted_by_it = !was_mounted && mounted();
    if std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        assert!(
            !mounted_by_it,
            "trace mounted tracefs although the kernel has BTF"
        );
    }
    signal(c.id(), Signal::SIGKILL);
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
    let said = String::from_utf8_lossy(&restore.stdout);
    assert_eq!(
        said.contains("sys/kernel/tracing"),
        mounted_by_it,
        "restore unmounts what the killed trace mounted, and only that: {said}"
    );
    check_clean("SIGKILL + restore", &ids, was_mounted);
}
