//! `disk`: random 4 KiB O_DIRECT reads of a temporary file, so every read
//! is a block request completed by the disk's interrupt (virtio `req`,
//! NVMe, AHCI). The file is created and pre-filled in `setup` in the given
//! directory — or in `/var/tmp` when that directory is tmpfs or refuses
//! O_DIRECT (a stderr note says so) — and deleted in `teardown` and on drop.
//! The file is journaled through the guard's [`Tracker`] before it is
//! created, so SIGINT/SIGTERM and `irqlab restore` after a SIGKILL remove
//! it too.
//!
//! Safe code only: the aligned buffer is carved out of a larger `Vec`.

use super::latency::Histogram;
use super::{placement, spawn_scoped};
use crate::bench::metric_value::{Direction, Metric};
use crate::bench::workload::{running, Workload};
use crate::guard::{Tracked, Tracker};
use crate::sampler::Stop;
use anyhow::{anyhow, bail, Context};
use nix::fcntl::OFlag;
use nix::sys::statfs::{statfs, TMPFS_MAGIC};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Read size and alignment.
const BLOCK: usize = 4096;
/// Default size of the file.
pub const DEFAULT_FILE_BYTES: u64 = 64 << 20;
/// Where to go when the requested directory cannot do direct I/O.
const FALLBACK_DIR: &str = "/var/tmp";

/// The O_DIRECT random-read workload.
pub struct Disk {
    cpus: Vec<u32>,
    threads: usize,
    dir: PathBuf,
    bytes: u64,
    file: Option<DataFile>,
    tracker: Tracker,
}

/// The workload's file: removed (and its journal entry released) on
/// [`DataFile::close`] or drop.
struct DataFile {
    path: PathBuf,
    file: File,
    tracked: Option<Tracked>,
}

impl DataFile {
    /// Journal, then create `dir/irqlab-disk-<pid>-<n>.dat` (never an
    /// existing file).
    fn create(dir: &Path, tracker: &Tracker) -> anyhow::Result<Self> {
        let dir =
            std::path::absolute(dir).with_context(|| format!("resolving {}", dir.display()))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!("irqlab-disk-{}-{nanos}.dat", std::process::id()));
        let tracked = tracker.temp_file(&path)?;
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => {
                tracked.release()?;
                return Err(e).with_context(|| format!("creating a file in {}", dir.display()));
            }
        };
        Ok(DataFile {
            path,
            file,
            tracked: Some(tracked),
        })
    }

    fn close(mut self) -> anyhow::Result<()> {
        self.remove()
    }

    fn remove(&mut self) -> anyhow::Result<()> {
        let Some(t) = self.tracked.take() else {
            return Ok(());
        };
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("deleting {}", self.path.display())),
        }
        t.release()
    }
}

impl Drop for DataFile {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            eprintln!("irqlab: warning: disk workload file: {e:#}");
        }
    }
}

impl Disk {
    /// `threads` readers (default 1) of a `bytes`-sized file in `dir`,
    /// tracked by `tracker`.
    pub fn new(
        cpus: Vec<u32>,
        threads: Option<usize>,
        dir: PathBuf,
        bytes: u64,
        tracker: Tracker,
    ) -> Self {
        let bytes = (bytes / BLOCK as u64).max(1) * BLOCK as u64;
        Disk {
            cpus,
            threads: threads.unwrap_or(1).max(1),
            dir,
            bytes,
            file: None,
            tracker,
        }
    }

    /// Path of the temporary file while it exists (after `setup`).
    pub fn file_path(&self) -> Option<&Path> {
        self.file.as_ref().map(|f| f.path.as_path())
    }
}

fn is_tmpfs(dir: &Path) -> bool {
    statfs(dir).is_ok_and(|s| s.filesystem_type() == TMPFS_MAGIC)
}

fn open_direct(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_DIRECT.bits())
        .open(path)
}

/// Why a directory cannot host the file (the caller may fall back).
struct Refused(String);

/// Create and fill the file in `dir`; check that it opens with O_DIRECT.
/// `Ok(Err(Refused))` when `dir` is tmpfs or refuses O_DIRECT.
fn create_in(
    dir: &Path,
    bytes: u64,
    tracker: &Tracker,
) -> anyhow::Result<Result<DataFile, Refused>> {
    if is_tmpfs(dir) {
        let why = format!("{} is tmpfs (no block device behind it)", dir.display());
        return Ok(Err(Refused(why)));
    }
    let mut tmp = DataFile::create(dir, tracker)?;
    match open_direct(&tmp.path) {
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => {
            let why = format!("{} refuses O_DIRECT ({e})", dir.display());
            return Ok(Err(Refused(why)));
        }
        Err(e) => return Err(e).with_context(|| format!("O_DIRECT open in {}", dir.display())),
    }
    let chunk: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    let mut left = bytes;
    while left > 0 {
        let n = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        tmp.file
            .write_all(chunk.get(..n).unwrap_or(&chunk))
            .with_context(|| format!("filling {}", tmp.path.display()))?;
        left -= n as u64;
    }
    tmp.file
        .sync_all()
        .context("fsync of the disk workload file")?;
    Ok(Ok(tmp))
}

