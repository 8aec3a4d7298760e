//! Per-trial system metrics from the snapshots taken just before and just
//! after a trial: selected IRQ rates (total and per CPU), softirq rates per
//! vector, irq and softirq CPU %. Interrupt and softirq rates have no
//! known better direction (`direction: none`: a patch may lower a rate by
//! removing needless shootdowns or raise it by doing more work); CPU
//! shares are costs (lower is better). Rates come from `irqlab_core::delta`;
//! a row with a gap (hotplug, IRQ reuse, reset) yields no value for that
//! trial plus a note, never a garbage rate.

use super::measured::Measured;
use super::metric_value::{Direction, Metric};
use irqlab_core::delta::{self, Cell};
use irqlab_core::Snapshot;

/// Most CPUs for which per-CPU IRQ metrics are recorded.
pub const MAX_PER_CPU: usize = 64;

/// Metrics and notes (why a metric is missing) of one trial.
#[derive(Debug, Default)]
pub struct SystemMetrics {
    pub metrics: Vec<Metric>,
    pub notes: Vec<String>,
}

/// A metric-name-safe form of a label (`I/O` -> `i_o`).
pub fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    out.trim_matches('_').to_string()
}

fn rate(cells: &[Cell], secs: f64) -> Option<f64> {
    let mut sum = 0u64;
    for c in cells {
        sum += c.count()?;
    }
    (secs > 0.0).then(|| sum as f64 / secs)
}

fn gap_note(name: &str, cells: &[Cell]) -> String {
    let why: Vec<String> = cells
        .iter()
        .filter_map(|c| match c {
            Cell::Gap(g) => Some(format!("{g:?}")),
            Cell::Count(_) => None,
        })
        .collect();
    format!("{name}: no value ({})", why.join(", "))
}

/// The metric a trial's note says had no value (a note `gap_note`
/// wrote), else `None`.
pub fn gap_note_metric(note: &str) -> Option<&str> {
    note.split_once(": no value (").map(|(metric, _)| metric)
}

fn irq_metrics(old: &Snapshot, new: &Snapshot, sel: &Measured, secs: f64, out: &mut SystemMetrics) {
    let (Some(o), Some(n)) = (&old.interrupts, &new.interrupts) else {
        out.notes
            .push("irq metrics: /proc/interrupts unreadable".into());
        return;
    };
    let d = delta::interrupts_delta(o, n, secs);
    let mut total = Some(0.0);
    for s in &sel.rows {
        let name = format!("irq_{}_per_sec", slug(&s.label));
        let Some(row) = d.rows.iter().find(|r| r.label == s.label) else {
            out.notes
                .push(format!("{name}: IRQ {} disappeared", s.label));
            total = None;
            continue;
        };
        let r = rate(&row.cells, secs);
        total = total.zip(r).map(|(t, v)| t + v);
        match r {
            Some(v) => out
                .metrics
                .push(Metric::new(name.clone(), v, "1/s", Direction::None)),
            None => out.notes.push(gap_note(&name, &row.cells)),
        }
        if row.cells.len() == d.cpus.len() && d.cpus.len() <= MAX_PER_CPU {
            for (cpu, cell) in d.cpus.iter().zip(&row.cells) {
                if let Some(v) = cell.rate(secs) {
                    let m = format!("irq_{}_cpu{cpu}_per_sec", slug(&s.label));
                    out.metrics.push(Metric::new(m, v, "1/s", Direction::None));
                }
            }
        }
    }
    if let (Some(t), true) = (total, sel.rows.len() > 1) {
        out.metrics
            .push(Metric::new(SELECTED_TOTAL, t, "1/s", Direction::None));
    }
}

/// Sum of the selected IRQs' rates (when more than one is selected and
/// none has a gap): e.g. RES + CAL, between which wakeups move.
pub const SELECTED_TOTAL: &str = "irqs_selected_per_sec";

fn softirq_metrics(old: &Snapshot, new: &Snapshot, secs: f64, out: &mut SystemMetrics) {
    let (Some(o), Some(n)) = (&old.softirqs, &new.softirqs) else {
        return;
    };
    for row in delta::softirqs_delta(o, n, secs).rows {
        let name = format!("softirq_{}_per_sec", slug(&row.name));
        match rate(&row.cells, secs) {
            Some(v) => out
                .metrics
                .push(Metric::new(name, v, "1/s", Direction::None)),
            None => out.notes.push(gap_note(&name, &row.cells)),
        }
    }
}

