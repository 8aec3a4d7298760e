//! CLI tests of `irqlab compare`'s statistics and how its outputs state
//! them: the `--resamples` range, values near the float limits, what a
//! comparison without a significant change could have detected, pairs that
//! lose their verdict to the family correction, units that differ between
//! variants and changes too small for two decimals. Fixtures are number
//! files and CSV tables written into temp dirs.
#![allow(clippy::unwrap_used)]

mod common;
use common::compare::{compare, numbers, ok, usage};
use tempfile::TempDir;

#[test]
fn resamples_outside_100_to_100000_are_a_usage_error_naming_the_range() {
    let tmp = TempDir::new().unwrap();
    numbers(&tmp.path().join("a.txt"), [1.0, 2.0, 3.0]);
    numbers(&tmp.path().join("b.txt"), [2.0, 3.0, 4.0]);
    for n in ["100001", "1000000000000", "99"] {
        usage(
            tmp.path(),
            &["a.txt", "b.txt", "--resamples", n],
            &["--resamples", "from 100 to 100000", n],
        );
    }
    let out = ok(
        tmp.path(),
        &["a.txt", "b.txt", "--resamples", "100000", "--format", "json"],
    );
    assert!(out.contains("\"resamples\": 100000"), "{out}");
    // The bound is in --help.
    let help = compare(tmp.path(), &["--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("from 100 to 100000"), "{help}");
}
