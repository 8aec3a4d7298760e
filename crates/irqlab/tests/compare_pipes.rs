//! `irqlab compare` inputs that are pipes: bash's process substitution
//! (`<(…)`, a `/dev/fd/N` pipe) and named FIFOs. A pipe can be read only
//! once, so every input is read once; a FIFO with a writer is read like a
//! file, whatever its format. Each run has a deadline: an input opened a
//! second time, or a FIFO opened before the other inputs were checked,
//! would block for ever.

#![allow(clippy::unwrap_used)]

mod common;

use common::compare::{numbers, spread};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// How long a run may take before it counts as blocked.
const DEADLINE: Duration = Duration::from_secs(20);

/// Run `cmd` in `dir`; `None` (the child killed) when it is still running
/// after [`DEADLINE`].
fn run_by_deadline(mut cmd: Command, dir: &Path) -> Option<Output> {
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let done = common::wait_until(DEADLINE, || child.try_wait().unwrap().is_some());
    if !done {
        child.kill().unwrap();
        child.wait().unwrap();
        return None;
    }
    Some(child.wait_with_output().unwrap())
}

/// `irqlab compare ARGS` in `dir`, by the deadline.
fn compare(dir: &Path, args: &[&str]) -> Option<Output> {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
    cmd.arg("compare").args(args);
    run_by_deadline(cmd, dir)
}

/// A FIFO at `dir/name`.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    p
}

/// A writer of `text` into the FIFO `p`, once: it waits for a reader to
/// open the FIFO, writes, and closes (a second open finds no writer).
fn write_once(p: &Path, text: String) -> std::thread::JoinHandle<()> {
    let p = p.to_path_buf();
    std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        // the reader may be gone after an error: not this thread's failure
        let _ = f.write_all(text.as_bytes());
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// One trial line of a bench `trials.jsonl`.
fn trial(variant: &str, n: usize, v: f64) -> String {
    format!(
        r#"{{"variant":"{variant}","trial":{n},"boot_id":"b","started_at":"t","duration_s":1.0,"metrics":{{"irq_res_per_sec":{{"value":{v},"unit":"1/s","direction":"none"}}}}}}"#
    )
}

/// Eight trials of `variant` around `centre`, one a line.
fn trials(variant: &str, centre: f64) -> String {
    let lines: Vec<String> = spread(centre, 1.0, 8)
        .iter()
        .enumerate()
        .map(|(i, v)| trial(variant, i, *v) + "\n")
        .collect();
    lines.concat()
}

/// `compare <(cat a.txt) <(cat b.txt)`: two `/dev/fd/N` pipes, each read
/// once, compared as two variants.
#[test]
fn process_substitution_pipes_are_compared() {
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        visible!("process_substitution_pipes_are_compared: SKIPPED: no bash");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 10));
    numbers(&d.join("b.txt"), spread(120.0, 1.0, 10));
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(r#""$0" compare --format json --resamples 500 <(cat a.txt) <(cat b.txt)"#)
        .arg(bin);
    let out = run_by_deadline(cmd, d).expect("compare of two pipes ended");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["variants"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(doc["metrics"][0]["name"], "value", "{doc}");
}

/// A named FIFO of bench trials (`.jsonl`) with a writer that writes once
/// is read once: compared with a file, not blocked on a second open.
#[test]
fn a_fifo_of_trials_with_a_writer_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("after.jsonl"), trials("after", 120.0)).unwrap();
    for torn in [false, true] {
        let p = fifo(d, &format!("before-{torn}.jsonl"));
        let mut text = trials("before", 100.0);
        if torn {
            // a run killed mid-write: the last line cut short
            text.push_str(r#"{"variant":"before","tri"#);
        }
        let writer = write_once(&p, text);
        let name = p.file_name().unwrap().to_str().unwrap();
        let first = format!("./{name}");
        let args = [first.as_str(), "./after.jsonl", "--format", "csv"];
        let out = compare(d, &args).expect("compare read the FIFO once");
        writer.join().unwrap();
        assert!(out.status.success(), "torn {torn}: {}", stderr(&out));
        let csv = String::from_utf8_lossy(&out.stdout);
        assert!(csv.contains("irq_res_per_sec"), "{csv}");
        let note = format!("./{name}:9: truncated trial skipped");
        assert_eq!(stderr(&out).contains(&note), torn, "{}", stderr(&out));
    }
}

/// `compare FIFO missing.txt` with nothing writing to the FIFO: the
/// missing input is an error at once, as diff gives it, not after a
/// wait for a writer that may never come.
#[test]
fn a_missing_input_is_named_before_a_fifo_is_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fifo(d, "quiet");
    numbers(&d.join("a.txt"), spread(100.0, 1.0, 10));
    for args in [["quiet", "missing.txt"], ["a.txt", "missing.txt"]] {
        let out = compare(d, &args).expect("compare did not open the FIFO first");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with("irqlab: error: missing.txt: "), "{err}");
        assert!(err.contains("No such file or directory"), "{err}");
    }
}
