//! Edge cases of docs/formats/edge-cases.md, one test each, plus malformed input.

use super::*;

const H2: &str = "           CPU0       CPU1       \n";

fn parse(s: &str) -> Interrupts {
    Interrupts::parse(s.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
}

fn one(line: &str) -> IrqRow {
    parse(&format!("{H2}{line}\n")).rows()[0].clone()
}

fn err(s: &[u8]) -> ParseError {
    Interrupts::parse(s).unwrap_err()
}

#[test]
fn a_cpu_twice_in_the_header_is_an_error() {
    let e = err(b"       CPU0   CPU1   CPU2   CPU1\n  1:  1  2  3  4  IO-APIC  1-edge  i8042\n");
    assert_eq!(e.line, 1);
    assert_eq!(
        e.kind,
        ErrorKind::DuplicateCpu {
            cpu: 1,
            in_header: true
        }
    );
    assert_eq!(
        e.to_string(),
        "/proc/interrupts:1: duplicate CPU1 in the header"
    );
    let e = err(b"  CPU3  CPU3\n");
    assert_eq!(
        e.kind,
        ErrorKind::DuplicateCpu {
            cpu: 3,
            in_header: true
        }
    );
    // ids that do not rise but differ are the kernel's business
    assert_eq!(parse("  CPU2  CPU0\n").cpus, [2, 0]);
}

#[test]
fn header_with_cpu_gaps() {
    let m =
        parse("           CPU0       CPU2       CPU3       \n 1:  1 2 3  IO-APIC 1-edge  i8042\n");
    assert_eq!(m.cpus, vec![0, 2, 3]);
    assert_eq!(m.rows()[0].counts[..], [1, 2, 3]);
}

#[test]
fn same_row_in_every_era() {
    for line in [
        " 24:          1          0   IO-APIC   5-edge      ACPI:Ged",
        " 24:          1          0  IO-APIC   5-edge      ACPI:Ged",
        "  24:          1          0  IO-APIC                  5-edge      ACPI:Ged",
    ] {
        let r = one(line);
        assert_eq!((r.irq, r.counts.to_vec()), (Some(24), vec![1, 0]));
        assert_eq!((r.parts.chip.as_str(), r.parts.hwirq), ("IO-APIC", Some(5)));
        assert_eq!(
            (r.parts.flow.as_str(), r.parts.actions.as_str()),
            ("edge", "ACPI:Ged")
        );
    }
}

#[test]
fn long_chip_single_space() {
    let r = one(" 28:          0          0 PCI-MSIX-0000:00:01.0   0-edge      virtio0-config");
    assert_eq!(r.parts.chip, "PCI-MSIX-0000:00:01.0");
    assert_eq!(r.parts.actions, "virtio0-config");
}

#[test]
fn chip_glued_to_last_count() {
    let r = one(" 27:       1966       1900GIC-0  27 Level     arch_timer");
    assert_eq!(r.counts[..], [1966, 1900]);
    assert_eq!((r.parts.chip.as_str(), r.parts.hwirq), ("GIC-0", Some(27)));
}

#[test]
fn ten_digit_count() {
    let r = one(" 16: 4000000000          7  IO-APIC  16-fasteoi   ehci_hcd:usb1, i801_smbus");
    assert_eq!(r.counts[..], [4000000000, 7]);
    assert_eq!(
        r.parts.actions().collect::<Vec<_>>(),
        vec!["ehci_hcd:usb1", "i801_smbus"]
    );
}

#[test]
fn wide_irq_and_chip_with_spaces() {
    let m = parse("           CPU0       CPU1       CPU2       CPU3       \n1234: 1234567890          0          0          3 Hyper-V PCIe MSI 524288-edge      aerdrv, PCIe PME\n");
    let r = &m.rows()[0];
    assert_eq!(r.irq, Some(1234));
    assert_eq!(r.total(), 1234567893);
    assert_eq!(
        (r.parts.chip.as_str(), r.parts.hwirq),
        ("Hyper-V PCIe MSI", Some(524288))
    );
}

#[test]
fn no_chip_no_domain() {
    let r = one("  9:          0          0     None      acpi");
    assert_eq!(
        (r.parts.chip.as_str(), r.parts.actions.as_str()),
        ("None", "acpi")
    );
}

#[test]
fn e1_row_without_action() {
    let r = one(" 17:          5          0   IO-APIC  17-fasteoi ");
    assert_eq!(
        (r.parts.flow.as_str(), r.parts.actions.as_str()),
        ("fasteoi", "")
    );
}

#[test]
fn trigger_column_hwirq_not_a_count() {
    let r = one(" 11:      12345       6789    GICv3  30 Level     arch_timer");
    assert_eq!(r.counts[..], [12345, 6789]);
    assert_eq!(
        (r.parts.hwirq, r.parts.trigger.as_str()),
        (Some(30), "Level")
    );
}

#[test]
fn negative_hwirq() {
    let r = one(" 61:          0          0   PCI-MSI -2147483648-edge      nvme0q1");
    assert_eq!(r.parts.hwirq, Some(-2147483648));
}

#[test]
fn x86_arch_lines_old_and_new() {
    let m = parse(&format!(
        "{H2}NMI:          0          0   Non-maskable interrupts\nERR:          0\nMIS:          0\n NMI:          1          2  Non-maskable interrupts\nVPMI:          0          0  Perf Guest Mediated PMI\n ERR:          0          1  PIC/APIC error interrupts\n"
    ));
    let r = m.rows();
    assert_eq!(
        (r[0].label.as_str(), r[0].shape, r[0].description.as_str()),
        ("NMI", Shape::PerCpu, "Non-maskable interrupts")
    );
    assert_eq!((r[1].label.as_str(), r[1].shape), ("ERR", Shape::Single));
    assert_eq!(r[1].per_cpu(), None);
    assert_eq!((r[3].label.as_str(), r[3].total()), ("NMI", 3));
    assert_eq!(r[4].label, "VPMI");
    assert_eq!(
        (r[5].shape, r[5].description.as_str()),
        (Shape::PerCpu, "PIC/APIC error interrupts")
    );
}

#[test]
fn arm64_ipi_glued_and_err() {
    let m = parse(&format!("{H2}IPI0:1234567890         12       Rescheduling interrupts\nIPI1: 1234567890         12       Function call interrupts\nErr:          0\n"));
    let r = m.rows();
    assert_eq!(
        (r[0].label.as_str(), r[0].counts.to_vec()),
        ("IPI0", vec![1234567890, 12])
    );
    assert_eq!(r[0].description, "Rescheduling interrupts");
    assert_eq!(r[1].counts[..], [1234567890, 12]);
    assert_eq!((r[2].label.as_str(), r[2].shape), ("Err", Shape::Single));
}

#[test]
fn loongarch_description_with_numbers() {
    let r = one("IPI0:          5         12 LoongArch  1  Rescheduling interrupts");
    assert_eq!(r.counts[..], [5, 12]);
    assert_eq!(r.description, "LoongArch  1  Rescheduling interrupts");
}

#[test]
fn powerpc_duplicate_labels_kept_in_order() {
    let m = parse(&format!("{H2}LOC:        100        200   Local timer interrupts for timer event device\nLOC:          3          4   Local timer interrupts for others\n"));
    assert_eq!(m.rows().len(), 2);
    assert_eq!(m.rows()[1].description, "Local timer interrupts for others");
}

#[test]
fn arm_fiq_without_counts() {
    let r = one("FIQ:              usb_fiq");
    assert_eq!(
        (r.shape, r.description.as_str()),
        (Shape::NoCounts, "usb_fiq")
    );
}

#[test]
fn s390_class_and_subclass_lines() {
    let m = parse(&format!("{H2}EXT:        100        200 \nI/O:          1          2 \nCLK:        100        200   [EXT] Clock Comparator\n 64:          7          0   PCI-MSI  mlx5_async0@pci:0001:00:00.0\n"));
    let r = m.rows();
    assert_eq!(
        (r[0].label.as_str(), r[0].description.as_str()),
        ("EXT", "")
    );
    assert_eq!(r[1].label, "I/O");
    assert_eq!(r[2].description, "[EXT] Clock Comparator");
    assert_eq!(r[3].parts.chip, "PCI-MSI");
    let classes: Vec<_> = r.iter().map(IrqRow::class).collect();
    assert_eq!(classes, [None, None, Some("EXT"), None]);
}

#[test]
fn class_of_names_only_a_bracketed_arch_class() {
    assert_eq!(class_of(None, "[EXT] Clock Comparator"), Some("EXT"));
    assert_eq!(class_of(None, "[I/O] DASD"), Some("I/O"));
    assert_eq!(class_of(Some(3), "[EXT] x"), None);
    for d in [
        "",
        "Local timer interrupts",
        "[] x",
        "[A B] x",
        "[EXT x",
        "x [EXT] y",
    ] {
        assert_eq!(class_of(None, d), None, "{d:?}");
    }
}

#[test]
fn hotplug_mid_file_is_an_error_naming_the_line() {
    let e = err(b"           CPU0       CPU1       CPU2       CPU3       \n 1:  1 2 3 4  IO-APIC 1-edge  i8042\n 8:  1 2 3  IO-APIC 8-edge  rtc0\n");
    assert_eq!(e.line, 3);
    assert_eq!(
        e.kind,
        ErrorKind::CountMismatch {
            expected: 4,
            found: 3
        }
    );
    assert!(e
        .to_string()
        .starts_with("/proc/interrupts:3: expected 4 per-CPU counts"));
}

/// Both parses of `text` (whole text, line by line) fail alike; the error.
fn err_both(text: &[u8]) -> ParseError {
    let whole = err(text);
    let mut lp = LineParser::new();
    let mut row = IrqRow::default();
    let by_line = crate::scan::lines(text)
        .find_map(|(_, l)| lp.line(l, &mut row).err())
        .unwrap_or_else(|| panic!("no error line by line: {text:?}"));
    assert_eq!(whole, by_line);
    whole
}

#[test]
fn a_count_that_is_not_a_number_is_named_with_its_cpu_and_column() {
    // CPU1 and CPU4 offline: the CPU is the header's id, not the column
    let h = "           CPU0       CPU2       CPU3       CPU5\n";
    let e = err_both(
        format!("{h} 1:  1 2 3 4  IO-APIC 1-edge  i8042\n 7:  1 2 14x453 4  IO-APIC 7-edge  x\n")
            .as_bytes(),
    );
    assert_eq!(
        (e.line, e.kind.clone()),
        (
            3,
            ErrorKind::BadCount {
                cpu: 3,
                column: 3,
                what: "a count",
                found: "14x453".into()
            }
        )
    );
    assert_eq!(
        e.to_string(),
        "/proc/interrupts:3: expected a count for CPU3 (a decimal number; column 3), found \"14x453\""
    );
    let e = err_both(format!("{h} 7:  -5 2 3 4  IO-APIC 7-edge  x\n").as_bytes());
    assert_eq!(
        e.to_string(),
        "/proc/interrupts:2: expected a count for CPU0 (a decimal number; column 1), found \"-5\""
    );
    let e = err_both(format!("{h} 7:  1 2 3 +4  IO-APIC 7-edge  x\n").as_bytes());
    assert!(
        e.to_string()
            .contains("for CPU5 (a decimal number; column 4), found \"+4\""),
        "{e}"
    );
    // a count too big for 64 bits names its CPU too
    let e = err_both(format!("{h} 7:  1 99999999999999999999999 3 4  IO-APIC\n").as_bytes());
    assert_eq!(
        e.to_string(),
        "/proc/interrupts:2: a count for CPU2 (column 2) exceeds the 64-bit range \
         (at most 18446744073709551615), found \"99999999999999999999999\""
    );
    // one past u64::MAX too, in the last column
    let e = err_both(format!("{h} 7:  1 2 3 18446744073709551616  IO-APIC\n").as_bytes());
    assert!(
        e.to_string()
            .contains("CPU5 (column 4) exceeds the 64-bit range"),
        "{e}"
    );
    // non-printable bytes are escaped, a huge token clipped
    let e = err_both(format!("{h} 7:  1 2 3\u{1b}[31m 4  IO-APIC\n").as_bytes());
    assert!(e.to_string().ends_with("found \"3\\u{1b}[31m\""), "{e}");
    let mut huge = format!("{h} 7:  1 2 3").into_bytes();
    huge.extend(std::iter::repeat_n(b'x', 500_000));
    huge.extend(b" 4\n");
    let shown = err_both(&huge).to_string();
    assert!(
        shown.ends_with("found \"3xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…\""),
        "{shown}"
    );
    // a row that ends early (hotplug, a cut line) is still that error
    for short in [
        " 7:  1 2 3  IO-APIC 7-edge  x\n",
        " 7:  1 2 3\n",
        " 7:  1 x  IO-APIC\n",
    ] {
        let e = err_both(format!("{h}{short}").as_bytes());
        assert!(
            matches!(e.kind, ErrorKind::CountMismatch { expected: 4, .. }),
            "{short:?}: {e}"
        );
    }
}

#[test]
fn a_numbered_row_with_more_counts_than_header_cpus_is_an_error() {
    // CPU1 offline in the header, a row read after it came back (hotplug
    // between two chunks of the file): the extra count is not the chip
    let h = "           CPU0       CPU2       CPU3\n";
    for (extra, found) in [
        (
            "  8:         68          7          1          0  IO-APIC   8-edge  rtc0",
            4,
        ),
        (
            "  8:         68          7          1          0          5  IO-APIC",
            5,
        ),
        ("  8: 68 7 1 0", 4),
        ("  8: 68 7 1 0\t9\r", 5),
        (
            "  8:         68          7          1          0     None",
            4,
        ),
    ] {
        let e = err_both(format!("{h}  1:  1 2 3  IO-APIC 1-edge  i8042\n{extra}\n").as_bytes());
        assert_eq!(
            (e.line, e.kind.clone()),
            (3, ErrorKind::CountMismatch { expected: 3, found }),
            "{extra:?}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "/proc/interrupts:3: expected 3 per-CPU counts (one per header CPU), found {found}"
            )),
            "{e}"
        );
    }
    // what follows the counts is not a bare number: the description, as
    // before (a glued chip of 6.13-rc1, a number glued to text, the hwirq
    // after the chip); rows without a number keep any count of numbers
    for (ok, desc) in [
        (
            " 27:       1966       1900GIC-0  27 Level     arch_timer",
            "GIC-0  27 Level     arch_timer",
        ),
        (
            " 27:       1966       1900 7GIC  27 Level",
            "7GIC  27 Level",
        ),
        (" 27:       1966       1900 7-edge  x", "7-edge  x"),
        (
            " 11:      12345       6789    GICv3  30 Level     arch_timer",
            "GICv3  30 Level     arch_timer",
        ),
        (
            "IPI0:          5         12 LoongArch  1  Rescheduling",
            "LoongArch  1  Rescheduling",
        ),
        (
            "LOC:          5         12          7   Local timer interrupts",
            "Local timer interrupts",
        ),
    ] {
        let row = one(ok);
        assert_eq!(row.description, desc, "{ok:?}");
    }
    let row = one("IPI0:          5         12 7  Rescheduling");
    assert_eq!(
        (row.shape, row.description.as_str()),
        (Shape::Irregular, "Rescheduling")
    );
}

