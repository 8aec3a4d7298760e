//! A resumed bench run never mixes environments: `bench --resume` on
//! another tree, kernel, host name or set of online CPUs than the run's
//! `env.json` is refused (exit 2, naming the field and both values, nothing
//! written), and `compare` keeps a resumed part of another environment
//! (`env-resume-*.json`, written by an older irqlab) apart from the run's
//! first part, with a note; parts of one environment pool as before. A
//! resumed run reports its variants' host changes as a first run does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

const ONLINE: &str = "sys/devices/system/cpu/online";

/// A bench tree of kernel `release` on host `hostA` with CPUs 0-1 online.
fn tree(release: &str) -> tempfile::TempDir {
    let t = common::bench_tree(
        release,
        "boot-1",
        &[("proc/sys/kernel/hostname", "hostA\n")],
    );
    fs::create_dir_all(t.path().join("sys/devices/system/cpu")).unwrap();
    fs::write(t.path().join(ONLINE), "0-1\n").unwrap();
    t
}

/// Keep the first `n` trials of `out/tip` (as a run stopped after them).
fn keep_trials(out: &Path, n: usize) {
    for (name, extra) in [("trials.jsonl", 0), ("trials.csv", 1)] {
        let p = out.join("tip").join(name);
        let text = fs::read_to_string(&p).unwrap();
        let kept: String = text
            .lines()
            .take(n + extra)
            .map(|l| format!("{l}\n"))
            .collect();
        fs::write(&p, kept).unwrap();
    }
}

fn trial_count(out: &Path) -> usize {
    fs::read_to_string(out.join("tip/trials.jsonl"))
        .unwrap()
        .lines()
        .count()
}

fn resume_files(out: &Path) -> usize {
    fs::read_dir(out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("env-resume-"))
        .count()
}

