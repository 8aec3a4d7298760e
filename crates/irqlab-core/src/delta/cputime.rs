//! CPU time shares between two `/proc/stat` samples.
//!
//! Owns [`CpuPct`], [`cpu_pct`] (one `cpu`/`cpuN` line against its earlier
//! self), [`stat_aggregate_pct`] (all CPUs) and their interval forms
//! [`cpu_pct_over`] / [`stat_aggregate_pct_over`], which also refuse a step
//! no CPU could have taken in the elapsed time (a gap, never 100 %). The aggregate share is
//! summed from the per-CPU lines of the CPUs present in both samples, never
//! taken from the aggregate `cpu` line, whose idle and iowait go backwards
//! when a CPU comes back online (the kernel sums them over possible CPUs
//! and an offline CPU's idle time is recomputed on return).

use crate::stat::{CpuTimes, Stat};
use serde::Serialize;

/// Share of CPU time per state over an interval, in percent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CpuPct {
    pub user_pct: f64,
    pub nice_pct: f64,
    pub system_pct: f64,
    pub idle_pct: f64,
    pub iowait_pct: f64,
    pub irq_pct: f64,
    pub softirq_pct: f64,
    pub steal_pct: f64,
}

impl CpuPct {
    /// The shares in the order mpstat and top print them: user, nice,
    /// system, iowait, irq, softirq, steal, idle (they add up to 100).
    pub fn in_print_order(&self) -> [f64; 8] {
        [
            self.user_pct,
            self.nice_pct,
            self.system_pct,
            self.iowait_pct,
            self.irq_pct,
            self.softirq_pct,
            self.steal_pct,
            self.idle_pct,
        ]
    }
}

/// Fields that make up the total: user … steal (guest time is already
/// inside user/nice and is not added again).
const N: usize = 8;

fn field(t: &CpuTimes, i: usize) -> u64 {
    t.fields.get(i).copied().unwrap_or(0)
}

fn shares(d: &[u64; N]) -> Option<CpuPct> {
    let total: f64 = d.iter().map(|&v| v as f64).sum();
    if total <= 0.0 {
        return None;
    }
    let p = |i: usize| 100.0 * d.get(i).copied().unwrap_or(0) as f64 / total;
    Some(CpuPct {
        user_pct: p(0),
        nice_pct: p(1),
        system_pct: p(2),
        idle_pct: p(3),
        iowait_pct: p(4),
        irq_pct: p(5),
        softirq_pct: p(6),
        steal_pct: p(7),
    })
}

/// The most clock ticks one CPU can account in `elapsed_s` seconds: the
/// kernel reports USER_HZ (100) ticks per second; four times that plus one
/// second covers tickless catch-up and sampling skew, and anything above is
/// a corrupt or reset counter.
pub fn max_ticks(elapsed_s: f64) -> f64 {
    (elapsed_s.max(0.0) + 1.0) * 400.0
}

/// The sum of one line's user … steal ticks between two samples.
fn step_ticks(old: &CpuTimes, new: &CpuTimes) -> f64 {
    (0..N)
        .map(|i| field(new, i).saturating_sub(field(old, i)) as f64)
        .sum()
}

/// [`cpu_pct`] over an interval of `elapsed_s` seconds for a line that sums
/// `ncpus` CPUs: `None` (a gap) when the line advanced by more ticks than
/// that many CPUs can account in the interval.
pub fn cpu_pct_over(
    old: &CpuTimes,
    new: &CpuTimes,
    elapsed_s: f64,
    ncpus: usize,
) -> Option<CpuPct> {
    if step_ticks(old, new) > max_ticks(elapsed_s) * ncpus.max(1) as f64 {
        return None;
    }
    cpu_pct(old, new)
}

/// [`stat_aggregate_pct`] over an interval of `elapsed_s` seconds: `None`
/// (a gap) when any CPU's line advanced by more ticks than one CPU can
/// account in the interval.
pub fn stat_aggregate_pct_over(old: &Stat, new: &Stat, elapsed_s: f64) -> Option<CpuPct> {
    let limit = max_ticks(elapsed_s);
    for n in &new.cpus {
        let Some(o) = old.cpus.iter().find(|o| o.cpu.is_some() && o.cpu == n.cpu) else {
            continue;
        };
        if step_ticks(o, n) > limit {
            return None;
        }
    }
    stat_aggregate_pct(old, new)
}

/// CPU time shares between two `cpu` lines of `/proc/stat` (pass an empty
/// `old` for "since boot"). Fields that went backwards (a per-CPU iowait
/// wobble) count as 0. `None` when no tick elapsed.
pub fn cpu_pct(old: &CpuTimes, new: &CpuTimes) -> Option<CpuPct> {
    let mut d = [0u64; N];
    for (i, v) in d.iter_mut().enumerate() {
        *v = field(new, i).saturating_sub(field(old, i));
    }
    shares(&d)
}

