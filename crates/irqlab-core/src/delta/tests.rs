use super::*;
use crate::stat::CpuTimes;

fn parse(s: &str) -> Interrupts {
    Interrupts::parse(s.as_bytes()).unwrap()
}

const A: &str = "           CPU0       CPU1       \n 24:       4294967290          0  IO-APIC   5-edge      ACPI:Ged\n 45:        100        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\nLOC:        10         20   Local timer interrupts\nERR:          3\n";

#[test]
fn matches_by_identity_and_wraps() {
    let b = " 24:          5          1  IO-APIC   5-edge      ACPI:Ged\n 45:          1          2  PCI-MSIX-0000:5e:00.1   2-edge      nvme1q2\nLOC:        15         29   Local timer interrupts\nERR:          4\n";
    let old = parse(A);
    let new = parse(&format!("           CPU0       CPU1       \n{b}"));
    let d = interrupts_delta(&old, &new, 1.0);
    assert_eq!(d.cpus, vec![0, 1]);
    assert_eq!(d.rows[0].cells, vec![Cell::Count(11), Cell::Count(1)]);
    assert_eq!(d.rows[1].status, RowStatus::Changed);
    assert!(d.rows[1]
        .cells
        .iter()
        .all(|c| *c == Cell::Gap(Gap::IdentityChanged)));
    assert_eq!(d.rows[2].cells, vec![Cell::Count(5), Cell::Count(9)]);
    assert_eq!(d.rows[3].cells, vec![Cell::Count(1)]);
    assert!(d.gone.is_empty());
}

#[test]
fn hotplug_gives_gaps_not_spikes() {
    let old = parse(A);
    let new = parse("           CPU1       \n 24:          3  IO-APIC   5-edge      ACPI:Ged\nLOC:        25   Local timer interrupts\nERR:          3\n");
    let d = interrupts_delta(&old, &new, 1.0);
    assert_eq!(
        d.rows[0].cells,
        vec![Cell::Gap(Gap::CpuOffline), Cell::Count(3)]
    );
    assert_eq!(d.gone.len(), 1);
    assert_eq!(d.gone[0].irq, Some(45));
    let back = interrupts_delta(&new, &old, 1.0);
    assert_eq!(back.rows[0].cells[0], Cell::Gap(Gap::CpuOnline));
    assert_eq!(back.rows[1].status, RowStatus::New);
}

#[test]
fn reordered_rows_match_by_key() {
    let old = parse(A);
    let new = parse("           CPU0       CPU1       \nLOC:        11         20   Local timer interrupts\n 45:        101        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\n");
    let d = interrupts_delta(&old, &new, 1.0);
    assert_eq!(d.rows[0].cells, vec![Cell::Count(1), Cell::Count(0)]);
    assert_eq!(d.rows[1].cells, vec![Cell::Count(1), Cell::Count(0)]);
    assert_eq!(d.gone.len(), 2);
}

#[test]
fn duplicate_arch_labels_match_by_occurrence() {
    let h = "           CPU0       CPU1       \n";
    let old = parse(&format!("{h}LOC:        1         2   Local timer interrupts for timer event device\nLOC:        3         4   Local timer interrupts for others\n"));
    let new = parse(&format!("{h}LOC:        2         2   Local timer interrupts for timer event device\nLOC:        5         4   Local timer interrupts for others\n"));
    let d = interrupts_delta(&old, &new, 1.0);
    assert_eq!(d.rows[0].total(), 1);
    assert_eq!(d.rows[1].total(), 2);
}

#[test]
fn rates_divide_by_elapsed() {
    assert_eq!(Cell::Count(50).rate(0.5), Some(100.0));
    assert_eq!(Cell::Gap(Gap::Reset).rate(1.0), None);
    assert_eq!(Cell::Count(1).rate(0.0), None);
}

