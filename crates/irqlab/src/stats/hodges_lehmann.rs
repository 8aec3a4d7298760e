//! Hodges–Lehmann shift of `y` against `x`: the median of all pairwise
//! differences y_j − x_i, with the distribution-free confidence interval
//! given by order statistics of those differences at the Mann–Whitney
//! critical value (exact null distribution up to 50 per side, normal
//! approximation above), as R's `wilcox.test(conf.int = TRUE)` does.

use super::describe::{quantile_sorted, sorted};
use super::mannwhitney::{null_cdf, EXACT_MAX};
use super::special::norm_ppf;
use serde::Serialize;

/// Shift estimate and interval (in the metric's unit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HodgesLehmann {
    pub shift: f64,
    pub lo: f64,
    pub hi: f64,
    /// Confidence actually achieved by the discrete interval.
    pub confidence: f64,
}

/// Most pairwise differences computed (memory bound: 8 bytes each).
pub const MAX_PAIRS: usize = 16_000_000;

/// HL shift and `conf` interval; `None` if a side is empty or the sides
/// have more than [`MAX_PAIRS`] pairs.
pub fn hodges_lehmann(x: &[f64], y: &[f64], conf: f64) -> Option<HodgesLehmann> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 || m * n > MAX_PAIRS {
        return None;
    }
    let diffs: Vec<f64> = y
        .iter()
        .flat_map(|b| x.iter().map(move |a| b - a))
        .collect();
    let d = sorted(&diffs);
    let mn = m * n;
    let alpha = 1.0 - conf;
    let (k, confidence) = critical_rank(m, n, alpha);
    Some(HodgesLehmann {
        shift: quantile_sorted(&d, 0.5),
        lo: d[k - 1],
        hi: d[mn - k],
        confidence,
    })
}

/// 1-based rank k of the lower limit and the achieved confidence.
fn critical_rank(m: usize, n: usize, alpha: f64) -> (usize, f64) {
    let mn = m * n;
    if m.max(n) <= EXACT_MAX {
        let cdf = null_cdf(m, n);
        // smallest k with P(U <= k) >= alpha/2, as R's qwilcox; at least 1.
        let q = cdf.iter().position(|&c| c >= alpha / 2.0).unwrap_or(0);
        let k = q.clamp(1, mn.div_ceil(2).max(1));
        (k, 1.0 - 2.0 * cdf[k - 1])
    } else {
        let sigma = ((mn * (m + n + 1)) as f64 / 12.0).sqrt();
        let z = norm_ppf(1.0 - alpha / 2.0);
        let k = (mn as f64 / 2.0 + 0.5 - z * sigma).floor().max(1.0) as usize;
        (k.min(mn.div_ceil(2)), conf_normal(k, mn, sigma))
    }
}

fn conf_normal(k: usize, mn: usize, sigma: f64) -> f64 {
    let z = (k as f64 - 0.5 - mn as f64 / 2.0) / sigma;
    1.0 - 2.0 * super::special::norm_sf(-z)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn shift_of_constant_offset() {
        let x: Vec<f64> = (0..10).map(|i| i as f64).collect();
        let y: Vec<f64> = x.iter().map(|v| v + 3.0).collect();
        let hl = hodges_lehmann(&x, &y, 0.95).unwrap();
        assert_eq!(hl.shift, 3.0);
        assert!(hl.lo < 3.0 && hl.hi > 3.0);
        assert!(hl.confidence >= 0.95);
    }

    #[test]
    fn tiny_samples_give_full_range() {
        let hl = hodges_lehmann(&[1.0, 2.0], &[5.0, 7.0], 0.95).unwrap();
        assert_eq!((hl.lo, hl.hi), (3.0, 6.0));
        assert!(hl.confidence < 0.95);
    }
}
