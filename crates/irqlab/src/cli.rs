//! clap declarations only: the subcommands and their flags (and
//! [`visible_command`], the tree without hidden subcommands, for
//! completions and man pages; [`parse_command`], the tree the binary
//! parses with, whose subcommands add their flags only when run). No
//! logic here; each subcommand's `Args` lives beside its implementation
//! in `cmd/`.

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

/// One subcommand of [`parse_command`]: name, one-line help, long help
/// (`None`: the one line), hidden, and the flags added when it is run.
type Sub = (
    &'static str,
    &'static str,
    Option<&'static str>,
    bool,
    fn(clap::Command) -> clap::Command,
);

/// [`Command`]'s variants in declaration order (`--help` lists them so),
/// with the help their doc comments give (clap drops a one-line
/// comment's final period) (the test
/// `parse_command_is_the_derived_tree` holds this table to the derived one).
const SUBCOMMANDS: [Sub; 15] = {
    use crate::cmd;
    [
        (
            "show",
            "List IRQs, softirqs and CPU time once, or as rates over an interval",
            None,
            false,
            flags::<cmd::show::Args>,
        ),
        (
            "bench",
            "Run A/B trials of an interrupt workload with the host prepared and restored",
            None,
            false,
            flags::<Box<cmd::bench::Args>>,
        ),
        (
            "top",
            "Watch interrupts live, sorted by rate; --batch prints lines for scripts",
            None,
            false,
            flags::<cmd::top::Args>,
        ),
        (
            "compare",
            "Compare result sets and decide: statistics, verdict, commit-message table",
            None,
            false,
            flags::<cmd::compare::Args>,
        ),
        (
            "synth",
            "Write a fake /proc and /sys tree (huge or exotic machines) for tests",
            None,
            false,
            flags::<cmd::synth::Args>,
        ),
        (
            "restore",
            "Undo host changes after a crash: replay the journal",
            None,
            false,
            flags::<cmd::restore::Args>,
        ),
        (
            "guard-selftest",
            "Test helper: make guarded changes to a fake tree, then sleep/fail/panic",
            None,
            true,
            flags::<cmd::guard_selftest::Args>,
        ),
        (
            "probe",
            "Measure what reading /proc/interrupts and friends costs on this kernel",
            Some(cmd::probe::LONG_ABOUT),
            false,
            flags::<cmd::probe::Args>,
        ),
        (
            "serve",
            "Serve raw interrupt and softirq counters to Prometheus at /metrics",
            None,
            false,
            flags::<cmd::serve::Args>,
        ),
        (
            "trace",
            "Handler and softirq time and latency with eBPF (build feature `trace`)",
            None,
            false,
            flags::<cmd::trace::Args>,
        ),
        (
            "completions",
            "Print a shell completion script (bash, zsh, fish, elvish, powershell)",
            None,
            false,
            flags::<cmd::completions::Args>,
        ),
        (
            "man",
            "Print the man page, or write one page per subcommand with --out DIR",
            None,
            false,
            flags::<cmd::man::Args>,
        ),
        (
            "record",
            "Record raw counters to a Parquet dataset (host=…/boot=…/) with a crash-safe journal",
            None,
            false,
            flags::<cmd::record::Args>,
        ),
        (
            "replay",
            "Replay a recording: the `top` screen with time navigation, or `top --batch` lines (`--batch`)",
            None,
            false,
            flags::<cmd::replay::Args>,
        ),
        (
            "recover",
            "Turn the journals a crashed `record` left into Parquet segments",
            None,
            false,
            flags::<cmd::recover::Args>,
        ),
    ]
};

/// `A`'s flags added to `sub`, whose one-line and long help stay the
/// variant's (as in the derived tree, where they are set after the flags).
fn flags<A: clap::Args>(sub: clap::Command) -> clap::Command {
    let about = sub.get_about().cloned();
    let long = sub.get_long_about().cloned();
    let sub = A::augment_args(sub);
    let sub = match about {
        Some(about) => sub.about(about),
        None => sub.about(None::<&str>),
    };
    match long {
        Some(long) => sub.long_about(long),
        None => sub.long_about(None::<&str>),
    }
}

