//! Interrupt-related kernel threads and their CPU use (docs/formats/threads.md).
//!
//! Finds `ksoftirqd/N` and `irq/N-name` (and forced-threading secondaries
//! `irq/N-s-name`) by reading the `comm` of kthreadd's children (else of
//! every `/proc/PID`) once (again only when a tracked pid disappears;
//! live, only the children a per-boot cache cannot vouch for: `cache.rs`),
//! then samples each thread's CPU time per
//! interval from `/proc/PID/schedstat` (ns), falling back to `stat`
//! utime+stime ticks, through descriptors each tracked thread keeps
//! (`HostFs::keep`: no map lookup per read). Parsing is
//! `irqlab_core::pidstat`'s. Knows nothing about output.
//!
//! [`ThreadCpu`] is the one type of a thread's CPU use: live (here), as
//! recorded (`sampler::counters`, `record`) and replayed
//! (`record::playback`); `top --batch` JSON and the TUI consume it.

pub mod cache;

use crate::host::{HostFs, KeptFile};
use irqlab_core::paths;
use irqlab_core::{PidStat, SchedStat};
use serde::Serialize;
use std::collections::HashMap;

/// What an interrupt-related kernel thread does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ThreadKind {
    /// `ksoftirqd/N`: runs softirqs deferred on CPU `cpu`.
    Ksoftirqd { cpu: u32 },
    /// `irq/N-name` or `irq/N-s-name`: threaded handler of IRQ `irq`.
    IrqThread { irq: u32 },
}

/// CPU use of one thread: its cumulative CPU time at a sample and its
/// share over the interval ending there. Stable: consumed by the TUI and
/// by `top --batch`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadCpu {
    /// `None` when not known: replayed from a recording made before
    /// recordings kept PIDs (JSON `null`, `-` in text).
    pub pid: Option<u32>,
    /// Full thread name as in `/proc/PID/comm` (e.g. `irq/24-ACPI:Ged`).
    pub name: String,
    pub kind: ThreadKind,
    /// CPU time over the interval as a percentage of one CPU (0–100 per
    /// CPU-second of wall time); 0 in a recorded sample read back, whose
    /// share the playback computes between two samples.
    pub cpu_pct: f64,
    /// The CPU it last ran on (`/proc/PID/stat` field 39), if printed.
    pub last_cpu: Option<u32>,
    /// Cumulative CPU time of the thread at this sample, ns (a raw counter
    /// for `serve` and `record`; not part of the JSON contract).
    #[serde(skip)]
    pub cpu_ns: u64,
}

/// Each thread of `new` that `old` also lists (same pid and name), with
/// its share of one CPU between the two readings: `(threads, mono ns of
/// their reading)`, cumulative `cpu_ns` in each. A replayed frame's
/// interval (`record::playback`) and the whole run of `top --batch`'s
/// `Average:` block. A thread whose CPU time went back (not the thread
/// `old` read: its pid reused) is left out, as is every thread when no
/// time passed: a gap, never a made-up share. `old` is looked up through
/// a map of it (its first entry of each pid and name): linear in the
/// threads, which a 500-CPU machine has over 1000 of at every frame.
pub fn shares_between(old: (&[ThreadCpu], u64), new: (&[ThreadCpu], u64)) -> Vec<ThreadCpu> {
    let Some(wall) = new.1.checked_sub(old.1).filter(|&w| w > 0) else {
        return Vec::new();
    };
    let mut before = HashMap::with_capacity(old.0.len());
    for o in old.0 {
        before.entry((o.pid, o.name.as_str())).or_insert(o.cpu_ns);
    }
    new.0
        .iter()
        .filter_map(|t| {
            let ns = t
                .cpu_ns
                .checked_sub(*before.get(&(t.pid, t.name.as_str()))?)?;
            Some(ThreadCpu {
                cpu_pct: ns as f64 * 100.0 / wall as f64,
                ..t.clone()
            })
        })
        .collect()
}

