//! `irqlab guard-selftest` (hidden, for tests): make guarded changes to a
//! fake tree, then sleep, fail or panic, so tests can check that SIGINT,
//! SIGTERM, errors, panics and `irqlab restore` undo them. Its stdout
//! lines go through `export::stdout` (a failed write is an error naming
//! stdout, a closed one a normal end, never a panic), their control
//! characters shown as on stderr (`export::stderr::visible_lines`).

use crate::bench::prepare;
use crate::cmd::args::{self, RootArgs};
use crate::cmd::bench::PrepareFlags;
use crate::export::stderr::visible_lines;
use crate::guard::{default_journal, variant_journal, Event, Holder, RunLock, Stale, SystemGuard};
use anyhow::{bail, Context};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab guard-selftest`.
#[derive(Debug, clap::Args)]
pub struct Args {
    // Fake tree to change (`/`, the default, is refused).
    #[command(flatten)]
    pub root: RootArgs,
    /// Journal [default: ROOT/.irqlab-journal.jsonl].
    #[arg(long, value_parser = super::args::path())]
    pub journal: Option<PathBuf>,
    /// Write VALUE to the root-relative file REL (repeatable).
    #[arg(long, value_name = "REL=VALUE")]
    pub set: Vec<String>,
    /// Write VALUE to REL through a second guard, opened after every
    /// other change on the journal's variant journal (as bench's
    /// per-variant preparation is), and undone before the first guard's.
    #[arg(long, value_name = "REL=VALUE")]
    pub then_set: Vec<String>,
    /// Host preparation steps, as `irqlab bench` takes them.
    #[command(flatten)]
    pub prepare: PrepareFlags,
    /// Sleep this long after the changes (a `ready:` line is printed first).
    #[arg(long, value_parser = args::duration, allow_hyphen_values = true)]
    pub sleep: Option<Duration>,
    /// End with an error after the changes.
    #[arg(long)]
    pub fail: bool,
    /// Panic after the changes.
    #[arg(long)]
    pub panic: bool,
    /// Print each guard step on stderr.
    #[arg(long)]
    pub trace: bool,
    /// Start `sh -c SCRIPT` in a process group tracked like a bench
    /// command (gated until journaled); at a normal end the group is
    /// stopped and released as bench does.
    #[arg(long, value_name = "SCRIPT")]
    pub spawn: Option<String>,
    /// Track the spawned group's descendants without a cgroup (the
    /// fallback: environment token and child subreaper).
    #[arg(long)]
    pub no_cgroup: bool,
    /// Mount tracefs on the root-relative directory REL the way `irqlab
    /// trace` does (under the run lock, never on another run's mount),
    /// then sleep; no other change is made.
    #[arg(long, value_name = "REL")]
    pub mount: Option<String>,
}

/// Apply, report `ready`, then sleep / fail / panic / restore.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.root.is_host() {
        bail!("guard-selftest refuses --root /: it is for fake trees");
    }
    let fs = args.root.host_fs();
    let journal = args
        .journal
        .clone()
        .unwrap_or_else(|| default_journal(args.root.path()));
    if let Some(rel) = &args.mount {
        let guard = crate::guard::use_mount(&fs, rel, "tracefs", "guard-selftest")?;
        let state = if guard.is_some() {
            "mounted"
        } else {
            "mounted already"
        };
        write_stdout(&format!("ready: {state}\n"))?;
        if let Some(d) = args.sleep {
            std::thread::sleep(d);
        }
        if let Some(mut g) = guard {
            let report = g.restore()?;
            write_stdout(&report.to_string())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let me = Holder::me("guard-selftest", None);
    let _lock = RunLock::acquire(args.root.path(), me, &journal, Stale::TakeIfJournalEmpty)?;
    let mut guard = SystemGuard::new(&fs, journal)?;
    if args.trace {
        guard.set_observer(Box::new(|e: &Event<'_>| eprintln!("guard: {e}")));
    }
    set_files(&mut guard, "--set", &args.set)?;
    for o in prepare::apply(&mut guard, &args.prepare.preparation())? {
        eprintln!("irqlab: prepare: {o}");
    }
    let mut second = if args.then_set.is_empty() {
        None
    } else {
        let mut g = SystemGuard::new(&fs, variant_journal(&guard.journal_path()))?;
        if args.trace {
            g.set_observer(Box::new(|e: &Event<'_>| eprintln!("guard: {e}")));
        }
        set_files(&mut g, "--then-set", &args.then_set)?;
        Some(g)
    };
    if args.no_cgroup {
        crate::guard::disable_cgroups();
    }
    let spawned = match &args.spawn {
        Some(script) => Some(spawn(script, &guard.tracker())?),
        None => None,
    };
    write_stdout(&format!(
        "ready: {} change(s) journaled in {}\n",
        guard.pending(),
        guard.journal_path().display()
    ))?;
    if let Some(d) = args.sleep {
        std::thread::sleep(d);
    }
    if args.panic {
        panic!("guard-selftest: panic requested");
    }
    if args.fail {
        bail!("guard-selftest: failure requested");
    }
    if let Some((mut child, tracked)) = spawned {
        let pgid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = child.wait();
        while nix::sys::signal::killpg(pgid, None).is_ok() {
            let _ = nix::sys::wait::waitpid(
                nix::unistd::Pid::from_raw(-pgid.as_raw()),
                Some(nix::sys::wait::WaitPidFlag::WNOHANG),
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        tracked.release()?;
    }
    if let Some(g) = second.as_mut() {
        write_stdout(&g.restore()?.to_string())?;
    }
    let report = guard.restore()?;
    write_stdout(&report.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// Write each `REL=VALUE` of `flag` through `guard`.
fn set_files(guard: &mut SystemGuard, flag: &str, sets: &[String]) -> anyhow::Result<()> {
    for s in sets {
        let (rel, value) = s
            .split_once('=')
            .with_context(|| format!("{flag} expects REL=VALUE, found {s:?}"))?;
        guard.set_file(rel, value)?;
    }
    Ok(())
}

/// `text` on stdout at once, in one write when it can (a test waits for
/// the `ready` line), its control characters but the newlines shown as
/// `\xNN` as on stderr (a path from the tree or the journal cannot drive
/// the terminal); the error names stdout (`export::stdout`).
fn write_stdout(text: &str) -> std::io::Result<()> {
    crate::export::stdout::unbuffered().write_all(visible_lines(text).as_bytes())
}

/// `sh -c SCRIPT` in its own process group, held at a gate until the
/// group is journaled (the protocol of `bench/workloads/child.rs`).
fn spawn(
    script: &str,
    tracker: &crate::guard::Tracker,
) -> anyhow::Result<(std::process::Child, crate::guard::Tracked)> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new("sh")
        .args(["-c", "read -r _ && exec sh -c \"$1\"", "irqlab", script])
        .envs(tracker.child_env())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .context("starting --spawn")?;
    let pgid = i32::try_from(child.id()).context("pid out of range")?;
    let tracked = tracker.process_group(pgid)?;
    if let Some(mut gate) = child.stdin.take() {
        gate.write_all(b"go\n").context("opening the gate")?;
    }
    Ok((child, tracked))
}
