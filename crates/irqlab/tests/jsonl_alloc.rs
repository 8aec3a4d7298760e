//! The `top --batch --format json` line of a steady-state sample (the same
//! rows and CPUs as the sample before) allocates nothing: interrupt rows,
//! softirqs, threads, self-cost and the timestamp are written into reused
//! buffers. Counted with a counting global allocator (this test binary
//! only), `cpu_pct` (`/proc/stat`'s section, rebuilt in place) included.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

use irqlab::export::jsonl::{JsonlWriter, LineInput};
use irqlab::filter::Filter;
use irqlab::sampler::clock::CostMeter;
use irqlab::sampler::Strategy;
use irqlab::threads::{ThreadCpu, ThreadKind};
use irqlab_core::stat::Stat;
use irqlab_core::{Interrupts, Snapshot, Softirqs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, only counting calls.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` above with `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
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

#[test]
fn a_steady_state_json_line_allocates_nothing() {
    let snaps: Vec<Snapshot> = (1..=4).map(snap).collect();
    let threads = vec![ThreadCpu {
        pid: Some(14),
        name: "ksoftirqd/0".into(),
        kind: ThreadKind::Ksoftirqd { cpu: 0 },
        cpu_pct: 0.0153,
        last_cpu: Some(0),
        cpu_ns: 5,
    }];
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
        };
        let before = ALLOCS.load(Ordering::Relaxed);
        w.write_line(&inp, &mut affinity, &mut out);
        counts.push(ALLOCS.load(Ordering::Relaxed) - before);
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
