//! [`PacedRun`]: THE paced run of every sampling loop (`top --batch`, `replay
//! --batch`, `serve -i`, `record`, `trace`, the TUI's sampler thread and its
//! replay player): an interval, an end (a count of intervals, a duration,
//! or none), the stop flag, and one end-of-run rule. Ticks are drift-free:
//! tick k is due at the anchor (the start) plus the sum of the k intervals
//! before it, so sleep and sampling jitter never add up. Knows nothing
//! about what a tick samples or prints.
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
//! A late tick is taken at once (catching up); the count of ticks does not
//! change.
//!
//! Signals: [`PacedRun::wait`] answers [`Tick::Signal`] while the run has
//! ticks to come (the signal cuts the interval being waited for short),
//! and [`Tick::End`] once the run is over, also when a signal was caught
//! meanwhile (in the run's last tick): that signal cuts nothing short and
//! adds no tick after it, but it still ended the run as a signal, so the
//! caller's exit code takes it from the stop flag ([`Stop::caught`]).
//! A read that a signal brings early waits out a minimum after the tick
//! before ([`PacedRun::wait_out`]).
//!
//! Variable intervals ([`PacedRun::variable`], the TUI's replay player):
//! each tick's interval is given when it is waited for (the recorded time
//! to the next frame), and every interval is divided by a speed. Tick k
//! is due at anchor + (sum of the intervals since the anchor) / speed;
//! navigation re-anchors ([`PacedRun::anchor`]: the next tick counts from
//! then, at the speed then), and [`PacedRun::wait_or_recv`] waits for the
//! tick or a message, whichever comes first. A run by duration ends with
//! the tick due at its end.

use super::Stop;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The longest run a flag may ask for: a year (`record -d`, `record
/// --segment`, `serve --duration` through `cmd::args::positive_duration`;
/// bench's `--trial-length` and `--cooldown`, checked by its plan). Far
/// inside what a deadline (start + length, an `Instant`) holds exactly,
/// and a longer one is a typo, not a plan: a longer run is one without
/// the flag, ended by a signal.
pub const LONGEST_RUN: Duration = Duration::from_secs(365 * 24 * 3600);

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

/// What [`PacedRun::wait_or_recv`] returns.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake<T> {
    /// The tick is due (and taken).
    Due,
    /// A message came first (the tick, if any, is still to come).
    Msg(T),
    /// The run is over (its count or duration is reached).
    End,
    /// A stop was asked for ([`Stop::requested`]), or every sender is
    /// gone.
    Stop,
}

/// How often [`PacedRun::wait_or_recv`] looks at the stop flag while it
/// waits on a channel.
const POLL: Duration = Duration::from_millis(200);

/// A paced run: drift-free ticks and the one end-of-run rule.
pub struct PacedRun {
    /// Tick 0: a duration counts from it.
    start: Instant,
    /// When [`PacedRun::wait`] last handed out a tick (the start before
    /// the first).
    woke: Instant,
    /// What the ticks count from: the start, or the last re-anchoring.
    anchor: Instant,
    /// The intervals of the ticks since the anchor, summed (before the
    /// speed divides them).
    since_anchor: Duration,
    /// Every tick's interval; `None`: variable, given per tick.
    interval: Option<Duration>,
    /// Intervals are divided by this (variable runs; 1 otherwise).
    speed: f64,
    end: End,
    /// Ticks handed out so far.
    n: u64,
    /// The due time of the last tick handed out.
    last: Option<Instant>,
}

impl PacedRun {
    /// A run starting now.
    pub fn new(interval: Duration, end: End) -> PacedRun {
        PacedRun::starting_at(Instant::now(), interval, end)
    }

    /// A run starting at `start` (tests: a fixed clock).
    pub fn starting_at(start: Instant, interval: Duration, end: End) -> PacedRun {
        PacedRun {
            start,
            woke: start,
            anchor: start,
            since_anchor: Duration::ZERO,
            interval: Some(interval),
            speed: 1.0,
            end,
            n: 0,
            last: None,
        }
    }

