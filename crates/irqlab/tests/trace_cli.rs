//! `irqlab trace` flags and errors that need no kernel: without the
//! `trace` feature it names the cargo command; with it, a `--root` tree
//! is a usage error (trace attaches to the running kernel). Bad selectors
//! are usage errors named by flag.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;
use common::irqlab;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

#[cfg(not(feature = "trace"))]
#[test]
fn without_the_feature_it_says_how_to_get_it() {
    irqlab()
        .args(["trace", "-d", "1s"])
        .assert()
        .code(2)
        .stderr(contains(
            "irqlab: error: trace: this irqlab was built without eBPF tracing",
        ))
        .stderr(contains("cargo build --release -p irqlab --features trace"))
        .stderr(contains("clang"));
}

/// A `--root` tree is refused before anything attaches: the programs
/// trace the running kernel, never the tree (it failed on the tree's
/// missing tracefs, exit 1).
#[cfg(feature = "trace")]
#[test]
fn a_root_other_than_the_hosts_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    irqlab()
        .args(["trace", "-d", "1s", "--root"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains("trace attaches to the running kernel").and(contains("--root")))
        .stderr(contains("tracefs").not());
}

#[test]
fn bad_selectors_are_named() {
    // usage errors (exit 2, before anything attaches), as in every
    // command that takes the row filter
    irqlab()
        .args(["trace", "--irq", "(", "-d", "1s"])
        .assert()
        .code(2)
        .stderr(contains("--irq").and(contains("not a valid regular expression")));
    irqlab()
        .args(["trace", "--exclude", "(", "-d", "1s"])
        .assert()
        .code(2)
        .stderr(contains("--exclude").and(contains("not a valid regular expression")));
    irqlab()
        .args(["trace", "--cpus", "x", "-d", "1s"])
        .assert()
        .code(2)
        .stderr(contains("--cpus"));
    irqlab()
        .args(["trace", "--format", "yaml"])
        .assert()
        .code(2);
}

/// `trace -i 0` was accepted and ran a busy loop: an interval below the
/// documented minimum (10ms) is a usage error before anything attaches
/// (with the feature, as root, it would otherwise mount and attach).
#[test]
fn an_interval_below_the_minimum_is_refused_before_attaching() {
    for bad in ["0", "0s", "5ms"] {
        irqlab()
            .args(["trace", "-i", bad, "-d", "1s", "--root", "/nonexistent"])
            .assert()
            .code(2)
            .stderr(contains("shortest trace interval (10ms)"));
    }
}
