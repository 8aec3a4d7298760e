//! The bootstrap of small samples (both sides ≤ `DIRECT_MEDIAN_MAX`
//! values, the bench-sized case), drawn side by side: each side's
//! replicates (median, mean, variance of the mean of one resample) are
//! drawn once from a stream of its own ([`SideDraws`]) and replicate `i`
//! of one side is paired with replicate `i` of the other. The two sides'
//! resamples are independent, as in a two-sample bootstrap, so each
//! interval's coverage is that of a bootstrap of its own; a caller that
//! compares one baseline with many candidates draws the baseline once
//! (`compare`: one [`SideDraws`] per variant and metric, seeded by their
//! names). One resample per side and replicate gives both the Δmedian and
//! the Δmean (studentized, or BCa) draw. A resample is kept as counts per
//! rank of the sorted values (two indices per 64 random bits,
//! multiply-shift on 32 bits: bias below n / 2³², at most 1.5·10⁻⁸ here),
//! and the median and the moments are read from the counts.

use super::{
    acceleration, bca, jackknife, log_ratio, loo_means, loo_medians, rel, rel_var_of_mean,
    studentized_limits, BootResult, Rng, DIRECT_MEDIAN_MAX,
};
use crate::stats::describe::{lerp, mean, quantile_sorted, scale_of, scaled};

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
            return lerp(a, *v, 0.5);
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

/// One side's sorted values and its bootstrap replicates, column by column.
/// The moments are summed on the values scaled near 1 when they are huge
/// or tiny (`describe::scale_of`); the means kept are in the values' unit.
#[derive(Debug, Clone)]
pub struct SideDraws {
    sorted: Vec<f64>,
    median: Vec<f64>,
    mean: Vec<f64>,
    /// ln(mean) where the mean is > 0, else NaN (the studentized Δmean).
    ln_mean: Vec<f64>,
    /// Variance of the mean over mean², the squared relative standard
    /// error (the delta-method SE of a log ratio adds two of them).
    rel_var: Vec<f64>,
}

impl SideDraws {
    /// `resamples` replicates of sorted `s` from `seed`; `None` unless
    /// 1 ≤ n ≤ `DIRECT_MEDIAN_MAX` (larger sides use the general path).
    pub fn new(sorted: Vec<f64>, resamples: usize, seed: u64) -> Option<Self> {
        let n = sorted.len();
        if n == 0 || n > DIRECT_MEDIAN_MAX {
            return None;
        }
        let k = scale_of(&sorted);
        let own = (k != 1.0).then(|| scaled(&sorted, k));
        let mut d = SideDraws {
            median: Vec::with_capacity(resamples),
            mean: Vec::with_capacity(resamples),
            ln_mean: Vec::with_capacity(resamples),
            rel_var: Vec::with_capacity(resamples),
            sorted,
        };
        let unit = own.as_deref().unwrap_or(&d.sorted);
        let centre = mean(unit);
        let ln_k = k.ln();
        let mut rng = Rng::new(seed);
        let mut counts = [0u8; DIRECT_MEDIAN_MAX];
        for _ in 0..resamples {
            resample_counts(&mut rng, n, &mut counts);
            let c = &counts[..n];
            let (m, v) = moments_of_counts(unit, c, centre);
            d.median.push(median_of_counts(&d.sorted, c));
            d.mean.push(m * k);
            d.ln_mean
                .push(if m > 0.0 { m.ln() + ln_k } else { f64::NAN });
            d.rel_var.push(v / (m * m));
        }
        Some(d)
    }

    /// The sorted values the replicates were drawn from.
    pub fn sorted(&self) -> &[f64] {
        &self.sorted
    }
}

/// One replicate's studentized t of the log ratio (NaN where undefined).
#[inline]
fn t_draw(x: &SideDraws, y: &SideDraws, i: usize, l: f64) -> f64 {
    let se = (x.rel_var[i] + y.rel_var[i]).sqrt();
    let lb = y.ln_mean[i] - x.ln_mean[i];
    if se > 0.0 && se.is_finite() && lb.is_finite() {
        (lb - l) / se
    } else {
        f64::NAN
    }
}

/// Intervals of `y` against `x` from the two sides' replicates (paired
/// by index; as many as the shorter side holds).
pub fn bootstrap_sides(x: &SideDraws, y: &SideDraws, conf: f64) -> BootResult {
    let (xs, ys) = (&x.sorted[..], &y.sorted[..]);
    let resamples = x.median.len().min(y.median.len());
    let (mx, my) = (quantile_sorted(xs, 0.5), quantile_sorted(ys, 0.5));
    let (ax, ay) = (mean(xs), mean(ys));
    let centre = match (rel_var_of_mean(xs), rel_var_of_mean(ys)) {
        (Some(rx), Some(ry)) => log_ratio(ax, rx, ay, ry),
        _ => None,
    };
    let column = |a: &[f64], b: &[f64]| -> Vec<f64> {
        a.iter()
            .zip(b)
            .take(resamples)
            .filter_map(|(&a, &b)| rel(a, b))
            .collect()
    };
    let a_med = acceleration(&jackknife(&loo_medians(xs), mx, &loo_medians(ys), my));
    let median = bca(rel(mx, my), column(&x.median, &y.median), a_med, conf);
    let mean = centre
        .and_then(|ls| {
            let t: Vec<f64> = (0..resamples)
                .map(|i| t_draw(x, y, i, ls.0))
                .filter(|v| !v.is_nan())
                .collect();
            studentized_limits(t, resamples, (ax, ay), ls, conf)
        })
        .or_else(|| {
            let a_mean = acceleration(&jackknife(&loo_means(xs), ax, &loo_means(ys), ay));
            bca(rel(ax, ay), column(&x.mean, &y.mean), a_mean, conf)
        });
    BootResult { median, mean }
}

/// The seed of one side's stream from a two-sample seed (`side` 0 or 1).
pub(super) fn side_seed(seed: u64, side: u64) -> u64 {
    (seed ^ side.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15)).rotate_left(23)
}

/// Intervals of sorted `xs`, `ys` (both 1 ≤ n ≤ `DIRECT_MEDIAN_MAX`).
pub(super) fn bootstrap_shared(
    xs: &[f64],
    ys: &[f64],
    resamples: usize,
    seed: u64,
    conf: f64,
) -> Option<BootResult> {
    if xs.len() > DIRECT_MEDIAN_MAX || ys.len() > DIRECT_MEDIAN_MAX {
        return None;
    }
    let x = SideDraws::new(xs.to_vec(), resamples, side_seed(seed, 0))?;
    let y = SideDraws::new(ys.to_vec(), resamples, side_seed(seed, 1))?;
    Some(bootstrap_sides(&x, &y, conf))
}
