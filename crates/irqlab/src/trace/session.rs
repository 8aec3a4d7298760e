//! A tracing session (feature `trace`): preflight, tracefs mounted through
//! the SystemGuard when absent (unmounted again on exit, error, panic,
//! SIGINT/SIGTERM), programs attached through `irqlab_bpf` (the loader, the
//! second gateway to the kernel beside HostFs), maps read into [`Sample`]s.
//! Dropping it detaches the programs (their fds close) and then unmounts.

use super::preflight;
use super::sample::{hardirq_rows, Sample, TraceKey};
use crate::guard::SystemGuard;
use crate::host::{HostFs, KeptFile};
use anyhow::{Context, Result};
use irqlab_bpf::{Attached, Counters, RunStats, Tracer};

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
    /// Notes for stderr (absent optional tracepoints, BTF, the mount).
    pub notes: Vec<String>,
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
        let mut own = None;
        let tracefs = fs.path(&found.tracefs);
        let mounted_here = match outer {
            // the outer run holds the run lock already
            Some(g) if found.needs_mount => g
                .mount(&found.tracefs, "tracefs")
                .with_context(|| format!("tracefs is not mountable on {}", tracefs.display()))?,
            Some(_) => false,
            // under the run lock, and never on another irqlab run's mount
            None => {
                own = crate::guard::use_mount(fs, &found.tracefs, "tracefs", &invoked_as())?;
                own.is_some()
            }
        };
        if mounted_here {
            notes.push(format!(
                "mounted tracefs on {} (unmounted again on exit)",
                tracefs.display()
            ));
        }
        let btf = match preflight::kernel_btf(fs) {
            Ok(bytes) => Some(bytes),
            Err(note) => {
                notes.extend(note);
                None
            }
        };
        let tracer = Tracer::attach(
            |group, name| preflight::tracepoint_present(fs, &found.tracefs, group, name),
            btf.as_deref(),
        )?;
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
        Ok(Session {
            tracer,
            counters: Counters::default(),
            last: Sample::default(),
            stats_fd: None,
            guard: own,
            fdinfo,
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
    /// left it ([`Sample::hold_monotonic`]).
    pub fn read(&mut self, out: &mut Sample) -> Result<()> {
        // CLOCK_MONOTONIC: the clock bpf_ktime_get_ns uses
        let t0 = crate::sampler::clock::mono_ns();
        self.tracer.read(&mut self.counters)?;
        let t1 = crate::sampler::clock::mono_ns();
        convert(&self.counters, out);
        out.at_ns = t0 + (t1.saturating_sub(t0)) / 2;
        // zeroed, not cleared: the groups are the same every read, so
        // their keys are not allocated again
        out.missed.values_mut().for_each(|n| *n = 0);
        if let Some(f) = &mut self.fdinfo {
            f.read(&mut out.missed)?;
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
