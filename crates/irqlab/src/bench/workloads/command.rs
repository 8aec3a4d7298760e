//! `command`: a user command as the interrupt source. `-- CMD ARGS` is
//! spawned at the start of each trial and terminated (SIGTERM to its
//! process group, SIGKILL after 1 s) and reaped at the end; `--start` /
//! `--stop` shell snippets (`sh -c`) run around the timed wait, e.g. to
//! toggle a kernel test module through sysfs. A command that exits
//! unsuccessfully before the trial ends, or a failing start/stop, is an
//! error carrying the exit status and the last lines of stderr.

use super::child::{run_sh, Spawned};
use crate::bench::metric::Metric;
use crate::bench::workload::Workload;
use anyhow::bail;
use std::time::{Duration, Instant};

/// Grace between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(1);
/// Longest a `--start` or `--stop` snippet may run.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The user-command workload.
pub struct CommandWorkload {
    argv: Vec<String>,
    start: Option<String>,
    stop: Option<String>,
}

impl CommandWorkload {
    /// At least one of `argv`, `start`, `stop` must be given.
    pub fn new(
        argv: Vec<String>,
        start: Option<String>,
        stop: Option<String>,
    ) -> anyhow::Result<Self> {
        if argv.is_empty() && start.is_none() && stop.is_none() {
            bail!("the command workload needs `-- CMD ARGS` or --start/--stop");
        }
        Ok(CommandWorkload { argv, start, stop })
    }

    /// Spawn the command (if any), wait `duration`, stop it.
    fn timed(&self, duration: Duration) -> anyhow::Result<()> {
        let end = Instant::now() + duration;
        if self.argv.is_empty() {
            std::thread::sleep(end.saturating_duration_since(Instant::now()));
            return Ok(());
        }
        let label = format!("command `{}`", self.argv.join(" "));
        let mut child = Spawned::spawn(&self.argv, &label)?;
        if let Some(st) = child.wait_until(end)? {
            if !st.success() {
                return Err(child.failure("exited before the end of the trial", st));
            }
            // A command that finished cleanly: the window still lasts `duration`.
            std::thread::sleep(end.saturating_duration_since(Instant::now()));
            return Ok(());
        }
        child.terminate(KILL_GRACE)?;
        Ok(())
    }
}

impl Workload for CommandWorkload {
    fn name(&self) -> &str {
        "command"
    }

    fn setup(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn run(&mut self, duration: Duration) -> anyhow::Result<Vec<Metric>> {
        let started = match &self.start {
            Some(s) => run_sh(s, "--start", HOOK_TIMEOUT),
            None => Ok(()),
        };
        let timed = started.and_then(|()| self.timed(duration));
        // Stop runs even after a failure, to undo a partial start.
        let stopped = match &self.stop {
            Some(s) => run_sh(s, "--stop", HOOK_TIMEOUT),
            None => Ok(()),
        };
        timed.and(stopped)?;
        Ok(Vec::new())
    }

    fn teardown(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}
