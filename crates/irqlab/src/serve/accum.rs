//! Monotonic sums for `--per-cpu sum` and `top=K`: a plain sum over the
//! CPU columns drops when a CPU goes offline (its column disappears) or a
//! counter wraps, which Prometheus would read as a reset and count the
//! whole sum again. Instead each row's sum grows by the per-CPU
//! differences the delta layer accepts: `delta::counter_delta` then
//! `delta::bound_rate` at `delta::MAX_RATE_PER_CPU`, the rule `top` and
//! `record` apply (irqlab-core's `delta/counter.rs`). A wrap adds its
//! modular difference; a step back (the `reset` gap of `show -i`), a
//! value no kernel counter can hold (above 2^32) or a jump implying an
//! impossible rate adds nothing, and the next sample counts from the new
//! value; a CPU that appears starts from its current count without a
//! jump. Sums saturate, so an exported sum never decreases.
//!
//! A single global value (x86's `ERR` and `MIS`, arm64's `Err`) is
//! summed alike at its row's width (`delta::width_delta`: modulo 2^32
//! for `atomic_t`, 64-bit for arm64's `unsigned long`), bounded at
//! `MAX_RATE_PER_CPU` × `MAX_CPUS` as the delta layer bounds it, and
//! compared with its previous value whatever CPU column it sits in.
//!
//! Rows are keyed by their label set, so an IRQ number reused with another
//! chip or action is a new series. Pure: no I/O.

use irqlab_core::delta::{
    bound_rate, counter_delta, wide_counter_delta, width_delta, Cell, MAX_CPUS, MAX_RATE_PER_CPU,
};
use irqlab_core::Width;
use std::collections::HashMap;

/// What a family's per-CPU values are, and so how two of them differ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kind {
    /// The kernel's 32-bit per-CPU event counters (`/proc/interrupts`,
    /// `/proc/softirqs`).
    #[default]
    Events,
    /// One global value of `/proc/interrupts` (x86's `ERR` and `MIS`,
    /// arm64's `Err`) of the kernel type `Width`; it may count events of
    /// every CPU.
    Single(Width),
    /// A thread's cumulative CPU time in ns (64-bit): one thread runs on
    /// one CPU at a time, so it grows by at most a second per second;
    /// twice that allows for the spread of one sample's reads.
    ThreadNs,
    /// A CPU's time in `/proc/stat` clock ticks (64-bit), bounded like
    /// [`Kind::ThreadNs`] at the highest tick rate Linux is built with
    /// (`CONFIG_HZ` 1000, USER_HZ at most that).
    Ticks,
}

/// Fastest growth of [`Kind::Ticks`], ticks per second (twice 1000).
const TICKS_PER_S: f64 = 2000.0;

/// Fastest growth of [`Kind::ThreadNs`], ns per second.
const THREAD_NS_PER_S: f64 = 2e9;

impl Kind {
    /// The difference from `old` to `new` over `elapsed_s` seconds, as the
    /// delta layer sees it.
    fn delta(self, old: u64, new: u64, elapsed_s: f64) -> Cell {
        match self {
            Kind::Events => bound_rate(counter_delta(old, new), elapsed_s, MAX_RATE_PER_CPU),
            Kind::Single(w) => bound_rate(
                width_delta(w, old, new),
                elapsed_s,
                MAX_RATE_PER_CPU * MAX_CPUS,
            ),
            Kind::ThreadNs => bound_rate(wide_counter_delta(old, new), elapsed_s, THREAD_NS_PER_S),
            Kind::Ticks => bound_rate(wide_counter_delta(old, new), elapsed_s, TICKS_PER_S),
        }
    }

    /// What a sum absorbs of the step from `old` to `new`: the difference
    /// the delta layer accepts, nothing for a gap (a reset, an impossible
    /// value or rate).
    fn increment(self, old: u64, new: u64, elapsed_s: f64) -> u64 {
        match self.delta(old, new, elapsed_s) {
            Cell::Count(d) => d,
            Cell::Gap(_) => 0,
        }
    }

    /// A count a first sight may sum: one the kernel can print.
    fn plausible(self, v: u64) -> u64 {
        match self {
            Kind::Events | Kind::Single(Width::U32) if v > u64::from(u32::MAX) => 0,
            _ => v,
        }
    }
}

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
    kind: Kind,
    rows: HashMap<String, RowSum>,
    generation: u64,
    /// CLOCK_MONOTONIC ns of the current and the previous sample.
    mono_ns: Option<u64>,
    elapsed_s: f64,
}

impl Sums {
    /// Sums of a family of `kind` values.
    pub fn new(kind: Kind) -> Sums {
        Sums {
            kind,
            ..Sums::default()
        }
    }

    /// Start a new sample taken at `mono_ns` (CLOCK_MONOTONIC ns): rows
    /// not updated until [`Sums::finish`] are dropped.
    pub fn begin(&mut self, mono_ns: u64) {
        self.generation = self.generation.wrapping_add(1);
        // Without a previous sample (or with a clock that went back) no
        // rate is bounded, as in the delta layer.
        self.elapsed_s = self
            .mono_ns
            .map_or(0.0, |prev| mono_ns.saturating_sub(prev) as f64 / 1e9);
        self.mono_ns = Some(mono_ns);
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
        self.update_as(self.kind, key, cpus, counts, shown)
    }

