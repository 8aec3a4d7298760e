//! Live tests: each built-in workload runs for 1 s on this machine and must
//! raise the counter it is meant to raise, compared with 1 s of idle just
//! before (read through HostFs, parsed by irqlab-core, differenced by
//! `delta`). They skip, saying why, when the files are unreadable or the
//! machine lacks what the workload needs. Serialized by `live_lock`.

use super::{build, live_lock, placement, WorkloadKind, WorkloadOptions};
use crate::bench::metric::Metric;
use crate::host::HostFs;
use irqlab_core::delta::{interrupts_delta, softirqs_delta, IrqDelta, RowDelta, SoftirqsDelta};
use irqlab_core::{Interrupts, Softirqs};
use regex::Regex;
use std::time::{Duration, Instant};

const TRIAL: Duration = Duration::from_secs(1);

/// Counter deltas over one window.
struct Window {
    irq: IrqDelta,
    soft: SoftirqsDelta,
    secs: f64,
}

impl Window {
    /// Per-second rate of the rows matching `pred`.
    fn irq_rate(&self, pred: &dyn Fn(&RowDelta) -> bool) -> f64 {
        let n: u64 = self
            .irq
            .rows
            .iter()
            .filter(|r| pred(r))
            .map(|r| r.total())
            .sum();
        n as f64 / self.secs
    }

    fn softirq_rate(&self, name: &str) -> f64 {
        let row = self.soft.rows.iter().find(|r| r.name == name);
        let n: u64 = row.map_or(0, |r| r.cells.iter().filter_map(|c| c.count()).sum());
        n as f64 / self.secs
    }
}

struct Probe {
    fs: HostFs,
}

impl Probe {
    /// `None` (after saying why) when the statistics files are unreadable.
    fn new(test: &str) -> Option<Probe> {
        let mut fs = HostFs::new("/");
        for f in ["proc/interrupts", "proc/softirqs"] {
            if let Err(e) = fs.read(f) {
                eprintln!("SKIP {test}: /{f} unreadable: {e}");
                return None;
            }
        }
        Some(Probe { fs })
    }

    fn snap(&mut self) -> (Interrupts, Softirqs, Instant) {
        let irq = Interrupts::parse(self.fs.read("proc/interrupts").unwrap()).unwrap();
        let soft = Softirqs::parse(self.fs.read("proc/softirqs").unwrap()).unwrap();
        (irq, soft, Instant::now())
    }

    /// Counters around `f`.
    fn window<R>(&mut self, f: impl FnOnce() -> R) -> (Window, R) {
        let (i0, s0, t0) = self.snap();
        let r = f();
        let (i1, s1, t1) = self.snap();
        let w = Window {
            irq: interrupts_delta(&i0, &i1),
            soft: softirqs_delta(&s0, &s1),
            secs: (t1 - t0).as_secs_f64(),
        };
        (w, r)
    }

    /// 1 s idle, then one 1 s trial of `kind`: (idle, loaded, metrics).
    fn idle_then(
        &mut self,
        kind: WorkloadKind,
        opts: &WorkloadOptions,
    ) -> (Window, Window, Vec<Metric>) {
        let mut w = build(kind, opts).unwrap();
        w.setup().unwrap();
        let (idle, ()) = self.window(|| std::thread::sleep(TRIAL));
        let (loaded, metrics) = self.window(|| w.run(TRIAL));
        w.teardown().unwrap();
        let metrics = metrics.unwrap_or_else(|e| panic!("{kind:?}: {e:#}"));
        (idle, loaded, metrics)
    }
}

fn arch_row(label: &'static str, desc: &'static str) -> impl Fn(&RowDelta) -> bool {
    move |r: &RowDelta| r.label == label || r.description.contains(desc)
}

fn has_row(w: &Window, pred: &dyn Fn(&RowDelta) -> bool) -> bool {
    w.irq.rows.iter().any(pred)
}

fn metric(m: &[Metric], name: &str) -> f64 {
    m.iter().find(|m| m.name == name).map(|m| m.value).unwrap()
}

fn multi_cpu(test: &str) -> bool {
    let n = placement::allowed_cpus().unwrap().len();
    if n < 2 {
        eprintln!("SKIP {test}: needs 2 CPUs, this process may use {n}");
    }
    n >= 2
}

#[test]
fn ipi_raises_rescheduling_ipis() {
    let _l = live_lock();
    let Some(mut p) = Probe::new("ipi") else {
        return;
    };
    if !multi_cpu("ipi") {
        return;
    }
    let (idle, loaded, m) = p.idle_then(WorkloadKind::Ipi, &WorkloadOptions::default());
    let res = arch_row("RES", "Rescheduling interrupts");
    if !has_row(&loaded, &res) {
        return eprintln!("SKIP ipi: no rescheduling-IPI row in /proc/interrupts");
    }
    let (i, l) = (idle.irq_rate(&res), loaded.irq_rate(&res));
    eprintln!("ipi: RES idle {i:.0}/s loaded {l:.0}/s; metrics {m:?}");
    assert!(
        l >= 3.0 * i && l >= 1000.0,
        "RES idle {i:.0}/s loaded {l:.0}/s"
    );
    assert!(metric(&m, "round_trips_per_sec") > 0.0);
    assert!(metric(&m, "rtt_p50_ns") <= metric(&m, "rtt_p99_ns"));
}

