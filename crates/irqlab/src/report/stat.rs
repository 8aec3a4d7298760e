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
/// more ticks than its CPUs can account in `elapsed_s`, nor a CPU of `old`
/// that `new` lacks (it went offline: a line all the same). A line that
/// accounted no tick has zeros.
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
                let pct = pct.or_else(|| cpu_still(old, new, cpu, since_boot));
                lines.push(CpuPctLine {
                    cpu: Some(cpu),
                    pct,
                });
            }
        });
        if let Some(first) = out.cpu_pct.first_mut() {
            first.pct = aggregate.or_else(|| machine_still(old, new, since_boot));
        }
    }
    if !since_boot {
        mark_gone(old, new, f, &mut out.cpu_pct);
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
    let share = |cpu: Option<u32>, t: &CpuTimes| {
        let o = since(cpu)?;
        pct(o, t, 1).or_else(|| still(o, t).then(CpuPct::default))
    };
    let cpus = out.aggregate_cpus.get_or_insert_with(Vec::new);
    let (o, n) = selected_times(old, new, f, since_boot, cpus);
    // an empty selection sums nothing: no aggregate line at all
    if !cpus.is_empty() {
        let sum = pct(&o, &n, cpus.len()).or_else(|| still(&o, &n).then(CpuPct::default));
        out.cpu_pct.push(CpuPctLine {
            cpu: None,
            pct: sum,
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

/// A gap line for each kept CPU of `old` that `new` lacks (it went
/// offline during the interval), placed by id among the others: shown as
/// a gap, never left out. One merge walk over the two ascending id lists;
/// a line is inserted only when a CPU went.
fn mark_gone(old: &Stat, new: &Stat, f: &Filter, lines: &mut Vec<CpuPctLine>) {
    let mut ids = new.cpus.iter().filter_map(|t| t.cpu).peekable();
    for id in old.cpus.iter().filter_map(|t| t.cpu) {
        while ids.next_if(|&c| c < id).is_some() {}
        if ids.next_if_eq(&id).is_some() {
            continue;
        }
        if f.keep_cpu(id) && line_of(&new.cpus, id).is_none() {
            gone_line(lines, id);
        }
    }
}

/// Insert CPU `id`'s gap line before the first line of a higher id.
#[cold]
fn gone_line(lines: &mut Vec<CpuPctLine>, id: u32) {
    let at = lines
        .iter()
        .position(|l| l.cpu.is_some_and(|c| c > id))
        .unwrap_or(lines.len());
    lines.insert(
        at,
        CpuPctLine {
            cpu: Some(id),
            pct: None,
        },
    );
}

/// Whether no tick of user … steal went by from `old` to `new`: the
/// line has no share to divide, yet its CPU was there all along, so it
/// gets a line of zeros rather than the gap of a CPU that came or went.
fn still(old: &CpuTimes, new: &CpuTimes) -> bool {
    const SHARED: usize = 8; // user … steal, as `delta` counts them
    let at = |t: &CpuTimes, i: usize| t.fields.get(i).copied().unwrap_or(0);
    (0..SHARED).all(|i| at(old, i) == at(new, i))
}

/// CPU `cpu`'s line of `cpus`: a binary search in the parser's order
/// (ascending ids), a scan otherwise.
fn line_of(cpus: &[CpuTimes], cpu: u32) -> Option<&CpuTimes> {
    match cpus.binary_search_by_key(&Some(cpu), |t| t.cpu) {
        Ok(k) => cpus.get(k),
        Err(_) => cpus.iter().find(|t| t.cpu == Some(cpu)),
    }
}

/// Zeros for CPU `cpu` when `delta` gave it no share because no tick went
/// by (it is in both samples, or the count is since boot); `None` (a gap)
/// otherwise. Runs only for lines without a share.
#[cold]
fn cpu_still(old: &Stat, new: &Stat, cpu: u32, since_boot: bool) -> Option<CpuPct> {
    let zero = CpuTimes::default();
    let o = if since_boot {
        &zero
    } else {
        line_of(&old.cpus, cpu)?
    };
    let n = line_of(&new.cpus, cpu)?;
    still(o, n).then(CpuPct::default)
}

/// Zeros for the all-CPU line when no CPU in both samples moved a tick
/// (and one at least is in both; since boot: the `cpu` line is all
/// zeros); `None` (a gap) otherwise.
#[cold]
fn machine_still(old: &Stat, new: &Stat, since_boot: bool) -> Option<CpuPct> {
    if since_boot {
        return still(&CpuTimes::default(), &new.total).then(CpuPct::default);
    }
    let mut both = false;
    for n in &new.cpus {
        let Some(o) = n.cpu.and_then(|c| line_of(&old.cpus, c)) else {
            continue;
        };
        if !still(o, n) {
            return None;
        }
        both = true;
    }
    both.then(CpuPct::default)
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
