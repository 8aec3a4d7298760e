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

impl CpuPct {
    /// Every CPU's share and the all-CPU share from `old` to `new` in one
    /// pass over the CPUs. `line(id, share)` gets each CPU line of `new`
    /// that has an id, in order, with the share [`cpu_pct_over`] of one
    /// CPU gives ([`cpu_pct`] when `elapsed_s` is `None`) against that
    /// CPU's line in `old`: none when `old` lacks it, a line of zeros when
    /// `old` is the default `Stat` (since boot). Returns the all-CPU share
    /// as [`stat_aggregate_pct`] defines it; with `elapsed_s`, also a gap
    /// when a CPU in both advanced by more ticks than one CPU can account
    /// ([`stat_aggregate_pct_over`]). Both are this with no `line`.
    pub fn per_cpu_and_aggregate(
        old: &Stat,
        new: &Stat,
        elapsed_s: Option<f64>,
        mut line: impl FnMut(u32, Option<CpuPct>),
    ) -> Option<CpuPct> {
        let since_boot = old.is_default();
        let limit = elapsed_s.map(max_ticks);
        let ascending = ids_ascending(&old.cpus);
        let zero = CpuTimes::default();
        let mut sum = [0u64; N];
        // a CPU in both samples, and one of them a gap for the aggregate
        let (mut any, mut gap) = (false, false);
        for (i, n) in new.cpus.iter().enumerate() {
            let Some(id) = n.cpu else {
                continue;
            };
            let o = match same_cpu(&old.cpus, ascending, i, id) {
                Some(o) => o,
                None if since_boot => &zero,
                None => {
                    line(id, None);
                    continue;
                }
            };
            let (d, back) = steps(o, n);
            let ticks: f64 = d.iter().map(|&v| v as f64).sum();
            let over = limit.is_some_and(|l| ticks > l);
            if !since_boot {
                any = true;
                gap |= over || back;
                for (s, v) in sum.iter_mut().zip(d) {
                    *s = s.saturating_add(v);
                }
            }
            line(id, if over { None } else { shares(&d) });
        }
        if since_boot {
            cpu_pct(&zero, &new.total)
        } else if any && !gap {
            shares(&sum)
        } else {
            None
        }
    }
}

/// Whether every line of `cpus` has an id and the ids ascend strictly
/// (each CPU once: the parser's order), so that a CPU is found by its
/// position or a binary search.
fn ids_ascending(cpus: &[CpuTimes]) -> bool {
    cpus.first().is_none_or(|c| c.cpu.is_some())
        && cpus.windows(2).all(|w| match w {
            [a, b] => a.cpu < b.cpu,
            _ => true,
        })
}

/// The first line of `old` for CPU `id`, looked up first at position `i`
/// (the same CPUs in both samples) when `old`'s ids ascend.
fn same_cpu(old: &[CpuTimes], ascending: bool, i: usize, id: u32) -> Option<&CpuTimes> {
    if !ascending {
        return old.iter().find(|o| o.cpu == Some(id));
    }
    match old.get(i) {
        Some(o) if o.cpu == Some(id) => Some(o),
        _ => old
            .binary_search_by_key(&Some(id), |o| o.cpu)
            .ok()
            .and_then(|k| old.get(k)),
    }
}

/// Each of user … steal's step from `old` to `new` (0 where it went
/// backwards), and whether any went backwards.
fn steps(old: &CpuTimes, new: &CpuTimes) -> ([u64; N], bool) {
    let mut d = [0u64; N];
    let mut back = false;
    // both lines print every field (any kernel since 2.6.33): no field
    // looked up one by one
    if let (Some(o), Some(n)) = (old.fields.first_chunk::<N>(), new.fields.first_chunk::<N>()) {
        for ((v, &n), &o) in d.iter_mut().zip(n).zip(o) {
            back |= n < o;
            *v = n.saturating_sub(o);
        }
        return (d, back);
    }
    for (i, v) in d.iter_mut().enumerate() {
        let (n, o) = (field(new, i), field(old, i));
        back |= n < o;
        *v = n.saturating_sub(o);
    }
    (d, back)
}

/// Fields that make up the total: user … steal (guest time is already
/// inside user/nice and is not added again).
const N: usize = 8;

fn field(t: &CpuTimes, i: usize) -> u64 {
    t.fields.get(i).copied().unwrap_or(0)
}

