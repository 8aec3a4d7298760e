//! irqlab as a library: the modules behind the `irqlab` binary
//! (`src/main.rs` only parses arguments and maps errors to exit codes).
//!
//! The split exists so that benchmarks (`benches/`) measure the code paths
//! the binary runs — sampling, the `top --batch` JSON writer — rather than
//! copies of them. The modules are not a stable API.
//!
//! Unsafe code is denied crate-wide; the exceptions are the TLB workload
//! (`bench/workloads/tlb.rs`: mmap/munmap and page writes) and the
//! binary's global allocator (`alloc.rs`), each allowed on its `mod` line
//! with a comment.
#![deny(unsafe_code)]

// the binary's global allocator: GlobalAlloc is an unsafe trait
#[allow(unsafe_code)]
pub mod alloc;
pub mod bench;
pub mod cli;
pub mod cmd;
pub mod compare;
pub mod direction;
pub mod env;
pub mod export;
pub mod filter;
pub mod guard;
pub mod host;
pub mod pin;
pub mod probe;
pub mod record;
pub mod report;
pub mod results;
pub mod sampler;
pub mod serve;
pub mod stats;
pub mod threads;
pub mod timestamp;
pub mod trace;
pub mod tui;
