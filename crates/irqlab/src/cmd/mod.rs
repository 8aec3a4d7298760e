//! Subcommand implementations: one module per subcommand, each with
//! `Args` (clap) and `run`. Exit codes are defined here.

pub mod bench;
pub mod compare;
pub mod guard_selftest;
pub mod probe;
pub mod record;
pub mod recover;
pub mod replay;
pub mod restore;
pub mod serve;
pub mod show;
pub mod synth;
pub mod top;

use crate::cli::{Cli, Command};
use std::process::ExitCode;

/// Exit code for any error (bad input, unreadable files, failed command).
pub const EXIT_FAILURE: u8 = 1;

/// Parse a duration such as `1s`, `250ms`, `2m`, `1.5s` or `100us`.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected a duration like 1s or 250ms, found {s:?}"))?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "ns" => v / 1e9,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => {
            return Err(format!(
                "unknown duration unit {unit:?} in {s:?} (use ns, us, ms, s, m, h)"
            ))
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("duration out of range: {s:?}"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
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
        Command::Record(a) => record::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Recover(a) => recover::run(a),
    }
}
