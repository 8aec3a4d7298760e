//! What `top --trace` adds to each frame: exact interrupt time from the
//! eBPF maps read in the same tick as /proc. One [`Interval`] becomes a
//! compact [`TopTrace`]: per-CPU irq/softirq % (sum of durations over the
//! interval), per softirq vector time and raise-to-entry latency, and per
//! /proc/interrupts label (actions summed) handler time, kept for the rows
//! top shows; the JSON line of `top --batch` carries it as its `trace`
//! object (`export::jsonl`), the text and interactive views print it.
//! Pure but for [`start`], which attaches the programs through
//! `trace::live_trace` (feature `trace`; without it `--trace` is refused); the
//! live half is `trace::live_trace::LiveTrace`, read once per sampler tick by
//! [`tick`].
//! Flags and output formatting stay in `cmd/top/`.

use super::interval::{CpuTime, Interval};
use crate::filter::Filter;
use anyhow::Result;
use irqlab_core::Snapshot;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// The session behind `top --trace`, read once per tick.
pub type Tracing = super::live_trace::LiveTrace;

/// How long a signal waits for top to print its last lines and detach
/// before the guard restores the host itself (see `guard::defer_signals`).
pub const SIGNAL_GRACE: Duration = Duration::from_secs(3);

/// Attach the programs; notes (mount, absent tracepoints) for stderr.
#[cfg(feature = "trace")]
pub fn start(root: &Path, filter: &Filter) -> Result<(Tracing, Vec<String>)> {
    use anyhow::Context;
    let fs = crate::host::HostFs::new(root);
    let (t, notes) = super::live_trace::LiveTrace::start(&fs, filter.cpus.clone())
        .context("--trace: attaching the tracing programs")?;
    Ok((t, notes))
}

/// Without the feature: the error `top` prints before exiting 2.
#[cfg(not(feature = "trace"))]
pub fn start(_: &Path, _: &Filter) -> Result<(Tracing, Vec<String>)> {
    anyhow::bail!("top --trace: {}", super::NOT_BUILT)
}

/// The traced figures of this tick, handler time kept for the IRQ rows
/// the `--irq` filter keeps in `cur`; `last`: the run's last tick, read
/// closing ([`Tracing::closing_tick`]).
pub fn tick(t: &mut Tracing, cur: &Snapshot, filter: &Filter, last: bool) -> Result<TopTrace> {
    let iv = t.tick_closing_if(last)?;
    Ok(shown(&iv, cur, filter))
}

/// The traced figures from the first tick to the last (`Average:`).
pub fn whole_run(t: &Tracing, latest: &Snapshot, filter: &Filter) -> TopTrace {
    shown(&t.whole_run(), latest, filter)
}

/// What a frame shows of traced interval `iv`: handler time kept for the
/// IRQ rows `filter` keeps in `cur` (live, and `replay` of a traced
/// recording).
pub fn shown(iv: &Interval, cur: &Snapshot, filter: &Filter) -> TopTrace {
    let rows = cur
        .interrupts
        .as_ref()
        .map(|i| i.rows())
        .unwrap_or_default();
    TopTrace::new(iv, |label| {
        rows.iter()
            .any(|r| r.label == label && filter.keep_irq_row(r))
    })
}

/// A softirq vector's traced time over the interval (selected CPUs).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SoftTime {
    pub name: String,
    /// Runs completed in the interval.
    pub count: u64,
    /// Run time without the hard IRQs nested in it, ns.
    pub own_ns: u64,
    /// `own_ns` per second of interval, in µs (1000 = one CPU 0.1 % busy).
    pub us_per_s: f64,
    /// Run time quantiles (interpolated in the log2 histogram), ns.
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    /// Raise -> entry latency quantiles, ns.
    pub latency_p50_ns: Option<f64>,
    pub latency_p99_ns: Option<f64>,
}

/// Hard IRQ handler (or system vector) time of one /proc/interrupts label.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LabelTime {
    /// `24`, `LOC`: the row of /proc/interrupts it counts into.
    pub label: String,
    /// Handler runs (all actions of the IRQ).
    pub count: u64,
    pub total_ns: u64,
    /// Handler time per second of interval, in µs.
    pub us_per_s: f64,
    pub avg_ns: f64,
    /// The slowest action's p99, ns.
    pub p99_ns: Option<f64>,
}

