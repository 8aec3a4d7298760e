//! `command`: a user command as the interrupt source. `--start` (a shell
//! snippet, `sh -c`, e.g. toggling a kernel test module through sysfs)
//! runs first, then `-- CMD ARGS` is spawned; after the settle time
//! (`--settle`) the timed window opens (the runner's first frame), lasts
//! the trial's duration and closes (its last frame) before the command is
//! terminated (SIGTERM to its process group, SIGKILL after 1 s) and
//! reaped and `--stop` runs: the window holds the steady state only. A command that exits
//! unsuccessfully before the trial ends, or a failing start/stop, is an
//! error carrying the exit status and the last lines of stderr.

use super::child::{run_sh, Spawned};
use crate::bench::metric_value::Metric;
use crate::bench::workload::{NoWindow, Window, Workload};
use crate::guard::Tracker;
use crate::sampler::Stop;
use anyhow::bail;
use std::time::{Duration, Instant};

/// Grace between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(1);
/// Default wait between the start (`--start`, the command's spawn) and the
/// timed window (`--settle`).
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(200);
/// Longest wait between two looks at a stop request.
const STOP_POLL: Duration = Duration::from_millis(50);
/// Longest a `--start` or `--stop` snippet may run.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The user-command workload.
pub struct CommandWorkload {
    argv: Vec<String>,
    start: Option<String>,
    stop: Option<String>,
    settle: Duration,
    tracker: Tracker,
}

/// True when `prog` names an executable: a path that exists, or a name
/// found on `PATH`.
fn findable(prog: &str) -> bool {
    if prog.contains('/') {
        return std::path::Path::new(prog).exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(prog).is_file()))
}

impl CommandWorkload {
    /// At least one of `argv`, `start`, `stop` must be given, and the
    /// command must exist (checked now, before any trial). Every process
    /// group started is tracked by `tracker`.
    pub fn new(
        argv: Vec<String>,
        start: Option<String>,
        stop: Option<String>,
        tracker: Tracker,
    ) -> anyhow::Result<Self> {
        if argv.is_empty() && start.is_none() && stop.is_none() {
            bail!("the command workload needs `-- CMD ARGS` or --start/--stop");
        }
        if let Some(prog) = argv.first() {
            if !findable(prog) {
                bail!("command {prog:?} not found (not a path, and not on PATH)");
            }
        }
        Ok(CommandWorkload {
            argv,
            start,
            stop,
            settle: DEFAULT_SETTLE,
            tracker,
        })
    }

    /// Wait `settle` after the start (default [`DEFAULT_SETTLE`]) before
    /// the timed window opens.
    pub fn with_settle(mut self, settle: Duration) -> Self {
        self.settle = settle;
        self
    }

    /// Spawn the command (if any), let it settle, hold the window open for
    /// `duration`, close it, then stop the command.
    fn timed(
        &self,
        duration: Duration,
        window: &mut dyn Window,
        stop: &Stop,
    ) -> anyhow::Result<()> {
        let mut child = match self.argv.is_empty() {
            true => None,
            false => {
                let label = format!("command `{}`", self.argv.join(" "));
                Some(Spawned::spawn(&self.argv, &label, &self.tracker)?)
            }
        };
        let res = self.windowed(&mut child, duration, window, stop);
        match child.as_mut() {
            Some(c) => {
                let stopped = c.terminate(KILL_GRACE);
                res.and(stopped.map(|_| ()))
            }
            None => res,
        }
    }

    /// The settle time and the window, while the command runs.
    fn windowed(
        &self,
        child: &mut Option<Spawned>,
        duration: Duration,
        window: &mut dyn Window,
        stop: &Stop,
    ) -> anyhow::Result<()> {
        let mut exited = wait(child, Instant::now() + self.settle, stop)?;
        if let (Some(st), Some(c)) = (exited, child.as_ref()) {
            if !st.success() {
                return Err(c.failure("exited before the trial's window opened", st));
            }
        }
        if stop.requested() {
            return Ok(());
        }
        let opened = window.open()?;
        let end = opened + duration;
        let mut early = exited.map(|_| Early::BeforeOpen);
        if exited.is_none() {
            exited = wait(child, end, stop)?;
            if let (Some(st), Some(c)) = (exited, child.as_ref()) {
                if !st.success() {
                    return Err(c.failure("exited before the end of the trial", st));
                }
                early = Some(Early::Into(opened.elapsed()));
            }
        }
        // A command that finished cleanly: the window still lasts
        // `duration` (anything it left in the background keeps running).
        wait(&mut None, end, stop)?;
        window.close()?;
        if let (Some(when), Some(c)) = (early, child.as_ref()) {
            if !stop.requested() {
                warn_early_exit(c.label(), when, duration);
            }
        }
        Ok(())
    }
}

