//! Per-sample user-space cost of `irqlab top --batch --format json` on a
//! 1152-CPU × 1056-IRQ machine (synthesized): `parse_into` of the three
//! statistics files, then the JSON line that `top --batch` writes from each
//! live-sampler frame (`JsonlWriter::frame_line` -> `line`: delta,
//! rates, rendering in `export::jsonl`), exactly the code the binary runs. Target: ≤ 30 ms per sample.
//!
//! Three later states (`SynthTree::advanced`): one cell in 20 changing by
//! 1–11; every cell changing by 1–11 (counts repeat, as timer ticks do);
//! every cell changing by 1–100 000 (nearly all distinct: the formatter's
//! worst case). Baseline in the same run: reading the same
//! `/proc/interrupts` bytes from a file on tmpfs (open + read + close).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use irqlab::export::jsonl::{JsonlWriter, LineInput};
use irqlab::filter::Filter;
use irqlab::sampler::clock::CostMeter;
use irqlab::sampler::Strategy;
use irqlab_core::synth::{SynthSpec, SynthTree};
use irqlab_core::{Interrupts, Snapshot, Softirqs, Stat};
use std::hint::black_box;

const CPUS: u32 = 1152;
const IRQS: u32 = 1056;
/// A measured interval as top sees it (never exactly the nominal 1 s).
const INTERVAL_NS: u64 = 1_000_321_000;

/// The three files' texts of one state of the machine.
struct Texts {
    interrupts: Vec<u8>,
    softirqs: Vec<u8>,
    stat: Vec<u8>,
}

fn texts(t: &SynthTree) -> Texts {
    let (soft, stat) = t.softirqs_and_stat_text();
    Texts {
        interrupts: t.interrupts_text().into_bytes(),
        softirqs: soft.into_bytes(),
        stat: stat.into_bytes(),
    }
}

fn machine() -> SynthTree {
    SynthSpec::x86_1152().build().expect("synth spec is valid")
}

fn snapshot(t: &Texts, mono_ns: u64) -> Snapshot {
    Snapshot {
        mono_ns,
        wall_ns: 1_764_400_000_000_000_000 + mono_ns,
        interrupts: Some(Interrupts::parse(&t.interrupts).expect("parses")),
        softirqs: Some(Softirqs::parse(&t.softirqs).expect("parses")),
        stat: Some(Stat::parse(&t.stat).expect("parses")),
    }
}

/// Parse `t` into `new` (reusing its models) and write the JSON line
/// against `old` into `out`: one sample of `top --batch --format json`
/// minus the read syscalls.
fn sample(w: &mut JsonlWriter, old: &Snapshot, new: &mut Snapshot, t: &Texts, out: &mut Vec<u8>) {
    parse(new, t);
    line(w, old, new, out);
}

fn parse(new: &mut Snapshot, t: &Texts) {
    if let Some(m) = new.interrupts.as_mut() {
        m.parse_into(&t.interrupts).expect("parses");
    }
    if let Some(m) = new.softirqs.as_mut() {
        m.parse_into(&t.softirqs).expect("parses");
    }
    if let Some(m) = new.stat.as_mut() {
        m.parse_into(&t.stat).expect("parses");
    }
}

/// The JSON line of `old` → `new` (delta, rates, rendering).
fn line(w: &mut JsonlWriter, old: &Snapshot, new: &Snapshot, out: &mut Vec<u8>) {
    let meter = CostMeter::start();
    let filter = Filter::default();
    let inp = LineInput {
        old,
        new,
        filter: &filter,
        threads: &[],
        meter: &meter,
        strategy: Strategy::ProcInterrupts,
        trace: None,
        samples: None,
    };
    let mut affinity = |irq: u32| Some(format!("{}", irq % CPUS));
    w.write_line(&inp, &mut affinity, out);
}

fn bench(c: &mut Criterion) {
    let tree = machine();
    let before = texts(&tree);
    let old = snapshot(&before, 0);
    let mut g = c.benchmark_group("top_batch_line_1152x1056");
    g.sample_size(20);
    let path =
        std::path::Path::new("/dev/shm").join(format!("irqlab-bench-{}", std::process::id()));
    if std::fs::write(&path, &before.interrupts).is_ok() {
        g.bench_function("baseline_read_interrupts_tmpfs", |b| {
            b.iter(|| std::fs::read(black_box(&path)).map(|v| v.len()))
        });
        let _ = std::fs::remove_file(&path);
    }
    let states = [
        ("one_cell_in_20_changing", 20, 11),
        ("all_cells_changing", 1, 11),
        ("all_cells_changing_distinct_counts", 1, 100_000),
    ];
    for (name, every, max_step) in states {
        let after = texts(&tree.advanced(every, max_step));
        let mut new = snapshot(&after, INTERVAL_NS);
        let mut w = JsonlWriter::default();
        let mut out = Vec::new();
        sample(&mut w, &old, &mut new, &after, &mut out);
        eprintln!("{name}: one line is {} bytes", out.len());
        g.bench_function(format!("parse_delta_json_{name}"), |b| {
            b.iter(|| {
                sample(&mut w, &old, &mut new, black_box(&after), &mut out);
                out.len()
            })
        });
        g.bench_function(format!("parse_only_{name}"), |b| {
            b.iter(|| parse(&mut new, black_box(&after)))
        });
        g.bench_function(format!("delta_json_only_{name}"), |b| {
            b.iter(|| {
                line(&mut w, &old, black_box(&new), &mut out);
                out.len()
            })
        });
    }
    // the per-cell formatter alone: 1.2 M rates of distinct counts
    let counts: Vec<u64> = (0..u64::from(CPUS * IRQS))
        .map(|i| i * 2_654_435_761 % 100_000)
        .collect();
    let secs = INTERVAL_NS as f64 / 1e9;
    let mut out = Vec::with_capacity(counts.len() * 12);
    g.bench_function("write_rate_1_2m_cells", |b| {
        b.iter(|| {
            out.clear();
            for &c in &counts {
                irqlab::export::irq_row_json::write_rate(&mut out, black_box(c as f64 / secs));
                out.push(b',');
            }
            out.len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
