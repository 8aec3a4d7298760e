//! Two [`Sample`]s -> one [`Interval`]: per-row counts, times, quantiles
//! and per-CPU exact irq / softirq CPU % (sum of durations / interval).
//! The only place trace numbers are computed; renderers only format them.

use super::sample::{quantile_ns, softirq_name, Sample, SoftirqStats, Stats, TraceKey, HIST_SLOTS};
use crate::filter::Filter;
use serde::Serialize;

/// What to keep: the rows and CPUs of every command's row filter, and
/// whether to keep histograms.
#[derive(Debug, Clone, Default)]
pub struct IntervalView {
    /// Hard IRQ / vector / softirq rows tested as a row with this label
    /// whose one action is the row's name (`--irq`, `--exclude`), and the
    /// CPUs the rows are summed over (`--cpus`).
    pub filter: Filter,
    /// Keep histograms in the rows (`--hist`).
    pub hist: bool,
}

impl IntervalView {
    /// Every row, only these CPUs (None: all), no histograms.
    pub fn of_cpus(cpus: Option<Vec<u32>>) -> IntervalView {
        IntervalView {
            filter: Filter {
                cpus,
                ..Filter::default()
            },
            hist: false,
        }
    }

    fn cpu(&self, cpu: u32) -> bool {
        self.filter.keep_cpu(cpu)
    }

    /// Whether the row filter keeps the row `label` whose one action is
    /// `name` (a softirq: its name twice).
    pub fn row(&self, label: &str, name: &str) -> bool {
        self.filter
            .keep_fields(label, name, "", std::iter::once(name))
    }
}

/// The runs missed over an interval as a text report says them for a
/// selection: the machine-wide counts of the groups whose rows it shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MissedShown {
    /// The groups the selection shows a row of, each with its count of
    /// every row and CPU (the counts are not split per row or CPU).
    pub groups: super::missed::Missed,
    /// `--cpus` selects CPUs: the counts are of all CPUs.
    pub all_cpus: bool,
    /// `--irq` or `--exclude` selects rows: a group's count holds its
    /// other rows' too.
    pub rows_filtered: bool,
}

impl IntervalView {
    /// `missed` (an interval's, per group) as shown for this selection:
    /// only the groups it shows rows of (a hard IRQ row of `cur`, a
    /// softirq vector, a vector label kept by `--irq`/`--exclude`).
    pub fn missed_shown(&self, missed: &super::missed::Missed, cur: &Sample) -> MissedShown {
        MissedShown {
            groups: missed
                .iter()
                .filter(|(g, _)| self.shows_group(g, cur))
                .map(|(g, &n)| (g.clone(), n))
                .collect(),
            all_cpus: self.filter.cpus.is_some(),
            rows_filtered: self.filter.irq.is_some() || self.filter.exclude.is_some(),
        }
    }

    /// Whether the row filter keeps some row of `group` (named as in
    /// [`super::missed`]); an unknown group is kept.
    fn shows_group(&self, group: &str, cur: &Sample) -> bool {
        use irqlab_bpf::maps::SOFTIRQ_NAMES;
        use irqlab_bpf::maps::VECTORS;
        match group {
            "hardirq" => cur
                .irqs
                .iter()
                .filter(|(k, _)| matches!(k, TraceKey::Hardirq { .. }))
                .any(|(k, _)| self.row(&k.label(), k.name())),
            "softirq" | "softirq_raise" => SOFTIRQ_NAMES.iter().any(|n| self.row(n, n)),
            label => {
                let mut vectors = VECTORS.iter().filter(|v| v.label == label).peekable();
                vectors.peek().is_none() || vectors.any(|v| self.row(v.label, v.tracepoint))
            }
        }
    }
}

/// Count and time of one row on one CPU.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuShare {
    pub cpu: u32,
    pub count: u64,
    pub total_ns: u64,
}

/// A hard IRQ action or a vector over the interval (selected CPUs summed).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TracedIrq {
    #[serde(flatten)]
    pub key: TraceKey,
    /// The /proc/interrupts label (`24`, `LOC`).
    pub label: String,
    pub count: u64,
    pub total_ns: u64,
    pub avg_ns: f64,
    /// Quantiles interpolated in the log2 histogram.
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hist: Option<[u64; HIST_SLOTS]>,
    pub per_cpu: Vec<CpuShare>,
}

