//! `irqlab replay DIR` (interactive) driven in a real terminal through
//! tmux: the `top` screen over a recording, its status, position and key
//! lines together, and time navigation (step, jump, pause, end), then `?`
//! lists the replay keys and `q` ends it with status 0.
//! The recording is of a fake tree whose LOC counter moves while it is
//! recorded. Skips when tmux is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::tmux::{have_tmux, quote, Res, Tmux};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Record `tree` for ~1.2 s at 100 ms while LOC on CPU 0 moves.
fn record(tree: &Path, out: &Path) -> Res<()> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(tree)
        .args(["-i", "100ms", "--duration", "1200ms", "--host", "h", "-o"])
        .arg(out)
        .stderr(std::process::Stdio::null())
        .spawn()?;
    for i in 0..8u64 {
        std::thread::sleep(Duration::from_millis(120));
        let p = tree.join("proc/interrupts");
        let text = std::fs::read_to_string(&p)?;
        let moved: Vec<String> = text
            .lines()
            .map(|l| match l.trim_start().strip_prefix("LOC:") {
                Some(rest) => {
                    let mut w: Vec<String> = rest.split_whitespace().map(String::from).collect();
                    let v: u64 = w[0].parse().unwrap();
                    w[0] = (v + 1000 * (i + 1)).to_string();
                    format!("LOC: {}", w.join(" "))
                }
                None => l.to_string(),
            })
            .collect();
        // in place, never empty: the recorder keeps the file open
        let body = moved.join("\n") + "\n";
        let mut f = std::fs::OpenOptions::new().write(true).open(&p)?;
        std::io::Write::write_all(&mut f, body.as_bytes())?;
        f.set_len(body.len() as u64)?;
    }
    assert!(child.wait()?.success(), "record failed");
    Ok(())
}

fn start(tmux: &Tmux, dir: &Path, rec: &Path) -> Res<()> {
    let bin = Path::new(env!("CARGO_BIN_EXE_irqlab"));
    let script = format!(
        "{bin} replay {rec}\necho \"rc=$?\" > {rc}\n",
        bin = quote(bin),
        rec = quote(rec),
        rc = quote(&dir.join("rc")),
    );
    tmux.start_script(dir, &script, 160, 40)
}

/// `sample K/N` of the position line.
fn position(screen: &str) -> Option<(usize, usize)> {
    let rest = screen.split("│ sample ").nth(1)?;
    let (k, n) = rest.split_once('/')?;
    let n: String = n.chars().take_while(char::is_ascii_digit).collect();
    Some((k.trim().parse().ok()?, n.parse().ok()?))
}

/// RATE/s of the LOC row on the screen.
fn loc_rate(screen: &str) -> Option<f64> {
    let line = screen.lines().find(|l| l.starts_with("LOC "))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn replay_screen_steps_jumps_pauses_and_quits() -> Res<()> {
    if !have_tmux() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let tree = dir.path().join("tree");
    let st = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["synth", "--ncpus", "4", "--irqs", "8", "--out"])
        .arg(&tree)
        .output()?;
    assert!(st.status.success());
    let rec = dir.path().join("rec");
    record(&tree, &rec)?;
    let tmux = Tmux::new(dir.path(), "replay");
    start(&tmux, dir.path(), &rec)?;
    // the status line, the position line and the key help all at once
    let screen = tmux.wait_for("the replay table", |s| {
        s.contains("RATE/s")
            && s.contains("LOC")
            && position(s).is_some()
            && s.contains(" every ")
            && s.contains("+ - speed")
    })?;
    let (_, n) = position(&screen).unwrap();
    assert!(n >= 5, "{n} frames: {screen}");
    // a step pauses wherever playback is (it may already be at the end);
    // a jump keeps the state: 10 %, then one step forward and back
    tmux.run(&["send-keys", "-t", "replay", ","])?;
    tmux.wait_for("a pause", |s| s.contains("PAUSED"))?;
    tmux.run(&["send-keys", "-t", "replay", "1"])?;
    let k = (n / 10).max(1);
    tmux.wait_for("a jump to 10 %", |s| {
        position(s) == Some((k, n)) && s.contains("PAUSED")
    })?;
    tmux.run(&["send-keys", "-t", "replay", "."])?;
    tmux.wait_for("one step", |s| {
        position(s) == Some((k + 1, n)) && s.contains("PAUSED")
    })?;
    tmux.run(&["send-keys", "-t", "replay", ","])?;
    tmux.wait_for("one step back", |s| position(s) == Some((k, n)))?;
    // stepping through, the recorded LOC movement shows as a rate
    tmux.run(&["send-keys", "-t", "replay", "0"])?;
    let mut screen = tmux.wait_for("the start", |s| position(s) == Some((1, n)))?;
    let mut rates = vec![loc_rate(&screen)];
    for i in 2..=n {
        tmux.run(&["send-keys", "-t", "replay", "."])?;
        screen = tmux.wait_for("a step", |s| position(s) == Some((i, n)))?;
        rates.push(loc_rate(&screen));
    }
    assert!(
        rates.iter().any(|r| r.is_some_and(|r| r > 0.0)),
        "LOC moved while recording, yet rates {rates:?}"
    );
    // a minute forward is past the end of a one-second recording; space
    // at the end plays again from the start, to the end
    tmux.run(&["send-keys", "-t", "replay", ">"])?;
    tmux.wait_for("the end", |s| {
        position(s) == Some((n, n)) && s.contains("END")
    })?;
    // at 1/8 speed the second playback lasts ~10 s: seen while it plays
    tmux.run(&["send-keys", "-t", "replay", "-", "-", "-"])?;
    tmux.wait_for("1/8 speed", |s| s.contains("x0.125"))?;
    tmux.run(&["send-keys", "-t", "replay", "Space"])?;
    tmux.wait_for("playing again", |s| {
        position(s).is_some_and(|(k, _)| k < n) && s.contains("PLAYING")
    })?;
    tmux.run(&["send-keys", "-t", "replay", ">"])?;
    tmux.wait_for("the end again", |s| {
        position(s) == Some((n, n)) && s.contains("END")
    })?;
    // the help lists the replay keys; q quits from it
    tmux.run(&["send-keys", "-t", "replay", "?"])?;
    tmux.wait_for("the replay keys in the help", |s| {
        s.contains("┌ help") && s.contains("one sample forward / back")
    })?;
    tmux.run(&["send-keys", "-t", "replay", "q"])?;
    tmux.wait_gone()?;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rc"))?.trim(),
        "rc=0"
    );
    Ok(())
}

