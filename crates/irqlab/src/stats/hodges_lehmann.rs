//! Hodges–Lehmann shift of `y` against `x`: the median of all pairwise
//! differences y_j − x_i, with the distribution-free confidence interval
//! given by order statistics of those differences at the Mann–Whitney
//! critical value (exact null distribution up to 50 per side, normal
//! approximation above), as R's `wilcox.test(conf.int = TRUE)` does.
//!
//! The m·n differences are never built: with both samples sorted they form
//! a matrix sorted along rows and columns, and each wanted order statistic
//! is found by selection in that matrix. A round draws a stratified random
//! sample of s still-possible cells, takes two sample order statistics that
//! bracket the wanted rank with high probability (as Floyd and Rivest's
//! SELECT does), counts the cells below each of them row by row with one
//! monotone pointer (a merge-style walk over both samples, O(m + n)), and
//! keeps the cells between them, or the side that holds the rank if the
//! bracket missed. A round keeps about 4/√s of the cells, so three rounds
//! take 2 × 100 000 values (10¹⁰ differences) to a few hundred thousand
//! cells, selected from directly: O(m + n) memory, expected
//! O((m + n) · log(m·n) / log s) time. The pivots only steer the search:
//! every answer is the cell of exactly the wanted rank, as sorting all m·n
//! differences would give.

use super::describe::{scaled, sorted};
use super::mannwhitney::{null_cdf, EXACT_MAX};
use super::special::norm_ppf;
use irqlab_core::rng::Rng;
use serde::Serialize;
use std::cell::Cell;

/// Shift estimate and interval (in the metric's unit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HodgesLehmann {
    pub shift: f64,
    pub lo: f64,
    pub hi: f64,
    /// Confidence actually achieved by the discrete interval.
    pub confidence: f64,
}

/// Cells drawn per selection round.
const SAMPLE: usize = 1 << 14;

/// HL shift and `conf` interval; `None` if a side is empty. Values beyond
/// the ordinary range are scaled by a power of two so that no difference
/// overflows; a shift (or limit) beyond the float range is then ±inf.
pub fn hodges_lehmann(x: &[f64], y: &[f64], conf: f64) -> Option<HodgesLehmann> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 {
        return None;
    }
    let k = super::describe::joint_scale(x, y);
    if k != 1.0 {
        let (xs, ys) = (scaled(x, k), scaled(y, k));
        let h = hodges_lehmann(&xs, &ys, conf)?;
        return Some(HodgesLehmann {
            shift: h.shift * k,
            lo: h.lo * k,
            hi: h.hi * k,
            confidence: h.confidence,
        });
    }
    let (xs, ys) = (sorted(x), sorted(y));
    let pairs = PairDiffs::new(&xs, &ys);
    Some(pairs.hodges_lehmann(conf))
}

/// The implicit sorted matrix of differences y_j − x_i (both sorted).
/// Row j, position q (0-based, ascending) holds y_j − x_{m−1−q}.
struct PairDiffs<'a> {
    x: &'a [f64],
    y: &'a [f64],
    /// Cells drawn per round.
    sample: usize,
    /// At or below this many candidate cells, collect them and select.
    finish_at: usize,
    /// Sampling rounds run so far (the cost: two walks each).
    rounds: Cell<usize>,
}

/// Which cells a pivot count takes: `< t` or `<= t`.
#[derive(Clone, Copy)]
enum Side {
    Below,
    AtOrBelow,
}

impl<'a> PairDiffs<'a> {
    fn new(x: &'a [f64], y: &'a [f64]) -> Self {
        PairDiffs {
            x,
            y,
            sample: SAMPLE,
            finish_at: (2 * (x.len() + y.len())).max(4 * SAMPLE),
            rounds: Cell::new(0),
        }
    }

    fn hodges_lehmann(&self, conf: f64) -> HodgesLehmann {
        let (m, n) = (self.x.len(), self.y.len());
        let mn = m * n;
        let (k, confidence) = critical_rank(m, n, 1.0 - conf);
        let shift = if mn % 2 == 1 {
            self.select(mn / 2)
        } else {
            let a = self.select(mn / 2 - 1);
            let b = self.next_after(a, mn / 2 - 1);
            // numpy's linear interpolation at t = 0.5 (describe::quantile_sorted)
            b - (b - a) * 0.5
        };
        HodgesLehmann {
            shift,
            lo: self.select(k - 1),
            hi: self.select(mn - k),
            confidence,
        }
    }