#[test]
fn very_long_lines() {
    let n = 1200;
    let mut s = String::from("   ");
    for c in 0..n {
        s.push_str(&format!(" CPU{c:<7}"));
    }
    s.push_str("\n 1:");
    for c in 0..n {
        s.push_str(&format!(" {c:>10}"));
    }
    s.push_str("  IO-APIC    1-edge      i8042\n");
    let m = parse(&s);
    assert_eq!(m.cpus.len(), n);
    assert_eq!(m.rows()[0].total(), (0..n as u64).sum());
}

#[test]
fn identity_change_is_visible_in_parts() {
    let a = one(" 45:          1          0  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3");
    let b = one(" 45:          1          0  PCI-MSIX-0000:5e:00.1   2-edge      nvme1q2");
    assert_ne!(a.parts, b.parts);
}

#[test]
fn empty_lines_and_crlf_are_tolerated() {
    let m = parse("           CPU0       CPU1       \r\n\n 1:  1 2  IO-APIC 1-edge  i8042\r\n   \nERR:          0\n");
    assert_eq!(m.rows().len(), 2);
    assert_eq!(m.rows()[0].parts.actions, "i8042");
}

#[test]
fn malformed_inputs_name_file_line_and_expectation() {
    assert_eq!(err(b"").kind, ErrorKind::Empty);
    assert_eq!(err(b"   \n").kind, ErrorKind::Empty);
    let e = err(b"\n\n   \n");
    assert_eq!(e.kind, ErrorKind::Empty);
    let e = err(b"hello world\n");
    assert_eq!(
        (e.line, e.kind.clone()),
        (1, ErrorKind::BadHeaderCell("hello".into()))
    );
    let e = err(b"           CPU0       CPU1\n 1:  1\n");
    assert_eq!(e.line, 2);
    let e = err(b"           CPU0       CPU1\n 1:  1 x  IO-APIC\n");
    assert!(matches!(e.kind, ErrorKind::CountMismatch { .. }));
    let e = err(b"           CPU0\nno colon here\n");
    assert_eq!((e.line, e.kind), (2, ErrorKind::MissingColon));
    let e = err(b"           CPU0\n 1: 99999999999999999999999  X\n");
    assert!(matches!(e.kind, ErrorKind::CountTooLarge { cpu: 0, .. }));
    let e = err(&[0xff, 0x00, 0x13, 0x80, b'\n', 0x01]);
    assert_eq!(e.line, 1);
    let mut big = b"           CPU0\n 1:".to_vec();
    big.extend(std::iter::repeat_n(b'7', 10 << 20));
    let e = err(&big);
    assert_eq!(
        (e.line, matches!(e.kind, ErrorKind::LineTooLong { .. })),
        (2, true)
    );
}

