//! The [`Workload`] trait: what makes interrupts during a trial.
//!
//! Life cycle per run: `setup` once, then `run(duration)` once per trial
//! (the timed window; the runner samples the statistics files just before
//! and just after), then `teardown` once. Implementations must stop every
//! thread and child process they started by the time `run` returns (or at
//! the latest in `teardown`/`Drop`), and must never leave files behind.

use super::metric::Metric;
use std::time::Duration;

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
    /// stderr tail for commands.
    fn run(&mut self, duration: Duration) -> anyhow::Result<Vec<Metric>>;

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
        fn run(&mut self, _: Duration) -> anyhow::Result<Vec<Metric>> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn setup_and_teardown_default_to_nothing() {
        let mut w = Bare;
        w.setup().unwrap();
        assert!(w.run(Duration::ZERO).unwrap().is_empty());
        w.teardown().unwrap();
    }
}
