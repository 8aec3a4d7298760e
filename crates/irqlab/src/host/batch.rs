//! Many small files under one kept directory ([`AttrDir`]) read as one
//! batch: names in, each file's bytes or error out, in order. Through
//! io_uring where the kernel allows it and completes the reads inline
//! (not under procfs or sysfs: [`completes_inline`]) — per file an `openat` into a
//! direct (fixed) descriptor slot, a `read` of [`ATTR_FIRST`] bytes and a
//! `close`, hard-linked, up to [`SLOTS`] files per `io_uring_enter`: a
//! few system calls instead of three per file. No command uses it now:
//! on kernel 6.18 the ring cost more CPU than the plain calls it saves
//! (`show`'s affinity files, `cmd/show.rs`). Any file whose read is not a
//! short non-empty one (empty, full, failed: a FIFO, a directory,
//! `/dev/zero`, a long file) is read
//! again by the plain path, which is the only judge of such files; so is
//! every file when io_uring cannot be set up (`ENOSYS`, `EPERM`, seccomp,
//! `kernel.io_uring_disabled`), silently. Work the kernel punts to its
//! io-wq threads runs in threads of this process, so its CPU time is this
//! process's (`wait4`'s rusage counts it).
//!
//! The plain path is [`AttrDir::read`]'s (its bytes): open non-blocking relative to
//! the directory, one short read, `fstat` only when that read is not
//! conclusive, anything but a regular file refused.

use super::attrs::OPEN_FLAGS;
use super::{AttrDir, ATTR_FIRST};
use io_uring::{opcode, squeue, types, IoUring};
use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;

/// Files in flight at once: direct-descriptor slots registered, and
/// three entries (open, read, close) each in the submission queue.
pub const SLOTS: usize = 64;

/// How a [`BatchReader`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Batches through io_uring (the plain path for files it cannot judge).
    IoUring,
    /// One file at a time: open, read, close.
    Plain,
}

/// A reader of many small files (see the module doc); keep it to read
/// several batches through one ring.
pub struct BatchReader {
    ring: Ring,
    /// Sets the ring up (a failing one in tests).
    setup: fn() -> io::Result<IoUring>,
}

/// The ring of a [`BatchReader`]: set up on the first batch big enough
/// to pay for it.
enum Ring {
    /// Not set up yet (io_uring allowed).
    Untried,
    Ready(Box<IoUring>),
    /// Plain path only (asked for, or io_uring failed).
    Off,
}

/// Fewer files than this are read plainly (setting up a ring costs about
/// as much as reading a few files).
pub const MIN_BATCH: usize = 4;

impl std::fmt::Debug for BatchReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let via = match self.ring {
            Ring::Untried => "untried",
            Ring::Ready(_) => "io_uring",
            Ring::Off => "plain",
        };
        f.debug_struct("BatchReader").field("via", &via).finish()
    }
}

impl Default for BatchReader {
    fn default() -> Self {
        BatchReader::new()
    }
}

impl BatchReader {
    /// Through io_uring when a ring with the needed operations can be set
    /// up (on the first batch of at least `MIN_BATCH` files), else plain
    /// (no error: the plain path reads the same files).
    pub fn new() -> BatchReader {
        BatchReader {
            ring: Ring::Untried,
            setup: ring,
        }
    }

    /// Always the plain path.
    pub fn plain() -> BatchReader {
        BatchReader {
            ring: Ring::Off,
            setup: ring,
        }
    }

    /// Which path the next batch takes (setting the ring up if untried).
    pub fn via(&mut self) -> Via {
        self.ready();
        match self.ring {
            Ring::Ready(_) => Via::IoUring,
            _ => Via::Plain,
        }
    }

    /// The ring, set up if untried.
    fn ready(&mut self) -> Option<&mut IoUring> {
        if matches!(self.ring, Ring::Untried) {
            self.ring = (self.setup)().map_or(Ring::Off, |r| Ring::Ready(Box::new(r)));
        }
        match &mut self.ring {
            Ring::Ready(r) => Some(r),
            _ => None,
        }
    }

