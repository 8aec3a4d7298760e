//! A tracing session (feature `trace`): preflight, tracefs mounted through
//! the SystemGuard when the loader needs it and it is absent (unmounted
//! again on exit, error, panic, SIGINT/SIGTERM), programs attached through `irqlab_bpf` (the loader, the
//! second gateway to the kernel beside HostFs), maps read into [`Sample`]s.
//! Dropping it detaches the programs (their fds close) and then unmounts.

use super::preflight;
use super::sample::{hardirq_rows, Sample, TraceKey};
use crate::guard::SystemGuard;
use crate::host::{HostFs, KeptFile};
use crate::sampler::{StatFile, StatFiles};
use anyhow::{Context, Result};
use irqlab_bpf::{Attached, Counters, RunStats, Tracer};
use irqlab_core::Snapshot;

/// Attached programs and, when irqlab mounted tracefs, the guard that
/// unmounts it. Field order matters: the tracer is dropped first.
pub struct Session {
    tracer: Tracer,
    counters: Counters,
    /// The last sample read: the next one is held at least at it.
    last: Sample,
    /// Holds the kernel's BPF run-time accounting on ([`Session::account_cost`]).
    stats_fd: Option<std::os::fd::OwnedFd>,
    guard: Option<SystemGuard>,
    /// The programs' skipped-run counts; `None` when they could not be
    /// read at attach (a note says so).
    fdinfo: Option<Fdinfo>,
    /// The kernel's counts the traced runs are held against; `None` when
    /// its files cannot be read (a note or warning says so).
    kernel: Option<KernelFiles>,
    /// The last read's runs the kernel skipped the programs for, alone
    /// (the sample's `missed` also holds the runs no program saw).
    skipped: super::missed::Missed,
    /// Notes for stderr (absent optional tracepoints, BTF, the mount).
    pub notes: Vec<String>,
}

/// tracefs for the loader, mounted only when the loader needs it (no BTF
/// that names the tracepoints, or a perf event program): through the
/// outer run's guard, or under the run lock with a guard of its own, and
/// never on another irqlab run's mount.
struct LazyTracefs<'a> {
    fs: &'a HostFs,
    found: &'a preflight::TraceSupport,
    outer: Option<&'a mut SystemGuard>,
    own: Option<SystemGuard>,
    /// Whether this run mounted it, once made ready.
    mounted_here: Option<bool>,
}

impl LazyTracefs<'_> {
    fn mount(&mut self) -> Result<bool> {
        let rel = &self.found.tracefs;
        match self.outer.as_deref_mut() {
            // the outer run holds the run lock already
            Some(g) if self.found.needs_mount => g.mount(rel, "tracefs").with_context(|| {
                format!(
                    "tracefs is not mountable on {}",
                    self.fs.path(rel).display()
                )
            }),
            Some(_) => Ok(false),
            None => {
                self.own = crate::guard::use_mount(self.fs, rel, "tracefs", &invoked_as())?;
                Ok(self.own.is_some())
            }
        }
    }
}

impl irqlab_bpf::Tracefs for LazyTracefs<'_> {
    fn ready(&mut self) -> std::result::Result<(), String> {
        if self.mounted_here.is_none() {
            self.mounted_here = Some(self.mount().map_err(|e| format!("{e:#}"))?);
        }
        Ok(())
    }
    fn has(&self, group: &str, name: &str) -> bool {
        preflight::tracepoint_present(self.fs, &self.found.tracefs, group, name)
    }
}

impl Session {
    /// Check, mount if needed (through a guard of its own), attach.
    pub fn start(fs: &HostFs) -> Result<Session> {
        Self::start_with(fs, None)
    }

    /// [`Session::start`] inside a run that already holds a guard (bench):
    /// tracefs is mounted through `guard`, so it is unmounted when that
    /// run restores the host, and one journal records every change.
    pub fn start_in(fs: &HostFs, guard: &mut SystemGuard) -> Result<Session> {
        Self::start_with(fs, Some(guard))
    }

