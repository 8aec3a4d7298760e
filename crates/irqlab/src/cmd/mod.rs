//! Subcommand implementations: one module per subcommand, each with
//! `Args` (clap) and `run`. Exit codes are defined here.

pub mod show;
pub mod synth;

use crate::cli::{Cli, Command};
use std::process::ExitCode;

/// Exit code for any error (bad input, unreadable files, failed command).
pub const EXIT_FAILURE: u8 = 1;

/// Run the selected subcommand.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Show(a) => show::run(a),
        Command::Synth(a) => synth::run(a),
    }
}
