//! The live host as a [`SnapshotSource`]: `/proc` and `/sys` under a root
//! through [`HostFs`] kept-open descriptors, read as the strategy decided
//! at start says (the whole `/proc/interrupts`, or the selected IRQs'
//! `per_cpu_count`), the selected IRQs re-resolved when one vanishes, the
//! IRQ listing changes or the filter changes, and the interrupt threads'
//! CPU from `threads.rs`.
//!
//! Owns the strategy *decision* (the measurement is in `strategy.rs`);
//! writes nothing.

use super::live::{LivePlan, SnapshotSource};
use super::strategy::{self, Choice};
use super::strategy_cache;
use super::targeted::{self, Targets};
use super::{located, StatFile, StatFiles, Strategy, Targeted};
use crate::filter::Filter;
use crate::host::{AttrDir, HostFs};
use crate::threads::{ThreadCpu, Threads};
use anyhow::Context;
use irqlab_core::{Interrupts, Snapshot};
use std::collections::{HashMap, HashSet};
use std::fs::File;

/// How often (ns) the targeted strategy lists `/sys/kernel/irq` to notice
/// new or freed descriptors.
const RELIST_NS: u64 = 10_000_000_000;
/// Where the kernel lists its IRQ descriptors.
const IRQ_DIR: &str = irqlab_core::paths::SYS_KERNEL_IRQ;
/// Most IRQs whose affinity files are kept open (with `AttrDir`'s
/// `HELD_MAX`, far below the 1024 descriptors a process starts with),
/// and at most a quarter of the process's descriptor limit; the affinity
/// of any other IRQ is read by opening its file each time.
const AFFINITY_KEPT_MAX: usize = 256;

/// How many IRQs' affinity files [`HostSource`] keeps open under the
/// process's descriptor limit now ([`AFFINITY_KEPT_MAX`] at most).
fn affinity_keep_max() -> usize {
    use nix::sys::resource::{getrlimit, Resource};
    let soft = getrlimit(Resource::RLIMIT_NOFILE).map_or(0, |(soft, _)| soft);
    usize::try_from(soft / 4).map_or(AFFINITY_KEPT_MAX, |q| q.min(AFFINITY_KEPT_MAX))
}

/// The host under one root.
pub struct HostSource {
    files: StatFiles,
    /// None: interrupt-thread CPU not wanted (see [`HostSource::open_without_threads`]).
    threads: Option<Threads>,
    choice: Choice,
    /// The `--irq` pattern the targeted IRQs were resolved for.
    resolved_for: Option<String>,
    irq_list: Vec<String>,
    listed_ns: u64,
    why: String,
    /// `/proc/irq`, opened at the first affinity read (each IRQ's file
    /// then opened relative to it); `Some(None)` when it cannot be. The
    /// files read for one frame and not kept are closed at the next
    /// sample.
    irq_dir: Option<Option<AttrDir>>,
    /// The affinity files of up to [`AFFINITY_KEPT_MAX`] IRQs, kept open
    /// on the live root: the sampler reads each IRQ's again
    /// (`metadata.rs`), one `pread` instead of an open, a read and a
    /// close. Per IRQ, one slot for each of [`targeted::AFFINITY_FILES`].
    affinity_kept: HashMap<u32, [Option<File>; 2]>,
    /// How many IRQs `affinity_kept` may hold (`None`: not asked yet;
    /// 0 once the process ran out of descriptors).
    affinity_keep_max: Option<usize>,
    /// Notes on affinity files not yet taken ([`SnapshotSource::take_notes`]).
    notes: Vec<String>,
    /// Every note made, so that each is made once.
    noted: HashSet<String>,
}

/// Read and parse the whole `/proc/interrupts` once.
fn read_full(fs: &mut HostFs) -> anyhow::Result<Interrupts> {
    let rel = StatFile::Interrupts.rel();
    let path = fs.path(rel);
    let bytes = fs
        .read_text(rel)
        .with_context(|| format!("reading {}", path.display()))?;
    Interrupts::parse(bytes).map_err(|e| located(&path, &e))
}

/// Why the selected IRQs' `per_cpu_count` files cannot be read in place
/// of the whole `/proc/interrupts` (`resolve`'s answer; shown by `-v`
/// after `strategy proc_interrupts:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Untargetable {
    /// No `--irq`: no IRQs to target.
    NoSelection,
    /// `/proc/interrupts` could not be read or parsed (the error).
    NoListing(String),
    /// The selection keeps this arch row (`NMI`, `LOC` …), which has no
    /// `per_cpu_count` file.
    ArchRow(String),
    /// The selection keeps no numbered IRQ (so no file to read).
    NoNumberedIrq,
    /// A file the targeted reader needs (a selected IRQ's
    /// `per_cpu_count` or attributes, the possible or online CPU list)
    /// could not be read or parsed (the error, naming it).
    FilesUnusable(String),
}