fn resume(out: &Path, root: &Path) -> std::process::Output {
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--resume"])
        .arg(out)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

/// A bench run of `trials` trials of variant `tip` on `root` into `out`.
fn start(root: &Path, out: &Path, trials: &str) {
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--root"])
        .arg(root)
        .arg("--out")
        .arg(out)
        .args(["--label", "tip", "--warmup", "0", "--measure", "LOC"])
        .args(["--trials", trials, "--trial-length", "50ms", "--", "true"])
        .assert()
        .success();
}

#[test]
fn resume_in_another_environment_is_refused_naming_the_field() {
    let a = tree("6.1-a");
    let b = tree("6.8-b");
    fs::write(b.path().join("proc/sys/kernel/hostname"), "hostB\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    start(a.path(), &out, "4");
    keep_trials(&out, 2);
    let canon = |p: &Path| fs::canonicalize(p).unwrap().display().to_string();
    let refused = |root: &Path, want: &[String]| {
        let o = resume(&out, root);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        for w in want {
            assert!(e.contains(w.as_str()), "no {w:?} in {e}");
        }
        assert_eq!(trial_count(&out), 2, "nothing measured");
        assert_eq!(resume_files(&out), 0, "nothing written");
    };
    // another tree: its root, kernel and host name
    refused(
        b.path(),
        &[
            format!(
                "root differs ({} there, {} here)",
                canon(a.path()),
                canon(b.path())
            ),
            "kernel differs (6.1-a there, 6.8-b here)".into(),
            "hostname differs (hostA there, hostB here)".into(),
            "env.json".into(),
        ],
    );
    // the same tree, rebooted into another kernel
    let release = a.path().join("proc/sys/kernel/osrelease");
    fs::write(&release, "6.9-c\n").unwrap();
    refused(
        a.path(),
        &["kernel differs (6.1-a there, 6.9-c here)".into()],
    );
    fs::write(&release, "6.1-a\n").unwrap();
    // a CPU gone offline
    fs::write(a.path().join(ONLINE), "0\n").unwrap();
    refused(
        a.path(),
        &["online_cpus differs (0-1 there, 0 here)".into()],
    );
    fs::write(a.path().join(ONLINE), "0-1\n").unwrap();
    // the environment it started in: resumed
    let o = resume(&out, a.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(trial_count(&out), 4);
    assert_eq!(resume_files(&out), 1);
}

const T0: &str = "2026-12-04T05:00:00Z";
const T1: &str = "2026-12-04T06:00:00Z";
const T2: &str = "2026-12-04T07:00:00Z";

fn env(kernel: &str, boot: &str, started: &str, warnings: &[&str]) -> Value {
    json!({"root": "/w/t", "kernel_release": kernel, "hostname": "h", "cpu_model": "EPYC",
        "online_cpus": "0-1", "boot_id": boot, "started_at": started,
        "command": ["irqlab", "bench", "--root", "/w/t"], "warnings": warnings})
}

/// A run of variants tip and patch written by hand: trials 1-3 in boot
/// b1 (env.json, kernel 6.1), 4-6 in boot b2 (resumed at T1 on
/// `resumed_kernel`), 7-8 in boot b3 (resumed at T2, kernel 6.1 again);
/// the boot-b2 trials of tip are ten times the others.
fn resumed_run(dir: &Path, resumed_kernel: &str) {
    let plan = json!({"argv": ["irqlab", "bench", "--root", "/w/t"],
        "variants": ["tip", "patch"], "workloads": ["ipi"], "trials": 8, "warmup": 0,
        "duration_s": 2.0, "order": "alternate", "seed": 1, "created_at": T0});
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("plan.json"), plan.to_string()).unwrap();
    fs::write(dir.join("env.json"), env("6.1", "b1", T0, &[]).to_string()).unwrap();
    let resumed = env(
        resumed_kernel,
        "b2",
        T1,
        &["load average 3.00 before start"],
    );
    let name = |t: &str| format!("env-resume-{}.json", t.replace(':', ""));
    fs::write(dir.join(name(T1)), resumed.to_string()).unwrap();
    fs::write(dir.join(name(T2)), env("6.1", "b3", T2, &[]).to_string()).unwrap();
    for (variant, scale) in [("tip", 10.0), ("patch", 1.0)] {
        let mut lines = String::new();
        for n in 1..=8u32 {
            let (boot, at, v) = match n {
                1..=3 => ("b1", T0.replace("00:00Z", &format!("00:0{n}Z")), 100.0),
                4..=6 => ("b2", T1.to_string(), 100.0 * scale),
                _ => ("b3", T2.replace("00:00Z", &format!("00:0{n}Z")), 100.0),
            };
            let value = v + f64::from(n) * 0.1;
            let rec = json!({"schema": 2, "variant": variant, "trial": n, "boot_id": boot,
                "started_at": at, "duration_s": 2.0, "metrics": {"round_trips_per_sec":
                {"value": value, "unit": "1/s", "direction": "higher"}}});
            lines.push_str(&format!("{rec}\n"));
        }
        fs::create_dir_all(dir.join(variant)).unwrap();
        fs::write(dir.join(variant).join("trials.jsonl"), lines).unwrap();
    }
}

/// Each variant and its number of values, in the report's order.
fn counts(doc: &Value) -> Vec<(String, u64)> {
    let labels = doc["variants"].as_array().unwrap();
    let m = &doc["metrics"][0];
    labels
        .iter()
        .map(|l| {
            let l = l.as_str().unwrap();
            let n = m["values"][l].as_array().map_or(0, Vec::len);
            (l.to_string(), n as u64)
        })
        .collect()
}

#[test]
fn compare_keeps_a_part_resumed_in_another_environment_apart() {
    let tmp = tempfile::tempdir().unwrap();
    resumed_run(&tmp.path().join("run"), "6.8");
    let doc = common::compare::json(tmp.path(), &["run"]);
    let part = "env-resume-2026-12-04T060000Z";
    assert_eq!(
        counts(&doc),
        vec![
            ("tip@run".to_string(), 5),
            (format!("tip@{part}"), 3),
            ("patch@run".to_string(), 5),
            (format!("patch@{part}"), 3),
        ],
        "{doc}"
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "the part resumed at {T1} (run/{part}.json) ran on another environment than \
             env.json records: kernel (6.1 vs 6.8)"
        )),
        "{notes}"
    );
    assert!(
        notes.contains(&format!(
            "run: bench ({part}.json): load average 3.00 before start"
        )),
        "{notes}"
    );
    // the same environment throughout: one run, as before
    let same = tmp.path().join("same");
    resumed_run(&same, "6.1");
    let doc = common::compare::json(tmp.path(), &["same"]);
    assert_eq!(
        counts(&doc),
        vec![("tip".to_string(), 8), ("patch".to_string(), 8)],
        "{doc}"
    );
    assert!(
        !doc["notes"].to_string().contains("another environment"),
        "{doc}"
    );
}

