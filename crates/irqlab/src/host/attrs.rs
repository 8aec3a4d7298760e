//! Many small attribute files under one directory — `/proc/irq/N/…` for
//! every row `show` prints: the directory is opened once and each file is
//! opened relative to it (`openat`), so the kernel resolves two path
//! components per file instead of the whole path from `/` (measured: path
//! lookup was a third of `show --format json` on a 1056-IRQ tree). The
//! same rules as every other read: never blocks on open, refuses anything
//! but a regular file, and reads like [`HostFs::read_attr`].
//!
//! A file read is not closed at once: its descriptor joins a run of
//! consecutive descriptors, all opened by this `AttrDir`; the runs (a few:
//! a descriptor the process inherited, or opened meanwhile, splits the
//! numbers) are closed by one `close_range(2)` each once they hold
//! [`AttrDir::HELD_MAX`] in all, on [`AttrDir::flush`] and on drop (on a
//! kernel whose system-call return is dear, a thousand `close` calls were
//! 0.5–0.8 ms of a 9 ms `show --format json`; BENCHMARKS.md, session 30).
//! A descriptor inside a run is never another's: a run grows only by the
//! number just past one of its ends, which was free.

use super::HostFs;
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::libc::c_long;
use nix::sys::stat::Mode;
use std::fs::File;
use std::io;
use std::os::fd::{IntoRawFd, OwnedFd, RawFd};

/// A directory of attribute files, kept open (see the module doc).
#[derive(Debug)]
pub struct AttrDir {
    dir: OwnedFd,
    /// Descriptors of files read and not yet closed, as runs `(first,
    /// last)` of consecutive numbers, every one opened here and owned by
    /// nobody else.
    runs: Vec<(RawFd, RawFd)>,
    /// How many descriptors the runs hold.
    held: usize,
}

impl HostFs {
    /// Open directory `rel` for [`AttrDir::read`]s.
    pub fn attr_dir(&self, rel: &str) -> io::Result<AttrDir> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let dir = nix::fcntl::open(&self.path(rel), flags, Mode::empty())?;
        Ok(AttrDir {
            dir,
            runs: Vec::with_capacity(AttrDir::RUNS_MAX),
            held: 0,
        })
    }
}

impl AttrDir {
    /// Most descriptors of files read that are kept open (far below the
    /// `RLIMIT_NOFILE` a process starts with: 1024 by default).
    pub const HELD_MAX: usize = 256;
    /// Most runs kept: a descriptor that extends none when there are this
    /// many closes them all first.
    pub const RUNS_MAX: usize = 8;

    /// File `rel` (relative to the directory) as trimmed text, `None` when
    /// it is absent, not a regular file or unreadable (like
    /// [`HostFs::read_attr`]).
    ///
    /// Two system calls in the usual case (open, one short read; the
    /// close is one `close_range` per run of files, see the module doc):
    /// the file's type is asked (`fstat`) only when the first read is not
    /// a short non-empty one — empty, full or failed, which is what a
    /// FIFO (non-blocking: empty), a directory (`EISDIR`) or a device
    /// like `/dev/zero` (full) gives — and the file is then refused
    /// unless regular. On a 1056-IRQ tree the `fstat` was a quarter of
    /// the 5.7 µs each row's affinity cost.
    pub fn read(&mut self, rel: &str) -> Option<String> {
        let file = self.open(rel).ok()?;
        let text = super::attr_text_checked(&file);
        self.keep(file);
        text
    }

    /// [`AttrDir::read`] that hands the descriptor back instead of
    /// closing it, for a caller that reads the file again later
    /// ([`AttrDir::read_again`]); the error when it cannot be opened.
    pub fn read_keeping(&mut self, rel: &str) -> io::Result<(Option<String>, File)> {
        let file = self.open(rel)?;
        Ok((super::attr_text_checked(&file), file))
    }

    /// The text of a file [`AttrDir::read_keeping`] handed out, read
    /// again from its start (one `pread` on a kernel attribute file,
    /// which regenerates it): `None` as [`AttrDir::read`] gives it, and
    /// also when the file is gone (a `/proc/irq/N` removed with its IRQ).
    pub fn read_again(file: &File) -> Option<String> {
        super::attr_text_checked(file)
    }

    /// Close every descriptor of files read so far.
    pub fn flush(&mut self) {
        for (first, last) in self.runs.drain(..) {
            close_run(first, last);
        }
        self.held = 0;
    }

