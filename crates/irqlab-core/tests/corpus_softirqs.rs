//! Every `/proc/softirqs` sample in `../shared/corpus` (outside the
//! repository; never copied in) parses, and each row's total matches an
//! independent naive sum. Skips visibly when the corpus is absent.
#![allow(clippy::unwrap_used)]

mod common;
use irqlab_core::softirqs::Softirqs;
use std::io::Read;
use std::path::Path;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

fn load(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "bz2") {
        let mut out = Vec::new();
        bzip2::read::BzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Naive reference: (name, sum of the numbers after the colon) per data line.
fn naive(text: &str) -> Vec<(String, u64)> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    lines.next(); // header
    lines
        .map(|l| {
            let (name, rest) = l.split_once(':').unwrap();
            let sum = rest
                .split_whitespace()
                .map(|t| t.parse::<u64>().unwrap())
                .sum();
            (name.trim().to_string(), sum)
        })
        .collect()
}

#[test]
fn corpus_softirqs_parse_and_sum() {
    let dir = Path::new(CORPUS);
    if !dir.is_dir() {
        common::corpus_skipped(
            "corpus_softirqs: corpus_softirqs_parse_and_sum",
            "the corpus",
        );
        return;
    }
    let mut seen = 0;
    let mut reused = Softirqs::default();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with(".softirqs") || name.ends_with(".softirqs.bz2")) {
            continue;
        }
        let bytes = load(&path);
        let parsed = Softirqs::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = parsed.rows.len();
        assert!(n == 9 || n == 10, "{name}: {n} rows");
        let want = naive(std::str::from_utf8(&bytes).unwrap());
        let got: Vec<_> = parsed
            .rows
            .iter()
            .map(|r| (r.name.clone(), r.total()))
            .collect();
        assert_eq!(got, want, "{name}");
        for r in &parsed.rows {
            assert_eq!(r.counts.len(), parsed.cpus.len(), "{name} {}", r.name);
        }
        reused.parse_into(&bytes).unwrap();
        assert_eq!(reused, parsed, "{name}: parse_into differs from parse");
        println!("{name}: {} cpus, {n} rows", parsed.cpus.len());
        seen += 1;
    }
    assert!(seen > 0, "corpus present but no softirqs samples in it");
}
