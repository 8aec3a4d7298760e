//! `parse_into` and the line-by-line refill allocate nothing in the steady
//! state: a counting global allocator (test-only; the library itself
//! forbids unsafe code) observes the second and later re-parses of the
//! same-shaped input.

#![allow(clippy::unwrap_used)]

use irqlab_core::{Interrupts, Softirqs, Stat};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: delegates every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn fixture(name: &str) -> Vec<u8> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../irqlab/tests/fixtures/vm-2cpu-6.18/proc/"
    );
    std::fs::read(format!("{dir}{name}")).unwrap()
}

/// A wide input: 256 CPUs × 300 rows, counts changing between the two.
fn wide(seed: u64) -> Vec<u8> {
    let mut s = String::from("    ");
    for c in 0..256 {
        s.push_str(&format!(" CPU{c:<7}"));
    }
    s.push('\n');
    for irq in 0..300u64 {
        s.push_str(&format!("{irq:>4}:"));
        for c in 0..256u64 {
            s.push_str(&format!(
                " {:>10}",
                (irq * 7919 + c * 104729 + seed) % 4_000_000_000
            ));
        }
        s.push_str(&format!(
            "  IR-PCI-MSI {irq}-edge      nvme0q{irq}, eth0-TxRx-{irq}\n"
        ));
    }
    s.push_str("NMI: 1 2 3   Non-maskable interrupts\nERR:          0\n");
    s.into_bytes()
}

fn allocs_during(f: impl FnOnce()) -> usize {
    let before = ALLOCS.load(Ordering::SeqCst);
    f();
    ALLOCS.load(Ordering::SeqCst) - before
}

#[test]
fn reparse_allocates_nothing() {
    let (a, b) = (wide(1), wide(2));
    let mut m = Interrupts::default();
    m.parse_into(&a).unwrap();
    assert_eq!(
        allocs_during(|| m.parse_into(&b).unwrap()),
        0,
        "interrupts (wide)"
    );
    assert_eq!(m.rows().len(), 302);

    let live = fixture("interrupts");
    let mut m = Interrupts::default();
    m.parse_into(&live).unwrap();
    assert_eq!(
        allocs_during(|| m.parse_into(&live).unwrap()),
        0,
        "interrupts (vm)"
    );

    // the live sampler's line-by-line refill, which keeps each line
    let refill = |m: &mut Interrupts, text: &[u8]| {
        let mut r = m.refill();
        for (_, l) in irqlab_core::scan::lines(text) {
            r.line(l).unwrap();
        }
        r.finish().unwrap();
    };
    let mut m = Interrupts::default();
    refill(&mut m, &a);
    assert_eq!(allocs_during(|| refill(&mut m, &b)), 0, "refill (wide)");
    assert_eq!(allocs_during(|| refill(&mut m, &b)), 0, "refill (same)");
    assert_eq!(m.rows().len(), 302);
    let mut m = Interrupts::default();
    refill(&mut m, &live);
    assert_eq!(allocs_during(|| refill(&mut m, &live)), 0, "refill (vm)");

    let soft = fixture("softirqs");
    let mut s = Softirqs::default();
    s.parse_into(&soft).unwrap();
    assert_eq!(
        allocs_during(|| s.parse_into(&soft).unwrap()),
        0,
        "softirqs"
    );

    let stat = fixture("stat");
    let mut t = Stat::default();
    t.parse_into(&stat).unwrap();
    assert_eq!(allocs_during(|| t.parse_into(&stat).unwrap()), 0, "stat");
}