#[test]
fn cpu_pct_from_stat_lines() {
    let old = CpuTimes {
        cpu: Some(0),
        fields: vec![100, 0, 50, 800, 10, 0, 40, 0, 0, 0],
    };
    let new = CpuTimes {
        cpu: Some(0),
        fields: vec![110, 0, 60, 870, 5, 0, 50, 0, 7, 0],
    };
    let p = cpu_pct(&old, &new).unwrap();
    assert!((p.softirq_pct - 10.0).abs() < 1e-9);
    assert!((p.idle_pct - 70.0).abs() < 1e-9);
    assert_eq!(p.iowait_pct, 0.0);
    assert_eq!(cpu_pct(&new, &new), None);
    let since_boot = cpu_pct(&CpuTimes::default(), &new).unwrap();
    assert!((since_boot.user_pct - 110.0 / 1095.0 * 100.0).abs() < 1e-9);
}

const HDR2: &str = "           CPU0       CPU1       \n";

#[test]
fn impossible_values_and_jumps_are_gaps_never_rates() {
    let old = parse(&format!(
        "{HDR2} 24:          0          5  IO-APIC   5-edge      ACPI:Ged\nLOC:        10         20   Local timer interrupts\n"
    ));
    let new = parse(&format!(
        "{HDR2} 24: 18446744073709551615 4294967295  IO-APIC   5-edge      ACPI:Ged\nLOC:        10010         20   Local timer interrupts\n"
    ));
    let d = interrupts_delta(&old, &new, 0.5);
    assert_eq!(
        d.rows[0].cells,
        vec![Cell::Gap(Gap::OutOfRange), Cell::Gap(Gap::ImpossibleRate)]
    );
    assert!(d.rows[0].cells.iter().all(|c| c.rate(0.5).is_none()));
    assert_eq!(d.rows[1].cells, vec![Cell::Count(10_000), Cell::Count(0)]);
    // without a clock nothing is bounded, but the range still is
    let d = interrupts_delta(&old, &new, 0.0);
    assert_eq!(d.rows[0].cells[0], Cell::Gap(Gap::OutOfRange));
    assert_eq!(d.rows[0].cells[1], Cell::Count(4294967290));
}

#[test]
fn impossible_softirq_jump_is_a_gap() {
    let s = |a: &str| {
        Softirqs::parse(
            format!("                    CPU0       CPU1\n      TIMER:{a}\n").as_bytes(),
        )
        .unwrap()
    };
    let d = softirqs_delta(&s("  5  7"), &s("  4294967295  8"), 0.5);
    assert_eq!(
        d.rows[0].cells,
        vec![Cell::Gap(Gap::ImpossibleRate), Cell::Count(1)]
    );
}

#[test]
fn single_value_rows_survive_a_change_in_online_cpus() {
    // one online CPU: the parser cannot tell ERR from a per-CPU row
    let one = parse("           CPU0       \nLOC:        10   Local timer interrupts\nERR:          3\nMIS:          0\n");
    let two = parse(&format!(
        "{HDR2}LOC:        15         29   Local timer interrupts\nERR:          4\nMIS:          0\n"
    ));
    let up = interrupts_delta(&one, &two, 1.0);
    assert_eq!(up.rows[1].cells, vec![Cell::Count(1)]);
    assert_eq!(up.rows[2].cells, vec![Cell::Count(0)]);
    let down = interrupts_delta(&two, &one, 1.0);
    assert_eq!(
        down.rows[1].cells,
        vec![Cell::Gap(Gap::Reset), Cell::Gap(Gap::CpuOffline)]
    );
    let one_again = parse("           CPU0       \nLOC:        10   Local timer interrupts\nERR:          9\nMIS:          0\n");
    let down = interrupts_delta(&two, &one_again, 1.0);
    assert_eq!(
        down.rows[1].cells,
        vec![Cell::Count(5), Cell::Gap(Gap::CpuOffline)]
    );
    for r in up.rows.iter().chain(&down.rows) {
        assert!(!r.cells.contains(&Cell::Gap(Gap::ShapeChanged)), "{r:?}");
    }
}

