//! Scale of `irqlab compare`: the whole comparison model
//! (describe, Mann–Whitney, Welch, Hodges–Lehmann by selection, bootstrap
//! intervals with the default 10 000 resamples, warnings) and the SVG plot,
//! on 2 variants × 100 000 values and on a bench-sized set (20 metrics × 10
//! variants × 30 values), and end to end as `irqlab compare a.txt b.txt`
//! runs it (read two files of 100 000 numbers, build, write the table
//! report), less process start. Baseline in the same run: sorting the
//! 2 × 100 000 input values (BENCHMARKS.md reports the ratio). Targets:
//! < 1 s and < 0.2 s; plot < 1 MB.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use irqlab::compare::model::{build, Settings};
use irqlab::compare::{
    comparison, render_svg, write_report, CompareConfig, CompareFormat, DirectionRules, Loaded,
    Obs, VariantData,
};
use irqlab_core::rng::Rng;
use std::hint::black_box;

fn variant(label: &str, metrics: usize, n: usize, centre: f64, rng: &mut Rng) -> VariantData {
    let mut v = VariantData::new(label, true);
    for m in 0..metrics {
        for _ in 0..n {
            let value = centre * (1.0 + 0.02 * rng.normal()) * (1.0 + m as f64);
            v.push(&format!("m{m}_ns"), None, None, Obs::plain(value));
        }
    }
    v
}

fn loaded(variants: usize, metrics: usize, n: usize) -> Loaded {
    let mut rng = Rng::new(7);
    Loaded {
        variants: (0..variants)
            .map(|i| variant(&format!("v{i}"), metrics, n, 1000.0 + i as f64, &mut rng))
            .collect(),
        warnings: Vec::new(),
        metric_named: false,
    }
}

fn settings() -> Settings {
    Settings {
        alpha: 0.05,
        noise_pct: 1.0,
        resamples: 10_000,
        seed: 42,
        directions: DirectionRules::default(),
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("compare");
    g.sample_size(10);
    let big = loaded(2, 1, 100_000);
    let values: Vec<f64> = big
        .variants
        .iter()
        .flat_map(|v| v.series[0].values())
        .collect();
    g.bench_function("baseline_sort_2x100k", |b| {
        b.iter(|| {
            let mut v = values.clone();
            v.sort_unstable_by(f64::total_cmp);
            black_box(v)
        })
    });
    g.bench_function("model_2x100k", |b| {
        b.iter(|| black_box(build(big.clone_loaded(), None, settings()).unwrap()))
    });
    let c2 = build(big.clone_loaded(), None, settings()).unwrap();
    eprintln!(
        "compare: SVG of 2 x 100k is {} bytes",
        render_svg(&c2).len()
    );
    g.bench_function("svg_2x100k", |b| b.iter(|| black_box(render_svg(&c2))));
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for v in &big.variants {
        let path = dir.path().join(format!("{}.txt", v.label));
        let text: String = v.series[0]
            .values()
            .iter()
            .map(|x| format!("{x}\n"))
            .collect();
        std::fs::write(&path, text).unwrap();
        inputs.push(path.display().to_string());
    }
    let config = CompareConfig {
        inputs,
        baseline: None,
        alpha: 0.05,
        noise_pct: 1.0,
        resamples: 10_000,
        seed: 42,
        format: CompareFormat::Table,
        plot: None,
        html: None,
        metric: None,
        directions: DirectionRules::default(),
        all: false,
        mixed_workloads: false,
        allow_copies: false,
    };
    g.bench_function("end_to_end_2x100k", |b| {
        b.iter(|| {
            let c = comparison(&config).unwrap();
            write_report(&c, config.format, false, &mut std::io::sink()).unwrap();
            black_box(c)
        })
    });
    let small = loaded(10, 20, 30);
    g.bench_function("model_20m_10v_30", |b| {
        b.iter(|| black_box(build(small.clone_loaded(), None, settings()).unwrap()))
    });
    g.finish();
}

trait CloneLoaded {
    fn clone_loaded(&self) -> Loaded;
}

impl CloneLoaded for Loaded {
    fn clone_loaded(&self) -> Loaded {
        Loaded {
            variants: self.variants.clone(),
            warnings: self.warnings.clone(),
            metric_named: self.metric_named,
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
