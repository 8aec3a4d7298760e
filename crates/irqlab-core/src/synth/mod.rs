//! Synthetic machines: a deterministic fake `/proc` + `/sys` tree (huge or
//! exotic machines) from a [`SynthSpec`] and a seed.
//!
//! Owns the spec, its validation, the generated models ([`SynthTree`]) and
//! the per-IRQ sysfs/procfs file contents. Pure: no file system, no clock,
//! no global randomness (a SplitMix64 seeded from the spec); the CLI only
//! writes what [`SynthTree::files`] returns. Must not format
//! `/proc/interrupts`, `/proc/softirqs` or `/proc/stat` itself: that is
//! [`crate::render`]'s job.

mod arch_rows;
mod devices;
mod estimate;
mod files;

pub use arch_rows::{arch_row_specs, ArchRowKind, ArchRowSpec};
pub use estimate::{FileGroup, SizeEstimate};

use crate::desc::DescParts;
use crate::interrupts::{CompactString, Interrupts, IrqRow, Shape, Width};
use crate::render::{Arch, Era};
use crate::rng::Rng;
use crate::softirqs::{SoftirqRow, Softirqs};
use crate::stat::{CpuTimes, Stat};
use std::fmt;

/// Largest CPU count accepted (x86 `MAXSMP` NR_CPUS).
pub const MAX_CPUS: u32 = 8192;
/// Largest `nr_irqs` accepted (the `/proc/stat` `intr` line has one value each).
pub const MAX_NR_IRQS: u32 = 1 << 20;
/// Largest `cpus × irqs` accepted (≈ 700 MB of `/proc/interrupts`).
pub const MAX_CELLS: u64 = 64 << 20;

/// Softirq vector names, in kernel order.
pub const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// What machine to synthesize.
///
/// ```
/// use irqlab_core::render::{Arch, Era};
/// use irqlab_core::synth::SynthSpec;
///
/// let spec = SynthSpec { cpus: 8, irqs: 40, nr_irqs: 1000, arch: Arch::X86, era: Era::E3, offline: vec![3], seed: 1 };
/// let tree = spec.build().unwrap();
/// assert_eq!(tree.interrupts.cpus, vec![0, 1, 2, 4, 5, 6, 7]);
/// assert_eq!(tree.softirqs.cpus.len(), 8); // possible CPUs
/// let files = tree.files();
/// assert!(files.iter().any(|(p, _)| p == "proc/interrupts"));
/// assert!(files.iter().any(|(p, _)| p.ends_with("/per_cpu_count")));
/// assert_eq!(spec.build().unwrap().files(), files); // deterministic
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthSpec {
    /// Possible CPUs `0..cpus`.
    pub cpus: u32,
    /// Numbered IRQ rows to create.
    pub irqs: u32,
    /// `nr_irqs` (IRQ numbers are spread over `0..nr_irqs`; column width).
    pub nr_irqs: u32,
    pub arch: Arch,
    pub era: Era,
    /// Offline CPU ids (absent from `/proc/interrupts` and `cpuN` lines).
    pub offline: Vec<u32>,
    pub seed: u64,
}

/// Why a spec cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SynthError {
    NoCpus,
    TooManyCpus { cpus: u32 },
    NrIrqsTooLarge { nr_irqs: u32 },
    TooManyIrqs { irqs: u32, available: u32 },
    OfflineOutOfRange { cpu: u32, cpus: u32 },
    AllOffline,
    TooLarge { cells: u64 },
}

