use super::*;

fn parse(s: &str) -> Interrupts {
    Interrupts::parse(s.as_bytes()).unwrap()
}

#[test]
fn wraps_modulo_2_32() {
    assert_eq!(counter_delta(4294967290, 12), Cell::Count(18));
    assert_eq!(counter_delta(5, 7), Cell::Count(2));
    assert_eq!(counter_delta(1000, 5), Cell::Gap(Gap::Reset));
    assert_eq!(counter_delta(u64::MAX, 3), Cell::Gap(Gap::Reset));
    assert_eq!(counter_delta(1 << 40, 1 << 41), Cell::Count(1 << 40));
}

const A: &str = "           CPU0       CPU1       \n 24:       4294967290          0  IO-APIC   5-edge      ACPI:Ged\n 45:        100        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\nLOC:        10         20   Local timer interrupts\nERR:          3\n";

#[test]
fn matches_by_identity_and_wraps() {
    let b = " 24:          5          1  IO-APIC   5-edge      ACPI:Ged\n 45:          1          2  PCI-MSIX-0000:5e:00.1   2-edge      nvme1q2\nLOC:        15         29   Local timer interrupts\nERR:          4\n";
    let old = parse(A);
    let new = parse(&format!("           CPU0       CPU1       \n{b}"));
    let d = interrupts_delta(&old, &new);
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
    let d = interrupts_delta(&old, &new);
    assert_eq!(
        d.rows[0].cells,
        vec![Cell::Gap(Gap::CpuOffline), Cell::Count(3)]
    );
    assert_eq!(d.gone.len(), 1);
    assert_eq!(d.gone[0].irq, Some(45));
    let back = interrupts_delta(&new, &old);
    assert_eq!(back.rows[0].cells[0], Cell::Gap(Gap::CpuOnline));
    assert_eq!(back.rows[1].status, RowStatus::New);
}

#[test]
fn reordered_rows_match_by_key() {
    let old = parse(A);
    let new = parse("           CPU0       CPU1       \nLOC:        11         20   Local timer interrupts\n 45:        101        200  PCI-MSIX-0000:3b:00.0   3-edge      mlx5_comp3\n");
    let d = interrupts_delta(&old, &new);
    assert_eq!(d.rows[0].cells, vec![Cell::Count(1), Cell::Count(0)]);
    assert_eq!(d.rows[1].cells, vec![Cell::Count(1), Cell::Count(0)]);
    assert_eq!(d.gone.len(), 2);
}

#[test]
fn duplicate_arch_labels_match_by_occurrence() {
    let h = "           CPU0       CPU1       \n";
    let old = parse(&format!("{h}LOC:        1         2   Local timer interrupts for timer event device\nLOC:        3         4   Local timer interrupts for others\n"));
    let new = parse(&format!("{h}LOC:        2         2   Local timer interrupts for timer event device\nLOC:        5         4   Local timer interrupts for others\n"));
    let d = interrupts_delta(&old, &new);
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
