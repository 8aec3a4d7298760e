//! Seeded percentile bootstrap of the relative change (percent) of the
//! median and of the mean of `y` against `x`. Each resample draws both
//! sides with replacement independently. The PRNG is xoshiro256** seeded
//! through SplitMix64, so results depend only on the seed and the data.

use super::describe::{mean, quantile_sorted, sorted};
use serde::Serialize;

/// Point estimate and interval of a relative change, in percent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelCi {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Bootstrap intervals for Δmedian % and Δmean %.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootResult {
    pub median: Option<RelCi>,
    pub mean: Option<RelCi>,
}

/// xoshiro256** generator.
pub struct Rng([u64; 4]);

impl Rng {
    /// Seed the state with SplitMix64.
    pub fn new(seed: u64) -> Self {
        let mut z = seed;
        let mut next = || {
            z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut v = z;
            v = (v ^ (v >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            v = (v ^ (v >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            v ^ (v >> 31)
        };
        Rng([next(), next(), next(), next()])
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let out = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// Uniform index in `0..n` (Lemire's multiply-shift; n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1).
    #[cfg(test)]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal deviate (Box–Muller).
    #[cfg(test)]
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

fn rel(base: f64, new: f64) -> Option<f64> {
    (base != 0.0 && base.is_finite() && new.is_finite()).then(|| (new - base) / base.abs() * 100.0)
}

fn resample(rng: &mut Rng, src: &[f64], buf: &mut [f64]) {
    for v in buf.iter_mut() {
        *v = src[rng.below(src.len())];
    }
}

/// Median by selection (O(n)); same value as the numpy median.
fn median_mut(buf: &mut [f64]) -> f64 {
    let n = buf.len();
    let k = n / 2;
    let (left, hi, _) = buf.select_nth_unstable_by(k, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        return hi;
    }
    let lo = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    hi - (hi - lo) * 0.5
}

fn interval(estimate: Option<f64>, mut draws: Vec<f64>, conf: f64) -> Option<RelCi> {
    let estimate = estimate?;
    if draws.is_empty() {
        return None;
    }
    draws.sort_unstable_by(f64::total_cmp);
    let a = (1.0 - conf) / 2.0;
    Some(RelCi {
        estimate,
        lo: quantile_sorted(&draws, a),
        hi: quantile_sorted(&draws, 1.0 - a),
    })
}

/// Percentile-bootstrap intervals; `None` parts when the baseline statistic is 0.
pub fn bootstrap(x: &[f64], y: &[f64], resamples: usize, seed: u64, conf: f64) -> BootResult {
    let est_med = rel(
        quantile_sorted(&sorted(x), 0.5),
        quantile_sorted(&sorted(y), 0.5),
    );
    let est_mean = rel(mean(x), mean(y));
    let mut rng = Rng::new(seed);
    let (mut bx, mut by) = (vec![0.0; x.len()], vec![0.0; y.len()]);
    let (mut meds, mut means) = (Vec::with_capacity(resamples), Vec::with_capacity(resamples));
    if !x.is_empty() && !y.is_empty() {
        for _ in 0..resamples {
            resample(&mut rng, x, &mut bx);
            resample(&mut rng, y, &mut by);
            if let Some(r) = rel(mean(&bx), mean(&by)) {
                means.push(r);
            }
            if let Some(r) = rel(median_mut(&mut bx), median_mut(&mut by)) {
                meds.push(r);
            }
        }
    }
    BootResult {
        median: interval(est_med, meds, conf),
        mean: interval(est_mean, means, conf),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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

    #[test]
    fn selection_median_matches_sorted() {
        let mut rng = Rng::new(9);
        for n in 1..30 {
            let v: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let want = quantile_sorted(&sorted(&v), 0.5);
            assert_eq!(median_mut(&mut v.clone()), want);
        }
    }

    #[test]
    fn below_is_in_range() {
        let mut rng = Rng::new(3);
        assert!((0..1000).all(|_| rng.below(7) < 7));
    }
}
