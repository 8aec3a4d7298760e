//! /proc/interrupts: parse and parse_into on a reused model must agree and never panic.
#![no_main]
use irqlab_core::interrupts::Interrupts;
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    static REUSED: RefCell<Interrupts> = RefCell::new(Interrupts::default());
}

fuzz_target!(|data: &[u8]| {
    let fresh = Interrupts::parse(data);
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