/// Matching rows by position while the keys agree (no key built), in a
/// scratch reused from delta to delta, gives what matching every row by
/// key gives: duplicate arch rows, a row inserted or removed in the
/// middle (position matching stops there), reordering, hotplug, IRQs that
/// came and went, and a scratch left bigger or smaller by the delta
/// before.
#[test]
fn positional_matching_in_a_reused_scratch_equals_matching_by_key() {
    let h2 = "           CPU0       CPU1       \n";
    let l = |lab: &str, a: u64, b: u64, d: &str| format!("{lab}: {a:>10} {b:>10}   {d}\n");
    let loc = |a, b, d: &str| l("LOC", a, b, d);
    let irq =
        |n: u32, a: u64, b: u64| format!("{n:>3}: {a:>10} {b:>10}  IO-APIC   5-edge      dev{n}\n");
    let two = |rows: &[String]| format!("{h2}{}", rows.concat());
    let t = "Local timer interrupts";
    let pairs = [
        (two(&[loc(1, 2, t), loc(3, 4, t), irq(24, 1, 1)]), two(&[loc(2, 2, t), loc(5, 4, t), irq(24, 2, 1)])),
        (two(&[loc(1, 2, t), irq(9, 0, 0), loc(3, 4, t)]), two(&[loc(2, 2, t), loc(5, 4, t)])),
        (two(&[loc(2, 2, t), loc(5, 4, t)]), two(&[loc(3, 2, t), irq(9, 1, 0), loc(6, 4, t)])),
        (two(&[irq(24, 1, 1), irq(25, 1, 1), loc(1, 1, t)]), two(&[irq(25, 2, 1), irq(24, 1, 3), loc(1, 2, t)])),
        (two(&[irq(24, 1, 1), loc(1, 1, t)]), format!("           CPU1       \n 24: {:>10}  IO-APIC   5-edge      dev24\nLOC: {:>10}   {t}\n", 5, 3)),
        (two(&[loc(1, 1, "Other"), loc(1, 1, t)]), two(&[loc(2, 1, t), loc(2, 2, "Other")])),
        (two(&[irq(24, 1, 1)]), two(&[irq(24, 1, 2)])),
    ];
    let by_key = |old: &Interrupts, new: &Interrupts| {
        let (ok, nk) = (keys(old), keys(new));
        let mut v = Vec::new();
        for (k, n) in nk.iter().zip(new.rows()) {
            let i = ok.iter().position(|o| o == k);
            v.push((n.label.clone(), i));
        }
        v
    };
    let mut scratch = DeltaScratch::default();
    for (a, b) in &pairs {
        for (old, new) in [(parse(a), parse(b)), (parse(b), parse(a))] {
            let want = interrupts_delta(&old, &new, 1.0);
            let mut got = Vec::new();
            let gone = interrupts_delta_each_in(&mut scratch, &old, &new, 1.0, |r, m, cells| {
                got.push((r.label.to_string(), m.status, cells.to_vec()));
            });
            assert_eq!(scratch.cpus(), want.cpus.as_slice());
            assert_eq!(gone, want.gone);
            let want_rows: Vec<_> = want
                .rows
                .iter()
                .map(|r| (r.label.clone(), r.status, r.cells.clone()))
                .collect();
            assert_eq!(got, want_rows, "{a} -> {b}");
            // and the match is the one by key, row for row: new rows are
            // the unmatched ones, and a matched row's cells are its counts
            // minus those of the row its key names
            let rows = old.rows();
            for (((_, i), (label, st, cells)), n) in
                by_key(&old, &new).iter().zip(&got).zip(new.rows())
            {
                assert_eq!(i.is_none(), *st == RowStatus::New, "{label}");
                let Some(o) = i.and_then(|i| rows.get(i)) else {
                    continue;
                };
                if cells.iter().all(|c| c.count().is_some()) {
                    let sum: u64 = cells.iter().filter_map(|c| c.count()).sum();
                    let total = |r: &IrqRow| r.counts.iter().sum::<u64>();
                    assert_eq!(sum, total(n) - total(o), "{label}: {a} -> {b}");
                }
            }
        }
    }
}

