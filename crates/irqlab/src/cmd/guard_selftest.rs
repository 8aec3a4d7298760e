//! `irqlab guard-selftest` (hidden, for tests): make guarded changes to a
//! fake tree, then sleep, fail or panic, so tests can check that SIGINT,
//! SIGTERM, errors, panics and `irqlab restore` undo them.

use crate::bench::prepare;
use crate::cmd::args::{self, RootArgs};
use crate::cmd::bench::PrepareFlags;
use crate::guard::{default_journal, Event, Holder, RunLock, Stale, SystemGuard};
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
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// Write VALUE to the root-relative file REL (repeatable).
    #[arg(long, value_name = "REL=VALUE")]
    pub set: Vec<String>,
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
        println!(
            "ready: {}",
            if guard.is_some() {
                "mounted"
            } else {
                "mounted already"
            }
        );
        std::io::stdout().flush().context("writing to stdout")?;
        if let Some(d) = args.sleep {
            std::thread::sleep(d);
        }
        if let Some(mut g) = guard {
            print!("{}", g.restore()?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let me = Holder::me("guard-selftest", None);
    let _lock = RunLock::acquire(args.root.path(), me, &journal, Stale::TakeIfJournalEmpty)?;
    let mut guard = SystemGuard::new(&fs, journal)?;
    if args.trace {
        guard.set_observer(Box::new(|e: &Event<'_>| eprintln!("guard: {e}")));
    }
    for s in &args.set {
        let (rel, value) = s
            .split_once('=')
            .with_context(|| format!("--set expects REL=VALUE, found {s:?}"))?;
        guard.set_file(rel, value)?;
    }
    for o in prepare::apply(&mut guard, &args.prepare.preparation())? {
        eprintln!("irqlab: prepare: {o}");
    }
    println!(
        "ready: {} change(s) journaled in {}",
        guard.pending(),
        guard.journal_path().display()
    );
    std::io::stdout().flush().context("writing to stdout")?;
    if let Some(d) = args.sleep {
        std::thread::sleep(d);
    }
    if args.panic {
        panic!("guard-selftest: panic requested");
    }
    if args.fail {
        bail!("guard-selftest: failure requested");
    }
    print!("{}", guard.restore()?);
    Ok(ExitCode::SUCCESS)
}