    /// Read every file of `names` (relative to `dir`): its whole content,
    /// or the error of the first thing that failed (an absent file, one
    /// that is not a regular file: `InvalidInput`). Same length and order
    /// as `names`.
    pub fn read<S: AsRef<str>>(&mut self, dir: &AttrDir, names: &[S]) -> Vec<io::Result<Vec<u8>>> {
        let mut out: Vec<Option<io::Result<Vec<u8>>>> = Vec::with_capacity(names.len());
        out.resize_with(names.len(), || None);
        if names.len() >= MIN_BATCH && completes_inline(dir) {
            if let Some(ring) = self.ready() {
                if uring_read(ring, dir, names, &mut out).is_err() {
                    // the ring failed as a whole: drop it, read the rest plainly
                    self.ring = Ring::Off;
                }
            }
        }
        out.into_iter()
            .zip(names)
            .map(|(r, name)| r.unwrap_or_else(|| dir.read_bytes(name.as_ref())))
            .collect()
    }
}

/// Whether io_uring can read files under `dir` without a thread: not on
/// procfs or sysfs, whose attribute files (seq_file `read`, no
/// `read_iter`) it hands to an io-wq worker each time — a thread made per
/// ring and a switch per batch, dearer than the plain reads it saves
/// (measured: `show` on the live /proc of a 2-CPU VM, 0.3 ms more).
/// Captured and synthesized trees (ext4, tmpfs, …) complete inline.
pub fn completes_inline(dir: &AttrDir) -> bool {
    use nix::sys::statfs::{fstatfs, PROC_SUPER_MAGIC, SYSFS_MAGIC};
    fstatfs(dir.fd()).is_ok_and(|s| {
        let t = s.filesystem_type();
        t != PROC_SUPER_MAGIC && t != SYSFS_MAGIC
    })
}

/// A ring with [`SLOTS`] direct-descriptor slots, if the kernel has
/// io_uring, allows this process to use it, and knows the operations.
fn ring() -> io::Result<IoUring> {
    let entries = u32::try_from(4 * SLOTS).map_err(io::Error::other)?;
    let ring = IoUring::builder().build(entries)?;
    let mut probe = io_uring::Probe::new();
    ring.submitter().register_probe(&mut probe)?;
    for code in [
        opcode::OpenAt::CODE,
        opcode::Read::CODE,
        opcode::Close::CODE,
    ] {
        if !probe.is_supported(code) {
            return Err(io::Error::from(io::ErrorKind::Unsupported));
        }
    }
    let slots = u32::try_from(SLOTS).map_err(io::Error::other)?;
    ring.submitter().register_files_sparse(slots)?;
    Ok(ring)
}

/// The three operations of one file, in `user_data`'s low bits.
const OPEN: u64 = 0;
const READ: u64 = 1;
const CLOSE: u64 = 2;