    /// Open `rel`; when the process is out of descriptors while runs
    /// hold some, they are closed and the open tried again.
    fn open(&mut self, rel: &str) -> io::Result<File> {
        let open = |dir: &OwnedFd| nix::fcntl::openat(dir, rel, OPEN_FLAGS, Mode::empty());
        let fd = match open(&self.dir) {
            Err(Errno::EMFILE | Errno::ENFILE) if self.held > 0 => {
                self.flush();
                open(&self.dir)
            }
            r => r,
        }?;
        Ok(File::from(fd))
    }

    /// Add the descriptor of a file read to the run it extends at either
    /// end, else to a new run.
    fn keep(&mut self, file: File) {
        let fd = file.into_raw_fd();
        let after = self
            .runs
            .iter_mut()
            .rev()
            .find(|r| r.1.checked_add(1) == Some(fd));
        if let Some(run) = after {
            run.1 = fd;
        } else if let Some(run) = self
            .runs
            .iter_mut()
            .find(|r| r.0.checked_sub(1) == Some(fd))
        {
            run.0 = fd;
        } else {
            if self.runs.len() >= Self::RUNS_MAX {
                self.flush();
            }
            self.runs.push((fd, fd));
        }
        self.held += 1;
        if self.held >= Self::HELD_MAX {
            self.flush();
        }
    }
}

impl Drop for AttrDir {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Close descriptors `first..=last` (owned by nobody else): one
/// `close_range`, else (a kernel before 5.9: `ENOSYS`; `EINVAL`; a
/// seccomp filter's `EPERM`: nothing was closed) one `close` each.
#[allow(unsafe_code)]
fn close_run(first: RawFd, last: RawFd) {
    // SAFETY: close_range(2) with flags 0 only closes descriptors; those
    // of first..=last are the run's, which no File or OwnedFd holds.
    let (first_l, last_l) = (c_long::from(first), c_long::from(last));
    let r = unsafe { nix::libc::syscall(nix::libc::SYS_close_range, first_l, last_l, 0 as c_long) };
    if let Err(Errno::ENOSYS | Errno::EINVAL | Errno::EPERM) = Errno::result(r) {
        close_each(first, last);
    }
}

/// One `close` for each of `first..=last` (owned by nobody else).
#[allow(unsafe_code)]
fn close_each(first: RawFd, last: RawFd) {
    for fd in first..=last {
        // SAFETY: the run's descriptors are owned by nobody else; each is
        // taken over here and closed once.
        drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
    }
}

/// How an attribute file is opened: never blocking, never a controlling
/// terminal, closed on exec.
const OPEN_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_NONBLOCK)
    .union(OFlag::O_NOCTTY)
    .union(OFlag::O_CLOEXEC);

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A fake `/proc/irq` whose IRQ 5 holds one file of every kind an
    /// attribute read must judge: `a` (a short text), `big`, `empty`,
    /// `full` (exactly `ATTR_FIRST` bytes), `sub` (a directory), `zero`
    /// and `null` (devices), `fifo`; also `loop` (a symlink to itself).
    pub(in crate::host) fn odd_files_tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let irq = dir.path().join("proc/irq/5");
        std::fs::create_dir_all(irq.join("sub")).unwrap();
        std::fs::write(irq.join("a"), " 0-3\n").unwrap();
        std::fs::write(irq.join("big"), "x".repeat(5000)).unwrap();
        std::fs::write(irq.join("empty"), "").unwrap();
        std::fs::write(irq.join("full"), "7".repeat(crate::host::ATTR_FIRST)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", irq.join("zero")).unwrap();
        std::os::unix::fs::symlink("/dev/null", irq.join("null")).unwrap();
        std::os::unix::fs::symlink("loop", irq.join("loop")).unwrap();
        nix::unistd::mkfifo(&irq.join("fifo"), Mode::S_IRWXU).unwrap();
        dir
    }

    #[test]
    fn reads_like_read_attr_and_refuses_what_it_refuses() {
        let dir = odd_files_tree();
        let fs = HostFs::new(dir.path());
        let mut d = fs.attr_dir("proc/irq").unwrap();
        for rel in [
            "5/a", "5/big", "5/empty", "5/full", "5/fifo", "5/sub", "5/absent", "5/zero", "5/null",
            "6/a",
        ] {
            let p = format!("proc/irq/{rel}");
            assert_eq!(d.read(rel), fs.read_attr(&p), "{rel}");
        }
        assert_eq!(d.read("5/a").as_deref(), Some("0-3"));
        assert_eq!(d.read("5/big").map(|s| s.len()), Some(5000));
        assert_eq!(d.read("5/zero"), None);
        assert_eq!(d.read("5/fifo"), None);
        assert!(fs.attr_dir("proc/nothing").is_err());
    }
}