impl std::fmt::Display for Untargetable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Untargetable::NoSelection => f.write_str("no --irq selection"),
            Untargetable::NoListing(e) => f.write_str(e),
            Untargetable::ArchRow(label) => write!(f, "--irq matches arch row {label}"),
            Untargetable::NoNumberedIrq => f.write_str("--irq matches no numbered IRQ"),
            Untargetable::FilesUnusable(e) => write!(f, "per_cpu_count not usable: {e}"),
        }
    }
}

/// The targeted reader `--strategy per-cpu-count` resolved at start by
/// [`per_cpu_count_start`], and the gateway holding its files: handed to
/// [`HostSource::open_resolved`] so that `/proc/interrupts` is read and
/// the `per_cpu_count` files opened once, not again by the sampler.
pub struct Resolved {
    fs: HostFs,
    targeted: Targeted,
}

/// `--strategy per-cpu-count` under `root` for the rows `filter` selects,
/// known at start by `resolve`, the sampler's own rule: the targeted
/// reader (`Some`), nothing to say yet (`None`: no `--irq`;
/// `/proc/interrupts` unreadable: the sampler says so), or why it cannot
/// apply (`Err`: an arch row, which has no `per_cpu_count` file, now or
/// later; no numbered IRQ; files it cannot read).
pub fn per_cpu_count_start(
    root: &std::path::Path,
    filter: &Filter,
) -> Result<Option<Resolved>, Untargetable> {
    let mut fs = HostFs::new(root);
    match resolve(&mut fs, filter) {
        Ok(targeted) => Ok(Some(Resolved { fs, targeted })),
        Err(Untargetable::NoSelection | Untargetable::NoListing(_)) => Ok(None),
        Err(why) => Err(why),
    }
}

/// The targeted reader for `filter`, or why the full file is needed.
fn resolve(fs: &mut HostFs, filter: &Filter) -> Result<Targeted, Untargetable> {
    if filter.irq.is_none() {
        return Err(Untargetable::NoSelection);
    }
    let m = read_full(fs).map_err(|e| Untargetable::NoListing(format!("{e:#}")))?;
    match targeted::select(&m, |r| filter.keep_irq_row(r)) {
        Targets::NeedsFullFile(label) => Err(Untargetable::ArchRow(label)),
        Targets::Numbered(v) if v.is_empty() => Err(Untargetable::NoNumberedIrq),
        Targets::Numbered(v) => {
            Targeted::open(fs, &v, &m).map_err(|e| Untargetable::FilesUnusable(format!("{e:#}")))
        }
    }
}

/// Choose how to read for `filter` under `choice`: the targeted reader (if
/// any) and why.
fn decide(
    fs: &mut HostFs,
    filter: &Filter,
    choice: Choice,
) -> anyhow::Result<(Option<Targeted>, String)> {
    let resolved = match choice {
        Choice::ProcInterrupts => Err("--strategy proc-interrupts".to_string()),
        _ => resolve(fs, filter).map_err(|why| why.to_string()),
    };
    let irqs = |t: &Targeted| t.irqs().map(|n| n.to_string()).collect::<Vec<_>>();
    Ok(match resolved {
        Err(why) => (None, format!("strategy proc_interrupts: {why}")),
        Ok(t) if choice == Choice::PerCpuCount => {
            let why = forced(&t);
            (Some(t), why)
        }
        Ok(mut t) => {
            let list = irqs(&t).join(",");
            let (d, how) = measured_or_cached(fs, &mut t, &list)?;
            let why = format!("{d} (IRQs {list}; {how})");
            ((d.strategy == Strategy::PerCpuCount).then_some(t), why)
        }
    })
}

/// Why the targeted reader `t` reads: `--strategy per-cpu-count`.
fn forced(t: &Targeted) -> String {
    let irqs: Vec<String> = t.irqs().map(|n| n.to_string()).collect();
    format!("strategy per_cpu_count: forced (IRQs {})", irqs.join(","))
}

