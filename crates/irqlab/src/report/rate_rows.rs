//! `show --interval`'s interrupt rows one at a time, straight from two
//! snapshots: each line is built, handed to the caller (who writes it) and
//! dropped, so a 1152-CPU machine never holds a million deltas and rates
//! at once. The same lines, in the same order, as the interrupts section
//! of [`rates`](fn@super::rates) with per-CPU deltas (tested). Builds
//! lines only: selection (`--threshold`), affinity and output are the
//! caller's.

use super::rates::RateCols;
use super::{pick, IrqLine};
use crate::filter::Filter;
use irqlab_core::delta;
use irqlab_core::{Interrupts, Snapshot};

/// The interrupt rows of the rates report over `old` → `new`.
pub struct RateRows<'a> {
    o: &'a Interrupts,
    n: &'a Interrupts,
    filter: &'a Filter,
    secs: f64,
    rc: RateCols,
}

impl<'a> RateRows<'a> {
    /// `None` when either snapshot has no interrupts (the section is
    /// `null`).
    pub fn new(old: &'a Snapshot, new: &'a Snapshot, filter: &'a Filter) -> Option<Self> {
        let (Some(o), Some(n)) = (&old.interrupts, &new.interrupts) else {
            return None;
        };
        Some(RateRows {
            o,
            n,
            filter,
            secs: new.elapsed_since(old),
            rc: RateCols::new(o, n, filter),
        })
    }

    /// The ids of the kept CPU columns.
    pub fn cpus(&self) -> Vec<u32> {
        pick(&self.rc.union, &self.rc.cols)
    }

    /// Hands each kept row's line (with per-CPU deltas) to `each`, in file
    /// order, stopping at its first error; returns the labels of the rows
    /// that went away.
    pub fn for_each<E>(
        &self,
        mut each: impl FnMut(IrqLine) -> Result<(), E>,
    ) -> Result<Vec<String>, E> {
        let mut failed = None;
        let mut picked = Vec::new();
        let (_, gone) = delta::interrupts_delta_each(self.o, self.n, self.secs, |r, _, cells| {
            if failed.is_some() || !self.filter.keep_irq_row(r) {
                return;
            }
            let line = self.rc.line(r, cells, self.secs, true, &mut picked);
            if let Err(e) = each(line) {
                failed = Some(e);
            }
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(gone.into_iter().map(|g| g.label).collect()),
        }
    }
}
