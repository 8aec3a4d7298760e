//! A read that fails (a corrupt `/proc/interrupts`) is counted:
//! `irqlab_sample_errors_total` rises and `irqlab_last_sample_success`
//! drops to 0 while the last good sample's values are served, in both
//! pacing modes, both namings and both exposition formats; once the file
//! is good again the gauge is back at 1. `promtool check metrics` checks
//! the failing body (skipped, saying so, without promtool). A file
//! missing at the start is noted, then exposed once a read has it.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{
    have, promtool_check, scrape_as, serve, serve_noting, serve_to_end, synth, value,
};
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const OPENMETRICS: &str = "application/openmetrics-text;version=1.0.0";

/// Rewrite `path` in place (serve keeps its descriptor open, as for
/// /proc): truncate, then write `text`.
fn rewrite_in_place(path: &Path, text: &[u8]) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(0).unwrap();
    f.write_all(text).unwrap();
}

/// `promtool check metrics` on the failing body; skips, saying so,
/// without promtool.
fn promtool_check_failing(body: &str) {
    if !have("promtool") {
        crate::visible!("SKIP promtool check of the failing body: promtool not installed (tools/install-prometheus.sh)");
        return;
    }
    promtool_check(body, "the body");
}

/// Scrape until the body is of a read from after the change (the read a
/// scrape asks for, or the next tick).
fn scrape_after_change(addr: SocketAddr, accept: Option<&str>) -> String {
    std::thread::sleep(Duration::from_millis(400));
    scrape_as(addr, accept).1
}

fn errors_are_counted(args: &[&str], accept: Option<&str>) {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 4);
    let ints = d.path().join("proc/interrupts");
    let good = std::fs::read(&ints).unwrap();
    let s = serve(d.path(), args);
    let v = |b: &str, name: &str| {
        value(b, &format!("{name} ")).unwrap_or_else(|| panic!("no {name} in\n{b}"))
    };
    let first = scrape_as(s.addr, accept).1;
    assert!(first.contains("# TYPE irqlab_sample_errors"), "{first}");
    assert!(
        first.contains("# TYPE irqlab_last_sample_success gauge"),
        "{first}"
    );
    assert_eq!(v(&first, "irqlab_sample_errors_total"), 0.0);
    assert_eq!(v(&first, "irqlab_last_sample_success"), 1.0);

    let broken_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    rewrite_in_place(&ints, b"");
    let bad = scrape_after_change(s.addr, accept);
    assert!(
        v(&bad, "irqlab_sample_errors_total") >= 1.0,
        "{args:?}: no error counted\n{bad}"
    );
    assert_eq!(v(&bad, "irqlab_last_sample_success"), 0.0, "{args:?}");
    // the values are the last good sample's, read before the change
    assert!(
        v(&bad, "irqlab_last_sample_timestamp_seconds") <= broken_at,
        "{args:?}"
    );
    let lines = bad.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(v(&bad, "irqlab_exposed_series") as usize, lines);
    if accept.is_none() {
        promtool_check_failing(&bad);
    }
    let errors = v(&bad, "irqlab_sample_errors_total");

    rewrite_in_place(&ints, &good);
    let again = scrape_after_change(s.addr, accept);
    assert_eq!(
        v(&again, "irqlab_last_sample_success"),
        1.0,
        "{args:?}\n{again}"
    );
    assert!(v(&again, "irqlab_sample_errors_total") >= errors);
    assert!(v(&again, "irqlab_samples_total") > v(&bad, "irqlab_samples_total"));
}

#[test]
fn scrape_time_reads_count_failures() {
    errors_are_counted(&["--min-interval", "100ms"], None);
}

#[test]
fn cached_reads_count_failures() {
    errors_are_counted(&["-i", "100ms"], None);
}

#[test]
fn failures_are_counted_in_openmetrics() {
    errors_are_counted(&["--min-interval", "100ms"], Some(OPENMETRICS));
}

#[test]
fn failures_are_counted_with_node_naming() {
    errors_are_counted(&["-i", "100ms", "--compat", "node"], None);
}

/// A file that stays broken at `-i 10ms` fails ~80 reads: stderr says the
/// first once (repeats at most once a minute), and the recovery at once.
/// A statistics file the tree lacks at the start is named once, saying
/// that it is not exposed until a sample can read it: every read tries
/// it, and its series are in the body from the first read that has it
/// (in both pacing modes).
#[test]
fn a_statistics_file_missing_at_the_start_is_exposed_once_a_read_has_it() {
    for pace in [["--min-interval", "50ms"], ["-i", "50ms"]] {
        let d = tempfile::tempdir().unwrap();
        let tree = d.path().join("tree");
        synth(&tree, 2, 4);
        let softirqs = tree.join("proc/softirqs");
        let text = std::fs::read(&softirqs).unwrap();
        std::fs::remove_file(&softirqs).unwrap();
        let (s, said) = serve_noting(&tree, &pace);
        let note = format!(
            "irqlab: note: not exposed until a sample can read it: {}: ",
            softirqs.display()
        );
        let notes: Vec<&str> = said.lines().filter(|l| l.contains("exposed")).collect();
        assert_eq!(notes.len(), 1, "{pace:?}: {said}");
        assert!(notes[0].starts_with(&note), "{pace:?}: {said}");
        let series = "irqlab_softirqs_total{";
        let before = scrape_as(s.addr, None).1;
        assert!(before.contains("irqlab_interrupts_total{"), "{before}");
        assert!(!before.contains(series), "{before}");
        // whole or absent to the sampler
        let part = d.path().join("softirqs.part");
        std::fs::write(&part, &text).unwrap();
        std::fs::rename(&part, &softirqs).unwrap();
        assert!(
            common::wait_until(Duration::from_secs(20), || scrape_as(s.addr, None)
                .1
                .contains(series)),
            "{pace:?}: no {series} once the file is there"
        );
    }
}

#[test]
fn repeated_failures_are_said_once_then_the_recovery() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 4);
    let ints = d.path().join("proc/interrupts");
    let good = std::fs::read(&ints).unwrap();
    let root = d.path().to_path_buf();
    let run = std::thread::spawn(move || serve_to_end(&root, &["-i", "10ms", "--duration", "2s"]));
    std::thread::sleep(Duration::from_millis(400));
    rewrite_in_place(&ints, b"");
    std::thread::sleep(Duration::from_millis(900));
    rewrite_in_place(&ints, &good);
    let out = run.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let failed = err.lines().filter(|l| l.contains("sample failed")).count();
    assert_eq!(failed, 1, "{err}");
    let recovered: Vec<_> = err
        .lines()
        .filter(|l| l.contains("recovered after"))
        .collect();
    assert_eq!(recovered.len(), 1, "{err}");
}
