//! The [`Workload`] trait: what makes interrupts during a trial.
//!
//! Life cycle per run: `setup` once, then `run_window(duration, window,
//! stop)` once per trial, then `teardown` once. The [`Window`] is the
//! runner's: the workload opens it once it runs in its steady state (the
//! runner takes the first frame) and closes it after `duration`, before
//! stopping anything (the last frame), so the timed window holds neither
//! its start nor its end. The default opens it, runs `run(duration, stop)`
//! and closes it. The [`Stop`] is the runner's too (the one SIGINT/SIGTERM
//! flag of the run): once it is asked for, a workload ends its trial early.
//! Implementations must stop every thread and child process they started
//! by the time `run` returns (or at the latest in `teardown`/`Drop`), and
//! must never leave files behind.

use super::metric_value::Metric;
use crate::sampler::Stop;
use std::time::{Duration, Instant};

/// True while a trial loop started at `start` goes on: `duration` has
/// not passed and no stop was asked for (the run's [`Stop`]: SIGINT or
/// SIGTERM ends the trial under way early, and the runner discards it:
/// a stopped run never waits out a long `--trial-length`).
pub fn running(start: Instant, duration: Duration, stop: &Stop) -> bool {
    start.elapsed() < duration && !stop.requested()
}

/// The timed window of one trial, opened and closed by the workload.
pub trait Window {
    /// The workload runs in its steady state: the window starts now.
    /// Returns when it started (the first frame's time), from which the
    /// workload counts the window's duration.
    fn open(&mut self) -> anyhow::Result<Instant>;
    /// The window ends now (before the workload is stopped).
    fn close(&mut self) -> anyhow::Result<()>;
}

/// A window that measures nothing (warm-ups, tests).
#[derive(Debug, Default)]
pub struct NoWindow;

impl Window for NoWindow {
    fn open(&mut self) -> anyhow::Result<Instant> {
        Ok(Instant::now())
    }
    fn close(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A source of interrupts for a trial.
pub trait Workload: Send {
    /// Short name (`ipi`, `net`, `command`).
    fn name(&self) -> &str;

    /// Prepare before the first trial (spawn helpers, create files).
    /// Default: nothing to prepare.
    fn setup(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Run one timed trial of `duration`; return the workload's own metrics
    /// (throughput, latency percentiles). Errors carry the exit status and
    /// stderr tail for commands. Ends early once `stop` was asked for
    /// ([`running`]; the runner then discards the trial); `stop` is
    /// `Sync`: the workload's scoped threads share it.
    fn run(&mut self, duration: Duration, stop: &Stop) -> anyhow::Result<Vec<Metric>>;

    /// One timed trial inside `window` (see the module docs). Default: the
    /// window around [`Workload::run`]; it is closed even when `run` fails
    /// (a trial disturbed by hotplug is kept with a gap).
    fn run_window(
        &mut self,
        duration: Duration,
        window: &mut dyn Window,
        stop: &Stop,
    ) -> anyhow::Result<Vec<Metric>> {
        window.open()?;
        let ran = self.run(duration, stop);
        window.close()?;
        ran
    }

    /// Release everything `setup` created. Default: nothing to release.
    fn teardown(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bare;

    impl Workload for Bare {
        fn name(&self) -> &str {
            "bare"
        }
        fn run(&mut self, _: Duration, _: &Stop) -> anyhow::Result<Vec<Metric>> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn setup_and_teardown_default_to_nothing() {
        let mut w = Bare;
        w.setup().unwrap();
        assert!(w.run(Duration::ZERO, &Stop::unhooked()).unwrap().is_empty());
        w.teardown().unwrap();
    }
}
