//! Counter arithmetic: the only place two counts become a difference, and
//! the bounds that tell a real counter from an impossible one.
//!
//! Owns [`counter_delta`] (the kernel's 32-bit counters: every per-CPU
//! count, x86's `ERR` and `MIS`; modulo 2^32), [`wide_counter_delta`]
//! (64-bit values: arm64's `Err`, `unsigned long`), [`width_delta`] (the
//! one of the two a row's [`Width`] names) and [`bound_rate`], which turns
//! a difference implying a rate no interrupt source can reach into
//! [`Gap::ImpossibleRate`]. The bounds are documented in docs/limits.md.
//! [`unknown_count`]s stand for counters a replayed recording does not
//! know ([`Gap::MissingSamples`]).

use super::{Cell, Gap};
use crate::interrupts::Width;

/// Width of the kernel's per-CPU counters.
const WRAP: u64 = 1 << 32;

/// Fastest rate at which one counter of one CPU (an IRQ's per-CPU count, an
/// arch row's per-CPU count, a softirq vector's per-CPU count) can grow:
/// 10^8 per second, i.e. one event every 10 ns. Taking a hardware
/// interrupt (exception entry, handler, EOI, return) costs hundreds of
/// cycles, ≥ 100 ns on any CPU Linux runs on, so real counters stay at
/// least 10× below this; a softirq count grows once per handler run, which
/// costs as much. A difference implying more is not a measurement.
pub const MAX_RATE_PER_CPU: f64 = 1e8;

/// Most CPUs Linux is built for (x86 `MAXSMP`): bounds a single global
/// value (`ERR`, `MIS`, arm64 `Err`), which may count events of every CPU.
pub const MAX_CPUS: f64 = 8192.0;

/// Difference `new - old` of one of the kernel's 32-bit per-CPU counters.
///
/// A value above `u32::MAX` cannot come from the kernel (it prints these
/// as `%10u`): [`Gap::OutOfRange`], or an [`unknown_count`]'s difference
/// (a replayed recording's). Otherwise modulo 2^32; a decrease is
/// taken as a wrap only when the earlier value was in the upper half and
/// the modular difference is below 2^31 (a descriptor reset gives
/// [`Gap::Reset`] instead).
pub fn counter_delta(old: u64, new: u64) -> Cell {
    if old >= WRAP || new >= WRAP {
        return beyond_32_bits(old, new);
    }
    if new >= old {
        return Cell::Count(new - old);
    }
    let d = (new + WRAP) - old;
    if old >= WRAP / 2 && d < WRAP / 2 {
        return Cell::Count(d);
    }
    Cell::Gap(Gap::Reset)
}

/// [`counter_delta`] of counts not both in the 32-bit range: an
/// [`unknown_count`]'s difference, else [`Gap::OutOfRange`].
#[cold]
fn beyond_32_bits(old: u64, new: u64) -> Cell {
    unknown_delta(old, new).unwrap_or(Cell::Gap(Gap::OutOfRange))
}

/// The first of the counts that stand for a counter of unknown value
/// ([`unknown_count`]): 2^63, which no kernel counter reaches.
const UNKNOWN_FROM: u64 = 1 << 63;

/// How many counts from [`UNKNOWN_FROM`] on stand for unknown values.
const UNKNOWN_SPAN: u64 = 1 << 32;

/// The count that stands for a counter whose value is not known since
/// the `n`th run of missing samples (modulo 2^32): a replayed recording
/// lacks samples and the counter was not recorded again since
/// (crates/irqlab/src/record/reader.rs, docs/limits.md). From it to the
/// same count the difference is 0: the counter was not recorded as
/// changed in between, and no sample is missing in between (that would
/// be a later run, another `n`), so it did not change. Any other
/// difference to or from it is [`Gap::MissingSamples`]. The band also
/// rules live files: no kernel counter reaches it.
pub fn unknown_count(n: u64) -> u64 {
    UNKNOWN_FROM + n % UNKNOWN_SPAN
}

/// Whether `v` is an [`unknown_count`].
fn is_unknown(v: u64) -> bool {
    v.wrapping_sub(UNKNOWN_FROM) < UNKNOWN_SPAN
}

/// The difference when `old` or `new` is an [`unknown_count`] (`None`
/// when neither is).
fn unknown_delta(old: u64, new: u64) -> Option<Cell> {
    if (old | new) < UNKNOWN_FROM || !(is_unknown(old) || is_unknown(new)) {
        return None;
    }
    Some(match old == new {
        true => Cell::Count(0),
        false => Cell::Gap(Gap::MissingSamples),
    })
}

/// Difference of a 64-bit value (arm64's `Err:`, CPU times): plain
/// difference, a decrease is [`Gap::Reset`]; with an [`unknown_count`]
/// see there.
pub fn wide_counter_delta(old: u64, new: u64) -> Cell {
    if let Some(c) = unknown_delta(old, new) {
        return c;
    }
    if new >= old {
        Cell::Count(new - old)
    } else {
        Cell::Gap(Gap::Reset)
    }
}

