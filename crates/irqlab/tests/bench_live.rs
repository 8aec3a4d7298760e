//! `irqlab bench` on the live machine while CPU1 goes offline: the run
//! goes on, the disturbed trial is kept and marked (`gap: cpu_offline`),
//! and CPU1 is always brought back (a Drop guard, also on failure or
//! panic). Runs only with the host-change opt-in
//! (`common::host_changes_allowed`, set by .ci/run) as root with
//! `/sys/devices/system/cpu/cpu1/online` writable; otherwise it says why on the uncaptured stderr (visible in
//! plain `cargo test` output). Hotplug tests of this binary are serialised
//! by `HOTPLUG` (the pattern of tests/top_live.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const CPU1_ONLINE: &str = "/sys/devices/system/cpu/cpu1/online";
static HOTPLUG: Mutex<()> = Mutex::new(());

fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIP {test}: {why}");
}

/// Brings cpu1 back online when dropped (test end, failure or panic).
struct Online;

impl Drop for Online {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::read_to_string(CPU1_ONLINE).is_ok_and(|s| s.trim() == "1") {
                return;
            }
            let _ = std::fs::write(CPU1_ONLINE, "1");
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = writeln!(
            std::io::stderr(),
            "warning: could not bring cpu1 back online"
        );
    }
}

fn hotplug_skip_reason() -> Option<String> {
    match std::fs::read_to_string(CPU1_ONLINE) {
        Err(e) => return Some(format!("{CPU1_ONLINE}: {e}")),
        Ok(s) if s.trim() != "1" => return Some("cpu1 is not online".into()),
        Ok(_) => {}
    }
    match std::fs::OpenOptions::new().write(true).open(CPU1_ONLINE) {
        Err(e) => Some(format!("{CPU1_ONLINE} not writable (needs root): {e}")),
        Ok(_) => None,
    }
}

fn trials(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn timer_bench_marks_trial_cpu_offline_and_continues_or_skip() {
    let test = "timer_bench_marks_trial_cpu_offline_and_continues_or_skip";
    if !common::host_changes_allowed(&format!("bench_live: {test}")) {
        return;
    }
    let _serial = HOTPLUG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = hotplug_skip_reason() {
        return skip(test, &why);
    }
    if common::host_lock_held(&format!("bench_live: {test}")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let online = Online;
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args([
            "bench",
            "-w",
            "timer",
            "--workload-cpus",
            "0-1",
            "--warmup",
            "0",
        ])
        .args(["--trials", "6", "--trial-length", "500ms", "--label", "tip"])
        .arg("--journal")
        .arg(dir.path().join("journal.jsonl"))
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let file = out.join("tip/trials.jsonl");
    let t0 = Instant::now();
    while trials(&file).is_empty() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Offline for longer than one trial: at least one trial overlaps it.
    std::fs::write(CPU1_ONLINE, "0").unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    drop(online);
    let res = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(res.status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(CPU1_ONLINE).unwrap().trim(), "1");
    let t = trials(&file);
    let nums: Vec<u64> = t.iter().map(|x| x["trial"].as_u64().unwrap()).collect();
    assert_eq!(nums, [1, 2, 3, 4, 5, 6], "every trial kept: {stderr}");
    let gaps: Vec<&serde_json::Value> = t.iter().filter(|x| x["gap"] == "cpu_offline").collect();
    assert!(!gaps.is_empty(), "no trial marked cpu_offline: {stderr}");
    for g in gaps {
        assert!(g["metrics"].get("wakeups_per_sec").is_none(), "{g}");
        let notes = g["notes"].to_string();
        assert!(notes.contains("cpu_offline"), "{notes}");
    }
    assert!(stderr.contains("(gap: cpu_offline)"), "{stderr}");
}
