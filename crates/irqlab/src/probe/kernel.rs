//! `probe --kernel`: the kernel side of the same reads. Owns the counter
//! interface the timed loop (`measure`) snapshots around each read, the
//! per-row kernel summary (time in `seq_read_iter()` per read, its
//! p50/p90/p99, `show_interrupts()` calls per read) and the walk facts of
//! `/proc/interrupts` printed beside them (the kernel's `nr_irqs` bound as
//! the walk reached it, numbered rows printed, online CPUs, descriptors).
//! The BPF side is `irqlab_bpf::probe_loader` (feature `trace`).

use super::quantiles::Quantiles;
use crate::host::HostFs;
use anyhow::Result;
use irqlab_core::paths;

/// Cumulative counters of the probed thread (since attach).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Completed `seq_read_iter()` calls.
    pub calls: u64,
    /// Their summed duration (ns).
    pub ns: u64,
    /// `show_interrupts()` calls.
    pub show_calls: u64,
    /// Largest position `show_interrupts()` was called with.
    pub show_max_pos: i64,
    /// IRQ descriptor lookups (`irq_to_desc()`), counted by a hardware
    /// watchpoint where `show_interrupts()` cannot be hooked.
    pub lookups: u64,
}

/// What the timed loop reads before and after each read.
pub trait Counter {
    /// The counters now.
    fn counts(&self) -> Result<Counts>;
    /// Whether `show_interrupts()` calls can be counted here.
    fn can_count_shows(&self) -> bool;
    /// Start or stop counting `show_interrupts()` calls (the counting
    /// probe costs every call, so the timed reads run without it).
    fn count_shows(&mut self, on: bool) -> Result<()>;
    /// How the figures are taken (mechanism, and why a fallback).
    fn mechanism(&self) -> String;
    /// The kernel's `nr_irqs` read from kernel memory (see
    /// [`super::nr_irqs`]), where the mechanism can and the value covers
    /// `bound` (the allocated descriptors' bound). Call it from the
    /// probed thread.
    fn read_nr_irqs(&mut self, _fs: &HostFs, _bound: Option<u32>) -> Option<i64> {
        None
    }
    /// Where `show_interrupts()` calls cannot be counted, set up counting
    /// the descriptor lookups instead (from the probed thread, before the
    /// reads).
    fn watch_lookups(&mut self, _fs: &HostFs) {}
    /// Whether the counting pass counts descriptor lookups.
    fn counts_lookups(&self) -> bool {
        false
    }
}

/// One read's kernel-side figures (the difference of two [`Counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelSample {
    /// Time inside `seq_read_iter()` during the read (ns).
    pub ns: u64,
    /// `seq_read_iter()` calls during the read.
    pub calls: u64,
    /// `show_interrupts()` calls during the read.
    pub show_calls: u64,
    /// Descriptor lookups during the read.
    pub lookups: u64,
}

impl KernelSample {
    /// `after - before`.
    pub fn between(before: &Counts, after: &Counts) -> Self {
        KernelSample {
            ns: after.ns.saturating_sub(before.ns),
            calls: after.calls.saturating_sub(before.calls),
            show_calls: after.show_calls.saturating_sub(before.show_calls),
            lookups: after.lookups.saturating_sub(before.lookups),
        }
    }
}

/// A row's kernel-side summary.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KernelSummary {
    /// Time in `seq_read_iter()` per read (ns).
    pub values: Vec<f64>,
    pub ns: Quantiles,
    /// `show_interrupts()` calls per read (counting pass; empty when the
    /// mechanism cannot count them).
    pub show_values: Vec<f64>,
    pub show_calls: Option<Quantiles>,
    /// Descriptor lookups per read (counting pass, where counted).
    pub lookup_values: Vec<f64>,
    pub lookups: Option<Quantiles>,
    /// Mean `seq_read_iter()` calls per read.
    pub calls_per_read: f64,
    /// Time in `seq_read_iter()` per read of the counting pass (with the
    /// `show_interrupts()` probe attached: the difference to `ns` is the
    /// probe's cost, why the timed pass runs without it).
    pub counting_ns: Option<Quantiles>,
    /// Reads whose kernel time exceeds their wall time (must be 0: the
    /// kernel window lies inside the wall window).
    pub above_wall: usize,
    /// Reads whose kernel time exceeds their thread CPU time (possible
    /// only when the thread was preempted inside the read).
    pub above_cpu: usize,
}