/// When a command that exited cleanly ended, against the trial's window.
#[derive(Clone, Copy)]
enum Early {
    /// In the settle time: none of the window saw the command run.
    BeforeOpen,
    /// This long after the window opened.
    Into(Duration),
}

/// Say on stderr that the command ended before the window closed: the
/// window (all of it, or the rest) measured what it left running (or
/// nothing).
fn warn_early_exit(label: &str, when: Early, duration: Duration) {
    eprintln!(
        "irqlab: warning: {}",
        early_exit_text(label, when, duration)
    );
}

/// The text of [`warn_early_exit`].
fn early_exit_text(label: &str, when: Early, duration: Duration) -> String {
    let window = duration.as_millis();
    match when {
        Early::BeforeOpen => format!(
            "{label} exited before the trial's window opened: the whole window ({window} ms) \
             measured what it left running, not the command"
        ),
        Early::Into(d) => format!(
            "{label} exited {} ms into the trial's window, before the window ({window} ms) \
             closed: the rest of the window measured what it left running, not the command",
            d.as_millis()
        ),
    }
}

/// Wait until `until`, the child's exit (its status) or a stop request,
/// whichever comes first.
fn wait(
    child: &mut Option<Spawned>,
    until: Instant,
    stop: &Stop,
) -> anyhow::Result<Option<std::process::ExitStatus>> {
    loop {
        let now = Instant::now();
        if now >= until || stop.requested() {
            return Ok(None);
        }
        let step = (now + STOP_POLL).min(until);
        match child.as_mut() {
            Some(c) => {
                if let Some(st) = c.wait_until(step)? {
                    return Ok(Some(st));
                }
            }
            None => std::thread::sleep(step.saturating_duration_since(now)),
        }
    }
}

impl Workload for CommandWorkload {
    fn name(&self) -> &str {
        "command"
    }

    fn run(&mut self, duration: Duration, stop: &Stop) -> anyhow::Result<Vec<Metric>> {
        self.run_window(duration, &mut NoWindow, stop)
    }

