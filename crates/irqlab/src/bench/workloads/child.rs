//! A child process owned by a workload: spawned in its own process group
//! (so `sh -c` pipelines die together), stdout discarded, stderr read
//! without blocking into a tail of the last lines for error messages;
//! terminated with SIGTERM, then SIGKILL after a grace period, and always
//! reaped (also on drop). This process becomes a child subreaper, so
//! members of the group orphaned by the shell are reaped here too, not
//! left as zombies. The group is journaled through the guard's
//! [`Tracker`] as soon as it exists, so SIGINT/SIGTERM, a panic or
//! `irqlab restore` after a SIGKILL stop it too. No helper threads: the
//! owner polls.

use crate::guard::{Tracked, Tracker};
use anyhow::{anyhow, Context};
use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Runs in the new group's leader before the command: wait for one line
/// on stdin — written once the group is journaled — then become the
/// command (same pid, so the same group). If irqlab dies before that, the
/// pipe closes without a line and the command never starts, so no group
/// can exist that the journal does not know. The command's stdin is then
/// at end of file, as with /dev/null.
const GATE: &str = "read -r _ && exec \"$@\"";

/// Lines of stderr kept for error messages.
pub const TAIL_LINES: usize = 20;
/// Poll interval while waiting for a child.
pub const POLL: Duration = Duration::from_millis(10);

/// The last lines of a byte stream.
#[derive(Debug, Default)]
pub struct Tail {
    lines: VecDeque<String>,
    partial: Vec<u8>,
}

impl Tail {
    /// Append bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                let line = String::from_utf8_lossy(&self.partial).into_owned();
                self.partial.clear();
                self.lines.push_back(line);
                if self.lines.len() > TAIL_LINES {
                    self.lines.pop_front();
                }
            } else if self.partial.len() < 4096 {
                self.partial.push(b);
            }
        }
    }

    /// The kept lines (and an unterminated last line), joined by newlines.
    pub fn text(&self) -> String {
        let mut all: Vec<String> = self.lines.iter().cloned().collect();
        if !self.partial.is_empty() {
            all.push(String::from_utf8_lossy(&self.partial).into_owned());
        }
        let skip = all.len().saturating_sub(TAIL_LINES);
        all.get(skip..).unwrap_or_default().join("\n")
    }
}

/// A running child and what it wrote to stderr so far.
pub struct Spawned {
    label: String,
    child: Child,
    stderr: Option<ChildStderr>,
    tail: Tail,
    status: Option<ExitStatus>,
    tracked: Option<Tracked>,
}

impl Spawned {
    /// Spawn `argv` in a new process group tracked by `tracker`; `label`
    /// names it in errors.
    pub fn spawn(argv: &[String], label: &str, tracker: &Tracker) -> anyhow::Result<Self> {
        if argv.is_empty() {
            return Err(anyhow!("empty command"));
        }
        // Orphaned group members are reparented to us and reaped in `reap_group`.
        nix::sys::prctl::set_child_subreaper(true).context("PR_SET_CHILD_SUBREAPER")?;
        let mut child = Command::new("sh")
            .args(["-c", GATE, "irqlab"])
            .args(argv)
            .envs(tracker.child_env())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {label}"))?;
        let stderr = child.stderr.take();
        let pgid = i32::try_from(child.id()).context("child pid out of range")?;
        let tracked = match tracker.process_group(pgid) {
            Ok(t) => t,
            Err(e) => {
                let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
                let _ = child.wait();
                return Err(e.context(format!("journaling the process group of {label}")));
            }
        };
        // Journaled: open the gate (a failed write means the child is gone,
        // which the next poll reports).
        if let Some(mut gate) = child.stdin.take() {
            let _ = std::io::Write::write_all(&mut gate, b"go\n");
        }
        if let Some(e) = &stderr {
            let flags = fcntl(e, FcntlArg::F_GETFL).context("F_GETFL on child stderr")?;
            let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
            fcntl(e, FcntlArg::F_SETFL(flags)).context("F_SETFL on child stderr")?;
        }
        Ok(Spawned {
            label: label.to_string(),
            child,
            stderr,
            tail: Tail::default(),
            status: None,
            tracked: Some(tracked),
        })
    }

    /// Read whatever stderr has without blocking.
    fn drain(&mut self) {
        let Some(e) = self.stderr.as_mut() else {
            return;
        };
        let mut buf = [0u8; 4096];
        loop {
            match e.read(&mut buf) {
                Ok(0) => {
                    self.stderr = None;
                    return;
                }
                Ok(n) => self.tail.push(buf.get(..n).unwrap_or_default()),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return, // WouldBlock (or a broken pipe): try later
            }
        }
    }

    /// Exit status if the child has exited (reaping it), draining stderr.
    pub fn poll(&mut self) -> anyhow::Result<Option<ExitStatus>> {
        self.drain();
        if self.status.is_none() {
            self.status = self
                .child
                .try_wait()
                .with_context(|| format!("waiting for {}", self.label))?;
            if self.status.is_some() {
                self.drain();
            }
        }
        Ok(self.status)
    }

