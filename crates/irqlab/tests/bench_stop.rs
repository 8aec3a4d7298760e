//! SIGINT or SIGTERM ends a built-in workload's trial under way at once:
//! a bench with an hour-long `--trial-length` stops within seconds (exit
//! 128 + signal) and discards the trial cut short; one during a long
//! `--cooldown` ends the run at once with the summary of its trials. Before, only `--workload command` looked at the
//! signal and the others ran their trial to its end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// `irqlab bench` of variant `tip` on the fake tree `root` into `out`,
/// measuring LOC, no warm-up.
fn bench(root: &Path, out: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
    c.args(["bench", "--root"])
        .arg(root)
        .arg("--out")
        .arg(out)
        .args(["--label", "tip", "--warmup", "0", "--measure", "LOC"]);
    c
}

/// Send `sig` (`-INT`, `-TERM`) to `child` and wait for its end: a run
/// still there 60 s later is killed and fails the test (`what` did not
/// end).
fn interrupt(child: &mut Child, sig: &str, what: &str) -> ExitStatus {
    let sent = Instant::now();
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if sent.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{sig} did not end {what} within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_signal_ends_a_long_trial_of_every_builtin_workload_at_once() {
    for (kind, sig, code) in [
        ("timer", "-INT", 130),
        ("ipi", "-TERM", 143),
        ("tlb", "-INT", 130),
        ("net", "-TERM", 143),
        ("disk", "-INT", 130),
    ] {
        let root = common::bench_tree("6.18.44-fake", "boot-1", &[]);
        let out = root.path().join("out");
        let mut child = bench(root.path(), &out)
            .args(["-w", kind])
            .args(["--trials", "2", "--trial-length", "1h"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // the run prints where its results go once its trials begin
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        while !seen.contains("irqlab: results in") {
            let mut line = String::new();
            if err.read_line(&mut line).unwrap() == 0 {
                panic!("{kind}: bench ended before its trials: {seen}");
            }
            seen.push_str(&line);
        }
        std::thread::sleep(Duration::from_secs(1));
        let status = interrupt(&mut child, sig, &format!("{kind}: a trial of 1 h"));
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
        seen.push_str(&rest);
        assert_eq!(status.code(), Some(code), "{kind}: {seen}");
        assert!(
            seen.contains("trial 1 of tip discarded (cut short)"),
            "{kind}: {seen}"
        );
        // nothing was measured: the run removes what it wrote
        assert!(seen.contains("nothing measured"), "{kind}: {seen}");
        assert!(!out.exists(), "{kind}: {seen}");
    }
}

/// SIGINT during an hour-long `--cooldown` ends the run at once, with the
/// summary of the trials that finished printed and written (before: the
/// signal thread's grace, a trial length + 10 s, ran out first and the
/// process exited 130 with no summary).
#[test]
fn a_signal_during_the_cooldown_ends_the_run_with_its_summary() {
    let root = common::bench_tree("6.18.44-fake", "boot-1", &[]);
    let out = root.path().join("out");
    let printed = root.path().join("stdout.txt");
    let mut child = bench(root.path(), &out)
        .args([
            "--trials",
            "3",
            "--trial-length",
            "50ms",
            "--cooldown",
            "1h",
        ])
        .args(["--", "true"])
        .stdout(std::fs::File::create(&printed).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let trials = out.join("tip/trials.jsonl");
    let began = Instant::now();
    while !std::fs::read_to_string(&trials).is_ok_and(|t| t.lines().count() == 1) {
        assert!(began.elapsed() < Duration::from_secs(30), "no first trial");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = interrupt(&mut child, "-INT", "a cooldown of 1 h");
    let stdout = std::fs::read_to_string(&printed).unwrap();
    assert_eq!(status.code(), Some(130), "{stdout}");
    assert!(
        stdout.contains("interrupted by SIGINT: 1 of 3 trials finished"),
        "{stdout}"
    );
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["interrupted"], "SIGINT");
    assert_eq!(s["finished_trials"], 1);
}
