//! Seeded bootstrap intervals of the relative change (percent) of the
//! median (BCa: bias-corrected and accelerated, Efron & Tibshirani 1993,
//! ch. 14) and of the mean (studentized on the log ratio when both means
//! are positive, BCa otherwise) of `y` against `x`. Each resample draws both sides with
//! replacement independently; the RNG is the project's one seeded
//! generator, so results depend only on the seed and the data.
//!
//! Speed: the median of a resample is drawn exactly without building the
//! resample: with the data sorted, the k-th smallest of n uniform indices is
//! ⌊n·U₍k₎⌋ with U₍k₎ ~ Beta(k, n−k+1), and the next order statistic follows
//! from one more Beta(1, n−k) draw, so a median costs O(1). Means need the
//! n draws; they run on all CPUs in fixed chunks (same numbers whatever the
//! CPU count) and their count is capped so that resamples × (m+n) stays
//! under [`MEAN_DRAW_BUDGET`] (never below [`MIN_MEAN_RESAMPLES`]). The
//! interval limits are found by selection, not by sorting the draws.

use super::describe::{joint_scale, lerp, mean, quantile_sorted, scale_of, scaled, sorted};
use super::special::{norm_ppf, norm_sf};
pub use irqlab_core::rng::Rng;
use serde::Serialize;

/// Point estimate and interval of a relative change, in percent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelCi {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
    /// Resamples behind the interval.
    pub resamples: usize,
}

/// Bootstrap intervals for Δmedian % and Δmean %.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootResult {
    pub median: Option<RelCi>,
    pub mean: Option<RelCi>,
}

/// Most single-value draws spent on the Δmean bootstrap.
pub const MEAN_DRAW_BUDGET: usize = 200_000_000;
/// Fewest Δmean resamples whatever the budget says.
pub const MIN_MEAN_RESAMPLES: usize = 1000;
/// Fixed number of work chunks (results do not depend on the CPU count).
const CHUNKS: usize = 16;

fn rel(base: f64, new: f64) -> Option<f64> {
    super::describe::rel_pct(base, new)
}