#[test]
fn bounds_decided_once_per_delta_are_bound_rates_rule() {
    let counts = [
        0,
        1,
        49_999_999,
        50_000_000,
        50_000_001,
        (1 << 53) - 1,
        1 << 53,
        (1 << 53) + 1,
        u64::MAX,
    ];
    let intervals = [
        0.5,
        1.0,
        0.004_995_319,
        1.1e4,
        9.1e7,
        1e12,
        0.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
    ];
    for s in intervals {
        let b = Bounds::new(s);
        for (shape, max) in [
            (Shape::PerCpu, MAX_RATE_PER_CPU),
            (Shape::Single, MAX_RATE_PER_CPU * MAX_CPUS),
        ] {
            let mut cells: Vec<Cell> = counts.iter().map(|&c| Cell::Count(c)).collect();
            cells.push(Cell::Gap(Gap::Reset));
            let want: Vec<Cell> = cells.iter().map(|&c| bound_rate(c, s, max)).collect();
            bound_cells(&mut cells, shape, b);
            assert_eq!(cells, want, "{s} {shape:?}");
        }
    }
}

/// `Gap::ALL` is every variant of `Gap`, in its order: the variants as
/// the enum's source declares them (a variant added there and not to the
/// list fails here).
#[test]
fn gap_all_is_every_variant_in_order() {
    let src = include_str!("../delta.rs");
    let (_, body) = src.split_once("pub enum Gap {").unwrap();
    let (body, _) = body.split_once("\n}").unwrap();
    let declared: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with('#') && !l.is_empty())
        .map(|l| l.trim_end_matches(','))
        .collect();
    let listed: Vec<String> = Gap::ALL.iter().map(|g| format!("{g:?}")).collect();
    assert_eq!(listed, declared);
    for (i, g) in Gap::ALL.iter().enumerate() {
        assert_eq!(*g as usize, i, "{g:?}");
    }
}

/// The delta of the one row of `/proc/interrupts` texts `old` and `new`
/// (header `cpus`), one second apart.
fn arch_delta(cpus: &str, old: &str, new: &str) -> Vec<Cell> {
    let text = |line: &str| format!("           {cpus}\n{line}\n");
    let d = interrupts_delta(&parse(&text(old)), &parse(&text(new)), 1.0);
    d.rows[0].cells.clone()
}

/// x86's `ERR` and `MIS` are `atomic_t` printed `%10u`: a wrap is the
/// modular difference (per-CPU counts' rule) and a value above
/// `u32::MAX` is no kernel value, on any number of CPUs.
#[test]
fn x86_err_and_mis_are_32_bit_counters() {
    let two = "CPU0       CPU1";
    for label in ["ERR", "MIS"] {
        let at = |v: u64| format!("{label}: {v:>10}");
        let wrap = arch_delta(two, &at(4294967290), &at(5));
        assert_eq!(wrap, vec![Cell::Count(11)], "{label}");
        let over = arch_delta(two, &at(7), &at(4294967296));
        assert_eq!(over, vec![Cell::Gap(Gap::OutOfRange)], "{label}");
        let back = arch_delta(two, &at(1000), &at(5));
        assert_eq!(back, vec![Cell::Gap(Gap::Reset)], "{label}: not a wrap");
        // one online CPU: the same row parses as per-CPU, read alike
        let one = arch_delta("CPU0", &at(4294967290), &at(5));
        assert_eq!(one, vec![Cell::Count(11)], "{label} on one CPU");
        let one = arch_delta("CPU0", &at(7), &at(4294967296));
        assert_eq!(one, vec![Cell::Gap(Gap::OutOfRange)], "{label} on one CPU");
    }
    // the number of online CPUs changing: still one value, still 32-bit
    let old = parse("           CPU0       CPU1\nERR: 4294967290\n");
    let new = parse("           CPU0\nERR:          5\n");
    let d = interrupts_delta(&old, &new, 1.0);
    assert_eq!(
        d.rows[0].cells,
        vec![Cell::Count(11), Cell::Gap(Gap::CpuOffline)]
    );
}

/// arm64's `Err` is an `unsigned long`: past 2^32 it is a value, and a
/// decrease is a reset, not a wrap.
#[test]
fn arm64_err_stays_64_bit() {
    let at = |v: u64| format!("Err: {v:>10}");
    for cpus in ["CPU0       CPU1", "CPU0"] {
        let up = arch_delta(cpus, &at(1 << 32), &at((1 << 32) + 5));
        assert_eq!(up, vec![Cell::Count(5)], "{cpus}");
        let down = arch_delta(cpus, &at(4294967290), &at(5));
        assert_eq!(down, vec![Cell::Gap(Gap::Reset)], "{cpus}");
    }
}

