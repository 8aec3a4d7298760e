//! Subcommand implementations: one module per subcommand, each with
//! `Args` (clap) and `run`. Exit codes are defined here.

pub mod args;
pub mod bench;
pub mod compare;
pub mod completions;
pub mod guard_selftest;
pub mod man;
pub mod probe;
pub mod record;
pub mod recover;
pub mod replay;
pub mod restore;
pub mod serve;
pub mod show;
pub mod synth;
pub mod top;
pub mod trace;

use crate::cli::{Cli, Command};
use std::process::ExitCode;

/// Exit code for any error (bad input, unreadable files, failed command).
pub const EXIT_FAILURE: u8 = 1;

/// `show --format`: which exporter of `crate::export` writes the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned human-readable tables.
    Table,
    /// One JSON document (see README for the contract).
    Json,
    /// Long-format CSV: one line per (section, row, CPU).
    Csv,
}

/// An error as irqlab prints it on stderr: `{err:#}` with every line
/// prefixed, the first `irqlab: error: `, the others `irqlab: ` (a
/// message of several lines, such as a refused recovery's reasons, reads
/// as irqlab's like any other); newline-ended. Control characters (a
/// path's ESC) are shown as `\xNN` (`export::stderr`).
pub fn error_text(err: &anyhow::Error) -> String {
    let text = format!("{err:#}");
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.lines().enumerate() {
        out.push_str(match i {
            0 => "irqlab: error: ",
            _ => "irqlab: ",
        });
        out.push_str(&crate::export::stderr::visible_lines(line));
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("irqlab: error\n");
    }
    out
}

/// Run the selected subcommand.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Show(a) => show::run(a),
        Command::Bench(a) => bench::run(*a),
        Command::Compare(a) => compare::run(a),
        Command::Synth(a) => synth::run(a),
        Command::Restore(a) => restore::run(a),
        Command::GuardSelftest(a) => guard_selftest::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Top(a) => top::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Trace(a) => trace::run(a),
        Command::Completions(a) => completions::run(a),
        Command::Man(a) => man::run(a),
        Command::Record(a) => record::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Recover(a) => recover::run(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line of an error of several lines carries the prefix; a
    /// context chain stays on its first line.
    #[test]
    fn every_line_of_an_error_carries_the_prefix() {
        let e = anyhow::anyhow!("a: first\nsecond").context("while x");
        assert_eq!(
            error_text(&e),
            "irqlab: error: while x: a: first\nirqlab: second\n"
        );
        let one = anyhow::anyhow!("one line");
        assert_eq!(error_text(&one), "irqlab: error: one line\n");
        assert_eq!(error_text(&anyhow::anyhow!("")), "irqlab: error\n");
    }
}