/// Gamma(a, 1) deviate for a ≥ 1 (Marsaglia & Tsang 2000).
fn gamma(rng: &mut Rng, a: f64) -> f64 {
    let d = a - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let z = rng.normal();
        let v = (1.0 + c * z).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = rng.unit();
        // The squeeze accepts most draws without the logarithms; it lies
        // inside the exact region, so the deviates are the same.
        if u < 1.0 - 0.0331 * (z * z) * (z * z) || u.ln() < 0.5 * z * z + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// Beta(a, b) deviate (a, b ≥ 1).
fn beta(rng: &mut Rng, a: f64, b: f64) -> f64 {
    let x = gamma(rng, a);
    x / (x + gamma(rng, b))
}

/// Up to this many values a resample median is the real thing: n indices
/// counted in a histogram over sorted `s` (for small n cheaper than the
/// Beta deviates, whose gamma draws cost ~10 transcendental functions).
const DIRECT_MEDIAN_MAX: usize = 64;

/// Uniform index in `0..n` by a multiply-shift (Lemire): no division in
/// the resampling loops; the bias is below n / 2^64.
#[inline]
fn draw_index(rng: &mut Rng, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// The median (numpy convention) of one resample of sorted `s`: drawn
/// directly up to [`DIRECT_MEDIAN_MAX`] values, else exactly through the
/// order statistics of uniform indices.
fn resample_median(rng: &mut Rng, s: &[f64]) -> f64 {
    match s.len() {
        1 => s[0],
        n if n <= DIRECT_MEDIAN_MAX => resample_median_direct(rng, s),
        _ => resample_median_beta(rng, s),
    }
}

/// One real resample of sorted `s` (2 ≤ n ≤ [`DIRECT_MEDIAN_MAX`]), as
/// counts per rank, and its median.
fn resample_median_direct(rng: &mut Rng, s: &[f64]) -> f64 {
    let n = s.len();
    let mut counts = [0u8; DIRECT_MEDIAN_MAX];
    for _ in 0..n {
        counts[draw_index(rng, n)] += 1;
    }
    shared::median_of_counts(s, &counts[..n])
}

/// The median of one resample of sorted `s` (n ≥ 2) through the order
/// statistics of uniform indices: O(1) whatever n.
fn resample_median_beta(rng: &mut Rng, s: &[f64]) -> f64 {
    let n = s.len();
    let at = |u: f64| s[((u * n as f64) as usize).min(n - 1)];
    let k = n.div_ceil(2); // 1-based rank of the (lower) middle value
    let uk = beta(rng, k as f64, (n - k + 1) as f64);
    if n % 2 == 1 {
        return at(uk);
    }
    let next = uk + (1.0 - uk) * (1.0 - rng.unit().powf(1.0 / (n - k) as f64));
    lerp(at(uk), at(next), 0.5)
}

/// Mean and variance of the mean (s²/n) of one resample of `v`, with the
/// values centred on `c` for a stable sum of squares.
fn resample_moments(rng: &mut Rng, v: &[f64], c: f64) -> (f64, f64) {
    let n = v.len();
    // Four independent sums: the random loads overlap instead of waiting
    // on one chain of additions.
    let (mut a, mut b) = ([0.0f64; 4], [0.0f64; 4]);
    for i in 0..n {
        let d = v[draw_index(rng, n)] - c;
        a[i % 4] += d;
        b[i % 4] += d * d;
    }
    let (s1, s2) = ((a[0] + a[1]) + (a[2] + a[3]), (b[0] + b[1]) + (b[2] + b[3]));
    let nf = n as f64;
    let m = s1 / nf;
    let var = if n > 1 {
        (s2 - s1 * m) / (nf - 1.0)
    } else {
        0.0
    };
    (c + m, var.max(0.0) / nf)
}

/// log(ȳ/x̄) and its delta-method standard error (both means > 0), from
/// the means and the relative variances of the means, var(x̄)/x̄².
fn log_ratio(mx: f64, rx: f64, my: f64, ry: f64) -> Option<(f64, f64)> {
    let se = (rx + ry).sqrt();
    if !(mx > 0.0 && my > 0.0 && se > 0.0 && se.is_finite()) {
        return None;
    }
    let r = my / mx;
    let l = if r.is_finite() && r > 0.0 {
        r.ln()
    } else {
        my.ln() - mx.ln()
    };
    Some((l, se))
}

/// var(x̄)/x̄² of `v` (the squared relative standard error of its mean),
/// computed on values scaled near 1 so that neither the variance nor x̄²
/// leaves the float range; `None` with fewer than two values.
fn rel_var_of_mean(v: &[f64]) -> Option<f64> {
    let k = scale_of(v);
    let own;
    let v = if k == 1.0 {
        v
    } else {
        own = scaled(v, k);
        &own[..]
    };
    let m = mean(v);
    super::describe::variance(v).map(|s| s / v.len() as f64 / (m * m))
}

/// Studentized (bootstrap-t) interval of Δmean % on the log-ratio scale,
/// for positive means: L̂ − t*₁₋α/₂·SE … L̂ − t*α/₂·SE, mapped back by
/// exp(L) − 1. Better coverage than BCa for small skewed samples (the
/// simulation table in docs/compare-statistics.md).
fn studentized(x: &[f64], y: &[f64], resamples: usize, seed: u64, conf: f64) -> Option<RelCi> {
    let (mx, my) = (mean(x), mean(y));
    let (l, se) = log_ratio(mx, rel_var_of_mean(x)?, my, rel_var_of_mean(y)?)?;
    let work = resamples * (x.len() + y.len());
    let t = draws(resamples, seed, work, &|rng| {
        let (ax, vx) = resample_moments(rng, x, mx);
        let (ay, vy) = resample_moments(rng, y, my);
        let (lb, seb) = log_ratio(ax, vx / (ax * ax), ay, vy / (ay * ay))?;
        Some((lb - l) / seb)
    });
    studentized_limits(t, resamples, (mx, my), (l, se), conf)
}

/// The studentized interval from the t draws (`None` when fewer than half
/// the resamples gave one): means `(x̄, ȳ)`, the data's log ratio and its
/// standard error `(L̂, SE)`.
fn studentized_limits(
    mut t: Vec<f64>,
    resamples: usize,
    (mx, my): (f64, f64),
    (l, se): (f64, f64),
    conf: f64,
) -> Option<RelCi> {
    if t.len() < resamples / 2 {
        return None;
    }
    let tail = (1.0 - conf) / 2.0;
    let (t_lo, t_hi) = (
        quantile_select(&mut t, tail),
        quantile_select(&mut t, 1.0 - tail),
    );
    let back = |v: f64| (v.exp() - 1.0) * 100.0;
    Some(RelCi {
        estimate: rel(mx, my)?,
        lo: back(l - t_hi * se),
        hi: back(l - t_lo * se),
        resamples: t.len(),
    })
}

/// Draws of `stat(x*) → stat(y*)` relative change, in fixed chunks, on
/// scoped threads when the work is large.
fn draws<T: Send>(
    resamples: usize,
    seed: u64,
    work: usize,
    f: &(dyn Fn(&mut Rng) -> Option<T> + Sync),
) -> Vec<T> {
    let chunk = |c: usize| {
        let mut rng = Rng::new(seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let count = resamples / CHUNKS + usize::from(c < resamples % CHUNKS);
        (0..count).filter_map(|_| f(&mut rng)).collect::<Vec<T>>()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 || work < 2_000_000 {
        return (0..CHUNKS).flat_map(chunk).collect();
    }
    let chunk = &chunk;
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads.min(CHUNKS))
            .map(|t| {
                sc.spawn(move || {
                    (t..CHUNKS)
                        .step_by(threads.min(CHUNKS))
                        .map(|c| (c, chunk(c)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut parts: Vec<(usize, Vec<T>)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect();
        parts.sort_by_key(|(c, _)| *c);
        parts.into_iter().flat_map(|(_, v)| v).collect()
    })
}

/// numpy-'linear' quantile of unsorted `v` by selection (v non-empty).
fn quantile_select(v: &mut [f64], q: f64) -> f64 {
    let n = v.len();
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let (_, a, right) = v.select_nth_unstable_by(lo, f64::total_cmp);
    let a = *a;
    if lo + 1 >= n {
        return a;
    }
    let b = right.iter().copied().fold(f64::INFINITY, f64::min);
    lerp(a, b, h - lo as f64)
}

/// Acceleration from two-sample jackknife values (Efron & Tibshirani 14.15).
/// It does not depend on the values' scale: when their cubes overflow
/// they are taken relative to the largest; 0 when still undefined.
fn acceleration(sides: &[Vec<f64>]) -> f64 {
    let a = acceleration_of(sides, 1.0);
    if a.is_finite() {
        return a;
    }
    let big = sides.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let a = acceleration_of(sides, big);
    if a.is_finite() {
        a
    } else {
        0.0
    }
}

fn acceleration_of(sides: &[Vec<f64>], k: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for th in sides {
        let n = th.len() as f64;
        if th.len() < 2 {
            continue;
        }
        let bar = th.iter().map(|t| t / k).sum::<f64>() / n;
        let u: Vec<f64> = th.iter().map(|t| (n - 1.0) * (bar - t / k)).collect();
        num += u.iter().map(|u| u.powi(3)).sum::<f64>() / n.powi(3);
        den += u.iter().map(|u| u * u).sum::<f64>() / (n * n);
    }
    if den > 0.0 {
        num / (6.0 * den.powf(1.5))
    } else {
        0.0
    }
}

/// BCa interval from the draws, the estimate and the acceleration;
/// percentile limits when the corrections are undefined.
fn bca(estimate: Option<f64>, mut d: Vec<f64>, a: f64, conf: f64) -> Option<RelCi> {
    let estimate = estimate?;
    if d.is_empty() {
        return None;
    }
    let b = d.len() as f64;
    let below = d.iter().filter(|&&v| v < estimate).count() as f64;
    let equal = d.iter().filter(|&&v| v == estimate).count() as f64;
    let share = ((below + 0.5 * equal) / b).clamp(0.5 / b, 1.0 - 0.5 / b);
    let z0 = norm_ppf(share);
    let tail = (1.0 - conf) / 2.0;
    let adj = |z: f64| {
        let w = z0 + z;
        let q = 1.0 - norm_sf(z0 + w / (1.0 - a * w));
        if q.is_finite() {
            q
        } else {
            0.5
        }
    };
    let (q_lo, q_hi) = (adj(norm_ppf(tail)), adj(norm_ppf(1.0 - tail)));
    let resamples = d.len();
    Some(RelCi {
        estimate,
        lo: quantile_select(&mut d, q_lo),
        hi: quantile_select(&mut d, q_hi),
        resamples,
    })
}

/// Leave-one-out medians of sorted `s` (numpy convention), one per value.
fn loo_medians(s: &[f64]) -> Vec<f64> {
    let n = s.len();
    if n < 2 {
        return Vec::new();
    }
    let at = |r: usize, skip: usize| if r < skip { s[r] } else { s[r + 1] };
    (0..n)
        .map(|i| {
            let m = n - 1;
            if m % 2 == 1 {
                at(m / 2, i)
            } else {
                lerp(at(m / 2 - 1, i), at(m / 2, i), 0.5)
            }
        })
        .collect()
}

/// Leave-one-out means, on values scaled near 1 when the sum could
/// overflow (each mean lies within the values, so it fits unscaled).
fn loo_means(v: &[f64]) -> Vec<f64> {
    let n = v.len();
    if n < 2 {
        return Vec::new();
    }
    let k = scale_of(v);
    let sum: f64 = v.iter().map(|x| x / k).sum();
    v.iter()
        .map(|x| (sum - x / k) / (n - 1) as f64 * k)
        .collect()
}

/// Jackknife values of the relative change, per side.
fn jackknife(lx: &[f64], sx: f64, ly: &[f64], sy: f64) -> [Vec<f64>; 2] {
    [
        lx.iter().filter_map(|&b| rel(b, sy)).collect(),
        ly.iter().filter_map(|&v| rel(sx, v)).collect(),
    ]
}

/// From this many values per side on, Δmean's interval is the normal
/// (delta-method) one instead of a bootstrap: the sampling distribution of
/// a mean of 50 000 values is normal to far better than the interval's
/// Monte-Carlo error, and resampling would cost resamples × n.
pub const NORMAL_MEAN_FROM: usize = 50_000;

/// Δmean % from the delta method: on log(ȳ/x̄) when both means are
/// positive, else on (ȳ − x̄)/|x̄|. `resamples` 0 marks it.
fn normal_mean(x: &[f64], y: &[f64], conf: f64) -> Option<RelCi> {
    let var_mean = |v: &[f64]| super::describe::variance(v).map(|s| s / v.len() as f64);
    let (mx, my) = (mean(x), mean(y));
    let (vx, vy) = (var_mean(x)?, var_mean(y)?);
    let z = norm_ppf(1.0 - (1.0 - conf) / 2.0);
    let estimate = rel(mx, my)?;
    if let Some((l, se)) = log_ratio(mx, vx / (mx * mx), my, vy / (my * my)) {
        let back = |v: f64| (v.exp() - 1.0) * 100.0;
        return Some(RelCi {
            estimate,
            lo: back(l - z * se),
            hi: back(l + z * se),
            resamples: 0,
        });
    }
    // d = (ȳ − x̄)/|x̄|: var ≈ vy/x̄² + ȳ² vx/x̄⁴.
    let se = (vy / (mx * mx) + my * my * vx / mx.powi(4)).sqrt() * 100.0;
    (se.is_finite()).then_some(RelCi {
        estimate,
        lo: estimate - z * se,
        hi: estimate + z * se,
        resamples: 0,
    })
}

/// BCa intervals; `None` parts when the baseline statistic is 0. Values
/// beyond the ordinary range are scaled by one power of two first
/// (relative changes do not depend on it), so no sum overflows.
pub fn bootstrap(x: &[f64], y: &[f64], resamples: usize, seed: u64, conf: f64) -> BootResult {
    if x.is_empty() || y.is_empty() {
        return BootResult {
            median: None,
            mean: None,
        };
    }
    let k = joint_scale(x, y);
    if k != 1.0 {
        return bootstrap(&scaled(x, k), &scaled(y, k), resamples, seed, conf);
    }
    let (xs, ys) = (sorted(x), sorted(y));
    if let Some(r) = shared::bootstrap_shared(&xs, &ys, resamples, seed, conf) {
        return r;
    }
    let (mx, my) = (quantile_sorted(&xs, 0.5), quantile_sorted(&ys, 0.5));
    let (ax, ay) = (mean(x), mean(y));
    let med_draws = draws(resamples, seed, 0, &|rng| {
        rel(resample_median(rng, &xs), resample_median(rng, &ys))
    });
    let work_per = x.len() + y.len();
    let mean_resamples = resamples.min((MEAN_DRAW_BUDGET / work_per).max(MIN_MEAN_RESAMPLES));
    let mean_seed = seed.rotate_left(17) ^ 0x6d65_616e;
    let a_med = acceleration(&jackknife(&loo_medians(&xs), mx, &loo_medians(&ys), my));
    if x.len().min(y.len()) >= NORMAL_MEAN_FROM {
        return BootResult {
            median: bca(rel(mx, my), med_draws, a_med, conf),
            mean: normal_mean(x, y, conf),
        };
    }
    let mean = studentized(x, y, mean_resamples, mean_seed, conf).or_else(|| {
        let mean_draws = draws(
            mean_resamples,
            mean_seed,
            mean_resamples * work_per,
            &|rng| {
                rel(
                    resample_moments(rng, x, ax).0,
                    resample_moments(rng, y, ay).0,
                )
            },
        );
        let a_mean = acceleration(&jackknife(&loo_means(x), ax, &loo_means(y), ay));
        bca(rel(ax, ay), mean_draws, a_mean, conf)
    });
    BootResult {
        median: bca(rel(mx, my), med_draws, a_med, conf),
        mean,
    }
}

#[path = "bootstrap_shared.rs"]
mod shared;
pub use shared::{bootstrap_sides, SideDraws};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn side_draws_pair_like_the_two_sample_call() {
        let x: Vec<f64> = (0..12).map(|i| 100.0 + f64::from(i % 5)).collect();
        let y: Vec<f64> = (0..15).map(|i| 104.0 + f64::from(i % 4)).collect();
        let b = bootstrap(&x, &y, 1000, 9, 0.95);
        let dx = SideDraws::new(sorted(&x), 1000, shared::side_seed(9, 0)).unwrap();
        let dy = SideDraws::new(sorted(&y), 1000, shared::side_seed(9, 1)).unwrap();
        assert_eq!(bootstrap_sides(&dx, &dy, 0.95), b);
        let m = b.median.unwrap();
        assert!(
            m.lo > 0.0 && m.lo <= m.estimate && m.estimate <= m.hi,
            "{m:?}"
        );
        assert_eq!(m.resamples, 1000);
        assert!(SideDraws::new(vec![1.0; DIRECT_MEDIAN_MAX + 1], 10, 1).is_none());
        assert!(SideDraws::new(Vec::new(), 10, 1).is_none());
    }

    #[test]
    fn seeded_and_covers_shift() {
        let mut rng = Rng::new(1);
        let x: Vec<f64> = (0..30).map(|_| 100.0 + rng.normal()).collect();
        let y: Vec<f64> = (0..30).map(|_| 110.0 + rng.normal()).collect();
        let a = bootstrap(&x, &y, 2000, 7, 0.95);
        let b = bootstrap(&x, &y, 2000, 7, 0.95);
        assert_eq!(a, b);
        let m = a.mean.unwrap();
        assert!(m.lo < 10.0 && m.hi > 10.0 - 1.5 && m.lo > 8.0, "{m:?}");
        assert!(bootstrap(&[0.0, 0.0], &[1.0, 2.0], 100, 1, 0.95)
            .median
            .is_none());
    }

    /// The exact order-statistic draw has the distribution of the median of
    /// a real resample (checked on its mean and spread, n odd and even).
    #[test]
    fn order_statistic_median_matches_real_resamples() {
        for (n, direct) in [
            (7usize, false),
            (8, false),
            (7, true),
            (8, true),
            (65, false),
        ] {
            let s: Vec<f64> = (0..n).map(|i| (i * i) as f64).collect();
            let (mut rng, mut rng2) = (Rng::new(5), Rng::new(6));
            let k = 40_000;
            let draw = |rng: &mut Rng| match direct {
                true => resample_median_direct(rng, &s),
                false => resample_median_beta(rng, &s),
            };
            let fast: Vec<f64> = (0..k).map(|_| draw(&mut rng)).collect();
            let slow: Vec<f64> = (0..k)
                .map(|_| {
                    let r: Vec<f64> = (0..n).map(|_| s[rng2.index(n)]).collect();
                    quantile_sorted(&sorted(&r), 0.5)
                })
                .collect();
            let (mf, ms) = (mean(&fast), mean(&slow));
            assert!((mf - ms).abs() < 0.02 * ms, "n {n}: {mf} vs {ms}");
            let (qf, qs) = (
                quantile_sorted(&sorted(&fast), 0.9),
                quantile_sorted(&sorted(&slow), 0.9),
            );
            assert!((qf - qs).abs() <= 0.05 * qs, "n {n}: p90 {qf} vs {qs}");
        }
    }

    #[test]
    fn values_near_the_float_limit_resample_like_ordinary_ones() {
        // 1e308 and 1 mixed: every resample's mean fits (their sums
        // overflowed, and the resamples holding many 1e308 were dropped).
        let mix = |every: usize| -> Vec<f64> {
            (0..10)
                .map(|i| if i % every == 0 { 1e308 } else { 1.0 })
                .collect()
        };
        let m = bootstrap(&mix(2), &mix(3), 1000, 3, 0.95).mean.unwrap();
        assert!(m.resamples >= 990, "{m:?}");
        // Opposite signs near the limit, both paths (≤ 64 and > 64
        // values): the intervals of values 1e308 times smaller.
        for n in [20, 100] {
            let unit: Vec<f64> = (0..n).map(|i| 0.9 + 0.01 * (i % 7) as f64).collect();
            let neg: Vec<f64> = (0..n).map(|i| -1.0 - 0.013 * (i % 11) as f64).collect();
            let big = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| x * 1e308).collect() };
            let a = bootstrap(&unit, &neg, 500, 5, 0.95);
            let b = bootstrap(&big(&unit), &big(&neg), 500, 5, 0.95);
            for (x, y) in [(&a.median, &b.median), (&a.mean, &b.mean)] {
                let (x, y) = (x.as_ref().unwrap(), y.as_ref().unwrap());
                for (p, q) in [(x.estimate, y.estimate), (x.lo, y.lo), (x.hi, y.hi)] {
                    assert!((p - q).abs() < 1e-6 * p.abs(), "n {n}: {x:?} vs {y:?}");
                }
            }
        }
    }

    #[test]
    fn selection_quantile_matches_sorted() {
        let mut rng = Rng::new(9);
        for n in 1..30 {
            let v: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            for q in [0.0, 0.025, 0.5, 0.975, 1.0] {
                let want = quantile_sorted(&sorted(&v), q);
                assert_eq!(quantile_select(&mut v.clone(), q), want);
            }
        }
    }

    #[test]
    fn loo_medians_are_medians_without_one() {
        let s = [1.0, 2.0, 4.0, 8.0, 16.0];
        for (i, m) in loo_medians(&s).iter().enumerate() {
            let mut r = s.to_vec();
            r.remove(i);
            assert_eq!(*m, quantile_sorted(&r, 0.5));
        }
    }
}

/// Interval coverage by simulation, seeded and small enough
/// for `cargo test`; `tools/compare-simulate.sh` prints the full table into
/// docs/compare-statistics.md.
#[cfg(test)]
pub mod coverage {
    use super::*;

    /// Share of `runs` simulated pairs (n per side, a known +3 % scale
    /// shift) whose 95 % Δmean and Δmedian intervals cover 3 %.
    pub fn coverage(
        n: usize,
        lognormal: bool,
        runs: usize,
        resamples: usize,
        seed: u64,
    ) -> (f64, f64) {
        let mut rng = Rng::new(seed);
        let mut draw = |scale: f64| -> Vec<f64> {
            (0..n)
                .map(|_| {
                    let z = rng.normal();
                    scale
                        * if lognormal {
                            (0.5 * z).exp()
                        } else {
                            1.0 + 0.05 * z
                        }
                })
                .collect()
        };
        let (mut cm, mut cmed) = (0usize, 0usize);
        for r in 0..runs {
            let x = draw(100.0);
            let y = draw(103.0);
            let b = bootstrap(&x, &y, resamples, seed ^ r as u64, 0.95);
            let covers =
                |ci: &Option<RelCi>| ci.as_ref().is_some_and(|c| c.lo <= 3.0 && 3.0 <= c.hi);
            cm += usize::from(covers(&b.mean));
            cmed += usize::from(covers(&b.median));
        }
        (cm as f64 / runs as f64, cmed as f64 / runs as f64)
    }

    #[test]
    fn item7_bca_intervals_cover_at_n10_and_n20() {
        for n in [10, 20] {
            for lognormal in [false, true] {
                let (m, med) = coverage(n, lognormal, 300, 500, 11 + n as u64);
                eprintln!("n {n} lognormal {lognormal}: mean {m:.3} median {med:.3}");
                assert!(
                    (0.915..=0.985).contains(&m),
                    "n {n} lognormal {lognormal}: mean {m}"
                );
                assert!(
                    (0.915..=0.99).contains(&med),
                    "n {n} lognormal {lognormal}: median {med}"
                );
            }
        }
    }
}
