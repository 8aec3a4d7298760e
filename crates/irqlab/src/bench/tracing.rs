//! `bench --trace`: what eBPF tracing adds to each trial. A
//! `trace::live_trace::LiveTrace` is marked just before a trial's timed window
//! and read just after it; [`trace_metrics`] turns the interval into
//! trial metrics. Every metric is a cost, lower is better,
//! except the event counts (direction none). Pure: no I/O here.

use super::metric_value::Metric;
use super::metrics::slug;
use crate::direction::Direction;
use crate::trace::interval::Interval;
use crate::trace::top::max_opt;

fn lower(name: String, value: f64, unit: &str) -> Metric {
    Metric::new(name, value, unit, Direction::Lower)
}

/// Hard IRQ and softirq time of `iv` in percent of all CPUs' time (the
/// exact figures behind `irq_cpu_pct`/`softirq_cpu_pct` where /proc/stat
/// has only tick samples).
pub fn time_shares(iv: &Interval) -> (f64, f64) {
    let cpus = iv.cpus.len().max(1) as f64;
    let all = iv.elapsed_ns.max(1) as f64 * cpus;
    let irq_ns: u64 = iv.cpus.iter().map(|c| c.irq_ns).sum();
    let soft_ns: u64 = iv.cpus.iter().map(|c| c.softirq_ns).sum();
    (irq_ns as f64 * 100.0 / all, soft_ns as f64 * 100.0 / all)
}

