//! `/proc/stat`: model and parser.
//!
//! Owns [`Stat`]: the aggregate and per-CPU time lines (however many fields
//! the kernel prints), `intr`, `ctxt`, `btime`, `processes`,
//! `procs_running`, `procs_blocked` and `softirq`.

use serde::Serialize;

/// Name used in errors for this file.
pub const FILE: &str = "/proc/stat";

/// Field names of a `cpu` line, in kernel order (older kernels print fewer).
pub const CPU_FIELDS: [&str; 10] = [
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
];

/// One `cpu`/`cpuN` line: times in USER_HZ ticks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuTimes {
    /// `None` for the aggregate `cpu` line, else the CPU id.
    pub cpu: Option<u32>,
    /// Values in [`CPU_FIELDS`] order, as many as printed.
    pub fields: Vec<u64>,
}

/// A parsed `/proc/stat`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stat {
    /// The aggregate `cpu` line (sum over possible CPUs).
    pub total: CpuTimes,
    /// `cpuN` lines (online CPUs only; gaps possible).
    pub cpus: Vec<CpuTimes>,
    /// First value of the `intr` line (not the sum of the rest).
    pub intr_total: u64,
    /// Per-IRQ-number values of the `intr` line (index = IRQ number).
    pub intr: Vec<u64>,
    pub ctxt: Option<u64>,
    pub btime: Option<u64>,
    pub processes: Option<u64>,
    pub procs_running: Option<u64>,
    pub procs_blocked: Option<u64>,
    /// First value of the `softirq` line.
    pub softirq_total: Option<u64>,
    /// Per-vector values of the `softirq` line (HI … RCU).
    pub softirq: Vec<u64>,
}