fn reader(
    path: &Path,
    blocks: u64,
    seed: u64,
    cpu: Option<u32>,
    dur: Duration,
    stop: &Stop,
) -> anyhow::Result<Histogram> {
    placement::pin_opt(cpu)?;
    let file = open_direct(path).with_context(|| format!("O_DIRECT open of {}", path.display()))?;
    let mut raw = vec![0u8; 2 * BLOCK];
    let off = raw.as_ptr().align_offset(BLOCK);
    let buf = raw
        .get_mut(off..off.saturating_add(BLOCK))
        .ok_or_else(|| anyhow!("cannot align the read buffer"))?;
    let mut rng = irqlab_core::rng::Rng::new(seed);
    let mut hist = Histogram::default();
    let start = Instant::now();
    while running(start, dur, stop) {
        let pos = rng.below(blocks) * BLOCK as u64;
        let t0 = Instant::now();
        file.read_exact_at(buf, pos)
            .with_context(|| format!("O_DIRECT read at {pos}"))?;
        hist.record(u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    placement::still_pinned(cpu)?;
    Ok(hist)
}

impl Workload for Disk {
    fn name(&self) -> &str {
        "disk"
    }

    fn setup(&mut self) -> anyhow::Result<()> {
        let file = match create_in(&self.dir, self.bytes, &self.tracker)? {
            Ok(f) => f,
            Err(Refused(why)) if self.dir != Path::new(FALLBACK_DIR) => {
                match create_in(Path::new(FALLBACK_DIR), self.bytes, &self.tracker)? {
                    Ok(f) => {
                        eprintln!("irqlab: note: disk workload: {why}; using {FALLBACK_DIR}");
                        f
                    }
                    Err(Refused(again)) => bail!("disk workload: {why}; {again}"),
                }
            }
            Err(Refused(why)) => bail!("disk workload: {why}"),
        };
        self.file = Some(file);
        Ok(())
    }

    fn run(&mut self, duration: Duration, stop: &Stop) -> anyhow::Result<Vec<Metric>> {
        let path = self
            .file_path()
            .ok_or_else(|| anyhow!("disk workload run before setup"))?;
        let blocks = self.bytes / BLOCK as u64;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let seed = (u64::from(std::process::id()) << 32) ^ now;
        let start = Instant::now();
        let hists = std::thread::scope(|s| {
            let mut hs = Vec::with_capacity(self.threads);
            for i in 0..self.threads {
                let cpu = placement::cpu_for(&self.cpus, i);
                let seed = seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                // the started readers end with the trial's duration
                hs.push(spawn_scoped(s, i, self.threads, move || {
                    reader(path, blocks, seed, cpu, duration, stop)
                })?);
            }
            hs.into_iter()
                .map(|h| h.join().map_err(|_| anyhow!("reader thread panicked"))?)
                .collect::<anyhow::Result<Vec<_>>>()
        })
        .context("disk workload")?;
        let elapsed = start.elapsed().as_secs_f64().max(1e-9);
        let mut all = Histogram::default();
        hists.iter().for_each(|h| all.merge(h));
        let mut m = vec![Metric::new(
            "iops",
            all.len() as f64 / elapsed,
            "1/s",
            Direction::Higher,
        )];
        m.extend(all.metrics("read", &[50, 99]));
        Ok(m)
    }

    fn teardown(&mut self) -> anyhow::Result<()> {
        match self.file.take() {
            Some(f) => f.close().context("deleting the disk workload file"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_creates_and_teardown_deletes() {
        let _live = super::super::live_lock();
        let dir = tempfile::tempdir().unwrap();
        let mut w = Disk::new(
            placement::allowed_cpus().unwrap(),
            None,
            dir.path().to_path_buf(),
            1 << 20,
            Tracker::none(),
        );
        w.setup().unwrap();
        let path = w.file_path().unwrap().to_path_buf();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
        let m = w.run(Duration::from_millis(50), &Stop::unhooked()).unwrap();
        assert_eq!(m[0].name, "iops");
        assert!(m[0].value > 0.0);
        w.teardown().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn drop_deletes_and_tmpfs_falls_back() {
        let _live = super::super::live_lock();
        let shm = Path::new("/dev/shm");
        let dir = if is_tmpfs(shm) {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let mut w = Disk::new(
            placement::allowed_cpus().unwrap(),
            None,
            dir,
            1 << 20,
            Tracker::none(),
        );
        w.setup().unwrap();
        let path = w.file_path().unwrap().to_path_buf();
        if is_tmpfs(shm) {
            assert!(path.starts_with(FALLBACK_DIR), "{}", path.display());
        }
        drop(w);
        assert!(!path.exists());
    }

    #[test]
    fn missing_directory_is_an_error_not_a_fallback() {
        let _live = super::super::live_lock();
        let dir = PathBuf::from("/nonexistent/irqlab-disk-test");
        let mut w = Disk::new(
            placement::allowed_cpus().unwrap(),
            None,
            dir,
            1 << 20,
            Tracker::none(),
        );
        let err = format!("{:#}", w.setup().unwrap_err());
        assert!(err.contains("/nonexistent/irqlab-disk-test"), "{err}");
    }
}
