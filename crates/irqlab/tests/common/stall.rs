//! A child held at a chosen point of its run: one of its standard streams
//! is a pipe the test fills ([`Stall::fill`]), so that the child's next
//! write there blocks until the test reads again, and [`wait_blocked`]
//! sees it blocked. A signal sent then arrives at that point of the run,
//! neither sooner nor later.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::process::Stdio;
use std::thread::JoinHandle;
use std::time::Duration;

/// A pipe for a child's stdout or stderr, which the test can fill.
pub struct Stall {
    /// The test's (reading) end.
    read: File,
    /// The child's end, until [`Stall::stdio`] hands it over.
    write: Option<OwnedFd>,
    /// A writing open file description of the same pipe, of its own and
    /// not blocking (the child's stays blocking).
    filler: File,
}

impl Default for Stall {
    fn default() -> Self {
        Self::new()
    }
}

impl Stall {
    pub fn new() -> Stall {
        // not inherited by the other tests' children (the test's end
        // would not see the end of the child's writes until theirs)
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        let filler = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(format!("/proc/self/fd/{}", write.as_raw_fd()))
            .unwrap();
        Stall {
            read: File::from(read),
            write: Some(write),
            filler,
        }
    }

    /// The child's end (once).
    pub fn stdio(&mut self) -> Stdio {
        Stdio::from(self.write.take().unwrap())
    }

    /// Read what the child writes until it has written `needle` (true)
    /// or `alive` says it ended (false); what was read, in `text`.
    pub fn read_until(
        &mut self,
        needle: &str,
        mut alive: impl FnMut() -> bool,
        text: &mut String,
    ) -> bool {
        // the test's own description: the child's stays blocking
        let fl = nix::fcntl::fcntl(&self.read, nix::fcntl::F_GETFL).unwrap();
        let nonblock = nix::fcntl::OFlag::from_bits_truncate(fl) | nix::fcntl::OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(&self.read, nix::fcntl::F_SETFL(nonblock)).unwrap();
        let mut bytes = Vec::new();
        let mut byte = [0u8];
        let found = loop {
            if String::from_utf8_lossy(&bytes).contains(needle) {
                break true;
            }
            match self.read.read(&mut byte) {
                Ok(0) => break false,
                Ok(_) => bytes.push(byte[0]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if !alive() {
                        break false;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("reading the pipe: {e}"),
            }
        };
        let blocking = nix::fcntl::OFlag::from_bits_truncate(fl);
        nix::fcntl::fcntl(&self.read, nix::fcntl::F_SETFL(blocking)).unwrap();
        text.push_str(&String::from_utf8_lossy(&bytes));
        found
    }

    /// Fill the pipe with newlines until a write would block: the child's
    /// next write blocks until the test reads.
    pub fn fill(&mut self) {
        for chunk in [4096, 1] {
            let buf = vec![b'\n'; chunk];
            loop {
                match self.filler.write(&buf) {
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("filling the pipe: {e}"),
                }
            }
        }
    }

    /// Read everything left, on a thread (the child's writes go on), until
    /// the child's end is closed (it ended).
    pub fn drain(mut self) -> JoinHandle<String> {
        drop(self.write.take());
        drop(self.filler);
        std::thread::spawn(move || {
            let mut text = String::new();
            self.read.read_to_string(&mut text).unwrap();
            text
        })
    }
}

/// Wait up to `limit` for process `pid` to block writing into a full pipe
/// (`/proc/PID/wchan`: `pipe_write`, `anon_pipe_write` since Linux 6.16);
/// false if it did not.
pub fn wait_blocked(pid: u32, limit: Duration) -> bool {
    super::wait_until(limit, || {
        std::fs::read_to_string(format!("/proc/{pid}/wchan"))
            .is_ok_and(|w| w.ends_with("pipe_write"))
    })
}

/// Start `sh -c "trap '' INT; exec irqlab ARGS"` (SIGINT ignored as in a
/// background job: the run must catch it itself) with stdout to `stdout`
/// and stderr to a filled [`Stall`]; at its first stderr write, which
/// blocks, send `sig`. Returns its exit status (`None`: still running
/// 10 s later; it is killed) and everything it wrote to stderr.
pub fn signal_at_first_stderr(
    args: &str,
    stdout: File,
    sig: nix::sys::signal::Signal,
) -> (Option<std::process::ExitStatus>, String) {
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let mut err = Stall::new();
    err.fill();
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("trap '' INT; exec '{}' {args}", bin.display()))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(err.stdio())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let pid = child.0.id();
    assert!(
        wait_blocked(pid, Duration::from_secs(30)),
        "irqlab {args}: never wrote to stderr"
    );
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig).unwrap();
    let text = err.drain();
    let mut status = None;
    super::wait_until(Duration::from_secs(10), || {
        status = child.0.try_wait().unwrap();
        status.is_some()
    });
    drop(child);
    (status, text.join().unwrap())
}