impl fmt::Display for SynthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SynthError::NoCpus => write!(f, "expected at least 1 CPU, got 0"),
            SynthError::TooManyCpus { cpus } => {
                write!(f, "{cpus} CPUs exceeds the maximum of {MAX_CPUS}")
            }
            SynthError::NrIrqsTooLarge { nr_irqs } => {
                write!(f, "nr_irqs {nr_irqs} exceeds the maximum of {MAX_NR_IRQS}")
            }
            SynthError::TooManyIrqs { irqs, available } => write!(
                f,
                "{irqs} IRQs do not fit: only {available} IRQ numbers are available below nr_irqs"
            ),
            SynthError::OfflineOutOfRange { cpu, cpus } => {
                write!(
                    f,
                    "offline CPU {cpu} is outside the possible CPUs 0-{}",
                    cpus.saturating_sub(1)
                )
            }
            SynthError::AllOffline => write!(f, "at least one CPU must stay online"),
            SynthError::TooLarge { cells } => {
                write!(
                    f,
                    "{cells} CPU x IRQ cells exceeds the maximum of {MAX_CELLS}"
                )
            }
        }
    }
}

impl std::error::Error for SynthError {}

/// One synthesized IRQ descriptor (its sysfs/procfs truth).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthIrq {
    pub irq: u32,
    pub parts: DescParts,
    /// Counts per possible CPU.
    pub counts: Vec<u64>,
    /// Level-triggered (sysfs `type`).
    pub level: bool,
    /// `smp_affinity_list` CPUs.
    pub affinity: Vec<u32>,
    /// `effective_affinity_list` CPU.
    pub effective: u32,
    /// NUMA node.
    pub node: i32,
}

/// A synthesized machine: models plus per-IRQ truth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthTree {
    pub spec: SynthSpec,
    /// Online CPUs (the `/proc/interrupts` header).
    pub online: Vec<u32>,
    /// The `/proc/interrupts` model. Numbered rows carry `parts` and an
    /// empty `description` (the renderer regenerates it from `parts`);
    /// parse [`SynthTree::interrupts_text`] to get the printed description.
    pub interrupts: Interrupts,
    pub softirqs: Softirqs,
    pub stat: Stat,
    /// Every numbered descriptor, in IRQ order.
    pub irqs: Vec<SynthIrq>,
}

impl SynthSpec {
    /// The benchmarks' big machine: x86, era E3, 1152 CPUs all online,
    /// 1056 numbered IRQs (nr_irqs 1352), seed 1 — a 13.7 MB
    /// `/proc/interrupts` close to the largest in the corpus.
    pub fn x86_1152() -> SynthSpec {
        SynthSpec {
            cpus: 1152,
            irqs: 1056,
            nr_irqs: 1352,
            arch: Arch::X86,
            era: Era::E3,
            offline: Vec::new(),
            seed: 1,
        }
    }

    fn validate(&self) -> Result<Vec<u32>, SynthError> {
        if self.cpus == 0 {
            return Err(SynthError::NoCpus);
        }
        if self.cpus > MAX_CPUS {
            return Err(SynthError::TooManyCpus { cpus: self.cpus });
        }
        if self.nr_irqs > MAX_NR_IRQS {
            return Err(SynthError::NrIrqsTooLarge {
                nr_irqs: self.nr_irqs,
            });
        }
        let available = self.nr_irqs.saturating_sub(self.first_irq());
        if self.irqs > available {
            return Err(SynthError::TooManyIrqs {
                irqs: self.irqs,
                available,
            });
        }
        let cells = u64::from(self.cpus) * u64::from(self.irqs);
        if cells > MAX_CELLS {
            return Err(SynthError::TooLarge { cells });
        }
        if let Some(&cpu) = self.offline.iter().find(|&&c| c >= self.cpus) {
            return Err(SynthError::OfflineOutOfRange {
                cpu,
                cpus: self.cpus,
            });
        }
        let online: Vec<u32> = (0..self.cpus)
            .filter(|c| !self.offline.contains(c))
            .collect();
        if online.is_empty() {
            return Err(SynthError::AllOffline);
        }
        Ok(online)
    }

    /// s390 numbers its classes 0–2; device IRQs start at 3.
    fn first_irq(&self) -> u32 {
        if self.arch == Arch::S390 {
            3
        } else {
            0
        }
    }

