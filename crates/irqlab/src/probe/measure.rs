//! The timed loop of `probe`: read every file of a target once per
//! iteration, through HostFs, either opening each file afresh or with
//! descriptors kept open. Each read is timed with CLOCK_MONOTONIC (wall)
//! and, inside that window, the thread CPU clock (so CPU time can never
//! exceed wall time); `getrusage(RUSAGE_THREAD)` is read once around the
//! whole batch (its system time is tick-sampled and cannot time one read).
//! Owns clocks; no statistics (pinning is `crate::pin`'s).

use super::kernel::{self, Counter, KernelSample};
use super::quantiles::ReadSample;
use crate::host::{pread_chunked, HostFs};
use anyhow::{Context, Result};
use nix::sys::resource::{getrusage, UsageWho};
use nix::time::{clock_gettime, ClockId};
use std::fs::File;

/// How a target's files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMethod {
    /// open + read loop to EOF + close, every time.
    Open,
    /// Descriptors kept open; `pread` loop from offset 0 to EOF.
    Pread,
}

impl ReadMethod {
    pub const ALL: [ReadMethod; 2] = [ReadMethod::Open, ReadMethod::Pread];

    /// Short name used in tables and metric names.
    pub fn name(self) -> &'static str {
        match self {
            ReadMethod::Open => "open",
            ReadMethod::Pread => "pread",
        }
    }
}

/// Reads not timed before the measured ones (page cache, seq_file buffers).
const WARMUP: usize = 10;

/// The timed reads of one target × method × buffer.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub samples: Vec<ReadSample>,
    /// `ru_stime` (RUSAGE_THREAD) over the whole batch.
    pub rusage_sys_ns: u64,
    /// Thread CPU clock over the whole batch (bounds `rusage_sys_ns`).
    pub cpu_ns: u64,
    /// With `--kernel`: each read's kernel-side figures, same order as
    /// `samples` (their counters are read outside the timed window).
    pub kernel: Vec<KernelSample>,
    /// With `--kernel`: the same reads again, untimed, with
    /// `show_interrupts()` calls (or descriptor lookups) counted.
    pub counting: kernel::Counting,
}

/// Read `paths` `reads` times with `method`, asking for `chunk` bytes per call.
pub fn measure(
    fs: &HostFs,
    paths: &[String],
    method: ReadMethod,
    chunk: usize,
    reads: usize,
) -> Result<Batch> {
    measure_with(fs, paths, method, chunk, reads, None)
}

