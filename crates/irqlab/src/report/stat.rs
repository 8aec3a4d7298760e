//! The `/proc/stat` section: CPU time shares (since boot or over an
//! interval, with the `--cpus` aggregate) and the system counters. Every
//! difference and share comes from `irqlab_core::delta`.

use super::{CpuPctLine, StatSection};
use crate::filter::Filter;
use irqlab_core::delta::{self, CpuPct};
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
    let since_boot = old.is_default();
    out.cpu_pct.clear();
    if f.cpus.is_some() {
        selected_cpu_pct(old, new, f, elapsed_s, since_boot, out);
    } else {
        out.aggregate_cpus = None;
        // the aggregate line first, its share known once every CPU is seen
        out.cpu_pct.push(CpuPctLine {
            cpu: None,
            pct: None,
        });
        let lines = &mut out.cpu_pct;
        let aggregate = CpuPct::per_cpu_and_aggregate(old, new, elapsed_s, |cpu, pct| {
            if f.keep_cpu(cpu) {
                lines.push(CpuPctLine {
                    cpu: Some(cpu),
                    pct,
                });
            }
        });
        if let Some(first) = out.cpu_pct.first_mut() {
            first.pct = aggregate;
        }
    }
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

/// The time shares of [`stat_section_into`] under `--cpus` (into
/// `out.cpu_pct`, emptied by the caller): the selected CPUs summed into
/// the first line (none when the selection is empty), then each selected
/// CPU's own. Not inlined: its code stays out of the lines the common
/// path (no `--cpus`) runs through.
#[inline(never)]
fn selected_cpu_pct(
    old: &Stat,
    new: &Stat,
    f: &Filter,
    elapsed_s: Option<f64>,
    since_boot: bool,
    out: &mut StatSection,
) {
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
    let cpus = out.aggregate_cpus.get_or_insert_with(Vec::new);
    let (o, n) = selected_times(old, new, f, since_boot, cpus);
    // an empty selection sums nothing: no aggregate line at all
    if !cpus.is_empty() {
        out.cpu_pct.push(CpuPctLine {
            cpu: None,
            pct: pct(&o, &n, cpus.len()),
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
