//! Standard output as every command writes it: a buffered writer straight
//! on file descriptor 1 whose errors are real. `std::io::stdout()` treats
//! a closed descriptor (EBADF) as a sink that accepts everything, so a
//! sampling loop would run to its end writing nowhere; here EBADF and
//! EPIPE (`| head`) both become [`io::ErrorKind::BrokenPipe`] ("stdout is
//! closed"), which `main` maps to a silent exit 0. The first failed write
//! therefore ends the run.
//!
//! `/dev/null` is a sink, however it was opened: write-only by a shell's
//! `>/dev/null`, read-write by Python's `subprocess.DEVNULL` or systemd's
//! `StandardOutput=null`, or by Rust's runtime, which reopens a
//! descriptor closed at start (`>&-`) on `/dev/null` before `main`. The
//! run then goes to its end with its exit status and messages, writing
//! nowhere, like any program's output to `/dev/null`.

use std::io::{self, BufWriter, Write};
use std::os::fd::AsFd;

/// Unbuffered writer on descriptor 1; see the module doc.
pub struct RawStdout(io::Stdout);

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        nix::unistd::write(self.0.as_fd(), buf).map_err(closed)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A closed stdout as [`io::ErrorKind::BrokenPipe`]; other errors of
/// the same kind, their message naming stdout ("stdout: No space left
/// on device (os error 28)"), whatever wraps them.
fn closed(e: nix::errno::Errno) -> io::Error {
    match e {
        nix::errno::Errno::EBADF | nix::errno::Errno::EPIPE => {
            io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed")
        }
        other => {
            let os = io::Error::from(other);
            io::Error::new(os.kind(), format!("stdout: {os}"))
        }
    }
}

/// Buffered stdout (flush it before the end: a flush error is the
/// caller's, dropping swallows it).
pub fn stdout() -> BufWriter<RawStdout> {
    BufWriter::with_capacity(64 * 1024, RawStdout(io::stdout()))
}

/// Unbuffered stdout, for a writer that hands over whole blocks of its
/// own (`top --batch`: a frame per write), so that no 64 KiB buffer is
/// allocated only to copy each block through it.
pub fn unbuffered() -> RawStdout {
    RawStdout(io::stdout())
}

/// Fails when descriptor 1 is closed, without writing anything: a
/// command can stop before a long sampling whose output nobody can
/// receive. (A zero-length write may never reach the kernel: this asks
/// whether descriptor 1 exists.)
pub fn check_open() -> io::Result<()> {
    nix::fcntl::fcntl(io::stdout().as_fd(), nix::fcntl::FcntlArg::F_GETFD)
        .map(|_| ())
        .map_err(closed)
}

/// True when `err` (anywhere in its chain) is a closed stdout or another
/// broken pipe: a normal end of the run, not an error.
pub fn is_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        let kind = if let Some(io) = e.downcast_ref::<io::Error>() {
            Some(io.kind())
        } else if let Some(j) = e.downcast_ref::<serde_json::Error>() {
            j.io_error_kind()
        } else if let Some(c) = e.downcast_ref::<csv::Error>() {
            match c.kind() {
                csv::ErrorKind::Io(io) => Some(io.kind()),
                _ => None,
            }
        } else {
            None
        };
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn broken_pipes_are_found_through_wrappers() {
        let pipe = || io::Error::new(io::ErrorKind::BrokenPipe, "x");
        assert!(is_closed(&anyhow::Error::from(pipe()).context("writing")));
        let j = serde_json::Error::io(pipe());
        assert!(is_closed(&anyhow::Error::from(j).context("json")));
        let c = csv::Error::from(pipe());
        assert!(is_closed(&anyhow::Error::from(c)));
        assert!(!is_closed(&anyhow::Error::from(
            io::Error::from_raw_os_error(28)
        )));
        assert!(!is_closed(&anyhow::anyhow!("broken pipe")));
    }

    #[test]
    fn ebadf_and_epipe_read_as_a_closed_stdout() {
        for e in [nix::errno::Errno::EBADF, nix::errno::Errno::EPIPE] {
            assert_eq!(closed(e).kind(), io::ErrorKind::BrokenPipe);
        }
        let full = closed(nix::errno::Errno::ENOSPC);
        assert_eq!(full.kind(), io::ErrorKind::StorageFull);
        assert_eq!(
            full.to_string(),
            "stdout: No space left on device (os error 28)"
        );
    }
}
