//! irqlab-core: pure parsers, model, deltas and renderers for Linux
//! interrupt statistics.
//!
//! Bytes in, model out: nothing in this crate touches the file system, the
//! clock or threads, and no input can make it panic. Every rate irqlab shows
//! comes from [`delta`].
#![forbid(unsafe_code)]

pub mod cpulist;
pub mod delta;
pub mod desc;
pub mod error;
pub mod interrupts;
pub mod paths;
pub mod pidstat;
pub mod render;
pub mod rng;
pub mod scan;
pub mod snapshot;
pub mod softirqs;
pub mod stat;
pub mod synth;
pub mod sysfs;

pub use cpulist::CpuList;
pub use error::{ErrorKind, ParseError};
pub use interrupts::{CountSink, Interrupts, IrqRow, Shape, Width};
pub use pidstat::{PidStat, SchedStat};
pub use snapshot::Snapshot;
pub use softirqs::{SoftirqRow, Softirqs};
pub use stat::{CpuTimes, Stat};
pub use sysfs::{IrqAttrs, ProcIrqAttrs, Trigger};