/// Classify a thread name; `None` for unrelated threads.
pub fn classify(name: &str) -> Option<ThreadKind> {
    if let Some(cpu) = name.strip_prefix("ksoftirqd/") {
        return cpu.parse().ok().map(|cpu| ThreadKind::Ksoftirqd { cpu });
    }
    let rest = name.strip_prefix("irq/")?;
    let (num, tail) = rest.split_once('-')?;
    let irq = num.parse().ok()?;
    (!tail.is_empty()).then_some(ThreadKind::IrqThread { irq })
}

#[derive(Debug)]
struct TrackedThread {
    pid: u32,
    name: String,
    kind: ThreadKind,
    /// CPU time (ns) and CLOCK_MONOTONIC (ns) at the previous sample.
    prev: Option<(u64, u64)>,
    /// `schedstat` unreadable: use `stat` ticks.
    ticks_only: bool,
    /// Last CPU from `stat`, and samples since it was read: `stat` is
    /// re-read only every [`STAT_EVERY`] samples when `schedstat` gives the
    /// CPU time (generating `stat` costs the kernel more than `schedstat`).
    last_cpu: Option<u32>,
    since_stat: u32,
    /// `proc/PID/stat` and `proc/PID/schedstat`.
    stat: ThreadFile,
    schedstat: ThreadFile,
}

/// One file of a tracked thread: its path (built once, not per sample)
/// and its descriptor, kept here (opened on first read) so that a sample
/// reads it without a lookup.
#[derive(Debug)]
struct ThreadFile {
    rel: String,
    kept: Option<KeptFile>,
}

impl ThreadFile {
    /// `proc/PID/<name>`, not opened yet.
    fn new(pid: u32, name: &str) -> Self {
        ThreadFile {
            rel: paths::pid_file(pid, name),
            kept: None,
        }
    }

    /// The file's text (one record: [`HostFs::read_record`]), opening it
    /// on the first call.
    fn read<'a>(&'a mut self, fs: &HostFs) -> std::io::Result<&'a [u8]> {
        let k = match &mut self.kept {
            Some(k) => k,
            none => none.insert(fs.keep(&self.rel)?),
        };
        fs.read_kept_record(k, &self.rel)
    }

    /// Close the descriptor (the thread is gone).
    fn close(&mut self) {
        self.kept = None;
    }
}

/// How often `/proc/PID/stat` is read for `last_cpu` when `schedstat` works.
const STAT_EVERY: u32 = 10;

/// Tracks the interrupt threads of one root.
#[derive(Debug)]
pub struct Threads {
    tracked: Vec<TrackedThread>,
    rescan: bool,
    /// ns per `stat` tick (USER_HZ).
    tick_ns: u64,
    stat: PidStat,
    /// CLOCK_MONOTONIC of the last sample (the threads read then have it
    /// in their `prev`).
    last_mono: Option<u64>,
}

/// ns per clock tick (`sysconf(_SC_CLK_TCK)`, 100 Hz if unknown).
fn tick_ns() -> u64 {
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .unwrap_or(100);
    1_000_000_000 / hz
}

impl Threads {
    /// Scan `/proc` under `fs`'s root for interrupt threads.
    pub fn new(fs: &HostFs) -> Self {
        let mut t = Threads {
            tracked: Vec::new(),
            rescan: false,
            tick_ns: tick_ns(),
            stat: PidStat::default(),
            last_mono: None,
        };
        t.scan(fs);
        t
    }

    /// Number of threads tracked.
    pub fn len(&self) -> usize {
        self.tracked.len()
    }

    /// True when no thread is tracked.
    pub fn is_empty(&self) -> bool {
        self.tracked.is_empty()
    }

    fn scan(&mut self, fs: &HostFs) {
        self.scan_with(fs, cache::path().as_deref());
    }

