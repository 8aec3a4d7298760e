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
