//! tools/sample-cost-ab.py against fake samplers (shell scripts that print
//! json lines with a known `self_cost.cpu_ns`): the medians, the verdict
//! and its interval, each side's environment, stdout a file (never a
//! pipe), and the errors. Needs python3 (skipped visibly without).

#![allow(clippy::unwrap_used)]

mod common;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fake `irqlab`: `-n N` json lines whose cost is `$FAKE_US` µs plus
/// 0..4 µs in turn, or 1 ns when stdout is not a regular file; exits
/// `$FAKE_EXIT` (after saying so on stderr) when that is set.
const FAKE: &str = r#"#!/bin/sh
if [ -n "$FAKE_EXIT" ]; then echo "fake failed on purpose" >&2; exit "$FAKE_EXIT"; fi
n=0
while [ $# -gt 0 ]; do [ "$1" = -n ] && n=$2; shift; done
i=0
while [ $i -lt "$n" ]; do
  if [ -f /dev/stdout ]; then ns=$(( (${FAKE_US:-100} + i % 5) * 1000 )); else ns=1; fi
  [ -n "$FAKE_NO_COST" ] && echo '{"self_cost":null}' || echo "{\"self_cost\":{\"cpu_ns\":$ns}}"
  i=$((i + 1))
done
"#;

fn fake(dir: &Path, name: &str, us: u32) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        FAKE.replace("${FAKE_US:-100}", &format!("${{FAKE_US:-{us}}}")),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The tool run with `args` (fast: 100 ms apart, two repetitions of 2
/// processes a side, 12 lines each), or `None` without python3.
fn ab(args: &[&str]) -> Option<Output> {
    if Command::new("python3").arg("-V").output().is_err() {
        visible!("sample_cost_ab: SKIPPED: no python3");
        return None;
    }
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/sample-cost-ab.py");
    let out = Command::new("python3")
        .arg(tool)
        .args(["-i", "100ms", "--procs", "2", "--reps", "2", "-n", "12"])
        .args(args)
        .output()
        .unwrap();
    Some(out)
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The report of a run of the tool with `args` that must succeed, or
/// `None` without python3.
fn report(args: &[&str]) -> Option<String> {
    let o = ab(args)?;
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    Some(out)
}

fn says_all(out: &str, lines: &[&str]) {
    for says in lines {
        assert!(out.contains(says), "no {says:?} in:\n{out}");
    }
}

#[test]
fn a_dearer_b_is_resolved_with_its_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fake(tmp.path(), "a", 100);
    let b = fake(tmp.path(), "b", 150);
    let Some(out) = report(&[a.to_str().unwrap(), b.to_str().unwrap()]) else {
        return;
    };
    // 9 lines after the 3 skipped: costs 103 104 100 101 102 103 104 100 101
    says_all(
        &out,
        &[
            "median 102.0 us",
            "median 152.0 us",
            "36 samples",
            "B - A: +50.0 us (+49.0 %)",
            ": B dearer",
        ],
    );
}

#[test]
fn one_binary_with_two_environments() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fake(tmp.path(), "a", 100);
    let a = a.to_str().unwrap();
    let Some(out) = report(&["--env-b", "FAKE_US=80", a, a]) else {
        return;
    };
    says_all(&out, &["B - A: -20.0 us", ": B cheaper"]);
    let Some(out) = report(&[a, a]) else { return };
    says_all(&out, &["B - A: +0.0 us", "no difference resolved"]);
}

#[test]
fn failures_and_bad_usage_say_what_and_exit_non_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fake(tmp.path(), "a", 100);
    let a = a.to_str().unwrap();
    let missing = tmp.path().join("missing");
    for (args, code, says) in [
        (
            vec!["--env-b", "FAKE_EXIT=3", a, a],
            1,
            "exited with 3:\nfake failed on purpose",
        ),
        (
            vec!["--env-a", "FAKE_NO_COST=1", a, a],
            2,
            "side A: a process gave no self_cost",
        ),
        (
            vec!["-i", "soon", a, a],
            2,
            "-i 'soon': expected a duration",
        ),
        (vec!["--env-a", "NOEQUALS", a, a], 2, "expected KEY=VALUE"),
        (
            vec![a, missing.to_str().unwrap()],
            2,
            "not an executable file",
        ),
        (vec!["--skip", "20", a, a], 2, "-n > --skip + 1"),
    ] {
        let Some(o) = ab(&args) else { return };
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