    fn cell(&self, j: usize, q: usize) -> f64 {
        self.y[j] - self.x[self.x.len() - 1 - q]
    }

    /// Per row, how many cells are below `t` (or at or below it), as
    /// positions, clamped to `[lo, hi]`; returns their sum.
    fn count(&self, t: f64, side: Side, lo: &[usize], hi: &[usize], out: &mut [usize]) -> usize {
        let stop = match side {
            Side::Below => self.walk(|d| d < t, (0, 0), out),
            Side::AtOrBelow => self.walk(|d| d <= t, (0, 0), out),
        };
        clamp_rows(stop, lo, hi, out)
    }

    /// `count` of cells below `a` into `lt` and at or below `b` into `le`:
    /// the two walks interleaved, so that their dependency chains overlap.
    fn count_pair(
        &self,
        (a, b): (f64, f64),
        (lo, hi): (&[usize], &[usize]),
        lt: &mut [usize],
        le: &mut [usize],
    ) -> (usize, usize) {
        let (x, y) = (self.x, self.y);
        let (m, n) = (x.len(), y.len());
        let (mut ia, mut ja, mut ib, mut jb) = (0, 0, 0, 0);
        while ia < m && ja < n && ib < m && jb < n {
            let ta = y[ja] - x[ia] < a;
            lt[ja] = m - ia;
            ja += usize::from(ta);
            ia += usize::from(!ta);
            let tb = y[jb] - x[ib] <= b;
            le[jb] = m - ib;
            jb += usize::from(tb);
            ib += usize::from(!tb);
        }
        let stop_a = self.walk(|d| d < a, (ia, ja), lt);
        let stop_b = self.walk(|d| d <= b, (ib, jb), le);
        (
            clamp_rows(stop_a, lo, hi, lt),
            clamp_rows(stop_b, lo, hi, le),
        )
    }

    /// Merge-style walk over both samples without data-dependent
    /// branches, from pointer `i` in row `j`: i is the first x (ascending)
    /// with y_j − x_i taken, so row j takes m − i; a taken cell finishes row
    /// j, an untaken one moves i on. Differences grow with j and fall with
    /// i (rounding is monotone too), so i never moves back. Returns the
    /// (i, j) where it stopped.
    fn walk(
        &self,
        taken: impl Fn(f64) -> bool,
        (mut i, mut j): (usize, usize),
        out: &mut [usize],
    ) -> (usize, usize) {
        let (x, y) = (self.x, self.y);
        let m = x.len();
        while i < m && j < y.len() {
            let t = taken(y[j] - x[i]);
            out[j] = m - i;
            j += usize::from(t);
            i += usize::from(!t);
        }
        (i, j)
    }

    /// The `k`-th smallest difference (0-based).
    fn select(&self, k: usize) -> f64 {
        let (m, n) = (self.x.len(), self.y.len());
        // Candidates: positions lo[j]..hi[j] of each row; `before` cells
        // precede them all in rank.
        let mut lo = vec![0usize; n];
        let mut hi = vec![m; n];
        let (mut before, mut active) = (0usize, m * n);
        let (mut lt, mut le) = (vec![0usize; n], vec![0usize; n]);
        let mut draws = Vec::with_capacity(self.sample);
        let mut rng = Rng::new(0x5eed ^ k as u64);
        loop {
            if active <= self.finish_at {
                return self.finish(&lo, &hi, k - before);
            }
            self.rounds.set(self.rounds.get() + 1);
            let (a, b) = self.pivots(&lo, &hi, active, k - before, &mut rng, &mut draws);
            let (n_lt, n_le) = self.count_pair((a, b), (&lo, &hi), &mut lt, &mut le);
            let was = active;
            if k < n_lt {
                // below a
                hi.copy_from_slice(&lt);
                active = n_lt - before;
            } else if k >= n_le {
                // above b
                lo.copy_from_slice(&le);
                active -= n_le - before;
                before = n_le;
            } else if a == b {
                return a;
            } else {
                // in [a, b]
                lo.copy_from_slice(&lt);
                hi.copy_from_slice(&le);
                active = n_le - n_lt;
                before = n_lt;
            }
            if active == was {
                // Every candidate lies in [a, b] (ties): a three-way split
                // at a then at b removes at least the cells equal to a.
                let n_le_a = self.count(a, Side::AtOrBelow, &lo, &hi, &mut le);
                if k < n_le_a {
                    return a;
                }
                let n_lt_b = self.count(b, Side::Below, &lo, &hi, &mut lt);
                if k >= n_lt_b {
                    return b;
                }
                lo.copy_from_slice(&le);
                hi.copy_from_slice(&lt);
                active = n_lt_b - n_le_a;
                before = n_le_a;
            }
        }
    }

