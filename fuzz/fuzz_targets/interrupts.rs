//! /proc/interrupts: parse, parse_into on a reused model and the line-by-line
//! refill (a second path through the row parser) must agree and never panic;
//! so must a refill of a model that the previous input refilled (which
//! takes unchanged lines' rows as they stand), and a refill of the same
//! input again.
#![no_main]
use irqlab_core::interrupts::Interrupts;
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    static REUSED: RefCell<Interrupts> = RefCell::new(Interrupts::default());
    static REFILLED: RefCell<Interrupts> = RefCell::new(Interrupts::default());
}

/// Refill `m` from `data` line by line (what the live sampler streams).
fn refill(m: &mut Interrupts, data: &[u8]) -> Result<(), irqlab_core::ParseError> {
    let mut r = m.refill();
    for (_, l) in irqlab_core::scan::lines(data) {
        r.line(l)?;
    }
    r.finish()
}

/// The line-by-line parse of `data` (what `show` streams).
fn by_lines(data: &[u8]) -> Result<Interrupts, irqlab_core::ParseError> {
    let mut m = Interrupts::default();
    refill(&mut m, data)?;
    Ok(m)
}

/// A refill of `m` (holding an earlier input's rows) gives `fresh`.
fn refills_as(
    m: &mut Interrupts,
    data: &[u8],
    fresh: &Result<Interrupts, irqlab_core::ParseError>,
) {
    match (fresh, refill(m, data)) {
        (Ok(a), Ok(())) => {
            assert_eq!(a.cpus, m.cpus);
            assert_eq!(a.rows(), m.rows());
            assert_eq!(a.note(), m.note());
        }
        (a, b) => assert_eq!(a.as_ref().err(), b.err().as_ref()),
    }
}

fuzz_target!(|data: &[u8]| {
    let fresh = Interrupts::parse(data);
    match (&fresh, by_lines(data)) {
        (Ok(a), Ok(b)) => assert_eq!(a, &b),
        (a, b) => assert_eq!(a.as_ref().err(), b.err().as_ref()),
    }
    REFILLED.with(|m| {
        let mut m = m.borrow_mut();
        refills_as(&mut m, data, &fresh);
        refills_as(&mut m, data, &fresh);
    });
    REUSED.with(|r| {
        let mut r = r.borrow_mut();
        let again = r.parse_into(data);
        assert_eq!(fresh.is_ok(), again.is_ok());
        if let Ok(f) = &fresh {
            assert_eq!(f.cpus, r.cpus);
            assert_eq!(f.rows(), r.rows());
            for row in f.rows() {
                let _ = (row.total(), row.per_cpu(), row.parts.actions().count());
            }
        }
    });
});
