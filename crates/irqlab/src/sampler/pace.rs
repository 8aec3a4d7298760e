//! [`PacedRun`]: THE paced run of every sampling loop (`top --batch`, `replay
//! --batch`, `serve -i`, `record`, `trace`, the TUI's sampler thread):
//! an interval, an end (a count of intervals, a duration, or none), the
//! stop flag, and one end-of-run rule. Ticks are drift-free ([`Ticker`]:
//! the n-th is due at start + n × interval, so sleep and sampling jitter
//! never add up). Knows nothing about what a tick samples or prints.
//!
//! The end-of-run rule, decided from the flags alone (never from how late
//! a tick came, so a busy machine gets the same number of samples):
//!
//! - `--count N`: N ticks, at start + k × interval (k = 1..=N).
//! - `--duration D`: the run covers exactly D, cut into intervals: tick k
//!   is due at start + min(k × interval, D), for k = 1..=⌈D / interval⌉.
//!   `-d 10s -i 1s` gives exactly 10 intervals (10 samples after the
//!   baseline) covering 10 s; when D is not a multiple of the interval the
//!   last interval is the shorter remainder (`-d 2.5s -i 1s`: 1 s, 1 s,
//!   0.5 s), and a D shorter than the interval is one interval of D.
//!   Rates divide by each interval's measured length, so the short last
//!   interval is as exact as the others.
//! - neither: ticks until the stop flag.
//!
//! A late tick is taken at once (catching up, as [`Ticker`] does); the
//! count of ticks does not change.

use super::{Stop, Ticker};
use std::time::{Duration, Instant};

/// Where a paced run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Until the stop flag (or the caller) ends it.
    Never,
    /// After this many intervals.
    Count(u64),
    /// After this long, cut into intervals (the last may be shorter).
    After(Duration),
}

impl End {
    /// `--count` when given, else `--duration` when given, else never.
    pub fn of(count: Option<u64>, duration: Option<Duration>) -> End {
        match (count, duration) {
            (Some(n), _) => End::Count(n),
            (None, Some(d)) => End::After(d),
            (None, None) => End::Never,
        }
    }
}

/// What [`PacedRun::wait`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// The next interval is over: sample.
    Due,
    /// The run is over (its count or duration is reached).
    End,
    /// The stop flag caught this signal while waiting (the interval was
    /// cut short).
    Signal(i32),
}

/// A paced run: drift-free ticks and the one end-of-run rule.
pub struct PacedRun {
    ticker: Ticker,
    end: End,
    /// Ticks handed out so far.
    n: u64,
}

impl PacedRun {
    /// A run starting now.
    pub fn new(interval: Duration, end: End) -> PacedRun {
        PacedRun::starting_at(Instant::now(), interval, end)
    }

    /// A run starting at `start` (tests: a fixed clock).
    pub fn starting_at(start: Instant, interval: Duration, end: End) -> PacedRun {
        PacedRun {
            ticker: Ticker::starting_at(start, interval),
            end,
            n: 0,
        }
    }

    /// The instant the run started (tick 0).
    pub fn start(&self) -> Instant {
        self.ticker.start()
    }

    /// When the run ends by its duration (`None`: by count or never).
    pub fn deadline(&self) -> Option<Instant> {
        match self.end {
            End::After(d) => Some(self.start() + d),
            _ => None,
        }
    }

    /// Ticks handed out so far.
    pub fn ticks(&self) -> u64 {
        self.n
    }

    /// The number of ticks of the whole run (`None`: no end).
    pub fn total(&self) -> Option<u64> {
        match self.end {
            End::Never => None,
            End::Count(n) => Some(n),
            End::After(d) => {
                let iv = self.ticker.interval().as_nanos();
                if iv == 0 {
                    return Some(1);
                }
                let n = d.as_nanos().div_ceil(iv);
                Some(u64::try_from(n).unwrap_or(u64::MAX))
            }
        }
    }

    /// The due time of the next tick, or `None` once the run is over (no
    /// sleep: callers with their own way of waiting use this).
    pub fn next_due(&mut self) -> Option<Instant> {
        if self.total().is_some_and(|t| self.n >= t) {
            return None;
        }
        self.n += 1;
        let due = self.ticker.next_due();
        Some(match self.deadline() {
            Some(end) => due.min(end),
            None => due,
        })
    }

    /// Sleep until the next tick (at once if it is late); [`Tick::End`]
    /// without sleeping once the run is over, [`Tick::Signal`] as soon as
    /// `stop` catches one.
    pub fn wait(&mut self, stop: &Stop) -> Tick {
        if let Some(sig) = stop.caught() {
            return Tick::Signal(sig);
        }
        match self.next_due() {
            None => Tick::End,
            Some(due) => match stop.sleep_until(due) {
                Some(sig) => Tick::Signal(sig),
                None => Tick::Due,
            },
        }
    }

