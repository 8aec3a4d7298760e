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

/// std's `eprintln!` panics when stderr fails (a closed pipe in
/// `irqlab probe 2>&1 | head -1`, `2>/dev/full`), which would end a run
/// with exit 101 in the middle of a message about something else, and
/// writes a path from a tree with its control bytes (ESC) as they are.
/// In this crate (declared before every module, so it shadows std's for
/// all of them) a message goes through `export::stderr::write`: control
/// characters shown as `\xNN`, one write, dropped when it cannot be
/// written. The unit tests keep std's, whose output the test harness
/// captures.
#[cfg(not(test))]
macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::export::stderr::write(format_args!($($arg)*), true)
    };
}

/// The same for `eprint!`.
#[cfg(not(test))]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::export::stderr::write(format_args!($($arg)*), false)
    };
}

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
pub mod json_line;
pub mod natural;
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