/// Keep the first `n` trials of both variants of `out` (tip and patch).
fn keep_both(out: &Path, n: usize) {
    keep_trials(out, n);
    let patch = out.join("patch");
    let tip = out.join("tip");
    fs::rename(&tip, out.join("tip.kept")).unwrap();
    fs::rename(&patch, &tip).unwrap();
    keep_trials(out, n);
    fs::rename(&tip, &patch).unwrap();
    fs::rename(out.join("tip.kept"), &tip).unwrap();
}

/// `bench --resume` from `cwd`.
fn resume_in(cwd: &Path, out: &str) -> std::process::Output {
    Command::cargo_bin("irqlab")
        .unwrap()
        .current_dir(cwd)
        .args(["bench", "--resume", out])
        .output()
        .unwrap()
}

/// Set the `root` of `out`'s env.json to `root` (as an older irqlab
/// wrote it: the root as typed).
fn store_root(out: &Path, root: &str) {
    let p = out.join("env.json");
    let mut env: Value = serde_json::from_slice(&fs::read(&p).unwrap()).unwrap();
    env["root"] = json!(root);
    fs::write(&p, env.to_string()).unwrap();
}

/// An env.json whose `root` an older irqlab stored relative (`t`, `./t`)
/// names the same tree when resolved from the directory the run started
/// in: `bench --resume` there continues it, and `compare` pools the
/// resumed part with the first. A relative root that names nothing here
/// is refused, saying so and naming it.
#[test]
fn a_relative_stored_root_is_resolved_before_it_is_compared() {
    let a = tree("6.1-a");
    let work = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(a.path(), work.path().join("t")).unwrap();
    for stored in ["t", "./t"] {
        let out = work.path().join("out");
        let _ = fs::remove_dir_all(&out);
        Command::cargo_bin("irqlab")
            .unwrap()
            .current_dir(work.path())
            .args(["bench", "--root", "t", "--out", "out"])
            .args(["--variant", "tip=-- true", "--variant", "patch=-- true"])
            .args(["--warmup", "0", "--measure", "LOC"])
            .args(["--trials", "4", "--trial-length", "50ms"])
            .assert()
            .success();
        keep_both(&out, 2);
        store_root(&out, stored);
        let o = resume_in(work.path(), "out");
        assert!(
            o.status.success(),
            "{stored}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(trial_count(&out), 4);
        assert_eq!(resume_files(&out), 1);
        let doc = common::compare::json(work.path(), &["out"]);
        assert_eq!(
            counts(&doc),
            vec![("tip".to_string(), 4), ("patch".to_string(), 4)],
            "{stored}: {}",
            doc["notes"]
        );
        assert!(
            !doc["notes"].to_string().contains("another environment"),
            "{doc}"
        );
    }
    // a relative root that names nothing from here
    let out = work.path().join("out");
    keep_both(&out, 2);
    for f in fs::read_dir(&out).unwrap().flatten() {
        if f.file_name().to_string_lossy().starts_with("env-resume-") {
            fs::remove_file(f.path()).unwrap();
        }
    }
    // a relative root that names another tree from here
    let b = tree("6.1-a");
    std::os::unix::fs::symlink(b.path(), work.path().join("u")).unwrap();
    store_root(&out, "u");
    let o = resume_in(work.path(), "out");
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    let canon = |p: &Path| fs::canonicalize(p).unwrap().display().to_string();
    let want = format!(
        "root differs (u, read from this directory as {}, there; {} here)",
        canon(b.path()),
        canon(a.path())
    );
    assert!(e.contains(&want), "no {want:?} in {e}");
    store_root(&out, "gone");
    let o = resume_in(work.path(), "out");
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("records the tree read as the relative root \"gone\""),
        "{e}"
    );
    assert!(e.contains("could not be checked"), "{e}");
    assert_eq!(trial_count(&out), 2, "nothing measured");
    assert_eq!(resume_files(&out), 0, "nothing written");
}