/// Summarize a row's kernel samples (timed pass) against its wall and
/// CPU times (same order, same length), with the counting pass's samples.
pub fn summarize(
    samples: &[KernelSample],
    counting: &Counting,
    wall: &[f64],
    cpu: &[f64],
) -> KernelSummary {
    let (counting, lookups) = (&counting.samples[..], counting.lookups);
    let values: Vec<f64> = samples.iter().map(|s| s.ns as f64).collect();
    let show_values: Vec<f64> = counting.iter().map(|s| s.show_calls as f64).collect();
    let counting_ns: Vec<f64> = counting.iter().map(|s| s.ns as f64).collect();
    let n = samples.len().max(1) as f64;
    let calls = samples.iter().map(|s| s.calls as f64).sum::<f64>() / n;
    let counted = !counting.is_empty();
    let lookup_values: Vec<f64> = if lookups {
        counting.iter().map(|s| s.lookups as f64).collect()
    } else {
        Vec::new()
    };
    let shows = counted && !lookups;
    KernelSummary {
        ns: Quantiles::of(&values),
        show_calls: shows.then(|| Quantiles::of(&show_values)),
        lookups: (counted && lookups).then(|| Quantiles::of(&lookup_values)),
        lookup_values,
        calls_per_read: (calls * 1000.0).round() / 1000.0,
        counting_ns: counted.then(|| Quantiles::of(&counting_ns)),
        above_wall: values.iter().zip(wall).filter(|(k, w)| k > w).count(),
        above_cpu: values.iter().zip(cpu).filter(|(k, c)| k > c).count(),
        values,
        show_values: if shows { show_values } else { Vec::new() },
    }
}

/// The counting pass's samples, and what it counted: `show_interrupts()`
/// calls, or (`lookups`) descriptor lookups by the watchpoint.
#[derive(Debug, Clone, Default)]
pub struct Counting {
    pub samples: Vec<KernelSample>,
    pub lookups: bool,
}

/// What makes `show_interrupts()` calls per read differ from the rows
/// printed: the kernel walks every IRQ number from 0 to its `nr_irqs`
/// bound, holes included (one more call for the arch rows `NMI:`,
/// `LOC:` …), printing only the numbers that have a descriptor with an
/// action.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Walk {
    /// The largest position `show_interrupts()` was called with during
    /// the run: the kernel's `nr_irqs` (position `nr_irqs` prints the
    /// arch rows).
    pub nr_irqs: Option<i64>,
    /// Numbered IRQ rows in a read of /proc/interrupts after the run.
    pub irq_rows: Option<usize>,
    /// CPU columns (online CPUs) in that read.
    pub cpus: Option<usize>,
    /// Numbered entries of /sys/kernel/irq (allocated descriptors).
    pub descriptors: usize,
    /// Largest of them + 1: the bound the allocated descriptors need.
    pub descriptor_bound: Option<u32>,
    /// Where `show_interrupts()` positions were not seen: the kernel's
    /// `nr_irqs` variable read from kernel memory (the walk's bound,
    /// not a count of calls).
    pub nr_irqs_read: Option<i64>,
    /// Descriptor lookups per read of /proc/interrupts (median of the
    /// counting pass), where the watchpoint counted them.
    pub lookups: Option<u64>,
}

/// The walk facts of `/proc/interrupts` under `fs`, with `nr_irqs` as the
/// counters saw it; `note` gets why the rows and CPUs are unknown, if so.
pub fn walk(fs: &HostFs, max_pos: Option<i64>, note: &mut impl FnMut(&str)) -> Walk {
    let irqs: Vec<u32> = fs
        .list_dir(paths::SYS_KERNEL_IRQ)
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    let parsed = super::target::interrupts(fs)
        .map_err(|why| note(&format!("walk's IRQ rows and CPUs unknown: {why}")))
        .ok();
    Walk {
        nr_irqs: max_pos,
        irq_rows: parsed
            .as_ref()
            .map(|p| p.rows().iter().filter(|r| r.irq.is_some()).count()),
        cpus: parsed.as_ref().map(|p| p.cpus.len()),
        descriptors: irqs.len(),
        descriptor_bound: irqs.iter().max().map(|m| m + 1),
        nr_irqs_read: None,
        lookups: None,
    }
}

/// What `--kernel` needs that this process lacks, if anything (root;
/// the kernel BTF under `fs`).
pub fn missing(fs: &HostFs, root_user: bool) -> Option<String> {
    if !root_user {
        return Some(
            "probe --kernel needs root: it loads BPF programs and attaches them to \
             seq_read_iter and show_interrupts (run it with sudo)"
                .into(),
        );
    }
    if fs.open(paths::BTF_VMLINUX).is_err() {
        return Some(format!(
            "probe --kernel needs the kernel's BTF ({} is missing: a kernel built with \
             CONFIG_DEBUG_INFO_BTF=y), to attach fentry/fexit programs",
            fs.path(paths::BTF_VMLINUX).display()
        ));
    }
    None
}

