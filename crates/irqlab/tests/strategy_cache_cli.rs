//! The per-boot cache of `top`'s strategy measurement
//! (`crates/irqlab/src/sampler/strategy_cache.rs`) end to end against a
//! fake tree with a boot id: a second run reuses the first run's
//! decision, a stale (other boot) or corrupt cache is measured again and
//! rewritten, `--strategy` still overrides, runs without a numbered-IRQ
//! filter measure nothing.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

mod common;
use std::path::Path;
use std::process::{Output, Stdio};

/// 4 CPUs (CPU 2 offline), 12 IRQs, a boot id and a kernel release.
fn tree() -> (tempfile::TempDir, u32) {
    let d = tempfile::tempdir().unwrap();
    let mut spec = common::spec(4, 12);
    spec.offline = vec![2];
    common::synth_into(&spec, d.path());
    common::write_files(
        d.path(),
        [
            ("sys/devices/system/cpu/online", &b"0-1,3\n"[..]),
            ("sys/devices/system/cpu/possible", b"0-3\n"),
            ("proc/sys/kernel/random/boot_id", b"boot-one\n"),
            ("proc/sys/kernel/osrelease", b"6.18.0-test\n"),
        ],
    );
    let first = std::fs::read_dir(d.path().join("sys/kernel/irq"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse::<u32>().ok())
        .min()
        .unwrap();
    (d, first)
}

/// `top --batch --format json -n 1 -v --irq ^FIRST$` with the cache in `cache`.
fn top(root: &Path, cache: &Path, first: u32, extra: &[&str]) -> (Output, String) {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("top")
        .arg("--root")
        .arg(root)
        .args(["--batch", "--format", "json", "-i", "10ms", "-n", "1", "-v"])
        .args(["--irq", &format!("^{first}$")])
        .args(extra)
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (out, err)
}

fn strategy_of(out: &Output) -> String {
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    v["strategy"].as_str().unwrap().to_string()
}

#[test]
fn strategy_measurement_is_cached_per_boot_and_reused_by_the_next_run() {
    let (d, first) = tree();
    let cache = tempfile::tempdir().unwrap();
    let file = cache.path().join("irqlab/strategy");
    let (_, err) = top(d.path(), cache.path(), first, &[]);
    assert!(err.contains("median of 20 reads"), "{err}");
    assert!(err.contains("measured now, cached in"), "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\tboot-one\t6.18.0-test\t"), "{text}");
    let (_, err) = top(d.path(), cache.path(), first, &[]);
    assert!(err.contains("measured earlier this boot"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        text,
        "reuse rewrites nothing"
    );
}

#[test]
fn cached_decision_is_the_one_used() {
    let (d, first) = tree();
    let cache = tempfile::tempdir().unwrap();
    let file = cache.path().join("irqlab/strategy");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let root = d.path().to_str().unwrap();
    for (strategy, full, targeted) in [
        ("per_cpu_count", 90_000, 1_000),
        ("proc_interrupts", 1_000, 90_000),
    ] {
        let line = format!(
            "irqlab-strategy-1\tboot-one\t6.18.0-test\t{root}\t3\t{first}\t{strategy}\t{full}\t{targeted}\t20\t{now}\n"
        );
        std::fs::write(&file, line).unwrap();
        let (out, err) = top(d.path(), cache.path(), first, &[]);
        assert!(err.contains("measured earlier this boot"), "{err}");
        assert_eq!(strategy_of(&out), strategy, "{err}");
    }
}

#[test]
fn stale_or_corrupt_strategy_cache_is_measured_again_and_replaced() {
    let (d, first) = tree();
    let cache = tempfile::tempdir().unwrap();
    let file = cache.path().join("irqlab/strategy");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    for junk in [
        &b"irqlab-strategy-1\tboot-one\tnot enough fields\n"[..],
        b"\xff\xfe\x00binary\n",
        b"",
    ] {
        std::fs::write(&file, junk).unwrap();
        let (_, err) = top(d.path(), cache.path(), first, &[]);
        assert!(err.contains("measured now, cached in"), "{err}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), 1, "corrupt lines dropped: {text}");
    }
    // a reboot: the old boot's entry is stale, measured again, dropped
    common::write_files(
        d.path(),
        [("proc/sys/kernel/random/boot_id", &b"boot-two\n"[..])],
    );
    let (_, err) = top(d.path(), cache.path(), first, &[]);
    assert!(err.contains("measured now, cached in"), "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("\tboot-two\t") && !text.contains("boot-one"),
        "{text}"
    );
    // a directory where the cache file should be: measured, not cached, no error
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let (_, err) = top(d.path(), cache.path(), first, &[]);
    assert!(err.contains("measured now, not cached"), "{err}");
}

#[test]
fn forced_strategy_and_no_irq_filter_measure_nothing() {
    let (d, first) = tree();
    let cache = tempfile::tempdir().unwrap();
    let (out, err) = top(
        d.path(),
        cache.path(),
        first,
        &["--strategy", "proc-interrupts"],
    );
    assert!(!err.contains("median of"), "{err}");
    assert_eq!(strategy_of(&out), "proc_interrupts");
    let (out, err) = top(
        d.path(),
        cache.path(),
        first,
        &["--strategy", "per-cpu-count"],
    );
    assert!(
        err.contains("forced") && !err.contains("median of"),
        "{err}"
    );
    assert_eq!(strategy_of(&out), "per_cpu_count");
    assert!(
        !cache.path().join("irqlab").exists(),
        "nothing measured, nothing cached"
    );
}