    fn start_with(fs: &HostFs, outer: Option<&mut SystemGuard>) -> Result<Session> {
        let found = preflight::check(fs, nix::unistd::geteuid().is_root())?;
        let mut notes = found.notes.clone();
        let btf = match preflight::kernel_btf(fs) {
            Ok(bytes) => Some(bytes),
            Err(note) => {
                notes.extend(note);
                None
            }
        };
        let mut tracefs = LazyTracefs {
            fs,
            found: &found,
            outer,
            own: None,
            mounted_here: None,
        };
        let tracer = Tracer::attach(&mut tracefs, btf.as_deref())?;
        let LazyTracefs {
            own, mounted_here, ..
        } = tracefs;
        if mounted_here == Some(true) {
            notes.push(format!(
                "mounted tracefs on {} (unmounted again on exit)",
                fs.path(&found.tracefs).display()
            ));
        }
        drop(btf);
        notes.extend(tracer.attached().notes.iter().cloned());
        if !tracer.attached().absent.is_empty() {
            notes.push(format!(
                "not on this kernel, not traced: {}",
                tracer.attached().absent.join(", ")
            ));
        }
        let fdinfo = match Fdinfo::open(&tracer) {
            Ok(f) => Some(f),
            Err(e) => {
                notes.push(format!(
                    "runs the kernel skips the programs for ({}) cannot be counted, so no \
                     MISSED line will say them: {e:#}",
                    super::missed::WHILE
                ));
                None
            }
        };
        let groups = super::untraced::groups(&tracer.attached().tracepoints);
        let kernel = match KernelFiles::open(fs, groups) {
            Ok(k) => Some(k),
            Err(e) => {
                notes.push(format!(
                    "runs no program saw cannot be counted, so no MISSED line will say \
                     them: {e:#}"
                ));
                None
            }
        };
        Ok(Session {
            tracer,
            counters: Counters::default(),
            last: Sample::default(),
            stats_fd: None,
            guard: own,
            fdinfo,
            kernel,
            skipped: Default::default(),
            notes,
        })
    }

    /// What is attached.
    pub fn attached(&self) -> &Attached {
        self.tracer.attached()
    }

    /// Kernel ids of the loaded programs.
    pub fn program_ids(&self) -> Vec<u32> {
        self.tracer.program_ids()
    }

    /// Read every map into `out`, stamped with CLOCK_MONOTONIC at the
    /// middle of the read; every counter at least where the previous read
    /// left it ([`Sample::hold_monotonic`]). `out.missed` holds per group
    /// the larger of the runs the kernel skipped the programs for and the
    /// runs it counted that no program saw ([`super::untraced`]: its files
    /// are read just before the maps, the first time just after).
    pub fn read(&mut self, out: &mut Sample) -> Result<()> {
        self.read_as(out, false)
    }

    fn read_as(&mut self, out: &mut Sample, closing: bool) -> Result<()> {
        let based = self.kernel.as_ref().is_some_and(|k| k.untraced.based());
        if based {
            self.read_kernel(|k| k.read(closing));
        }
        // CLOCK_MONOTONIC: the clock bpf_ktime_get_ns uses
        let t0 = crate::sampler::clock::mono_ns();
        self.tracer.read(&mut self.counters)?;
        let t1 = crate::sampler::clock::mono_ns();
        convert(&self.counters, out);
        if !based {
            // right after the maps, before anything else is read: a run
            // between the two reads never looks missed, so the shorter
            // that gap, the fewer such runs on a busy machine
            self.read_kernel(|k| k.baseline(out));
        }
        out.at_ns = t0 + (t1.saturating_sub(t0)) / 2;
        // zeroed, not cleared: the groups are the same every read, so
        // their keys are not allocated again
        out.missed.values_mut().for_each(|n| *n = 0);
        if let Some(f) = &mut self.fdinfo {
            f.read(&mut out.missed)?;
        }
        self.skipped.clone_from(&out.missed);
        if let Some(k) = &self.kernel {
            // a run a program skipped is also a run the kernel counted and
            // no program saw: the larger count holds both
            let short = k.untraced.shortfall(out);
            super::missed::hold(&mut out.missed, &short);
        }
        // the maps only grow: a counter below its last value is a fault,
        // never a negative increment for a reader (trace, top, record)
        let back = out.hold_monotonic(&self.last);
        if !back.is_empty() {
            eprintln!(
                "irqlab: warning: trace: counters of {} went back since the last read; \
                 held at their last values",
                back.join(", ")
            );
        }
        self.last.clone_from(out);
        Ok(())
    }

