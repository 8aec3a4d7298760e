//! Test fixtures: deterministic samples built from synth trees (two
//! snapshots one second apart with fixed count increments), so tests and
//! snapshots never depend on timing.

use super::app::FrameView;
use crate::filter::Filter;
use crate::report;
use crate::threads::{classify, ThreadCpu, ThreadKind};
use irqlab_core::render::{Arch, Era};
use irqlab_core::synth::SynthSpec;
use irqlab_core::{Interrupts, Snapshot, Softirqs, Stat};

/// Two snapshots of a synth machine, 1 s apart, and the sample from them.
pub fn sample(cpus: u32, irqs: u32) -> FrameView {
    let (old, new) = snapshots(cpus, irqs);
    sample_of(&old, &new, cpus)
}

/// The sample of two snapshots of a `cpus`-CPU machine.
pub fn sample_of(old: &Snapshot, new: &Snapshot, cpus: u32) -> FrameView {
    let mut report = report::rates(
        old,
        new,
        &Filter::default(),
        report::RateOpts {
            deltas: true,
            ..report::RateOpts::default()
        },
    );
    for row in report.interrupts.iter_mut().flat_map(|s| s.rows.iter_mut()) {
        row.affinity = row.irq.map(|n| format!("{}", n % cpus));
    }
    FrameView {
        report,
        strategy: Some(crate::sampler::Strategy::ProcInterrupts),
        self_cost: crate::sampler::SelfCost {
            user_ns: 100_000,
            system_ns: 200_000,
            cpu_ns: 321_000,
            wall_ns: 400_000,
        },
        trace: None,
        stat: old.stat.clone().zip(new.stat.clone()).map(Box::new),
    }
}

/// The two snapshots of [`sample`].
pub fn snapshots(cpus: u32, irqs: u32) -> (Snapshot, Snapshot) {
    let old = synth_snapshot(cpus, irqs);
    let new = advance(&old);
    (old, new)
}

/// One snapshot of a synth x86 machine (seed 7), at time 0.
pub fn synth_snapshot(cpus: u32, irqs: u32) -> Snapshot {
    let spec = SynthSpec {
        cpus,
        irqs,
        nr_irqs: 2048,
        arch: Arch::X86,
        era: Era::E3,
        offline: vec![],
        seed: 7,
    };
    let tree = spec.build().unwrap();
    let files = tree.files();
    let get = |p: &str| files.iter().find(|f| f.0 == p).unwrap().1.clone();
    Snapshot {
        mono_ns: 0,
        wall_ns: 0,
        interrupts: Some(Interrupts::parse(&get("proc/interrupts")).unwrap()),
        softirqs: Some(Softirqs::parse(&get("proc/softirqs")).unwrap()),
        stat: Some(Stat::parse(&get("proc/stat")).unwrap()),
    }
}

/// [`small_sample`] with traced time (`top --trace`), for the traced view.
pub fn traced_sample() -> FrameView {
    FrameView {
        trace: Some(crate::trace::top::fake::top_trace()),
        ..small_sample()
    }
}

/// The small machine used by the unit and snapshot tests.
pub fn small_sample() -> FrameView {
    sample(4, 12)
}

/// Deterministic increments: row r, column c grows by a skewed amount.
fn advance(old: &Snapshot) -> Snapshot {
    let mut new = old.clone();
    new.mono_ns = 1_000_000_000;
    if let Some(i) = new.interrupts.as_mut() {
        for (r, row) in i.rows_mut().iter_mut().enumerate() {
            for (c, v) in row.counts.iter_mut().enumerate() {
                *v += ((r * 37 + c * 11) % 23) as u64 * (r as u64 % 5) * 97;
            }
        }
    }
    if let Some(s) = new.softirqs.as_mut() {
        for (r, row) in s.rows.iter_mut().enumerate() {
            for (c, v) in row.counts.iter_mut().enumerate() {
                *v += ((r * 13 + c * 7) % 17) as u64 * 31;
            }
        }
    }
    if let Some(st) = new.stat.as_mut() {
        let bump = |f: &mut Vec<u64>, c: usize| {
            for (k, v) in f.iter_mut().enumerate().take(8) {
                *v += [
                    40,
                    6,
                    20,
                    30,
                    3,
                    (c % 4) as u64,
                    (c % 7) as u64 + 2,
                    1 + (c % 3) as u64,
                ][k];
            }
        };
        bump(&mut st.total.fields, 3);
        for (c, t) in st.cpus.iter_mut().enumerate() {
            bump(&mut t.fields, c);
        }
    }
    new
}

/// A fixed thread list.
pub fn threads() -> Vec<ThreadCpu> {
    vec![
        ThreadCpu {
            pid: Some(15),
            name: "ksoftirqd/0".into(),
            kind: classify("ksoftirqd/0").unwrap_or(ThreadKind::IrqThread { irq: 0 }),
            cpu_pct: 3.5,
            last_cpu: None,
            cpu_ns: 0,
        },
        ThreadCpu {
            pid: Some(22),
            name: "ksoftirqd/1".into(),
            kind: classify("ksoftirqd/1").unwrap_or(ThreadKind::IrqThread { irq: 0 }),
            cpu_pct: 0.25,
            last_cpu: None,
            cpu_ns: 0,
        },
        ThreadCpu {
            pid: Some(812),
            name: "irq/122-nvme0q1".into(),
            kind: classify("irq/122-nvme0q1").unwrap_or(ThreadKind::IrqThread { irq: 0 }),
            cpu_pct: 12.0,
            last_cpu: None,
            cpu_ns: 0,
        },
    ]
}