#[test]
fn parse_into_reuses_and_resets() {
    let mut m = Interrupts::default();
    m.parse_into(A.as_bytes()).unwrap();
    assert_eq!(m.rows().len(), 3);
    m.parse_into(format!("{H2}ERR:          0\n").as_bytes())
        .unwrap();
    assert_eq!(m.rows().len(), 1);
    assert!(m.parse_into(b"garbage").is_err());
    assert!(m.rows().is_empty());
    m.parse_into(A.as_bytes()).unwrap();
    assert_eq!(m, parse(A));
}

#[test]
fn parse_into_reuse_matches_a_fresh_parse() {
    // same description while the row flips between numbered and arch, with
    // failed parses in between (they leave half-updated rows behind)
    let desc = "IO-APIC   5-edge      ACPI:Ged";
    let numbered = format!("{H2} 24:          1          0  {desc}\n");
    let arch = format!("{H2}NMI:          1          0  {desc}\n");
    let broken = format!("{H2} 24:          1  x\n");
    let mut m = Interrupts::default();
    let seq = [
        &numbered, &numbered, &arch, &numbered, &broken, &arch, &broken, &numbered, &arch,
    ];
    for text in seq {
        match Interrupts::parse(text.as_bytes()) {
            Ok(fresh) => {
                m.parse_into(text.as_bytes()).unwrap();
                assert_eq!(m, fresh, "{text}");
            }
            Err(_) => assert!(m.parse_into(text.as_bytes()).is_err()),
        }
    }
}