/// The tree the binary parses with: [`Cli`]'s, except that each
/// subcommand adds its flags only when clap builds it, i.e. when it is
/// the one being run or its help is asked for (`Command::defer`). Building
/// every subcommand's flags, as `Cli::parse` does, was most of the CPU of
/// `irqlab --version` and 46 pages of heap (BENCHMARKS.md, session 10).
/// Parse its matches with `<Cli as clap::FromArgMatches>`.
pub fn parse_command() -> clap::Command {
    let subs = SUBCOMMANDS.iter().map(|&(name, about, long, hide, flags)| {
        let sub = clap::Command::new(name).about(about).hide(hide);
        let sub = match long {
            Some(long) => sub.long_about(long),
            None => sub,
        };
        sub.defer(flags)
    });
    clap::Command::new("irqlab")
        .version(env!("CARGO_PKG_VERSION"))
        .about(env!("CARGO_PKG_DESCRIPTION"))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommands(subs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every help text, usage line and flag of `cmd` and its subcommands,
    /// fully built, as one string per command path.
    fn describe(cmd: &mut clap::Command, path: &str, out: &mut Vec<(String, String)>) {
        cmd.build();
        let mut d = format!(
            "{}\n{}\n{}\nhide={} sub_required={} else_help={} version={:?}\n",
            cmd.render_long_help(),
            cmd.render_help(),
            cmd.render_usage(),
            cmd.is_hide_set(),
            cmd.is_subcommand_required_set(),
            cmd.is_arg_required_else_help_set(),
            cmd.get_version(),
        );
        for a in cmd.get_arguments() {
            d.push_str(&format!("{a:?}\n"));
        }
        out.push((path.to_string(), d));
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        for name in names {
            let mut sub = cmd.find_subcommand_mut(&name).unwrap().clone();
            describe(&mut sub, &format!("{path} {name}"), out);
        }
    }

    #[test]
    fn parse_command_is_the_derived_tree() {
        let mut derived = Vec::new();
        describe(&mut Cli::command(), "irqlab", &mut derived);
        let mut lazy = Vec::new();
        describe(&mut parse_command(), "irqlab", &mut lazy);
        let names = |v: &[(String, String)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(names(&lazy), names(&derived));
        for ((path, l), (_, d)) in lazy.iter().zip(&derived) {
            assert_eq!(l, d, "{path}");
        }
        parse_command().debug_assert();
    }

    /// Every `PathBuf` argument of every subcommand refuses an empty path
    /// as a usage error naming the argument, before anything runs
    /// (`compare`'s `[LABEL=]PATH` inputs: tests/compare_usage.rs).
    #[test]
    fn every_path_argument_refuses_an_empty_path() {
        let path = clap::builder::ValueParser::path_buf().type_id();
        let mut seen = Vec::new();
        let mut cli = Cli::command();
        cli.build();
        for sub in cli.get_subcommands() {
            for a in sub.get_arguments() {
                if a.get_value_parser().type_id() != path {
                    continue;
                }
                let mut argv = vec!["irqlab".to_string(), sub.get_name().to_string()];
                argv.extend(a.get_long().map(|l| format!("--{l}")));
                argv.push(String::new());
                let e = parse_command().try_get_matches_from(&argv).unwrap_err();
                let shown = e.to_string();
                assert_eq!(
                    e.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "{argv:?}: {shown}"
                );
                assert!(
                    shown.contains("invalid value '' for '"),
                    "{argv:?}: {shown}"
                );
                assert!(shown.contains("the path is empty"), "{argv:?}: {shown}");
                let named = match a.get_long() {
                    Some(l) => format!("'--{l} <"),
                    None => format!("'<{}>", a.get_value_names().unwrap_or_default()[0]),
                };
                assert!(shown.contains(&named), "{argv:?}: {shown}");
                assert_eq!(e.exit_code(), 2);
                seen.push(argv[1..argv.len() - 1].join(" "));
            }
        }
        for want in [
            "compare --plot",
            "replay",
            "recover",
            "record --out",
            "show --root",
            "serve --root",
            "top --root",
            "trace --root",
            "bench --out",
            "bench --resume",
            "synth --out",
        ] {
            assert!(
                seen.iter().any(|s| s == want),
                "{want} not checked: {seen:?}"
            );
        }
        // a path that is not UTF-8 is still a path
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"/tmp/\xff");
        let m = parse_command().try_get_matches_from([
            std::ffi::OsStr::new("irqlab"),
            std::ffi::OsStr::new("replay"),
            odd,
        ]);
        assert!(m.is_ok(), "{m:?}");
    }

    #[test]
    fn parse_command_builds_only_the_subcommand_run() {
        let mut cmd = parse_command();
        let m = cmd
            .try_get_matches_from_mut(["irqlab", "top", "--batch", "-n", "1"])
            .unwrap();
        let built: Vec<&str> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help" && s.get_arguments().next().is_some())
            .map(|s| s.get_name())
            .collect();
        assert_eq!(built, ["top"]);
        let mut m = m;
        let cli = <Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut m).unwrap();
        assert!(matches!(cli.command, Command::Top(_)));
    }
}