    /// The last read's runs the kernel skipped the programs for (their
    /// `recursion_misses`), per group, without the runs no program saw
    /// that the sample's `missed` also holds.
    pub fn skipped(&self) -> &super::missed::Missed {
        &self.skipped
    }

    /// Run `f` on the kernel's files; on an error, warn and hold no more
    /// runs against them (what was traced is kept).
    fn read_kernel(&mut self, f: impl FnOnce(&mut KernelFiles) -> Result<()>) {
        let Some(k) = &mut self.kernel else {
            return;
        };
        if let Err(e) = f(k) {
            eprintln!("irqlab: warning: trace: runs no program saw are no longer counted: {e:#}");
            self.kernel = None;
        }
    }

    /// Turn the kernel's run-time accounting of BPF programs on for as
    /// long as this session lives (see [`irqlab_bpf::enable_run_stats`]);
    /// returns the programs' totals at that moment, the baseline of
    /// [`Session::run_stats`].
    pub fn account_cost(&mut self) -> Result<RunStats> {
        self.stats_fd = Some(irqlab_bpf::enable_run_stats()?);
        Ok(self.tracer.run_stats())
    }

    /// The programs' accumulated run time and count (counting only while
    /// [`Session::account_cost`] holds the accounting on).
    pub fn run_stats(&self) -> RunStats {
        self.tracer.run_stats()
    }

    /// Detach, then undo the mount (errors are reported, not hidden).
    pub fn stop(self) -> Result<()> {
        let Session { tracer, guard, .. } = self;
        drop(tracer);
        if let Some(mut g) = guard {
            g.restore()?;
        }
        Ok(())
    }
}

impl super::live_trace::TraceSession for Session {
    fn read(&mut self, out: &mut Sample) -> Result<()> {
        Session::read(self, out)
    }
    /// [`Session::read`] reading /proc/interrupts whatever its budget
    /// says ([`KernelFiles::read`]): `out.missed` holds every run no
    /// program saw up to now.
    fn read_closing(&mut self, out: &mut Sample) -> Result<()> {
        self.read_as(out, true)
    }
}

/// The subcommand this process runs (`trace`, `top`, `record`), for the
/// run lock's holder.
fn invoked_as() -> String {
    std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "trace".into())
}

/// The loader's maps as a [`Sample`], one row per (IRQ, action)
/// ([`hardirq_rows`]).
fn convert(c: &Counters, out: &mut Sample) {
    out.irqs.clear();
    out.softirqs.clear();
    out.irqs.extend(hardirq_rows(&c.hardirq));
    for (vec, v) in &c.vectors {
        let key = TraceKey::Vector {
            label: vec.label.into(),
            tracepoint: vec.tracepoint.into(),
        };
        out.irqs.push((key, v.clone()));
    }
    for (n, v) in &c.softirqs {
        out.softirqs.push((*n, v.clone()));
    }
    out.drops.clone_from(&c.drops);
}

