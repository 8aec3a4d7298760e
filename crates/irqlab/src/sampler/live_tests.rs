//! Unit tests of the live sampler (`live.rs`, `host_source.rs`) against
//! small handwritten trees: both strategies, hotplug gaps, affinity,
//! metadata epochs, filter changes.

use super::*;
use crate::report::{self, Report};
use crate::sampler::metadata::AFFINITY_EVERY_NS;
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
    w(r, irqlab_core::paths::CPU_ONLINE, "0-1\n");
    w(r, irqlab_core::paths::CPU_POSSIBLE, "0-1\n");
    w(r, "sys/kernel/irq/24/per_cpu_count", "1,2\n");
    w(r, "sys/kernel/irq/24/chip_name", "IO-APIC\n");
    w(r, "sys/kernel/irq/24/hwirq", "5\n");
    w(r, "sys/kernel/irq/24/name", "edge\n");
    w(r, "sys/kernel/irq/24/actions", "ACPI:Ged\n");
    w(r, "proc/irq/24/smp_affinity_list", "0-1\n");
    d
}

/// What a consumer sees of one frame.
struct Seen {
    report: Report,
    strategy: Strategy,
    self_cost: SelfCost,
    epoch: u64,
}

fn next(live: &mut LiveSampler) -> Seen {
    let mut f = live.next_frame().unwrap();
    let mut report = report::rates(f.prev, f.cur, f.filter(), report::RateOpts::default());
    report::annotate_affinity(&mut report, &mut f);
    Seen {
        report,
        strategy: f.strategy,
        self_cost: f.self_cost(),
        epoch: f.meta_epoch,
    }
}

fn open(root: &Path, re: Option<&str>, strategy: Choice) -> LiveSampler {
    LiveSampler::open(&LivePlan {
        root: root.to_path_buf(),
        filter: filter(re),
        strategy,
    })
    .unwrap()
}