/// All-CPU time shares from `old` to `new`: the sum of the per-CPU lines
/// of CPUs present in both samples (a CPU that came or went is left out).
/// `None` (a gap) when no CPU is in both, no tick elapsed, or a counter of
/// one of them went backwards — never a share from a counter that went
/// backwards. An empty `old` (the default `Stat`) means "since boot": the
/// aggregate line is then the only sample there is.
pub fn stat_aggregate_pct(old: &Stat, new: &Stat) -> Option<CpuPct> {
    if old == &Stat::default() {
        return cpu_pct(&CpuTimes::default(), &new.total);
    }
    let mut d = [0u64; N];
    let mut any = false;
    for n in &new.cpus {
        let Some(o) = old.cpus.iter().find(|o| o.cpu.is_some() && o.cpu == n.cpu) else {
            continue;
        };
        any = true;
        for (i, v) in d.iter_mut().enumerate() {
            let step = field(n, i).checked_sub(field(o, i))?;
            *v = v.saturating_add(step);
        }
    }
    if any {
        shares(&d)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(cpu: Option<u32>, f: [u64; 8]) -> CpuTimes {
        CpuTimes {
            cpu,
            fields: f.to_vec(),
        }
    }

    fn stat(total: [u64; 8], cpus: &[(u32, [u64; 8])]) -> Stat {
        Stat {
            total: line(None, total),
            cpus: cpus.iter().map(|&(c, f)| line(Some(c), f)).collect(),
            ..Stat::default()
        }
    }

    #[test]
    fn aggregate_across_hotplug_comes_from_cpus_in_both_samples() {
        // CPU1 comes back, the aggregate idle goes backwards
        // (229758 -> 227341); an idle machine must stay idle.
        let old = stat(
            [100, 0, 50, 229_758, 10, 0, 5, 0],
            &[(0, [60, 0, 30, 120_000, 5, 0, 3, 0])],
        );
        let new = stat(
            [110, 0, 55, 227_341, 3000, 0, 6, 0],
            &[
                (0, [65, 0, 32, 120_193, 5, 0, 3, 0]),
                (1, [45, 0, 23, 107_148, 2995, 0, 3, 0]),
            ],
        );
        let p = stat_aggregate_pct(&old, &new).unwrap();
        assert!((p.idle_pct - 96.5).abs() < 0.01, "{p:?}");
        assert_eq!(p.iowait_pct, 0.0);
        let sum = p.user_pct + p.system_pct + p.idle_pct + p.iowait_pct + p.softirq_pct;
        assert!((sum - 100.0).abs() < 1e-9);
    }

    #[test]
    fn aggregate_is_a_gap_when_a_counter_went_backwards_or_nothing_matches() {
        let old = stat([0; 8], &[(0, [10, 0, 10, 100, 9, 0, 0, 0])]);
        let back = stat([0; 8], &[(0, [20, 0, 20, 200, 8, 0, 0, 0])]);
        assert_eq!(stat_aggregate_pct(&old, &back), None);
        let other = stat([0; 8], &[(1, [20, 0, 20, 200, 9, 0, 0, 0])]);
        assert_eq!(stat_aggregate_pct(&old, &other), None);
        assert_eq!(stat_aggregate_pct(&old, &old), None);
    }

    #[test]
    fn a_step_no_cpu_could_take_is_a_gap_not_a_share() {
        // a per-CPU jump of 2^50 ticks in one second
        let old = stat([0; 8], &[(0, [10, 0, 10, 100, 0, 0, 0, 0])]);
        let jump = stat([0; 8], &[(0, [10 + (1 << 50), 0, 10, 200, 0, 0, 0, 0])]);
        assert_eq!(stat_aggregate_pct_over(&old, &jump, 1.0), None);
        let (o, n) = (&old.cpus[0], &jump.cpus[0]);
        assert_eq!(cpu_pct_over(o, n, 1.0, 1), None);
        assert_eq!(cpu_pct_over(o, n, 1.0, 4096), None);
        // a real second: ~100 ticks per CPU
        let fine = stat([0; 8], &[(0, [60, 0, 10, 150, 0, 0, 0, 0])]);
        let p = stat_aggregate_pct_over(&old, &fine, 1.0).unwrap();
        assert!((p.user_pct - 50.0).abs() < 1e-9, "{p:?}");
        assert_eq!(cpu_pct_over(o, &fine.cpus[0], 1.0, 1), Some(p));
        // an aggregate line of 8 CPUs may advance 8 times as far
        let eight = line(None, [1600, 0, 0, 1600, 0, 0, 0, 0]);
        assert!(cpu_pct_over(&line(None, [0; 8]), &eight, 1.0, 8).is_some());
        assert!(cpu_pct_over(&line(None, [0; 8]), &eight, 1.0, 1).is_none());
    }

    #[test]
    fn since_boot_uses_the_aggregate_line() {
        let new = stat([1, 0, 1, 2, 0, 0, 0, 0], &[]);
        let p = stat_aggregate_pct(&Stat::default(), &new).unwrap();
        assert_eq!(p.idle_pct, 50.0);
    }
}
