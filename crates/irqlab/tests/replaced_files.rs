//! A file of a tree under `--root` replaced (`mv new old`, what `sed -i`
//! and editors do) or removed while a command samples it: the kept
//! descriptor follows the path, so the new file's counts are read (a rate
//! of the jump, not 0) and a removed file is a failed read naming it (not
//! a frozen value): `show -i` and `top --batch` rates, `top --batch`
//! failing, `serve` counting the error in both pacing modes.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use common::{irqlab, replace, top_batch_started, tree_with};
use serve_support::{scrape, serve, value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// `/proc/interrupts` of two CPUs with IRQ 1 at `count` on CPU 0.
fn interrupts(count: u64) -> String {
    format!(
        "           CPU0       CPU1       \n  1: {count:>10}          0   IO-APIC   1-edge      i8042\n"
    )
}

/// A tree whose IRQ 1 is at 100 on CPU 0.
fn tree() -> tempfile::TempDir {
    tree_with(&[
        ("proc/interrupts", interrupts(100)),
        (
            "proc/softirqs",
            "                    CPU0       CPU1\n          HI:          1          2\n".into(),
        ),
    ])
}

/// Whether process `pid` holds a descriptor of `path` (it has read it).
fn holds(pid: u32, path: &Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|it| {
            it.filter_map(Result::ok)
                .any(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == path))
        })
        .unwrap_or(false)
}

/// IRQ 1's counts per second times the interval, summed over `docs`:
/// the counts the rates account for.
fn counted(docs: &[serde_json::Value]) -> f64 {
    docs.iter()
        .map(|d| {
            let row = &d["interrupts"]["rows"][0];
            assert_eq!(row["label"], "1", "{d}");
            row["total_rate"].as_f64().unwrap() * d["interval_s"].as_f64().unwrap()
        })
        .sum()
}

#[test]
fn show_interval_rates_a_replaced_file() {
    let d = tree();
    let ints = d.path().join("proc/interrupts").canonicalize().unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["show", "--format", "json", "-i", "1s", "--root"])
        .arg(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the first sample is read once the file is held open
    assert!(common::wait_until(Duration::from_secs(5), || holds(
        child.id(),
        &ints
    )));
    std::thread::sleep(Duration::from_millis(50));
    replace(&ints, &interrupts(1_000_100));
    let out = child.wait_with_output().unwrap();
    let doc = common::stdout_json(&out);
    let n = counted(std::slice::from_ref(&doc));
    assert!(
        (n - 1_000_000.0).abs() < 2.0,
        "{n} counted, want 1000000: {doc}"
    );
}

#[test]
fn top_batch_rates_a_replaced_file() {
    let d = tree();
    let (mut child, lines) = top_batch_started(d.path(), 4);
    replace(&d.path().join("proc/interrupts"), &interrupts(1_000_100));
    let docs: Vec<serde_json::Value> = lines.map(|l| serde_json::from_str(&l).unwrap()).collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(docs.len(), 4);
    let n = counted(&docs);
    assert!((n - 1_000_000.0).abs() < 2.0, "{n} counted, want 1000000");
}

#[test]
fn top_batch_fails_naming_a_removed_file() {
    let d = tree();
    let (mut child, lines) = top_batch_started(d.path(), 20);
    let ints = d.path().join("proc/interrupts");
    std::fs::remove_file(&ints).unwrap();
    let docs: Vec<serde_json::Value> = lines.map(|l| serde_json::from_str(&l).unwrap()).collect();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let st = child.wait().unwrap();
    assert!(!st.success(), "{} samples, stderr {stderr}", docs.len());
    assert!(docs.len() < 20, "{} samples", docs.len());
    assert!(
        stderr.contains(&format!("{}: ", ints.display())) && stderr.contains("os error 2"),
        "{stderr}"
    );
}

#[test]
fn show_once_still_reads_a_tree_without_interrupts() {
    // a file absent from the start is missing, not a failure (unchanged)
    let d = tree_with(&[(
        "proc/softirqs",
        "                    CPU0       CPU1\n          HI:          1          2\n",
    )]);
    irqlab()
        .args(["show", "--root"])
        .arg(d.path())
        .assert()
        .success();
}

/// `serve` (`args`: its pacing) after IRQ 1's file is replaced serves
/// the new count; after it is removed, counts the failed read.
fn serve_follows(args: &[&str]) {
    let d = tree();
    let ints = d.path().join("proc/interrupts");
    let s = serve(d.path(), args);
    let v = |b: &str, name: &str| value(b, name).unwrap_or_else(|| panic!("no {name} in\n{b}"));
    let cpu0 = "irqlab_interrupts_total{cpu=\"0\",irq=\"1\"";
    assert_eq!(v(&scrape(s.addr), cpu0), 100.0);

    replace(&ints, &interrupts(1_000_100));
    let mut body = String::new();
    let seen = common::wait_until(Duration::from_secs(5), || {
        body = scrape(s.addr);
        value(&body, cpu0) == Some(1_000_100.0)
    });
    assert!(seen, "{args:?}: the replaced file is not read\n{body}");
    assert_eq!(v(&body, "irqlab_sample_errors_total "), 0.0);

    std::fs::remove_file(&ints).unwrap();
    let failed = common::wait_until(Duration::from_secs(5), || {
        body = scrape(s.addr);
        value(&body, "irqlab_last_sample_success ") == Some(0.0)
    });
    assert!(
        failed,
        "{args:?}: the removed file is not a failed read\n{body}"
    );
    assert!(v(&body, "irqlab_sample_errors_total ") >= 1.0, "{body}");
}

#[test]
fn scrape_time_serve_follows_a_replaced_or_removed_file() {
    serve_follows(&["--min-interval", "100ms"]);
}

#[test]
fn cached_serve_follows_a_replaced_or_removed_file() {
    serve_follows(&["-i", "100ms"]);
}
