//! Hodges–Lehmann shift of `y` against `x`: the median of all pairwise
//! differences y_j − x_i, with the distribution-free confidence interval
//! given by order statistics of those differences at the Mann–Whitney
//! critical value (exact null distribution up to 50 per side, normal
//! approximation above), as R's `wilcox.test(conf.int = TRUE)` does.
//!
//! The m·n differences are never built: with both samples sorted they form
//! a matrix sorted along rows and columns, and each wanted order statistic
//! is found by randomized selection in that matrix (pick a pivot among the
//! still-possible cells, count the cells below it row by row with one
//! monotone pointer, O(m + n), keep the side holding the rank), expected
//! O((m + n) log(m·n)) time and O(m + n) memory.

use super::bootstrap::Rng;
use super::describe::sorted;
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

/// HL shift and `conf` interval; `None` if a side is empty.
pub fn hodges_lehmann(x: &[f64], y: &[f64], conf: f64) -> Option<HodgesLehmann> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 {
        return None;
    }
    let (xs, ys) = (sorted(x), sorted(y));
    let pairs = PairDiffs { x: &xs, y: &ys };
    let mn = m * n;
    let (k, confidence) = critical_rank(m, n, 1.0 - conf);
    let shift = if mn % 2 == 1 {
        pairs.select(mn / 2)
    } else {
        let (a, b) = (pairs.select(mn / 2 - 1), pairs.select(mn / 2));
        // numpy's linear interpolation at t = 0.5 (describe::quantile_sorted)
        b - (b - a) * 0.5
    };
    Some(HodgesLehmann {
        shift,
        lo: pairs.select(k - 1),
        hi: pairs.select(mn - k),
        confidence,
    })
}

/// The implicit sorted matrix of differences y_j − x_i (both sorted).
/// Row j, position q (0-based, ascending) holds y_j − x_{m−1−q}.
struct PairDiffs<'a> {
    x: &'a [f64],
    y: &'a [f64],
}

impl PairDiffs<'_> {
    fn cell(&self, j: usize, q: usize) -> f64 {
        self.y[j] - self.x[self.x.len() - 1 - q]
    }

    /// Per row, how many cells are `< t` (strict) or `<= t`, as positions.
    /// Rows grow with j, so the boundary only moves right: one pass.
    fn below(&self, t: f64, strict: bool, out: &mut [usize]) {
        let m = self.x.len();
        // p = first i (x ascending) with y_j − x_i below t; below = m − p.
        let mut p = 0;
        for (j, slot) in out.iter_mut().enumerate() {
            let yj = self.y[j];
            while p < m
                && !(if strict {
                    yj - self.x[p] < t
                } else {
                    yj - self.x[p] <= t
                })
            {
                p += 1;
            }
            *slot = m - p;
        }
    }

    /// The `k`-th smallest difference (0-based).
    fn select(&self, k: usize) -> f64 {
        let (m, n) = (self.x.len(), self.y.len());
        let mut lo = vec![0usize; n];
        let mut hi = vec![m; n];
        let (mut lt, mut le) = (vec![0usize; n], vec![0usize; n]);
        let mut rng = Rng::new(0x5eed ^ k as u64);
        loop {
            let active: usize = lo.iter().zip(&hi).map(|(l, h)| h - l).sum();
            let before: usize = lo.iter().sum();
            if active <= 2 * (m + n) {
                return self.finish(&lo, &hi, k - before);
            }
            let pivot = self.pick(&lo, &hi, rng.below(active));
            self.below(pivot, true, &mut lt);
            self.below(pivot, false, &mut le);
            for j in 0..n {
                lt[j] = lt[j].clamp(lo[j], hi[j]);
                le[j] = le[j].clamp(lo[j], hi[j]);
            }
            let n_lt: usize = lt.iter().sum();
            let n_le: usize = le.iter().sum();
            if k < n_lt {
                hi.copy_from_slice(&lt);
            } else if k < n_le {
                return pivot;
            } else {
                lo.copy_from_slice(&le);
            }
        }
    }

    /// The `r`-th active cell in row-major order.
    fn pick(&self, lo: &[usize], hi: &[usize], mut r: usize) -> f64 {
        for j in 0..lo.len() {
            let w = hi[j] - lo[j];
            if r < w {
                return self.cell(j, lo[j] + r);
            }
            r -= w;
        }
        self.cell(lo.len() - 1, hi[lo.len() - 1].saturating_sub(1))
    }

    /// Few cells left: collect them and select directly.
    fn finish(&self, lo: &[usize], hi: &[usize], k: usize) -> f64 {
        let mut cells: Vec<f64> = (0..lo.len())
            .flat_map(|j| (lo[j]..hi[j]).map(move |q| (j, q)))
            .map(|(j, q)| self.cell(j, q))
            .collect();
        let k = k.min(cells.len().saturating_sub(1));
        *cells.select_nth_unstable_by(k, f64::total_cmp).1
    }
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
    use crate::stats::describe::quantile_sorted;
    use proptest::prelude::{prop, prop_assert_eq, proptest};

    /// The definition: all m·n differences, sorted.
    fn brute(x: &[f64], y: &[f64], conf: f64) -> HodgesLehmann {
        let d = sorted(
            &y.iter()
                .flat_map(|b| x.iter().map(move |a| b - a))
                .collect::<Vec<_>>(),
        );
        let (k, confidence) = critical_rank(x.len(), y.len(), 1.0 - conf);
        HodgesLehmann {
            shift: quantile_sorted(&d, 0.5),
            lo: d[k - 1],
            hi: d[d.len() - k],
            confidence,
        }
    }

    proptest! {
        #[test]
        fn selection_equals_brute_force(
            x in prop::collection::vec(-50i32..50, 1..40),
            y in prop::collection::vec(-50i32..50, 1..40),
            scale in prop::sample::select(vec![1.0, 0.1, 1e-3, 1e6]),
        ) {
            // small integer grids make many ties; the scale adds rounding
            let x: Vec<f64> = x.iter().map(|&v| f64::from(v) * scale).collect();
            let y: Vec<f64> = y.iter().map(|&v| f64::from(v) * scale + 0.5 * scale).collect();
            prop_assert_eq!(hodges_lehmann(&x, &y, 0.95).unwrap(), brute(&x, &y, 0.95));
        }
    }

    #[test]
    fn large_samples_use_linear_memory() {
        let mut rng = Rng::new(4);
        let x: Vec<f64> = (0..300).map(|_| rng.normal()).collect();
        let y: Vec<f64> = (0..250).map(|_| rng.normal() + 0.3).collect();
        assert_eq!(hodges_lehmann(&x, &y, 0.95).unwrap(), brute(&x, &y, 0.95));
    }

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