/// Difference of two counts of a row of the kernel type `width`:
/// [`counter_delta`] for [`Width::U32`], [`wide_counter_delta`] for
/// [`Width::U64`].
#[inline]
pub fn width_delta(width: Width, old: u64, new: u64) -> Cell {
    match width {
        Width::U32 => counter_delta(old, new),
        Width::U64 => wide_counter_delta(old, new),
    }
}

/// `cell` unless its count over `elapsed_s` seconds exceeds `max_rate`
/// per second, then [`Gap::ImpossibleRate`]. An elapsed time that is not
/// positive and finite (a delta without a clock) checks nothing.
pub fn bound_rate(cell: Cell, elapsed_s: f64, max_rate: f64) -> Cell {
    match cell {
        Cell::Count(c) if elapsed_s > 0.0 && elapsed_s.is_finite() => {
            if c as f64 > max_rate * elapsed_s {
                Cell::Gap(Gap::ImpossibleRate)
            } else {
                cell
            }
        }
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_modulo_2_32_and_refuses_out_of_range_values() {
        assert_eq!(counter_delta(4294967290, 12), Cell::Count(18));
        assert_eq!(counter_delta(5, 7), Cell::Count(2));
        assert_eq!(counter_delta(1000, 5), Cell::Gap(Gap::Reset));
        assert_eq!(counter_delta(0, u64::MAX), Cell::Gap(Gap::OutOfRange));
        assert_eq!(counter_delta(u64::MAX, 3), Cell::Gap(Gap::OutOfRange));
        assert_eq!(counter_delta(1 << 40, 1 << 41), Cell::Gap(Gap::OutOfRange));
        assert_eq!(counter_delta(5, 4294967295), Cell::Count(4294967290));
        assert_eq!(wide_counter_delta(1 << 40, 1 << 41), Cell::Count(1 << 40));
        assert_eq!(wide_counter_delta(7, 3), Cell::Gap(Gap::Reset));
    }

    #[test]
    fn a_width_picks_its_rule() {
        assert_eq!(width_delta(Width::U32, 4294967290, 5), Cell::Count(11));
        assert_eq!(
            width_delta(Width::U32, 7, 1 << 32),
            Cell::Gap(Gap::OutOfRange)
        );
        assert_eq!(
            width_delta(Width::U64, 1 << 32, (1 << 32) + 5),
            Cell::Count(5)
        );
        assert_eq!(
            width_delta(Width::U64, 4294967290, 5),
            Cell::Gap(Gap::Reset)
        );
    }

    #[test]
    fn an_unknown_count_is_a_missing_samples_gap_unless_it_stayed_the_same() {
        let (a, b) = (unknown_count(1), unknown_count(2));
        for delta in [counter_delta, wide_counter_delta] {
            assert_eq!(delta(a, a), Cell::Count(0), "not recorded as changed");
            assert_eq!(delta(a, b), Cell::Gap(Gap::MissingSamples), "more missing");
            assert_eq!(delta(5, a), Cell::Gap(Gap::MissingSamples));
            assert_eq!(delta(a, 5), Cell::Gap(Gap::MissingSamples));
            assert_eq!(delta(a, u64::MAX), Cell::Gap(Gap::MissingSamples));
        }
        // beyond the unknown counts: values no kernel prints
        assert_eq!(
            counter_delta(u64::MAX, u64::MAX),
            Cell::Gap(Gap::OutOfRange)
        );
        assert_eq!(wide_counter_delta(u64::MAX, u64::MAX), Cell::Count(0));
        assert_eq!(unknown_count(UNKNOWN_SPAN + 1), unknown_count(1));
    }

    #[test]
    fn rates_beyond_the_bound_are_gaps() {
        let m = MAX_RATE_PER_CPU;
        // 5 -> 4294967295 in 0.5 s: 8.6e9/s
        let jump = counter_delta(5, 4294967295);
        assert_eq!(bound_rate(jump, 0.5, m), Cell::Gap(Gap::ImpossibleRate));
        // the same jump over 60 s is 7.2e7/s: possible
        assert_eq!(bound_rate(jump, 60.0, m), jump);
        assert_eq!(
            bound_rate(Cell::Count(50_000_000), 0.5, m),
            Cell::Count(50_000_000)
        );
        assert_eq!(
            bound_rate(Cell::Count(50_000_001), 0.5, m),
            Cell::Gap(Gap::ImpossibleRate)
        );
        assert_eq!(bound_rate(jump, 0.0, m), jump);
        assert_eq!(bound_rate(jump, f64::NAN, m), jump);
        let g = Cell::Gap(Gap::Reset);
        assert_eq!(bound_rate(g, 0.5, m), g);
    }
}