    /// Generate the tree.
    pub fn build(&self) -> Result<SynthTree, SynthError> {
        let online = self.validate()?;
        let mut rng = Rng::new(self.seed);
        let numbers = self.numbers(&mut rng);
        let devs = devices::plan(self.arch, self.era, numbers.len(), self.cpus, &mut rng);
        let irqs: Vec<SynthIrq> = numbers
            .iter()
            .zip(devs)
            .map(|(&irq, dev)| self.make_irq(irq, dev, &online, &mut rng))
            .collect();
        let (leading, trailing) = self.arch_rows(&online, &mut rng);
        let mut rows = leading;
        rows.extend(irqs.iter().map(|i| numbered_row(i, &online)));
        rows.extend(trailing);
        let interrupts = Interrupts::from_parts(online.clone(), rows);
        let softirqs = make_softirqs(self.cpus, &mut rng);
        let stat = self.make_stat(&online, &interrupts, &irqs, &softirqs, &mut rng);
        Ok(SynthTree {
            spec: self.clone(),
            online,
            interrupts,
            softirqs,
            stat,
            irqs,
        })
    }

    /// IRQ numbers: x86 legacy numbers first (when they fit), the rest
    /// spread over the remaining range with holes.
    fn numbers(&self, rng: &mut Rng) -> Vec<u32> {
        let fixed: Vec<u32> = devices::legacy_irqs(self.arch)
            .iter()
            .copied()
            .filter(|&n| n < self.nr_irqs)
            .take(self.irqs as usize)
            .collect();
        let start = fixed
            .last()
            .map_or(self.first_irq(), |&l| l.saturating_add(1));
        let rest = self.irqs - fixed.len() as u32;
        if start <= self.nr_irqs && self.nr_irqs - start >= rest {
            let mut v = fixed;
            v.extend(pick_numbers(start, self.nr_irqs, rest, rng));
            v
        } else {
            pick_numbers(self.first_irq(), self.nr_irqs, self.irqs, rng)
        }
    }

    fn make_irq(&self, irq: u32, dev: devices::Device, online: &[u32], rng: &mut Rng) -> SynthIrq {
        let mut parts = DescParts {
            chip: dev.chip.into(),
            hwirq: dev.hwirq,
            trigger: dev.trigger.into(),
            flow: dev.flow.into(),
            actions: dev.actions.into(),
        };
        let (lo, hi) = dev.managed.unwrap_or((0, self.cpus));
        let affinity: Vec<u32> = (lo..hi).collect();
        let effective = affinity
            .iter()
            .copied()
            .find(|c| online.contains(c))
            .or_else(|| online.first().copied())
            .unwrap_or(0);
        let mut counts = draw_counts(self.cpus, effective, rng);
        // E1 shows freed IRQs that still have counts: no action text.
        if self.era == Era::E1 && self.arch != Arch::S390 && rng.chance(3) {
            parts.actions.clear();
            if let Some(c) = counts.get_mut(effective as usize) {
                *c = (*c).max(1);
            }
        }
        let node = if self.cpus > 64 {
            (effective * 2 / self.cpus) as i32
        } else {
            0
        };
        SynthIrq {
            irq,
            parts,
            counts,
            level: dev.level,
            affinity,
            effective,
            node,
        }
    }

