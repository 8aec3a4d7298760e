//! How large a synthesized tree is, from its [`SynthSpec`] alone: without
//! generating it (a tree of 4 096 CPUs × 8 000 IRQs is gigabytes, built
//! in memory before it is written), so that the CLI can say so and check
//! the free space first.
//!
//! Pure: the files' lengths are computed from the parameters, the
//! formats' fixed widths and the mean lengths of the generated values
//! (counts, chip and action names), measured over the generator's output.
//! The estimate is within 15 % of the real length of every tree the tests
//! try (`synth::estimate::tests`: every arch and era), within 5 % from 64
//! CPUs up: closer the larger the tree.

use super::{arch_row_specs, ArchRowKind, SynthError, SynthSpec};
use crate::render::{prec, Arch, Era};

/// Files of about the same length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileGroup {
    pub files: u64,
    /// Bytes of each file (a mean).
    pub bytes: u64,
}

/// The estimated size of a synthesized tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeEstimate {
    /// Every file of the tree, in groups of about the same length.
    pub groups: Vec<FileGroup>,
    /// Directories the tree has.
    pub dirs: u64,
}

impl SizeEstimate {
    /// Bytes of all files.
    pub fn bytes(&self) -> u64 {
        self.groups
            .iter()
            .map(|g| g.files.saturating_mul(g.bytes))
            .fold(0, u64::saturating_add)
    }

    /// Number of files.
    pub fn files(&self) -> u64 {
        self.groups.iter().map(|g| g.files).sum()
    }

    /// Space taken on a file system of `block`-byte blocks: each file's
    /// length rounded up to whole blocks (an empty file takes none), and
    /// one block per directory.
    pub fn disk_bytes(&self, block: u64) -> u64 {
        let block = block.max(1);
        let files = self
            .groups
            .iter()
            .map(|g| g.files.saturating_mul(g.bytes.div_ceil(block) * block));
        files
            .fold(0, u64::saturating_add)
            .saturating_add(self.dirs.saturating_mul(block))
    }
}

/// Mean text of a numbered `/proc/interrupts` row after its counts (chip,
/// hwirq, trigger, flow, actions).
const ROW_DESC: u64 = 44;
/// Mean digits a numbered row's counts add beyond one `0` per CPU, in
/// `per_cpu_count` (the busy CPU's count and a few others).
const COUNT_DIGITS: u64 = 12;
/// Mean bytes of the sysfs files other than `per_cpu_count` of one IRQ
/// (`chip_name`, `hwirq`, `type`, `wakeup`, `name`, `actions`).
const SYS_SMALL: u64 = 52;
/// Mean length of a `/proc/stat` `cpuN` line, and of an `intr` value of
/// a numbered IRQ (`0` for the numbers no IRQ has).
const STAT_CPU_LINE: u64 = 62;
const STAT_IRQ_VALUE: u64 = 8;
/// The `/proc/stat` lines that do not grow with the machine.
const STAT_FIXED: u64 = 230;

impl SynthSpec {
    /// The size of the tree [`SynthSpec::build`] would make, estimated
    /// from the spec alone (no generation); a spec it refuses is refused
    /// here with the same error.
    pub fn estimate(&self) -> Result<SizeEstimate, SynthError> {
        let online = self.validate()?.len() as u64;
        let (cpus, irqs) = (u64::from(self.cpus), u64::from(self.irqs));
        // IRQs with actions have a /proc/irq/N directory: E1 shows 3 % of
        // them freed.
        let with_actions = if self.era == Era::E1 && self.arch != Arch::S390 {
            irqs - irqs * 3 / 100
        } else {
            irqs
        };
        let cpu_digits = digits(cpus.saturating_sub(1));
        let one = |bytes| FileGroup { files: 1, bytes };
        let groups = vec![
            one(self.interrupts_bytes(online)),
            one(21 + 11 * cpus + 10 * (14 + 11 * cpus)),
            one(STAT_FIXED
                + (online + 1) * STAT_CPU_LINE
                + 2 * u64::from(self.nr_irqs)
                + irqs * STAT_IRQ_VALUE),
            // cpu/online, cpu/possible
            FileGroup {
                files: 2,
                bytes: 3 + 2 * cpu_digits,
            },
            FileGroup {
                files: irqs,
                bytes: 2 * cpus + COUNT_DIGITS,
            },
            FileGroup {
                files: 6 * irqs,
                bytes: SYS_SMALL / 6,
            },
            // smp_affinity: 32-bit hex groups of all CPUs
            FileGroup {
                files: with_actions,
                bytes: cpus.div_ceil(32) * 9,
            },
            // smp_affinity_list, effective_affinity_list, node
            FileGroup {
                files: with_actions,
                bytes: 3 + 2 * cpu_digits,
            },
            FileGroup {
                files: with_actions,
                bytes: 1 + cpu_digits,
            },
            FileGroup {
                files: with_actions,
                bytes: 2,
            },
        ];
        // proc, proc/irq, sys, sys/kernel, sys/kernel/irq,
        // sys/devices{,/system{,/cpu}}, and one per IRQ directory
        let dirs = 8 + irqs + with_actions;
        Ok(SizeEstimate { groups, dirs })
    }

