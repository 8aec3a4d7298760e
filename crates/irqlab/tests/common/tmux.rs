//! A private tmux server for tests that drive the interactive screens
//! (`top`, `replay`) in a real terminal: its socket lives in the test's
//! temp dir and it is killed on drop, even when the test fails.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub type Res<T> = Result<T, Box<dyn Error>>;

/// A private tmux server (socket inside the test's temp dir), killed on drop.
pub struct Tmux {
    sock: PathBuf,
    session: &'static str,
}

impl Tmux {
    /// A server for session `session` (started by the test with
    /// `new-session -s <session>`).
    pub fn new(dir: &Path, session: &'static str) -> Self {
        Tmux {
            sock: dir.join("tmux.sock"),
            session,
        }
    }

    pub fn run(&self, args: &[&str]) -> Res<Output> {
        Ok(Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()?)
    }

    pub fn capture(&self) -> Res<String> {
        let out = self.run(&["capture-pane", "-p", "-t", self.session])?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn alive(&self) -> Res<bool> {
        Ok(self
            .run(&["has-session", "-t", self.session])?
            .status
            .success())
    }

    /// Poll the pane until `pred` holds (or time out with the last screen).
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> Res<String> {
        let start = Instant::now();
        loop {
            let screen = self.capture()?;
            if pred(&screen) {
                return Ok(screen);
            }
            if start.elapsed() > Duration::from_secs(20) {
                return Err(format!("timed out waiting for {what}; screen:\n{screen}").into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn wait_gone(&self) -> Res<()> {
        let start = Instant::now();
        while self.alive()? {
            if start.elapsed() > Duration::from_secs(15) {
                let screen = self.capture().unwrap_or_default();
                return Err(format!("the session did not end; screen:\n{screen}").into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Tmux {
    /// Write `script` to `dir/<session>.sh` and run it with `sh` as the
    /// session, in a `cols` x `rows` terminal.
    pub fn start_script(&self, dir: &Path, script: &str, cols: u16, rows: u16) -> Res<()> {
        let path = dir.join(format!("{}.sh", self.session));
        std::fs::write(&path, script)?;
        let cmd = format!("sh {}", quote(&path));
        let (x, y) = (cols.to_string(), rows.to_string());
        let out = self.run(&[
            "new-session",
            "-d",
            "-s",
            self.session,
            "-x",
            &x,
            "-y",
            &y,
            &cmd,
        ])?;
        if !out.status.success() {
            return Err(format!("tmux: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

pub fn have_tmux() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::visible!("skipping: tmux is not installed (apt-get install -y tmux)");
    }
    ok
}

pub fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}
