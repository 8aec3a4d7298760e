//! The `/proc/stat` section: CPU time shares (since boot or over an
//! interval, with the `--cpus` aggregate) and the system counters. Every
//! difference and share comes from `irqlab_core::delta`.

use super::{CpuPctLine, StatSection};
use crate::filter::Filter;
use irqlab_core::delta;
use irqlab_core::stat::{CpuTimes, Stat};

/// Time shares from `old` to `new`, `elapsed_s` apart (`None`: since
/// boot). A CPU absent from a non-empty `old` (it came online) has no
/// share (a gap), never one since boot; nor has a line that advanced by
/// more ticks than its CPUs can account in `elapsed_s`.
pub fn stat_section(old: &Stat, new: &Stat, f: &Filter, elapsed_s: Option<f64>) -> StatSection {
    let mut out = StatSection::default();
    stat_section_into(old, new, f, elapsed_s, &mut out);
    out
}

/// [`stat_section`] into `out`, replacing its content and reusing its
/// vectors: a sampler that keeps one section allocates nothing per
/// sample (without `--cpus`).
pub fn stat_section_into(
    old: &Stat,
    new: &Stat,
    f: &Filter,
    elapsed_s: Option<f64>,
    out: &mut StatSection,
) {
    let since_boot = old == &Stat::default();
    let zero = CpuTimes::default();
    let since = |cpu: Option<u32>| -> Option<&CpuTimes> {
        let found = match cpu {
            None => Some(&old.total),
            Some(c) => old.cpus.iter().find(|t| t.cpu == Some(c)),
        };
        match found {
            Some(t) => Some(t),
            None if since_boot => Some(&zero),
            None => None,
        }
    };
    let pct = |o: &CpuTimes, n: &CpuTimes, ncpus: usize| match elapsed_s {
        Some(secs) => delta::cpu_pct_over(o, n, secs, ncpus),
        None => delta::cpu_pct(o, n),
    };
    let share = |cpu: Option<u32>, t: &CpuTimes| since(cpu).and_then(|o| pct(o, t, 1));
    let mut selected = out.aggregate_cpus.take();
    let aggregate = match (&f.cpus, elapsed_s) {
        (None, Some(secs)) => {
            selected = None;
            delta::stat_aggregate_pct_over(old, new, secs)
        }
        (None, None) => {
            selected = None;
            delta::stat_aggregate_pct(old, new)
        }
        (Some(_), _) => {
            let cpus = selected.get_or_insert_with(Vec::new);
            let (o, n) = selected_times(old, new, f, since_boot, cpus);
            (!cpus.is_empty())
                .then(|| pct(&o, &n, cpus.len()))
                .flatten()
        }
    };
    // an empty selection sums nothing: no aggregate line at all
    out.cpu_pct.clear();
    if selected.as_ref().is_none_or(|c| !c.is_empty()) {
        out.cpu_pct.push(CpuPctLine {
            cpu: None,
            pct: aggregate,
        });
    }
    out.cpu_pct.extend(
        new.cpus
            .iter()
            .filter(|t| t.cpu.is_some_and(|c| f.keep_cpu(c)))
            .map(|t| CpuPctLine {
                cpu: t.cpu,
                pct: share(t.cpu, t),
            }),
    );
    out.aggregate_cpus = selected;
    // since boot: the value itself; over an interval: `delta`'s difference
    // of a 64-bit counter (a decrease is a reset: no count)
    let diff = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(o), Some(n)) if !since_boot => delta::wide_counter_delta(o, n).count(),
        (_, n) => n,
    };
    out.ctxt = diff(old.ctxt, new.ctxt);
    out.btime = new.btime;
    out.processes = diff(old.processes, new.processes);
    out.procs_running = new.procs_running;
    out.procs_blocked = new.procs_blocked;
    out.intr_total = diff(Some(old.intr_total), Some(new.intr_total)).unwrap_or(0);
    out.softirq_total = diff(old.softirq_total, new.softirq_total);
}

/// The summed lines of the `--cpus` CPUs in `old` and `new` (in rates
/// mode only CPUs present in both samples); which CPUs, into `cpus`.
fn selected_times(
    old: &Stat,
    new: &Stat,
    f: &Filter,
    since_boot: bool,
    cpus: &mut Vec<u32>,
) -> (CpuTimes, CpuTimes) {
    let mut o = CpuTimes::default();
    let mut n = CpuTimes::default();
    cpus.clear();
    for t in &new.cpus {
        let Some(c) = t.cpu.filter(|&c| f.keep_cpu(c)) else {
            continue;
        };
        let before = old.cpus.iter().find(|x| x.cpu == Some(c));
        if before.is_none() && !since_boot {
            continue;
        }
        add_times(&mut n, t);
        if let Some(b) = before {
            add_times(&mut o, b);
        }
        cpus.push(c);
    }
    (o, n)
}

fn add_times(sum: &mut CpuTimes, t: &CpuTimes) {
    if sum.fields.len() < t.fields.len() {
        sum.fields.resize(t.fields.len(), 0);
    }
    for (s, v) in sum.fields.iter_mut().zip(&t.fields) {
        *s = s.saturating_add(*v);
    }
}