const A: &str = "           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\nLOC:       5901       6390   Local timer interrupts\nERR:          0\n";

#[test]
fn count_out_of_the_kernel_range_is_a_note_not_an_error() {
    let text = "           CPU0       CPU1\n 24:          0 18446744073709551615  IO-APIC   5-edge      ACPI:Ged\nERR:          99999999999\n";
    let m = Interrupts::parse(text.as_bytes()).unwrap();
    let note = m.note().expect("a note");
    assert_eq!((note.file, note.line), (FILE, 2));
    let shown = note.to_string();
    assert!(
        shown.contains("18446744073709551615") && shown.contains("4294967295"),
        "{shown}"
    );
    // arm64's Err is 64-bit (`unsigned long`): no note
    let ok = Interrupts::parse(b"           CPU0       CPU1\nErr:          99999999999\n").unwrap();
    assert!(ok.note().is_none());
    let mut reused = m.clone();
    reused
        .parse_into(b"           CPU0\n 1:          5  IO-APIC   1-edge      i8042\n")
        .unwrap();
    assert!(reused.note().is_none(), "cleared by the next parse");
}

#[test]
fn line_parser_is_parse_into_line_by_line() {
    let text = b"\n           CPU0       CPU3\n  0:         44          5   IO-APIC   2-edge      timer\n\nNMI:          1          2   Non-maskable interrupts\nERR:          0\n";
    let whole = Interrupts::parse(text).unwrap();
    let mut lp = LineParser::new();
    let mut row = IrqRow::default();
    let mut rows = Vec::new();
    for (_, l) in crate::scan::lines(text) {
        if lp.line(l, &mut row).unwrap() {
            rows.push(row.clone());
        }
    }
    lp.finish().unwrap();
    assert_eq!(lp.cpus(), &[0, 3]);
    assert_eq!(rows, whole.rows());
    // the same errors, at the same lines
    let bad = b"  CPU0\n  0: x IO-APIC\n";
    let whole = Interrupts::parse(bad).unwrap_err();
    let mut lp = LineParser::new();
    let e = crate::scan::lines(bad)
        .find_map(|(_, l)| lp.line(l, &mut row).err())
        .unwrap();
    assert_eq!(e, whole);
    assert_eq!(
        LineParser::new().finish().unwrap_err(),
        Interrupts::parse(b"\n \n").unwrap_err()
    );
    let mut lp = LineParser::new();
    lp.line(b"CPU0", &mut row).unwrap();
    lp.line(b"1: 4294967296 IO-APIC", &mut row).unwrap();
    assert!(lp.note().is_some());
}