/// The decision for the targeted IRQs `list`: from the per-boot cache
/// when it holds one for this boot, kernel, root, CPU count and IRQ set
/// (`strategy_cache.rs`), else measured now and stored there. Also says
/// which, for `-v`.
fn measured_or_cached(
    fs: &mut HostFs,
    t: &mut Targeted,
    list: &str,
) -> anyhow::Result<(strategy::Decision, String)> {
    let key = strategy_cache::Key::of(fs, t.cpu_count(), list);
    let file = strategy_cache::path();
    if let (Some(key), Some(file)) = (&key, &file) {
        if let Some(d) = strategy_cache::lookup(file, key) {
            return Ok((
                d,
                format!("measured earlier this boot, cached in {}", file.display()),
            ));
        }
    }
    let d = strategy::decide(fs, t, strategy::ROUNDS)?;
    let how = match (&key, &file) {
        (Some(key), Some(file)) => match strategy_cache::store(file, key, &d) {
            Ok(()) => format!("measured now, cached in {}", file.display()),
            Err(e) => format!("measured now, not cached: {}: {e}", file.display()),
        },
        (None, _) => "measured now, not cached: no boot id or kernel release under the root".into(),
        (_, None) => "measured now, not cached: no XDG_CACHE_HOME or HOME".into(),
    };
    Ok((d, how))
}

fn pattern(f: &Filter) -> Option<String> {
    f.irq.as_ref().map(|r| r.as_str().to_string())
}

impl HostSource {
    /// Decide the strategy for `plan` and find the interrupt threads.
    pub fn open(plan: &LivePlan) -> anyhow::Result<Self> {
        Self::open_with(plan, true, None)
    }

    /// [`HostSource::open`] with the reader `--strategy per-cpu-count`
    /// resolved at start ([`per_cpu_count_start`]), taken as it is when
    /// `plan` forces that strategy under the same root (else decided anew).
    pub fn open_resolved(plan: &LivePlan, resolved: Option<Resolved>) -> anyhow::Result<Self> {
        Self::open_with(plan, true, resolved)
    }

    /// Like [`HostSource::open`] without interrupt-thread CPU: no scan
    /// of `/proc/PID/comm` at start, no schedstat reads per sample (for a
    /// consumer that shows no threads, such as `show --interval`).
    pub fn open_without_threads(plan: &LivePlan) -> anyhow::Result<Self> {
        Self::open_with(plan, false, None)
    }

    fn open_with(
        plan: &LivePlan,
        with_threads: bool,
        resolved: Option<Resolved>,
    ) -> anyhow::Result<Self> {
        let (fs, targeted, why) = match resolved {
            Some(r) if plan.strategy == Choice::PerCpuCount && r.fs.root() == plan.root => {
                let why = forced(&r.targeted);
                (r.fs, Some(r.targeted), why)
            }
            _ => {
                let mut fs = HostFs::new(&plan.root);
                let (targeted, why) = decide(&mut fs, &plan.filter, plan.strategy)?;
                (fs, targeted, why)
            }
        };
        let threads = with_threads.then(|| Threads::new(&fs));
        let mut files = StatFiles::new(fs, &StatFile::ALL);
        let irq_list = if targeted.is_some() {
            // Only the targeted strategy watches the IRQ set (refresh).
            files.fs().list_dir(IRQ_DIR)
        } else {
            Vec::new()
        };
        files.set_targeted(targeted);
        Ok(HostSource {
            files,
            threads,
            choice: plan.strategy,
            resolved_for: pattern(&plan.filter),
            irq_list,
            listed_ns: super::clock::mono_ns(),
            why,
            irq_dir: None,
            affinity_kept: HashMap::new(),
            affinity_keep_max: None,
            notes: Vec::new(),
            noted: HashSet::new(),
        })
    }

    /// Treat the tree as the live `/` ([`HostFs::pretend_live`]): its
    /// affinity files are then kept open, as on the live root.
    #[cfg(test)]
    pub(crate) fn pretend_live(&mut self) {
        self.files.fs_mut().pretend_live();
    }

    fn reresolve(&mut self, filter: &Filter) -> anyhow::Result<()> {
        let fs = self.files.fs_mut();
        let (t, why) = decide(fs, filter, self.choice)?;
        self.irq_list = if t.is_some() {
            fs.list_dir(IRQ_DIR)
        } else {
            Vec::new()
        };
        self.files.set_targeted(t);
        self.why = format!("{why} (re-resolved)");
        self.resolved_for = pattern(filter);
        Ok(())
    }
}

