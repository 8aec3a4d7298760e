//! The bootstrap of small samples (both sides ≤ `DIRECT_MEDIAN_MAX`
//! values, the bench-sized case): ONE resample per side and replicate gives
//! the Δmedian draw AND the Δmean (studentized, or BCa) draw. Each interval
//! still sees independent resamples from replicate to replicate, so its
//! distribution, hence its coverage, is that of a bootstrap of its own;
//! only the two intervals share their randomness, which halves the index
//! draws. A resample is kept as counts per rank of the sorted values (two
//! indices per 64 random bits, multiply-shift on 32 bits: bias below
//! n / 2³², at most 1.5·10⁻⁸ here), and the median and the moments are
//! read from the counts.

use super::{
    acceleration, bca, draws, jackknife, log_ratio, loo_means, loo_medians, rel,
    studentized_limits, BootResult, Rng, DIRECT_MEDIAN_MAX,
};
use crate::stats::describe::{mean, quantile_sorted, variance};

/// Counts per rank of one resample of `n` values (1 ≤ n ≤ 64).
#[inline]
fn resample_counts(rng: &mut Rng, n: usize, counts: &mut [u8; DIRECT_MEDIAN_MAX]) {
    counts[..n].fill(0);
    let n64 = n as u64;
    for _ in 0..n / 2 {
        let r = rng.next_u64();
        counts[(((r & 0xffff_ffff) * n64) >> 32) as usize] += 1;
        counts[(((r >> 32) * n64) >> 32) as usize] += 1;
    }
    if n % 2 == 1 {
        counts[(((rng.next_u64() >> 32) * n64) >> 32) as usize] += 1;
    }
}

/// Median (numpy convention) of the resample `counts` of sorted `s`.
pub(super) fn median_of_counts(s: &[f64], counts: &[u8]) -> f64 {
    let n = s.len();
    let k = n.div_ceil(2); // 1-based rank of the (lower) middle value
    let mut seen = 0usize;
    let mut lower: Option<f64> = None;
    for (v, &c) in s.iter().zip(counts) {
        seen += usize::from(c);
        if lower.is_none() && seen >= k {
            if n % 2 == 1 {
                return *v;
            }
            lower = Some(*v);
        }
        if let (Some(a), true) = (lower, seen > k) {
            return v - (v - a) * 0.5;
        }
    }
    s[n - 1]
}

/// Mean and variance of the mean (s²/n) of the resample `counts` of `s`,
/// values centred on `c` for a stable sum of squares.
fn moments_of_counts(s: &[f64], counts: &[u8], c: f64) -> (f64, f64) {
    // Four independent sums of each: no single chain of dependent
    // additions (the loop's cost before).
    let (mut a, mut b) = ([0.0f64; 4], [0.0f64; 4]);
    for (i, (v, &k)) in s.iter().zip(counts).enumerate() {
        let d = v - c;
        let kd = f64::from(k) * d;
        a[i % 4] += kd;
        b[i % 4] += kd * d;
    }
    let (s1, s2) = ((a[0] + a[1]) + (a[2] + a[3]), (b[0] + b[1]) + (b[2] + b[3]));
    let nf = s.len() as f64;
    let m = s1 / nf;
    let var = if s.len() > 1 {
        (s2 - s1 * m) / (nf - 1.0)
    } else {
        0.0
    };
    (c + m, var.max(0.0) / nf)
}

/// One replicate: (Δmedian %, studentized t of the log ratio, Δmean %),
/// NaN where undefined.
type Replicate = (f64, f64, f64);

/// Intervals of sorted `xs`, `ys` (both 1 ≤ n ≤ `DIRECT_MEDIAN_MAX`).
pub(super) fn bootstrap_shared(
    xs: &[f64],
    ys: &[f64],
    resamples: usize,
    seed: u64,
    conf: f64,
) -> BootResult {
    let (mx, my) = (quantile_sorted(xs, 0.5), quantile_sorted(ys, 0.5));
    let (ax, ay) = (mean(xs), mean(ys));
    let var_mean = |v: &[f64]| variance(v).map(|s| s / v.len() as f64);
    let centre = match (var_mean(xs), var_mean(ys)) {
        (Some(vx), Some(vy)) => log_ratio(ax, vx, ay, vy),
        _ => None,
    };
    let reps: Vec<Replicate> = draws(resamples, seed, 0, &|rng| {
        let (mut cx, mut cy) = ([0u8; DIRECT_MEDIAN_MAX], [0u8; DIRECT_MEDIAN_MAX]);
        resample_counts(rng, xs.len(), &mut cx);
        resample_counts(rng, ys.len(), &mut cy);
        let (cx, cy) = (&cx[..xs.len()], &cy[..ys.len()]);
        let med = rel(median_of_counts(xs, cx), median_of_counts(ys, cy));
        let (bx, vx) = moments_of_counts(xs, cx, ax);
        let (by, vy) = moments_of_counts(ys, cy, ay);
        let t = centre.and_then(|(l, _)| log_ratio(bx, vx, by, vy).map(|(lb, seb)| (lb - l) / seb));
        Some((
            med.unwrap_or(f64::NAN),
            t.unwrap_or(f64::NAN),
            rel(bx, by).unwrap_or(f64::NAN),
        ))
    });
    let column = |pick: fn(&Replicate) -> f64| -> Vec<f64> {
        reps.iter().map(pick).filter(|v| !v.is_nan()).collect()
    };
    let a_med = acceleration(&jackknife(&loo_medians(xs), mx, &loo_medians(ys), my));
    let median = bca(rel(mx, my), column(|r| r.0), a_med, conf);
    let mean = centre
        .and_then(|ls| studentized_limits(column(|r| r.1), resamples, (ax, ay), ls, conf))
        .or_else(|| {
            let a_mean = acceleration(&jackknife(&loo_means(xs), ax, &loo_means(ys), ay));
            bca(rel(ax, ay), column(|r| r.2), a_mean, conf)
        });
    BootResult { median, mean }
}