/// CPU time shares over the trial: summed from the CPUs present in both
/// samples, a gap when a counter stepped further than `secs` allows.
fn cpu_metrics(old: &Snapshot, new: &Snapshot, secs: f64, out: &mut SystemMetrics) {
    let (Some(o), Some(n)) = (&old.stat, &new.stat) else {
        return;
    };
    match delta::stat_aggregate_pct_over(o, n, secs) {
        Some(p) => {
            out.metrics.push(Metric::new(
                "softirq_cpu_pct",
                p.softirq_pct,
                "%",
                Direction::Lower,
            ));
            out.metrics
                .push(Metric::new("irq_cpu_pct", p.irq_pct, "%", Direction::Lower));
            out.metrics.push(Metric::new(
                "system_cpu_pct",
                p.system_pct,
                "%",
                Direction::Lower,
            ));
        }
        None => out.notes.push(
            "cpu %: a gap (no tick elapsed, no CPU in both samples, or a counter went backwards or stepped further than the trial allows)".into(),
        ),
    }
}

/// Prefix of the per-CPU softirq shares (`softirq_cpu_pct_cpu0`, …).
pub const SOFTIRQ_PER_CPU: &str = "softirq_cpu_pct_cpu";
/// The same when /proc/stat's softirq time is a tick sample.
pub const SOFTIRQ_TICKS_PER_CPU: &str = "softirq_tick_pct_cpu";

/// `/proc/stat` softirq share of each CPU present in both snapshots, in
/// percent of that CPU (a CPU whose counters stepped further than the
/// trial allows is left out).
pub fn softirq_per_cpu(old: &Snapshot, new: &Snapshot) -> Vec<Metric> {
    let (Some(o), Some(n)) = (&old.stat, &new.stat) else {
        return Vec::new();
    };
    let secs = new.elapsed_since(old);
    let mut out = Vec::new();
    for nc in &n.cpus {
        let Some(cpu) = nc.cpu else { continue };
        let Some(oc) = o.cpus.iter().find(|c| c.cpu == Some(cpu)) else {
            continue;
        };
        if let Some(p) = delta::cpu_pct_over(oc, nc, secs, 1) {
            out.push(Metric::new(
                format!("{SOFTIRQ_PER_CPU}{cpu}"),
                p.softirq_pct,
                "%",
                Direction::Lower,
            ));
        }
    }
    out
}

/// The share of softirq time that ksoftirqd ran: the ksoftirqd threads'
/// CPU (`ksoftirqd_cpu_pct`, in percent of one CPU) over the softirq time
/// summed over CPUs (`per_cpu`, each in percent of its CPU; /proc/stat
/// counts ksoftirqd's softirq work as softirq time). `None` without
/// softirq time.
pub fn ksoftirqd_share(per_cpu: &[Metric], threads: &[Metric]) -> Option<Metric> {
    let soft: f64 = per_cpu.iter().map(|m| m.value).sum();
    let k = threads
        .iter()
        .find(|m| m.name == "ksoftirqd_cpu_pct")?
        .value;
    (soft > 0.0).then(|| {
        Metric::new(
            "ksoftirqd_softirq_share_pct",
            100.0 * k / soft,
            "%",
            Direction::None,
        )
    })
}

/// Interrupts counted between two snapshots, every row and CPU (rows with
/// a gap count nothing).
pub fn interrupts_counted(old: &Snapshot, new: &Snapshot) -> u64 {
    let (Some(o), Some(n)) = (&old.interrupts, &new.interrupts) else {
        return 0;
    };
    let secs = new.elapsed_since(old);
    delta::interrupts_delta(o, n, secs)
        .rows
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter_map(|c| c.count())
        .fold(0u64, u64::saturating_add)
}