    /// `/proc/interrupts`: the header, the numbered rows and the arch rows
    /// of this arch and era (each `11` bytes a CPU column).
    fn interrupts_bytes(&self, online: u64) -> u64 {
        let p = prec(self.era, self.nr_irqs) as u64;
        let cells = 11 * online;
        let header = p + 9 + cells;
        let numbered = u64::from(self.irqs) * (p + 2 + cells + ROW_DESC);
        let arch: u64 = arch_row_specs(self.arch, self.era)
            .iter()
            .filter(|s| s.common)
            .map(|s| {
                let counts = match s.kind {
                    ArchRowKind::PerCpu => cells,
                    ArchRowKind::Single => 11,
                    ArchRowKind::NoCounts => 0,
                };
                p + 4 + counts + s.desc.len() as u64
            })
            .sum();
        header + numbered + arch
    }
}

/// Decimal digits of `n`.
fn digits(n: u64) -> u64 {
    u64::from(n.checked_ilog10().unwrap_or(0)) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(cpus: u32, irqs: u32, nr_irqs: u32, arch: Arch, era: Era) -> SynthSpec {
        SynthSpec {
            cpus,
            irqs,
            nr_irqs,
            arch,
            era,
            offline: Vec::new(),
            seed: 7,
        }
    }

    /// (estimated, real) bytes and files of `s`.
    fn compare(s: &SynthSpec) -> ((u64, u64), (u64, u64)) {
        let est = s.estimate().unwrap();
        let files = s.build().unwrap().files();
        let real: u64 = files.iter().map(|(_, d)| d.len() as u64).sum();
        ((est.bytes(), real), (est.files(), files.len() as u64))
    }

    /// The estimate is within 15 % of the real length of small trees of
    /// every arch and era (within 5 % from 64 CPUs up, with offline CPUs
    /// and a large nr_irqs too), and its file count within 5 % (or the 4
    /// files of one IRQ's `/proc/irq/N`).
    #[test]
    fn estimates_are_near_the_real_size_of_small_trees() {
        let shapes = [
            (2, 4, 424, vec![]),
            (8, 40, 424, vec![3]),
            (64, 200, 424, vec![]),
            (300, 64, 10_000, vec![1, 7, 8, 9]),
        ];
        for arch in Arch::ALL {
            for era in Era::ALL {
                for (cpus, irqs, nr_irqs, offline) in &shapes {
                    let mut s = spec(*cpus, *irqs, *nr_irqs, arch, era);
                    s.offline = offline.clone();
                    let ((est, real), (est_files, real_files)) = compare(&s);
                    let off = (est as f64 / real as f64 - 1.0).abs();
                    let bound = if *cpus >= 64 { 0.05 } else { 0.15 };
                    assert!(
                        off <= bound,
                        "{arch:?} {era:?} {cpus}x{irqs}: estimated {est} bytes, real {real}"
                    );
                    // E1's freed IRQs are drawn: one more or fewer
                    // than 3 % moves 4 files
                    let files_off = est_files.abs_diff(real_files);
                    assert!(
                        files_off <= (real_files / 20).max(4),
                        "{arch:?} {era:?} {cpus}x{irqs}: estimated {est_files} files, real {real_files}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_refused_spec_is_refused_by_the_estimate_too() {
        let s = spec(0, 4, 424, Arch::X86, Era::E3);
        assert_eq!(s.estimate(), Err(SynthError::NoCpus));
    }

    #[test]
    fn disk_bytes_round_each_file_up_to_blocks() {
        let e = SizeEstimate {
            groups: vec![
                FileGroup { files: 3, bytes: 1 },
                FileGroup { files: 2, bytes: 0 },
                FileGroup {
                    files: 1,
                    bytes: 4097,
                },
            ],
            dirs: 2,
        };
        assert_eq!(e.bytes(), 3 + 4097);
        assert_eq!(e.files(), 6);
        assert_eq!(e.disk_bytes(4096), 3 * 4096 + 2 * 4096 + 2 * 4096);
    }
}