/// The shares of the ticks `d` (user … steal) in their sum; `None` when
/// no tick elapsed. One copy (not inlined) for every caller.
#[inline(never)]
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
    CpuPct::per_cpu_and_aggregate(old, new, Some(elapsed_s), |_, _| {})
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
    CpuPct::per_cpu_and_aggregate(old, new, None, |_, _| {})
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

    /// The aggregate share by its definition, line by line (the reference
    /// [`CpuPct::per_cpu_and_aggregate`] is checked against): `None` when
    /// a CPU in both samples advanced by more ticks than one CPU can
    /// account in `elapsed_s`, or went backwards; else the shares of the
    /// summed steps of the CPUs in both.
    fn reference_aggregate(old: &Stat, new: &Stat, elapsed_s: Option<f64>) -> Option<CpuPct> {
        if old.is_default() {
            return cpu_pct(&CpuTimes::default(), &new.total);
        }
        let mut d = [0u64; N];
        let mut any = false;
        for n in &new.cpus {
            let Some(o) = old.cpus.iter().find(|o| o.cpu.is_some() && o.cpu == n.cpu) else {
                continue;
            };
            if elapsed_s.is_some_and(|s| step_ticks(o, n) > max_ticks(s)) {
                return None;
            }
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

    /// A random `Stat` of up to 6 CPU lines: ids mostly ascending, now and
    /// then shuffled, repeated or missing; fields mostly near `base`, some
    /// far above (a step no CPU can take) or below it (backwards).
    fn random_stat(rng: &mut crate::rng::Rng, base: u64) -> Stat {
        let field = |rng: &mut crate::rng::Rng| match rng.next_u64() % 12 {
            0 => base.saturating_sub(rng.next_u64() % 50),
            1 => base + (1 << 40) + rng.next_u64() % 9,
            2 => 0,
            _ => base + rng.next_u64() % 300,
        };
        let n = rng.next_u64() % 7;
        let mut cpus: Vec<CpuTimes> = (0..n)
            .map(|k| CpuTimes {
                cpu: match rng.next_u64() % 16 {
                    0 => None,
                    1 => Some((rng.next_u64() % 4) as u32),
                    _ => Some(k as u32 * (1 + (rng.next_u64() % 2) as u32)),
                },
                fields: (0..4 + rng.next_u64() % 8).map(|_| field(rng)).collect(),
            })
            .collect();
        if rng.next_u64() % 8 == 0 {
            cpus.reverse();
        }
        Stat {
            total: CpuTimes {
                cpu: None,
                fields: (0..8).map(|_| field(rng)).collect(),
            },
            cpus,
            ..Stat::default()
        }
    }

    #[test]
    fn one_pass_shares_are_those_of_the_per_line_functions() {
        let mut rng = crate::rng::Rng::new(5);
        let (mut shares, mut gaps) = (0, 0);
        for case in 0..20_000 {
            let old = match case % 10 {
                0 => Stat::default(),
                _ => random_stat(&mut rng, 1000),
            };
            let new = random_stat(&mut rng, 1000 + 200 * (case % 3));
            let elapsed = match case % 4 {
                0 => None,
                _ => Some((rng.next_u64() % 3000) as f64 / 1000.0),
            };
            let since_boot = old == Stat::default();
            let zero = CpuTimes::default();
            let mut want = Vec::new();
            for n in &new.cpus {
                let Some(id) = n.cpu else { continue };
                let o = old.cpus.iter().find(|t| t.cpu == Some(id));
                let share = o
                    .or(since_boot.then_some(&zero))
                    .and_then(|o| match elapsed {
                        Some(s) => cpu_pct_over(o, n, s, 1),
                        None => cpu_pct(o, n),
                    });
                want.push((id, share));
            }
            let want_all = reference_aggregate(&old, &new, elapsed);
            let by_wrapper = match elapsed {
                Some(s) => stat_aggregate_pct_over(&old, &new, s),
                None => stat_aggregate_pct(&old, &new),
            };
            assert_eq!(by_wrapper, want_all, "{case}: {old:?} -> {new:?}");
            let mut got = Vec::new();
            let all = CpuPct::per_cpu_and_aggregate(&old, &new, elapsed, |id, p| got.push((id, p)));
            shares += usize::from(all.is_some()) + got.iter().filter(|g| g.1.is_some()).count();
            gaps += usize::from(all.is_none()) + got.iter().filter(|g| g.1.is_none()).count();
            assert_eq!((all, got), (want_all, want), "{case}: {old:?} -> {new:?}");
        }
        // both kinds of outcome are common
        assert!(
            shares > 10_000 && gaps > 10_000,
            "{shares} shares, {gaps} gaps"
        );
    }

    #[test]
    fn since_boot_uses_the_aggregate_line() {
        let new = stat([1, 0, 1, 2, 0, 0, 0, 0], &[]);
        let p = stat_aggregate_pct(&Stat::default(), &new).unwrap();
        assert_eq!(p.idle_pct, 50.0);
    }
}
