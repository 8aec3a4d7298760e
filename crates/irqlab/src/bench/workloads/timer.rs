//! `timer`: per selected CPU, one thread sleeping for a short period
//! (`clock_nanosleep` via `std::thread::sleep`, timer slack set to 1 ns) in
//! a loop, so each CPU programs its local timer at a high rate (`LOC` on
//! x86; these hrtimers expire in hard-irq context), and one thread blocking
//! in `recv` with a 1 ms `SO_RCVTIMEO` on an idle loopback UDP socket, whose
//! `schedule_timeout` is a timer-wheel timer run by the TIMER softirq.
//! Reports sleeper wakeups, how late they came, and wheel timeouts.
//!
//! All threads are scoped to `run` and joined.

use super::latency::Histogram;
use super::{placement, spawn_scoped};
use crate::bench::metric_value::{Direction, Metric};
use crate::bench::workload::{running, Workload};
use crate::sampler::Stop;
use anyhow::{anyhow, Context};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

/// Default sleep period (about 15–20 k wakeups/s per CPU with overhead).
pub const DEFAULT_PERIOD: Duration = Duration::from_micros(50);

/// The high-rate sleep workload.
pub struct Timer {
    cpus: Vec<u32>,
    threads: usize,
    period: Duration,
}

impl Timer {
    /// `threads` sleepers (default: one per CPU) over `cpus` round-robin.
    pub fn new(cpus: Vec<u32>, threads: Option<usize>, period: Duration) -> Self {
        let threads = threads.unwrap_or(cpus.len()).max(1);
        Timer {
            cpus,
            threads,
            period,
        }
    }
}

fn sleeper(
    cpu: Option<u32>,
    period: Duration,
    dur: Duration,
    stop: &Stop,
) -> anyhow::Result<Histogram> {
    placement::pin_opt(cpu)?;
    // Default slack (50 µs) would dominate short sleeps; it is per thread.
    nix::sys::prctl::set_timerslack(1).context("PR_SET_TIMERSLACK")?;
    let period_ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
    let start = Instant::now();
    let mut hist = Histogram::default();
    while running(start, dur, stop) {
        let t0 = Instant::now();
        std::thread::sleep(period);
        let slept = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
        hist.record(slept.saturating_sub(period_ns));
    }
    placement::still_pinned(cpu)?;
    Ok(hist)
}

/// Receive timeout of the timer-wheel thread (rounded up to jiffies).
const WHEEL_TIMEOUT: Duration = Duration::from_millis(1);

/// Block on a socket nobody writes to, timing out again and again.
fn wheel(cpu: Option<u32>, dur: Duration, stop: &Stop) -> anyhow::Result<u64> {
    placement::pin_opt(cpu)?;
    let sock = UdpSocket::bind("127.0.0.1:0").context("binding a UDP socket")?;
    sock.set_read_timeout(Some(WHEEL_TIMEOUT))?;
    let mut buf = [0u8; 64];
    let start = Instant::now();
    let mut timeouts = 0u64;
    while running(start, dur, stop) {
        match sock.recv(&mut buf) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                timeouts += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("recv on the timer-wheel socket"),
        }
    }
    placement::still_pinned(cpu)?;
    Ok(timeouts)
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, anyhow::Result<T>>) -> anyhow::Result<T> {
    h.join().map_err(|_| anyhow!("timer thread panicked"))?
}

impl Workload for Timer {
    fn name(&self) -> &str {
        "timer"
    }

    fn run(&mut self, duration: Duration, stop: &Stop) -> anyhow::Result<Vec<Metric>> {
        let start = Instant::now();
        let (cpus, period) = (&self.cpus, self.period);
        let (hists, timeouts) = std::thread::scope(|s| {
            let wanted = 2 * self.threads;
            let mut hs = Vec::with_capacity(self.threads);
            let mut first_err = None;
            for i in 0..self.threads {
                let cpu = placement::cpu_for(cpus, i);
                let pair = spawn_scoped(s, 2 * i, wanted, move || {
                    sleeper(cpu, period, duration, stop)
                })
                .and_then(|sl| {
                    let wh =
                        spawn_scoped(s, 2 * i + 1, wanted, move || wheel(cpu, duration, stop))?;
                    Ok((sl, wh))
                });
                match pair {
                    Ok(p) => hs.push(p),
                    Err(e) => {
                        // the started threads end with the trial's duration
                        first_err = Some(e);
                        break;
                    }
                }
            }
            let mut hists = Vec::new();
            let mut timeouts = 0u64;
            for (sl, wh) in hs {
                match (join(sl), join(wh)) {
                    (Ok(h), Ok(t)) => {
                        hists.push(h);
                        timeouts += t;
                    }
                    (Err(e), _) | (_, Err(e)) => first_err = first_err.or(Some(e)),
                }
            }
            first_err.map_or(Ok((hists, timeouts)), Err)
        })
        .context("timer workload")?;
        let elapsed = start.elapsed().as_secs_f64().max(1e-9);
        let mut all = Histogram::default();
        hists.iter().for_each(|h| all.merge(h));
        let rate = all.len() as f64 / elapsed;
        let mut m = vec![Metric::new(
            "wakeups_per_sec",
            rate,
            "1/s",
            Direction::Higher,
        )];
        m.extend(all.metrics("timer_overshoot", &[50, 99]));
        let wheel_rate = timeouts as f64 / elapsed;
        m.push(Metric::new(
            "wheel_timeouts_per_sec",
            wheel_rate,
            "1/s",
            Direction::Higher,
        ));
        Ok(m)
    }
}
