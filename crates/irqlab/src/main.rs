//! irqlab: the command-line entry point. Parses arguments (see `cli`),
//! dispatches to `cmd::<sub>::run`, and maps errors to exit codes.
//!
//! A closed stdout (`irqlab show | head -c 10`) is a normal end of
//! the run: exit 0 and no message, whatever wrapped the error. SIGPIPE
//! stays ignored (as Rust's runtime sets it), so the write returns EPIPE
//! instead of killing the process before the guard restored the host.
//!
//! The binary has its own C `main` (`#![no_main]`) instead of Rust's
//! runtime start: that start also finds the main thread's stack guard
//! (glibc's `pthread_getattr_np` parses `/proc/self/maps`: ~115 000
//! instructions and 8 system calls) and sets up a signal stack for stack
//! overflows (6 more), a tenth of a `top --batch -n 1` run. [`start`]
//! keeps what the runtime did that irqlab relies on: closed standard
//! descriptors reopened on `/dev/null`, SIGPIPE ignored, a panic's exit
//! code 101 after unwinding (drops, the guard's restore), stdout flushed
//! at exit (`std::process::exit`). A stack overflow of the main thread is
//! then a plain SIGSEGV, without Rust's message. (The unit tests keep
//! the test harness's `main`.)
#![cfg_attr(not(test), no_main)]

use irqlab::export::stdout::is_closed;
use irqlab::{cli, cmd};

use std::process::ExitCode;

/// malloc for every block, also the 64-aligned deflate states of the
/// gzip writers, so that a freed one is reused (`alloc.rs`).
#[global_allocator]
static ALLOC: irqlab::alloc::AlignedMalloc = irqlab::alloc::AlignedMalloc;

/// The C entry point: see the module documentation. The arguments are
/// std's (`std::env::args_os`, which glibc hands to std at load time).
#[cfg(not(test))]
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    start();
    let code = match std::panic::catch_unwind(run) {
        Ok(code) => exit_status(code),
        // the panic hook has reported it; the exit code of a Rust panic
        Err(_) => 101,
    };
    std::process::exit(code)
}

/// What Rust's runtime start does and irqlab needs: descriptors 0, 1 and 2
/// open (a closed one on `/dev/null`, so that no file irqlab opens becomes
/// its stdout or stderr) and SIGPIPE ignored; and, the process still
/// one thread, the heap's break allowed to move (`alloc::heap_on_huge_page`).
#[allow(unsafe_code)]
#[cfg_attr(test, allow(dead_code))]
fn start() {
    use nix::libc;
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: poll reads and writes the three pollfd of a live array
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) };
    for pfd in &fds {
        if polled < 0 || pfd.revents & libc::POLLNVAL != 0 {
            // SAFETY: fcntl on a descriptor number changes nothing
            let closed = polled >= 0 || unsafe { libc::fcntl(pfd.fd, libc::F_GETFD) } < 0;
            // SAFETY: open of a NUL-terminated path; the lowest free
            // descriptor is the closed one (the lower ones are open)
            if closed && unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) } < 0 {
                std::process::abort();
            }
        }
    }
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // one thread until a command starts more
    irqlab::alloc::allow_break_moves();
}

/// The status an [`ExitCode`] stands for (the std method that exits with
/// one is unstable): every code irqlab returns was made from a u8.
fn exit_status(code: ExitCode) -> i32 {
    (0..=u8::MAX)
        .find(|&k| ExitCode::from(k) == code)
        .map_or(1, i32::from)
}

#[cfg_attr(test, allow(dead_code))]
fn run() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(e) => return usage(&e),
    };
    match cmd::dispatch(args) {
        Ok(code) => code,
        Err(err) if is_closed(&err) => ExitCode::SUCCESS,
        Err(err) => {
            to_stderr(format_args!("{}", cmd::error_text(&err)));
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

/// clap's verdict: help and version to stdout (exit 0; a closed stdout
/// too, a failed write exit 1 with the reason); usage errors to stderr
/// with the `irqlab: ` prefix every message carries (exit 2).
fn usage(e: &clap::Error) -> ExitCode {
    if !e.use_stderr() {
        use std::io::{IsTerminal, Write};
        if std::io::stdout().is_terminal() {
            // clap styles it for the terminal
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        let mut out = irqlab::export::stdout::stdout();
        let text = e.render().to_string();
        return match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(err) => {
                // the error names stdout (`export::stdout`)
                to_stderr(format_args!("irqlab: error: {err}\n"));
                ExitCode::from(cmd::EXIT_FAILURE)
            }
        };
    }
    let text = e.render().to_string();
    to_stderr(format_args!(
        "irqlab: {}",
        irqlab::export::stderr::visible_lines(&text)
    ));
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

/// A message to stderr; dropped when stderr cannot take it (a closed
/// pipe, a full disk): std's `eprintln!` would panic instead.
fn to_stderr(message: std::fmt::Arguments) {
    use std::io::Write;
    let _ = std::io::stderr().write_fmt(message);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C `main` exits with the status of the `ExitCode` irqlab's
    /// commands return (std's own start did that for `fn main`).
    #[test]
    fn exit_status_is_the_code_each_command_returns() {
        assert_eq!(exit_status(ExitCode::SUCCESS), 0);
        assert_eq!(exit_status(ExitCode::FAILURE), 1);
        for k in [0u8, 1, 2, 3, 101, 130, 255] {
            assert_eq!(exit_status(ExitCode::from(k)), i32::from(k));
        }
        assert_eq!(exit_status(ExitCode::from(cmd::EXIT_FAILURE)), 1);
    }
}