    /// A run starting now whose ticks come at intervals given one by one
    /// ([`PacedRun::due_after`], [`PacedRun::wait_or_recv`]), at speed 1.
    pub fn variable(end: End) -> PacedRun {
        PacedRun::variable_at(Instant::now(), end)
    }

    /// [`PacedRun::variable`] starting at `start` (tests: a fixed clock).
    pub fn variable_at(start: Instant, end: End) -> PacedRun {
        PacedRun {
            interval: None,
            ..PacedRun::starting_at(start, Duration::ZERO, end)
        }
    }

    /// The next tick counts from `at` (navigation: the frame just shown),
    /// its intervals divided by `speed` from now on; the ticks handed out
    /// so far, and so the end of the run, stay as they are.
    pub fn anchor(&mut self, at: Instant, speed: f64) {
        self.anchor = at;
        self.since_anchor = Duration::ZERO;
        self.speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            1.0
        };
    }

    /// The instant the run started (tick 0).
    pub fn start(&self) -> Instant {
        self.start
    }

    /// When the run ends by its duration (`None`: by count or never).
    pub fn deadline(&self) -> Option<Instant> {
        match self.end {
            End::After(d) => Some(later(self.start, d)),
            _ => None,
        }
    }

    /// Ticks handed out so far.
    pub fn ticks(&self) -> u64 {
        self.n
    }

    /// The number of ticks of the whole run (`None`: no end, or a
    /// variable run by duration, which ends with the tick due at its end).
    pub fn total(&self) -> Option<u64> {
        match (self.end, self.interval) {
            (End::Never, _) | (End::After(_), None) => None,
            (End::Count(n), _) => Some(n),
            (End::After(d), Some(iv)) => {
                let iv = iv.as_nanos();
                if iv == 0 {
                    return Some(1);
                }
                let n = d.as_nanos().div_ceil(iv);
                Some(u64::try_from(n).unwrap_or(u64::MAX))
            }
        }
    }

    /// Whether the tick just taken was the run's last (its count or
    /// duration reached): what a reader that must end exact reads then
    /// (`trace`, `top --batch --trace`, `record --trace`).
    pub fn was_last(&self) -> bool {
        self.n > 0 && self.over()
    }

    /// Whether every tick of the run was handed out.
    fn over(&self) -> bool {
        match self.total() {
            Some(t) => self.n >= t,
            None => matches!((self.last, self.deadline()), (Some(l), Some(d)) if l >= d),
        }
    }

    /// The due time of the next tick, `interval` after the one before
    /// (a fixed run's own interval when `None`), without taking it; `None`
    /// once the run is over.
    pub fn due_after(&self, interval: Option<Duration>) -> Option<Instant> {
        if self.over() {
            return None;
        }
        let iv = interval.or(self.interval).unwrap_or_default();
        let covered = self.since_anchor.saturating_add(iv);
        let scaled = if self.speed == 1.0 {
            covered
        } else {
            // whole nanoseconds: an f64 holds them exactly for 104 days
            Duration::from_nanos((covered.as_nanos() as f64 / self.speed) as u64)
        };
        let due = later(self.anchor, scaled);
        Some(match self.deadline() {
            Some(end) => due.min(end),
            None => due,
        })
    }

    /// Take the next tick, `interval` after the one before (see
    /// [`PacedRun::due_after`]): its due time, `None` once the run is over.
    pub fn take_after(&mut self, interval: Option<Duration>) -> Option<Instant> {
        let due = self.due_after(interval)?;
        let iv = interval.or(self.interval).unwrap_or_default();
        self.since_anchor = self.since_anchor.saturating_add(iv);
        self.n += 1;
        self.last = Some(due);
        Some(due)
    }

    /// The due time of the next tick, or `None` once the run is over (no
    /// sleep: callers with their own way of waiting use this).
    pub fn next_due(&mut self) -> Option<Instant> {
        self.take_after(None)
    }

    /// Sleep until the next tick (at once if it is late); [`Tick::End`]
    /// without sleeping once the run is over, whether or not `stop` caught
    /// a signal (the run's last tick was taken: a signal caught since adds
    /// none after it, and the caller finds it in `stop`); before that,
    /// [`Tick::Signal`] as soon as `stop` catches one.
    pub fn wait(&mut self, stop: &Stop) -> Tick {
        if let Some(sig) = stop.caught() {
            if !self.over() {
                return Tick::Signal(sig);
            }
        }
        match self.next_due() {
            None => Tick::End,
            Some(due) => match stop.sleep_to(due) {
                Err(sig) => Tick::Signal(sig),
                Ok(now) => {
                    self.woke = now;
                    Tick::Due
                }
            },
        }
    }

    /// Sleep until at least `min` has passed since [`PacedRun::wait`] last
    /// handed out a tick (the run's start before the first): the read a
    /// signal brings early then covers at least `min` (a closing trace
    /// read: `top --batch --trace` waits out the shortest `-i`, `record
    /// --trace` its `final_after`).
    pub fn wait_out(&self, min: Duration) {
        std::thread::sleep(min.saturating_sub(self.since_tick()));
    }

    /// How long ago [`PacedRun::wait`] last handed out a tick (the run's
    /// start before the first).
    pub fn since_tick(&self) -> Duration {
        self.woke.elapsed()
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

    /// Wait for the next tick, `interval` after the one before (`None`:
    /// no tick to wait for, as when playback is paused), or a message on
    /// `rx`, whichever comes first: a message waiting is taken before a
    /// late tick, and a tick is taken only when [`Wake::Due`] says so.
    /// Looks at `stop` at least every 200 ms.
    pub fn wait_or_recv<T>(
        &mut self,
        interval: Option<Duration>,
        rx: &Receiver<T>,
        stop: &Stop,
    ) -> Wake<T> {
        loop {
            if stop.requested() {
                return Wake::Stop;
            }
            let due = match interval {
                None => None,
                Some(iv) => match self.due_after(Some(iv)) {
                    None => return Wake::End,
                    due => due,
                },
            };
            let now = Instant::now();
            let wait = due.map_or(POLL, |d| d.saturating_duration_since(now).min(POLL));
            match rx.recv_timeout(wait) {
                Ok(m) => return Wake::Msg(m),
                Err(RecvTimeoutError::Disconnected) => return Wake::Stop,
                Err(RecvTimeoutError::Timeout) => {
                    if due.is_some_and(|d| d <= Instant::now()) {
                        self.take_after(interval);
                        return Wake::Due;
                    }
                }
            }
        }
    }
}

