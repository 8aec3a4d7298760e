//! irqlab: the command-line entry point. Parses arguments (see `cli`),
//! dispatches to `cmd::<sub>::run`, and maps errors to exit codes.

use irqlab::{cli, cmd};

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = <cli::Cli as clap::Parser>::parse();
    match cmd::dispatch(args) {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("irqlab: error: {err:#}");
            ExitCode::from(cmd::EXIT_FAILURE)
        }
    }
}

/// A closed stdout (`irqlab show | head`) is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
