//! tools/show-floor.c, the least a `show --format json` of a tree can
//! cost, closes its affinity files as show does (`host::AttrDir`): one
//! `close_range` per run of at most 256 descriptors, not a `close` each,
//! so that the floor stays below show. Needs `cc` and `strace` (skipped
//! visibly without).

#![allow(clippy::unwrap_used)]

mod common;
use std::path::Path;
use std::process::Command;

/// The floor built from the repository's source into `dir`, or why not.
fn build_floor(dir: &Path) -> Result<std::path::PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/show-floor.c");
    let bin = dir.join("show-floor");
    let st = Command::new("cc")
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .map_err(|e| format!("no cc: {e}"))?;
    assert!(st.success(), "cc failed on {}", src.display());
    Ok(bin)
}

#[test]
fn the_floor_closes_its_affinity_files_in_runs() {
    let tmp = tempfile::tempdir().unwrap();
    if Command::new("strace").arg("-V").output().is_err() {
        visible!("the_floor_closes_its_affinity_files_in_runs: SKIPPED: no strace");
        return;
    }
    let bin = match build_floor(tmp.path()) {
        Ok(b) => b,
        Err(why) => {
            visible!("the_floor_closes_its_affinity_files_in_runs: SKIPPED: {why}");
            return;
        }
    };
    let tree = common::synth_tree(&common::spec(4, 600));
    let irqs: Vec<String> = common::read(tree.path(), "proc/interrupts")
        .lines()
        .filter_map(|l| l.split(':').next()?.trim().parse::<u32>().ok())
        .map(|n| n.to_string())
        .collect();
    assert!(irqs.len() > 512, "{} IRQs", irqs.len());
    let log = tmp.path().join("strace.log");
    let st = Command::new("strace")
        .args(["-f", "-e", "trace=openat,close,close_range", "-o"])
        .arg(&log)
        .arg(&bin)
        .arg(tree.path())
        .args(&irqs)
        .status()
        .unwrap();
    assert!(st.success());
    let log = std::fs::read_to_string(&log).unwrap();
    let calls = |name: &str| {
        log.lines()
            .filter(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|c| c.starts_with(name))
            })
            .collect::<Vec<_>>()
    };
    let opened = calls("openat(")
        .iter()
        .filter(|l| l.contains("_affinity_list") && !l.contains("= -1"))
        .count();
    assert!(opened >= irqs.len(), "{opened} affinity files opened");
    // the three statistics files and the directory: a close each
    let closes = calls("close(").len();
    assert!(closes <= 10, "{closes} close calls:\n{log}");
    let ranges: Vec<(u32, u32)> = calls("close_range(")
        .iter()
        .map(|l| {
            let args = l.split_once('(').unwrap().1;
            let mut n = args.split(',').map(|a| a.trim().parse::<u32>().unwrap());
            (n.next().unwrap(), n.next().unwrap())
        })
        .collect();
    let closed: u32 = ranges.iter().map(|(a, b)| b - a + 1).sum();
    assert_eq!(closed as usize, opened, "{ranges:?}");
    assert!(ranges.iter().all(|(a, b)| b - a < 256), "{ranges:?}");
}