/// The traced figures of one top frame.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct TopTrace {
    /// The traced interval (the maps' read times), ns.
    pub elapsed_ns: u64,
    /// Per CPU (the selected ones): exact hard IRQ and softirq time.
    pub cpus: Vec<CpuTime>,
    /// Mean of those CPUs' irq % and softirq %: the machine's share.
    pub irq_pct: f64,
    pub softirq_pct: f64,
    /// Softirq vectors that ran, most time first.
    pub softirqs: Vec<SoftTime>,
    /// Handler time per label, most time first; only labels kept.
    pub irqs: Vec<LabelTime>,
    /// Hard IRQ runs the programs could not count (their map was full).
    pub dropped: u64,
    /// Runs the kernel skipped the programs for, per group of rows
    /// ([`super::missed`]).
    pub missed: super::missed::Missed,
}

fn per_s(ns: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 {
        0.0
    } else {
        ns as f64 * 1e6 / elapsed_ns as f64
    }
}

/// The larger of two optional values (a slowest p99 of several actions).
pub(crate) fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

impl TopTrace {
    /// From one interval; `keep` says which /proc labels are shown.
    pub fn new(iv: &Interval, keep: impl Fn(&str) -> bool) -> TopTrace {
        let e = iv.elapsed_ns;
        let n = iv.cpus.len().max(1) as f64;
        let share = |f: fn(&CpuTime) -> f64| iv.cpus.iter().map(f).sum::<f64>() / n;
        let softirqs = iv
            .softirqs
            .iter()
            .filter(|s| s.count > 0 || s.latency_count > 0)
            .map(|s| SoftTime {
                name: s.name.clone(),
                count: s.count,
                own_ns: s.own_ns,
                us_per_s: per_s(s.own_ns, e),
                p50_ns: s.p50_ns,
                p99_ns: s.p99_ns,
                latency_p50_ns: s.latency_p50_ns,
                latency_p99_ns: s.latency_p99_ns,
            })
            .collect::<Vec<_>>();
        let mut irqs: Vec<LabelTime> = Vec::new();
        for l in iv.irqs.iter().filter(|l| l.count > 0 && keep(&l.label)) {
            match irqs.iter_mut().find(|x| x.label == l.label) {
                Some(x) => {
                    x.count += l.count;
                    x.total_ns += l.total_ns;
                    x.p99_ns = max_opt(x.p99_ns, l.p99_ns);
                }
                None => irqs.push(LabelTime {
                    label: l.label.clone(),
                    count: l.count,
                    total_ns: l.total_ns,
                    us_per_s: 0.0,
                    avg_ns: 0.0,
                    p99_ns: l.p99_ns,
                }),
            }
        }
        for x in &mut irqs {
            x.us_per_s = per_s(x.total_ns, e);
            x.avg_ns = x.total_ns as f64 / x.count.max(1) as f64;
        }
        irqs.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.label.cmp(&b.label)));
        let mut softirqs = softirqs;
        softirqs.sort_by(|a, b| b.own_ns.cmp(&a.own_ns).then(a.name.cmp(&b.name)));
        TopTrace {
            elapsed_ns: e,
            cpus: iv.cpus.clone(),
            irq_pct: share(|c| c.irq_pct),
            softirq_pct: share(|c| c.softirq_pct),
            softirqs,
            irqs,
            dropped: iv.dropped,
            missed: iv.missed.clone(),
        }
    }

    /// Handler time of the row labelled `label`, if it ran.
    pub fn irq(&self, label: &str) -> Option<&LabelTime> {
        self.irqs.iter().find(|x| x.label == label)
    }

    /// The traced time of softirq vector `name`, if it ran.
    pub fn softirq(&self, name: &str) -> Option<&SoftTime> {
        self.softirqs.iter().find(|x| x.name == name)
    }

    /// Exact time of CPU `cpu`, if selected.
    pub fn cpu(&self, cpu: u32) -> Option<&CpuTime> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }
}