    /// [`Threads::scan`] with the names cache at `cache_path` (`None`:
    /// none; used only for the live root).
    fn scan_with(&mut self, fs: &HostFs, cache_path: Option<&std::path::Path>) {
        let mut found = Vec::new();
        let mut old = std::mem::take(&mut self.tracked);
        for (pid, name) in interrupt_threads(fs, cache_path) {
            if let Some(kind) = classify(&name) {
                // a thread tracked before keeps its figures and open files
                let (prev, ticks_only, stat, schedstat) =
                    match old.iter_mut().find(|t| t.pid == pid && t.name == name) {
                        Some(t) => (
                            t.prev,
                            t.ticks_only,
                            t.stat.kept.take(),
                            t.schedstat.kept.take(),
                        ),
                        None => (None, false, None, None),
                    };
                found.push(TrackedThread {
                    pid,
                    kind,
                    prev,
                    ticks_only,
                    last_cpu: None,
                    since_stat: 0,
                    stat: ThreadFile {
                        kept: stat,
                        ..ThreadFile::new(pid, "stat")
                    },
                    schedstat: ThreadFile {
                        kept: schedstat,
                        ..ThreadFile::new(pid, "schedstat")
                    },
                    name,
                });
            }
        }
        found.sort_by_key(|t| (t.kind_order(), t.pid));
        self.tracked = found;
        self.rescan = false;
    }

    /// CPU use of every tracked thread since the previous call, as of
    /// CLOCK_MONOTONIC `mono_ns`. Threads seen for the first time report
    /// from the next call on; a vanished pid triggers a rescan next time.
    pub fn sample(&mut self, fs: &HostFs, mono_ns: u64) -> Vec<ThreadCpu> {
        let mut out = Vec::new();
        self.sample_into(fs, mono_ns, &mut out);
        out
    }

    /// Like [`Threads::sample`] into `out` (replaced), reusing its entries
    /// and their name strings: no allocation per sample once warm.
    pub fn sample_into(&mut self, fs: &HostFs, mono_ns: u64, out: &mut Vec<ThreadCpu>) {
        if self.rescan {
            self.scan(fs);
        }
        let mut n = 0;
        for i in 0..self.tracked.len() {
            let Some(t) = self.tracked.get_mut(i) else {
                break;
            };
            match read_cpu(fs, t, &mut self.stat, self.tick_ns) {
                Some((cpu_ns, last_cpu)) => {
                    if let Some(pct) = pct(t.prev, (cpu_ns, mono_ns)) {
                        put(out, n, t, pct, last_cpu, cpu_ns);
                        n += 1;
                    }
                    t.prev = Some((cpu_ns, mono_ns));
                }
                None => {
                    t.stat.close();
                    t.schedstat.close();
                    self.rescan = true;
                }
            }
        }
        out.truncate(n);
        self.last_mono = Some(mono_ns);
    }

    /// The cumulative CPU time of every thread read at the last
    /// [`Threads::sample_into`] into `out` (replaced, its entries reused;
    /// `cpu_pct` 0): those read there for the first time too, which
    /// `sample_into` leaves out (no share without an earlier reading).
    /// What `record` and `serve` store: raw counters from the first sample
    /// on.
    pub fn totals_into(&self, out: &mut Vec<ThreadCpu>) {
        let mut n = 0;
        for t in &self.tracked {
            match t.prev {
                Some((ns, mono)) if Some(mono) == self.last_mono => {
                    put(out, n, t, 0.0, t.last_cpu, ns);
                    n += 1;
                }
                _ => {}
            }
        }
        out.truncate(n);
    }
}

/// Set `out[n]` (pushed when `out` is shorter) to `t`'s figures.
fn put(
    out: &mut Vec<ThreadCpu>,
    n: usize,
    t: &TrackedThread,
    pct: f64,
    last: Option<u32>,
    ns: u64,
) {
    match out.get_mut(n) {
        Some(o) => {
            o.pid = Some(t.pid);
            o.name.clone_from(&t.name);
            o.kind = t.kind;
            o.cpu_pct = pct;
            o.last_cpu = last;
            o.cpu_ns = ns;
        }
        None => out.push(ThreadCpu {
            pid: Some(t.pid),
            name: t.name.clone(),
            kind: t.kind,
            cpu_pct: pct,
            last_cpu: last,
            cpu_ns: ns,
        }),
    }
}

