//! Every `/proc/interrupts` capture in `../shared/corpus` parses, and each
//! row's total equals an independent sum computed by a naive tokenizer.
//! Skips (and says so) when the corpus folder is absent.

#![allow(clippy::unwrap_used)]

mod common;
use irqlab_core::{Interrupts, Shape};
use std::io::Read;
use std::path::PathBuf;

fn corpus_dir() -> Option<PathBuf> {
    let d = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus"
    ));
    d.is_dir().then_some(d)
}

fn load(path: &std::path::Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "bz2") {
        let mut out = Vec::new();
        bzip2::read::BzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Independent sum: after the first ':', add leading all-digit tokens.
fn naive_total(line: &str, limit: usize) -> u64 {
    let rest = &line[line.find(':').unwrap() + 1..];
    rest.split_whitespace()
        .take(limit)
        .map_while(|t| t.parse::<u64>().ok())
        .sum()
}

#[test]
fn every_corpus_interrupts_file_parses_with_exact_totals() {
    let Some(dir) = corpus_dir() else {
        common::corpus_skipped(
            "corpus_interrupts: every_corpus_interrupts_file_parses_with_exact_totals",
            "the corpus",
        );
        return;
    };
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains(".interrupts") {
            continue;
        }
        seen += 1;
        let bytes = load(&path);
        let parsed = Interrupts::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = String::from_utf8_lossy(&bytes);
        let data: Vec<&str> = text
            .lines()
            .skip_while(|l| l.trim().is_empty())
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert_eq!(parsed.rows().len(), data.len(), "{name}: row count");
        let ncols = parsed.cpus.len();
        for (row, line) in parsed.rows().iter().zip(&data) {
            let limit = if row.irq.is_some() { ncols } else { usize::MAX };
            assert_eq!(row.total(), naive_total(line, limit), "{name}: {line}");
            if row.irq.is_some() {
                assert_eq!(row.shape, Shape::PerCpu, "{name}: {line}");
            }
        }
        eprintln!("{name}: {} cpus, {} rows", ncols, parsed.rows().len());
    }
    assert!(
        seen >= 20,
        "expected the corpus to hold >= 20 interrupts files, saw {seen}"
    );
}
