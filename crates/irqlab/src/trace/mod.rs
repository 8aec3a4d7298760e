//! `irqlab trace`'s domain: how long, not only how often. eBPF programs
//! (crate `irqlab-bpf`, feature `trace`) aggregate hard IRQ, vector and
//! softirq durations in kernel maps; this module reads them per interval
//! and turns them into rows, latency quantiles and exact irq/softirq CPU %.
//!
//! - `sample`: the maps' content in irqlab's types (cumulative per CPU);
//! - `interval`: two samples -> one [`interval::Interval`] (the only
//!   place numbers are computed);
//! - `missed`: program runs the kernel skipped (another BPF program or a
//!   map read was running on the CPU), per group of rows;
//! - `untraced`: runs the kernel counted (/proc) that no program saw, per
//!   group of rows, whatever the cause;
//! - `output`: text tables / histograms and JSON lines;
//! - `preflight`: root, tracefs, BTF checks through HostFs;
//! - `session` (feature `trace`): mount through the guard, attach, read;
//! - `live_trace`: `TraceSession`, the one interface to a session (record,
//!   top, bench), and `LiveTrace`, its reads as intervals (a top tick, a
//!   bench trial's window);
//! - `top`: what `top --trace` adds to a frame (pure).
//!
//! Everything but `session` (and `live_trace`'s constructors over it) builds and
//! is tested without the feature.

pub mod interval;
pub mod live_trace;
pub mod missed;
pub mod output;
pub mod preflight;
pub mod sample;
#[cfg(feature = "trace")]
pub mod session;
pub mod top;
pub mod untraced;

/// How to get tracing into a binary built without it.
pub const NOT_BUILT: &str = "this irqlab was built without eBPF tracing: \
     install clang (tools/install-trace-deps.sh) and rebuild with \
     `cargo build --release -p irqlab --features trace`";