    /// Two candidate values that bracket the candidate of rank `r` (among
    /// `active` candidates) with high probability: order statistics of a
    /// stratified random sample of candidates around the expected rank.
    fn pivots(
        &self,
        lo: &[usize],
        hi: &[usize],
        active: usize,
        r: usize,
        rng: &mut Rng,
        draws: &mut Vec<f64>,
    ) -> (f64, f64) {
        let s = self.sample.clamp(1, active);
        let stride = active / s;
        draws.clear();
        // Draw t: candidate number t·stride + U[0, stride) in row-major
        // order; the numbers ascend, so one walk over the rows finds them.
        let (mut j, mut row_start) = (0, 0);
        for t in 0..s {
            let want = t * stride + rng.index(stride);
            while row_start + (hi[j] - lo[j]) <= want {
                row_start += hi[j] - lo[j];
                j += 1;
            }
            draws.push(self.cell(j, lo[j] + want - row_start));
        }
        let centre = r as f64 / active as f64 * s as f64;
        let spread = 2.0 * (s as f64).sqrt() + 1.0;
        let ia = (centre - spread).max(0.0) as usize;
        let ib = ((centre + spread) as usize).min(s - 1).max(ia);
        let a = *draws.select_nth_unstable_by(ia, f64::total_cmp).1;
        let b = if ib == ia {
            a
        } else {
            *draws[ia + 1..]
                .select_nth_unstable_by(ib - ia - 1, f64::total_cmp)
                .1
        };
        (a, b)
    }

    /// The difference of rank `k + 1`, given `a`, the one of rank `k`: `a`
    /// again if more than `k + 1` cells are at or below it, else the least
    /// cell above it (the first such cell of each row).
    fn next_after(&self, a: f64, k: usize) -> f64 {
        let (m, n) = (self.x.len(), self.y.len());
        let (lo, hi) = (vec![0usize; n], vec![m; n]);
        let mut le = vec![0usize; n];
        if self.count(a, Side::AtOrBelow, &lo, &hi, &mut le) > k + 1 {
            return a;
        }
        (0..n)
            .filter(|&j| le[j] < m)
            .map(|j| self.cell(j, le[j]))
            .min_by(f64::total_cmp)
            .unwrap_or(a)
    }

    /// Few candidates left: collect them and select directly.
    fn finish(&self, lo: &[usize], hi: &[usize], k: usize) -> f64 {
        let mut cells: Vec<f64> = (0..lo.len())
            .flat_map(|j| (lo[j]..hi[j]).map(move |q| (j, q)))
            .map(|(j, q)| self.cell(j, q))
            .collect();
        let k = k.min(cells.len().saturating_sub(1));
        *cells.select_nth_unstable_by(k, f64::total_cmp).1
    }
}