/// Can tracing see this /proc/interrupts row? Numbered IRQs (handler
/// tracepoints) and the x86 vectors irqlab's programs cover; not NMI,
/// PMI, MCE, TLB (no tracepoint) and the like.
pub fn traceable(label: &str) -> bool {
    label.parse::<u32>().is_ok() || irqlab_bpf::VECTORS.iter().any(|v| v.label == label)
}

/// `µs/s` as shown in tables: one decimal below 100, none above.
pub fn us_per_s(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A latency in ns as `850ns`, `12.3µs`, `4.1ms`; `-` when unknown.
pub fn ns(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v < 1e3 => format!("{v:.0}ns"),
        Some(v) if v < 1e6 => format!("{:.1}µs", v / 1e3),
        Some(v) => format!("{:.1}ms", v / 1e6),
    }
}

/// Test data: an interval with two CPUs, one device IRQ of two actions,
/// LOC, NET_RX and TIMER (also used by the top renderers' tests).
#[cfg(test)]
pub(crate) mod fake {
    use super::*;
    use crate::trace::interval::{between, IntervalView};
    use crate::trace::sample::{Sample, SoftirqStats, Stats, TraceKey};

    fn stats(count: u64, total_ns: u64, slot: usize) -> Stats {
        let mut s = Stats {
            count,
            total_ns,
            ..Stats::default()
        };
        if let Some(h) = s.hist.get_mut(slot) {
            *h = count;
        }
        s
    }

    fn soft(count: u64, ns: u64, nested: u64, lat_slot: usize) -> SoftirqStats {
        SoftirqStats {
            run: stats(count, ns, 12),
            nested_irq_ns: nested,
            latency: stats(count, count * 1000, lat_slot),
            ..SoftirqStats::default()
        }
    }

    /// One second: CPU 0 busier than CPU 1.
    pub fn interval() -> Interval {
        between(&Sample::default(), &sample(), &IntervalView::default())
    }

    /// The maps' counters after [`interval`], read from zero.
    pub fn sample() -> Sample {
        let hard = |irq, name: &str| TraceKey::Hardirq {
            irq,
            name: name.into(),
        };
        Sample {
            at_ns: 1_000_000_000,
            irqs: vec![
                (
                    hard(24, "virtio0-input.0"),
                    vec![stats(1000, 3_000_000, 12), stats(10, 30_000, 12)],
                ),
                (
                    hard(24, "other"),
                    vec![stats(5, 5_000, 10), Stats::default()],
                ),
                (
                    TraceKey::Vector {
                        label: "LOC".into(),
                        tracepoint: "local_timer".into(),
                    },
                    vec![stats(250, 1_000_000, 12), stats(100, 400_000, 12)],
                ),
            ],
            softirqs: vec![
                (
                    3,
                    vec![soft(900, 20_000_000, 1_000_000, 11), soft(0, 0, 0, 0)],
                ),
                (1, vec![soft(250, 500_000, 0, 9), soft(100, 200_000, 0, 9)]),
            ],
            drops: vec![],
            missed: Default::default(),
        }
    }

