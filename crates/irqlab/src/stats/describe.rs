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

/// Values above this magnitude are scaled before summing (sums of squares
/// of 2^500 would overflow); below it nothing is scaled, so ordinary data
/// give bit-for-bit the plain sums.
const SCALE_ABOVE: f64 = 1.0e150;

/// A power of two near the largest magnitude of `values` when that is
/// above 1e150 (dividing by it is exact), else 1.
pub fn scale_of(values: &[f64]) -> f64 {
    let big = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if big > SCALE_ABOVE && big.is_finite() {
        2f64.powi(big.log2().floor() as i32)
    } else {
        1.0
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
        return values.iter().sum::<f64>() / values.len() as f64;
    }
    values.iter().map(|v| v / k).sum::<f64>() / values.len() as f64 * k
}

/// Sample variance of `values / k` (ddof = 1).
fn scaled_variance(values: &[f64], k: f64) -> f64 {
    let m = values.iter().map(|v| v / k).sum::<f64>() / values.len() as f64;
    let ss: f64 = values.iter().map(|v| (v / k - m) * (v / k - m)).sum();
    ss / (values.len() - 1) as f64
}

/// Sample variance (ddof = 1); `None` with fewer than two values. Infinite
/// when the variance itself exceeds the float range (values near 1e308);
/// [`std_dev`] stays finite there.
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

/// numpy's `_lerp`: symmetric form for t >= 0.5 to stay monotone.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
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
    fn single_value_has_no_std() {
        let d = describe(&[7.0]).unwrap();
        assert_eq!(d.std, None);
        assert_eq!(d.p99, 7.0);
        assert!(describe(&[]).is_none());
    }
}
