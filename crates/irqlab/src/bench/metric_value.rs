//! One measured value of a trial ([`Metric`]): a name, a value, a unit and a
//! direction. Names carry their unit (`_ns`, `_per_sec`, `_pct`, `_bytes`).

use serde::{Deserialize, Serialize};

pub use crate::direction::Direction;

/// One measured value of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// e.g. `irqs_per_sec`, `softirq_cpu_pct`, `rtt_p99_ns`.
    pub name: String,
    pub value: f64,
    /// e.g. `1/s`, `%`, `ns`, `B/s`.
    pub unit: String,
    pub direction: Direction,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: &str, direction: Direction) -> Self {
        Metric {
            name: name.into(),
            value,
            unit: unit.to_string(),
            direction,
        }
    }
}
