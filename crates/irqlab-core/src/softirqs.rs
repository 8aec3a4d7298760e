//! `/proc/softirqs`: model and parser.
//!
//! Owns [`Softirqs`]: the header's CPU ids (possible CPUs, unlike
//! `/proc/interrupts`) and one row per softirq vector in file order.

use serde::Serialize;

/// Name used in errors for this file.
pub const FILE: &str = "/proc/softirqs";

/// One vector's line (`NET_RX`, `TIMER`, or an old name like `BLOCK_IOPOLL`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SoftirqRow {
    /// Vector name, trimmed.
    pub name: String,
    /// Counts aligned with [`Softirqs::cpus`].
    pub counts: Vec<u64>,
}

/// A parsed `/proc/softirqs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Softirqs {
    /// CPU ids from the header (possible CPUs).
    pub cpus: Vec<u32>,
    /// Rows in file order.
    pub rows: Vec<SoftirqRow>,
}
