//! `irqlab top --batch` against the live kernel: JSON Lines from real
//! `/proc`, and a CPU hotplug run (cpu1 offline for ~1 s, always brought
//! back by a drop guard, also when the test fails; only with the
//! host-change opt-in, `common::host_changes_allowed`). Skips with a
//! reason when the files or root rights are missing.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;

use serde_json::Value;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// Live tests share one CPU: never run them at the same time.
static LIVE: Mutex<()> = Mutex::new(());

const CPU1_ONLINE: &str = "/sys/devices/system/cpu/cpu1/online";

fn top(args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("irqlab"));
    c.args(["top", "--batch", "--format", "json"]).args(args);
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("invalid JSON ({e}): {l}")))
        .collect()
}

fn loc_row(v: &Value) -> Option<&Value> {
    v["interrupts"]["rows"]
        .as_array()?
        .iter()
        .find(|r| r["label"] == "LOC")
}

/// Per-CPU LOC counts straight from `/proc/interrupts` (the test's own
/// baseline, read without irqlab).
fn loc_counts() -> Vec<u64> {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("LOC:"))
        .unwrap();
    line.split_whitespace()
        .skip(1)
        .map_while(|w| w.parse().ok())
        .collect()
}

/// Checks what load cannot fake: every rate is an integer count over the
/// line's own interval, a row's `total` is the sum of those counts, and
/// top never reports more timer interrupts than the kernel's own counters
/// advanced around the run. An idle tickless CPU may see ~1 tick/s, so no
/// minimum rate is asserted per CPU; only that some ticks were seen.
#[test]
fn ten_json_lines_with_local_timer_rates() {
    let _g = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let Ok(text) = std::fs::read_to_string("/proc/interrupts") else {
        crate::visible!("skipping: /proc/interrupts not readable");
        return;
    };
    if !text.contains("LOC:") {
        crate::visible!("skipping: no LOC row (not x86)");
        return;
    }
    let before = loc_counts();
    let out = top(&["-i", "200ms", "-n", "10"]).output().unwrap();
    let after = loc_counts();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = lines(&out.stdout);
    assert_eq!(v.len(), 10);
    let cpus = v[0]["interrupts"]["cpus"].as_array().unwrap().len();
    assert_eq!(cpus, before.len(), "one rate column per online CPU");
    let mut seen = vec![0u64; cpus];
    for l in &v {
        let dt = l["interval_s"].as_f64().unwrap();
        assert!(dt > 0.1 && dt < 60.0, "interval_s {dt}");
        let row = loc_row(l).unwrap();
        let mut line_total = 0u64;
        for (s, r) in seen.iter_mut().zip(row["rates"].as_array().unwrap()) {
            let counts = r.as_f64().unwrap_or(0.0) * dt;
            let whole = counts.round();
            assert!(
                whole >= 0.0 && (counts - whole).abs() < 0.05,
                "rate {r} over {dt} s is not a whole count ({counts})"
            );
            *s += whole as u64;
            line_total += whole as u64;
        }
        assert_eq!(row["total"].as_u64(), Some(line_total), "{row}");
    }
    for (cpu, s) in seen.iter().enumerate() {
        let kernel = (after[cpu] + (1 << 32) - before[cpu]) % (1 << 32);
        assert!(
            *s <= kernel,
            "LOC on column {cpu}: top saw {s}, kernel counted {kernel}"
        );
    }
    assert!(seen.iter().sum::<u64>() > 0, "no timer tick in 2 s");
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
        crate::visible!("warning: could not bring cpu1 back online");
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

fn check_numbers(v: &Value, path: &str) {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap();
            assert!(x.is_finite() && (0.0..1e7).contains(&x), "{path} = {x}");
        }
        Value::Array(a) => a.iter().for_each(|x| check_numbers(x, path)),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| check_numbers(x, &format!("{path}.{k}"))),
        _ => {}
    }
}

fn cpu1_gap_or_absent(l: &Value) -> bool {
    let cpus = l["interrupts"]["cpus"].as_array().unwrap();
    let Some(i) = cpus.iter().position(|c| c == 1) else {
        return true;
    };
    let row = loc_row(l).unwrap();
    row["rates"][i].is_null() && !row["gaps"][i].is_null()
}

#[test]
fn cpu_hotplug_shows_a_gap_never_a_spike() {
    if !common::host_changes_allowed("top_live: cpu_hotplug_shows_a_gap_never_a_spike") {
        return;
    }
    let _g = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = hotplug_skip_reason() {
        crate::visible!("skipping: {why}");
        return;
    }
    let mut child = top(&["-i", "100ms", "-n", "30"]).spawn().unwrap();
    // drain stdout meanwhile: a full pipe would stall the sampler
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buf).map(|_| buf)
    });
    let guard = Online;
    std::thread::sleep(Duration::from_secs(1));
    std::fs::write(CPU1_ONLINE, "0").unwrap();
    std::thread::sleep(Duration::from_secs(1));
    drop(guard);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = lines(&reader.join().unwrap().unwrap());
    assert_eq!(v.len(), 30);
    for l in &v {
        for key in ["interrupts", "softirqs", "threads"] {
            check_numbers(&l[key]["rows"], key);
        }
        check_numbers(&l["cpu_pct"], "cpu_pct");
        check_numbers(&l["threads"], "threads");
        for p in l["cpu_pct"].as_array().unwrap() {
            for (k, x) in p.as_object().unwrap() {
                if k.ends_with("_pct") {
                    assert!(x.as_f64().unwrap() <= 100.0 + 1e-6, "{k} = {x}");
                }
            }
        }
    }
    let cpus: Vec<String> = v
        .iter()
        .map(|l| l["interrupts"]["cpus"].to_string())
        .collect();
    assert!(
        v.iter().any(cpu1_gap_or_absent),
        "no line shows cpu1 leaving: {cpus:?}"
    );
    assert!(std::fs::read_to_string(CPU1_ONLINE).unwrap().trim() == "1");
}
