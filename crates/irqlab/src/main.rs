//! irqlab: the command-line entry point. Parses arguments (see `cli`),
//! dispatches to `cmd::<sub>::run`, and maps errors to exit codes.
//!
//! A closed stdout (`irqlab show | head -c 10`) is a normal end of
//! the run: exit 0 and no message, whatever wrapped the error. SIGPIPE
//! stays ignored (Rust's default), so the write returns EPIPE instead of
//! killing the process before the guard restored the host.

use irqlab::export::stdout::is_closed;
use irqlab::{cli, cmd};

use std::process::ExitCode;

/// malloc for every block, also the 64-aligned deflate states of the
/// gzip writers, so that a freed one is reused (`alloc.rs`).
#[global_allocator]
static ALLOC: irqlab::alloc::AlignedMalloc = irqlab::alloc::AlignedMalloc;

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(e) => return usage(&e),
    };
    match cmd::dispatch(args) {
        Ok(code) => code,
        Err(err) if is_closed(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("irqlab: error: {err:#}");
            ExitCode::from(cmd::EXIT_FAILURE)
        }
    }
}

/// The arguments, as `Cli::try_parse` reads them, through
/// `cli::parse_command`: only the subcommand run gets its flags built.
fn parse() -> Result<cli::Cli, clap::Error> {
    let mut cmd = cli::parse_command();
    let mut matches = cmd.try_get_matches_from_mut(std::env::args_os())?;
    <cli::Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut matches)
        .map_err(|e| e.format(&mut cmd))
}

/// clap's verdict: help and version to stdout (exit 0); usage errors to
/// stderr with the `irqlab: ` prefix every message carries (exit 2).
fn usage(e: &clap::Error) -> ExitCode {
    if !e.use_stderr() {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    eprint!("irqlab: {}", e.render());
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}
