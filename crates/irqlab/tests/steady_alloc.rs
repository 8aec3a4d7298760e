//! Steady-state samples of `top --batch` allocate (next to) nothing,
//! counted by a counting global allocator (this test binary only; per
//! thread, so the tests may run at once):
//! - the json line of a sample with the same rows and CPUs as the sample
//!   before allocates nothing: interrupt rows, softirqs, threads,
//!   self-cost, the timestamp and `cpu_pct` (`/proc/stat`'s section,
//!   rebuilt in place) are written into reused buffers;
//! - the text block's rates are rebuilt in place (`report::ReusedRates`,
//!   shown rows and SUM line included) and its lines written into a
//!   reused buffer: a steady-state block allocates nothing.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

use irqlab::export::jsonl::{JsonlWriter, LineInput};
use irqlab::filter::Filter;
use irqlab::report::text_block::{write_block, Block, TextOpts};
use irqlab::report::ReusedRates;
use irqlab::sampler::clock::CostMeter;
use irqlab::sampler::{SelfCost, Strategy};
use irqlab::threads::{ThreadCpu, ThreadKind};
use irqlab_core::stat::Stat;
use irqlab_core::{Interrupts, Snapshot, Softirqs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Allocations and reallocations made by this thread.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // a const-initialised Cell has no destructor: usable at any time
    ALLOCS.with(|n| n.set(n.get() + 1));
}

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

// SAFETY: forwards to the system allocator, only counting calls.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` above with `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: as `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn snap(k: u64) -> Snapshot {
    let irqs = format!(
        "           CPU0       CPU1       \n 24: {:>10} {:>10}  IO-APIC   5-edge      ACPI:Ged\n 36: {:>10} {:>10}  PCI-MSI-0000:00:04.0   0-edge      virtio1-req.0\nLOC: {:>10} {:>10}   Local timer interrupts\nLOC: {:>10} {:>10}   Local timer interrupts\nNMI:          0          0   Non-maskable interrupts\nERR:          0\n",
        k, 2 * k, 7 * k, 0, 1000 * k, 999 * k, 3 * k, k
    );
    let soft = format!(
        "                    CPU0       CPU1       \n          HI: {:>10} {:>10}\n       TIMER: {:>10} {:>10}\n",
        k,
        0,
        250 * k,
        251 * k
    );
    let stat = format!(
        "cpu  {} 0 {} {} 0 0 {} 0 0 0\ncpu0 {} 0 {} {} 0 0 {} 0 0 0\ncpu1 {} 0 {} {} 0 0 {} 0 0 0\nintr {} 1 2 3\nctxt {}\nbtime 1795462000\nprocesses {}\nprocs_running 2\nprocs_blocked 0\nsoftirq {} 1 2\n",
        20 * k, 4 * k, 176 * k, 2 * k,
        10 * k, 2 * k, 88 * k, k,
        10 * k, 2 * k, 88 * k, k,
        1000 * k, 50 * k, 3 * k, 500 * k
    );
    Snapshot {
        mono_ns: 1_000_000_000 + k * 1_003_000_000,
        wall_ns: 1_795_462_201_000_000_000 + k * 1_003_000_000,
        interrupts: Some(Interrupts::parse(irqs.as_bytes()).unwrap()),
        softirqs: Some(Softirqs::parse(soft.as_bytes()).unwrap()),
        stat: Some(Stat::parse(stat.as_bytes()).unwrap()),
    }
}

/// One interrupt thread for the lines and blocks to print.
fn ksoftirqd0() -> Vec<ThreadCpu> {
    vec![ThreadCpu {
        pid: Some(14),
        name: "ksoftirqd/0".into(),
        kind: ThreadKind::Ksoftirqd { cpu: 0 },
        cpu_pct: 0.0153,
        last_cpu: Some(0),
        cpu_ns: 5,
    }]
}

#[test]
fn a_steady_state_json_line_allocates_nothing() {
    let snaps: Vec<Snapshot> = (1..=4).map(snap).collect();
    let threads = ksoftirqd0();
    let filter = Filter::default();
    let mut w = JsonlWriter::default();
    let mut out = Vec::new();
    let mut affinity = |_irq: u32| Some("0-1".to_string());
    let mut counts = Vec::new();
    for pair in snaps.windows(2) {
        let meter = CostMeter::start();
        let inp = LineInput {
            old: &pair[0],
            new: &pair[1],
            filter: &filter,
            threads: &threads,
            meter: &meter,
            strategy: Strategy::ProcInterrupts,
            trace: None,
            samples: None,
        };
        let before = allocs();
        w.write_line(&inp, &mut affinity, &mut out);
        counts.push(allocs() - before);
        let line = std::str::from_utf8(&out).unwrap();
        assert!(
            line.contains("\"rates\":[")
                && line.contains("\"cpu_pct\":[{\"cpu\":null,\"user_pct\":")
                && line.ends_with("}\n"),
            "{line}"
        );
    }
    // the first line fills the buffers and the row metadata cache
    assert!(counts[0] > 0, "{counts:?}");
    assert_eq!(&counts[1..], &[0, 0], "allocations per line: {counts:?}");
}

#[test]
fn a_steady_state_text_block_allocates_nothing() {
    let snaps: Vec<Snapshot> = (1..=5).map(snap).collect();
    let threads = ksoftirqd0();
    let filter = Filter::default();
    let opts = TextOpts::default();
    let mut reused = ReusedRates::default();
    let mut out = Vec::new();
    let mut counts = Vec::new();
    for pair in snaps.windows(2) {
        let before = allocs();
        let rates = reused.update(&pair[0], &pair[1], &filter);
        let b = Block {
            stamp: "19:30:03.006",
            rates,
            threads: &threads,
            self_cost: SelfCost::default(),
            strategy: Strategy::ProcInterrupts,
        };
        out.clear();
        write_block(&b, &opts, &mut out).unwrap();
        counts.push(allocs() - before);
        let text = std::str::from_utf8(&out).unwrap();
        for want in ["  LOC ", "  SUM ", "  TIMER ", "  all ", "ksoftirqd/0"] {
            assert!(text.contains(want), "{want} in {text}");
        }
    }
    // the first block fills the report; later ones reuse it
    assert!(counts[0] > counts[1], "{counts:?}");
    assert_eq!(
        &counts[1..],
        &[0, 0, 0],
        "allocations per block: {counts:?}"
    );
}
