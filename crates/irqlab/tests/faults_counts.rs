//! Issue 12 item 4 through the real binary: a per-CPU count the kernel
//! cannot print (above 2^32 - 1) is shown with a note naming file, line
//! and value, and `show` still succeeds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use std::time::Duration;

#[test]
fn out_of_range_count_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    let p = dir.path().join("proc/interrupts");
    std::fs::write(
        &p,
        "           CPU0       CPU1\n  1:          0 18446744073709551615  IO-APIC   1-edge      i8042\nLOC:         10         20   Local timer interrupts\n",
    )
    .unwrap();
    let out = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["show", "--root"])
        .arg(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.starts_with("irqlab: note:"), "{err}");
    assert!(err.contains(&p.display().to_string()), "{err}");
    assert!(
        err.contains(":2:") && err.contains("18446744073709551615"),
        "{err}"
    );
}

/// The same for `/proc/softirqs` (the kernel prints those counts with
/// `%10u` too): a note naming file, line and value; `show` succeeds.
#[test]
fn out_of_range_softirq_count_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::fs::write(
        dir.path().join("proc/interrupts"),
        "           CPU0       CPU1\nLOC:         10         20   Local timer interrupts\n",
    )
    .unwrap();
    let p = dir.path().join("proc/softirqs");
    std::fs::write(
        &p,
        "                    CPU0       CPU1\n          HI:          0          0\n       TIMER:          1 4294967296\n",
    )
    .unwrap();
    let out = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["show", "--root"])
        .arg(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let note = err
        .lines()
        .find(|l| l.contains("softirqs"))
        .unwrap_or_else(|| panic!("no softirqs note: {err}"));
    assert!(note.starts_with("irqlab: note:"), "{note}");
    assert!(note.contains(&p.display().to_string()), "{note}");
    assert!(note.contains("/proc/softirqs:3:"), "{note}");
    assert!(note.contains("4294967296"), "{note}");
}