/// A softirq vector over the interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SoftLine {
    pub vec: u32,
    pub name: String,
    pub count: u64,
    /// Entry -> exit, nested hard IRQs included (bcc's figure).
    pub total_ns: u64,
    /// Without the hard IRQs nested in it (what the CPU % uses).
    pub own_ns: u64,
    pub avg_ns: f64,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    /// Runs (and their time) in ksoftirqd; the rest ran at irq exit or bh enable.
    pub ksoftirqd_count: u64,
    pub ksoftirqd_ns: u64,
    /// Raise -> entry latency.
    pub latency_count: u64,
    pub latency_p50_ns: Option<f64>,
    pub latency_p99_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hist: Option<[u64; HIST_SLOTS]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_hist: Option<[u64; HIST_SLOTS]>,
    pub per_cpu: Vec<CpuShare>,
}

/// Exact interrupt time of one CPU over the interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuTime {
    pub cpu: u32,
    /// Hard IRQ handlers + system vectors.
    pub irq_ns: u64,
    /// Softirqs without the hard IRQs nested in them.
    pub softirq_ns: u64,
    pub irq_pct: f64,
    pub softirq_pct: f64,
}

/// One interval of `irqlab trace`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Interval {
    /// CLOCK_MONOTONIC at the end read (the start is `elapsed_ns`
    /// before): lines other tracers' windows up with this one.
    pub end_mono_ns: u64,
    pub elapsed_ns: u64,
    /// Busiest first (total time).
    pub irqs: Vec<TracedIrq>,
    pub softirqs: Vec<SoftLine>,
    pub cpus: Vec<CpuTime>,
    /// Hard IRQ runs not counted in this interval because the programs'
    /// (IRQ, action) map was full, all CPUs: the rows above miss them.
    pub dropped: u64,
    /// Runs the programs did not count in this interval, per group of
    /// rows, only groups with some: skipped by the kernel, or counted by
    /// it and seen by no program (see [`super::missed`]): those rows lack
    /// that many.
    pub missed: super::missed::Missed,
}

fn avg(total: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        total as f64 / count as f64
    }
}

fn pct(ns: u64, elapsed: u64) -> f64 {
    if elapsed == 0 {
        0.0
    } else {
        ns as f64 * 100.0 / elapsed as f64
    }
}

/// Per-CPU difference of two cumulative vectors (missing = zero).
fn per_cpu<'a, T: Default + Clone + 'a>(
    cur: &'a [T],
    prev: Option<&'a [T]>,
    minus: impl Fn(&T, &T) -> T + 'a,
) -> impl Iterator<Item = (u32, T)> + 'a {
    let zero = T::default();
    cur.iter().enumerate().filter_map(move |(i, c)| {
        let p = prev.and_then(|p| p.get(i)).unwrap_or(&zero);
        u32::try_from(i).ok().map(|cpu| (cpu, minus(c, p)))
    })
}