    /// [`Sums::update`] of a row whose values are of `kind` rather than
    /// the family's ([`Kind::Single`]: an interrupts family's single
    /// global values).
    pub fn update_as(
        &mut self,
        kind: Kind,
        key: &str,
        cpus: &[u32],
        counts: &[u64],
        shown: &[bool],
    ) -> (u64, u64) {
        let (generation, elapsed_s) = (self.generation, self.elapsed_s);
        let row = match self.rows.get_mut(key) {
            Some(r) => r,
            None => self
                .rows
                .entry(key.to_string())
                .or_insert_with(|| first(kind, cpus, counts, shown)),
        };
        if row.generation != 0 && row.generation != generation {
            step(kind, elapsed_s, row, cpus, counts, shown);
        }
        row.generation = generation;
        row.cpus.clear();
        row.cpus.extend_from_slice(cpus);
        row.counts.clear();
        row.counts.extend_from_slice(counts);
        (row.sum, row.other)
    }

    /// (sum, other) of the row `key` as the last [`Sums::update`] left
    /// them; `None` for a row not updated since it was last dropped.
    pub fn current(&self, key: &str) -> Option<(u64, u64)> {
        self.rows.get(key).map(|r| (r.sum, r.other))
    }
}

/// A row seen for the first time: its sums are its current counts (those
/// the kernel can print).
fn first(kind: Kind, cpus: &[u32], counts: &[u64], shown: &[bool]) -> RowSum {
    let sum = counts
        .iter()
        .fold(0u64, |a, &c| a.saturating_add(kind.plausible(c)));
    let other = counts
        .iter()
        .zip(shown.iter().chain(std::iter::repeat(&false)))
        .filter(|(_, &s)| !s)
        .fold(0u64, |a, (&c, _)| a.saturating_add(kind.plausible(c)));
    RowSum {
        cpus: cpus.to_vec(),
        counts: counts.to_vec(),
        sum,
        other,
        generation: 0,
    }
}

