//! Runs the kernel counted that irqlab's programs did not see. The
//! kernel's own counters of the traced work (the x86 vector rows and the
//! numbered rows of /proc/interrupts, the rows of /proc/softirqs) are
//! read beside the maps, and over the run each group's traced runs are
//! held against them. Fewer traced runs, by more than the one run per CPU
//! that can be in flight at a read, are runs no program saw: a program
//! the kernel skipped ([`super::missed`]), or a kernel that runs no BPF
//! program while some task is current (docs/trace.md, "Runs no program
//! sees"). Hard IRQ rows are held per row and CPU, each counted run
//! owing one run per action (`hard`: why that is a lower bound, and the
//! rows not held). Pure: parsed files and samples in, counts out.

pub mod hard;

use super::missed::Missed;
use super::sample::{Sample, TraceKey};
use irqlab_bpf::maps::VECTORS;
use irqlab_core::softirqs::Softirqs;
use irqlab_core::{Interrupts, Shape};
use std::collections::BTreeMap;

/// The group of every softirq vector's runs (as in [`super::missed`]).
pub const SOFTIRQ: &str = "softirq";

pub use hard::HARDIRQ;

/// The kernel prints these counts as 32-bit values: they wrap.
const WRAP: u64 = 1 << 32;

/// Per group, per CPU id: a count.
type PerCpu = BTreeMap<&'static str, BTreeMap<u32, u64>>;

/// The groups whose programs all attached: every vector label whose
/// `<stem>_entry` and `<stem>_exit` are among `tracepoints` (as the
/// loader names them, `irq_vectors:reschedule_entry`), and
/// [`SOFTIRQ`] when `irq:softirq_entry` and `irq:softirq_exit` are,
/// [`HARDIRQ`] when `irq:irq_handler_entry` and `irq:irq_handler_exit` are.
pub fn groups(tracepoints: &[String]) -> Vec<&'static str> {
    let has = |name: &str| {
        tracepoints
            .iter()
            .any(|t| t.rsplit(':').next() == Some(name))
    };
    let both = |stem: &str| has(&format!("{stem}_entry")) && has(&format!("{stem}_exit"));
    let mut out: Vec<&'static str> = Vec::new();
    for v in VECTORS {
        let all = VECTORS
            .iter()
            .filter(|w| w.label == v.label)
            .all(|w| both(w.tracepoint));
        if all && !out.contains(&v.label) {
            out.push(v.label);
        }
    }
    if both("softirq") {
        out.push(SOFTIRQ);
    }
    if both("irq_handler") {
        out.push(HARDIRQ);
    }
    out
}

