//! clap declarations only: the subcommands and their flags (and
//! [`visible_command`], the tree without hidden subcommands, for
//! completions and man pages). No logic here; each subcommand's `Args`
//! lives beside its implementation in `cmd/`.

use clap::{Parser, Subcommand};

/// Linux interrupt and softirq performance toolkit.
#[derive(Debug, Parser)]
#[command(name = "irqlab", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List IRQs, softirqs and CPU time once, or as rates over an interval.
    Show(crate::cmd::show::Args),
    /// Run A/B trials of an interrupt workload with the host prepared and restored.
    Bench(Box<crate::cmd::bench::Args>),
    /// Watch interrupts live, sorted by rate; --batch prints lines for scripts.
    Top(crate::cmd::top::Args),
    /// Compare result sets and decide: statistics, verdict, commit-message table.
    Compare(crate::cmd::compare::Args),
    /// Write a fake /proc and /sys tree (huge or exotic machines) for tests.
    Synth(crate::cmd::synth::Args),
    /// Undo host changes after a crash: replay the journal.
    Restore(crate::cmd::restore::Args),
    /// Test helper: make guarded changes to a fake tree, then sleep/fail/panic.
    #[command(hide = true)]
    GuardSelftest(crate::cmd::guard_selftest::Args),
    /// Measure what reading /proc/interrupts and friends costs on this kernel.
    #[command(long_about = crate::cmd::probe::LONG_ABOUT)]
    Probe(crate::cmd::probe::Args),
    /// Serve raw interrupt and softirq counters to Prometheus at /metrics.
    Serve(crate::cmd::serve::Args),
    /// Handler and softirq time and latency with eBPF (build feature `trace`).
    Trace(crate::cmd::trace::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(crate::cmd::completions::Args),
    /// Print the man page, or write one page per subcommand with --out DIR.
    Man(crate::cmd::man::Args),
    /// Record raw counters to a Parquet dataset (host=…/boot=…/) with a crash-safe journal.
    Record(crate::cmd::record::Args),
    /// Replay a recording: the `top` screen with time navigation, or `top --batch` lines (`--batch`).
    Replay(crate::cmd::replay::Args),
    /// Turn the journals a crashed `record` left into Parquet segments.
    Recover(crate::cmd::recover::Args),
}

/// The command tree as users see it: [`Cli`] without its hidden
/// subcommands (`guard-selftest`, a test helper). Shell completions and
/// man pages describe this one, so no shell offers a hidden name.
pub fn visible_command() -> clap::Command {
    let full = <Cli as clap::CommandFactory>::command();
    let subs: Vec<clap::Command> = full
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut cmd = clap::Command::new(full.get_name().to_string());
    if let Some(about) = full.get_about() {
        cmd = cmd.about(about.clone());
    }
    if let Some(about) = full.get_long_about() {
        cmd = cmd.long_about(about.clone());
    }
    if let Some(v) = full.get_version() {
        cmd = cmd.version(v.to_string());
    }
    cmd.subcommand_required(full.is_subcommand_required_set())
        .arg_required_else_help(full.is_arg_required_else_help_set())
        .args(full.get_arguments().cloned())
        .subcommands(subs)
}
