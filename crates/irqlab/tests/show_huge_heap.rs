//! A single `show` of a machine of 512 CPUs or more puts the rest of its
//! heap on one huge page (`alloc::heap_on_huge_page`): one
//! `madvise(MADV_COLLAPSE)` of a 2 MiB-aligned range, unless the kernel's
//! huge page mode is `[never]`. Smaller machines and `show --interval`
//! never ask, and the counts written from that heap are the file's. Needs `strace`
//! (skipped visibly without).

#![allow(clippy::unwrap_used)]

mod common;
use std::path::Path;
use std::process::Command;

/// The `madvise` calls of `irqlab show --root ROOT ARGS` (strace lines),
/// and its stdout.
fn madvise_calls(root: &Path, args: &[&str]) -> (Vec<String>, Vec<u8>) {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-e", "trace=madvise", "-o"])
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["show", "--root"])
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("madvise("))
        .map(str::to_string)
        .collect();
    (calls, out.stdout)
}

/// The collapses among `calls`, each checked to cover one 2 MiB-aligned
/// 2 MiB range and to have succeeded.
fn collapses(calls: &[String]) -> usize {
    let found: Vec<&String> = calls
        .iter()
        .filter(|l| l.contains("MADV_COLLAPSE"))
        .collect();
    for l in &found {
        let args = l.split_once('(').unwrap().1;
        let addr = args.split(',').next().unwrap().trim();
        let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap();
        assert_eq!(addr % (2 << 20), 0, "{l}");
        assert!(args.contains(", 2097152, MADV_COLLAPSE) = 0"), "{l}");
    }
    found.len()
}

/// strace is here; else says `test` is skipped.
fn have_strace(test: &str) -> bool {
    let here = Command::new("strace").arg("-V").output().is_ok();
    if !here {
        visible!("{test}: SKIPPED: no strace");
    }
    here
}

fn huge_pages_never() -> bool {
    std::fs::read_to_string(Path::new("/").join(irqlab_core::paths::THP_ENABLED))
        .map_or(true, |m| m.contains("[never]"))
}

#[test]
fn only_a_single_show_of_a_large_machine_asks_for_a_huge_page() {
    if !have_strace("only_a_single_show_of_a_large_machine_asks_for_a_huge_page") {
        return;
    }
    let large = common::synth_tree(&common::spec(512, 24));
    let small = common::synth_tree(&common::spec(511, 24));
    let want = usize::from(!huge_pages_never());
    if want == 0 {
        visible!("only_a_single_show_of_a_large_machine_asks_for_a_huge_page: huge pages are [never] here: no collapse expected");
    }
    for args in [
        &["--format", "json"][..],
        &["--format", "table"],
        &["--irq", "^NMI$"],
    ] {
        let (calls, _) = madvise_calls(large.path(), args);
        assert_eq!(collapses(&calls), want, "512 CPUs, {args:?}: {calls:?}");
        let (calls, _) = madvise_calls(small.path(), args);
        assert_eq!(collapses(&calls), 0, "511 CPUs, {args:?}: {calls:?}");
    }
    let (calls, _) = madvise_calls(large.path(), &["-i", "10ms", "--format", "json"]);
    assert_eq!(collapses(&calls), 0, "show --interval: {calls:?}");
}

#[test]
fn counts_written_from_the_huge_page_are_the_files() {
    if !have_strace("counts_written_from_the_huge_page_are_the_files") {
        return;
    }
    // each per-CPU row's counts, written from a heap on a huge page, are
    // the file's
    let large = common::synth_tree(&common::spec(512, 40));
    let (calls, out) = madvise_calls(large.path(), &["--format", "json"]);
    assert_eq!(collapses(&calls), usize::from(!huge_pages_never()));
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let rows = doc["interrupts"]["rows"].as_array().unwrap();
    assert!(rows.len() >= 40, "{} rows", rows.len());
    let per_cpu = rows.iter().filter(|r| r["shape"] == "per_cpu").count();
    assert!(per_cpu >= 40, "{per_cpu} per-CPU rows");
    let text = common::read(large.path(), "proc/interrupts");
    let mut compared = 0;
    for (row, line) in rows.iter().zip(text.lines().skip(1)) {
        let label = line.split(':').next().unwrap().trim();
        assert_eq!(row["label"], label, "{line}");
        let counts: Vec<u64> = line
            .split(':')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .take(512)
            .map_while(|t| t.parse().ok())
            .collect();
        let got: Vec<u64> = row["counts"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_u64().unwrap()).collect())
            .unwrap_or_default();
        if got.len() == 512 {
            assert_eq!(got, counts, "{label}");
            compared += 1;
        }
    }
    assert_eq!(compared, per_cpu, "every per-CPU row's counts compared");
}