/// Fill `out[i]` for every file io_uring read conclusively (a short
/// non-empty read, or an open that failed as the plain path's would);
/// the others stay `None`. An error: the ring itself failed.
fn uring_read<S: AsRef<str>>(
    ring: &mut IoUring,
    dir: &AttrDir,
    names: &[S],
    out: &mut [Option<io::Result<Vec<u8>>>],
) -> io::Result<()> {
    let dirfd = types::Fd(dir.fd().as_raw_fd());
    // without O_CLOEXEC: direct descriptors are never inherited, and the
    // kernel refuses the flag for them. O_NOATIME: no access time to
    // check or update per file (a tenth of the read's kernel time); a
    // file this process may not open so (not its owner, no CAP_FOWNER:
    // EPERM) is read again by the plain path, and later chunks open
    // without the flag.
    let mut flags = (OPEN_FLAGS | nix::fcntl::OFlag::O_NOATIME).bits();
    let mut bufs = vec![[0u8; ATTR_FIRST]; SLOTS.min(names.len())];
    let mut open_res = [0i32; SLOTS];
    let mut read_res = [0i32; SLOTS];
    for (c, chunk) in names.chunks(SLOTS).enumerate() {
        let base = c * SLOTS;
        // a name with a NUL byte cannot be opened: the plain path says so
        let paths: Vec<Option<CString>> = chunk
            .iter()
            .map(|n| CString::new(n.as_ref()).ok())
            .collect();
        let mut expected = 0usize;
        {
            let mut sq = ring.submission();
            for (j, (path, buf)) in paths.iter().zip(bufs.iter_mut()).enumerate() {
                let Some(path) = path else { continue };
                let slot = u32::try_from(j).map_err(io::Error::other)?;
                let dest = types::DestinationSlot::try_from_slot_target(slot)
                    .map_err(|_| io::Error::other("bad io_uring slot"))?;
                let tag = (j as u64) << 2;
                let len = u32::try_from(buf.len()).map_err(io::Error::other)?;
                let ops = [
                    opcode::OpenAt::new(dirfd, path.as_ptr())
                        .file_index(Some(dest))
                        .flags(flags)
                        .build()
                        .flags(squeue::Flags::IO_HARDLINK)
                        .user_data(tag | OPEN),
                    opcode::Read::new(types::Fixed(slot), buf.as_mut_ptr(), len)
                        .offset(0)
                        .build()
                        .flags(squeue::Flags::IO_HARDLINK)
                        .user_data(tag | READ),
                    opcode::Close::new(types::Fixed(slot))
                        .build()
                        .user_data(tag | CLOSE),
                ];
                // SAFETY: the path (`paths`) and the buffer (`bufs`) the
                // entries point to outlive the chunk: every entry pushed is
                // completed (all its completions reaped below) before they
                // are dropped or reused, and each chain has its own buffer
                // and slot.
                #[allow(unsafe_code)]
                let pushed = unsafe { sq.push_multiple(&ops) };
                if pushed.is_err() {
                    return Err(io::Error::other("io_uring submission queue full"));
                }
                expected += ops.len();
            }
        }
        let mut seen = 0usize;
        while seen < expected {
            if let Err(e) = ring.submit_and_wait(expected - seen) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // entries may still be in flight, pointing at the buffers
                // and paths: wait for them, and if that fails too, never
                // free what the kernel may still write to or read (a
                // leak on a path no kernel has been seen to take)
                if !drain(ring, expected - seen) {
                    std::mem::forget(bufs);
                    std::mem::forget(paths);
                }
                return Err(e);
            }
            for cqe in ring.completion() {
                seen += 1;
                let j = (cqe.user_data() >> 2) as usize;
                match cqe.user_data() & 3 {
                    OPEN => open_res[j % SLOTS] = cqe.result(),
                    READ => read_res[j % SLOTS] = cqe.result(),
                    _ => {}
                }
            }
        }
        if open_res
            .iter()
            .take(chunk.len())
            .any(|&o| o == -libc_eperm())
        {
            flags = OPEN_FLAGS.bits();
        }
        for (j, path) in paths.iter().enumerate() {
            if path.is_none() {
                continue;
            }
            let (o, r) = (open_res[j], read_res[j]);
            let slot = out.get_mut(base + j);
            if o < 0 {
                // an absent or forbidden file: what the plain open says
                let e = -o;
                use nix::errno::Errno;
                if [Errno::ENOENT, Errno::ENOTDIR, Errno::EACCES].contains(&Errno::from_raw(e)) {
                    if let Some(s) = slot {
                        *s = Some(Err(io::Error::from_raw_os_error(e)));
                    }
                }
                continue;
            }
            if let (Ok(n), Some(s), Some(buf)) = (usize::try_from(r), slot, bufs.get(j)) {
                if (1..ATTR_FIRST).contains(&n) {
                    *s = buf.get(..n).map(|b| Ok(b.to_vec()));
                }
            }
        }
    }
    Ok(())
}

/// `EPERM` as a positive number (a failed open's result is its negation).
fn libc_eperm() -> i32 {
    nix::errno::Errno::EPERM as i32
}