/// After a walk stopped in row `j` (i reached m, or every row is done):
/// rows from j take nothing; clamp every row to `[lo, hi]` and sum.
fn clamp_rows((_, j): (usize, usize), lo: &[usize], hi: &[usize], out: &mut [usize]) -> usize {
    out[j..].fill(0);
    let mut total = 0;
    for ((slot, &l), &h) in out.iter_mut().zip(lo).zip(hi) {
        *slot = (*slot).clamp(l, h);
        total += *slot;
    }
    total
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

        /// Every rank, through the sampling rounds (tiny samples and no
        /// early finish, so brackets miss and ties fill whole brackets),
        /// equals the sorted differences; so does the rank after it.
        #[test]
        fn sampled_selection_equals_brute_force_at_every_rank(
            x in prop::collection::vec(0i32..1000, 1..30),
            y in prop::collection::vec(0i32..1000, 1..30),
            levels in prop::sample::select(vec![1, 2, 3, 7, 1000]),
            scale in prop::sample::select(vec![1.0, 0.1, 1e-3, 1e6]),
            sample in prop::sample::select(vec![1usize, 2, 3, 8, 64]),
            finish_at in prop::sample::select(vec![0usize, 3, 40]),
        ) {
            // `levels` distinct values a side: down to one (all ties)
            let side = |v: &[i32]| -> Vec<f64> {
                sorted(&v.iter().map(|&v| f64::from(v % levels) * scale).collect::<Vec<_>>())
            };
            let (xs, ys) = (side(&x), side(&y));
            let d = sorted(&ys.iter().flat_map(|b| xs.iter().map(move |a| b - a)).collect::<Vec<_>>());
            let pairs = PairDiffs { sample, finish_at, ..PairDiffs::new(&xs, &ys) };
            for (k, &want) in d.iter().enumerate() {
                prop_assert_eq!(pairs.select(k).to_bits(), want.to_bits(), "rank {}", k);
                if k + 1 < d.len() {
                    prop_assert_eq!(pairs.next_after(want, k).to_bits(), d[k + 1].to_bits(), "rank {}", k + 1);
                }
            }
        }
    }

    /// The k-th difference by bisection over the values (an independent
    /// exact method: the least value with more than k cells at or below).
    fn by_bisection(pairs: &PairDiffs, k: usize) -> f64 {
        let n = pairs.y.len();
        let (lo, hi) = (vec![0; n], vec![pairs.x.len(); n]);
        let mut out = vec![0; n];
        // finite f64 in numeric order as u64 (sign flipped, negatives inverted)
        let key = |v: f64| {
            let b = v.to_bits();
            if b >> 63 == 1 {
                !b
            } else {
                b | 1 << 63
            }
        };
        let value = |u: u64| f64::from_bits(if u >> 63 == 1 { u & !(1 << 63) } else { !u });
        let (mut a, mut b) = (key(f64::MIN), key(f64::MAX));
        while a < b {
            let t = a + (b - a) / 2;
            if pairs.count(value(t), Side::AtOrBelow, &lo, &hi, &mut out) > k {
                b = t;
            } else {
                a = t + 1;
            }
        }
        value(a)
    }

    /// 2 × 20 000 values (4·10⁸ differences): the shift and interval ranks
    /// are exact and each takes a few sampling rounds of two O(m + n) walks
    /// (not the dozens of one-pivot rounds that made compare of
    /// 2 × 100 000 values slower than sorting them).
    #[test]
    fn large_selection_is_exact_in_few_rounds() {
        let mut rng = Rng::new(11);
        let x = sorted(
            &(0..20_000)
                .map(|_| 1000.0 + 20.0 * rng.normal())
                .collect::<Vec<_>>(),
        );
        let y = sorted(
            &(0..20_000)
                .map(|_| 1010.0 + 20.0 * rng.normal())
                .collect::<Vec<_>>(),
        );
        let pairs = PairDiffs::new(&x, &y);
        let mn = x.len() * y.len();
        let (k, _) = critical_rank(x.len(), y.len(), 0.05);
        for rank in [k - 1, mn / 2 - 1, mn - k] {
            let before = pairs.rounds.get();
            let got = pairs.select(rank);
            assert!(
                pairs.rounds.get() - before <= 4,
                "rank {rank}: {} rounds",
                pairs.rounds.get() - before
            );
            assert_eq!(got, by_bisection(&pairs, rank), "rank {rank}");
        }
        let a = pairs.select(mn / 2 - 1);
        assert_eq!(
            pairs.next_after(a, mn / 2 - 1),
            by_bisection(&pairs, mn / 2)
        );
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
    fn shifts_across_the_float_range_are_scaled_not_overflowed() {
        let x = [-1.7e308, -1.6e308, -1.75e308, -1.65e308];
        let y = [1.0e308, 1.1e308, 0.9e308, 1.05e308];
        // The differences (≈ 2.7e308) are beyond the float range: ±inf,
        // never NaN and never a wrapped sign.
        let hl = hodges_lehmann(&x, &y, 0.95).unwrap();
        assert_eq!(
            (hl.shift, hl.lo, hl.hi),
            (f64::INFINITY, f64::INFINITY, f64::INFINITY)
        );
        // Differences 0.5, 1.0, 2.2 and 2.7 e308: the shift, midway
        // between the middle two, fits although one of them does not.
        let hl = hodges_lehmann(&[-1.7e308, 0.0], &[0.5e308, 1.0e308], 0.95).unwrap();
        assert!((hl.shift / 1.6e308 - 1.0).abs() < 1e-12, "{hl:?}");
        let tiny = hodges_lehmann(&[1e-300, 2e-300], &[5e-300, 7e-300], 0.95).unwrap();
        assert!((tiny.lo / 3e-300 - 1.0).abs() < 1e-12, "{tiny:?}");
    }

    #[test]
    fn tiny_samples_give_full_range() {
        let hl = hodges_lehmann(&[1.0, 2.0], &[5.0, 7.0], 0.95).unwrap();
        assert_eq!((hl.lo, hl.hi), (3.0, 6.0));
        assert!(hl.confidence < 0.95);
    }
}
