//! The live sampler's line-by-line refill of `/proc/interrupts` against
//! `parse_into` of the same text, on a machine like the project VM (2
//! CPUs × 30 IRQs) and on one of 256 CPUs × 300 IRQs (rows of ~2.8 KB,
//! under `KEEP_LINE_MAX`): every row changed since the last refill (the
//! worst case: each line is parsed and kept), one row in five changed,
//! and none changed (each line compared with its kept text only).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use irqlab_core::render::{Arch, Era};
use irqlab_core::synth::{SynthSpec, SynthTree};
use irqlab_core::Interrupts;
use std::hint::black_box;

fn machine(cpus: u32, irqs: u32) -> SynthTree {
    let spec = SynthSpec {
        cpus,
        irqs,
        nr_irqs: 1024,
        arch: Arch::X86,
        era: Era::E3,
        offline: Vec::new(),
        seed: 22,
    };
    spec.build().expect("synth spec is valid")
}

/// `t` one interval later with only every `every`-th row counting on.
fn rows_moved(t: &SynthTree, every: usize) -> String {
    let mut later = t.clone();
    for (i, row) in later.interrupts.rows_mut().iter_mut().enumerate() {
        if i % every == 0 {
            row.counts.iter_mut().for_each(|c| *c += 7);
        }
    }
    later.interrupts_text()
}

fn refill(m: &mut Interrupts, text: &[u8]) -> usize {
    let mut r = m.refill();
    for (_, l) in irqlab_core::scan::lines(text) {
        r.line(l).expect("parses");
    }
    r.finish().expect("parses");
    m.rows().len()
}

fn bench(c: &mut Criterion) {
    for (name, cpus, irqs) in [("2x30", 2, 30), ("256x300", 256, 300)] {
        let t = machine(cpus, irqs);
        let before = t.interrupts_text().into_bytes();
        let mut g = c.benchmark_group(format!("refill_{name}"));
        g.sample_size(20);
        let mut model = Interrupts::default();
        let all = rows_moved(&t, 1).into_bytes();
        g.bench_function("parse_into", |b| {
            b.iter(|| {
                model
                    .parse_into(black_box(&all))
                    .map(|_| model.rows().len())
            })
        });
        // alternating two texts: every row changed at each refill
        g.bench_function("refill_every_row_changed", |b| {
            let mut flip = false;
            b.iter(|| {
                flip = !flip;
                refill(&mut model, black_box(if flip { &all } else { &before }))
            })
        });
        let fifth = rows_moved(&t, 5).into_bytes();
        g.bench_function("refill_one_row_in_5_changed", |b| {
            let mut flip = false;
            b.iter(|| {
                flip = !flip;
                refill(&mut model, black_box(if flip { &fifth } else { &before }))
            })
        });
        g.bench_function("refill_unchanged", |b| {
            b.iter(|| refill(&mut model, black_box(&before)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