#[test]
fn refill_is_parse_into_and_an_abandoned_one_leaves_no_rows() {
    let text =
        b"   CPU0  CPU1\n  1:  10  20  IO-APIC 1-edge  i8042\nLOC:  1  2  Local timer interrupts\n";
    let mut m = Interrupts::default();
    let mut r = m.refill();
    for (_, l) in crate::scan::lines(text) {
        r.line(l).unwrap();
    }
    r.finish().unwrap();
    assert_eq!(m, Interrupts::parse(text).unwrap());
    let mut r = m.refill();
    r.line(b"   CPU0  CPU1").unwrap();
    r.line(b"  1:  10  20  IO-APIC 1-edge  i8042").unwrap();
    drop(r);
    assert!(m.rows().is_empty());
    assert_eq!(m.cpus, [0, 1]);
    let mut r = m.refill();
    assert!(r.line(b"   CPU0  CPU1").is_ok());
    assert!(r.line(b"  1:  x").is_err());
    drop(r);
    assert!(m.rows().is_empty());
    assert!(m.refill().finish().is_err());
}

fn refill_lines(m: &mut Interrupts, text: &str) -> Result<(), ParseError> {
    let mut r = m.refill();
    for (_, l) in crate::scan::lines(text.as_bytes()) {
        r.line(l)?;
    }
    r.finish()
}

const TWO: &str =
    "   CPU0  CPU1\n  1:  10  20  IO-APIC 1-edge  i8042\nLOC:  1  2  Local timer interrupts\n";

#[test]
fn a_refill_takes_an_unchanged_line_as_its_row_stands() {
    let mut m = Interrupts::default();
    refill_lines(&mut m, TWO).unwrap();
    // marked behind the accessors' back: only a row taken as it stands
    // keeps the mark
    m.rows[0].description = "kept".into();
    m.rows[1].description = "kept".into();
    let next = TWO.replace("LOC:  1  2", "LOC:  3  4");
    refill_lines(&mut m, &next).unwrap();
    assert_eq!(m.rows()[0].description, "kept");
    assert_eq!(m.rows()[1].description, "Local timer interrupts");
    assert_eq!(m.rows()[1].counts[..], [3, 4]);
}

#[test]
fn a_new_header_or_rows_changed_otherwise_are_parsed_again() {
    let three = "  7:  1  2  3  IO-APIC 7-edge  x\n";
    let mut m = Interrupts::default();
    refill_lines(&mut m, &format!("   CPU0  CPU1\n{three}")).unwrap_err();
    refill_lines(&mut m, &format!("   CPU0  CPU1  CPU2\n{three}")).unwrap();
    assert_eq!(m.rows()[0].counts[..], [1, 2, 3]);
    // the same line under a header of two CPUs is an error again
    let e = refill_lines(&mut m, &format!("   CPU0  CPU1\n{three}")).unwrap_err();
    assert_eq!(e.line, 2);
    refill_lines(&mut m, &format!("   CPU0  CPU1  CPU2\n{three}")).unwrap();
    m.rows_mut()[0].counts[0] = 99;
    refill_lines(&mut m, &format!("   CPU0  CPU1  CPU2\n{three}")).unwrap();
    assert_eq!(m.rows()[0].counts[..], [1, 2, 3]);
    m.parse_into(TWO.as_bytes()).unwrap();
    m.rows[0].description = "stale".into();
    refill_lines(&mut m, TWO).unwrap();
    assert_eq!(m, Interrupts::parse(TWO.as_bytes()).unwrap());
}