    /// [`interval`] as top shows it, every label kept.
    pub fn top_trace() -> TopTrace {
        TopTrace::new(&interval(), |_| true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_sum_their_actions_and_keep_filters_rows() {
        let t = fake::top_trace();
        let irq24 = t.irq("24").unwrap();
        assert_eq!((irq24.count, irq24.total_ns), (1015, 3_035_000));
        assert!((irq24.us_per_s - 3035.0).abs() < 1e-9);
        assert_eq!(t.irqs[0].label, "24", "most time first");
        let only_loc = TopTrace::new(&fake::interval(), |l| l == "LOC");
        assert_eq!(only_loc.irqs.len(), 1);
        assert_eq!(only_loc.cpus.len(), 2, "CPU time is not row-filtered");
    }

    #[test]
    fn cpu_shares_softirq_time_and_latency() {
        let t = fake::top_trace();
        let c0 = t.cpu(0).unwrap();
        // 3 ms + 5 µs + 1 ms of handlers, 20 ms NET_RX - 1 ms nested + 0.5 ms TIMER
        assert_eq!(c0.irq_ns, 4_005_000);
        assert_eq!(c0.softirq_ns, 19_500_000);
        assert!((t.softirq_pct - (1.95 + 0.02) / 2.0).abs() < 1e-9, "{t:?}");
        let net = t.softirq("NET_RX").unwrap();
        assert_eq!(net.own_ns, 19_000_000);
        assert!((net.us_per_s - 19_000.0).abs() < 1e-9);
        assert!(net.latency_p50_ns.unwrap() >= 1024.0);
        assert_eq!(t.softirqs[0].name, "NET_RX");
    }

    use crate::trace::interval::IntervalView;
    use crate::trace::live_trace::{LiveTrace, TraceSession};
    use crate::trace::sample::{Sample, Stats};

    /// A tracing session whose counters grow by the fake interval's at
    /// every read (from zero at the baseline).
    struct Fake(u64);

    impl TraceSession for Fake {
        fn read(&mut self, out: &mut Sample) -> anyhow::Result<()> {
            let k = self.0;
            self.0 += 1;
            let scale = |s: &mut Stats| {
                s.count *= k;
                s.total_ns *= k;
                s.hist.iter_mut().for_each(|h| *h *= k);
            };
            *out = fake::sample();
            out.at_ns *= k;
            for s in out.irqs.iter_mut().flat_map(|(_, v)| v) {
                scale(s);
            }
            for s in out.softirqs.iter_mut().flat_map(|(_, v)| v) {
                scale(&mut s.run);
                scale(&mut s.latency);
                s.nested_irq_ns *= k;
            }
            Ok(())
        }
    }

    fn snapshot() -> Snapshot {
        let spec = irqlab_core::synth::SynthSpec {
            cpus: 2,
            irqs: 30,
            nr_irqs: 2048,
            arch: irqlab_core::render::Arch::X86,
            era: irqlab_core::render::Era::E3,
            offline: vec![],
            seed: 7,
        };
        let tree = spec.build().unwrap();
        let files = tree.files();
        let text = &files.iter().find(|f| f.0 == "proc/interrupts").unwrap().1;
        Snapshot {
            mono_ns: 0,
            wall_ns: 0,
            interrupts: Some(irqlab_core::Interrupts::parse(text).unwrap()),
            softirqs: None,
            stat: None,
        }
    }

    #[test]
    fn handler_time_is_kept_for_the_rows_the_filter_keeps() {
        let mut t: Tracing = LiveTrace::new(Box::new(Fake(0)), IntervalView::default()).unwrap();
        let snap = snapshot();
        let all = tick(&mut t, &snap, &Filter::default(), false).unwrap();
        let labels: Vec<&str> = all.irqs.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["24", "LOC"], "both rows exist in the tree");
        let only_loc = Filter::from_flags(Some("^LOC$"), None).unwrap();
        let t1 = tick(&mut t, &snap, &only_loc, true).unwrap();
        assert_eq!(t1.irqs.len(), 1);
        assert_eq!(t1.irqs[0].label, "LOC");
        assert_eq!(t1.cpus.len(), 2, "CPU time is not row-filtered");
        assert_eq!(t1.softirqs.len(), 2, "nor are softirqs");
        let avg = whole_run(&t, &snap, &only_loc);
        assert_eq!(avg, t1);
    }

    #[test]
    fn numbered_rows_and_traced_vectors_are_traceable() {
        assert!(traceable("24") && traceable("LOC") && traceable("CAL"));
        assert!(!traceable("NMI") && !traceable("TLB") && !traceable("MIS"));
    }

    #[test]
    fn formats_are_short() {
        assert_eq!(us_per_s(3.04), "3.0");
        assert_eq!(us_per_s(3035.0), "3035");
        assert_eq!(ns(None), "-");
        assert_eq!(ns(Some(850.0)), "850ns");
        assert_eq!(ns(Some(12_345.0)), "12.3µs");
        assert_eq!(ns(Some(4_100_000.0)), "4.1ms");
    }
}
