//! Pure statistics for `irqlab compare`: descriptive rows (pandas `describe`
//! with numpy 'linear' percentiles), Mann–Whitney U, Welch's t, the
//! Hodges–Lehmann shift, seeded bootstrap intervals, trend/shape warnings and
//! the direction-aware verdict. No I/O, no formatting; every function takes
//! slices of `f64` and returns plain values. Reference values come from
//! scipy/numpy/pandas (`tools/reference/compare_reference.py`).

pub mod bootstrap;
pub mod describe;
pub mod dip;
pub mod hodges_lehmann;
pub mod mannwhitney;
pub mod special;
pub mod verdict;
pub mod warnings;
pub mod welch;

#[cfg(test)]
mod reference_tests;
