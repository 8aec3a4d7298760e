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
use common::trace::{mounted, prog_ids, still_loaded, Needs};
use std::path::Path;
use std::process::Command;

fn skip_reason() -> Option<String> {
    let why = common::trace::skip_reason(Needs {
        bpftool: true,
        ..Needs::default()
    });
    if why.is_none() && !have_tmux() {
        return Some("tmux not installed".into());
    }
    why
}

/// `irqlab top -i 200ms --trace` on the real machine in a 120x40 pane,
/// its pid and exit status written to `dir`.
fn start(tmux: &Tmux, dir: &Path) -> Res<()> {
    let bin = Path::new(env!("CARGO_BIN_EXE_irqlab"));
    let script = format!(
        "sh -c 'echo $$ > \"$0\"; exec \"$@\"' {pid} {bin} top -i 200ms --trace 2>{err}\n\
         rc=$?\necho \"rc=$rc\" > {rc}\n",
        pid = quote(&dir.join("pid")),
        bin = quote(bin),
        err = quote(&dir.join("err")),
        rc = quote(&dir.join("rc")),
    );
    tmux.start_script(dir, &script, 120, 40)
}

fn traced_screen(s: &str) -> bool {
    s.contains("µs/s") && s.contains("traced: irq")
}

#[test]
fn traced_view_and_detach_on_q_and_sigint_or_skip() -> Res<()> {
    if !common::host_changes_allowed(
        "top_tui_trace: traced_view_and_detach_on_q_and_sigint_or_skip",
    ) {
        return Ok(());
    }
    if common::trace::skipped(
        "top_tui_trace: traced_view_and_detach_on_q_and_sigint_or_skip",
        skip_reason(),
    ) {
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
        let ids = prog_ids(pid.trim().parse()?);
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
        // quitting waits ~1 s for the detach: it is said, not a silent hang
        let err = std::fs::read_to_string(dir.path().join("err"))?;
        assert!(
            err.contains("irqlab: detaching the tracing programs…"),
            "{how}: {err}"
        );
        assert_eq!(
            still_loaded(&ids),
            Vec::<u32>::new(),
            "{how}: programs left"
        );
        assert_eq!(mounted(), was_mounted, "{how}: tracefs mount state changed");
    }
    Ok(())
}