    /// Arch rows before and after the numbered rows.
    fn arch_rows(&self, online: &[u32], rng: &mut Rng) -> (Vec<IrqRow>, Vec<IrqRow>) {
        let (mut leading, mut trailing) = (Vec::new(), Vec::new());
        for spec in arch_row_specs(self.arch, self.era)
            .into_iter()
            .filter(|s| s.common)
        {
            let suppressed = self.arch == Arch::X86
                && self.era == Era::E4
                && matches!(spec.label, "SPU" | "RTR" | "ERR" | "MIS");
            if suppressed && !rng.chance(30) {
                continue;
            }
            let n = match spec.kind {
                ArchRowKind::PerCpu => online.len(),
                ArchRowKind::Single => 1,
                ArchRowKind::NoCounts => 0,
            };
            let mut counts: Vec<u64> = (0..n).map(|_| arch_count(spec.heat, rng)).collect();
            if suppressed {
                if let Some(c) = counts.first_mut() {
                    *c = (*c).max(1);
                }
            }
            let shape = match spec.kind {
                ArchRowKind::PerCpu => Shape::PerCpu,
                ArchRowKind::Single => Shape::Single,
                ArchRowKind::NoCounts => Shape::NoCounts,
            };
            let row = IrqRow {
                label: spec.label.into(),
                shape,
                width: Width::of_label(spec.label.as_bytes()),
                counts: counts.into(),
                description: spec.desc.into(),
                ..IrqRow::default()
            };
            if spec.leading {
                leading.push(row);
            } else {
                trailing.push(row);
            }
        }
        if self.arch == Arch::S390 {
            s390_class_sums(&mut leading, &trailing);
        }
        (leading, trailing)
    }

    fn make_stat(
        &self,
        online: &[u32],
        m: &Interrupts,
        irqs: &[SynthIrq],
        sirq: &Softirqs,
        rng: &mut Rng,
    ) -> Stat {
        let per_cpu: Vec<Vec<u64>> = (0..self.cpus).map(|_| cpu_times(rng)).collect();
        let mut total = vec![0u64; 10];
        for times in &per_cpu {
            for (t, v) in total.iter_mut().zip(times) {
                *t += v;
            }
        }
        let cpus = online
            .iter()
            .filter_map(|&c| {
                per_cpu.get(c as usize).map(|f| CpuTimes {
                    cpu: Some(c),
                    fields: f.clone(),
                })
            })
            .collect();
        let mut intr = vec![0u64; self.nr_irqs as usize];
        let mut intr_total = 0u64;
        for i in irqs {
            let sum: u64 = i.counts.iter().sum();
            intr_total += sum;
            if let Some(v) = intr.get_mut(i.irq as usize) {
                *v = sum & u64::from(u32::MAX);
            }
        }
        let arch_rows = m.rows().iter().filter(|r| r.irq.is_none());
        for (k, r) in arch_rows.enumerate() {
            // ≤7.1 x86 leaves TLB out of the total; s390 numbers its classes 0–2.
            if self.arch == Arch::X86 && self.era != Era::E4 && r.label == "TLB" {
                continue;
            }
            if self.arch == Arch::S390 && k >= 3 {
                continue;
            }
            intr_total += r.total();
            if self.arch == Arch::S390 {
                if let Some(v) = intr.get_mut(k) {
                    *v = r.total() & u64::from(u32::MAX);
                }
            }
        }
        let softirq: Vec<u64> = sirq
            .rows
            .iter()
            .map(|r| r.counts.iter().sum::<u64>() & u64::from(u32::MAX))
            .collect();
        let softirq_total = sirq.rows.iter().flat_map(|r| &r.counts).sum();
        Stat {
            total: CpuTimes {
                cpu: None,
                fields: total,
            },
            cpus,
            intr_total,
            intr,
            intr_per_irq: true,
            ctxt: Some(rng.range(1_000_000, 50_000_000_000)),
            btime: Some(rng.range(1_700_000_000, 1_800_000_000)),
            processes: Some(rng.range(1_000, 100_000_000)),
            procs_running: Some(rng.range(1, online.len() as u64)),
            procs_blocked: Some(rng.below(4)),
            softirq_total: Some(softirq_total),
            softirq,
        }
    }
}

/// `k` sorted distinct numbers from `lo..hi` (Knuth's selection sampling).
fn pick_numbers(lo: u32, hi: u32, k: u32, rng: &mut Rng) -> Vec<u32> {
    let mut out = Vec::with_capacity(k as usize);
    let mut need = u64::from(k);
    for n in lo..hi {
        let left = u64::from(hi - n);
        if need == 0 {
            break;
        }
        if rng.below(left) < need {
            out.push(n);
            need -= 1;
        }
    }
    out
}

