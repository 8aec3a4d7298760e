//! `show --format json` of one snapshot, compact and unsorted, is written
//! from rows serialized as they are parsed; every other
//! form (`--pretty`, `--sort`) from the whole report. The two must be the
//! same document byte for byte (whitespace aside), with filters, the
//! threshold, affinity, offline CPUs and missing files; the same warnings
//! and notes; and a bad line must still fail before anything is printed.

#![allow(clippy::unwrap_used)]

mod common;
use std::path::Path;

/// `show --root ROOT --format json ARGS`: exit code, stdout, stderr.
fn show(root: &Path, args: &[&str]) -> (i32, String, String) {
    common::show(root, &[&["--format", "json"], args].concat())
}

/// JSON without the whitespace outside strings (what `--pretty` adds).
fn minify(json: &str) -> String {
    let (mut out, mut in_str, mut escaped) = (String::new(), false, false);
    for c in json.chars() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The streamed document equals the report's, and says the same on stderr.
fn same_document(root: &Path, args: &[&str]) {
    let streamed = show(root, &[args, &["--compact"]].concat());
    let whole = show(root, &[args, &["--pretty"]].concat());
    assert_eq!(streamed.0, 0, "{args:?}: {}", streamed.2);
    assert_eq!(whole.0, 0, "{args:?}: {}", whole.2);
    assert_eq!(streamed.1.lines().count(), 1, "{args:?}");
    assert_eq!(streamed.1, minify(&whole.1) + "\n", "{args:?}");
    assert_eq!(streamed.2, whole.2, "{args:?}");
}

#[test]
fn streamed_json_is_the_reports_document() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = common::spec(24, 40);
    spec.offline = vec![5, 17];
    let synth = dir.path().join("synth");
    common::synth_into(&spec, &synth);
    let vm = common::fixture("vm-2cpu-6.18");
    for root in [synth.as_path(), vm.as_path()] {
        for args in [
            &[][..],
            &["--cpus", "1-3,17"],
            &["--cpus", "0,99"],
            &["--irq", "timer|LOC|^1$"],
            &["--irq", "^nothing-matches$"],
            &["--threshold", "1000"],
            &["--irq", "LOC|NMI", "--cpus", "2", "--threshold", "1"],
        ] {
            same_document(root, args);
        }
    }
}

#[test]
fn streamed_json_with_missing_files_is_the_reports_document() {
    let vm = common::fixture("vm-2cpu-6.18");
    let interrupts = std::fs::read(vm.join("proc/interrupts")).unwrap();
    let softirqs = std::fs::read(vm.join("proc/softirqs")).unwrap();
    let only_irqs = common::tree_with(&[("proc/interrupts", &interrupts)]);
    let no_irqs = common::tree_with(&[("proc/softirqs", &softirqs)]);
    for root in [only_irqs.path(), no_irqs.path()] {
        same_document(root, &[]);
        same_document(root, &["--cpus", "1"]);
    }
}

#[test]
fn a_bad_line_fails_before_anything_is_printed() {
    let h = "           CPU0       CPU1       \n";
    let body = format!("{h} 1:  1 2  IO-APIC 1-edge i8042\n 2:  1 x  IO-APIC 2-edge x\n");
    let dir = common::tree_with(&[("proc/interrupts", body.as_bytes())]);
    let (code, out, err) = show(dir.path(), &["--compact"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("proc/interrupts:3: expected 2 per-CPU counts"),
        "{err}"
    );
}