fn gaps(f: &Seen, label: &str) -> Vec<Option<Gap>> {
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
    let mut live = open(d.path(), None, Choice::Auto);
    assert!(live.why().contains("no --irq"));
    w(d.path(), "proc/interrupts", ONE);
    let f = next(&mut live);
    assert_eq!(f.strategy, Strategy::ProcInterrupts);
    assert_eq!(gaps(&f, "LOC"), [None, Some(Gap::CpuOffline)]);
    w(
        d.path(),
        "proc/interrupts",
        TWO.replace("100", "160").replace("200", "260").as_str(),
    );
    let f = next(&mut live);
    assert_eq!(gaps(&f, "LOC"), [None, Some(Gap::CpuOnline)]);
    let row = |f: &Seen| {
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
    let live = open(d.path(), Some("Local"), Choice::PerCpuCount);
    assert!(live.why().contains("arch row LOC"), "{}", live.why());
}

/// `--strategy per-cpu-count` resolves its reader once: the sampler takes
/// the one `top` resolved at start for its refusal check as it is. Here
/// `/proc/interrupts` is gone after the check: resolving again would find
/// no listing and fall back to the whole file, whose read then fails.
#[test]
fn per_cpu_count_resolved_at_start_is_not_resolved_again() {
    let d = tree();
    let f = filter(Some("ACPI"));
    let resolved = crate::sampler::host_source::per_cpu_count_start(d.path(), &f).unwrap();
    assert!(resolved.is_some(), "IRQ 24 has its per_cpu_count file");
    std::fs::remove_file(d.path().join("proc/interrupts")).unwrap();
    let plan = LivePlan {
        root: d.path().to_path_buf(),
        filter: f,
        strategy: Choice::PerCpuCount,
    };
    let mut live = LiveSampler::open_resolved(&plan, resolved).unwrap();
    assert!(
        live.why().contains("per_cpu_count: forced (IRQs 24)"),
        "{}",
        live.why()
    );
    w(d.path(), "sys/kernel/irq/24/per_cpu_count", "4,2\n");
    let f = next(&mut live);
    assert_eq!(f.strategy, Strategy::PerCpuCount);
    let row = &f.report.interrupts.as_ref().unwrap().rows[0];
    assert_eq!(row.total, 3, "the interval's interrupts: (4-1) + (2-2)");
}

#[test]
fn targeted_reads_sysfs_and_maps_online_cpus() {
    let d = tree();
    let mut live = open(d.path(), Some("ACPI"), Choice::PerCpuCount);
    assert!(
        live.why().contains("per_cpu_count: forced (IRQs 24)"),
        "{}",
        live.why()
    );
    w(d.path(), "sys/kernel/irq/24/per_cpu_count", "4,2\n");
    w(d.path(), irqlab_core::paths::CPU_ONLINE, "0\n");
    let f = next(&mut live);
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
    w(d.path(), irqlab_core::paths::CPU_ONLINE, "0-1\n");
    let f = next(&mut live);
    assert_eq!(gaps(&f, "24"), [None, Some(Gap::CpuOnline)]);
    assert!(f.self_cost.wall_ns > 0);
}

#[test]
fn auto_measures_and_explains() {
    let d = tree();
    let live = open(d.path(), Some("ACPI"), Choice::Auto);
    assert!(live.why().contains("median of 20 reads"), "{}", live.why());
}

/// IRQ 24's affinity in what a consumer saw.
fn aff(s: &Seen) -> Option<String> {
    let sec = s.report.interrupts.as_ref().unwrap();
    let row = sec.rows.iter().find(|r| r.label == "24").unwrap();
    row.affinity.clone()
}

#[test]
fn affinity_is_read_again_after_its_period_and_when_the_irq_set_changes() {
    let d = tree();
    let mut live = open(d.path(), None, Choice::ProcInterrupts);
    let a = next(&mut live);
    assert_eq!(aff(&a).as_deref(), Some("0-1"));
    w(d.path(), "proc/irq/24/smp_affinity_list", "1\n");
    let b = next(&mut live);
    assert_eq!(aff(&b).as_deref(), Some("0-1"), "cached within the period");
    assert_eq!(a.epoch, b.epoch);
    // the period over (1 ns here, 10 s in a run)
    live.meta.every_ns = 1;
    let c = next(&mut live);
    assert_eq!(aff(&c).as_deref(), Some("1"), "read again after the period");
    assert_ne!(c.epoch, b.epoch, "a changed affinity changes the epoch");
    let d2 = next(&mut live);
    assert_eq!(c.epoch, d2.epoch, "read again, unchanged: same epoch");
    live.meta.every_ns = AFFINITY_EVERY_NS;
    w(d.path(), "proc/irq/24/smp_affinity_list", "0\n");
    let three = TWO.replace(
        "LOC:",
        " 25:          0          0  IO-APIC   6-edge      extra\nLOC:",
    );
    w(d.path(), "proc/interrupts", &three);
    let e = next(&mut live);
    assert_ne!(e.epoch, d2.epoch, "a new IRQ changes the metadata epoch");
    assert_eq!(aff(&e).as_deref(), Some("0"), "read again after the change");
}

#[test]
fn an_irq_counted_outside_its_affinity_shows_its_new_one_at_that_frame() {
    let d = tree();
    w(d.path(), "proc/irq/24/effective_affinity_list", "0\n");
    let mut live = open(d.path(), None, Choice::ProcInterrupts);
    assert_eq!(aff(&next(&mut live)).as_deref(), Some("0"));
    // moved to CPU 1, where it then fires, well within the period
    w(d.path(), "proc/irq/24/effective_affinity_list", "1\n");
    let moved = TWO.replace("24:          1          2", "24:          1          9");
    w(d.path(), "proc/interrupts", &moved);
    let b = next(&mut live);
    assert_eq!(aff(&b).as_deref(), Some("1"), "read again at once");
    assert_eq!(live.meta.every_ns, AFFINITY_EVERY_NS);
}

#[test]
fn a_kept_affinity_file_is_read_again_where_it_is() {
    let d = tree();
    w(d.path(), "proc/irq/24/effective_affinity_list", "0\n");
    let mut live = open(d.path(), None, Choice::ProcInterrupts);
    live.source.pretend_live();
    assert_eq!(aff(&next(&mut live)).as_deref(), Some("0"));
    // rewritten in place, as the kernel regenerates its file at each read
    w(d.path(), "proc/irq/24/effective_affinity_list", "1\n");
    live.meta.every_ns = 1;
    assert_eq!(aff(&next(&mut live)).as_deref(), Some("1"));
    // emptied (an IRQ not started): the configured list answers
    w(d.path(), "proc/irq/24/effective_affinity_list", "\n");
    assert_eq!(aff(&next(&mut live)).as_deref(), Some("0-1"));
}

#[test]
fn a_new_filter_re_resolves_the_targeted_irqs() {
    let d = tree();
    let mut live = open(d.path(), None, Choice::PerCpuCount);
    assert_eq!(live.strategy(), Strategy::ProcInterrupts);
    live.set_filter(filter(Some("ACPI"))).unwrap();
    assert_eq!(live.strategy(), Strategy::PerCpuCount, "{}", live.why());
    let s = next(&mut live);
    assert_eq!(s.strategy, Strategy::PerCpuCount);
    assert!(s.self_cost.wall_ns > 0);
    live.set_filter(filter(None)).unwrap();
    assert_eq!(live.strategy(), Strategy::ProcInterrupts);
}

/// A recording-like source: snapshots handed in by the test.
struct Canned {
    snaps: Vec<Snapshot>,
}

impl SnapshotSource for Canned {
    fn read(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        *snap = self
            .snaps
            .pop()
            .ok_or_else(|| anyhow::anyhow!("end of recording"))?;
        Ok(())
    }
    fn threads(&mut self, _: u64, out: &mut Vec<ThreadCpu>) {
        out.clear();
    }
    fn affinity(&mut self, _: u32) -> Option<String> {
        Some("7".into())
    }
    fn strategy(&self) -> Strategy {
        Strategy::ProcInterrupts
    }
    fn refresh(&mut self, _: &Snapshot, _: &Filter) -> anyhow::Result<bool> {
        Ok(false)
    }
    fn why(&self) -> &str {
        "replay"
    }
}

#[test]
fn any_snapshot_source_yields_frames() {
    let snap = |mono_ns: u64, s: &str| Snapshot {
        mono_ns,
        interrupts: Some(irqlab_core::Interrupts::parse(s.as_bytes()).unwrap()),
        ..Snapshot::default()
    };
    let later = TWO.replace("100", "300");
    let src = Canned {
        snaps: vec![snap(2_000_000_000, &later), snap(1_000_000_000, TWO)],
    };
    let mut live = LiveSampler::with_source(src, Filter::default()).unwrap();
    let mut f = live.next_frame().unwrap();
    assert_eq!(f.interval_s(), 1.0);
    assert_eq!(f.affinity(24).as_deref(), Some("7"));
    let mut r = report::rates(f.prev, f.cur, f.filter(), report::RateOpts::default());
    report::annotate_affinity(&mut r, &mut f);
    let loc = &r.interrupts.as_ref().unwrap().rows[1];
    assert_eq!((loc.label.as_str(), loc.total), ("LOC", 200));
    assert!(
        live.next_frame().is_err(),
        "the end of the source is an error"
    );
}

#[test]
fn without_threads_looks_for_none() {
    let d = tree();
    let r = d.path();
    w(r, "proc/12/comm", "ksoftirqd/0\n");
    w(r, "proc/12/stat", "12 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0 0 0 1 2 0 0 20 0 1 0 30 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    w(r, "proc/12/schedstat", "1000000 0 1\n");
    let plan = LivePlan {
        root: r.to_path_buf(),
        filter: filter(None),
        strategy: Choice::Auto,
    };
    let with = LiveSampler::open(&plan).unwrap();
    assert_eq!(with.thread_count(), 1, "the fake ksoftirqd is found");
    let mut without = LiveSampler::open_without_threads(&plan).unwrap();
    assert_eq!(without.thread_count(), 0);
    w(r, "proc/12/schedstat", "9000000 0 2\n");
    let f = without.next_frame().unwrap();
    assert!(f.threads.is_empty());
    assert!(f.cur.interrupts.is_some());
}

/// Each sample read gets a number of its own; a frame's `prev` has the
/// number of the last frame's `cur` (also after a latest frame and a
/// failed read), and a latest frame's two snapshots one number.
#[test]
fn frames_number_their_samples_and_chain_them() {
    let snap = |mono_ns: u64| Snapshot {
        mono_ns,
        interrupts: Some(irqlab_core::Interrupts::parse(TWO.as_bytes()).unwrap()),
        ..Snapshot::default()
    };
    // the same time in every sample: the numbers tell them apart
    let src = Canned {
        snaps: vec![snap(5), snap(5), snap(5)],
    };
    let mut live = LiveSampler::with_source(src, Filter::default()).unwrap();
    let (a, b) = live.next_frame().unwrap().samples;
    let (b2, c) = live.next_frame().unwrap().samples;
    assert!(a != b && b != c && a != c && a > 0, "{a} {b} {c}");
    assert_eq!(b2, b);
    assert_eq!(live.latest_frame().samples, (c, c));
    assert!(live.next_frame().is_err(), "the end of the source");
    assert_eq!(live.latest_frame().samples, (c, c));
    let other = Canned {
        snaps: vec![snap(5), snap(5)],
    };
    let mut again = LiveSampler::with_source(other, Filter::default()).unwrap();
    let (d, e) = again.next_frame().unwrap().samples;
    assert!(d > c && e > d, "another sampler's numbers are new ones");
}
