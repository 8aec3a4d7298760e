//! Descriptive rows as pandas `describe(percentiles=[.5, .9, .99])` prints
//! them: count, mean, sample std (ddof = 1), min, p50, p90, p99, max, with
//! numpy's default 'linear' percentile interpolation. Also mean/median helpers.

use serde::Serialize;

/// One column of the describe table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Describe {
    pub count: usize,
    pub mean: f64,
    /// `None` with fewer than two values (pandas prints NaN).
    pub std: Option<f64>,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// Names of the rows, in pandas order.
pub const ROWS: [&str; 8] = ["count", "mean", "std", "min", "50%", "90%", "99%", "max"];

impl Describe {
    /// Row values in [`ROWS`] order (`None` where undefined).
    pub fn rows(&self) -> [Option<f64>; 8] {
        [
            Some(self.count as f64),
            Some(self.mean),
            self.std,
            Some(self.min),
            Some(self.p50),
            Some(self.p90),
            Some(self.p99),
            Some(self.max),
        ]
    }
}

/// Describe `values`; `None` when empty.
pub fn describe(values: &[f64]) -> Option<Describe> {
    if values.is_empty() {
        return None;
    }
    let sorted = sorted(values);
    Some(Describe {
        count: values.len(),
        mean: mean(values),
        std: std_dev(values),
        min: sorted[0],
        p50: quantile_sorted(&sorted, 0.5),
        p90: quantile_sorted(&sorted, 0.9),
        p99: quantile_sorted(&sorted, 0.99),
        max: sorted[sorted.len() - 1],
    })
}

/// A sorted copy (total order; inputs never hold NaN).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Values whose largest magnitude lies outside `SCALE_BELOW..=SCALE_ABOVE`
/// are scaled by a power of two before summing: squares of 1e200 would
/// overflow and squares of 1e-200 underflow to 0. Inside the range nothing
/// is scaled, so ordinary data give bit-for-bit the plain sums.
const SCALE_ABOVE: f64 = 1.0e100;
const SCALE_BELOW: f64 = 1.0e-100;

/// The largest magnitude of `values` (0 when empty).
fn max_abs(values: &[f64]) -> f64 {
    values.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

/// 2^e for e in -1022..=1023, exactly.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e.clamp(-1022, 1023) + 1023) as u64) << 52)
}

/// The power of two at or just below `big` when `big` is outside
/// `SCALE_BELOW..=SCALE_ABOVE` (dividing by it is exact and brings the
/// largest value near 1), else 1.
fn scale_for(big: f64) -> f64 {
    if big.is_finite() && big > 0.0 && !(SCALE_BELOW..=SCALE_ABOVE).contains(&big) {
        pow2(big.log2().floor() as i32)
    } else {
        1.0
    }
}

/// The scale of `values` (see `scale_for`): 1 for ordinary data.
pub fn scale_of(values: &[f64]) -> f64 {
    scale_for(max_abs(values))
}

/// One scale for two samples compared with each other (their differences
/// and ratios keep their meaning).
pub fn joint_scale(a: &[f64], b: &[f64]) -> f64 {
    scale_for(max_abs(a).max(max_abs(b)))
}

/// `values / k`.
pub fn scaled(values: &[f64], k: f64) -> Vec<f64> {
    values.iter().map(|v| v / k).collect()
}

/// Relative change of `new` against `base` in percent of |base|; `None`
/// when `base` is 0 or either is not finite. Where the difference
/// overflows (signs opposite near the float limit) it is taken as
/// new/|base| − sign(base); ±inf only when the ratio itself is beyond
/// the float range.
pub fn rel_pct(base: f64, new: f64) -> Option<f64> {
    if base == 0.0 || !base.is_finite() || !new.is_finite() {
        return None;
    }
    let d = new - base;
    let r = if d.is_finite() {
        d / base.abs()
    } else {
        new / base.abs() - base.signum()
    };
    Some(r * 100.0)
}

/// The plain left-to-right sum (ordinary data keep the bits of the usual
/// sum), unless it lost more than 1e-12 of the total to cancellation:
/// then the sum with Neumaier's compensation, which keeps
/// what each addition rounds away, so that large values of opposite signs
/// do not wipe out the small ones between them (`6, 7, 8, 1e308, -1e308`
/// sums to 21, not 0).
pub fn sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0_f64, 0.0_f64);
    for v in values {
        let t = s + v;
        c += if s.abs() >= v.abs() {
            (s - t) + v
        } else {
            (v - t) + s
        };
        s = t;
    }
    let whole = s + c;
    match c.abs() > whole.abs() * 1e-12 {
        true => whole,
        false => s,
    }
}

/// Arithmetic mean (0 for an empty slice); finite for any finite values
/// (scaled before summing when they are huge).
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let k = scale_of(values);
    if k == 1.0 {
        return sum(values.iter().copied()) / values.len() as f64;
    }
    sum(values.iter().map(|v| v / k)) / values.len() as f64 * k
}

