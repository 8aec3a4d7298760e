//! Heuristic split of a /proc/interrupts description: arbitrary UTF-8.
#![no_main]
use irqlab_core::desc::{split_description, DescParts};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let mut parts = DescParts::default();
        split_description(text, &mut parts);
        let _ = (
            parts.chip(),
            parts.trigger(),
            parts.flow(),
            parts.actions().count(),
        );
        // Reuse must give the same answer as a fresh split.
        let mut again = parts.clone();
        split_description(text, &mut again);
        assert_eq!(parts, again);
    }
});