/// [`measure`], with the kernel counters read before and after each read
/// when `kernel` is given.
pub fn measure_with(
    fs: &HostFs,
    paths: &[String],
    method: ReadMethod,
    chunk: usize,
    reads: usize,
    kernel: Option<&mut (dyn Counter + 'static)>,
) -> Result<Batch> {
    let mut reader = Reader::new(fs, paths, method, chunk)?;
    for _ in 0..WARMUP.min(reads) {
        reader.read_all()?;
    }
    let mut samples = Vec::with_capacity(reads);
    let mut ksamples = Vec::new();
    let s0 = sys_ns()?;
    let b0 = clock_ns(ClockId::CLOCK_THREAD_CPUTIME_ID)?;
    for _ in 0..reads {
        let k0 = kernel.as_deref().map(|k| k.counts()).transpose()?;
        let t0 = clock_ns(ClockId::CLOCK_MONOTONIC)?;
        let c0 = clock_ns(ClockId::CLOCK_THREAD_CPUTIME_ID)?;
        let (bytes, calls) = reader.read_all()?;
        let c1 = clock_ns(ClockId::CLOCK_THREAD_CPUTIME_ID)?;
        let t1 = clock_ns(ClockId::CLOCK_MONOTONIC)?;
        let wall_ns = t1.saturating_sub(t0);
        if let (Some(k), Some(k0)) = (kernel.as_deref(), k0) {
            ksamples.push(KernelSample::between(&k0, &k.counts()?));
        }
        samples.push(ReadSample {
            wall_ns,
            // The CPU window lies inside the wall window; min() only
            // absorbs the two clocks' different sources.
            cpu_ns: c1.saturating_sub(c0).min(wall_ns),
            calls,
            bytes,
        });
    }
    let b1 = clock_ns(ClockId::CLOCK_THREAD_CPUTIME_ID)?;
    let s1 = sys_ns()?;
    let cpu_ns = b1.saturating_sub(b0);
    let counting = match kernel {
        Some(k) if k.can_count_shows() => kernel::Counting {
            lookups: k.counts_lookups(),
            samples: counting_pass(k, &mut reader, reads)?,
        },
        _ => kernel::Counting::default(),
    };
    Ok(Batch {
        samples,
        rusage_sys_ns: s1.saturating_sub(s0).min(cpu_ns),
        cpu_ns,
        kernel: ksamples,
        counting,
    })
}

/// The reads again with `show_interrupts()` counted (the probe detached
/// again even when a read fails).
fn counting_pass(
    k: &mut (dyn Counter + 'static),
    reader: &mut Reader,
    reads: usize,
) -> Result<Vec<KernelSample>> {
    k.count_shows(true)?;
    let mut run = || -> Result<Vec<KernelSample>> {
        let mut v = Vec::with_capacity(reads);
        for _ in 0..reads {
            let k0 = k.counts()?;
            reader.read_all()?;
            v.push(KernelSample::between(&k0, &k.counts()?));
        }
        Ok(v)
    };
    let v = run();
    k.count_shows(false)?;
    v
}

/// One target's files, opened up front for [`ReadMethod::Pread`].
struct Reader<'a> {
    fs: &'a HostFs,
    paths: &'a [String],
    files: Vec<File>,
    buf: Vec<u8>,
    chunk: usize,
}

impl<'a> Reader<'a> {
    fn new(fs: &'a HostFs, paths: &'a [String], method: ReadMethod, chunk: usize) -> Result<Self> {
        let mut files = Vec::new();
        if method == ReadMethod::Pread {
            for p in paths {
                let f = fs
                    .open(p)
                    .with_context(|| format!("opening {}", fs.path(p).display()))?;
                files.push(f);
            }
        }
        Ok(Reader {
            fs,
            paths,
            files,
            buf: Vec::new(),
            chunk,
        })
    }

    /// Read every file once; bytes and read calls in total.
    fn read_all(&mut self) -> Result<(u64, u32)> {
        let (mut bytes, mut calls) = (0u64, 0u32);
        if self.files.is_empty() {
            for p in self.paths {
                let (b, c) = self
                    .fs
                    .read_once_chunked(p, &mut self.buf, self.chunk)
                    .with_context(|| format!("reading {}", self.fs.path(p).display()))?;
                bytes += b as u64;
                calls += c;
            }
        } else {
            for (f, p) in self.files.iter().zip(self.paths) {
                let (b, c) = pread_chunked(f, &mut self.buf, self.chunk)
                    .with_context(|| format!("reading {}", self.fs.path(p).display()))?;
                bytes += b as u64;
                calls += c;
            }
        }
        Ok((bytes, calls))
    }
}

fn clock_ns(id: ClockId) -> Result<u64> {
    let t = clock_gettime(id).with_context(|| format!("clock_gettime({id})"))?;
    Ok(ns(t.tv_sec(), t.tv_nsec(), 1))
}

/// The calling thread's `ru_stime` (microsecond resolution).
fn sys_ns() -> Result<u64> {
    let u = getrusage(UsageWho::RUSAGE_THREAD).context("getrusage(RUSAGE_THREAD)")?;
    let t = u.system_time();
    Ok(ns(t.tv_sec(), t.tv_usec(), 1_000))
}

/// Nanoseconds of `sec` seconds plus `sub` units of `unit_ns` (timespec or
/// timeval; the field types differ between targets, hence `Into`).
fn ns(sec: impl Into<i64>, sub: impl Into<i64>, unit_ns: i64) -> u64 {
    let total = sec
        .into()
        .saturating_mul(1_000_000_000)
        .saturating_add(sub.into().saturating_mul(unit_ns));
    u64::try_from(total).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_methods_count_reads_and_bytes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), vec![b'x'; 300]).unwrap();
        std::fs::write(dir.path().join("b"), b"1,0\n").unwrap();
        let fs = HostFs::new(dir.path());
        let paths = vec!["a".to_string(), "b".to_string()];
        for m in ReadMethod::ALL {
            let b = measure(&fs, &paths, m, 128, 5).unwrap();
            let s = &b.samples;
            assert_eq!(s.len(), 5);
            // a: 128+128+44+0 = 4 calls, b: 4+0 = 2 calls.
            assert!(s.iter().all(|r| r.calls == 6 && r.bytes == 304), "{m:?}");
            assert!(s.iter().all(|r| r.cpu_ns <= r.wall_ns), "{s:?}");
            assert!(b.rusage_sys_ns <= b.cpu_ns);
        }
        assert!(measure(&fs, &["missing".to_string()], ReadMethod::Pread, 4096, 1).is_err());
    }
}
