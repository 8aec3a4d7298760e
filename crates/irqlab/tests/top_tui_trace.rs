//! Live (feature `trace`, root, tracefs directory, bpftool, tmux):
//! interactive `irqlab top --trace` on the running kernel shows the traced
//! columns and footer line, and on `q` and on SIGINT leaves no BPF program
//! loaded and the tracefs mount state as it found it (the sampler thread
//! holding the session is joined before the exit). Skips visibly
//! otherwise (test name ends in `_or_skip`).
#![cfg(feature = "trace")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::tmux::{have_tmux, quote, Res, Tmux};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const TRACING: &str = "/sys/kernel/tracing";

fn skip_reason() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root".into());
    }
    if !Path::new(TRACING).is_dir() {
        return Some(format!("{TRACING} does not exist"));
    }
    let bpftool = Command::new("bpftool").arg("version").output();
    if !bpftool.is_ok_and(|o| o.status.success()) {
        return Some("bpftool not installed (tools/install-trace-deps.sh)".into());
    }
    if !have_tmux() {
        return Some("tmux not installed".into());
    }
    None
}

fn mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(TRACING))
}

fn prog_ids(pid: &str) -> Vec<u32> {
    let mut ids = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            if let Some(id) = l.strip_prefix("prog_id:") {
                ids.push(id.trim().parse().unwrap());
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn still_loaded(ids: &[u32]) -> Vec<u32> {
    let loaded = |id: u32| {
        Command::new("bpftool")
            .args(["prog", "show", "id", &id.to_string()])
            .output()
            .unwrap()
            .status
            .success()
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<u32> = ids.iter().copied().filter(|&id| loaded(id)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `irqlab top -i 200ms --trace` on the real machine in a 120x40 pane,
/// its pid and exit status written to `dir`.
fn start(tmux: &Tmux, dir: &Path) -> Res<()> {
    let bin = Path::new(env!("CARGO_BIN_EXE_irqlab"));
    let script = format!(
        "sh -c 'echo $$ > \"$0\"; exec \"$@\"' {pid} {bin} top -i 200ms --trace\n\
         rc=$?\necho \"rc=$rc\" > {rc}\n",
        pid = quote(&dir.join("pid")),
        bin = quote(bin),
        rc = quote(&dir.join("rc")),
    );
    tmux.start_script(dir, &script, 120, 40)
}

fn traced_screen(s: &str) -> bool {
    s.contains("µs/s") && s.contains("traced: irq")
}

#[test]
fn traced_view_and_detach_on_q_and_sigint_or_skip() -> Res<()> {
    if let Some(why) = skip_reason() {
        eprintln!("top_tui_trace: traced_view_and_detach_on_q_and_sigint_or_skip: SKIPPED: {why}");
        return Ok(());
    }
    let was_mounted = mounted();
    for (how, rc) in [("q", "rc=0"), ("SIGINT", "rc=130")] {
        let dir = tempfile::tempdir()?;
        let tmux = Tmux::new(dir.path(), "top");
        start(&tmux, dir.path())?;
        let screen = tmux.wait_for("the traced view", traced_screen)?;
        assert!(screen.contains("LOC"), "{screen}");
        let pid = std::fs::read_to_string(dir.path().join("pid"))?;
        let ids = prog_ids(pid.trim());
        assert!(ids.len() >= 5, "{how}: programs in fdinfo: {ids:?}");
        tmux.run(&["send-keys", "-t", "top", "Tab", "Tab"])?;
        tmux.wait_for("the traced CPU time", |s| s.contains("tIRQ%"))?;
        if how == "q" {
            tmux.run(&["send-keys", "-t", "top", "q"])?;
        } else {
            let st = Command::new("kill").args(["-INT", pid.trim()]).status()?;
            assert!(st.success());
        }
        tmux.wait_gone()?;
        let status = std::fs::read_to_string(dir.path().join("rc"))?;
        assert_eq!(status.trim(), rc, "{how}");
        assert_eq!(
            still_loaded(&ids),
            Vec::<u32>::new(),
            "{how}: programs left"
        );
        assert_eq!(mounted(), was_mounted, "{how}: tracefs mount state changed");
    }
    Ok(())
}
