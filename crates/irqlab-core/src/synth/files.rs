//! File contents of a synthesized tree: the three `/proc` stats files
//! (via `render`) and per-IRQ `/sys/kernel/irq/N/*` and `/proc/irq/N/*`
//! (docs/formats/irq-dirs.md), as `(relative path, bytes)` pairs.
//!
//! Must not touch the file system: the CLI writes what this returns.

use super::{SynthIrq, SynthTree};
use crate::paths;
use crate::render::{render_interrupts, render_softirqs, render_stat};
use std::fmt::Write as _;

impl SynthTree {
    /// `/proc/interrupts` text of this tree.
    pub fn interrupts_text(&self) -> String {
        let mut out = String::new();
        let s = &self.spec;
        render_interrupts(&self.interrupts, s.era, s.arch, s.nr_irqs, &mut out);
        out
    }

    /// The same machine one interval later (benchmarks of per-sample
    /// cost): one interrupt and softirq cell in `every` counts up by 1 to
    /// `max_step` (pseudo-random, deterministic), and every CPU spends 100
    /// more ticks in each state. `every` = 1 moves all cells (the worst
    /// case); 20 is closer to a real machine, where most IRQs are idle on
    /// most CPUs. A small `max_step` (11) repeats counts the way timer
    /// ticks do; a large one (10^5) makes nearly every count distinct.
    pub fn advanced(&self, every: usize, max_step: u64) -> SynthTree {
        let mut t = self.clone();
        let every = every.max(1);
        let max_step = max_step.max(1);
        let bump = |i: usize, counts: &mut [u64]| {
            for (j, c) in counts.iter_mut().enumerate() {
                let k = (i * 7 + j * 3) as u64;
                if k % every as u64 == 0 {
                    *c += k.wrapping_mul(2_654_435_761) % max_step + 1;
                }
            }
        };
        for (i, row) in t.interrupts.rows_mut().iter_mut().enumerate() {
            bump(i, &mut row.counts);
        }
        for (i, row) in t.softirqs.rows.iter_mut().enumerate() {
            bump(i, &mut row.counts);
        }
        let cpus = t.stat.cpus.len() as u64;
        t.stat
            .total
            .fields
            .iter_mut()
            .for_each(|f| *f += 100 * cpus);
        for cpu in &mut t.stat.cpus {
            cpu.fields.iter_mut().for_each(|f| *f += 100);
        }
        t
    }

    /// `proc/softirqs` and `proc/stat` texts of this tree.
    pub fn softirqs_and_stat_text(&self) -> (String, String) {
        let (mut soft, mut stat) = (String::new(), String::new());
        render_softirqs(&self.softirqs, &mut soft);
        render_stat(&self.stat, &mut stat);
        (soft, stat)
    }

    /// Every file of the tree as `(path relative to the root, contents)`:
    /// `proc/{interrupts,softirqs,stat}`, `sys/kernel/irq/N/*` for every
    /// descriptor and `proc/irq/N/*` for descriptors with actions.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut files = Vec::with_capacity(3 + self.irqs.len() * 11);
        files.push((
            paths::PROC_INTERRUPTS.to_string(),
            self.interrupts_text().into_bytes(),
        ));
        let (soft, stat) = self.softirqs_and_stat_text();
        files.push((paths::PROC_SOFTIRQS.to_string(), soft.into_bytes()));
        files.push((paths::PROC_STAT.to_string(), stat.into_bytes()));
        let online = crate::CpuList::from_cpus(self.online.iter().copied());
        let possible = crate::CpuList::from_cpus(0..self.spec.cpus);
        files.push((
            paths::CPU_ONLINE.to_string(),
            format!("{online}\n").into_bytes(),
        ));
        files.push((
            paths::CPU_POSSIBLE.to_string(),
            format!("{possible}\n").into_bytes(),
        ));
        for irq in &self.irqs {
            sys_files(irq, &mut files);
            if !irq.parts.actions.is_empty() {
                proc_files(irq, self.spec.cpus, &mut files);
            }
        }
        files
    }
}

/// A line, or an empty (0-byte) file when `s` is empty.
fn line_or_empty(s: &str) -> Vec<u8> {
    if s.is_empty() {
        Vec::new()
    } else {
        format!("{s}\n").into_bytes()
    }
}

fn sys_files(irq: &SynthIrq, files: &mut Vec<(String, Vec<u8>)>) {
    let dir = paths::sys_irq_dir(irq.irq);
    let mut counts = String::with_capacity(irq.counts.len() * 3);
    for (i, c) in irq.counts.iter().enumerate() {
        if i > 0 {
            counts.push(',');
        }
        let _ = write!(counts, "{c}");
    }
    counts.push('\n');
    let p = &irq.parts;
    let hwirq = p.hwirq.map(|h| h.to_string()).unwrap_or_default();
    let actions: Vec<&str> = p.actions().collect();
    let entries: [(&str, Vec<u8>); 7] = [
        ("per_cpu_count", counts.into_bytes()),
        ("chip_name", line_or_empty(&p.chip)),
        ("hwirq", line_or_empty(&hwirq)),
        (
            "type",
            if irq.level {
                b"level\n".to_vec()
            } else {
                b"edge\n".to_vec()
            },
        ),
        ("wakeup", b"disabled\n".to_vec()),
        ("name", line_or_empty(&p.flow)),
        ("actions", line_or_empty(&actions.join(","))),
    ];
    files.extend(
        entries
            .into_iter()
            .map(|(name, data)| (format!("{dir}/{name}"), data)),
    );
}