/// A replayed recording's counter of unknown value is a
/// `missing_samples` gap in a 32-bit single value too, and 0 between two
/// equal ones (docs/limits.md).
#[test]
fn unknown_counts_of_single_values_are_missing_samples() {
    let (a, b) = (unknown_count(1), unknown_count(2));
    for label in ["ERR", "MIS", "Err"] {
        let at = |v: u64| format!("{label}: {v:>10}");
        for cpus in ["CPU0       CPU1", "CPU0"] {
            let gap = vec![Cell::Gap(Gap::MissingSamples)];
            assert_eq!(arch_delta(cpus, &at(5), &at(a)), gap, "{label}");
            assert_eq!(arch_delta(cpus, &at(a), &at(5)), gap, "{label}");
            assert_eq!(arch_delta(cpus, &at(a), &at(b)), gap, "{label}");
            let same = arch_delta(cpus, &at(a), &at(a));
            assert_eq!(same, vec![Cell::Count(0)], "{label}");
        }
    }
}

/// `same_text` says the row at the same position of the earlier snapshot
/// has the same label and description, never when either differs (a
/// label `024` for IRQ 24, a description of the same identity written
/// otherwise, an arch row's other description), and a row's status and
/// cells are those of [`interrupts_delta`] either way.
#[test]
fn same_text_is_said_only_of_the_same_label_and_description_at_the_same_position() {
    let head = "           CPU0       CPU1       \n";
    let old = parse(A);
    let cases: [(&str, &[bool]); 6] = [
        (A.trim_start_matches(head), &[true, true, true, true]),
        // the same IRQ numbers, the label written otherwise
        (" 024:          5          1  IO-APIC   5-edge      ACPI:Ged\n 45:        101        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\nLOC:        10         20   Local timer interrupts\nERR:          3\n", &[false, true, true, true]),
        // the same identity (chip, hwirq, actions), another description
        (" 24:          5          1  IO-APIC   5-level     ACPI:Ged\n 45:        101        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\nLOC:        10         20   Local timer interrupts\nERR:          3\n", &[false, true, true, true]),
        // another identity at the same IRQ number
        (" 24:          5          1  IO-APIC   5-edge      ACPI:Ged\n 45:          1          2  PCI-MSIX-0000:5e:00.1   2-edge      nvme1q2\nLOC:        10         20   Local timer interrupts\nERR:          3\n", &[true, false, true, true]),
        // an arch row's description changed: matched by key from there on
        (" 24:          5          1  IO-APIC   5-edge      ACPI:Ged\n 45:        101        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\nLOC:        10         20   Local timer interrupt\nERR:          3\n", &[true, true, false, false]),
        // a row inserted: the rows after it are not at their positions
        (" 24:          5          1  IO-APIC   5-edge      ACPI:Ged\n 30:          0          0  IO-APIC   6-edge      x\n 45:        101        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\nLOC:        10         20   Local timer interrupts\nERR:          3\n", &[true, false, false, false, false]),
    ];
    let mut scratch = DeltaScratch::default();
    for (rows, want) in cases {
        let new = parse(&format!("{head}{rows}"));
        let mut got = Vec::new();
        let mut seen = Vec::new();
        interrupts_delta_each_in(&mut scratch, &old, &new, 1.0, |r, m, cells| {
            got.push(m.same_text);
            seen.push((r.label.to_string(), m.status, cells.to_vec()));
        });
        assert_eq!(got, want, "{rows}");
        for (p, (n, same)) in new.rows().iter().zip(&got).enumerate() {
            let o = old.rows().get(p);
            let text = o.is_some_and(|o| o.label == n.label && o.description == n.description);
            assert!(!same || text, "{rows}: row {p}");
        }
        let d = interrupts_delta(&old, &new, 1.0);
        let want_rows: Vec<_> = d
            .rows
            .iter()
            .map(|r| (r.label.clone(), r.status, r.cells.clone()))
            .collect();
        assert_eq!(seen, want_rows, "{rows}");
    }
}