#[test]
fn kept_lines_that_grow_and_shrink_move_and_are_compacted() {
    let mut rng = crate::rng::Rng::new(22);
    let mut m = Interrupts::default();
    let mut rows = [(0u64, 2u64); 40];
    let mut compacted = false;
    for round in 0..200 {
        let mut text = String::from("   CPU0  CPU1\n");
        for (irq, (count, width)) in rows.iter_mut().enumerate() {
            // most rows as they were; some count on, some change width
            if rng.chance(30) {
                *count += 1;
            }
            if rng.chance(20) {
                *width = rng.below(40);
            }
            let pad = " ".repeat(*width as usize);
            text.push_str(&format!(
                "{irq:>4}:{pad}{count}  7  IO-APIC  {irq}-edge  dev{irq}\n"
            ));
        }
        let before = m.seen.text.len();
        refill_lines(&mut m, &text).unwrap();
        assert_eq!(
            m,
            Interrupts::parse(text.as_bytes()).unwrap(),
            "round {round}"
        );
        assert!(m.seen.text.len() <= 2 * m.seen.used + 4096);
        compacted |= m.seen.text.len() < before;
    }
    assert!(compacted, "never compacted");
}

#[test]
fn an_unchanged_row_out_of_range_is_noted_again() {
    let text = "   CPU0  CPU1\n  1:  4294967296  20  IO-APIC 1-edge  i8042\n";
    let mut m = Interrupts::default();
    refill_lines(&mut m, text).unwrap();
    refill_lines(&mut m, &format!("\n{text}")).unwrap();
    let note = m.note().expect("a note");
    assert_eq!(note.line, 3);
}

/// The whole-text parse (which scans a row once, without looking for its
/// end first) and the line-by-line parse (`Refill`, `LineParser`) are two
/// paths through the same row parser: on wide rows with every count
/// width, separator and oddity the count scanner handles, they agree on
/// the rows, the note and the error.
mod whole_text_is_line_by_line {
    use super::*;
    use proptest::prelude::*;

    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => (0u64..10).prop_map(|v| format!("{v:>10} ")),
            3 => any::<u32>().prop_map(|v| format!("{v:>10} ")),
            1 => (0u64..1_000_000, 1usize..4).prop_map(|(v, w)| format!("{v}{}", " ".repeat(w))),
            1 => Just("\t7 ".to_string()),
            1 => Just("18446744073709551616 ".to_string()),
            1 => Just("99999999999 ".to_string()),
            1 => Just("1900GIC-0 ".to_string()),
            1 => Just("\r".to_string()),
            1 => Just("x ".to_string()),
        ]
    }

    fn row() -> impl Strategy<Value = String> {
        let label = prop_oneof![
            (0u32..2000).prop_map(|n| format!("{n:>4}:")),
            Just("NMI:".to_string()),
            Just("ERR:".to_string()),
            Just("  no colon here".to_string()),
            Just("".to_string()),
        ];
        let desc = prop_oneof![
            Just("  IR-PCI-MSI 327680-edge      eth0".to_string()),
            Just("   Non-maskable interrupts".to_string()),
            Just("   7  IO-APIC   7-edge  x".to_string()),
            Just(" 7".to_string()),
            Just("".to_string()),
        ];
        (label, prop::collection::vec(field(), 0..12), desc)
            .prop_map(|(l, f, d)| format!("{l}{}{d}", f.concat()))
    }

    fn text() -> impl Strategy<Value = String> {
        let header =
            (1usize..12).prop_map(|n| (0..n).map(|c| format!("       CPU{c}")).collect::<String>());
        (header, prop::collection::vec(row(), 0..8), any::<bool>()).prop_map(|(h, rows, nl)| {
            let mut t = format!("{h}\n{}", rows.join("\n"));
            if nl {
                t.push('\n');
            }
            t
        })
    }

    fn by_lines(text: &[u8]) -> Result<Interrupts, ParseError> {
        let mut m = Interrupts::default();
        let mut r = m.refill();
        for (_, l) in crate::scan::lines(text) {
            r.line(l)?;
        }
        r.finish()?;
        Ok(m)
    }

    /// A file, and the next one: some of its lines (the header too)
    /// replaced by another file's lines at the same place.
    fn then() -> impl Strategy<Value = (String, String)> {
        let pick = prop::collection::vec(any::<bool>(), 0..10);
        (text(), text(), pick).prop_map(|(a, c, pick)| {
            let other: Vec<&str> = c.split('\n').collect();
            let b: Vec<&str> = a
                .split('\n')
                .enumerate()
                .map(|(i, l)| match (pick.get(i), other.get(i)) {
                    (Some(true), Some(o)) => *o,
                    _ => l,
                })
                .collect();
            let b = b.join("\n");
            (a, b)
        })
    }

    fn refilled(m: &mut Interrupts, text: &[u8]) -> Result<(), ParseError> {
        let mut r = m.refill();
        for (_, l) in crate::scan::lines(text) {
            r.line(l)?;
        }
        r.finish()
    }

    /// `m` refilled from `text` holds what a fresh parse of it gives.
    fn holds_parse_of(m: &mut Interrupts, text: &str) -> Result<(), TestCaseError> {
        let got = refilled(m, text.as_bytes());
        match (Interrupts::parse(text.as_bytes()), got) {
            (Ok(want), Ok(())) => {
                prop_assert_eq!(&want.cpus, &m.cpus);
                prop_assert_eq!(want.rows(), m.rows());
                prop_assert_eq!(want.note(), m.note());
            }
            (want, got) => prop_assert_eq!(want.err(), got.err()),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// A refill takes the rows whose lines did not change as they
        /// stand: after any earlier file (parsed or failed) it still gives
        /// what a fresh parse gives, and so does going back.
        #[test]
        fn a_refill_after_another_file_is_a_fresh_parse((a, b) in then()) {
            let mut m = Interrupts::default();
            holds_parse_of(&mut m, &a)?;
            holds_parse_of(&mut m, &b)?;
            holds_parse_of(&mut m, &b)?;
            holds_parse_of(&mut m, &a)?;
        }

        #[test]
        fn agree(t in text()) {
            let whole = Interrupts::parse(t.as_bytes());
            let lines = by_lines(t.as_bytes());
            match (whole, lines) {
                (Ok(a), Ok(b)) => {
                    prop_assert_eq!(a.rows(), b.rows());
                    prop_assert_eq!(a.note(), b.note());
                }
                (a, b) => prop_assert_eq!(a.err(), b.err()),
            }
        }
    }
}