    fn run_window(
        &mut self,
        duration: Duration,
        window: &mut dyn Window,
        stop: &Stop,
    ) -> anyhow::Result<Vec<Metric>> {
        let started = match &self.start {
            Some(s) => run_sh(s, "--start", HOOK_TIMEOUT, &self.tracker),
            None => Ok(()),
        };
        let timed = started.and_then(|()| self.timed(duration, window, stop));
        // Stop runs even after a failure, to undo a partial start.
        let stopped = match &self.stop {
            Some(s) => run_sh(s, "--stop", HOOK_TIMEOUT, &self.tracker),
            None => Ok(()),
        };
        timed.and(stopped)?;
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::errno::Errno;
    use nix::sys::signal::{kill, killpg};
    use nix::unistd::Pid;

    #[test]
    fn an_early_exit_is_worded_by_when_it_came() {
        let d = Duration::from_millis(300);
        let before = early_exit_text("command `true`", Early::BeforeOpen, d);
        assert_eq!(
            before,
            "command `true` exited before the trial's window opened: the whole window \
             (300 ms) measured what it left running, not the command"
        );
        let into = early_exit_text("command `x`", Early::Into(Duration::from_millis(42)), d);
        assert_eq!(
            into,
            "command `x` exited 42 ms into the trial's window, before the window (300 ms) \
             closed: the rest of the window measured what it left running, not the command"
        );
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    /// True when no process of group `pgid` exists (reaped, not a zombie).
    fn group_gone(pgid: i32) -> bool {
        kill(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
            && killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
    }

    #[test]
    fn failing_command_reports_status_and_stderr_tail() {
        let _live = super::super::live_lock();
        let script = "for i in $(seq 1 30); do echo line$i >&2; done; exit 7";
        let mut w = CommandWorkload::new(sh(script), None, None, Tracker::none()).unwrap();
        let t0 = Instant::now();
        let err = format!(
            "{:#}",
            w.run(Duration::from_secs(5), &Stop::unhooked())
                .unwrap_err()
        );
        // The 5 s trial ends early; the bound leaves 4 s for a busy machine.
        assert!(
            t0.elapsed() < Duration::from_millis(4500),
            "failure must end the trial early"
        );
        assert!(err.contains("exit status 7"), "{err}");
        assert!(err.contains("line11\n") && err.ends_with("line30"), "{err}");
        assert!(!err.contains("line10\n"), "only the last 20 lines: {err}");
    }

    #[test]
    fn long_running_command_is_killed_and_reaped() {
        let _live = super::super::live_lock();
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("echo $$ > {}; sleep 30 & sleep 30", pidfile.display());
        let mut w = CommandWorkload::new(sh(&script), None, None, Tracker::none()).unwrap();
        let t0 = Instant::now();
        assert!(w
            .run(Duration::from_millis(300), &Stop::unhooked())
            .unwrap()
            .is_empty());
        // Killed by SIGTERM without waiting out the 1 s grace; a busy
        // machine may add seconds, never the 30 s of the sleeps.
        assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(group_gone(pid), "a process of group {pid} remains");
    }

    #[test]
    fn term_ignoring_command_gets_sigkill() {
        let _live = super::super::live_lock();
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("trap '' TERM; echo $$ > {}; sleep 30", pidfile.display());
        let mut w = CommandWorkload::new(sh(&script), None, None, Tracker::none()).unwrap();
        let t0 = Instant::now();
        w.run(Duration::from_millis(200), &Stop::unhooked())
            .unwrap();
        let took = t0.elapsed();
        // SIGKILL comes after the grace; the upper bound only proves the
        // 30 s sleep did not run out (a busy machine may add seconds).
        assert!(
            took >= KILL_GRACE && took < Duration::from_secs(15),
            "{took:?}"
        );
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(group_gone(pid), "a process of group {pid} remains");
    }

    /// Records when the window opened and closed, and whether the
    /// command's process was alive at the close.
    struct Recorder {
        pidfile: std::path::PathBuf,
        opened: Option<Instant>,
        closed: Option<Instant>,
        alive_at_close: bool,
    }

    impl Window for Recorder {
        fn open(&mut self) -> anyhow::Result<Instant> {
            let now = Instant::now();
            self.opened = Some(now);
            Ok(now)
        }
        fn close(&mut self) -> anyhow::Result<()> {
            self.closed = Some(Instant::now());
            let pid: i32 = std::fs::read_to_string(&self.pidfile)?.trim().parse()?;
            self.alive_at_close = kill(Pid::from_raw(pid), None).is_ok();
            Ok(())
        }
    }

    #[test]
    fn window_opens_after_the_settle_time_and_closes_before_the_stop() {
        let _live = super::super::live_lock();
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("echo $$ > {}; exec sleep 30", pidfile.display());
        let settle = Duration::from_millis(300);
        let mut w = CommandWorkload::new(sh(&script), None, None, Tracker::none())
            .unwrap()
            .with_settle(settle);
        let mut rec = Recorder {
            pidfile: pidfile.clone(),
            opened: None,
            closed: None,
            alive_at_close: false,
        };
        let t0 = Instant::now();
        w.run_window(Duration::from_millis(400), &mut rec, &Stop::unhooked())
            .unwrap();
        let (opened, closed) = (rec.opened.unwrap(), rec.closed.unwrap());
        assert!(
            opened - t0 >= settle,
            "opened {:?} after the start",
            opened - t0
        );
        assert!(closed - opened >= Duration::from_millis(400));
        assert!(
            rec.alive_at_close,
            "the window closed after the command was stopped"
        );
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(group_gone(pid), "stopped after the window");
    }

    #[test]
    fn missing_command_fails_when_built_not_in_a_trial() {
        let e = CommandWorkload::new(
            vec!["no-such-irqlab-cmd".into()],
            None,
            None,
            Tracker::none(),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("not found"), "{e}");
    }

    #[test]
    fn clean_early_exit_still_waits_out_the_trial() {
        let _live = super::super::live_lock();
        let mut w = CommandWorkload::new(vec!["true".into()], None, None, Tracker::none()).unwrap();
        let t0 = Instant::now();
        w.run(Duration::from_millis(200), &Stop::unhooked())
            .unwrap();
        assert!(t0.elapsed() >= Duration::from_millis(200));
    }

    #[test]
    fn start_and_stop_hooks_run_around_the_wait() {
        let _live = super::super::live_lock();
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("on");
        let start = format!("touch {}", flag.display());
        let stop = format!("test -e {0} && rm {0}", flag.display());
        let mut w =
            CommandWorkload::new(Vec::new(), Some(start), Some(stop.clone()), Tracker::none())
                .unwrap();
        w.run(Duration::from_millis(50), &Stop::unhooked()).unwrap();
        assert!(!flag.exists());
        // A failing start is reported, and stop still runs (and fails here).
        let mut bad = CommandWorkload::new(
            Vec::new(),
            Some("echo nope >&2; exit 4".into()),
            Some(stop),
            Tracker::none(),
        )
        .unwrap();
        let err = format!(
            "{:#}",
            bad.run(Duration::from_millis(50), &Stop::unhooked())
                .unwrap_err()
        );
        assert!(
            err.contains("--start") && err.contains("exit status 4") && err.contains("nope"),
            "{err}"
        );
    }
}
