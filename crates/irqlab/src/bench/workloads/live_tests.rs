//! Live tests: each built-in workload runs for 1 s on this machine and must
//! raise the counter it is meant to raise above a baseline measured in the
//! same attempt — 1 s without the workload just before AND just after the
//! trial, the higher of the two counting — by an absolute margin far below
//! what the workload causes but above what noise does (read through HostFs,
//! parsed by irqlab-core, differenced by `delta`). The machine may be busy
//! (both CPUs loaded by builds): no check is a ratio to the baseline, and a
//! failed check is retried with a fresh baseline; the test fails only when
//! every attempt fails. Tests named `*_or_skip` skip, saying why on the
//! uncaptured stderr (visible in plain `cargo test` output), when the files
//! are unreadable or the machine lacks what the workload needs. Serialized
//! by `live_lock`.
//!
//! Other tests on the same machine may hot-unplug CPUs: an attempt whose
//! online CPUs changed, or whose threads lost their pinning, is retried,
//! and after five such attempts the test skips saying so.

use super::placement::{self, PinError};
use super::{build, live_lock, WorkloadKind, WorkloadOptions};
use crate::bench::metric_value::Metric;
use crate::host::HostFs;
use irqlab_core::delta::{interrupts_delta, softirqs_delta, IrqDelta, RowDelta, SoftirqsDelta};
use irqlab_core::{CpuList, Interrupts, Softirqs};
use regex::Regex;
use std::time::{Duration, Instant};

const TRIAL: Duration = Duration::from_secs(1);
const ATTEMPTS: usize = 5;

/// Say why a test skips on the real stderr: libtest captures `eprintln!`
/// of passing tests, not direct writes, so the line shows in `cargo test`.
pub(crate) fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP {test}: {why}");
}

/// Counter deltas over one window.
struct Window {
    irq: IrqDelta,
    soft: SoftirqsDelta,
    secs: f64,
    /// Same online CPUs at both ends.
    stable: bool,
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
                skip(test, &format!("/{f} unreadable: {e}"));
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
        let secs = (t1 - t0).as_secs_f64();
        let w = Window {
            irq: interrupts_delta(&i0, &i1, secs),
            soft: softirqs_delta(&s0, &s1, secs),
            secs,
            stable: i0.cpus == i1.cpus,
        };
        (w, r)
    }

    /// 1 s without the workload, one 1 s trial of `kind`, 1 s without it
    /// again, judged by `check` (which prints what it saw). A disturbed
    /// attempt (CPU hotplug) or a failed check (e.g. a burst of load from
    /// another process during the trial) is retried with a fresh baseline;
    /// the test fails when all attempts fail the check, and skips when
    /// hotplug disturbed all.
    fn run_checked(
        &mut self,
        test: &str,
        kind: WorkloadKind,
        opts: &WorkloadOptions,
        min_cpus: usize,
        check: Check,
    ) {
        for n in 1..=ATTEMPTS {
            match self.attempt(kind, opts, min_cpus) {
                Attempt::Done(done) => {
                    let (base, loaded, m) = &*done;
                    match check(base, loaded, m) {
                        Ok(()) => return,
                        Err(why) if n == ATTEMPTS => panic!("{test}: {why}"),
                        Err(why) => eprintln!("{test}: attempt {n} failed, retrying: {why}"),
                    }
                }
                Attempt::Skip(why) => return skip(test, &why),
                Attempt::Disturbed(why) => {
                    eprintln!("{test}: attempt {n} disturbed: {why}");
                    std::thread::sleep(TRIAL);
                }
            }
        }
        skip(test, "CPU hotplug disturbed every attempt");
    }

    fn attempt(&mut self, kind: WorkloadKind, opts: &WorkloadOptions, min_cpus: usize) -> Attempt {
        let allowed = placement::allowed_cpus().unwrap().len();
        if allowed < min_cpus {
            let present = self.present_cpus();
            if present < min_cpus {
                return Attempt::Skip(format!("needs {min_cpus} CPUs, this machine has {present}"));
            }
            return Attempt::Disturbed(format!("only {allowed} of {present} CPUs online"));
        }
        let mut w = build(kind, opts, &crate::guard::Tracker::none()).unwrap();
        w.setup().unwrap();
        let (before, ()) = self.window(|| std::thread::sleep(TRIAL));
        let (loaded, metrics) = self.window(|| w.run(TRIAL, &crate::sampler::Stop::unhooked()));
        w.teardown().unwrap();
        let (after, ()) = self.window(|| std::thread::sleep(TRIAL));
        let stable = before.stable && loaded.stable && after.stable;
        match metrics {
            Err(e) if e.chain().any(|c| c.downcast_ref::<PinError>().is_some()) => {
                Attempt::Disturbed(format!("{e:#}"))
            }
            Err(e) => panic!("{kind:?}: {e:#}"),
            Ok(_) if !stable => Attempt::Disturbed("the online CPUs changed".into()),
            Ok(m) => Attempt::Done(Box::new((Base { before, after }, loaded, m))),
        }
    }

    fn present_cpus(&self) -> usize {
        let text = self.fs.read_attr("sys/devices/system/cpu/present");
        text.and_then(|t| CpuList::parse_list(t.as_bytes(), "present").ok())
            .map_or(0, |l| l.len())
    }
}