impl TrackedThread {
    fn kind_order(&self) -> u8 {
        match self.kind {
            ThreadKind::Ksoftirqd { .. } => 0,
            ThreadKind::IrqThread { .. } => 1,
        }
    }
}

/// (pid, name) of every interrupt thread under `fs`'s root: the names of
/// kthreadd's children through the per-boot cache at `cache_path`
/// (`cache.rs`) when the root is the live `/`, else each read.
fn interrupt_threads(fs: &HostFs, cache_path: Option<&std::path::Path>) -> Vec<(u32, String)> {
    let cache_path = cache_path.filter(|_| fs.root() == std::path::Path::new("/"));
    // the tick before the list is read: every child made before it is listed
    let ticks = cache_path.and_then(|_| boot_ticks());
    let kids = kernel_threads(fs);
    let boot_id = ticks
        .and_then(|_| fs.read_attr(paths::BOOT_ID))
        .filter(|b| !b.is_empty());
    let comm = |pid: u32| fs.read_attr(&paths::pid_file(pid, "comm"));
    let (Some(path), Some(kids), Some(ticks), Some(boot_id)) = (cache_path, &kids, ticks, boot_id)
    else {
        let pids = candidates(fs, kids);
        return pids
            .into_iter()
            .filter_map(|pid| Some((pid, comm(pid)?)))
            .filter(|(_, name)| classify(name).is_some())
            .collect();
    };
    let old = cache::load(path);
    let start_of = |pid: u32| {
        let text = fs.read_attr(&paths::pid_file(pid, "stat"))?;
        PidStat::parse(text.as_bytes()).ok()?.starttime
    };
    let (new, vouched) = cache::resolve(old.as_ref(), &boot_id, kids, ticks, start_of, comm);
    if !cache::same(old.as_ref(), &new, vouched) {
        let _ = cache::store(path, &new);
    }
    new.kids
        .into_iter()
        .filter_map(|(pid, mark)| match mark {
            cache::Mark::Target(name) => Some((pid, name)),
            _ => None,
        })
        .collect()
}

/// CLOCK_BOOTTIME in clock ticks (USER_HZ), the unit and clock of a
/// process's start time in `/proc/PID/stat`.
fn boot_ticks() -> Option<u64> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).ok()?;
    let ns = u64::try_from(t.tv_sec())
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(u64::try_from(t.tv_nsec()).ok()?)?;
    Some(ns / tick_ns())
}

/// The pids whose `comm` [`Threads`] reads: the kernel threads
/// (`kernel_threads`, from [`kernel_threads`]), when kthreadd (pid 2)
/// lists its children (every kernel thread is one, and
/// only kernel threads are: an interrupt thread is never a user process),
/// else every pid under `/proc` (no `CONFIG_PROC_CHILDREN`, a PID
/// namespace without kernel threads, a captured tree). On a machine with
/// many processes this skips the `comm` of every user process.
fn candidates(fs: &HostFs, kernel_threads: Option<Vec<u32>>) -> Vec<u32> {
    kernel_threads.unwrap_or_else(|| {
        fs.list_dir(paths::PROC)
            .iter()
            .filter_map(|e| e.parse().ok())
            .collect()
    })
}

/// kthreadd's children from `/proc/2/task/2/children`, `None` when pid 2
/// is not kthreadd or the list is absent, empty or not a list of pids.
fn kernel_threads(fs: &HostFs) -> Option<Vec<u32>> {
    if fs.read_attr(&paths::pid_file(KTHREADD, "comm"))? != "kthreadd" {
        return None;
    }
    let list = fs.read_attr(&paths::task_file(KTHREADD, KTHREADD, "children"))?;
    let pids = list
        .split_ascii_whitespace()
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<u32>>>()?;
    (!pids.is_empty()).then_some(pids)
}

