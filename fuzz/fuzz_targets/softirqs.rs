//! /proc/softirqs: parse and parse_into on a reused model must agree and never panic.
#![no_main]
use irqlab_core::softirqs::Softirqs;
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    static REUSED: RefCell<Softirqs> = RefCell::new(Softirqs::default());
}

fuzz_target!(|data: &[u8]| {
    let fresh = Softirqs::parse(data);
    REUSED.with(|r| {
        let mut r = r.borrow_mut();
        let again = r.parse_into(data);
        assert_eq!(fresh.is_ok(), again.is_ok());
        if let Ok(f) = &fresh {
            assert_eq!(f, &*r);
            for row in &f.rows {
                assert_eq!(row.counts.len(), f.cpus.len());
                let _ = (row.total(), f.row(&row.name));
            }
        }
    });
});
