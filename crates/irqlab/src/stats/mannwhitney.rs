//! Mann–Whitney U test, two-sided, as scipy `mannwhitneyu(y, x)`: U is the
//! statistic of `y` (count of pairs y > x, ties counting ½). Exact p from the
//! null distribution of U when there are no ties and each side has at most
//! [`EXACT_MAX`] values (scipy `method='exact'`); otherwise the normal
//! approximation with tie and continuity correction (`method='asymptotic'`).
//! [`exact_with_ties`] adds what scipy's `mannwhitneyu` does not: the exact
//! conditional (permutation) distribution given the tie pattern, for small
//! samples with ties, where the normal approximation is far off (3 vs 3
//! all tied within sides: asymptotic p 0.046, exact 0.1).

use super::special::norm_sf;
use serde::Serialize;
use std::sync::{Arc, Mutex};

/// Largest per-side sample size for the exact distribution.
pub const EXACT_MAX: usize = 50;

/// How the p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Exact,
    Asymptotic,
    /// Exact conditional distribution given the ties ([`exact_with_ties`]).
    #[serde(rename = "exact_ties")]
    ExactTies,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Asymptotic => "asymptotic",
            Method::ExactTies => "exact_ties",
        }
    }
}

/// Largest total sample size (both sides) for [`exact_with_ties`].
pub const EXACT_TIES_MAX: usize = 40;

/// The exact conditional two-sided test of `y` against `x` when the values
/// have ties and there are at most [`EXACT_TIES_MAX`] of them: p is the
/// share of the C(m+n, n) splits of the pooled mid-ranks whose rank sum is
/// at least as far from its mean as the observed one. Also returns the
/// smallest p any split can give (the p floor under this tie pattern).
/// `None` without ties, with all values equal, above the size limit or
/// with an empty side.
pub fn exact_with_ties(x: &[f64], y: &[f64]) -> Option<(MannWhitney, f64)> {
    let (n1, n2) = (y.len(), x.len());
    let n = n1 + n2;
    if n1 == 0 || n2 == 0 || n > EXACT_TIES_MAX {
        return None;
    }
    let all: Vec<f64> = y.iter().chain(x.iter()).copied().collect();
    let (ranks, ties) = average_ranks(&all);
    // No ties: the unconditional exact test; all values equal: nothing to test.
    if ties.iter().all(|&t| t < 2) || ties.len() < 2 {
        return None;
    }
    // Doubled mid-ranks are integers.
    let r2: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
    let max_sum: usize = 2 * n * n1;
    // counts[k][s]: subsets of size k with doubled rank sum s.
    let mut counts = vec![vec![0.0f64; max_sum + 1]; n1 + 1];
    counts[0][0] = 1.0;
    for &r in &r2 {
        for k in (1..=n1).rev() {
            let (lo, hi) = counts.split_at_mut(k);
            for s in (r..=max_sum).rev() {
                let add = lo[k - 1][s - r];
                if add != 0.0 {
                    hi[0][s] += add;
                }
            }
        }
    }
    let dist = &counts[n1];
    let total: f64 = dist.iter().sum();
    let centre = (n1 * (n + 1)) as f64;
    let observed: usize = r2[..n1].iter().sum();
    let dev = (observed as f64 - centre).abs();
    let tail = |d: f64| -> f64 {
        dist.iter()
            .enumerate()
            .filter(|&(s, &c)| c != 0.0 && (s as f64 - centre).abs() >= d - 1e-9)
            .map(|(_, c)| c)
            .sum::<f64>()
            / total
    };
    let widest = dist
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != 0.0)
        .map(|(s, _)| (s as f64 - centre).abs())
        .fold(0.0f64, f64::max);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let test = MannWhitney {
        u: u1,
        p: tail(dev).clamp(0.0, 1.0),
        method: Method::ExactTies,
    };
    Some((test, tail(widest).clamp(0.0, 1.0)))
}

/// Result of the test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MannWhitney {
    pub u: f64,
    pub p: f64,
    pub method: Method,
}

/// Ranks (1-based, ties averaged) of `values` and the sizes of tie groups.
pub fn average_ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && values[idx[j]] == values[idx[i]] {
            j += 1;
        }
        let r = (i + j + 1) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        ties.push(j - i);
        i = j;
    }
    (ranks, ties)
}

/// Two-sided Mann–Whitney U test of `y` against `x`; `None` if a side is empty.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (y.len(), x.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let all: Vec<f64> = y.iter().chain(x.iter()).copied().collect();
    let (ranks, ties) = average_ranks(&all);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let mn = (n1 * n2) as f64;
    let u = u1.max(mn - u1);
    let has_ties = ties.iter().any(|&t| t > 1);
    let (p, method) = if !has_ties && n1.max(n2) <= EXACT_MAX {
        let cdf = null_cdf(n1, n2);
        let k = (mn - u).round() as usize;
        (2.0 * cdf[k], Method::Exact)
    } else {
        (
            2.0 * norm_sf(asymptotic_z(u, n1, n2, &ties)),
            Method::Asymptotic,
        )
    };
    Some(MannWhitney {
        u: u1,
        p: p.clamp(0.0, 1.0),
        method,
    })
}