#[test]
fn short_rows_under_a_wide_header_reserve_no_count_buffers() {
    let mut text = String::from("CPU0");
    for c in 1..20_000 {
        text.push_str(&format!(" CPU{c}"));
    }
    text.push('\n');
    for k in 0..2_000 {
        text.push_str(&format!("X{k}: 7 x\n"));
    }
    let m = parse(&text);
    assert_eq!(m.rows().len(), 2_000);
    // a buffer per row sized for 20 000 CPUs would be 320 MB
    let reserved: usize = m.rows().iter().map(|r| r.counts.capacity()).sum();
    assert!(reserved < 100_000, "{reserved}");
}

/// The header's tokens as `split` on ASCII whitespace finds them (the
/// reference [`parse_cpu_header`] is held to).
fn header_by_split(line: &[u8]) -> Result<Vec<u32>, ErrorKind> {
    let mut cpus = Vec::new();
    for tok in line
        .split(u8::is_ascii_whitespace)
        .filter(|t| !t.is_empty())
    {
        let id = header_cell(tok)?;
        if cpus.contains(&id) {
            return Err(ErrorKind::DuplicateCpu {
                cpu: id,
                in_header: true,
            });
        }
        cpus.push(id);
    }
    if cpus.is_empty() {
        return Err(ErrorKind::NoCpuHeader);
    }
    Ok(cpus)
}

#[test]
fn cpu_header_reads_as_split_tokens() {
    let mut rng = crate::rng::Rng::new(26);
    let pieces: [&[u8]; 14] = [
        b" ",
        b"        ",
        b"\t",
        b"\n",
        b"\r",
        b"\x0c",
        b"\x0b",
        b"CPU",
        b"CPU7",
        b"CPU4294967295",
        b"CPU4294967296",
        b"cpu1",
        b"CPU00",
        b"9",
    ];
    let mut cases: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"   \t ".to_vec(),
        b"           CPU0       CPU1       ".to_vec(),
        b"CPU0\x0cCPU1\rCPU2\nCPU3".to_vec(),
        b"CPU0 CPU1\x0b".to_vec(),
    ];
    for _ in 0..3000 {
        let n = (rng.next_u64() % 12) as usize;
        let mut line = Vec::new();
        for _ in 0..n {
            line.extend_from_slice(pieces[(rng.next_u64() % pieces.len() as u64) as usize]);
        }
        cases.push(line);
    }
    for line in cases {
        let mut got = vec![99];
        let res = parse_cpu_header(&line, &mut got).map(|()| got);
        assert_eq!(
            res,
            header_by_split(&line),
            "{:?}",
            String::from_utf8_lossy(&line)
        );
    }
}

#[test]
fn short_rows_read_their_counts_as_wide_rows_do() {
    // `read_counts` with the short-row reader and with the fast path of
    // wide rows: the same counts, the same error, the same place where
    // the description starts, on kernel rows and on damaged ones
    let mut rng = crate::rng::Rng::new(26);
    let tails = [
        "  IO-APIC   5-edge      ACPI:Ged",
        "   Local timer interrupts",
        "",
        "GIC-0  27 Level     arch_timer",
        "\t3-edge",
        " 99999999999999999999999 x",
    ];
    for case in 0..20_000 {
        let mut line = Vec::new();
        for _ in 0..(rng.next_u64() % 9) {
            let v = match rng.next_u64() % 3 {
                0 => rng.next_u64() % [10, 100_000, 10_000_000_000, u64::MAX][case % 4],
                _ => rng.next_u64() % 1000,
            };
            line.extend_from_slice(format!(" {v:>10}").as_bytes());
        }
        line.extend_from_slice(tails[case % tails.len()].as_bytes());
        if rng.next_u64() % 4 == 0 {
            let c = b" 0x\t9\n:"[(rng.next_u64() % 7) as usize];
            let at = (rng.next_u64() as usize) % (line.len() + 1);
            line.insert(at, c);
        }
        for limit in [usize::MAX, 1, 2, 4, 8] {
            let (mut short, mut wide) = (Vec::new(), Vec::new());
            let a = read_counts(&line, 0, limit, true, &mut short);
            let b = read_counts(&line, 0, limit, false, &mut wide);
            let text = String::from_utf8_lossy(&line);
            assert_eq!(a, b, "{text:?} {limit}");
            assert_eq!(short, wide, "{text:?} {limit}");
        }
    }
}

