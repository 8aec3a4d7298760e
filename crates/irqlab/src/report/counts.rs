//! Counts (snapshot) sections: interrupt rows one at a time
//! ([`IrqCounts`], also `show`'s streamed read) and softirqs. No rates
//! here: two samples are `rates`'.

use super::{line_meta, pick, IrqLine, IrqSection, SoftirqLine, SoftirqSection};
use crate::filter::Filter;
use irqlab_core::softirqs::Softirqs;
use irqlab_core::{Interrupts, IrqRow, Shape};

pub(super) fn irq_counts(m: &mut Interrupts, f: &Filter) -> IrqSection {
    let mut b = IrqCounts::new(&m.cpus, f);
    for r in m.rows_mut() {
        b.push(r);
    }
    b.finish()
}

/// The interrupts section of a counts report, built one row at a time:
/// [`counts`](fn@super::counts) over a parsed file, and `show`, which streams
/// `/proc/interrupts` through one scratch row so that rows the filter
/// drops are never copied anywhere.
pub struct IrqCounts<'f> {
    f: &'f Filter,
    cols: Vec<usize>,
    all: bool,
    sec: IrqSection,
}

impl<'f> IrqCounts<'f> {
    /// A section over the header's CPU ids `cpus`.
    pub fn new(cpus: &[u32], f: &'f Filter) -> Self {
        let cols = f.columns(cpus);
        IrqCounts {
            f,
            all: cols.len() == cpus.len(),
            sec: IrqSection {
                cpus: pick(cpus, &cols),
                rows: Vec::new(),
                gone: Vec::new(),
            },
            cols,
        }
    }

    /// Add `r` if the filter keeps it (its counts are moved out when no
    /// CPU filter applies); true when kept.
    pub fn push(&mut self, r: &mut IrqRow) -> bool {
        match self.line(r) {
            Some(l) => {
                self.sec.rows.push(l);
                true
            }
            None => false,
        }
    }

    /// The CPU ids of the kept columns.
    pub fn cpus(&self) -> &[u32] {
        &self.sec.cpus
    }

    /// Give `counts` back to the scratch row `r` when [`IrqCounts::line`]
    /// moved `r`'s buffer out (no CPU column dropped), so that the next
    /// parse into `r` reuses it.
    pub fn give_back(&self, counts: Vec<u64>, r: &mut IrqRow) {
        if self.all {
            r.counts = irqlab_core::interrupts::Counts::from_vec(counts);
        }
    }

    /// Replace a per-CPU line's counts by its busiest CPU (the first of
    /// the highest positive counts, [`IrqLine::busiest_count`]) and give
    /// the count buffer back to `r`: what a table too wide for CPU columns
    /// prints.
    pub fn keep_busiest_count(&self, l: &mut IrqLine, r: &mut IrqRow) {
        if l.shape != Shape::PerCpu {
            return;
        }
        let Some(counts) = l.counts.take() else {
            return;
        };
        l.busiest_count = busiest_count(&self.sec.cpus, &counts);
        self.give_back(counts, r);
    }

    /// The line of `r` if the filter keeps it, without adding it (its
    /// counts are moved out when no CPU filter applies).
    pub fn line(&self, r: &mut IrqRow) -> Option<IrqLine> {
        if !self.f.keep_irq_row(r) {
            return None;
        }
        let mut l = line_meta(r);
        match r.shape {
            Shape::PerCpu => {
                let c = if self.all {
                    std::mem::take(&mut r.counts).into_vec()
                } else {
                    pick(&r.counts, &self.cols)
                };
                // wrapping, as `IrqRow::total` (and show's streamed JSON)
                l.total = c.iter().fold(0u64, |a, &v| a.wrapping_add(v));
                l.counts = Some(c);
            }
            _ => l.total = r.total(),
        }
        Some(l)
    }

    /// The section.
    pub fn finish(self) -> IrqSection {
        self.sec
    }
}

/// `busiest_cpu` of per-CPU counts (`cpus[i]`'s count is `counts[i]`):
/// the highest count first (a loop the compiler vectorises), then the
/// first CPU that has it — a row of a 1152-CPU table in a tenth of the
/// instructions of comparing CPU by CPU.
fn busiest_count(cpus: &[u32], counts: &[u64]) -> Option<(u32, u64)> {
    let n = cpus.len().min(counts.len());
    let (cpus, counts) = (cpus.get(..n)?, counts.get(..n)?);
    let most = counts.iter().copied().max().filter(|&m| m > 0)?;
    let i = counts.iter().position(|&c| c == most)?;
    Some((*cpus.get(i)?, most))
}

pub(super) fn softirq_counts(m: &Softirqs, f: &Filter) -> SoftirqSection {
    let cols = f.columns(&m.cpus);
    let rows = m
        .rows
        .iter()
        .map(|r| {
            let c = pick(&r.counts, &cols);
            SoftirqLine {
                name: r.name.clone(),
                // wrapping, as the interrupt rows' totals: a count above
                // the kernel's range (noted) must not end the run
                total: Some(c.iter().fold(0u64, |a, &v| a.wrapping_add(v))),
                counts: c.into_iter().map(Some).collect(),
                rates: None,
                total_rate: None,
            }
        })
        .collect();
    SoftirqSection {
        cpus: pick(&m.cpus, &cols),
        rows,
        gone: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::busiest_cpu;
    use super::*;

    #[test]
    fn busiest_count_is_busiest_cpu() {
        let mut rng = irqlab_core::rng::Rng::new(5);
        for case in 0..3000 {
            let n = (rng.next_u64() % 40) as usize;
            let cpus: Vec<u32> = (0..n as u32).map(|c| c * 3 + 1).collect();
            let top = [1, 2, 5, u64::MAX][case % 4];
            let counts: Vec<u64> = (0..n + case % 2).map(|_| rng.next_u64() % top).collect();
            let want = busiest_cpu(cpus.iter().copied().zip(counts.iter().copied()));
            assert_eq!(busiest_count(&cpus, &counts), want, "{cpus:?} {counts:?}");
        }
    }
}
