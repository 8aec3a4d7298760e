//! `ipi`: a token passed around a ring of threads pinned to different CPUs
//! (two threads = ping-pong). Each hand-off is a futex wake (Mutex/Condvar)
//! of a thread sleeping on another CPU, so every round trip sends wakeup
//! IPIs: on x86 a rescheduling IPI (`RES`), or a function-call IPI (`CAL`)
//! when the kernel queues the wakeup on an idle target's wake list (the
//! usual case on an otherwise idle machine). Thread 0 times each round.
//!
//! All threads are scoped to `run` and joined before it returns; a stalled
//! ring gives up after a grace period instead of hanging.

use super::latency::Histogram;
use super::{placement, spawn_scoped};
use crate::bench::metric_value::{Direction, Metric};
use crate::bench::workload::{running, Workload};
use crate::sampler::Stop;
use anyhow::{anyhow, bail, Context};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long past the trial a hand-off may wait before the ring is declared stalled.
const STALL_GRACE: Duration = Duration::from_secs(5);

/// What a slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Empty,
    Go,
    Stop,
}

/// One thread's mailbox.
struct SpinSlot {
    token: Mutex<Token>,
    cv: Condvar,
}

impl SpinSlot {
    fn new() -> Self {
        SpinSlot {
            token: Mutex::new(Token::Empty),
            cv: Condvar::new(),
        }
    }

    fn put(&self, t: Token) -> anyhow::Result<()> {
        let mut g = self
            .token
            .lock()
            .map_err(|_| anyhow!("ring lock poisoned"))?;
        *g = t;
        self.cv.notify_one();
        Ok(())
    }

    /// Wait for a token and take it; error after `give_up`.
    fn take(&self, give_up: Instant) -> anyhow::Result<Token> {
        let mut g = self
            .token
            .lock()
            .map_err(|_| anyhow!("ring lock poisoned"))?;
        while *g == Token::Empty {
            let left = give_up.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!("ping-pong ring stalled");
            }
            g = self
                .cv
                .wait_timeout(g, left)
                .map_err(|_| anyhow!("ring lock poisoned"))?
                .0;
        }
        Ok(std::mem::replace(&mut *g, Token::Empty))
    }
}

/// The ping-pong / ring workload.
pub struct Ipi {
    cpus: Vec<u32>,
    threads: usize,
}

impl Ipi {
    /// A ring of `threads` (at least 2) over `cpus` round-robin.
    pub fn new(cpus: Vec<u32>, threads: Option<usize>) -> Self {
        Ipi {
            cpus,
            threads: threads.unwrap_or(2).max(2),
        }
    }
}

/// Result of the timing thread.
struct Rounds {
    hist: Histogram,
    elapsed: Duration,
}

fn driver(
    slots: &[SpinSlot],
    cpu: Option<u32>,
    dur: Duration,
    stop: &Stop,
) -> anyhow::Result<Rounds> {
    // A failed pin is reported after the ring stopped, never breaks it.
    let pinned = placement::pin_opt(cpu);
    let (me, next) = (ring_slot(slots, 0)?, ring_slot(slots, 1)?);
    let start = Instant::now();
    let end = start + dur;
    let give_up = end + STALL_GRACE;
    let mut hist = Histogram::default();
    loop {
        let t0 = Instant::now();
        next.put(Token::Go)?;
        me.take(give_up)?;
        hist.record(u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX));
        if !running(start, dur, stop) {
            break;
        }
    }
    let elapsed = start.elapsed();
    next.put(Token::Stop)?;
    while me.take(give_up)? != Token::Stop {}
    pinned?;
    placement::still_pinned(cpu)?;
    Ok(Rounds { hist, elapsed })
}

fn relay(slots: &[SpinSlot], i: usize, cpu: Option<u32>, give_up: Instant) -> anyhow::Result<()> {
    // A failed pin is reported after the ring stopped, never breaks it.
    let pinned = placement::pin_opt(cpu);
    let (me, next) = (ring_slot(slots, i)?, ring_slot(slots, i + 1)?);
    loop {
        let t = me.take(give_up)?;
        next.put(t)?;
        if t == Token::Stop {
            pinned?;
            return placement::still_pinned(cpu);
        }
    }
}

fn ring_slot(slots: &[SpinSlot], i: usize) -> anyhow::Result<&SpinSlot> {
    slots
        .get(i % slots.len().max(1))
        .ok_or_else(|| anyhow!("empty ring"))
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, anyhow::Result<T>>) -> anyhow::Result<T> {
    h.join().map_err(|_| anyhow!("workload thread panicked"))?
}

impl Workload for Ipi {
    fn name(&self) -> &str {
        "ipi"
    }

    fn run(&mut self, duration: Duration, stop: &Stop) -> anyhow::Result<Vec<Metric>> {
        let slots: Vec<SpinSlot> = (0..self.threads).map(|_| SpinSlot::new()).collect();
        let give_up = Instant::now() + duration + STALL_GRACE;
        let cpus = &self.cpus;
        let rounds = std::thread::scope(|s| {
            let wanted = self.threads;
            let mut relays = Vec::with_capacity(wanted);
            for i in 1..wanted {
                let slots = &slots;
                // a started relay gives up at `give_up`
                relays.push(spawn_scoped(s, i - 1, wanted, move || {
                    relay(slots, i, placement::cpu_for(cpus, i), give_up)
                })?);
            }
            let d = spawn_scoped(s, wanted - 1, wanted, || {
                driver(&slots, placement::cpu_for(cpus, 0), duration, stop)
            })?;
            let rounds = join(d);
            let relayed: anyhow::Result<Vec<()>> = relays.into_iter().map(join).collect();
            relayed.and(rounds)
        })
        .context("ipi ping-pong")?;
        let rate = rounds.hist.len() as f64 / rounds.elapsed.as_secs_f64().max(1e-9);
        let mut m = vec![Metric::new(
            "round_trips_per_sec",
            rate,
            "1/s",
            Direction::Higher,
        )];
        m.extend(rounds.hist.metrics("rtt", &[50, 90, 99]));
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_of_three_on_one_cpu_reports_metrics() {
        let _live = super::super::live_lock();
        let cpus = placement::allowed_cpus().unwrap();
        let mut w = Ipi::new(vec![cpus[0]], Some(3));
        let m = w
            .run(Duration::from_millis(100), &Stop::unhooked())
            .unwrap();
        let names: Vec<_> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "round_trips_per_sec",
                "rtt_p50_ns",
                "rtt_p90_ns",
                "rtt_p99_ns"
            ]
        );
        assert!(m[0].value > 0.0);
    }
}
