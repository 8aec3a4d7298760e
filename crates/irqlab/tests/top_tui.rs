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
    tmux.start_script(root, &script, 120, 40)
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

/// `top --batch`'s filter warnings (stderr) for `flags` on `root`.
fn batch_warnings(root: &Path, flags: &[&str]) -> Res<Vec<String>> {
    let out = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["top", "--batch", "-n", "1", "-i", "10ms", "--root"])
        .arg(root)
        .args(flags)
        .output()?;
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8(out.stderr)?;
    Ok(err
        .lines()
        .filter(|l| l.starts_with("irqlab: warning: "))
        .map(String::from)
        .collect())
}

/// Run `top` on the tree `dir` with a filter that selects nothing, on a
/// `cols` x `rows` screen, stderr to a file; quit once `shown` holds.
/// The screen then, and what irqlab said on stderr.
fn run_unmatched(
    dir: &Path,
    cols: u16,
    rows: u16,
    shown: impl Fn(&str) -> bool,
) -> Res<(String, String)> {
    let tmux = Tmux::new(dir, "top");
    let err = dir.join("err");
    let extra = format!("--irq nomatch --cpus 99 2>{}", quote(&err));
    let bin = Path::new(env!("CARGO_BIN_EXE_irqlab"));
    let script = format!(
        "{bin} top --root {root} -i 200ms {extra}\necho \"rc=$?\" > {rc}\n",
        bin = quote(bin),
        root = quote(dir),
        rc = quote(&dir.join("rc")),
    );
    tmux.start_script(dir, &script, cols, rows)?;
    let screen = tmux.wait_for("the filter warnings' screen", shown)?;
    tmux.run(&["send-keys", "-t", "top", "q"])?;
    tmux.wait_gone()?;
    assert_eq!(exit_status(dir)?, "rc=0");
    Ok((screen, std::fs::read_to_string(err)?))
}

/// A filter that selects nothing (`--irq` matching no row, `--cpus`
/// naming no CPU of the tree) gets `top --batch`'s warnings in the
/// footer, without the `irqlab: ` of stderr, and nothing on stderr once
/// they were shown; a screen too small to show them says them on stderr
/// when it is left, as `top --batch` does.
#[test]
fn a_filter_that_selects_nothing_is_warned_about_on_the_screen() -> Res<()> {
    if !have_tmux() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    synth(dir.path())?;
    let want = batch_warnings(dir.path(), &["--irq", "nomatch", "--cpus", "99"])?;
    assert_eq!(
        want,
        [
            "irqlab: warning: --cpus 99 selects no CPU: the sampled files list 16 CPUs (0-15)",
            "irqlab: warning: --irq \"nomatch\" matches no interrupt row",
        ]
    );
    let on_screen: Vec<&str> = want.iter().map(|w| &w["irqlab: ".len()..]).collect();
    let (screen, err) = run_unmatched(dir.path(), 120, 40, |s| {
        on_screen
            .iter()
            .all(|w| s.lines().any(|l| l.trim_end() == *w))
    })?;
    assert!(screen.contains("irqlab top"), "{screen}");
    assert_eq!(err, "", "shown on the screen, not said again");
    // 3 rows: the header, one body line, one footer line for 2 warnings
    let small = tempfile::tempdir()?;
    synth(small.path())?;
    let (screen, err) = run_unmatched(small.path(), 120, 3, |s| s.contains("irqlab top"))?;
    assert_eq!(screen.lines().count(), 3, "{screen}");
    assert!(!screen.contains(on_screen[1]), "{screen}");
    assert_eq!(err, want.join("\n") + "\n");
    Ok(())
}