/// The baseline of one attempt: windows without the workload just before
/// and just after the trial; each rate is the higher of the two.
struct Base {
    before: Window,
    after: Window,
}

impl Base {
    fn irq_rate(&self, pred: &dyn Fn(&RowDelta) -> bool) -> f64 {
        self.before.irq_rate(pred).max(self.after.irq_rate(pred))
    }

    fn softirq_rate(&self, name: &str) -> f64 {
        self.before
            .softirq_rate(name)
            .max(self.after.softirq_rate(name))
    }
}

/// Outcome of one baseline + trial + baseline attempt.
enum Attempt {
    Done(Box<(Base, Window, Vec<Metric>)>),
    Disturbed(String),
    Skip(String),
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

/// Judges one attempt: `Err` explains a failed expectation.
type Check<'a> = &'a dyn Fn(&Base, &Window, &[Metric]) -> Result<(), String>;

/// `Err(msg)` unless `ok`.
fn expect(ok: bool, msg: String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg)
    }
}

/// Run `kind` with default options and check it with `check`.
fn live(test: &str, kind: WorkloadKind, opts: &WorkloadOptions, min_cpus: usize, check: Check) {
    let _l = live_lock();
    if let Some(mut p) = Probe::new(test) {
        p.run_checked(test, kind, opts, min_cpus, check);
    }
}

/// `Err` unless `loaded` exceeds the baseline `base` by at least `margin`
/// per second (an absolute margin: a busy machine raises the baseline, so
/// a ratio to it could fail on noise).
fn above(what: &str, base: f64, loaded: f64, margin: f64) -> Result<(), String> {
    expect(
        loaded - base >= margin,
        format!("{what}: baseline {base:.0}/s, loaded {loaded:.0}/s, wanted +{margin:.0}/s"),
    )
}

/// A cross-CPU wakeup is a rescheduling IPI (`RES`), or a function-call
/// IPI (`CAL`) when the kernel queues the wakeup on the idle target's wake
/// list; the workload counts when either rises.
#[test]
fn ipi_raises_wakeup_ipis_or_skip() {
    let test = "ipi_raises_wakeup_ipis_or_skip";
    let opts = WorkloadOptions::default();
    live(test, WorkloadKind::Ipi, &opts, 2, &|base, loaded, m| {
        let res = arch_row("RES", "Rescheduling interrupts");
        let cal = arch_row("CAL", "Function call interrupts");
        if !has_row(loaded, &res) {
            skip(test, "no rescheduling-IPI row in /proc/interrupts");
            return Ok(());
        }
        let both = |r: &RowDelta| res(r) || cal(r);
        let (i, l) = (base.irq_rate(&both), loaded.irq_rate(&both));
        eprintln!("ipi: RES+CAL baseline {i:.0}/s loaded {l:.0}/s; {m:?}");
        expect(
            metric(m, "rtt_p50_ns") <= metric(m, "rtt_p99_ns")
                && metric(m, "round_trips_per_sec") > 0.0,
            format!("{m:?}"),
        )?;
        above("RES+CAL", i, l, 200.0)
    });
}