fn proc_files(irq: &SynthIrq, nr_cpu_ids: u32, files: &mut Vec<(String, Vec<u8>)>) {
    let dir = paths::proc_irq_dir(irq.irq);
    let entries = [
        (
            "smp_affinity",
            format!("{}\n", hex_mask(&irq.affinity, nr_cpu_ids)),
        ),
        (
            "smp_affinity_list",
            format!("{}\n", cpu_list(&irq.affinity)),
        ),
        ("effective_affinity_list", format!("{}\n", irq.effective)),
        ("node", format!("{}\n", irq.node)),
    ];
    files.extend(
        entries
            .into_iter()
            .map(|(name, data)| (format!("{dir}/{name}"), data.into_bytes())),
    );
}

/// `%*pbl`: sorted CPUs as ranges, `0,2-5`.
pub(crate) fn cpu_list(cpus: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while let Some(&start) = cpus.get(i) {
        let mut end = start;
        while cpus.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        let _ = if start == end {
            write!(out, "{start}")
        } else {
            write!(out, "{start}-{end}")
        };
        i += 1;
    }
    out
}

/// `%*pb` of `nbits`: 32-bit hex groups separated by `,`, most significant
/// first; the first group is only as wide as its bits need (`3`, `ff,ffffffff`).
pub(crate) fn hex_mask(cpus: &[u32], nbits: u32) -> String {
    let groups = nbits.div_ceil(32).max(1);
    let mut words = vec![0u32; groups as usize];
    for &c in cpus.iter().filter(|&&c| c < nbits) {
        if let Some(w) = words.get_mut((c / 32) as usize) {
            *w |= 1 << (c % 32);
        }
    }
    let first_bits = match nbits % 32 {
        0 => 32,
        r => r,
    };
    let mut out = String::new();
    for (k, w) in words.iter().enumerate().rev() {
        let width = if k + 1 == words.len() {
            first_bits.div_ceil(4) as usize
        } else {
            8
        };
        if !out.is_empty() {
            out.push(',');
        }
        let _ = write!(out, "{w:0width$x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list(&[0, 1]), "0-1");
        assert_eq!(cpu_list(&[0, 2, 3, 4, 5, 9]), "0,2-5,9");
        assert_eq!(cpu_list(&[7]), "7");
        assert_eq!(cpu_list(&[]), "");
    }

    #[test]
    fn advanced_moves_one_cell_in_every() {
        let spec = crate::synth::SynthSpec {
            cpus: 8,
            irqs: 40,
            nr_irqs: 424,
            arch: crate::render::Arch::X86,
            era: crate::render::Era::E3,
            offline: vec![3],
            seed: 2,
        };
        let t = spec.build().unwrap();
        let moved = |every: usize| {
            let a = t.advanced(every, 11);
            let cells = t.interrupts.rows().iter().zip(a.interrupts.rows());
            let (mut up, mut all) = (0, 0);
            for (o, n) in cells {
                assert_eq!((&o.label, o.counts.len()), (&n.label, n.counts.len()));
                for (x, y) in o.counts.iter().zip(&n.counts) {
                    assert!(y >= x && y - x <= 11);
                    up += usize::from(y > x);
                    all += 1;
                }
            }
            assert_eq!(a.stat.cpus[0].fields[0], t.stat.cpus[0].fields[0] + 100);
            (up, all)
        };
        let (up, all) = moved(1);
        assert_eq!(up, all);
        let (up, all) = moved(20);
        assert!(up * 20 >= all - 20 && up * 20 <= all + 20, "{up} of {all}");
        // the texts parse back to the advanced model's counts
        let a = t.advanced(3, 100_000);
        let parsed = crate::Interrupts::parse(a.interrupts_text().as_bytes()).unwrap();
        let counts = |m: &crate::Interrupts| {
            m.rows()
                .iter()
                .map(|r| r.counts.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(&parsed), counts(&a.interrupts));
    }

    #[test]
    fn hex_masks() {
        assert_eq!(hex_mask(&[0, 1], 2), "3");
        assert_eq!(hex_mask(&(0..40).collect::<Vec<_>>(), 40), "ff,ffffffff");
        assert_eq!(hex_mask(&[0], 64), "00000000,00000001");
        assert_eq!(hex_mask(&[4], 8), "10");
        assert_eq!(hex_mask(&[0], 5), "01");
    }
}