/// Wait for `n` completions still owed after a failed submit; false
/// when the ring fails again before they all came.
fn drain(ring: &mut IoUring, n: usize) -> bool {
    let mut left = n;
    while left > 0 {
        match ring.submit_and_wait(1) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
            Ok(_) => {}
        }
        left = left.saturating_sub(ring.completion().count());
    }
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::host::HostFs;

    /// A fake `/proc/irq` with the files every case needs.
    fn tree() -> (tempfile::TempDir, Vec<String>) {
        let dir = crate::host::attrs::tests::odd_files_tree();
        let mut names: Vec<String> = [
            "5/a", "5/big", "5/empty", "5/full", "5/fifo", "5/sub", "5/absent", "5/zero", "5/null",
            "5/loop", "6/a", "5/a/x", "5/a\0b", "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // more than one chunk of slots, with the cases spread over both
        for i in 0..(2 * SLOTS + 3) {
            let d = dir.path().join(format!("proc/irq/{}", 100 + i));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("smp_affinity_list"), format!("{i}\n")).unwrap();
            names.push(format!("{}/smp_affinity_list", 100 + i));
            if i % 17 == 0 {
                names.push(names[i % 14].clone());
            }
        }
        (dir, names)
    }

    /// The batch's answer for each name, against the plain one and
    /// `AttrDir::read`'s.
    fn check(reader: &mut BatchReader) {
        let (dir, names) = tree();
        let fs = HostFs::new(dir.path());
        let d = fs.attr_dir("proc/irq").unwrap();
        let got = reader.read(&d, &names);
        assert_eq!(got.len(), names.len());
        for (name, r) in names.iter().zip(&got) {
            let plain = d.read_bytes(name);
            assert_eq!(
                r.as_ref().ok(),
                plain.as_ref().ok(),
                "{name:?}: {r:?} vs {plain:?}"
            );
            assert_eq!(r.is_err(), plain.is_err(), "{name:?}");
            let text = r
                .as_ref()
                .ok()
                .map(|b| String::from_utf8_lossy(b).trim().to_string());
            if !name.contains('\0') {
                assert_eq!(text, d.read(name), "{name:?}");
            }
        }
        assert_eq!(got[0].as_deref().unwrap(), b" 0-3\n");
        assert_eq!(got[1].as_ref().unwrap().len(), 5000);
        assert!(got[4].is_err() && got[5].is_err() && got[7].is_err());
        assert_eq!(got[6].as_ref().unwrap_err().kind(), io::ErrorKind::NotFound);
        // a second batch through the same reader
        let again = reader.read(&d, &names[..3]);
        assert_eq!(again[0].as_deref().unwrap(), b" 0-3\n");
        assert!(reader.read(&d, &[] as &[&str]).is_empty());
    }

    #[test]
    fn batch_reads_like_the_plain_path_through_io_uring() {
        let mut r = BatchReader::new();
        if r.via() != Via::IoUring {
            eprintln!("SKIP batch_reads_like_the_plain_path_through_io_uring: no io_uring here");
            return;
        }
        check(&mut r);
        assert_eq!(r.via(), Via::IoUring, "the ring failed during the reads");
    }

    #[test]
    fn proc_and_sys_are_read_plainly_other_trees_inline() {
        let fs = HostFs::new("/");
        for rel in ["proc", "proc/irq", "sys/kernel"] {
            if let Ok(d) = fs.attr_dir(rel) {
                assert!(!completes_inline(&d), "{rel}");
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let d = HostFs::new(dir.path()).attr_dir(".").unwrap();
        assert!(completes_inline(&d));
    }

    /// On the live /proc (plain there): the same text as `AttrDir::read`.
    #[test]
    fn live_proc_irq_files_read_like_attr_dir() {
        let fs = HostFs::new("/");
        let Ok(d) = fs.attr_dir("proc/irq") else {
            eprintln!("SKIP live_proc_irq_files_read_like_attr_dir: no /proc/irq");
            return;
        };
        let names: Vec<String> = fs
            .list_dir("proc/irq")
            .into_iter()
            .filter(|n| n.parse::<u32>().is_ok())
            .map(|n| format!("{n}/smp_affinity_list"))
            .collect();
        let got = BatchReader::new().read(&d, &names);
        for (name, r) in names.iter().zip(got) {
            let text = r
                .ok()
                .map(|b| String::from_utf8_lossy(&b).trim().to_string());
            assert_eq!(text, d.read(name), "{name}");
        }
    }

    /// What `io_uring_setup` gives under seccomp, `io_uring_disabled=2`
    /// or a kernel without it: the plain path, the same answers.
    #[test]
    fn io_uring_setup_failure_falls_back_to_the_plain_path() {
        for errno in [nix::errno::Errno::EPERM, nix::errno::Errno::ENOSYS] {
            let mut r = BatchReader {
                ring: Ring::Untried,
                setup: if errno == nix::errno::Errno::EPERM {
                    || {
                        Err(io::Error::from_raw_os_error(
                            nix::errno::Errno::EPERM as i32,
                        ))
                    }
                } else {
                    || {
                        Err(io::Error::from_raw_os_error(
                            nix::errno::Errno::ENOSYS as i32,
                        ))
                    }
                },
            };
            check(&mut r);
            assert_eq!(r.via(), Via::Plain);
        }
    }

    #[test]
    fn batch_reads_like_the_plain_path_without_io_uring() {
        let mut r = BatchReader::plain();
        assert_eq!(r.via(), Via::Plain);
        check(&mut r);
    }
}
