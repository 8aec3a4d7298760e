//! `irqlab bench`: A/B trials of interrupt workloads.
//!
//! Owns the shared vocabulary of a benchmark — [`metric_value::Metric`] and the
//! [`workload::Workload`] trait — and the run itself: the plain [`plan::Plan`]
//! the command layer builds (no clap types below `cmd/`), the measured IRQs
//! (`measured`), the trial schedule (`plan`), per-trial metrics from the
//! statistics files (`metrics`) and whether their irq/softirq times are
//! measured or tick samples (`irqtime`), the environment record (`env_json`, over the
//! shared [`crate::env`]), result files (`result_files`, over the shared
//! [`crate::results`] schema), progress (`progress`), the summary table
//! (`summary`) and the loop (`runner`). Host changes, child process groups
//! and temporary files go through `prepare` and the SystemGuard.

pub mod env_json;
pub mod irqtime;
pub mod measured;
pub mod metric_value;
pub mod metrics;
pub mod plan;
pub mod prepare;
pub mod preset;
pub mod progress;
pub mod result_files;
pub mod runner;
pub mod summary;
pub mod tracing;
pub mod workload;
pub mod workloads;