/// All system metrics between two snapshots of one trial.
pub fn system_metrics(old: &Snapshot, new: &Snapshot, sel: &Measured) -> SystemMetrics {
    let secs = new.elapsed_since(old);
    let mut out = SystemMetrics::default();
    irq_metrics(old, new, sel, secs, &mut out);
    softirq_metrics(old, new, secs, &mut out);
    cpu_metrics(old, new, secs, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::measured::MeasuredIrq;
    use irqlab_core::Interrupts;

    fn snap(ns: u64, text: &str) -> Snapshot {
        Snapshot {
            mono_ns: ns,
            interrupts: Some(Interrupts::parse(text.as_bytes()).unwrap()),
            ..Default::default()
        }
    }

    const H: &str = "           CPU0       CPU1       \n";

    #[test]
    fn rates_of_selected_rows_and_gaps() {
        let a = snap(0, &format!("{H} 36:        100        200  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"));
        let b = snap(2_000_000_000, &format!("{H} 36:        300        400  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"));
        let sel = Measured {
            rows: vec![MeasuredIrq {
                label: "36".into(),
                what: "virtio1-req.0".into(),
            }],
        };
        let m = system_metrics(&a, &b, &sel);
        let get = |n: &str| m.metrics.iter().find(|x| x.name == n).map(|x| x.value);
        assert_eq!(get("irq_36_per_sec"), Some(200.0));
        let dir = |n: &str| m.metrics.iter().find(|x| x.name == n).map(|x| x.direction);
        assert_eq!(dir("irq_36_per_sec"), Some(Direction::None), "rates: none");
        assert_eq!(dir("irq_36_cpu1_per_sec"), Some(Direction::None));
        assert_eq!(get("irq_36_cpu1_per_sec"), Some(100.0));
        let c = snap(4_000_000_000, "           CPU1       \n 36:        500  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n");
        let m = system_metrics(&b, &c, &sel);
        assert!(m.metrics.iter().all(|x| x.name != "irq_36_per_sec"));
        assert!(m.notes[0].contains("CpuOffline"), "{:?}", m.notes);
        assert_eq!(
            m.metrics
                .iter()
                .find(|x| x.name == "irq_36_cpu1_per_sec")
                .map(|x| x.value),
            Some(50.0)
        );
    }

    #[test]
    fn ksoftirqd_share_is_thread_cpu_over_summed_softirq_time() {
        let m = |n: &str, v: f64| Metric::new(n, v, "%", Direction::None);
        let per_cpu = [
            m("softirq_cpu_pct_cpu0", 30.0),
            m("softirq_cpu_pct_cpu1", 10.0),
        ];
        let threads = [m("ksoftirqd_cpu_pct", 10.0)];
        let s = ksoftirqd_share(&per_cpu, &threads).unwrap();
        assert_eq!(s.name, "ksoftirqd_softirq_share_pct");
        assert!((s.value - 25.0).abs() < 1e-9, "{}", s.value);
        assert!(ksoftirqd_share(&[m("softirq_cpu_pct_cpu0", 0.0)], &threads).is_none());
        assert!(ksoftirqd_share(&per_cpu, &[]).is_none());
    }

    #[test]
    fn softirq_share_per_cpu_from_proc_stat() {
        let stat = |ns: u64, soft0: u64, soft1: u64| {
            Snapshot {
            mono_ns: ns,
            stat: Some(
                irqlab_core::Stat::parse(
                    format!(
                        "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 0 0 0 {} 0 0 {soft0} 0 0 0\ncpu1 0 0 0 {} 0 0 {soft1} 0 0 0\nintr 0\n",
                        (100 - soft0.min(100)) * u64::from(ns > 0),
                        (100 - soft1.min(100)) * u64::from(ns > 0)
                    )
                    .as_bytes(),
                )
                .unwrap(),
            ),
            ..Default::default()
        }
        };
        let got = softirq_per_cpu(&stat(0, 0, 0), &stat(1_000_000_000, 25, 5));
        let names: Vec<&str> = got.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["softirq_cpu_pct_cpu0", "softirq_cpu_pct_cpu1"]);
        assert!((got[0].value - 25.0).abs() < 1e-9, "{}", got[0].value);
        assert!((got[1].value - 5.0).abs() < 1e-9, "{}", got[1].value);
        assert!(softirq_per_cpu(&snap(0, H), &snap(1, H)).is_empty());
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("I/O"), "i_o");
        assert_eq!(slug("NET_RX"), "net_rx");
        assert_eq!(slug("virtio1-req.0"), "virtio1_req_0");
    }
}
