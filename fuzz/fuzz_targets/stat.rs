//! /proc/stat: parse, parse_into on a reused model and parse_totals_into
//! (but for `intr`) must agree and never panic.
#![no_main]
use irqlab_core::stat::{Stat, CPU_FIELDS};
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    static REUSED: RefCell<Stat> = RefCell::new(Stat::default());
}

fuzz_target!(|data: &[u8]| {
    let fresh = Stat::parse(data);
    REUSED.with(|r| {
        let mut r = r.borrow_mut();
        let again = r.parse_into(data);
        assert_eq!(fresh.is_ok(), again.is_ok());
        if let Ok(f) = &fresh {
            assert_eq!(f, &*r);
            let mut totals = Stat::default();
            assert!(totals.parse_totals_into(data).is_ok());
            assert_eq!(totals.intr_total, f.intr_total);
            assert!(f.intr_per_irq && !totals.intr_per_irq && totals.intr.is_empty());
            totals.intr = f.intr.clone();
            totals.intr_per_irq = true;
            assert_eq!(f, &totals);
            for c in std::iter::once(&f.total).chain(&f.cpus) {
                let _ = (c.busy(), c.total(), c.irq(), c.softirq(), c.steal());
                for name in CPU_FIELDS {
                    let _ = c.get(name);
                }
            }
        }
    });
});