/// Each program's `/proc/self/fdinfo/<fd>`, kept open and read again with
/// every map read: its `recursion_misses` line ([`super::missed`]). Read
/// under the live `/` whatever `--root` names: the descriptors are this
/// process's own.
struct Fdinfo {
    fs: HostFs,
    /// (group of rows, path, file) per program.
    files: Vec<(&'static str, String, KeptFile)>,
}

impl Fdinfo {
    /// Open every program's file and read it once.
    fn open(tracer: &Tracer) -> Result<Fdinfo> {
        let fs = HostFs::new("/");
        let mut files = Vec::new();
        for (name, fd) in tracer.program_fds() {
            let Some(group) = super::missed::rows_of(name) else {
                continue;
            };
            let rel = irqlab_core::paths::self_fdinfo(fd);
            let file = fs
                .keep(&rel)
                .with_context(|| format!("opening program {name}'s fdinfo"))?;
            files.push((group, rel, file));
        }
        let mut f = Fdinfo { fs, files };
        f.read(&mut super::missed::Missed::new())?;
        Ok(f)
    }

    /// Add each program's skipped runs to its group in `out` (a kernel
    /// without the line adds none).
    fn read(&mut self, out: &mut super::missed::Missed) -> Result<()> {
        for (group, rel, file) in &mut self.files {
            let text = self
                .fs
                .read_kept_record(file, rel)
                .context("reading a program's skipped runs")?;
            let n = super::missed::recursion_misses(text).unwrap_or(0);
            match out.get_mut(*group) {
                Some(sum) => *sum += n,
                None => {
                    out.insert((*group).to_string(), n);
                }
            }
        }
        Ok(())
    }
}

/// The share of the time between its reads that reading /proc/interrupts
/// (and holding its rows against the maps) may take, in percent: on a
/// machine where generating it is dear (many CPUs and IRQ numbers) it is
/// read at fewer of the session's reads.
const INTERRUPTS_BUDGET_PCT: u64 = 1;

/// The kernel's counters of the traced work, read through the samplers'
/// readers under the session's root (kept descriptors, /proc/interrupts
/// streamed and read again once when CPU hotplug tears it), and the runs
/// held against them ([`super::untraced`]).
struct KernelFiles {
    interrupts: StatFiles,
    softirqs: StatFiles,
    /// What both read into (each its own file's model).
    snap: Snapshot,
    untraced: super::untraced::Untraced,
    /// /proc/interrupts is read at every `every`-th read, or once the
    /// time its last read took is within the budget of the time since
    /// ([`INTERRUPTS_BUDGET_PCT`]); /proc/softirqs at each.
    every: u64,
    /// What the last read of /proc/interrupts took, ns.
    took: u64,
    /// Reads since /proc/interrupts was last read, and when that was
    /// (CLOCK_MONOTONIC, ns).
    since: u64,
    last_at: u64,
}

impl KernelFiles {
    /// Readers of both files; an absent one is an error naming it (one
    /// that cannot be read or parsed is at the first read).
    fn open(fs: &HostFs, groups: Vec<&'static str>) -> Result<KernelFiles> {
        for src in [StatFile::Interrupts, StatFile::Softirqs] {
            if !fs.exists(src.rel()) {
                anyhow::bail!("{} does not exist", fs.path(src.rel()).display());
            }
        }
        let reader = |src| StatFiles::new(HostFs::new(fs.root()), &[src]);
        Ok(KernelFiles {
            interrupts: reader(StatFile::Interrupts),
            softirqs: reader(StatFile::Softirqs),
            snap: Snapshot::default(),
            untraced: super::untraced::Untraced::new(groups),
            every: 1,
            took: 0,
            since: 0,
            last_at: 0,
        })
    }

    /// The first read, just after the maps that gave `traced`:
    /// /proc/softirqs first, its runs the most frequent of those a gap
    /// between the two reads hides.
    fn baseline(&mut self, traced: &Sample) -> Result<()> {
        self.last_at = crate::sampler::clock::mono_ns();
        self.softirqs.sample(&mut self.snap)?;
        self.interrupts.sample(&mut self.snap)?;
        let (Some(irqs), Some(soft)) = (&self.snap.interrupts, &self.snap.softirqs) else {
            anyhow::bail!("the kernel's counts were not read");
        };
        self.untraced.baseline(irqs, soft, traced);
        Ok(())
    }