#[test]
fn tlb_raises_shootdowns() {
    let _l = live_lock();
    let Some(mut p) = Probe::new("tlb") else {
        return;
    };
    if !multi_cpu("tlb") {
        return;
    }
    let (idle, loaded, m) = p.idle_then(WorkloadKind::Tlb, &WorkloadOptions::default());
    let tlb = arch_row("TLB", "TLB shootdowns");
    if !has_row(&loaded, &tlb) {
        return eprintln!("SKIP tlb: no TLB shootdown row in /proc/interrupts");
    }
    let (i, l) = (idle.irq_rate(&tlb), loaded.irq_rate(&tlb));
    eprintln!("tlb: TLB idle {i:.0}/s loaded {l:.0}/s; metrics {m:?}");
    assert!(
        l >= 3.0 * i && l >= 100.0,
        "TLB idle {i:.0}/s loaded {l:.0}/s"
    );
    assert!(metric(&m, "unmaps_per_sec") > 0.0);
}

#[test]
fn timer_raises_local_timer_and_timer_softirqs() {
    let _l = live_lock();
    let Some(mut p) = Probe::new("timer") else {
        return;
    };
    let (idle, loaded, m) = p.idle_then(WorkloadKind::Timer, &WorkloadOptions::default());
    let loc = arch_row("LOC", "Local timer interrupts");
    if !has_row(&loaded, &loc) {
        return eprintln!("SKIP timer: no local timer row in /proc/interrupts");
    }
    let (i, l) = (idle.irq_rate(&loc), loaded.irq_rate(&loc));
    let soft = |w: &Window| w.softirq_rate("HRTIMER") + w.softirq_rate("TIMER");
    let (si, sl) = (soft(&idle), soft(&loaded));
    eprintln!("timer: LOC idle {i:.0}/s loaded {l:.0}/s; HRTIMER+TIMER idle {si:.0}/s loaded {sl:.0}/s; {m:?}");
    assert!(
        l >= 3.0 * i && l >= 1000.0,
        "LOC idle {i:.0}/s loaded {l:.0}/s"
    );
    assert!(
        sl >= 2.0 * si && sl - si >= 50.0,
        "timer softirqs idle {si:.0}/s loaded {sl:.0}/s"
    );
    assert!(metric(&m, "wakeups_per_sec") >= 1000.0);
}

#[test]
fn net_raises_net_rx_softirqs() {
    let _l = live_lock();
    let Some(mut p) = Probe::new("net") else {
        return;
    };
    let (idle, loaded, m) = p.idle_then(WorkloadKind::Net, &WorkloadOptions::default());
    let (i, l) = (idle.softirq_rate("NET_RX"), loaded.softirq_rate("NET_RX"));
    let bps = metric(&m, "bytes_per_sec");
    eprintln!(
        "net: NET_RX idle {i:.0}/s loaded {l:.0}/s; {:.0} MB/s",
        bps / 1e6
    );
    assert!(
        l >= 3.0 * i && l >= 100.0,
        "NET_RX idle {i:.0}/s loaded {l:.0}/s"
    );
    assert!(bps > 10e6, "{bps} B/s");
}

#[test]
fn disk_raises_block_device_irq() {
    let _l = live_lock();
    let Some(mut p) = Probe::new("disk") else {
        return;
    };
    let re = Regex::new(r"^virtio\d+-req|nvme|ahci").unwrap();
    let blk = move |r: &RowDelta| r.irq.is_some() && r.parts.actions().any(|a| re.is_match(a));
    let opts = WorkloadOptions {
        disk_file_bytes: 16 << 20,
        ..WorkloadOptions::default()
    };
    let (idle, loaded, m) = p.idle_then(WorkloadKind::Disk, &opts);
    if !has_row(&loaded, &blk) {
        return eprintln!("SKIP disk: no virtio-blk/NVMe/AHCI IRQ in /proc/interrupts");
    }
    let (i, l) = (idle.irq_rate(&blk), loaded.irq_rate(&blk));
    let iops = metric(&m, "iops");
    eprintln!("disk: block IRQ idle {i:.0}/s loaded {l:.0}/s; {iops:.0} IOPS; {m:?}");
    assert!(iops > 0.0);
    assert!(
        l >= 3.0 * i && l >= 0.1 * iops,
        "block IRQ idle {i:.0}/s loaded {l:.0}/s"
    );
}