/// Add the differences since the row's previous counts.
fn step(
    kind: Kind,
    elapsed_s: f64,
    row: &mut RowSum,
    cpus: &[u32],
    counts: &[u64],
    shown: &[bool],
) {
    // A global value has no CPU: its one count is its previous one
    // whichever column (one online CPU's, or none) it sits in.
    let same = row.cpus.as_slice() == cpus || matches!(kind, Kind::Single(_));
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
        let d = kind.increment(old, new, elapsed_s);
        row.sum = row.sum.saturating_add(d);
        if !shown.get(i).copied().unwrap_or(false) {
            row.other = row.other.saturating_add(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One sample a second.
    fn up(s: &mut Sums, cpus: &[u32], counts: &[u64]) -> u64 {
        let t = s.mono_ns.map_or(1_000_000_000, |t| t + 1_000_000_000);
        s.begin(t);
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
        // CPU 0 wraps at 2^32 (one step per second stays below the bound).
        let near = (1u64 << 32) - 2;
        let mut c0 = 13u64;
        let mut sum = 70u64;
        while c0 < near {
            let next = (c0 + 90_000_000).min(near);
            sum += next - c0;
            c0 = next;
            assert_eq!(up(&mut s, &[0, 1, 2], &[c0, 22, 35]), sum);
        }
        assert_eq!(up(&mut s, &[0, 1, 2], &[3, 22, 35]), sum + 5);
        // A reset (descriptor freed and reused): nothing for that step,
        // then counted on from the new values.
        assert_eq!(up(&mut s, &[0, 1, 2], &[1, 2, 35]), sum + 5);
        assert_eq!(up(&mut s, &[0, 1, 2], &[4, 2, 35]), sum + 5 + 3);
    }

    #[test]
    fn a_step_back_adds_nothing() {
        // 148453 -> 148353 (a bump of -100): the sum showed 296806.
        let mut s = Sums::default();
        assert_eq!(up(&mut s, &[0], &[148_453]), 148_453);
        assert_eq!(up(&mut s, &[0], &[148_353]), 148_453);
        assert_eq!(up(&mut s, &[0], &[148_360]), 148_460);
    }

    #[test]
    fn sum_never_decreases_on_a_value_no_counter_can_hold() {
        // A CPU's count set to 2^64-1: the sum dropped by 1 each sample.
        let mut s = Sums::default();
        assert_eq!(up(&mut s, &[0, 1], &[100, 200]), 300);
        let mut last = 300;
        for i in 0..5 {
            let v = up(&mut s, &[0, 1], &[u64::MAX, 201 + i]);
            assert!(v >= last, "sum went back from {last} to {v}");
            last = v;
        }
        assert_eq!(last, 305, "only CPU 1's increments");
        // Back to a real count: counted from there, no jump.
        assert_eq!(up(&mut s, &[0, 1], &[110, 206]), 306);
        assert_eq!(up(&mut s, &[0, 1], &[111, 206]), 307);
        // Seen first with such a value: it is not summed either.
        let mut s = Sums::default();
        assert_eq!(up(&mut s, &[0, 1], &[u64::MAX, 7]), 7);
    }

    #[test]
    fn sum_does_not_absorb_a_2_pow_40_jump_on_loc() {
        // 2^40 added to LOC's count: the sum grew by ~1.1e12 per sample.
        let mut s = Sums::default();
        let base = 1_000_000u64;
        assert_eq!(up(&mut s, &[0, 1], &[base, base]), 2 * base);
        let mut last = 2 * base;
        for i in 1..=4 {
            let v = up(
                &mut s,
                &[0, 1],
                &[base + (1 << 40) + 1000 * i, base + 1000 * i],
            );
            assert!(v >= last && v - last <= 1000, "{last} -> {v}");
            last = v;
        }
    }

    #[test]
    fn sum_does_not_absorb_an_impossible_rate() {
        // 5 -> 2^32-1 in 1 s (4.29e9/s, beyond delta::MAX_RATE_PER_CPU):
        // top calls it impossible_rate; the sum grew by 4.29e9.
        let mut s = Sums::default();
        assert_eq!(up(&mut s, &[0, 1], &[5, 7]), 12);
        assert_eq!(up(&mut s, &[0, 1], &[u64::from(u32::MAX), 8]), 13);
        // the next real increments count from the new value (a wrap here)
        assert_eq!(up(&mut s, &[0, 1], &[4, 9]), 13 + 5 + 1);
        // the same jump in 60 s is a possible rate: absorbed
        let mut s = Sums::default();
        s.begin(1_000_000_000);
        s.update("k", &[0], &[5], &[false]);
        s.finish();
        s.begin(61_000_000_000);
        let (sum, _) = s.update("k", &[0], &[u64::from(u32::MAX)], &[false]);
        assert_eq!(sum, u64::from(u32::MAX));
    }

    #[test]
    fn a_single_value_is_summed_at_its_width_and_bound() {
        let max = u64::from(u32::MAX);
        // 32-bit (x86's ERR): a wrap adds its modular difference; a value
        // above 2^32 - 1 adds nothing, nor does the step from it.
        let mut s = Sums::new(Kind::Single(Width::U32));
        assert_eq!(up(&mut s, &[0], &[max - 5]), max - 5);
        assert_eq!(up(&mut s, &[0], &[5]), max + 6);
        assert_eq!(up(&mut s, &[0], &[1 << 32]), max + 6);
        assert_eq!(up(&mut s, &[0], &[7]), max + 6);
        assert_eq!(up(&mut s, &[0], &[9]), max + 8);
        // 64-bit (arm64's Err): beyond 2^32 counted, a decrease a reset.
        let mut s = Sums::new(Kind::Single(Width::U64));
        assert_eq!(up(&mut s, &[0], &[max - 5]), max - 5);
        assert_eq!(up(&mut s, &[0], &[max + 5]), max + 5);
        assert_eq!(up(&mut s, &[0], &[5]), max + 5);
        assert_eq!(up(&mut s, &[0], &[15]), max + 15);
        // Bounded at 10^8 per CPU per second times 8192 CPUs: 10^9 in a
        // second is a possible global rate, 2^40 is not.
        let mut s = Sums::new(Kind::Single(Width::U64));
        assert_eq!(up(&mut s, &[0], &[1]), 1);
        assert_eq!(up(&mut s, &[0], &[1 + 1_000_000_000]), 1 + 1_000_000_000);
        assert_eq!(up(&mut s, &[0], &[1 << 40]), 1 + 1_000_000_000);
        // No CPU's: the value in another column (one online CPU, CPU 3)
        // is compared with the one before.
        assert_eq!(up(&mut s, &[3], &[(1 << 40) + 4]), 1 + 1_000_000_004);
    }

    #[test]
    fn thread_time_sums_in_ns_beyond_2_pow_32() {
        let mut s = Sums::new(Kind::ThreadNs);
        let g = 1_000_000_000u64;
        assert_eq!(up(&mut s, &[0, 1], &[10 * g, 20 * g]), 30 * g);
        assert_eq!(
            up(&mut s, &[0, 1], &[10 * g + g / 2, 20 * g]),
            30 * g + g / 2
        );
        // more CPU time than wall time: not a measurement
        assert_eq!(up(&mut s, &[0, 1], &[100 * g, 20 * g]), 30 * g + g / 2);
    }

    #[test]
    fn other_counts_only_hidden_columns_and_rows_expire() {
        let mut s = Sums::default();
        s.begin(1_000_000_000);
        assert_eq!(s.update("k", &[0, 1], &[5, 7], &[true, false]), (12, 7));
        s.finish();
        s.begin(2_000_000_000);
        assert_eq!(s.update("k", &[0, 1], &[6, 9], &[false, true]), (15, 8));
        s.finish();
        s.begin(3_000_000_000);
        s.finish();
        s.begin(4_000_000_000);
        assert_eq!(s.update("k", &[0, 1], &[6, 9], &[false, false]), (15, 15));
    }
}
