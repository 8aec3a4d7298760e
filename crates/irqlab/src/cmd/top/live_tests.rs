//! Unit tests of `live.rs` against small handwritten trees: both
//! strategies, hotplug gaps, vanished IRQs.

use super::*;
use irqlab_core::delta::Gap;
use std::path::Path;

const TWO: &str = "           CPU0       CPU1       \n 24:          1          2  IO-APIC   5-edge      ACPI:Ged\nLOC:        100        200   Local timer interrupts\n";
const ONE: &str = "           CPU0       \n 24:          5  IO-APIC   5-edge      ACPI:Ged\nLOC:        150   Local timer interrupts\n";

fn w(root: &Path, rel: &str, s: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    w(r, "proc/interrupts", TWO);
    w(r, targeted::ONLINE, "0-1\n");
    w(r, targeted::POSSIBLE, "0-1\n");
    w(r, "sys/kernel/irq/24/per_cpu_count", "1,2\n");
    w(r, "sys/kernel/irq/24/chip_name", "IO-APIC\n");
    w(r, "sys/kernel/irq/24/hwirq", "5\n");
    w(r, "sys/kernel/irq/24/name", "edge\n");
    w(r, "sys/kernel/irq/24/actions", "ACPI:Ged\n");
    w(r, "proc/irq/24/smp_affinity_list", "0-1\n");
    d
}

fn gaps(f: &Frame, label: &str) -> Vec<Option<Gap>> {
    let sec = f.report.interrupts.as_ref().unwrap();
    let row = sec.rows.iter().find(|r| r.label == label).unwrap();
    row.gaps
        .clone()
        .unwrap_or_else(|| vec![None; sec.cpus.len()])
}

fn filter(re: Option<&str>) -> Filter {
    Filter::from_flags(re, None).unwrap()
}

#[test]
fn full_file_hotplug_is_a_gap_both_ways() {
    let d = tree();
    let mut live = Live::start(d.path(), filter(None), StrategyChoice::Auto).unwrap();
    assert!(live.why.contains("no --irq"));
    w(d.path(), "proc/interrupts", ONE);
    let f = live.next_frame().unwrap();
    assert_eq!(f.strategy, Strategy::ProcInterrupts);
    assert_eq!(gaps(&f, "LOC"), [None, Some(Gap::CpuOffline)]);
    w(
        d.path(),
        "proc/interrupts",
        TWO.replace("100", "160").replace("200", "260").as_str(),
    );
    let f = live.next_frame().unwrap();
    assert_eq!(gaps(&f, "LOC"), [None, Some(Gap::CpuOnline)]);
    let row = |f: &Frame| {
        let s = f.report.interrupts.as_ref().unwrap();
        s.rows
            .iter()
            .find(|r| r.label == "24")
            .unwrap()
            .affinity
            .clone()
    };
    assert_eq!(row(&f).as_deref(), Some("0-1"));
}

#[test]
fn arch_row_selection_keeps_the_full_file() {
    let d = tree();
    let live = Live::start(d.path(), filter(Some("Local")), StrategyChoice::PerCpuCount).unwrap();
    assert!(live.why.contains("arch row LOC"), "{}", live.why);
}

#[test]
fn targeted_reads_sysfs_and_maps_online_cpus() {
    let d = tree();
    let mut live =
        Live::start(d.path(), filter(Some("ACPI")), StrategyChoice::PerCpuCount).unwrap();
    assert!(
        live.why.contains("per_cpu_count: forced (IRQs 24)"),
        "{}",
        live.why
    );
    w(d.path(), "sys/kernel/irq/24/per_cpu_count", "4,2\n");
    w(d.path(), targeted::ONLINE, "0\n");
    let f = live.next_frame().unwrap();
    assert_eq!(f.strategy, Strategy::PerCpuCount);
    let sec = f.report.interrupts.as_ref().unwrap();
    assert_eq!(sec.cpus, [0, 1]);
    assert_eq!(sec.rows.len(), 1);
    assert_eq!(sec.rows[0].total, 3, "counted on the online CPU only");
    assert!(
        sec.rows[0].deltas.is_none(),
        "top reports rates, not deltas"
    );
    let rates = sec.rows[0].rates.as_deref().unwrap();
    assert!(
        rates[0].is_some_and(|r| r > 0.0) && rates[1].is_none(),
        "{rates:?}"
    );
    assert_eq!(gaps(&f, "24"), [None, Some(Gap::CpuOffline)]);
    w(d.path(), targeted::ONLINE, "0-1\n");
    let f = live.next_frame().unwrap();
    assert_eq!(gaps(&f, "24"), [None, Some(Gap::CpuOnline)]);
    assert!(f.self_cost.wall_ns > 0);
}

#[test]
fn auto_measures_and_explains() {
    let d = tree();
    let live = Live::start(d.path(), filter(Some("ACPI")), StrategyChoice::Auto).unwrap();
    assert!(live.why.contains("median of 20 reads"), "{}", live.why);
}