#[test]
fn replay_without_a_terminal_says_to_use_batch() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let st = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["synth", "--ncpus", "2", "--irqs", "2", "--out"])
        .arg(&tree)
        .output()
        .unwrap();
    assert!(st.status.success());
    let rec = dir.path().join("rec");
    let st = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args(["-i", "50ms", "--duration", "200ms", "-o"])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(st.status.success());
    let out = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("replay")
        .arg(&rec)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs a terminal") && err.contains("--batch"),
        "{err}"
    );
}

/// A recording of a 2-CPU synth tree: 50 ms samples for 200 ms.
fn small_recording(dir: &Path) -> Res<std::path::PathBuf> {
    let tree = dir.join("tree");
    let st = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["synth", "--ncpus", "2", "--irqs", "2", "--out"])
        .arg(&tree)
        .output()?;
    assert!(st.status.success());
    let rec = dir.join("rec");
    let st = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args(["-i", "50ms", "--duration", "200ms", "-o"])
        .arg(&rec)
        .output()?;
    assert!(st.status.success(), "{st:?}");
    Ok(rec)
}

/// Replay `rec` with `flags` (shell-quoted) on a `cols` x `rows` screen,
/// stderr to a file; quit once `shown` holds. The screen then, and what
/// irqlab said on stderr.
fn replay_until(
    dir: &Path,
    rec: &Path,
    flags: &str,
    (cols, rows): (u16, u16),
    shown: impl Fn(&str) -> bool,
) -> Res<(String, String)> {
    let tmux = Tmux::new(dir, "replay");
    let err = dir.join("err");
    let script = format!(
        "{bin} replay {rec} {flags} 2>{err}\necho \"rc=$?\" > {rc}\n",
        bin = quote(Path::new(env!("CARGO_BIN_EXE_irqlab"))),
        rec = quote(rec),
        err = quote(&err),
        rc = quote(&dir.join("rc")),
    );
    tmux.start_script(dir, &script, cols, rows)?;
    let screen = tmux.wait_for("the replay screen", shown)?;
    tmux.run(&["send-keys", "-t", "replay", "q"])?;
    tmux.wait_gone()?;
    assert_eq!(std::fs::read_to_string(dir.join("rc"))?.trim(), "rc=0");
    Ok((screen, std::fs::read_to_string(err)?))
}

/// A filter that selects nothing in the recording's first sample gets
/// `replay --batch`'s warnings in the footer (without stderr's
/// `irqlab: `), and nothing on stderr once they were shown; a screen too
/// small to show them says them on stderr when it is left.
#[test]
fn a_filter_that_selects_nothing_is_warned_about_on_the_replay_screen() -> Res<()> {
    if !have_tmux() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let rec = small_recording(dir.path())?;
    let flags = ["--irq", "nomatch", "--cpus", "7"];
    let batch = Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .arg("replay")
        .arg(&rec)
        .arg("--batch")
        .args(flags)
        .output()?;
    assert!(batch.status.success(), "{batch:?}");
    let want: Vec<String> = String::from_utf8(batch.stderr)?
        .lines()
        .filter(|l| l.starts_with("irqlab: warning: "))
        .map(String::from)
        .collect();
    assert_eq!(
        want,
        [
            "irqlab: warning: --cpus 7 selects no CPU of the recording: it holds 2 CPUs (0-1)",
            "irqlab: warning: --irq \"nomatch\" matches no interrupt row",
        ]
    );
    let on_screen: Vec<&str> = want.iter().map(|w| &w["irqlab: ".len()..]).collect();
    let big = tempfile::tempdir()?;
    let (screen, err) = replay_until(big.path(), &rec, &flags.join(" "), (160, 40), |s| {
        on_screen
            .iter()
            .all(|w| s.lines().any(|l| l.trim_end() == *w))
    })?;
    assert!(screen.contains("irqlab top"), "{screen}");
    assert!(!err.contains("warning"), "shown, not said again: {err}");
    let small = tempfile::tempdir()?;
    let (screen, err) = replay_until(small.path(), &rec, &flags.join(" "), (160, 3), |s| {
        s.contains("irqlab top")
    })?;
    assert_eq!(screen.lines().count(), 3, "{screen}");
    assert!(!screen.contains(on_screen[1]), "{screen}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(said, want, "{err}");
    Ok(())
}
