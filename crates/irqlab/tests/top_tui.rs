//! `irqlab top` (interactive) driven in a real terminal through tmux: the
//! screen shows the header and IRQ rows, keys work, `q` and SIGTERM end the
//! process and its session. Each test uses its own tmux server (`-S` socket in its temp dir),
//! killed at the end even on failure. Skips when tmux is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::tmux::{have_tmux, quote, Res, Tmux};
use std::path::Path;
use std::process::Command;

fn synth(dir: &Path) -> Res<()> {
    common::synth_into(&common::spec(16, 64), dir);
    Ok(())
}

/// Start `irqlab top` on a synth tree in a 120x40 session, through a
/// script that records irqlab's pid (`sh -c` then `exec`, so the pid is
/// irqlab's) and exit status. With `hold`, the shell then prints the tty
/// mode and stays, so the restored screen can be inspected.
fn start(tmux: &Tmux, root: &Path, hold: bool) -> Res<()> {
    start_with(tmux, root, hold, "")
}

/// [`start`] with extra flags (already shell-quoted) after `top`.
fn start_with(tmux: &Tmux, root: &Path, hold: bool, extra: &str) -> Res<()> {
    let bin = Path::new(env!("CARGO_BIN_EXE_irqlab"));
    let tail = if hold {
        "echo \"DONE rc=$rc $(stty -a | grep -o -- '-*icanon')\"; sleep 60\n"
    } else {
        ""
    };
    let script = format!(
        "sh -c 'echo $$ > \"$0\"; exec \"$@\"' {pid} {bin} top --root {root} -i 200ms {extra}\n\
         rc=$?\necho \"rc=$rc\" > {rc}\n{tail}",
        pid = quote(&root.join("pid")),
        bin = quote(bin),
        root = quote(root),
        rc = quote(&root.join("rc")),
    );
    let path = root.join("top.sh");
    std::fs::write(&path, script)?;
    let cmd = format!("sh {}", quote(&path));
    let out = tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "top",
        "-x",
        "120",
        "-y",
        "40",
        &cmd,
    ])?;
    if !out.status.success() {
        return Err(format!("tmux: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

fn exit_status(root: &Path) -> Res<String> {
    Ok(std::fs::read_to_string(root.join("rc"))?.trim().to_string())
}

fn has_rows(screen: &str) -> bool {
    screen.contains("RATE/s")
        && screen.contains("DEVICE")
        && screen
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains("IO-APIC"))
            .count()
            >= 3
}

#[test]
fn top_shows_irqs_reacts_to_keys_and_quits_on_q() -> Res<()> {
    if !have_tmux() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    synth(dir.path())?;
    let tmux = Tmux::new(dir.path(), "top");
    start(&tmux, dir.path(), false)?;
    let screen = tmux.wait_for("the IRQ table", has_rows)?;
    assert!(screen.contains("irqlab top"), "{screen}");
    assert!(screen.contains("every 200ms"), "{screen}");
    assert!(screen.contains("16 CPUs"), "{screen}");
    for line in screen.lines() {
        assert!(line.chars().count() <= 120, "too wide: {line:?}");
    }
    tmux.run(&["send-keys", "-t", "top", "Tab"])?;
    tmux.wait_for("the softirq panel", |s| {
        s.contains("SOFTIRQ") && s.contains("NET_RX")
    })?;
    tmux.run(&["send-keys", "-t", "top", "q"])?;
    tmux.wait_gone()?;
    assert_eq!(exit_status(dir.path())?, "rc=0");
    Ok(())
}

#[test]
fn top_restores_the_terminal_on_sigterm() -> Res<()> {
    if !have_tmux() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    synth(dir.path())?;
    let tmux = Tmux::new(dir.path(), "top");
    start(&tmux, dir.path(), true)?;
    tmux.wait_for("the IRQ table", has_rows)?;
    let pid = std::fs::read_to_string(dir.path().join("pid"))?;
    let st = Command::new("kill").args(["-TERM", pid.trim()]).status()?;
    assert!(st.success());
    // rc=143: the signal flag path quit normally and exits 128 + SIGTERM,
    // as bench does; "icanon" (not "-icanon"): raw mode is off; no table:
    // the alternate screen was left.
    let screen = tmux.wait_for("the shell after irqlab", |s| s.contains("DONE rc="))?;
    assert!(screen.contains("DONE rc=143 icanon"), "{screen}");
    assert!(!screen.contains("RATE/s"), "{screen}");
    Ok(())
}

#[test]
fn interactive_top_honours_strategy_per_cpu_count_and_shows_self_cost() -> Res<()> {
    if !have_tmux() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    synth(dir.path())?;
    let tmux = Tmux::new(dir.path(), "top");
    start_with(
        &tmux,
        dir.path(),
        false,
        "--strategy per-cpu-count --irq '^(9|12)$' -v",
    )?;
    let screen = tmux.wait_for("the strategy and self-cost", |s| {
        s.contains("RATE/s")
            && s.lines().any(|l| l.starts_with("12 "))
            && s.contains("strategy per_cpu_count")
            && s.contains("self-cost")
    })?;
    assert!(
        screen.contains("forced (IRQs 9,12)"),
        "-v explains: {screen}"
    );
    assert!(screen.contains("µs CPU/sample"), "{screen}");
    assert!(screen.contains('→'), "affinity is shown: {screen}");
    tmux.run(&["send-keys", "-t", "top", "q"])?;
    tmux.wait_gone()?;
    assert_eq!(exit_status(dir.path())?, "rc=0");
    Ok(())
}