/// The interval between `prev` and `cur` (both cumulative since attach).
pub fn between(prev: &Sample, cur: &Sample, sel: &IntervalView) -> Interval {
    let elapsed_ns = cur.at_ns.saturating_sub(prev.at_ns);
    let ncpu = cur.ncpu();
    let mut irq_ns = vec![0u64; ncpu];
    let mut soft_ns = vec![0u64; ncpu];
    let mut irqs = Vec::new();
    for (key, values) in &cur.irqs {
        let before = prev
            .irqs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice());
        let mut sum = Stats::default();
        let mut shares = Vec::new();
        for (cpu, d) in per_cpu(values, before, Stats::minus) {
            if let Some(slot) = usize::try_from(cpu).ok().and_then(|i| irq_ns.get_mut(i)) {
                *slot += d.total_ns;
            }
            if sel.cpu(cpu) && d.count > 0 {
                sum.add(&d);
                shares.push(CpuShare {
                    cpu,
                    count: d.count,
                    total_ns: d.total_ns,
                });
            }
        }
        if sum.count == 0 || !sel.row(&key.label(), key.name()) {
            continue;
        }
        irqs.push(TracedIrq {
            label: key.label(),
            key: key.clone(),
            count: sum.count,
            total_ns: sum.total_ns,
            avg_ns: avg(sum.total_ns, sum.count),
            p50_ns: quantile_ns(&sum.hist, 0.5),
            p99_ns: quantile_ns(&sum.hist, 0.99),
            hist: sel.hist.then_some(sum.hist),
            per_cpu: shares,
        });
    }
    irqs.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.key.cmp(&b.key)));
    let mut softirqs = Vec::new();
    for (vec, values) in &cur.softirqs {
        let before = prev
            .softirqs
            .iter()
            .find(|(v, _)| v == vec)
            .map(|(_, v)| v.as_slice());
        let mut sum = SoftirqStats::default();
        let mut shares = Vec::new();
        for (cpu, d) in per_cpu(values, before, SoftirqStats::minus) {
            let own = d.run.total_ns.saturating_sub(d.nested_irq_ns);
            if let Some(slot) = usize::try_from(cpu).ok().and_then(|i| soft_ns.get_mut(i)) {
                *slot += own;
            }
            if sel.cpu(cpu) && (d.run.count > 0 || d.latency.count > 0) {
                sum.add(&d);
                shares.push(CpuShare {
                    cpu,
                    count: d.run.count,
                    total_ns: d.run.total_ns,
                });
            }
        }
        let name = softirq_name(*vec);
        if sum.run.count == 0 && sum.latency.count == 0 || !sel.row(&name, &name) {
            continue;
        }
        softirqs.push(SoftLine {
            vec: *vec,
            name,
            count: sum.run.count,
            total_ns: sum.run.total_ns,
            own_ns: sum.run.total_ns.saturating_sub(sum.nested_irq_ns),
            avg_ns: avg(sum.run.total_ns, sum.run.count),
            p50_ns: quantile_ns(&sum.run.hist, 0.5),
            p99_ns: quantile_ns(&sum.run.hist, 0.99),
            ksoftirqd_count: sum.ksoftirqd_count,
            ksoftirqd_ns: sum.ksoftirqd_ns,
            latency_count: sum.latency.count,
            latency_p50_ns: quantile_ns(&sum.latency.hist, 0.5),
            latency_p99_ns: quantile_ns(&sum.latency.hist, 0.99),
            hist: sel.hist.then_some(sum.run.hist),
            latency_hist: sel.hist.then_some(sum.latency.hist),
            per_cpu: shares,
        });
    }
    softirqs.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.vec.cmp(&b.vec)));
    let cpus = (0..ncpu)
        .filter_map(|i| u32::try_from(i).ok())
        .filter(|&c| sel.cpu(c))
        .map(|cpu| {
            let i = cpu as usize;
            let (irq, soft) = (
                irq_ns.get(i).copied().unwrap_or(0),
                soft_ns.get(i).copied().unwrap_or(0),
            );
            CpuTime {
                cpu,
                irq_ns: irq,
                softirq_ns: soft,
                irq_pct: pct(irq, elapsed_ns),
                softirq_pct: pct(soft, elapsed_ns),
            }
        })
        .collect();
    let dropped = cur
        .drops
        .iter()
        .enumerate()
        .map(|(i, &d)| d.saturating_sub(prev.drops.get(i).copied().unwrap_or(0)))
        .sum();
    Interval {
        end_mono_ns: cur.at_ns,
        elapsed_ns,
        irqs,
        softirqs,
        cpus,
        dropped,
        missed: super::missed::since(&cur.missed, &prev.missed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::sample::hardirq_rows;

    fn stats(count: u64, total_ns: u64) -> Stats {
        let mut s = Stats {
            count,
            total_ns,
            ..Stats::default()
        };
        s.hist[10] = count;
        s
    }

    fn key(irq: i32, name: &str) -> TraceKey {
        TraceKey::Hardirq {
            irq,
            name: name.into(),
        }
    }

    fn sample(at_ns: u64, disk: [(u64, u64); 2], net: [(u64, u64, u64); 2]) -> Sample {
        Sample {
            at_ns,
            irqs: vec![(
                key(24, "virtio2-req.0"),
                disk.iter().map(|&(c, t)| stats(c, t)).collect(),
            )],
            softirqs: vec![(
                3,
                net.iter()
                    .map(|&(c, t, nested)| SoftirqStats {
                        run: stats(c, t),
                        nested_irq_ns: nested,
                        ..SoftirqStats::default()
                    })
                    .collect(),
            )],
            drops: vec![],
            missed: Default::default(),
        }
    }

    #[test]
    fn cpu_percent_is_sum_of_durations_over_the_interval() {
        let a = sample(
            1_000_000_000,
            [(10, 1000), (0, 0)],
            [(1, 100, 0), (0, 0, 0)],
        );
        let b = sample(
            2_000_000_000,
            [(110, 10_001_000), (5, 500)],
            [(3, 20_000_100, 1_000_000), (0, 0, 0)],
        );
        let iv = between(&a, &b, &IntervalView::default());
        assert_eq!(iv.elapsed_ns, 1_000_000_000);
        assert_eq!(iv.irqs.len(), 1);
        let l = &iv.irqs[0];
        assert_eq!((l.count, l.total_ns), (105, 10_000_500));
        assert_eq!(l.label, "24");
        assert_eq!(l.per_cpu.len(), 2);
        let cpu0 = &iv.cpus[0];
        assert_eq!(cpu0.irq_ns, 10_000_000);
        assert!((cpu0.irq_pct - 1.0).abs() < 1e-9);
        // 20 ms of NET_RX of which 1 ms was nested hard IRQ time
        assert_eq!(cpu0.softirq_ns, 19_000_000);
        assert!((cpu0.softirq_pct - 1.9).abs() < 1e-9);
        assert_eq!(iv.softirqs[0].name, "NET_RX");
        assert_eq!(iv.softirqs[0].own_ns, 19_000_000);
    }

    #[test]
    fn filters_keep_rows_and_cpus_but_cpu_time_counts_everything() {
        let a = sample(0, [(0, 0), (0, 0)], [(0, 0, 0), (0, 0, 0)]);
        let b = sample(1_000, [(1, 10), (2, 20)], [(1, 5, 0), (0, 0, 0)]);
        let sel = IntervalView {
            filter: Filter::from_flags(Some("^NET"), Some("1")).unwrap(),
            hist: true,
        };
        let iv = between(&a, &b, &sel);
        assert!(iv.irqs.is_empty());
        assert!(iv.softirqs.is_empty(), "NET_RX ran on CPU 0 only");
        assert_eq!(iv.cpus.len(), 1);
        assert_eq!((iv.cpus[0].cpu, iv.cpus[0].irq_ns), (1, 20));
        let sel = IntervalView {
            filter: Filter::from_flags(Some("virtio"), Some("1")).unwrap(),
            ..sel
        };
        let iv = between(&a, &b, &sel);
        assert_eq!(iv.irqs[0].count, 2);
        assert!(iv.irqs[0].hist.is_some());
        let sel = IntervalView {
            filter: sel.filter.excluding(Some("virtio")).unwrap(),
            ..sel
        };
        assert!(between(&a, &b, &sel).irqs.is_empty(), "--exclude drops it");
    }

    /// `trace -i 50ms`: an interval repeated the previous interval's row
    /// (`31 virtio0-stats 8 112.4` beside a new `31 … 1 14.8`). Cause:
    /// one action split over two map keys (bytes after the NUL differ),
    /// both shown as the same row key; the stale one, counted on CPU 1,
    /// was paired with the other's baseline (counted on CPU 0) and showed
    /// its whole cumulative count again every interval.
    #[test]
    fn an_interval_never_repeats_the_previous_intervals_row() {
        use irqlab_bpf::maps::{IrqKey, NAME_LEN};
        let raw = |tail: &[u8]| {
            let mut name = [0u8; NAME_LEN];
            name[..tail.len()].copy_from_slice(tail);
            IrqKey { irq: 31, name }
        };
        let (clean, split) = (raw(b"virtio0-stats"), raw(b"virtio0-stats\0.0"));
        // the clean key gains one run per interval on CPU 0; the split key
        // holds 8 runs from before the window on CPU 1
        let maps = |n: u64| {
            vec![
                (clean, vec![stats(n, n * 14_800), Stats::default()]),
                (split, vec![Stats::default(), stats(8, 112_400)]),
            ]
        };
        let at = |n: u64, rows: Vec<(TraceKey, Vec<Stats>)>| Sample {
            at_ns: n * 50_000_000,
            irqs: rows,
            ..Sample::default()
        };
        let rows_of = |iv: &Interval| -> Vec<(u64, u64)> {
            iv.irqs.iter().map(|l| (l.count, l.total_ns)).collect()
        };
        // the split rows as they were shown: the stale row comes back
        let unmerged = |n: u64| {
            maps(n)
                .into_iter()
                .map(|(k, v)| (key(k.irq, &k.name()), v))
                .collect::<Vec<_>>()
        };
        let sel = IntervalView::default();
        let (s1, s2, s3) = (at(1, unmerged(1)), at(2, unmerged(2)), at(3, unmerged(3)));
        assert_eq!(
            rows_of(&between(&s1, &s2, &sel)),
            [(8, 112_400), (1, 14_800)]
        );
        assert_eq!(
            rows_of(&between(&s2, &s3, &sel)),
            [(8, 112_400), (1, 14_800)]
        );
        // one row per (IRQ, action): only what ran in the interval
        let one = |n: u64| at(n, hardirq_rows(&maps(n)));
        let (s1, s2, s3) = (one(1), one(2), one(3));
        assert_eq!(s1.irqs.len(), 1);
        for iv in [between(&s1, &s2, &sel), between(&s2, &s3, &sel)] {
            assert_eq!(rows_of(&iv), [(1, 14_800)], "{iv:?}");
            assert_eq!(iv.irqs[0].key.name(), "virtio0-stats");
        }
    }

    /// `trace --irq 'virtio|NET_RX' --cpus 1` named LOC, a row it does
    /// not show, in its MISSED line.
    #[test]
    fn missed_runs_are_shown_for_the_groups_the_selection_shows() {
        let missed: crate::trace::missed::Missed = [("LOC", 1), ("softirq", 2), ("hardirq", 3)]
            .iter()
            .map(|&(g, n)| (g.to_string(), n))
            .collect();
        let cur = sample(0, [(1, 1), (0, 0)], [(0, 0, 0), (0, 0, 0)]);
        let shown = |irq: Option<&str>, exclude: Option<&str>, cpus: Option<&str>| {
            let sel = IntervalView {
                filter: Filter::from_flags(irq, cpus)
                    .unwrap()
                    .excluding(exclude)
                    .unwrap(),
                hist: false,
            };
            sel.missed_shown(&missed, &cur)
        };
        let groups = |m: MissedShown| m.groups.into_keys().collect::<Vec<_>>();
        let all = shown(None, None, None);
        assert_eq!(all.groups, missed);
        assert!(!all.all_cpus && !all.rows_filtered);
        let s = shown(Some("virtio|NET_RX"), None, Some("1"));
        assert!(s.all_cpus && s.rows_filtered);
        assert_eq!(groups(s), ["hardirq", "softirq"]);
        assert_eq!(groups(shown(Some("^NET_RX$"), None, None)), ["softirq"]);
        assert_eq!(groups(shown(Some("^LOC$"), None, None)), ["LOC"]);
        assert_eq!(groups(shown(None, Some("LOC|virtio"), None)), ["softirq"]);
        let cpus = shown(None, None, Some("99"));
        assert!(cpus.all_cpus && !cpus.rows_filtered);
        assert_eq!(cpus.groups, missed, "counts are not split per CPU");
    }

    #[test]
    fn dropped_runs_are_counted_per_interval() {
        let a = Sample {
            drops: vec![2, 0],
            missed: Default::default(),
            ..Sample::default()
        };
        let mut b = a.clone();
        b.drops = vec![5, 1];
        assert_eq!(between(&a, &b, &IntervalView::default()).dropped, 4);
        assert_eq!(between(&b, &b, &IntervalView::default()).dropped, 0);
    }

    #[test]
    fn a_row_new_in_cur_counts_from_zero() {
        let a = Sample::default();
        let b = sample(5, [(3, 30), (0, 0)], [(0, 0, 0), (0, 0, 0)]);
        let iv = between(&a, &b, &IntervalView::default());
        assert_eq!(iv.irqs[0].count, 3);
        assert!(iv.softirqs.is_empty());
    }
}
