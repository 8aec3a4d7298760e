//! Impossible counts through the real binary: a per-CPU count the kernel
//! cannot print (above 2^32 - 1) in `/proc/interrupts` or `/proc/softirqs`
//! is shown with a note naming file, line and value, and `show` still
//! succeeds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::time::Duration;

const LOC_ONLY: &str =
    "           CPU0       CPU1\nLOC:         10         20   Local timer interrupts\n";

/// `show --root` on a tree of `files`: (the path of `noted`, stderr).
fn show_notes(files: &[(&str, &str)], noted: &str) -> (PathBuf, String) {
    let tree = common::tree_with(files);
    let out = common::irqlab()
        .args(["show", "--root"])
        .arg(tree.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (tree.path().join(noted), err)
}

#[test]
fn out_of_range_count_is_a_note() {
    let interrupts = "           CPU0       CPU1\n  1:          0 18446744073709551615  IO-APIC   1-edge      i8042\nLOC:         10         20   Local timer interrupts\n";
    let (p, err) = show_notes(&[("proc/interrupts", interrupts)], "proc/interrupts");
    assert!(err.starts_with("irqlab: note:"), "{err}");
    assert!(err.contains(&p.display().to_string()), "{err}");
    assert!(
        err.contains(":2:") && err.contains("18446744073709551615"),
        "{err}"
    );
}

/// The kernel prints softirq counts with `%10u` too.
#[test]
fn out_of_range_softirq_count_is_a_note() {
    let softirqs = "                    CPU0       CPU1\n          HI:          0          0\n       TIMER:          1 4294967296\n";
    let files = [("proc/interrupts", LOC_ONLY), ("proc/softirqs", softirqs)];
    let (p, err) = show_notes(&files, "proc/softirqs");
    let note = err
        .lines()
        .find(|l| l.contains("softirqs"))
        .unwrap_or_else(|| panic!("no softirqs note: {err}"));
    assert!(note.starts_with("irqlab: note:"), "{note}");
    assert!(note.contains(&p.display().to_string()), "{note}");
    assert!(note.contains("/proc/softirqs:3:"), "{note}");
    assert!(note.contains("4294967296"), "{note}");
}