#[test]
fn tlb_raises_shootdowns_or_skip() {
    let test = "tlb_raises_shootdowns_or_skip";
    let opts = WorkloadOptions::default();
    live(test, WorkloadKind::Tlb, &opts, 2, &|base, loaded, m| {
        let tlb = arch_row("TLB", "TLB shootdowns");
        if !has_row(loaded, &tlb) {
            skip(test, "no TLB shootdown row in /proc/interrupts");
            return Ok(());
        }
        let (i, l) = (base.irq_rate(&tlb), loaded.irq_rate(&tlb));
        eprintln!("tlb: TLB baseline {i:.0}/s loaded {l:.0}/s; {m:?}");
        expect(metric(m, "unmaps_per_sec") > 0.0, format!("{m:?}"))?;
        above("TLB", i, l, 100.0)
    });
}

#[test]
fn timer_raises_local_timer_and_timer_softirqs_or_skip() {
    let test = "timer_raises_local_timer_and_timer_softirqs_or_skip";
    let opts = WorkloadOptions::default();
    live(test, WorkloadKind::Timer, &opts, 1, &|base, loaded, m| {
        let loc = arch_row("LOC", "Local timer interrupts");
        if !has_row(loaded, &loc) {
            skip(test, "no local timer row in /proc/interrupts");
            return Ok(());
        }
        let (i, l) = (base.irq_rate(&loc), loaded.irq_rate(&loc));
        let si = base.softirq_rate("HRTIMER") + base.softirq_rate("TIMER");
        let sl = loaded.softirq_rate("HRTIMER") + loaded.softirq_rate("TIMER");
        eprintln!("timer: LOC baseline {i:.0}/s loaded {l:.0}/s; {m:?}");
        eprintln!("timer: HRTIMER+TIMER baseline {si:.0}/s loaded {sl:.0}/s");
        expect(metric(m, "wakeups_per_sec") >= 500.0, format!("{m:?}"))?;
        above("LOC", i, l, 500.0)?;
        above("HRTIMER+TIMER softirqs", si, sl, 20.0)
    });
}

#[test]
fn net_raises_net_rx_softirqs_or_skip() {
    let opts = WorkloadOptions::default();
    live(
        "net_raises_net_rx_softirqs_or_skip",
        WorkloadKind::Net,
        &opts,
        1,
        &|base, loaded, m| {
            let (i, l) = (base.softirq_rate("NET_RX"), loaded.softirq_rate("NET_RX"));
            let bps = metric(m, "bytes_per_sec");
            eprintln!(
                "net: NET_RX baseline {i:.0}/s loaded {l:.0}/s; {:.0} MB/s",
                bps / 1e6
            );
            expect(bps > 1e6, format!("{bps:.0} B/s"))?;
            above("NET_RX", i, l, 100.0)
        },
    );
}

#[test]
fn disk_raises_block_device_irq_or_skip() {
    let test = "disk_raises_block_device_irq_or_skip";
    let re = Regex::new(r"^virtio\d+-req|nvme|ahci").unwrap();
    let blk = move |r: &RowDelta| r.irq.is_some() && r.parts.actions().any(|a| re.is_match(a));
    let opts = WorkloadOptions {
        disk_file_bytes: 16 << 20,
        ..WorkloadOptions::default()
    };
    live(test, WorkloadKind::Disk, &opts, 1, &|base, loaded, m| {
        if !has_row(loaded, &blk) {
            skip(test, "no virtio-blk/NVMe/AHCI IRQ in /proc/interrupts");
            return Ok(());
        }
        let (i, l) = (base.irq_rate(&blk), loaded.irq_rate(&blk));
        let iops = metric(m, "iops");
        eprintln!("disk: block IRQ baseline {i:.0}/s loaded {l:.0}/s; {m:?}");
        expect(iops > 0.0, format!("{iops:.0} IOPS"))?;
        // Each read completes by interrupt, but a busy queue may coalesce.
        above("block IRQ", i, l, (0.1 * iops).max(20.0))
    });
}