#[test]
fn an_empty_description_after_a_failed_row_is_split_again() {
    // a numbered row's empty description is not taken as unchanged from
    // a failed parse's cleared one; a row without a number's is
    let mut m = Interrupts::parse(b"  CPU0 CPU1\n 5: 1 2\nERR: 0\n").unwrap();
    let fresh = Interrupts::parse(b"  CPU0 CPU1\n 5: 1 2\nERR: 0\n").unwrap();
    assert!(m.parse_into(b"  CPU0 CPU1\n 5: 1\nERR: 0\n").is_err());
    m.parse_into(b"  CPU0 CPU1\n 5: 1 2\nERR: 0\n").unwrap();
    assert_eq!(m, fresh);
    assert_eq!(m.rows()[0].parts, fresh.rows()[0].parts);
    assert_eq!(m.rows()[1].parts, fresh.rows()[1].parts);
}

/// x86's `ERR` and `MIS` are `atomic_t` (`%10u`), arm64's `Err` an
/// `unsigned long`: the width is the label's, whatever the row's shape
/// (with one CPU a single value parses as a per-CPU row).
#[test]
fn a_rows_width_is_its_labels_and_a_32_bit_single_value_is_noted() {
    for (cpus, line, width) in [
        ("CPU0       CPU1", "ERR:          0", Width::U32),
        ("CPU0       CPU1", "MIS:          0", Width::U32),
        ("CPU0       CPU1", "Err:          0", Width::U64),
        ("CPU0", "ERR:          0", Width::U32),
        ("CPU0", "Err:          0", Width::U64),
        (
            "CPU0",
            "LOC:          5   Local timer interrupts",
            Width::U32,
        ),
        (
            "CPU0",
            "  1:          5   IO-APIC   1-edge      i8042",
            Width::U32,
        ),
    ] {
        let text = format!("           {cpus}\n{line}\n");
        let m = Interrupts::parse(text.as_bytes()).unwrap();
        assert_eq!(m.rows()[0].width, width, "{text}");
    }
    let text = "           CPU0       CPU1\nERR:          4294967296\n";
    let note = Interrupts::parse(text.as_bytes()).unwrap();
    assert_eq!(note.note().map(|n| n.line), Some(2), "ERR above u32::MAX");
    let one_cpu = Interrupts::parse(b"           CPU0\nErr:          4294967296\n").unwrap();
    assert!(one_cpu.note().is_none(), "arm64 Err on one CPU");
    // a spare row reused for another label takes that label's width
    let mut m = Interrupts::parse(b"           CPU0       CPU1\nErr:          5\n").unwrap();
    m.parse_into(b"           CPU0       CPU1\nERR:          5\n")
        .unwrap();
    assert_eq!(m.rows()[0].width, Width::U32);
}

/// A line dropped unread (`skip_line`: a row the caller's filter rules
/// out) that has no `label:` is the error a parse gives, at its line;
/// blank lines and rows with a label whose shape may hold their counts
/// (even bad counts: they are not read) pass unread.
#[test]
fn a_skipped_line_without_a_label_is_the_parse_error() {
    let text =
        b"           CPU0\n  0:  5  IO-APIC\n\n  1: 99999999999999999999999 x\ngarbage line here\n";
    let mut lp = LineParser::new();
    let mut row = IrqRow::default();
    let mut lines = crate::scan::lines(text).map(|(_, l)| l);
    lp.line(lines.next().unwrap(), &mut row).unwrap();
    for l in lines.by_ref().take(3) {
        lp.skip_line(l).unwrap();
    }
    let e = lp.skip_line(lines.next().unwrap()).unwrap_err();
    assert_eq!(e, err(b"CPU0\n\n\n\ngarbage line here\n"));
    assert_eq!((e.line, e.kind), (5, ErrorKind::MissingColon));
}

/// `skip_line` on a numbered row whose shape cannot hold the header's
/// counts (the label alone, blanks, a description without counts, too
/// few bytes for a count per CPU) is the error a parse of the same text
/// gives, at its line; rows a parse takes pass, and so do numbered rows
/// whose shape fits (their counts are not read).
#[test]
fn a_skipped_numbered_row_without_its_counts_is_the_parse_error() {
    let skip = |line: &str| {
        let mut lp = LineParser::new();
        lp.line(H2.trim_end().as_bytes(), &mut IrqRow::default())
            .unwrap();
        lp.skip_line(b"  0:  1  2  IO-APIC  2-edge  timer").unwrap();
        lp.skip_line(line.as_bytes())
    };
    for line in [
        " 24:",
        " 24:   \t ",
        " 24:  IO-APIC   5-edge      ACPI:Ged",
        " 24: 5",
        " 24:  -5  3  IO-APIC",
        "4294967295:",
    ] {
        let whole = err(format!("{H2}  0:  1  2  IO-APIC  2-edge  timer\n{line}\n").as_bytes());
        assert_eq!(whole.line, 3, "{line:?}");
        assert_eq!(skip(line), Err(whole), "{line:?}");
    }
    for line in [
        " 24:          1          0  IO-APIC   5-edge      ACPI:Ged",
        "24:1 2",
        "LOC:",
        "FIQ:  usb_fiq",
        "ERR:          0",
        "4294967296:",
        " 24: 5 x",
        " 24: 5 14x453",
        "",
    ] {
        assert_eq!(skip(line), Ok(()), "{line:?}");
    }
}