/// The kernel's counts of `groups` in one read, per CPU id, each modulo
/// 2^32: a vector group's per-CPU row of /proc/interrupts (absent: not
/// on this machine; none without `irqs`), [`SOFTIRQ`] the sum of
/// /proc/softirqs' rows.
pub fn kernel_counts(
    groups: &[&'static str],
    irqs: Option<&Interrupts>,
    soft: &Softirqs,
) -> PerCpu {
    let mut out = PerCpu::new();
    for &g in groups.iter().filter(|&&g| g != HARDIRQ) {
        if g != SOFTIRQ && irqs.is_none() {
            continue;
        }
        let per_cpu = out.entry(g).or_default();
        if g == SOFTIRQ {
            for row in &soft.rows {
                for (&cpu, &n) in soft.cpus.iter().zip(&row.counts) {
                    let c = per_cpu.entry(cpu).or_default();
                    *c = (*c + n) % WRAP;
                }
            }
            continue;
        }
        let Some((irqs, row)) = irqs.and_then(|irqs| {
            let row = irqs
                .rows()
                .iter()
                .find(|r| r.irq.is_none() && r.shape == Shape::PerCpu && r.label == g)?;
            Some((irqs, row))
        }) else {
            continue;
        };
        for (&cpu, &n) in irqs.cpus.iter().zip(row.counts.iter()) {
            per_cpu.insert(cpu, n % WRAP);
        }
    }
    out
}

/// The traced runs of `groups` in `s`, per CPU id (cumulative since
/// attach).
pub fn traced_counts(groups: &[&'static str], s: &Sample) -> PerCpu {
    let mut out = PerCpu::new();
    for &g in groups.iter().filter(|&&g| g != HARDIRQ) {
        let per_cpu = out.entry(g).or_default();
        let mut add = |cpu: usize, n: u64| {
            if let Ok(cpu) = u32::try_from(cpu) {
                *per_cpu.entry(cpu).or_default() += n;
            }
        };
        if g == SOFTIRQ {
            for (_, v) in &s.softirqs {
                v.iter().enumerate().for_each(|(i, x)| add(i, x.run.count));
            }
            continue;
        }
        for (k, v) in &s.irqs {
            if matches!(k, TraceKey::Vector { label, .. } if label == g) {
                v.iter().enumerate().for_each(|(i, x)| add(i, x.count));
            }
        }
    }
    out
}

/// The kernel's runs since a baseline against the traced ones.
#[derive(Debug, Default)]
pub struct Untraced {
    /// The groups held against the kernel's counts.
    groups: Vec<&'static str>,
    /// The kernel's last counts as read (modulo 2^32).
    last: PerCpu,
    /// The kernel's runs since the baseline, per CPU of the baseline.
    kernel: PerCpu,
    /// The traced runs at the baseline.
    traced_base: PerCpu,
    /// The numbered rows, when [`HARDIRQ`] is among the groups (from the
    /// baseline on).
    hard: Option<hard::HardIrqs>,
    /// Whether [`Untraced::baseline`] was taken.
    based: bool,
}

impl Untraced {
    /// Hold `groups` (see [`groups`]) against the kernel's counts.
    pub fn new(groups: Vec<&'static str>) -> Untraced {
        Untraced {
            groups,
            ..Untraced::default()
        }
    }

    /// Whether the baseline was taken.
    pub fn based(&self) -> bool {
        self.based
    }

    /// The first read: the kernel's files read just after the maps that
    /// gave `traced`. A run the kernel counts between the two reads is
    /// then traced but not in the kernel's runs since: the shortfall is
    /// never raised by it.
    pub fn baseline(&mut self, irqs: &Interrupts, soft: &Softirqs, traced: &Sample) {
        self.last = kernel_counts(&self.groups, Some(irqs), soft);
        self.kernel = self
            .last
            .iter()
            .map(|(&g, m)| (g, m.keys().map(|&cpu| (cpu, 0)).collect()))
            .collect();
        self.traced_base = traced_counts(&self.groups, traced);
        self.hard = self
            .groups
            .contains(&HARDIRQ)
            .then(|| hard::HardIrqs::baseline(irqs, traced));
        self.based = true;
    }

    /// A later read of the kernel's files, taken just before the maps:
    /// each CPU of the baseline adds its runs since the last read (modulo
    /// 2^32, as the kernel's counts wrap). A CPU absent now (offline) adds
    /// none; one absent from the baseline is not held. Without `irqs`
    /// (/proc/interrupts not read this time) the vector groups keep their
    /// last counts: their shortfall is then smaller than it is, never
    /// larger, until the next read; so do the hard IRQ rows
    /// ([`hard::HardIrqs::kernel`]).
    pub fn kernel(&mut self, irqs: Option<&Interrupts>, soft: &Softirqs) {
        if let (Some(h), Some(irqs)) = (&mut self.hard, irqs) {
            h.kernel(irqs);
        }
        let now = kernel_counts(&self.groups, irqs, soft);
        for (g, per_cpu) in now {
            let (Some(last), Some(runs)) = (self.last.get_mut(g), self.kernel.get_mut(g)) else {
                continue;
            };
            for (cpu, n) in per_cpu {
                let (Some(l), Some(r)) = (last.get_mut(&cpu), runs.get_mut(&cpu)) else {
                    continue;
                };
                *r += (n + WRAP - *l) % WRAP;
                *l = n;
            }
        }
    }

    /// Per group, the kernel's runs since the baseline that the maps of
    /// `traced` (read after the last [`Untraced::kernel`]) do not hold,
    /// less one per CPU (a run the kernel counted before its file was read
    /// and whose exit program ran after the maps were): only the groups
    /// that miss some.
    pub fn shortfall(&self, traced: &Sample) -> Missed {
        let mut out = Missed::new();
        if !self.based {
            return out;
        }
        let now = traced_counts(&self.groups, traced);
        for (g, runs) in &self.kernel {
            let base = self.traced_base.get(g);
            let cur = now.get(g);
            let short: u64 = runs
                .iter()
                .map(|(cpu, &k)| {
                    let at = |m: Option<&BTreeMap<u32, u64>>| {
                        m.and_then(|m| m.get(cpu)).copied().unwrap_or(0)
                    };
                    let t = at(cur).saturating_sub(at(base));
                    k.saturating_sub(t).saturating_sub(1)
                })
                .sum();
            if short > 0 {
                out.insert((*g).to_string(), short);
            }
        }
        let hard = self.hard.as_ref().map_or(0, |h| h.shortfall(traced));
        if hard > 0 {
            out.insert(HARDIRQ.to_string(), hard);
        }
        out
    }
}

/// Whether `since_ns` after a read that took `took_ns`, the file may be
/// read again for it to cost at most `budget_pct` % of the time: the
/// rule of reads that do not come at a steady interval (a read right
/// after another sets [`reads_per_read`] high, and a read long after
/// is due all the same).
pub fn waited_for(since_ns: u64, took_ns: u64, budget_pct: u64) -> bool {
    since_ns >= took_ns.saturating_mul(100) / budget_pct.max(1)
}

/// Every how many reads a file that took `took_ns` to read may be read
/// for it to cost at most `budget_pct` % of the time, reads coming every
/// `per_read_ns`: at least 1 (every read).
pub fn reads_per_read(took_ns: u64, per_read_ns: u64, budget_pct: u64) -> u64 {
    let share = took_ns.saturating_mul(100) / budget_pct.max(1);
    share.div_ceil(per_read_ns.max(1)).max(1)
}

#[cfg(test)]
mod tests;