/// `at + d`, or as far as an `Instant` goes (a corrupt interval must not
/// panic).
fn later(at: Instant, d: Duration) -> Instant {
    at.checked_add(d)
        .or_else(|| at.checked_add(Duration::from_secs(u64::from(u32::MAX))))
        .unwrap_or(at)
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

    /// Only the tick that ends a run by count or duration is its last; a
    /// run without an end has none.
    #[test]
    fn the_last_tick_is_known_when_it_is_taken() {
        let t0 = Instant::now();
        let lasts = |end| {
            let mut p = PacedRun::starting_at(t0, 1000 * MS, end);
            let mut v = vec![p.was_last()];
            while p.next_due().is_some() {
                v.push(p.was_last());
                assert!(v.len() < 100, "runaway");
            }
            v
        };
        assert_eq!(lasts(End::Count(3)), [false, false, false, true]);
        assert_eq!(lasts(End::After(2500 * MS)), [false, false, false, true]);
        assert_eq!(lasts(End::Count(0)), [false], "no tick, no last");
        let mut v = PacedRun::variable_at(t0, End::After(1500 * MS));
        v.take_after(Some(1000 * MS));
        assert!(!v.was_last());
        v.take_after(Some(1000 * MS));
        assert!(v.was_last(), "the tick due at a variable run's end");
        let mut never = PacedRun::starting_at(t0, MS, End::Never);
        assert!((0..50).all(|_| never.next_due().is_some() && !never.was_last()));
    }

    /// The end-of-run rule for signals: while ticks are to come a signal
    /// is answered at once (it cuts the interval waited for short); once
    /// the last tick was taken, one caught since is the run's end (it adds
    /// no tick) and stays in the flag, for the exit code.
    #[test]
    fn a_signal_after_the_last_tick_ends_the_run_as_its_end_does() {
        let sigint = signal_hook::consts::SIGINT;
        // started long ago: every tick is late, so none sleeps
        let now = Instant::now();
        let past = now.checked_sub(60_000 * MS).unwrap_or(now);
        for end in [End::Count(2), End::After(1500 * MS)] {
            let stop = Stop::unhooked();
            let mut p = PacedRun::starting_at(past, 1000 * MS, end);
            assert_eq!(p.wait(&stop), Tick::Due);
            stop.catch(sigint);
            assert_eq!(p.wait(&stop), Tick::Signal(sigint), "{end:?}");
            let stop = Stop::unhooked();
            let mut p = PacedRun::starting_at(past, 1000 * MS, end);
            assert_eq!((p.wait(&stop), p.wait(&stop)), (Tick::Due, Tick::Due));
            assert!(p.was_last());
            stop.catch(sigint);
            assert_eq!(p.wait(&stop), Tick::End, "{end:?}");
            assert_eq!(p.wait(&stop), Tick::End, "{end:?}");
            assert_eq!(stop.caught(), Some(sigint));
            assert_eq!(p.ticks(), 2);
        }
        // a run without an end is never over
        let stop = Stop::unhooked();
        let mut p = PacedRun::starting_at(past, 1000 * MS, End::Never);
        assert_eq!(p.wait(&stop), Tick::Due);
        stop.catch(sigint);
        assert_eq!(p.wait(&stop), Tick::Signal(sigint));
    }

    /// A read that a signal brings early waits out a minimum counted from
    /// the tick handed out before it (the start before the first).
    #[test]
    fn waiting_out_a_minimum_counts_from_the_last_tick() {
        let stop = Stop::unhooked();
        let min = 30 * MS;
        let mut p = PacedRun::new(MS, End::Never);
        p.wait_out(min);
        assert!(p.start().elapsed() >= min);
        std::thread::sleep(2 * min);
        assert!(p.since_tick() >= 2 * min, "from the start before a tick");
        assert_eq!(p.wait(&stop), Tick::Due, "late: at once");
        assert!(p.since_tick() < 2 * min, "{:?}", p.since_tick());
        p.wait_out(min);
        assert!(p.since_tick() >= min);
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

    /// Variable intervals (the replay player's): tick k is due at the
    /// anchor plus the sum of the intervals before it divided by the
    /// speed, not a sum of divided intervals (1 s at x3 three times is
    /// exactly 1 s, not 999 999 999 ns); a run by duration ends with the
    /// tick due at its end.
    #[test]
    fn variable_ticks_are_due_at_the_anchor_plus_the_summed_intervals_over_the_speed() {
        let t0 = Instant::now();
        let mut p = PacedRun::variable_at(t0, End::Never);
        let ivs = [1000 * MS, 3 * MS, 2500 * MS, Duration::ZERO, 7 * MS];
        let mut sum = Duration::ZERO;
        for iv in ivs {
            sum += iv;
            assert_eq!(
                p.due_after(Some(iv)),
                Some(t0 + sum),
                "peeking takes no tick"
            );
            assert_eq!(p.take_after(Some(iv)), Some(t0 + sum));
        }
        assert_eq!(p.ticks(), 5);
        p.anchor(t0, 3.0);
        let v: Vec<_> = (0..3)
            .map(|_| p.take_after(Some(1000 * MS)).unwrap() - t0)
            .collect();
        let ns = Duration::from_nanos;
        assert_eq!(v, [ns(333_333_333), ns(666_666_666), ns(1_000_000_000)]);
        let mut d = PacedRun::variable_at(t0, End::After(2500 * MS));
        let v: Vec<_> = std::iter::from_fn(|| d.take_after(Some(1000 * MS)))
            .map(|t| t - t0)
            .collect();
        assert_eq!(v, [1000 * MS, 2000 * MS, 2500 * MS]);
        assert_eq!(d.total(), None);
    }

    /// Navigation re-anchors: the next tick counts from the new anchor at
    /// the new speed, and the ticks already handed out still count toward
    /// the end of the run.
    #[test]
    fn re_anchoring_restarts_the_sum_but_keeps_the_count() {
        let t0 = Instant::now();
        let mut p = PacedRun::variable_at(t0, End::Count(4));
        p.take_after(Some(1000 * MS));
        p.take_after(Some(1000 * MS));
        let t1 = t0 + 60_000 * MS;
        p.anchor(t1, 2.0);
        assert_eq!(p.ticks(), 2);
        assert_eq!(p.take_after(Some(1000 * MS)), Some(t1 + 500 * MS));
        assert_eq!(p.take_after(Some(3000 * MS)), Some(t1 + 2000 * MS));
        assert_eq!(p.take_after(Some(1000 * MS)), None, "4 ticks in all");
        // a bad speed is speed 1, not a division by zero
        let mut q = PacedRun::variable_at(t0, End::Never);
        q.anchor(t1, 0.0);
        assert_eq!(q.take_after(Some(MS)), Some(t1 + MS));
    }

    /// A late tick (a slow frame) is taken at once and the count does not
    /// change; a message waiting comes before the tick, which stays due;
    /// a stop request or a gone sender ends the wait.
    #[test]
    fn waiting_for_a_variable_tick_or_a_message() {
        let stop = Stop::install().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<u32>();
        // anchored 10 s ago: ticks of 1 s each are all late
        let now = Instant::now();
        let past = now.checked_sub(10_000 * MS).unwrap_or(now);
        let mut p = PacedRun::variable_at(past, End::Count(3));
        let sec = Some(1000 * MS);
        tx.send(7).unwrap();
        assert_eq!(p.wait_or_recv(sec, &rx, &stop), Wake::Msg(7));
        assert_eq!(p.ticks(), 0, "a message takes no tick");
        let late = Instant::now();
        for _ in 0..3 {
            assert_eq!(p.wait_or_recv(sec, &rx, &stop), Wake::Due);
        }
        assert!(
            late.elapsed() < 1000 * MS,
            "three late ticks within one interval: {:?}",
            late.elapsed()
        );
        assert_eq!(p.wait_or_recv(sec, &rx, &stop), Wake::End);
        assert_eq!(p.ticks(), 3);
        // paused (no interval): only a message, the stop flag or a gone
        // sender ends the wait
        let mut q = PacedRun::variable(End::Never);
        tx.send(8).unwrap();
        assert_eq!(q.wait_or_recv(None, &rx, &stop), Wake::Msg(8));
        let asked = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(20 * MS);
            asked.request();
        });
        assert_eq!(q.wait_or_recv(None, &rx, &stop), Wake::Stop);
        t.join().unwrap();
        drop(tx);
        let fresh = Stop::install().unwrap();
        assert_eq!(
            q.wait_or_recv(Some(3_600_000 * MS), &rx, &fresh),
            Wake::Stop
        );
        assert_eq!(q.ticks(), 0);
    }
}