/// The attached BPF counters (feature `trace`), and the watchpoint on the
/// descriptor tree where BPF cannot count `show_interrupts()` calls.
#[cfg(feature = "trace")]
pub struct Bpf(irqlab_bpf::probe_loader::ReadProbe, Lookups);

/// The lookup watchpoint, or why there is none.
#[cfg(feature = "trace")]
enum Lookups {
    NotTried,
    Watching(super::watch::Watch),
    Failed(String),
}

/// Without the `trace` feature there is no counter.
#[cfg(not(feature = "trace"))]
pub type Bpf = std::convert::Infallible;

#[cfg(feature = "trace")]
impl Bpf {
    /// Attach, counting the calling thread only; the kernel's BTF (for
    /// the trampolines) is read through `fs`.
    pub fn attach(fs: &HostFs) -> Result<Bpf> {
        let tgid = u32::try_from(nix::unistd::getpid().as_raw())?;
        let tid = u32::try_from(nix::unistd::gettid().as_raw())?;
        let syscalls = (nix::libc::SYS_read, nix::libc::SYS_pread64);
        let btf = crate::trace::preflight::kernel_btf(fs).ok();
        irqlab_bpf::probe_loader::ReadProbe::attach(tgid, tid, syscalls, btf.as_deref())
            .map(|p| Bpf(p, Lookups::NotTried))
            .map_err(|e| anyhow::anyhow!("probe --kernel: {e}"))
    }

    /// Kernel ids of the loaded programs.
    pub fn program_ids(&self) -> Vec<u32> {
        self.0.program_ids()
    }
}

#[cfg(feature = "trace")]
impl Counter for Bpf {
    fn counts(&self) -> Result<Counts> {
        let c = self
            .0
            .counts()
            .map_err(|e| anyhow::anyhow!("probe --kernel: {e}"))?;
        Ok(Counts {
            calls: c.calls,
            ns: c.total_ns,
            show_calls: c.show_calls,
            show_max_pos: c.show_max_pos,
            lookups: match &self.1 {
                Lookups::Watching(w) => w
                    .count()
                    .map_err(|e| anyhow::anyhow!("probe --kernel: lookup watchpoint: {e}"))?,
                _ => 0,
            },
        })
    }

    fn can_count_shows(&self) -> bool {
        self.0.can_count_shows() || self.counts_lookups()
    }

    fn count_shows(&mut self, on: bool) -> Result<()> {
        if let Lookups::Watching(w) = &self.1 {
            let r = if on { w.enable() } else { w.disable() };
            return r.map_err(|e| anyhow::anyhow!("probe --kernel: lookup watchpoint: {e}"));
        }
        self.0
            .count_shows(on)
            .map_err(|e| anyhow::anyhow!("probe --kernel: {e}"))
    }

    fn watch_lookups(&mut self, fs: &HostFs) {
        if self.0.can_count_shows() || !matches!(self.1, Lookups::NotTried) {
            return;
        }
        self.1 = match self.open_watch(fs) {
            Ok(w) => Lookups::Watching(w),
            Err(why) => Lookups::Failed(why),
        };
    }

    fn counts_lookups(&self) -> bool {
        matches!(self.1, Lookups::Watching(_))
    }

    fn read_nr_irqs(&mut self, fs: &HostFs, bound: Option<u32>) -> Option<i64> {
        use super::nr_irqs;
        let func = nr_irqs::symbol(fs, nr_irqs::ACCESSOR)?;
        let code = self.0.peek(func).ok()??;
        let var = nr_irqs::decode_load(func, &code)?;
        let bytes = self.0.peek(var).ok()??;
        nr_irqs::value(&bytes, bound)
    }

    fn mechanism(&self) -> String {
        let m = self.0.mechanism().describe();
        let m = match self.0.refused() {
            None => m.to_string(),
            Some(why) => format!("{m}; fentry/fexit were refused by this kernel ({why})"),
        };
        match &self.1 {
            Lookups::NotTried => m,
            Lookups::Watching(_) => format!(
                "{m}; the walk's descriptor lookups counted by a hardware watchpoint on \
                 the IRQ descriptor tree's root, read once per irq_to_desc() call"
            ),
            Lookups::Failed(why) => format!("{m}; descriptor lookups not counted ({why})"),
        }
    }
}

