//! Per-sample user-space cost of `top --batch` on a 1152-CPU × 1056-IRQ
//! machine (synthesized): `parse_into` of `/proc/interrupts`, the delta
//! against the previous sample, and serde_json serialization of that
//! delta. Baselines in the same run: reading the same bytes from a file
//! on tmpfs (`/dev/shm`) and on disk (the target dir), open+read+close.
//! `json_of_rates` is the per-row rates array `top --batch` writes.
//! Target: parse + delta + JSON ≤ 30 ms per sample.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use irqlab_core::delta::interrupts_delta;
use irqlab_core::render::{render_interrupts, Arch, Era};
use irqlab_core::synth::SynthSpec;
use irqlab_core::Interrupts;
use std::hint::black_box;
use std::path::PathBuf;

const CPUS: u32 = 1152;
const IRQS: u32 = 1056;
/// A measured interval as top sees it (never exactly the nominal 1 s).
const SECS: f64 = 1.000_321;

/// Two successive `/proc/interrupts` texts of the same machine: `every`
/// = 1 changes every cell (worst case); 20 changes one cell in 20 (closer
/// to a real machine, where most IRQs are idle on most CPUs).
fn texts(every: usize) -> (Vec<u8>, Vec<u8>) {
    let spec = SynthSpec {
        cpus: CPUS,
        irqs: IRQS,
        nr_irqs: (IRQS * 5 / 4 + 32).max(424),
        arch: Arch::X86,
        era: Era::E3,
        offline: Vec::new(),
        seed: 1,
    };
    let tree = spec.build().expect("synth spec is valid");
    let before = tree.interrupts_text().into_bytes();
    let mut later = tree.interrupts.clone();
    for (i, row) in later.rows.iter_mut().enumerate() {
        for (j, c) in row.counts.iter_mut().enumerate() {
            if (i * 7 + j * 3) % every == 0 {
                *c += ((i * 7 + j * 3) % 11 + 1) as u64;
            }
        }
    }
    let mut after = String::new();
    render_interrupts(&later, spec.era, spec.arch, spec.nr_irqs, &mut after);
    (before, after.into_bytes())
}

fn write_file(dir: PathBuf, bytes: &[u8]) -> Option<PathBuf> {
    let p = dir.join(format!("irqlab-bench-{}.interrupts", std::process::id()));
    std::fs::write(&p, bytes).ok()?;
    Some(p)
}

fn sparse(c: &mut Criterion) {
    let (before, after) = texts(20);
    let old = Interrupts::parse(&before).expect("parses");
    let mut model = Interrupts::default();
    let mut buf = Vec::new();
    let mut g = c.benchmark_group("sample_cost_1152x1056_sparse");
    g.sample_size(20);
    g.bench_function("sample_parse_delta_json_of_rates", |b| {
        b.iter(|| {
            model.parse_into(black_box(&after)).expect("parses");
            let d = interrupts_delta(&old, &model);
            let rates: Vec<Vec<Option<f64>>> = d
                .rows
                .iter()
                .map(|r| r.cells.iter().map(|c| c.rate(SECS)).collect())
                .collect();
            buf.clear();
            serde_json::to_writer(&mut buf, &rates).map(|_| buf.len())
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let (before, after) = texts(1);
    let old = Interrupts::parse(&before).expect("parses");
    let mut g = c.benchmark_group("sample_cost_1152x1056");
    g.sample_size(20);
    let tmpfs = write_file(PathBuf::from("/dev/shm"), &after);
    let disk = write_file(PathBuf::from(env!("CARGO_TARGET_TMPDIR")), &after);
    for (name, path) in [
        ("baseline_read_tmpfs", &tmpfs),
        ("baseline_read_disk", &disk),
    ] {
        if let Some(p) = path {
            g.bench_function(name, |b| {
                b.iter(|| std::fs::read(black_box(p)).map(|v| v.len()))
            });
        }
    }
    let mut model = Interrupts::default();
    g.bench_function("parse_into", |b| {
        b.iter(|| {
            model
                .parse_into(black_box(&after))
                .map(|_| model.rows().len())
        })
    });
    let new = Interrupts::parse(&after).expect("parses");
    g.bench_function("delta", |b| {
        b.iter(|| {
            interrupts_delta(black_box(&old), black_box(&new))
                .rows
                .len()
        })
    });
    let d = interrupts_delta(&old, &new);
    let mut buf = Vec::new();
    g.bench_function("json_of_delta", |b| {
        b.iter(|| {
            buf.clear();
            serde_json::to_writer(&mut buf, black_box(&d)).map(|_| buf.len())
        })
    });
    // what `top --batch --format json` writes per row: rates, null = gap
    g.bench_function("json_of_rates", |b| {
        b.iter(|| {
            let rates: Vec<Vec<Option<f64>>> = d
                .rows
                .iter()
                .map(|r| r.cells.iter().map(|c| c.rate(SECS)).collect())
                .collect();
            buf.clear();
            serde_json::to_writer(&mut buf, black_box(&rates)).map(|_| buf.len())
        })
    });
    g.bench_function("sample_parse_delta_json", |b| {
        b.iter(|| {
            model.parse_into(black_box(&after)).expect("parses");
            let d = interrupts_delta(&old, &model);
            buf.clear();
            serde_json::to_writer(&mut buf, &d).map(|_| buf.len())
        })
    });
    g.finish();
    for p in [tmpfs, disk].into_iter().flatten() {
        let _ = std::fs::remove_file(p);
    }
}

criterion_group!(benches, bench, sparse);
criterion_main!(benches);
