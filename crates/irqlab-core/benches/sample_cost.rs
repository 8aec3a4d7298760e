//! The core steps of one live sample on a 1152-CPU × 1056-IRQ machine
//! (synthesized), every cell changing: `parse_into` of `/proc/interrupts`,
//! the delta against the previous sample, and serde_json of that delta (a
//! reference for what generic serialization costs). Baselines in the same
//! run: reading the same bytes from a file on tmpfs (`/dev/shm`) and on
//! disk (the target dir), open+read+close. The whole `top --batch` sample
//! (the ≤ 30 ms target) is measured by `crates/irqlab/benches/top_batch_line.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use irqlab_core::delta::interrupts_delta;
use irqlab_core::synth::SynthSpec;
use irqlab_core::Interrupts;
use std::hint::black_box;
use std::path::PathBuf;

/// Two successive `/proc/interrupts` texts of the same machine, every
/// cell changing (worst case; see `SynthTree::advanced`).
fn texts() -> (Vec<u8>, Vec<u8>) {
    let spec = SynthSpec::x86_1152();
    let tree = spec.build().expect("synth spec is valid");
    let before = tree.interrupts_text().into_bytes();
    (before, tree.advanced(1, 11).interrupts_text().into_bytes())
}

fn write_file(dir: PathBuf, bytes: &[u8]) -> Option<PathBuf> {
    let p = dir.join(format!("irqlab-bench-{}.interrupts", std::process::id()));
    std::fs::write(&p, bytes).ok()?;
    Some(p)
}

fn bench(c: &mut Criterion) {
    let (before, after) = texts();
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
            interrupts_delta(black_box(&old), black_box(&new), 1.0)
                .rows
                .len()
        })
    });
    let d = interrupts_delta(&old, &new, 1.0);
    let mut buf = Vec::new();
    g.bench_function("json_of_delta", |b| {
        b.iter(|| {
            buf.clear();
            serde_json::to_writer(&mut buf, black_box(&d)).map(|_| buf.len())
        })
    });
    g.finish();
    for p in [tmpfs, disk].into_iter().flatten() {
        let _ = std::fs::remove_file(p);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