#[cfg(feature = "trace")]
impl Bpf {
    /// The watchpoint on the root of the tree `irq_to_desc()` searches.
    fn open_watch(&mut self, fs: &HostFs) -> std::result::Result<super::watch::Watch, String> {
        use super::nr_irqs;
        let func = nr_irqs::symbol(fs, nr_irqs::LOOKUP)
            .ok_or_else(|| format!("{} not in /proc/kallsyms", nr_irqs::LOOKUP))?;
        let code = self
            .0
            .peek(func)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("the code of {} could not be copied", nr_irqs::LOOKUP))?;
        let tree = nr_irqs::decode_tree(func, &code)
            .ok_or_else(|| format!("{}'s code is not the expected lookup", nr_irqs::LOOKUP))?;
        super::watch::Watch::open(tree + nr_irqs::TREE_ROOT_OFFSET, 8)
            .map_err(|e| format!("hardware watchpoint refused: {e}"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn kernel_sample_is_the_difference_and_flags_times_above_wall_or_cpu() {
        let a = Counts {
            calls: 10,
            ns: 1_000,
            show_calls: 850,
            show_max_pos: 424,
            lookups: 0,
        };
        let b = Counts {
            calls: 12,
            ns: 51_000,
            show_calls: 1275,
            show_max_pos: 424,
            lookups: 0,
        };
        let s = KernelSample::between(&a, &b);
        assert_eq!((s.ns, s.calls, s.show_calls), (50_000, 2, 425));
        let counting = Counting {
            samples: vec![s],
            lookups: false,
        };
        let k = summarize(
            &[s, s],
            &counting,
            &[60_000.0, 49_000.0],
            &[40_000.0, 49_000.0],
        );
        assert_eq!((k.above_wall, k.above_cpu), (1, 2));
        assert_eq!(k.show_calls.map(|q| q.p99), Some(425.0));
        assert_eq!((k.ns.p50, k.calls_per_read), (50_000.0, 2.0));
        let k = summarize(&[s], &Counting::default(), &[60_000.0], &[60_000.0]);
        assert_eq!(
            (k.show_calls, k.counting_ns),
            (None, None),
            "not counted is not zero"
        );
    }

    #[test]
    fn walk_counts_numbered_rows_cpus_and_the_descriptor_bound() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("proc")).unwrap();
        std::fs::write(
            r.join("proc/interrupts"),
            "           CPU0       CPU1\n  0:  5  0  IO-APIC 2-edge timer\n 43:  1  2  PCI-MSI eth0\nLOC:  9  9  Local timer interrupts\n",
        )
        .unwrap();
        for i in ["0", "43"] {
            std::fs::create_dir_all(r.join("sys/kernel/irq").join(i)).unwrap();
        }
        let w = walk(&HostFs::new(r), Some(424), &mut |n| panic!("{n}"));
        assert_eq!(w.irq_rows, Some(2));
        assert_eq!(w.cpus, Some(2));
        assert_eq!((w.descriptors, w.descriptor_bound), (2, Some(44)));
        assert_eq!(w.nr_irqs, Some(424));
    }

    #[test]
    fn walk_of_a_truncated_proc_interrupts_is_unknown_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("proc")).unwrap();
        std::fs::write(
            r.join("proc/interrupts"),
            "           CPU0       CPU1\n  0:  5  0  IO-APIC 2-edge timer\n 43:  1  2  PCI-MSI eth",
        )
        .unwrap();
        let mut notes = Vec::new();
        let w = walk(&HostFs::new(r), Some(424), &mut |n| {
            notes.push(n.to_string())
        });
        assert_eq!((w.irq_rows, w.cpus), (None, None));
        let want = format!(
            "walk's IRQ rows and CPUs unknown: {}:3: truncated line (no newline at end of file)",
            r.join("proc/interrupts").display()
        );
        assert_eq!(notes, [want]);
        let line = super::super::output::walk_line(&w);
        assert!(
            line.contains("? numbered IRQ rows printed (? of the 424"),
            "{line}"
        );
    }

    #[test]
    fn walk_line_gives_nr_irqs_from_kernel_memory_as_derived_not_counted() {
        let mut w = Walk {
            nr_irqs: None,
            irq_rows: Some(19),
            cpus: Some(2),
            descriptors: 20,
            descriptor_bound: Some(44),
            nr_irqs_read: Some(424),
            lookups: None,
        };
        let line = super::super::output::walk_line(&w);
        assert!(
            line.contains("nr_irqs = 424 (read from kernel memory)"),
            "{line}"
        );
        assert!(
            line.contains("would be 425 show_interrupts() calls"),
            "{line}"
        );
        assert!(line.contains("derived, not counted"), "{line}");
        assert!(line.contains("not countable with this mechanism"), "{line}");
        w.nr_irqs_read = None;
        assert!(super::super::output::walk_line(&w).contains("nr_irqs unknown"));
    }

    #[test]
    fn missing_names_root_then_btf() {
        let dir = tempfile::tempdir().unwrap();
        let fs = HostFs::new(dir.path());
        assert!(missing(&fs, false).unwrap().contains("needs root"));
        assert!(missing(&fs, true).unwrap().contains("BTF"));
    }
}
