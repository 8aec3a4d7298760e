//! `irqlab show --sort`, `--threshold` and the JSON layout (`--compact`,
//! `--pretty`, compact when piped) against a small hand-written tree whose
//! totals are known.

#![allow(clippy::unwrap_used)]

mod common;

use common::{irqlab, tree_with};
use std::path::Path;

const INTERRUPTS: &str = "           CPU0       CPU1
  0:         10          5   IO-APIC   2-edge      timer
  9:          0          0   IO-APIC   9-fasteoi   acpi
 24:        100          1   PCI-MSI 65536-edge      nvme0q0
LOC:         50         60   Local timer interrupts
ERR:          3
";

fn tree() -> tempfile::TempDir {
    tree_with(&[("proc/interrupts", INTERRUPTS)])
}

fn run(root: &Path, args: &[&str]) -> std::process::Output {
    irqlab()
        .args(["show", "--format", "json", "--root"])
        .arg(root)
        .args(args)
        .output()
        .unwrap()
}

/// Labels of the interrupt rows, in output order.
fn labels(root: &Path, args: &[&str]) -> Vec<String> {
    let out = run(root, args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["interrupts"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn file_order_without_sort_and_each_sort_key() {
    let t = tree();
    let r = t.path();
    assert_eq!(labels(r, &[]), ["0", "9", "24", "LOC", "ERR"]);
    // counts: "rate" and "total" both order by the total count
    assert_eq!(
        labels(r, &["--sort", "total"]),
        ["LOC", "24", "0", "ERR", "9"]
    );
    assert_eq!(
        labels(r, &["--sort", "rate"]),
        ["LOC", "24", "0", "ERR", "9"]
    );
    assert_eq!(
        labels(r, &["--sort", "irq"]),
        ["0", "9", "24", "ERR", "LOC"]
    );
    // names: actions, else description, else label (case folded)
    assert_eq!(
        labels(r, &["--sort", "name"]),
        ["9", "ERR", "LOC", "24", "0"]
    );
    // over the selected CPUs only
    assert_eq!(
        labels(r, &["--sort", "total", "--cpus", "1"]),
        ["LOC", "0", "ERR", "24", "9"]
    );
}

/// `--sort name` orders names as `sort -f` does (case folded: `eth0`
/// before `Xen-dyn`), numbers in them by value (`eth2` before `eth10`),
/// names equal but for case by case (`ETH0` before `eth0`), then in file
/// order.
#[test]
fn name_order_ignores_case_and_reads_numbers() {
    let t = tree_with(&[(
        "proc/interrupts",
        "           CPU0
  0:          1   IO-APIC   2-edge      timer
  1:          1   IO-APIC   1-edge      eth10
  2:          1   IO-APIC   1-edge      Xen-dyn
  3:          1   IO-APIC   1-edge      eth2
  4:          1   IO-APIC   1-edge      eth0
  5:          1   IO-APIC   1-edge      ETH0
  6:          1   IO-APIC   1-edge      acpi
  7:          1   IO-APIC   1-edge      eth0
",
    )]);
    assert_eq!(
        labels(t.path(), &["--sort", "name"]),
        ["6", "5", "4", "7", "3", "1", "0", "2"]
    );
}

#[test]
fn threshold_hides_rows_below_a_total_and_rows_without_interrupts() {
    let t = tree();
    let r = t.path();
    assert_eq!(labels(r, &["--threshold", "15"]), ["0", "24", "LOC"]);
    assert_eq!(labels(r, &["--threshold", "0"]), ["0", "24", "LOC", "ERR"]);
    assert_eq!(
        labels(r, &["--threshold", "5", "--cpus", "1"]),
        ["0", "LOC"]
    );
    assert_eq!(
        labels(r, &["--threshold", "4", "--sort", "irq"]),
        ["0", "24", "LOC"]
    );
    // a table shows the same rows
    let out = irqlab()
        .args(["show", "--threshold", "100", "--root"])
        .arg(r)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("LOC:") && text.contains(" 24:"), "{text}");
    assert!(!text.contains(" 0:") && !text.contains("ERR:"), "{text}");
}

#[test]
fn threshold_over_an_interval_is_a_rate() {
    // a frozen tree: every rate is 0, so any threshold hides every row
    let t = tree();
    assert!(labels(t.path(), &["-i", "20ms", "--threshold", "0"]).is_empty());
    assert_eq!(labels(t.path(), &["-i", "20ms", "--sort", "irq"]).len(), 5);
}

#[test]
fn bad_sort_or_threshold_is_a_usage_error() {
    let t = tree();
    for args in [
        &["--sort", "size"][..],
        &["--threshold", "-1"],
        &["--threshold", "lots"],
        &["--compact", "--pretty"],
    ] {
        let out = run(t.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn json_is_compact_when_piped_unless_pretty() {
    let t = tree();
    let compact = run(t.path(), &[]).stdout;
    let forced = run(t.path(), &["--compact"]).stdout;
    let pretty = run(t.path(), &["--pretty"]).stdout;
    assert_eq!(compact, forced);
    assert_eq!(compact.iter().filter(|&&b| b == b'\n').count(), 1);
    assert!(pretty.iter().filter(|&&b| b == b'\n').count() > 10);
    assert!(pretty.len() > compact.len());
    let a: serde_json::Value = serde_json::from_slice(&compact).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&pretty).unwrap();
    assert_eq!(a, b);
}