    /// Poll until the child exits or `until`; `None` when still running.
    pub fn wait_until(&mut self, until: Instant) -> anyhow::Result<Option<ExitStatus>> {
        loop {
            if let Some(st) = self.poll()? {
                return Ok(Some(st));
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            std::thread::sleep(left.min(POLL));
        }
    }

    /// SIGTERM the process group, SIGKILL it after `grace`, reap the child
    /// and every other member of its group. Returns the child's status.
    pub fn terminate(&mut self, grace: Duration) -> anyhow::Result<ExitStatus> {
        let st = match self.poll()? {
            Some(st) => st,
            None => self.stop_leader(grace)?,
        };
        self.reap_group(grace);
        Ok(st)
    }

    fn stop_leader(&mut self, grace: Duration) -> anyhow::Result<ExitStatus> {
        self.signal(Signal::SIGTERM);
        if let Some(st) = self.wait_until(Instant::now() + grace)? {
            return Ok(st);
        }
        self.signal(Signal::SIGKILL);
        let st = self
            .child
            .wait()
            .with_context(|| format!("reaping {}", self.label))?;
        self.status = Some(st);
        self.drain();
        Ok(st)
    }

    /// After the child was reaped: end the rest of its process group
    /// (SIGTERM, SIGKILL after `grace`) and reap the members reparented to
    /// us. Gives up after twice `grace` (zombies someone else must reap).
    fn reap_group(&mut self, grace: Duration) {
        let Ok(pgid) = i32::try_from(self.child.id()) else {
            return;
        };
        let mut next = Some(Signal::SIGTERM);
        let mut deadline = Instant::now();
        loop {
            while let Ok(ws) = waitpid(Pid::from_raw(-pgid), Some(WaitPidFlag::WNOHANG)) {
                if ws == WaitStatus::StillAlive {
                    break;
                }
            }
            if killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH) {
                if let Some(t) = self.tracked.take() {
                    if let Err(e) = t.release() {
                        eprintln!("irqlab: warning: {e:#}");
                    }
                }
                return;
            }
            if Instant::now() >= deadline {
                let Some(sig) = next else { return };
                self.signal(sig);
                next = (sig == Signal::SIGTERM).then_some(Signal::SIGKILL);
                deadline = Instant::now() + grace;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Signal the child's process group while it has members (the group
    /// id is not reused while any member, even a zombie, exists).
    fn signal(&self, sig: Signal) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(pid), sig);
        }
    }

    /// An error naming the command, its exit status and its stderr tail.
    /// What the child is called in messages (``command `CMD` ``).
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn failure(&self, what: &str, status: ExitStatus) -> anyhow::Error {
        let tail = self.tail.text();
        let tail = if tail.is_empty() {
            "(no stderr output)".to_string()
        } else {
            format!("last lines of stderr:\n{tail}")
        };
        anyhow!("{} {what} with {}; {tail}", self.label, describe(status))
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if self.status.is_none() {
            self.signal(Signal::SIGKILL);
            if let Ok(st) = self.child.wait() {
                self.status = Some(st);
            }
        }
        if self.status.is_some() {
            self.reap_group(Duration::from_millis(100));
        }
    }
}

/// `exit status 3` or `signal 9 (SIGKILL)`.
pub fn describe(st: ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => match Signal::try_from(s) {
            Ok(sig) => format!("signal {s} ({sig})"),
            Err(_) => format!("signal {s}"),
        },
        (None, None) => format!("{st}"),
    }
}

/// Run `sh -c script` to completion within `timeout`; a non-zero exit or a
/// timeout is an error with the stderr tail.
pub fn run_sh(
    script: &str,
    label: &str,
    timeout: Duration,
    tracker: &Tracker,
) -> anyhow::Result<()> {
    let argv = ["sh".to_string(), "-c".to_string(), script.to_string()];
    let mut c = Spawned::spawn(&argv, &format!("{label} `{script}`"), tracker)?;
    match c.wait_until(Instant::now() + timeout)? {
        Some(st) if st.success() => {
            c.reap_group(Duration::from_secs(1));
            Ok(())
        }
        Some(st) => {
            c.reap_group(Duration::from_secs(1));
            Err(c.failure("failed", st))
        }
        None => {
            let st = c.terminate(Duration::from_secs(1))?;
            Err(c.failure(&format!("timed out after {timeout:?}"), st))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_last_lines() {
        let _live = super::super::live_lock();
        let mut t = Tail::default();
        for i in 0..30 {
            t.push(format!("line {i}\n").as_bytes());
        }
        t.push(b"partial");
        let text = t.text();
        assert!(text.starts_with("line 11\n"), "{text}");
        assert!(text.ends_with("line 29\npartial"));
        assert_eq!(text.lines().count(), TAIL_LINES);
    }

    #[test]
    fn run_sh_reports_status_and_stderr() {
        let _live = super::super::live_lock();
        let err = run_sh(
            "echo one >&2; echo two >&2; exit 3",
            "start",
            Duration::from_secs(5),
            &Tracker::none(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("exit status 3"), "{err}");
        assert!(err.contains("one\ntwo"), "{err}");
        run_sh("true", "start", Duration::from_secs(5), &Tracker::none()).unwrap();
    }

    #[test]
    fn run_sh_times_out_and_kills() {
        let _live = super::super::live_lock();
        let t0 = Instant::now();
        let err = run_sh(
            "sleep 30",
            "stop",
            Duration::from_millis(100),
            &Tracker::none(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("timed out"), "{err}");
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "never the 30 s sleep"
        );
    }

    #[test]
    fn describe_signal() {
        let _live = super::super::live_lock();
        let argv = ["sleep".to_string(), "30".to_string()];
        let mut c = Spawned::spawn(&argv, "sleep", &Tracker::none()).unwrap();
        let st = c.terminate(Duration::from_secs(1)).unwrap();
        assert_eq!(describe(st), "signal 15 (SIGTERM)");
    }
}