#[test]
fn resume_of_a_finished_run_keeps_the_notes_of_its_summary() {
    let a = tree("6.1-a");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    start(a.path(), &out, "2");
    // the summary of an interrupted write: stale, with the run's notes
    let path = out.join("summary.json");
    let mut summary: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    summary["complete"] = json!(false);
    summary["notes"] = json!(["irq_cpu_pct: IRQ time accounting off"]);
    fs::write(&path, summary.to_string()).unwrap();
    let o = resume(&out, a.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(again["complete"], json!(true), "{again}");
    assert_eq!(
        again["notes"],
        json!(["irq_cpu_pct: IRQ time accounting off"]),
        "{again}"
    );
}

/// A resumed run reports each variant's host changes at the first trial
/// it runs (before, only trial 1 did, which a resumed run does not run).
#[test]
fn a_resumed_run_reports_the_host_changes_of_its_variants() {
    let a = tree("6.1-a");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let reported = "irqlab: variant tip: skipped: no cpufreq on this machine";
    let first = Command::cargo_bin("irqlab")
        .unwrap()
        .args(["bench", "--root"])
        .arg(a.path())
        .arg("--out")
        .arg(&out)
        .args(["--variant", "tip=--governor -- true", "--warmup", "0"])
        .args([
            "--measure",
            "LOC",
            "--trials",
            "3",
            "--trial-length",
            "50ms",
        ])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{e}");
    assert_eq!(e.matches(reported).count(), 1, "{e}");
    keep_trials(&out, 1);
    let o = resume(&out, a.path());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert_eq!(trial_count(&out), 3);
    assert_eq!(e.matches(reported).count(), 1, "{e}");
}

/// `bench --resume` reads the run's env.json and, once every trial is
/// there, its summary.json: a key twice in one object of either is an
/// error naming the file, line and key (as compare says of them), not the
/// last value read as the only one.
#[test]
fn a_key_twice_in_a_resumed_runs_record_is_refused() {
    let a = tree("6.1-a");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    start(a.path(), &out, "2");
    let twice = |name: &str, key: &str| {
        let p = out.join(name);
        let text = fs::read_to_string(&p).unwrap();
        let doubled = text.replacen('{', &format!("{{\"{key}\": 1,"), 1);
        fs::write(&p, doubled).unwrap();
        text
    };
    let summary = twice("summary.json", "complete");
    let o = resume(&out, a.path());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("summary.json: line "), "{e}");
    assert!(
        e.contains(": key \"complete\" is in one object twice"),
        "{e}"
    );
    fs::write(out.join("summary.json"), summary).unwrap();
    keep_trials(&out, 1);
    twice("env.json", "root");
    let o = resume(&out, a.path());
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("env.json: line "), "{e}");
    assert!(e.contains(": key \"root\" is in one object twice"), "{e}");
    assert_eq!(trial_count(&out), 1, "nothing measured");
}