/// z of the normal approximation with tie and continuity correction.
fn asymptotic_z(u: f64, n1: usize, n2: usize, ties: &[usize]) -> f64 {
    let (a, b) = (n1 as f64, n2 as f64);
    let n = a + b;
    let tie_term: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum();
    let s = (a * b / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
    if s <= 0.0 {
        return 0.0;
    }
    (u - a * b / 2.0 - 0.5) / s
}

/// Number of arrangements giving each U = 0..=m·n, for sizes m and n (no ties).
fn null_counts(m: usize, n: usize) -> Vec<f64> {
    // row[j] holds the counts for (i, j); recurrence on who holds the largest value.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]);
        for j in 1..=n {
            let mut c = vec![0.0; i * j + 1];
            for (k, v) in prev[j].iter().enumerate() {
                c[k + j] += v;
            }
            for (k, v) in cur[j - 1].iter().enumerate() {
                c[k] += v;
            }
            cur.push(c);
        }
        prev = cur;
    }
    prev.pop().unwrap_or_default()
}

/// Smallest two-sided exact p-value reachable with sizes m and n (no
/// ties): 2 / C(m+n, m), capped at 1.
pub fn min_p(m: usize, n: usize) -> f64 {
    let (a, b) = (m.min(n), m.max(n));
    let mut c = 1.0f64;
    for i in 1..=a {
        c = c * (b + i) as f64 / i as f64;
    }
    (2.0 / c).min(1.0)
}

/// Distributions kept by [`null_cdf`] (a comparison of many metrics asks
/// for the same few sizes again and again: 180 pairs of 30 vs 30 in a
/// bench-sized set).
const NULL_CACHE: usize = 16;

/// Kept null distributions, by (smaller, larger) sample size.
type NullCache = Vec<((usize, usize), Arc<Vec<f64>>)>;

/// P(U ≤ k) for k = 0..=m·n under the null hypothesis (no ties), computed
/// once per (m, n) and shared.
pub fn null_cdf(m: usize, n: usize) -> Arc<Vec<f64>> {
    static CACHE: Mutex<NullCache> = Mutex::new(Vec::new());
    let key = (m.min(n), m.max(n));
    let hit = |c: &NullCache| {
        c.iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| Arc::clone(v))
    };
    if let Some(v) = hit(&CACHE.lock().unwrap_or_else(|e| e.into_inner())) {
        return v;
    }
    let v = Arc::new(null_cdf_uncached(key.0, key.1));
    let mut c = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if c.len() >= NULL_CACHE {
        c.remove(0);
    }
    c.push((key, Arc::clone(&v)));
    v
}

fn null_cdf_uncached(m: usize, n: usize) -> Vec<f64> {
    let counts = null_counts(m, n);
    let total: f64 = counts.iter().sum();
    let mut acc = 0.0;
    counts
        .iter()
        .map(|c| {
            acc += c;
            acc / total
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn small_exact() {
        // sizes 3 and 3: 20 arrangements, P(U <= 0) = 1/20.
        let cdf = null_cdf(3, 3);
        assert_eq!(cdf.len(), 10);
        assert!((cdf[0] - 0.05).abs() < 1e-15);
        assert!((cdf[9] - 1.0).abs() < 1e-15);
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(r.u, 9.0);
        assert!((r.p - 0.1).abs() < 1e-15);
        assert_eq!(r.method, Method::Exact);
    }

    #[test]
    fn smallest_p() {
        assert!((min_p(3, 3) - 0.1).abs() < 1e-15);
        assert!((min_p(3, 10) - 2.0 / 286.0).abs() < 1e-15);
        assert_eq!(min_p(1, 1), 1.0);
    }

    #[test]
    fn ties_go_asymptotic() {
        let r = mann_whitney(&[1.0, 2.0, 2.0], &[2.0, 3.0, 4.0]).unwrap();
        assert_eq!(r.method, Method::Asymptotic);
        assert!(r.p > 0.0 && r.p <= 1.0);
    }

    #[test]
    fn tied_three_vs_three_gets_the_exact_conditional_p_not_the_normal_one() {
        let (x, y) = ([100.0; 3], [110.0; 3]);
        assert!(mann_whitney(&x, &y).unwrap().p < 0.05);
        let (t, floor) = exact_with_ties(&x, &y).unwrap();
        assert!((t.p - 0.1).abs() < 1e-15, "{t:?}");
        assert!((floor - 0.1).abs() < 1e-15);
        assert_eq!(t.u, 9.0);
        assert_eq!(t.method, Method::ExactTies);
        // All values equal: nothing to test exactly.
        assert!(exact_with_ties(&[5.0, 5.0], &[5.0, 5.0]).is_none());
        assert!(exact_with_ties(&[1.0, 2.0], &[3.0, 4.0]).is_none());
    }

    #[test]
    fn exact_with_ties_agrees_with_brute_force_enumeration() {
        let x = [1.0, 2.0, 2.0, 3.0, 5.0];
        let y = [2.0, 3.0, 3.0, 4.0, 6.0, 6.0];
        let (t, _) = exact_with_ties(&x, &y).unwrap();
        let all: Vec<f64> = y.iter().chain(&x).copied().collect();
        let (ranks, _) = average_ranks(&all);
        let n1 = y.len();
        let obs: f64 = ranks[..n1].iter().sum();
        let centre = n1 as f64 * (all.len() + 1) as f64 / 2.0;
        let (mut hit, mut tot) = (0u32, 0u32);
        for mask in 0u32..(1 << all.len()) {
            if mask.count_ones() as usize != n1 {
                continue;
            }
            let s: f64 = (0..all.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| ranks[i])
                .sum();
            tot += 1;
            if (s - centre).abs() >= (obs - centre).abs() - 1e-9 {
                hit += 1;
            }
        }
        assert!((t.p - f64::from(hit) / f64::from(tot)).abs() < 1e-12);
    }

    #[test]
    fn ranks_average_ties() {
        let (r, t) = average_ranks(&[10.0, 20.0, 10.0]);
        assert_eq!(r, vec![1.5, 3.0, 1.5]);
        assert_eq!(t, vec![2, 1]);
    }
}