/// Skewed counts for possible CPUs: the effective CPU hot, a few warm, most 0.
fn draw_counts(cpus: u32, hot: u32, rng: &mut Rng) -> Vec<u64> {
    let mut v = vec![0u64; cpus as usize];
    let near_wrap = rng.chance(3);
    if let Some(c) = v.get_mut(hot as usize) {
        *c = if near_wrap {
            u64::from(u32::MAX) - rng.below(100_000)
        } else {
            let mag = rng.below(10) as u32;
            rng.below(10u64.pow(mag))
        };
    }
    let extra = rng.below(3);
    for _ in 0..extra {
        let i = rng.below(u64::from(cpus)) as usize;
        if let Some(c) = v.get_mut(i) {
            *c = (*c).max(rng.below(100_000));
        }
    }
    if rng.chance(10) {
        for c in v.iter_mut() {
            if rng.chance(20) {
                *c = (*c).max(rng.below(50));
            }
        }
    }
    v
}

fn arch_count(heat: u8, rng: &mut Rng) -> u64 {
    match heat {
        2 => rng.range(10_000, 4_000_000_000),
        1 => rng.below(10_000_000),
        _ if rng.chance(10) => rng.below(1000),
        _ => 0,
    }
}

/// s390 class lines are the per-CPU sums of their `[EXT]`/`[I/O]`/`[AIO]` sub-classes.
fn s390_class_sums(classes: &mut [IrqRow], subs: &[IrqRow]) {
    for class in classes.iter_mut() {
        let tag = format!("[{}]", class.label);
        for c in class.counts.iter_mut() {
            *c = 0;
        }
        for sub in subs.iter().filter(|s| s.description.starts_with(&tag)) {
            for (c, s) in class.counts.iter_mut().zip(&sub.counts) {
                *c = (*c + s) & u64::from(u32::MAX);
            }
        }
    }
}

fn numbered_row(i: &SynthIrq, online: &[u32]) -> IrqRow {
    IrqRow {
        label: i.irq.to_string().into(),
        irq: Some(i.irq),
        shape: Shape::PerCpu,
        width: Width::U32,
        counts: online
            .iter()
            .map(|&c| i.counts.get(c as usize).copied().unwrap_or(0))
            .collect(),
        description: CompactString::new(""),
        parts: i.parts.clone(),
    }
}

fn make_softirqs(cpus: u32, rng: &mut Rng) -> Softirqs {
    let heat = [0u8, 2, 0, 1, 1, 0, 0, 2, 0, 2];
    let rows = SOFTIRQ_NAMES
        .iter()
        .zip(heat)
        .map(|(name, h)| SoftirqRow {
            name: (*name).into(),
            counts: (0..cpus).map(|_| arch_count(h, rng)).collect(),
        })
        .collect();
    Softirqs::new((0..cpus).collect(), rows)
}

