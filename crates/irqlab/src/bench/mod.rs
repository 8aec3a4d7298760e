//! `irqlab bench`: A/B trials of interrupt workloads.
//!
//! Owns the shared vocabulary of a benchmark — [`metric::Metric`] and the
//! [`workload::Workload`] trait — and the run itself: IRQ selection
//! (`select`), the trial schedule (`plan`), per-trial metrics from the
//! statistics files (`metrics`), the environment record (`env`), result
//! files (`results`), the summary table (`summary`) and the loop
//! (`runner`). Host changes go through `prepare` and the SystemGuard.

pub mod env;
pub mod metric;
pub mod metrics;
pub mod plan;
pub mod prepare;
pub mod results;
pub mod runner;
pub mod select;
pub mod summary;
pub mod workload;
pub mod workloads;
