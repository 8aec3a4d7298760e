//! Parser throughput: `/proc/interrupts` of 1152 CPUs × 1056 rows (the
//! size of the 1152-CPU pcp capture) against a baseline that only counts
//! newlines with memchr over the same bytes, in the same run.

#![allow(clippy::unwrap_used)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use irqlab_core::Interrupts;
use std::io::Read;

fn corpus_1152() -> Option<Vec<u8>> {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/x86_64-1152cpu-pcp-qa.interrupts.bz2"
    );
    let raw = std::fs::read(p).ok()?;
    let mut out = Vec::new();
    bzip2::read::BzDecoder::new(&raw[..])
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// A synth x86 E3 tree of 1152 CPUs × 1056 numbered rows (plus arch rows).
fn synth_1152() -> Vec<u8> {
    let spec = irqlab_core::synth::SynthSpec::x86_1152();
    match spec.build() {
        Ok(t) => t.interrupts_text().into_bytes(),
        Err(e) => panic!("synth: {e}"),
    }
}

fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    let mut v = vec![("synth-1152cpu", synth_1152())];
    if let Some(c) = corpus_1152() {
        v.push(("corpus-1152cpu", c));
    } else {
        eprintln!("note: ../shared/corpus not found, corpus input skipped");
    }
    v
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("interrupts");
    g.sample_size(30);
    for (name, bytes) in inputs() {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("baseline_memchr_newlines", name),
            &bytes,
            |b, x| b.iter(|| memchr::memchr_iter(b'\n', std::hint::black_box(x)).count()),
        );
        g.bench_with_input(BenchmarkId::new("parse", name), &bytes, |b, x| {
            b.iter(|| Interrupts::parse(std::hint::black_box(x)).map(|m| m.rows().len()))
        });
        let mut model = Interrupts::default();
        g.bench_with_input(BenchmarkId::new("parse_into", name), &bytes, |b, x| {
            b.iter(|| {
                model
                    .parse_into(std::hint::black_box(x))
                    .map(|_| model.rows().len())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
