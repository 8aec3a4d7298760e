//! eBPF programs on the irq tracepoints and their loader, for `irqlab trace`.
//!
//! - `src/bpf/irqlab.bpf.c`: programs on `irq:softirq_raise/entry/exit`
//!   and the x86 `irq_vectors:*_entry/exit` pairs (raw tracepoint
//!   programs), and on `irq:irq_handler_entry/exit` in two forms: BTF
//!   tracepoint programs, where the kernel has BTF, and perf event
//!   tracepoint programs, which the kernel skips while another BPF program
//!   or a map read runs on the CPU (the other forms it does not skip that
//!   way). They aggregate in per-CPU kernel maps (count, total ns, log2
//!   duration histogram per IRQ action, vector and softirq; raise-to-entry
//!   latency; ksoftirqd share; hard IRQ time nested in softirqs). No
//!   per-event ring-buffer traffic.
//! - [`maps`]: the value layouts shared with the C side — the one
//!   definition: irqlab's trace model uses these types (built without the
//!   `loader` feature when irqlab is built without `trace`).
//! - `loader` (feature `loader`, default): the second gateway to the kernel
//!   beside irqlab's HostFs.
//!
//! ## Why a hand-declared header, not a generated vmlinux.h
//!
//! The programs read tracepoint records, whose layout is the stable ABI
//! the kernel prints in tracefs (`events/irq/irq_handler_entry/format`:
//! `int irq` at offset 8, a `__data_loc` name at 12 …), tracepoints'
//! arguments (the softirq vector number, the IRQ number), and one kernel
//! struct field: `irqaction.name`, declared in the C as the only member of
//! a `preserve_access_index` struct, so that its offset is relocated at
//! load from the running kernel's BTF (CO-RE). `src/bpf/irqlab.h`
//! declares the helpers by their stable numbers, the two map types and the
//! records: ~90 lines, readable, and the build needs clang only (no
//! bpftool to dump a 2-3 MB vmlinux.h from the build machine's kernel, no
//! libbpf headers, no dependency on which kernel built it). Without the
//! kernel's BTF the perf event hard IRQ programs need none of it.
//!
//! ## Building
//!
//! build.rs compiles the C with `clang -target bpf -O2 -g`. Without clang
//! the crate still builds (so `cargo clippy --workspace` needs no clang)
//! and `loader::Tracer::attach` returns `loader::Error::NotBuilt`;
//! `IRQLAB_BPF_REQUIRE=1` makes a missing clang a build error instead.
//! The crate is a workspace member but not a default member: a plain
//! `cargo build` does not build it; `irqlab` uses it through its `trace`
//! feature.

#[cfg(feature = "loader")]
pub mod loader;
pub mod maps;
#[cfg(feature = "loader")]
pub mod probe_loader;
pub mod run_stats;

#[cfg(feature = "loader")]
pub use loader::{enable_run_stats, Attached, Counters, Error, Tracefs, Tracer};
pub use maps::{IrqKey, SoftirqStats, Stats, Vector, HIST_SLOTS, SOFTIRQ_NAMES, VECTORS};
pub use run_stats::RunStats;