/// The trial metrics of one traced interval:
/// - `trace_irq_time_pct`, `trace_softirq_time_pct`: hard IRQ (handlers
///   and system vectors) and softirq time (without nested hard IRQs) in
///   percent of all CPUs' time — exact sums of durations, where
///   `/proc/stat` has 0 (no IRQ time accounting) or tick samples;
/// - per softirq vector that ran: `trace_softirq_<v>_count`, `_time_pct`,
///   `_p50_ns`/`_p99_ns` (run time) and `_latency_p50_ns`/`_p99_ns`
///   (raise to entry);
/// - per hard IRQ label that ran (`/proc/interrupts` label: `24`, `LOC`):
///   `trace_irq_<label>_count`, `_avg_ns` and `_p99_ns` (the slowest of
///   its actions' p99);
/// - `trace_missed_runs`: runs the rows above do not hold, always present
///   (the kernel skipped the programs while another BPF program or a map
///   read ran on the CPU, or the hard IRQ map was full).
pub fn trace_metrics(iv: &Interval) -> Vec<Metric> {
    let cpus = iv.cpus.len().max(1) as f64;
    let all = iv.elapsed_ns.max(1) as f64 * cpus;
    let share = |ns: u64| ns as f64 * 100.0 / all;
    let irq_ns: u64 = iv.cpus.iter().map(|c| c.irq_ns).sum();
    let soft_ns: u64 = iv.cpus.iter().map(|c| c.softirq_ns).sum();
    let mut m = vec![
        lower("trace_irq_time_pct".into(), share(irq_ns), "%"),
        lower("trace_softirq_time_pct".into(), share(soft_ns), "%"),
    ];
    for s in iv.softirqs.iter().filter(|s| s.count > 0) {
        let p = format!("trace_softirq_{}", slug(&s.name));
        m.push(Metric::new(
            format!("{p}_count"),
            s.count as f64,
            "1",
            Direction::None,
        ));
        m.push(lower(format!("{p}_time_pct"), share(s.own_ns), "%"));
        let quantiles = [
            ("p50_ns", s.p50_ns),
            ("p99_ns", s.p99_ns),
            ("latency_p50_ns", s.latency_p50_ns),
            ("latency_p99_ns", s.latency_p99_ns),
        ];
        for (name, v) in quantiles {
            if let Some(v) = v {
                m.push(lower(format!("{p}_{name}"), v, "ns"));
            }
        }
    }
    let mut labels: Vec<(&str, u64, u64, Option<f64>)> = Vec::new();
    for l in iv.irqs.iter().filter(|l| l.count > 0) {
        match labels.iter_mut().find(|(lab, ..)| *lab == l.label) {
            Some(e) => {
                e.1 += l.count;
                e.2 += l.total_ns;
                e.3 = max_opt(e.3, l.p99_ns);
            }
            None => labels.push((&l.label, l.count, l.total_ns, l.p99_ns)),
        }
    }
    for (label, count, total, p99) in labels {
        let p = format!("trace_irq_{}", slug(label));
        m.push(Metric::new(
            format!("{p}_count"),
            count as f64,
            "1",
            Direction::None,
        ));
        m.push(lower(
            format!("{p}_avg_ns"),
            total as f64 / count as f64,
            "ns",
        ));
        if let Some(v) = p99 {
            m.push(lower(format!("{p}_p99_ns"), v, "ns"));
        }
    }
    let missed = iv.dropped + iv.missed.values().sum::<u64>();
    m.push(Metric::new(
        "trace_missed_runs",
        missed as f64,
        "1",
        Direction::None,
    ));
    m
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::trace::interval::{CpuTime, SoftLine, TracedIrq};
    use crate::trace::sample::TraceKey;

    fn cpu(cpu: u32, irq_ns: u64, softirq_ns: u64) -> CpuTime {
        CpuTime {
            cpu,
            irq_ns,
            softirq_ns,
            irq_pct: 0.0,
            softirq_pct: 0.0,
        }
    }

    fn irq(label: &str, name: &str, count: u64, total_ns: u64, p99: f64) -> TracedIrq {
        TracedIrq {
            key: TraceKey::Hardirq {
                irq: label.parse().unwrap_or(0),
                name: name.into(),
            },
            label: label.into(),
            count,
            total_ns,
            avg_ns: total_ns as f64 / count.max(1) as f64,
            p50_ns: Some(p99 / 2.0),
            p99_ns: Some(p99),
            hist: None,
            per_cpu: Vec::new(),
        }
    }

    fn net_rx(count: u64, own_ns: u64) -> SoftLine {
        SoftLine {
            vec: 3,
            name: "NET_RX".into(),
            count,
            total_ns: own_ns,
            own_ns,
            avg_ns: 0.0,
            p50_ns: Some(2000.0),
            p99_ns: Some(9000.0),
            ksoftirqd_count: 0,
            ksoftirqd_ns: 0,
            latency_count: count,
            latency_p50_ns: Some(500.0),
            latency_p99_ns: None,
            hist: None,
            latency_hist: None,
            per_cpu: Vec::new(),
        }
    }

    fn get(m: &[Metric], name: &str) -> Option<f64> {
        m.iter().find(|x| x.name == name).map(|x| x.value)
    }

    #[test]
    fn shares_of_all_cpu_time_per_vector_and_per_irq_label() {
        let iv = Interval {
            end_mono_ns: 0,
            elapsed_ns: 1_000_000_000,
            irqs: vec![
                irq("24", "virtio0-req.0", 10, 40_000, 7000.0),
                irq("24", "other", 30, 20_000, 9000.0),
                irq("LOC", "", 0, 0, 0.0),
            ],
            softirqs: vec![net_rx(100, 50_000_000)],
            cpus: vec![cpu(0, 10_000_000, 50_000_000), cpu(1, 30_000_000, 0)],
            dropped: 0,
            missed: Default::default(),
        };
        let m = trace_metrics(&iv);
        assert_eq!(get(&m, "trace_irq_time_pct"), Some(2.0), "40 ms of 2 CPU-s");
        assert_eq!(get(&m, "trace_softirq_time_pct"), Some(2.5));
        assert_eq!(get(&m, "trace_softirq_net_rx_count"), Some(100.0));
        assert_eq!(get(&m, "trace_softirq_net_rx_time_pct"), Some(2.5));
        assert_eq!(get(&m, "trace_softirq_net_rx_latency_p50_ns"), Some(500.0));
        assert_eq!(get(&m, "trace_softirq_net_rx_latency_p99_ns"), None);
        assert_eq!(get(&m, "trace_irq_24_count"), Some(40.0), "actions summed");
        assert_eq!(get(&m, "trace_irq_24_avg_ns"), Some(1500.0));
        assert_eq!(
            get(&m, "trace_irq_24_p99_ns"),
            Some(9000.0),
            "slowest action"
        );
        assert_eq!(get(&m, "trace_irq_loc_count"), None, "did not run");
        assert_eq!(get(&m, "trace_missed_runs"), Some(0.0), "always present");
        let mut missing = iv.clone();
        missing.dropped = 2;
        missing.missed = [("RES".to_string(), 3), ("softirq".to_string(), 4)].into();
        assert_eq!(
            get(&trace_metrics(&missing), "trace_missed_runs"),
            Some(9.0)
        );
        for x in &m {
            let want = if x.name.ends_with("_count") || x.name == "trace_missed_runs" {
                Direction::None
            } else {
                Direction::Lower
            };
            assert_eq!(x.direction, want, "{}", x.name);
        }
    }
}