/// The pid of kthreadd, the parent of every kernel thread.
const KTHREADD: u32 = 2;

/// CPU % between two (cpu_ns, mono_ns) points.
fn pct(prev: Option<(u64, u64)>, now: (u64, u64)) -> Option<f64> {
    let (c0, m0) = prev?;
    let wall = now.1.checked_sub(m0).filter(|&w| w > 0)?;
    Some(now.0.saturating_sub(c0) as f64 * 100.0 / wall as f64)
}

/// (CPU ns, last CPU) of `t`, or `None` when the thread is gone.
fn read_cpu(
    fs: &HostFs,
    t: &mut TrackedThread,
    stat: &mut PidStat,
    tick_ns: u64,
) -> Option<(u64, Option<u32>)> {
    if !t.ticks_only && t.since_stat > 0 && t.since_stat < STAT_EVERY {
        if let Some(ns) = read_schedstat(fs, &mut t.schedstat) {
            t.since_stat += 1;
            return Some((ns, t.last_cpu));
        }
    }
    let bytes = t.stat.read(fs).ok()?;
    stat.parse_into(bytes).ok()?;
    t.last_cpu = stat.processor;
    t.since_stat = 1;
    let ticks = stat.cpu_ticks().unwrap_or(0).saturating_mul(tick_ns);
    if !t.ticks_only {
        match read_schedstat(fs, &mut t.schedstat) {
            Some(ns) => return Some((ns, t.last_cpu)),
            None => t.ticks_only = true,
        }
    }
    Some((ticks, t.last_cpu))
}