    /// A later read, just before the maps: /proc/interrupts when due, or
    /// `closing` (a read that must be exact), then /proc/softirqs, last,
    /// nearest the maps. After each read of the former, how many reads until the
    /// next is set from what it took against the time per read since the
    /// last one; reads that come irregularly (two back to back, then a
    /// long wait) have it due after as long as the budget needs, whatever
    /// that count says.
    fn read(&mut self, closing: bool) -> Result<()> {
        self.since += 1;
        let now = crate::sampler::clock::mono_ns();
        let waited = super::untraced::waited_for(
            now.saturating_sub(self.last_at),
            self.took,
            INTERRUPTS_BUDGET_PCT,
        );
        let due = closing || self.since >= self.every || waited;
        if due {
            self.interrupts.sample(&mut self.snap)?;
        }
        self.softirqs.sample(&mut self.snap)?;
        let Some(soft) = &self.snap.softirqs else {
            anyhow::bail!("the kernel's softirq counts were not read");
        };
        let irqs = self.snap.interrupts.as_ref().filter(|_| due);
        self.untraced.kernel(irqs, soft);
        if due {
            // the file's read and its rows held against the maps' runs
            let took = crate::sampler::clock::mono_ns().saturating_sub(now);
            let per_read = now.saturating_sub(self.last_at) / self.since;
            self.every = super::untraced::reads_per_read(took, per_read, INTERRUPTS_BUDGET_PCT);
            self.took = took;
            self.since = 0;
            self.last_at = now;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::trace::sample::Stats;

    /// /proc/interrupts and /proc/softirqs of two CPUs under `root`, with
    /// `res` the `RES` row.
    fn write_files(root: &std::path::Path, res: [u64; 2]) {
        let irqs = format!(
            "           CPU0       CPU1       \n\
             RES: {:>10} {:>10}   Rescheduling interrupts\n",
            res[0], res[1]
        );
        let soft = "                    CPU0       CPU1\n\
                    \x20         TIMER:          5          5\n";
        // written in place: the readers keep their descriptors
        std::fs::write(root.join(StatFile::Interrupts.rel()), irqs).unwrap();
        std::fs::write(root.join(StatFile::Softirqs.rel()), soft).unwrap();
    }

    /// No `RES` run traced on either CPU.
    fn untraced_res() -> Sample {
        let key = TraceKey::Vector {
            label: "RES".into(),
            tracepoint: "reschedule".into(),
        };
        Sample {
            irqs: vec![(key, vec![Stats::default(); 2])],
            ..Sample::default()
        }
    }

    /// A read the budget skips /proc/interrupts at holds no run of its
    /// since the last; a closing read reads it all the same, the runs no
    /// program saw then show, and the budget counts from it as from a
    /// due read.
    #[test]
    fn a_closing_read_reads_interrupts_whatever_the_budget_says() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("proc")).unwrap();
        write_files(d.path(), [10, 10]);
        let fs = HostFs::new(d.path());
        let mut k = KernelFiles::open(&fs, vec!["RES"]).unwrap();
        let traced = untraced_res();
        k.baseline(&traced).unwrap();
        // a read of the file that took a minute: due in 100 minutes
        k.took = 60_000_000_000;
        k.every = 1_000;
        write_files(d.path(), [110, 10]);
        k.read(false).unwrap();
        assert!(k.untraced.shortfall(&traced).is_empty(), "skipped");
        assert_eq!(k.since, 1);
        let before = k.last_at;
        k.read(true).unwrap();
        let missed = k.untraced.shortfall(&traced);
        // 100 runs on CPU0, less the one that may be in flight
        assert_eq!(missed.get("RES"), Some(&99), "{missed:?}");
        assert_eq!(k.since, 0, "counted from the closing read");
        assert!(k.last_at > before);
        assert!(k.took < 60_000_000_000, "what the closing read took");
    }
}
