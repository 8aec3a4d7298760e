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

/// The streamed document equals the report's, and says the same on
/// stderr, without `--affinity` and with it.
fn same_document(root: &Path, args: &[&str]) {
    for affinity in [&[][..], &["--affinity"]] {
        let args = [args, affinity].concat();
        let streamed = show(root, &[&args[..], &["--compact"]].concat());
        let whole = show(root, &[&args[..], &["--pretty"]].concat());
        assert_eq!(streamed.0, 0, "{args:?}: {}", streamed.2);
        assert_eq!(whole.0, 0, "{args:?}: {}", whole.2);
        assert_eq!(streamed.1.lines().count(), 1, "{args:?}");
        assert_eq!(streamed.1, minify(&whole.1) + "\n", "{args:?}");
        assert_eq!(streamed.2, whole.2, "{args:?}");
    }
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
fn streamed_json_of_a_large_machine_is_the_reports_document() {
    // 512 CPUs: both documents built on a heap put on a huge page
    // (tests/show_huge_heap.rs)
    let tree = common::synth_tree(&common::spec(512, 30));
    for args in [&[][..], &["--irq", "^NMI$|^1"], &["--threshold", "1000"]] {
        same_document(tree.path(), args);
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

/// Rows the kernel does not print but the parser reads (leading zeros,
/// 20-digit counts, tabs, a count glued to its description, a last count
/// with nothing after it, rows of one count, of none, of too few, runs of
/// zeros of every length up to 150 columns): the streamed document, whose
/// counts go from the file's digits to JSON as they are read, is the
/// report's, whatever the filter and threshold.
#[test]
fn streamed_json_of_odd_rows_is_the_reports_document() {
    let mut rng = irqlab_core::rng::Rng::new(26);
    for case in 0..16 {
        let ncpus = [1, 3, 16, 17, 33, 40, 70, 150][case % 8];
        let mut text = String::from("   ");
        for c in 0..ncpus {
            text += &format!("        CPU{c}");
        }
        text.push('\n');
        for row in 0..60 {
            let label = match row % 9 {
                0 => "ERR".to_string(),
                1 => "LOC".to_string(),
                2 => "IPI0".to_string(),
                _ => format!("{row}"),
            };
            let numbered = label.parse::<u32>().is_ok();
            let n = match (numbered, rng.next_u64() % 6) {
                (true, _) => ncpus,
                (false, 0) => 0,
                (false, 1) => 1,
                (false, 2) => ncpus / 2,
                _ => ncpus,
            };
            text += &format!("{label:>4}:");
            // a run of zeros of some length, then anything
            let zeros = (rng.next_u64() % 160) as usize;
            for k in 0..n {
                let v: String = match rng.next_u64() % 16 {
                    _ if k < zeros => "0".into(),
                    0 => format!("00{}", rng.next_u64() % 1000),
                    1 => "18446744073709551615".into(),
                    2 => format!("{}", rng.next_u64() % 10_000_000_000),
                    3 => "000".into(),
                    4 => format!("{}", u64::from(u32::MAX) + 1),
                    5..=7 => format!("{}", rng.next_u64() % 10),
                    _ => "0".into(),
                };
                let sep = match rng.next_u64() % 30 {
                    0 => "\t".to_string(),
                    1 => "  ".to_string(),
                    _ => " ".to_string(),
                };
                text += &format!("{sep}{v:>10}");
            }
            match rng.next_u64() % 5 {
                0 => {}
                1 => text += "IO-APIC 9-fasteoi acpi",
                2 => text += "\r",
                _ => text += &format!("  IR-PCI-MSI {row}-edge      eth{row}, ahci"),
            }
            text.push('\n');
        }
        let dir = common::tree_with(&[("proc/interrupts", text.as_bytes())]);
        for args in [
            &[][..],
            &["--threshold", "5"],
            &["--threshold", "1e19"],
            &["--irq", "LOC|eth1"],
            &["--exclude", "ahci"],
            &["--cpus", "0,2"],
        ] {
            same_document(dir.path(), args);
        }
    }
}

#[test]
fn a_bad_line_fails_before_anything_is_printed() {
    let h = "           CPU0       CPU1       \n";
    for (bad, found) in [
        (" 2:  1 x  IO-APIC 2-edge x", 1),
        (" 2:  1 2 3  IO-APIC 2-edge x", 3),
    ] {
        let body = format!("{h} 1:  1 2  IO-APIC 1-edge i8042\n{bad}\n");
        let dir = common::tree_with(&[("proc/interrupts", body.as_bytes())]);
        for form in ["--compact", "--pretty"] {
            let (code, out, err) = show(dir.path(), &[form]);
            assert_eq!(code, 1, "{bad:?} {form}: {err}");
            assert!(out.is_empty(), "{bad:?} {form}: {out}");
            let want = format!(
                "proc/interrupts:3: expected 2 per-CPU counts (one per header CPU), found {found}"
            );
            assert!(err.contains(&want), "{bad:?} {form}: {err}");
        }
    }
}

/// Each numbered row's affinity on a tree of many IRQs: the
/// effective list, else the configured one, else none — each row its own
/// IRQ's files, whatever the others hold (empty, absent, a FIFO, a
/// directory), in the streamed and the whole-report document alike.
#[test]
fn affinity_of_many_irqs_is_each_irqs_own() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("synth");
    common::synth_into(&common::spec(4, 300), &root);
    let irq_dir = root.join("proc/irq");
    let mut want = std::collections::BTreeMap::new();
    let mut k = 0;
    for e in std::fs::read_dir(&irq_dir).unwrap() {
        let e = e.unwrap();
        let Ok(irq) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let (eff, smp) = (
            e.path().join("effective_affinity_list"),
            e.path().join("smp_affinity_list"),
        );
        k += 1;
        let expect = match k % 6 {
            0 => {
                std::fs::write(&eff, "").unwrap();
                std::fs::write(&smp, format!("{irq}\n")).unwrap();
                Some(irq.to_string())
            }
            1 => {
                let _ = std::fs::remove_file(&eff);
                std::fs::write(&smp, format!("0-{}\n", irq % 4)).unwrap();
                Some(format!("0-{}", irq % 4))
            }
            2 => {
                let _ = std::fs::remove_file(&eff);
                let _ = std::fs::remove_file(&smp);
                None
            }
            3 => {
                let _ = std::fs::remove_file(&eff);
                nix::unistd::mkfifo(&eff, nix::sys::stat::Mode::S_IRWXU).unwrap();
                std::fs::write(&smp, "3\n").unwrap();
                Some("3".to_string())
            }
            4 => {
                let _ = std::fs::remove_file(&eff);
                std::fs::create_dir(&eff).unwrap();
                let _ = std::fs::remove_file(&smp);
                None
            }
            _ => {
                std::fs::write(&eff, format!(" {}\n", irq % 3)).unwrap();
                Some((irq % 3).to_string())
            }
        };
        want.insert(irq, expect);
    }
    assert!(want.len() > 200, "{}", want.len());
    same_document(&root, &[]);
    let (code, out, err) = show(&root, &["--compact", "--affinity"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut seen = 0;
    for row in doc["interrupts"]["rows"].as_array().unwrap() {
        let Some(irq) = row["irq"].as_u64() else {
            continue;
        };
        let got = row
            .get("affinity")
            .and_then(|a| a.as_str())
            .map(str::to_string);
        assert_eq!(Some(&got), want.get(&(irq as u32)), "IRQ {irq}");
        seen += 1;
    }
    assert!(seen > 200, "{seen}");
}

/// Puts a sysctl's old value back when dropped (also when the test fails).
struct Restore(&'static str, String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, &self.1);
    }
}

/// With io_uring refused to every process (`kernel.io_uring_disabled=2`:
/// `io_uring_setup` fails with EPERM) `show` reads the affinity files the
/// plain way, silently, and prints the same document.
#[test]
fn show_json_is_the_same_with_io_uring_disabled() {
    let test = "show_json_stream: show_json_is_the_same_with_io_uring_disabled";
    if !common::host_changes_allowed(test) {
        return;
    }
    const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";
    let Ok(old) = std::fs::read_to_string(SYSCTL) else {
        visible!("{test}: SKIPPED: no {SYSCTL}");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("synth");
    common::synth_into(&common::spec(8, 150), &root);
    let allowed = show(&root, &["--compact", "--affinity"]);
    assert_eq!(allowed.0, 0, "{}", allowed.2);
    assert!(allowed.1.contains("\"affinity\":"));
    let restore = Restore(SYSCTL, old);
    if std::fs::write(SYSCTL, "2").is_err() {
        visible!("{test}: SKIPPED: cannot write {SYSCTL} (not root?)");
        return;
    }
    let refused = show(&root, &["--compact", "--affinity"]);
    drop(restore);
    assert_eq!(refused, allowed);
}