    /// [`PacedRun::wait`] for loops whose stop flag is checked by the caller
    /// (the TUI's sampler thread): false once the run is over.
    pub fn wait_plain(&mut self) -> bool {
        match self.next_due() {
            None => false,
            Some(due) => {
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                true
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Every tick's offset from the start, on a fixed clock (no sleep).
    fn offsets(interval: Duration, end: End) -> Vec<Duration> {
        let t0 = Instant::now();
        let mut p = PacedRun::starting_at(t0, interval, end);
        let mut v = Vec::new();
        while let Some(due) = p.next_due() {
            v.push(due - t0);
            assert!(v.len() < 10_000, "runaway");
        }
        v
    }

    #[test]
    fn a_duration_that_is_a_multiple_gives_exactly_that_many_intervals() {
        let v = offsets(1000 * MS, End::After(10_000 * MS));
        assert_eq!(v.len(), 10);
        assert_eq!(v.first(), Some(&(1000 * MS)));
        assert_eq!(v.last(), Some(&(10_000 * MS)));
    }

    /// The rule `trace` had (its `intervals()` test): `-i 1s -d 2.5s` is
    /// 1 s, 1 s and 0.5 s; record's and serve's rules gave 2 or 3
    /// intervals depending on how late a tick came.
    #[test]
    fn a_duration_that_is_not_a_multiple_ends_with_a_shorter_interval() {
        let v = offsets(1000 * MS, End::After(2500 * MS));
        assert_eq!(v, [1000 * MS, 2000 * MS, 2500 * MS]);
        // a duration shorter than the interval: one interval of it
        assert_eq!(offsets(1000 * MS, End::After(100 * MS)), [100 * MS]);
        // just past a multiple: a last interval of the remainder
        let v = offsets(100 * MS, End::After(301 * MS));
        assert_eq!(v.len(), 4);
        assert_eq!(v.last(), Some(&(301 * MS)));
    }

    #[test]
    fn a_count_gives_that_many_ticks_and_never_ends_otherwise() {
        let v = offsets(250 * MS, End::Count(3));
        assert_eq!(v, [250 * MS, 500 * MS, 750 * MS]);
        let t0 = Instant::now();
        let mut p = PacedRun::starting_at(t0, 250 * MS, End::Never);
        for k in 1..=100u32 {
            assert_eq!(p.next_due(), Some(t0 + 250 * MS * k));
        }
        assert_eq!(p.total(), None);
        assert_eq!(End::of(Some(2), Some(MS)), End::Count(2));
        assert_eq!(End::of(None, Some(MS)), End::After(MS));
        assert_eq!(End::of(None, None), End::Never);
    }

    /// An unpaced run (replay --batch: interval zero) takes every tick at
    /// once and still ends by its count.
    #[test]
    fn a_zero_interval_is_due_at_once() {
        let v = offsets(Duration::ZERO, End::Count(4));
        assert_eq!(v, [Duration::ZERO; 4]);
        assert_eq!(offsets(Duration::ZERO, End::After(MS)).len(), 1);
    }

    /// Late ticks (a slow sample) are taken at once, and the count does
    /// not change: the end is decided by the flags, not by the clock.
    #[test]
    fn late_ticks_do_not_change_the_number_of_samples() {
        let mut p = PacedRun::new(MS, End::After(5 * MS));
        std::thread::sleep(20 * MS);
        let stop = Stop::install().unwrap();
        let mut n = 0;
        while p.wait(&stop) == Tick::Due {
            n += 1;
        }
        assert_eq!(n, 5);
        assert_eq!(p.wait(&stop), Tick::End);
        assert_eq!(p.ticks(), 5);
    }

    #[test]
    fn real_ticks_cover_the_duration() {
        let stop = Stop::install().unwrap();
        let mut p = PacedRun::new(20 * MS, End::After(50 * MS));
        let t0 = p.start();
        let mut at = Vec::new();
        while p.wait(&stop) == Tick::Due {
            at.push(t0.elapsed());
        }
        assert_eq!(at.len(), 3);
        assert!(
            at.iter().zip([20, 40, 50]).all(|(t, ms)| *t >= ms * MS),
            "{at:?}"
        );
        let mut q = PacedRun::new(MS, End::Count(2));
        assert!(q.wait_plain() && q.wait_plain() && !q.wait_plain());
    }
}
