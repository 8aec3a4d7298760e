//! A stderr that cannot take irqlab's messages (a closed pipe, as in
//! `irqlab probe 2>&1 | head -1`, or `/dev/full`) never turns a run into a
//! panic: the messages are dropped and the exit status is the run's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};

mod common;

/// Runs irqlab with stderr a pipe whose reading end is already closed, or
/// `/dev/full`, and stdout discarded.
fn with_stderr(args: &[&str], full: bool) -> std::process::Output {
    let stderr = common::failing_stdio(full);
    Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(stderr)
        .output()
        .unwrap()
}

#[test]
fn a_failing_stderr_keeps_each_runs_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    common::synth_into(&common::spec(4, 6), &root);
    let root = root.to_str().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    // (arguments, exit status): an error, a warning on a run that
    // succeeds, a usage error
    let cases: [(&[&str], i32); 3] = [
        (&["probe", "--root", missing], 1),
        (&["show", "--root", root, "--cpus", "99"], 0),
        (&["show", "--no-such-flag"], 2),
    ];
    let full = std::path::Path::new("/dev/full").exists();
    if !full {
        crate::visible!("SKIP: no /dev/full; only the closed-pipe stderr was checked");
    }
    for (args, code) in cases {
        for f in [false, true] {
            if f && !full {
                continue;
            }
            let out = with_stderr(args, f);
            assert_eq!(out.status.code(), Some(code), "{args:?}, /dev/full {f}");
        }
    }
}
