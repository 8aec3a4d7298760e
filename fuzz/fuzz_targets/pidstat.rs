//! /proc/PID/stat and /proc/PID/schedstat.
#![no_main]
use irqlab_core::pidstat::{PidStat, SchedStat};
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    static REUSED: RefCell<PidStat> = RefCell::new(PidStat::default());
}

fuzz_target!(|data: &[u8]| {
    let fresh = PidStat::parse(data);
    REUSED.with(|r| {
        let mut r = r.borrow_mut();
        let again = r.parse_into(data);
        assert_eq!(fresh.is_ok(), again.is_ok());
        if let Ok(f) = &fresh {
            assert_eq!(f, &*r);
            let _ = f.cpu_ticks();
        }
    });
    let _ = SchedStat::parse(data);
});
