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

#[test]
fn a_dearer_b_is_resolved_with_its_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fake(tmp.path(), "a", 100);
    let b = fake(tmp.path(), "b", 150);
    let Some(o) = ab(&[a.to_str().unwrap(), b.to_str().unwrap()]) else {
        return;
    };
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    // 9 lines after the 3 skipped: costs 103 104 100 101 102 103 104 100 101
    assert!(out.contains("median 102.0 us"), "{out}");
    assert!(out.contains("median 152.0 us"), "{out}");
    assert!(out.contains("36 samples"), "{out}");
    assert!(out.contains("B - A: +50.0 us (+49.0 %)"), "{out}");
    assert!(out.contains(": B dearer"), "{out}");
}

#[test]
fn one_binary_with_two_environments() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fake(tmp.path(), "a", 100);
    let a = a.to_str().unwrap();
    let Some(o) = ab(&["--env-b", "FAKE_US=80", a, a]) else {
        return;
    };
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains("B - A: -20.0 us"), "{out}");
    assert!(out.contains(": B cheaper"), "{out}");
    let Some(o) = ab(&[a, a]) else { return };
    let (out, _) = text(&o);
    assert!(out.contains("B - A: +0.0 us"), "{out}");
    assert!(out.contains("no difference resolved"), "{out}");
}

#[test]
fn failures_and_bad_usage_say_what_and_exit_non_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let a = fake(tmp.path(), "a", 100);
    let a = a.to_str().unwrap();
    let Some(o) = ab(&["--env-b", "FAKE_EXIT=3", a, a]) else {
        return;
    };
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("exited with 3") && err.contains("fake failed on purpose"),
        "{err}"
    );

    let Some(o) = ab(&["--env-a", "FAKE_NO_COST=1", a, a]) else {
        return;
    };
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("side A: a process gave no self_cost"), "{err}");

    let missing = tmp.path().join("missing");
    for (args, says) in [
        (vec!["-i", "soon", a, a], "-i 'soon': expected a duration"),
        (vec!["--env-a", "NOEQUALS", a, a], "expected KEY=VALUE"),
        (vec![a, missing.to_str().unwrap()], "not an executable file"),
        (vec!["--skip", "20", a, a], "-n > --skip + 1"),
    ] {
        let Some(o) = ab(&args) else { return };
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
