//! `irqlab bench`: A/B trials of interrupt workloads.
//!
//! Owns the shared vocabulary of a benchmark: [`metric::Metric`] (a named
//! per-trial value with unit and direction) and the [`workload::Workload`]
//! trait that built-in generators and user commands implement.

pub mod metric;
pub mod prepare;
pub mod workload;
