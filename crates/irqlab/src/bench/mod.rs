//! `irqlab bench`: A/B trials of interrupt workloads.
//!
//! Owns the shared vocabulary of a benchmark: [`metric::Metric`] (a named
//! per-trial value with unit and direction), the [`workload::Workload`]
//! trait that built-in generators and user commands implement, and the
//! built-in [`workloads`].

pub mod metric;
pub mod workload;
pub mod workloads;
