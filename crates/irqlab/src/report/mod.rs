//! Report: the view model of `show` and `top`, built from one snapshot
//! (counts) or two (deltas and rates via `irqlab_core::delta`).
//!
//! - `model`: the types (an interrupts row's JSON is
//!   `crate::export::irq_row_json`'s);
//! - `build`: THE builder ([`counts`](fn@counts), [`rates`](fn@rates)
//!   with [`RateOpts`]);
//!   `counts`, `rates`, `stat`: the sections it is made of;
//! - `order`: sort keys, names, `--threshold`, the `SUM` line;
//! - `rate_rows`: `show --interval`'s interrupt rows built one at a time;
//! - `affinity`: numbered rows' affinity from a live frame;
//! - `valued`: THE "no value" rule of every total, total rate and SUM;
//! - `text_block`: a rates report's text blocks (`top --batch`'s lines).
//!
//! Rows are kept by `crate::filter::Filter`. Knows nothing about terminals
//! or files; the exporters in `export/` write a Report to any `io::Write`.

mod affinity;
mod build;
mod counts;
mod model;
mod order;
mod rate_rows;
mod rates;
mod stat;
pub mod text_block;
mod valued;

pub use affinity::annotate_affinity;
use build::{busiest_cpu, line_meta, pick};
pub use build::{counts, rates, IrqRows, RateOpts};
pub use counts::IrqCounts;
pub use model::*;
pub use order::{above_threshold, name_of, rate_sum, sort_rows, SortKey, SumRows};
pub use rate_rows::RateRows;
pub use rates::{
    pick_cells, softirq_vectors_changed, softirqs_gone, IrqRates, ReusedRates, RowRates,
    SoftirqRates,
};
pub use stat::{stat_section, stat_section_into};
pub use valued::{has_value, valued_sum, Valued, ValuedSum};

#[cfg(test)]
mod tests;