/// Sample variance of `values / k` (ddof = 1).
fn scaled_variance(values: &[f64], k: f64) -> f64 {
    let m = sum(values.iter().map(|v| v / k)) / values.len() as f64;
    let ss: f64 = values.iter().map(|v| (v / k - m) * (v / k - m)).sum();
    ss / (values.len() - 1) as f64
}

/// Sample variance (ddof = 1); `None` with fewer than two values. Infinite
/// when the variance itself exceeds the float range (values near 1e308),
/// 0 when it is below it (values near 1e-300); [`std_dev`] is right
/// there.
pub fn variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let k = scale_of(values);
    if k == 1.0 {
        let m = mean(values);
        let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
        return Some(ss / (values.len() - 1) as f64);
    }
    Some(scaled_variance(values, k) * k * k)
}

/// Sample standard deviation (ddof = 1).
pub fn std_dev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let k = scale_of(values);
    if k == 1.0 {
        return variance(values).map(f64::sqrt);
    }
    Some(scaled_variance(values, k).sqrt() * k)
}

/// Median with numpy's convention (mean of the two middle values).
pub fn median(values: &[f64]) -> f64 {
    quantile_sorted(&sorted(values), 0.5)
}

/// numpy 'linear' quantile of an already sorted, non-empty slice.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize;
    if lo + 1 >= n {
        return sorted[n - 1];
    }
    lerp(sorted[lo], sorted[lo + 1], h - lo as f64)
}

/// numpy's `_lerp`: symmetric form for t >= 0.5 to stay monotone. Where
/// b − a overflows (signs opposite near the float limit) or an end is
/// infinite, the weighted sum of the ends.
pub fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if !diff.is_finite() {
        return if t <= 0.0 {
            a
        } else if t >= 1.0 {
            b
        } else {
            a * (1.0 - t) + b * t
        };
    }
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn huge_values_of_opposite_signs_keep_the_small_ones_in_the_mean() {
        let v = [6.0, 7.0, 8.0, 1e308, -1e308];
        assert_eq!(sum(v.iter().copied()), 21.0);
        assert!((mean(&v) - 4.2).abs() < 1e-12, "{}", mean(&v));
        let w = [6.0, 7.0, 8.0, 1e16, -1e16];
        assert_eq!(mean(&w), 4.2);
    }

    #[test]
    fn pandas_like() {
        let d = describe(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(d.count, 4);
        assert_eq!(d.mean, 2.5);
        assert!((d.std.unwrap() - 1.290_994_448_735_805_6).abs() < 1e-15);
        assert_eq!((d.min, d.p50, d.max), (1.0, 2.5, 4.0));
        assert!((d.p90 - 3.7).abs() < 1e-12);
        assert!((d.p99 - 3.97).abs() < 1e-12);
    }

    #[test]
    fn huge_values_do_not_overflow_the_mean_or_std() {
        let v = [1e308, 1.5e308, 1.2e308];
        let d = describe(&v).unwrap();
        assert!(
            (d.mean / 1.233_333_333_333_333_3e308 - 1.0).abs() < 1e-12,
            "{d:?}"
        );
        let sd = d.std.unwrap();
        assert!(sd.is_finite() && (sd / 2.516_611_478_423_583e307 - 1.0).abs() < 1e-12);
        // Ordinary data: the plain sums, unscaled.
        assert_eq!(scale_of(&[1.0, 2.0]), 1.0);
        assert_eq!(mean(&[0.1, 0.2, 0.3]), (0.1 + 0.2 + 0.3) / 3.0);
    }

    #[test]
    fn tiny_values_keep_their_spread() {
        let v = [1e-300, 1.1e-300, 1.2e-300];
        let d = describe(&v).unwrap();
        let sd = d.std.unwrap();
        assert!((sd / 1e-301 - 1.0).abs() < 1e-12, "{d:?}");
        assert!((d.mean / 1.1e-300 - 1.0).abs() < 1e-12, "{d:?}");
    }

    #[test]
    fn quantiles_and_changes_across_the_float_range() {
        // The difference of the ends overflows; the quantile does not.
        let s = [-1.7e308, 1.7e308];
        assert_eq!(quantile_sorted(&s, 0.5), 0.0);
        assert!((quantile_sorted(&s, 0.75) / 0.85e308 - 1.0).abs() < 1e-12);
        assert_eq!(rel_pct(1.7e308, -1.7e308), Some(-200.0));
        assert_eq!(rel_pct(-1.7e308, 1.7e308), Some(200.0));
        assert_eq!(rel_pct(2.0, 3.0), Some(50.0));
        assert_eq!(rel_pct(0.0, 3.0), None);
        assert_eq!(rel_pct(1e-300, 1e300), Some(f64::INFINITY));
        let m = mean(&[1e308, 1.0, 1e308, 1.0]);
        assert!((m / 5e307 - 1.0).abs() < 1e-12, "{m}");
        assert_eq!(scale_of(&[1e-300]), pow2(-997));
        assert_eq!(scale_of(&[4.9e-324]), pow2(-1022));
    }

    #[test]
    fn single_value_has_no_std() {
        let d = describe(&[7.0]).unwrap();
        assert_eq!(d.std, None);
        assert_eq!(d.p99, 7.0);
        assert!(describe(&[]).is_none());
    }
}
