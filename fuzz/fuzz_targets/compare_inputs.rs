//! `irqlab compare`'s loading of its inputs (`compare::load_all`) on a tree
//! built from the fuzz input under a temp dir: a bench run (`plan.json`,
//! `env.json`, `summary.json`, a resumed part's `env-resume-*.json`, a
//! variant's `trials.jsonl` and `trials.csv`), a CSV table, a JSON table,
//! a plain file of numbers and a directory of per-iteration files (one
//! number, or a probe result set). The files are the input split at 0xff
//! bytes, in the order of `FILES`; the first byte picks which paths are
//! given as arguments (bit 7: the first one as `LABEL=PATH`). Must never
//! panic, hang or grow without bound; errors are fine, and every variant
//! loaded has a label and at least one value.
#![no_main]
use irqlab::compare::{load_all, LoadOpts};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

const FILES: [&str; 11] = [
    "run/plan.json",
    "run/env.json",
    "run/tip/trials.jsonl",
    "run/summary.json",
    "run/env-resume-1.json",
    "run/tip/trials.csv",
    "t.csv",
    "t.json",
    "n.txt",
    "iters/1",
    "iters/2.json",
];

/// The arguments bits 0-6 of the first byte may select.
const ARGS: [&str; 7] = [
    "run",
    "run/tip/trials.jsonl",
    "run/tip/trials.csv",
    "t.csv",
    "t.json",
    "n.txt",
    "iters",
];

fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    let _ = std::fs::write(&p, bytes);
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let root = dir.path();
    let mut parts = rest.split(|&b| b == 0xff);
    for rel in FILES {
        match parts.next() {
            Some(p) => put(root, rel, p),
            None => break,
        }
    }
    let mut specs: Vec<String> = ARGS
        .iter()
        .enumerate()
        .filter(|(i, _)| flags & (1 << i) != 0)
        .map(|(_, a)| root.join(a).display().to_string())
        .collect();
    if specs.is_empty() {
        specs.push(root.join("run").display().to_string());
    }
    if flags & 0x80 != 0 {
        specs[0] = format!("tip={}", specs[0]);
    }
    let opts = LoadOpts {
        metric: None,
        directed: Vec::new(),
        allow_copies: false,
    };
    if let Ok(loaded) = load_all(&specs, &opts) {
        for v in &loaded.variants {
            assert!(!v.label.is_empty(), "a variant without a label: {v:?}");
            assert!(
                v.series.iter().any(|s| !s.obs.is_empty()),
                "a variant without values: {v:?}"
            );
        }
    }
});
