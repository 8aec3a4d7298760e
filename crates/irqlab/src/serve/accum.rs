//! Monotonic sums for `--per-cpu sum` and `top=K`: a plain sum over the
//! CPU columns drops when a CPU goes offline (its column disappears) or a
//! counter wraps, which Prometheus would read as a reset and count the
//! whole sum again. Instead each row's sum grows by the per-CPU
//! differences from `delta::counter_delta` (the one place counter
//! arithmetic lives): a wrap adds its modular difference, a reset adds the
//! new count (counted from zero, as Prometheus does), a CPU that appears
//! starts from its current count without a jump.
//!
//! Rows are keyed by their label set, so an IRQ number reused with another
//! chip or action is a new series. Pure: no I/O.

use irqlab_core::delta::{counter_delta, Cell};
use std::collections::HashMap;

#[derive(Debug, Default)]
struct RowSum {
    cpus: Vec<u32>,
    counts: Vec<u64>,
    /// Monotonic sum over every CPU.
    sum: u64,
    /// Monotonic sum over the CPUs not shown on their own (`top=K`).
    other: u64,
    generation: u64,
}

/// The monotonic sums of one metric family.
#[derive(Debug, Default)]
pub struct Sums {
    rows: HashMap<String, RowSum>,
    generation: u64,
}

impl Sums {
    /// Start a new sample: rows not updated until [`Sums::finish`] are dropped.
    pub fn begin(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// Forget rows that were not seen since [`Sums::begin`].
    pub fn finish(&mut self) {
        let g = self.generation;
        self.rows.retain(|_, r| r.generation == g);
    }

    /// Update the row `key` with counts per CPU id (`cpus[i]` ↔ `counts[i]`,
    /// ascending ids); `shown[i]` marks columns exposed on their own.
    /// Returns (sum, other).
    pub fn update(
        &mut self,
        key: &str,
        cpus: &[u32],
        counts: &[u64],
        shown: &[bool],
    ) -> (u64, u64) {
        let generation = self.generation;
        let row = match self.rows.get_mut(key) {
            Some(r) => r,
            None => self
                .rows
                .entry(key.to_string())
                .or_insert_with(|| first(cpus, counts, shown)),
        };
        if row.generation != 0 && row.generation != generation {
            step(row, cpus, counts, shown);
        }
        row.generation = generation;
        row.cpus.clear();
        row.cpus.extend_from_slice(cpus);
        row.counts.clear();
        row.counts.extend_from_slice(counts);
        (row.sum, row.other)
    }
}

/// A row seen for the first time: its sums are its current counts.
fn first(cpus: &[u32], counts: &[u64], shown: &[bool]) -> RowSum {
    let sum = counts.iter().fold(0u64, |a, &c| a.wrapping_add(c));
    let other = counts
        .iter()
        .zip(shown.iter().chain(std::iter::repeat(&false)))
        .filter(|(_, &s)| !s)
        .fold(0u64, |a, (&c, _)| a.wrapping_add(c));
    RowSum {
        cpus: cpus.to_vec(),
        counts: counts.to_vec(),
        sum,
        other,
        generation: 0,
    }
}

/// Add the differences since the row's previous counts.
fn step(row: &mut RowSum, cpus: &[u32], counts: &[u64], shown: &[bool]) {
    let same = row.cpus.as_slice() == cpus;
    for (i, (&cpu, &new)) in cpus.iter().zip(counts).enumerate() {
        let old = if same {
            row.counts.get(i).copied()
        } else {
            row.cpus
                .binary_search(&cpu)
                .ok()
                .and_then(|j| row.counts.get(j).copied())
        };
        let Some(old) = old else {
            continue; // a CPU that appeared: its count is the new baseline
        };
        let d = match counter_delta(old, new) {
            Cell::Count(d) => d,
            Cell::Gap(_) => new,
        };
        row.sum = row.sum.wrapping_add(d);
        if !shown.get(i).copied().unwrap_or(false) {
            row.other = row.other.wrapping_add(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(s: &mut Sums, cpus: &[u32], counts: &[u64]) -> u64 {
        s.begin();
        let shown = vec![false; cpus.len()];
        let (sum, other) = s.update("k", cpus, counts, &shown);
        assert_eq!(sum, other);
        s.finish();
        sum
    }

    #[test]
    fn sum_survives_hotplug_wrap_and_reset() {
        let mut s = Sums::default();
        assert_eq!(up(&mut s, &[0, 1, 2], &[10, 20, 30]), 60);
        assert_eq!(up(&mut s, &[0, 1, 2], &[11, 22, 33]), 66);
        // CPU 1 goes offline: no drop.
        assert_eq!(up(&mut s, &[0, 2], &[12, 34]), 68);
        // CPU 1 back with its old count: no jump.
        assert_eq!(up(&mut s, &[0, 1, 2], &[13, 22, 35]), 70);
        // CPU 0 wraps at 2^32.
        let near = (1u64 << 32) - 2;
        assert_eq!(up(&mut s, &[0, 1, 2], &[near, 22, 35]), 70 + near - 13);
        let before = 70 + near - 13;
        assert_eq!(up(&mut s, &[0, 1, 2], &[3, 22, 35]), before + 5);
        // A reset (descriptor freed and reused): counted from zero.
        assert_eq!(up(&mut s, &[0, 1, 2], &[1, 2, 35]), before + 5 + 1 + 2);
    }

    #[test]
    fn other_counts_only_hidden_columns_and_rows_expire() {
        let mut s = Sums::default();
        s.begin();
        assert_eq!(s.update("k", &[0, 1], &[5, 7], &[true, false]), (12, 7));
        s.finish();
        s.begin();
        assert_eq!(s.update("k", &[0, 1], &[6, 9], &[false, true]), (15, 8));
        s.finish();
        s.begin();
        s.finish();
        s.begin();
        assert_eq!(s.update("k", &[0, 1], &[6, 9], &[false, false]), (15, 15));
    }
}
