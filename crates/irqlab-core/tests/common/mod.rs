//! Shared helpers of the core's integration tests: the visible skip line
//! of the tests that read `../shared/corpus` (outside the repository).
//!
//! Include with `mod common;` in a `tests/*.rs` file.
#![allow(dead_code)]

/// `eprintln!` that `cargo test` shows for passing tests too: libtest
/// captures what the `eprintln!` and `println!` macros print, not writes
/// to the stderr handle, and a skip must be visible in normal test output
/// (as the irqlab crate's `tests/common` does).
#[macro_export]
macro_rules! visible {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Say visibly that `test` (`file: test_name`) skipped because the
/// corpus (or `what` in it) is absent.
pub fn corpus_skipped(test: &str, what: &str) {
    visible!("{test}: SKIPPED: {what} not found (../shared/corpus, outside the repository)");
}