/// CPU time in ns from `/proc/PID/schedstat` (`file`), if readable.
fn read_schedstat(fs: &HostFs, file: &mut ThreadFile) -> Option<u64> {
    let bytes = file.read(fs).ok()?;
    SchedStat::parse(bytes).ok().map(|s| s.exec_runtime_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_thread_names() {
        assert_eq!(
            classify("ksoftirqd/12"),
            Some(ThreadKind::Ksoftirqd { cpu: 12 })
        );
        assert_eq!(
            classify("irq/24-ACPI:Ged"),
            Some(ThreadKind::IrqThread { irq: 24 })
        );
        assert_eq!(
            classify("irq/140-s-PCIe PME"),
            Some(ThreadKind::IrqThread { irq: 140 })
        );
        assert_eq!(classify("irq/x-foo"), None);
        assert_eq!(classify("irq/5-"), None);
        assert_eq!(classify("kworker/0:1"), None);
        assert_eq!(classify("ksoftirqd/"), None);
    }

    fn write(root: &std::path::Path, rel: &str, s: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    }

    fn stat_line(pid: u32, comm: &str, stime: u64, cpu: u32) -> String {
        let mut f: Vec<String> = (3..=41).map(|_| "0".to_string()).collect();
        f[0] = "S".into();
        f[15 - 3] = stime.to_string();
        f[39 - 3] = cpu.to_string();
        format!("{pid} ({comm}) {}\n", f.join(" "))
    }

    #[test]
    fn samples_schedstat_and_falls_back_to_ticks_and_rescans() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, "proc/14/comm", "ksoftirqd/0\n");
        write(r, "proc/14/stat", &stat_line(14, "ksoftirqd/0", 5, 0));
        write(r, "proc/14/schedstat", "1000000 0 1\n");
        write(r, "proc/50/comm", "irq/24-ACPI:Ged\n");
        write(r, "proc/50/stat", &stat_line(50, "irq/24-ACPI:Ged", 1, 1));
        write(r, "proc/1/comm", "init\n");
        let fs = HostFs::new(r);
        let mut th = Threads::new(&fs);
        assert_eq!(th.len(), 2);
        assert!(th.sample(&fs, 1_000_000_000).is_empty());
        write(r, "proc/14/schedstat", "251000000 0 2\n");
        write(r, "proc/50/stat", &stat_line(50, "irq/24-ACPI:Ged", 11, 1));
        let v = th.sample(&fs, 2_000_000_000);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].kind, ThreadKind::Ksoftirqd { cpu: 0 });
        assert!((v[0].cpu_pct - 25.0).abs() < 1e-9);
        let tick_pct = 10.0 * tick_ns() as f64 / 1e7;
        assert!((v[1].cpu_pct - tick_pct).abs() < 1e-9);
        assert_eq!(v[1].last_cpu, Some(1));
        std::fs::remove_dir_all(r.join("proc/50")).unwrap();
        // a dead thread's kept files fail to read (procfs); a deleted
        // file of a fake tree does not: close them, as a failed read does
        th.tracked[1].stat.close();
        // a reused vector: the vanished thread's entry is dropped, the
        // remaining one rewritten in place
        let mut reused = v.clone();
        th.sample_into(&fs, 3_000_000_000, &mut reused);
        assert_eq!(reused.len(), 1);
        assert_eq!(
            (reused[0].pid, reused[0].name.as_str()),
            (Some(14), "ksoftirqd/0")
        );
        assert!(reused[0].cpu_pct.abs() < 1e-9, "schedstat did not move");
        th.sample(&fs, 4_000_000_000);
        assert_eq!(th.len(), 1);
    }

    #[test]
    fn only_kthreadd_children_are_scanned_when_it_lists_them() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, "proc/2/comm", "kthreadd\n");
        write(r, "proc/2/task/2/children", "14 50 ");
        write(r, "proc/14/comm", "ksoftirqd/0\n");
        write(r, "proc/50/comm", "irq/24-ACPI:Ged\n");
        // not a kernel thread: a user process that only looks like one
        write(r, "proc/77/comm", "irq/9-fake\n");
        let fs = HostFs::new(r);
        let names = |th: &Threads| -> Vec<u32> { th.tracked.iter().map(|t| t.pid).collect() };
        assert_eq!(names(&Threads::new(&fs)), [14, 50]);
        // no usable list: every pid under /proc, as before
        for bad in ["", "14 x50\n"] {
            write(r, "proc/2/task/2/children", bad);
            assert_eq!(names(&Threads::new(&fs)), [14, 50, 77], "{bad:?}");
        }
        write(r, "proc/2/task/2/children", "14 50");
        write(r, "proc/2/comm", "sh\n");
        assert_eq!(names(&Threads::new(&fs)), [14, 50, 77]);
    }

    #[test]
    fn live_kthreadd_children_hold_every_interrupt_thread_when_listed() {
        let fs = HostFs::new("/");
        let Some(kthreads) = kernel_threads(&fs) else {
            eprintln!("skipping: /proc/2/task/2/children not readable here");
            return;
        };
        let all: Vec<u32> = fs
            .list_dir(paths::PROC)
            .iter()
            .filter_map(|e| e.parse().ok())
            .filter(|&pid| {
                fs.read_attr(&paths::pid_file(pid, "comm"))
                    .is_some_and(|n| classify(&n).is_some())
            })
            .collect();
        let missed: Vec<_> = all.iter().filter(|p| !kthreads.contains(p)).collect();
        assert!(
            missed.is_empty(),
            "interrupt threads not listed: {missed:?}"
        );
    }

    #[test]
    fn live_threads_found_through_the_boot_cache_are_those_read_directly() {
        let fs = HostFs::new("/");
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("threads");
        let found = |cache: Option<&std::path::Path>| {
            let mut th = Threads::new(&HostFs::new(d.path()));
            th.scan_with(&fs, cache);
            th.tracked
                .iter()
                .map(|t| (t.pid, t.name.clone()))
                .collect::<Vec<_>>()
        };
        let direct = found(None);
        // the first run fills the cache, the second reads from it
        assert_eq!(found(Some(&path)), direct);
        if cache::load(&path).is_none() {
            eprintln!("skipping: no kthreadd children list or boot id here");
            return;
        }
        assert_eq!(found(Some(&path)), direct);
    }

    #[test]
    fn live_threads_when_available() {
        let fs = HostFs::new("/");
        let mut th = Threads::new(&fs);
        if th.is_empty() {
            eprintln!("skipping: no ksoftirqd or irq/ threads visible under /proc");
            return;
        }
        th.sample(&fs, 1);
        let v = th.sample(&fs, 1_000_000_001);
        assert!(v.iter().all(|t| t.cpu_pct >= 0.0 && t.cpu_pct.is_finite()));
    }

    fn thread(pid: u32, name: &str, cpu_ns: u64) -> ThreadCpu {
        ThreadCpu {
            pid: Some(pid),
            name: name.into(),
            kind: classify(name).unwrap(),
            cpu_pct: 0.0,
            last_cpu: Some(1),
            cpu_ns,
        }
    }

    /// Shares between two readings: only threads in both (same pid and
    /// name), none for a counter that went back or when no time passed.
    #[test]
    fn shares_between_two_readings_leave_out_what_is_not_the_same_thread() {
        let old = [
            thread(14, "ksoftirqd/0", 1_000),
            thread(24, "ksoftirqd/1", 5_000_000),
            thread(53, "irq/24-ACPI:Ged", 0),
            thread(60, "irq/30-gone", 7),
        ];
        let new = [
            thread(14, "ksoftirqd/0", 250_001_000),
            // the pid reused by another ksoftirqd/1: its counter restarted
            thread(24, "ksoftirqd/1", 10),
            // same pid, another name
            thread(53, "irq/24-other", 9),
            // started since the first reading
            thread(70, "irq/31-new", 9),
        ];
        let s = shares_between((&old, 1_000_000_000), (&new, 2_000_000_000));
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!((s[0].pid, s[0].cpu_pct), (Some(14), 25.0));
        assert_eq!(s[0].last_cpu, Some(1), "the later reading's other fields");
        assert!(shares_between((&old, 5), (&new, 5)).is_empty());
        assert!(shares_between((&old, 6), (&new, 5)).is_empty());
    }

    /// The two readings list their threads in different orders: each
    /// pairs with its own (same pid and name) wherever it is, in `new`'s
    /// order; not with what sits at its place, nor with a thread of the
    /// same pid or the same name alone.
    #[test]
    fn shares_between_pair_threads_listed_in_another_order() {
        let old = [
            thread(14, "ksoftirqd/0", 1_000),
            thread(24, "ksoftirqd/1", 2_000),
            thread(53, "irq/24-ACPI:Ged", 3_000),
            thread(60, "irq/30-eth0", 500_000_000),
            thread(61, "irq/31-eth1", 4_000),
        ];
        let new = [
            thread(61, "irq/31-eth1", 10_004_000),
            // where ksoftirqd/1 was: its pid reused under another name
            thread(24, "irq/40-nvme0q1", 5_000_000),
            // its counter went back: not the thread read before
            thread(60, "irq/30-eth0", 7),
            thread(14, "ksoftirqd/0", 20_001_000),
            // ksoftirqd/1 under a pid `old` listed for another thread
            thread(53, "ksoftirqd/1", 9_000_000),
            thread(53, "irq/24-ACPI:Ged", 30_003_000),
        ];
        let s = shares_between((&old, 0), (&new, 100_000_000));
        let got: Vec<_> = s
            .iter()
            .map(|t| (t.pid, t.name.as_str(), t.cpu_pct))
            .collect();
        assert_eq!(
            got,
            [
                (Some(61), "irq/31-eth1", 10.0),
                (Some(14), "ksoftirqd/0", 20.0),
                (Some(53), "irq/24-ACPI:Ged", 30.0),
            ]
        );
    }
}