/// user nice system idle iowait irq softirq steal guest guest_nice.
fn cpu_times(rng: &mut Rng) -> Vec<u64> {
    vec![
        rng.range(1_000, 10_000_000),
        rng.below(10_000),
        rng.range(1_000, 5_000_000),
        rng.range(100_000, 100_000_000),
        rng.below(100_000),
        rng.below(1_000),
        rng.below(500_000),
        rng.below(10_000),
        0,
        0,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(arch: Arch, era: Era) -> SynthSpec {
        SynthSpec {
            cpus: 6,
            irqs: 50,
            nr_irqs: 300,
            arch,
            era,
            offline: vec![2],
            seed: 9,
        }
    }

    #[test]
    fn picks_sorted_distinct_numbers() {
        let mut r = Rng::new(1);
        let v = pick_numbers(3, 100, 40, &mut r);
        assert_eq!(v.len(), 40);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert!(v.iter().all(|&n| (3..100).contains(&n)));
        assert_eq!(pick_numbers(0, 5, 5, &mut r), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn x86_legacy_numbers_when_they_fit() {
        let t = spec(Arch::X86, Era::E3).build().expect("builds");
        let n: Vec<u32> = t.irqs.iter().map(|i| i.irq).take(8).collect();
        assert_eq!(&n[..7], &[0, 1, 8, 9, 12, 16, 24]);
        assert_eq!(t.irqs[0].parts.actions, "timer");
        let tight = SynthSpec {
            irqs: 10,
            nr_irqs: 12,
            ..spec(Arch::X86, Era::E3)
        };
        let n: Vec<u32> = tight
            .build()
            .expect("builds")
            .irqs
            .iter()
            .map(|i| i.irq)
            .collect();
        // No room after the legacy numbers: plain spread.
        assert_eq!(n.len(), 10);
        assert!(n.windows(2).all(|w| w[0] < w[1]) && n.iter().all(|&i| i < 12));
        let full = SynthSpec { irqs: 12, ..tight };
        let n: Vec<u32> = full
            .build()
            .expect("builds")
            .irqs
            .iter()
            .map(|i| i.irq)
            .collect();
        assert_eq!(n, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn rejects_bad_specs() {
        let base = spec(Arch::X86, Era::E3);
        assert_eq!(
            SynthSpec {
                cpus: 0,
                ..base.clone()
            }
            .build()
            .err(),
            Some(SynthError::NoCpus)
        );
        assert_eq!(
            SynthSpec {
                irqs: 301,
                ..base.clone()
            }
            .build()
            .err(),
            Some(SynthError::TooManyIrqs {
                irqs: 301,
                available: 300
            })
        );
        assert_eq!(
            SynthSpec {
                offline: vec![6],
                ..base.clone()
            }
            .build()
            .err(),
            Some(SynthError::OfflineOutOfRange { cpu: 6, cpus: 6 })
        );
        assert_eq!(
            SynthSpec {
                offline: (0..6).collect(),
                ..base.clone()
            }
            .build()
            .err(),
            Some(SynthError::AllOffline)
        );
        assert_eq!(
            SynthSpec {
                arch: Arch::S390,
                irqs: 298,
                ..base
            }
            .build()
            .err(),
            Some(SynthError::TooManyIrqs {
                irqs: 298,
                available: 297
            })
        );
    }

    #[test]
    fn stat_is_consistent() {
        for arch in Arch::ALL {
            let t = spec(arch, Era::E3).build().expect("builds");
            assert_eq!(t.stat.intr.len(), 300);
            assert_eq!(
                t.stat.cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(),
                vec![Some(0), Some(1), Some(3), Some(4), Some(5)]
            );
            for i in &t.irqs {
                assert_eq!(
                    t.stat.intr[i.irq as usize],
                    i.counts.iter().sum::<u64>() & 0xffff_ffff
                );
            }
            let numbered: u64 = t.irqs.iter().flat_map(|i| &i.counts).sum();
            assert!(t.stat.intr_total >= numbered);
            assert_eq!(t.stat.softirq.len(), 10);
            assert_eq!(t.softirqs.cpus.len(), 6);
        }
    }

    #[test]
    fn rows_and_arch_rows() {
        let t = spec(Arch::Arm64, Era::E4).build().expect("builds");
        assert_eq!(
            t.interrupts
                .rows()
                .iter()
                .filter(|r| r.irq.is_some())
                .count(),
            50
        );
        assert!(t.interrupts.rows().iter().any(|r| r.label == "IPI0"));
        assert_eq!(
            t.interrupts.rows().last().map(|r| r.label.as_str()),
            Some("Err")
        );
        let s = spec(Arch::S390, Era::E3).build().expect("builds");
        assert_eq!(s.interrupts.rows()[0].label, "EXT");
        assert!(s
            .irqs
            .iter()
            .all(|i| i.irq >= 3 && !i.parts.actions.contains(", ")));
    }
}