/// [`targeted::read_affinity_at`] through the descriptors `slots` keeps
/// for IRQ `irq` (one per [`targeted::AFFINITY_FILES`]): each file is read
/// again through its kept descriptor, and opened (and kept) when it has
/// none or that read fails (the IRQ was freed and its number given to
/// another: the old file reads nothing). `None` when the process is out
/// of descriptors (`EMFILE`, `ENFILE`).
fn read_affinity_kept(
    fs: &HostFs,
    dir: &mut AttrDir,
    slots: &mut [Option<File>; 2],
    irq: u32,
    notes: &mut Vec<String>,
) -> Option<Option<String>> {
    let mut out_of_fds = false;
    let affinity = targeted::affinity_of(
        |file| {
            let i = targeted::AFFINITY_FILES.iter().position(|f| *f == file)?;
            let slot = slots.get_mut(i)?;
            if let Some(text) = slot.as_ref().and_then(AttrDir::read_again) {
                return Some(text);
            }
            *slot = None;
            match dir.read_keeping(&format!("{irq}/{file}")) {
                Ok((text, kept)) => {
                    *slot = Some(kept);
                    text
                }
                Err(e) => {
                    out_of_fds |= matches!(
                        e.raw_os_error(),
                        Some(nix::libc::EMFILE | nix::libc::ENFILE)
                    );
                    None
                }
            }
        },
        |file, text| notes.extend(targeted::bad_affinity_note(fs, irq, file, text)),
    );
    (!out_of_fds).then_some(affinity)
}

impl SnapshotSource for HostSource {
    fn read(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        if let Some(Some(dir)) = &mut self.irq_dir {
            dir.flush();
        }
        self.files.sample(snap)
    }

    fn threads(&mut self, mono_ns: u64, out: &mut Vec<ThreadCpu>) {
        match self.threads.as_mut() {
            Some(t) => t.sample_into(self.files.fs_mut(), mono_ns, out),
            None => out.clear(),
        }
    }

    fn thread_totals(&self, out: &mut Vec<ThreadCpu>) {
        match self.threads.as_ref() {
            Some(t) => t.totals_into(out),
            None => out.clear(),
        }
    }

    fn affinity(&mut self, irq: u32) -> Option<String> {
        let fs = self.files.fs();
        let dir = self
            .irq_dir
            .get_or_insert_with(|| fs.attr_dir(irqlab_core::paths::PROC_IRQ).ok());
        let kept = &mut self.affinity_kept;
        let max = self.affinity_keep_max.get_or_insert_with(affinity_keep_max);
        let keep = fs.is_live() && (kept.len() < *max || kept.contains_key(&irq));
        let mut notes = Vec::new();
        let affinity = match dir {
            Some(dir) if keep => {
                let slots = kept.entry(irq).or_default();
                match read_affinity_kept(fs, dir, slots, irq, &mut notes) {
                    Some(affinity) => affinity,
                    None => {
                        // out of descriptors: give back the kept ones, keep none
                        kept.clear();
                        *max = 0;
                        notes.clear();
                        targeted::read_affinity_at(fs, dir, irq, &mut notes)
                    }
                }
            }
            Some(dir) => targeted::read_affinity_at(fs, dir, irq, &mut notes),
            None => targeted::read_affinity(fs, irq, &mut notes),
        };
        // each file's text noted once per run (re-read when the IRQs change)
        for n in notes {
            if self.noted.insert(n.clone()) {
                self.notes.push(n);
            }
        }
        affinity
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn strategy(&self) -> Strategy {
        self.files.strategy()
    }

    /// Re-select the IRQs when the filter changed, one vanished or, every
    /// `RELIST_NS`, the `/sys/kernel/irq` listing changed.
    fn refresh(&mut self, latest: &Snapshot, filter: &Filter) -> anyhow::Result<bool> {
        // compared in place: no copy of the pattern per sample
        let now_for = filter.irq.as_ref().map(|r| r.as_str());
        if now_for != self.resolved_for.as_deref() && self.choice != Choice::ProcInterrupts {
            self.reresolve(filter)?;
            return Ok(true);
        }
        let Some(t) = self.files.targeted() else {
            return Ok(false);
        };
        let mut stale = !t.vanished.is_empty();
        let now = latest.mono_ns;
        if now.saturating_sub(self.listed_ns) >= RELIST_NS {
            self.listed_ns = now;
            let list = self.files.fs().list_dir(IRQ_DIR);
            stale |= list != self.irq_list;
            self.irq_list = list;
        }
        if stale {
            self.reresolve(filter)?;
        }
        Ok(stale)
    }

    fn why(&self) -> &str {
        &self.why
    }

    fn missing(&self) -> Vec<String> {
        let fs = self.files.fs();
        self.files
            .missing
            .iter()
            .map(|(s, why)| format!("{}: {why}", fs.path(s.rel()).display()))
            .collect()
    }

    fn thread_count(&self) -> usize {
        self.threads.as_ref().map_or(0, Threads::len)
    }
}
