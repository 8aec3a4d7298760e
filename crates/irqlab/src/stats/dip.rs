//! Hartigan's dip test of unimodality (Hartigan & Hartigan 1985; the
//! algorithm of AS 217 as revised in R's `diptest`, rewritten here from its
//! description). The dip is the largest distance between the empirical
//! distribution function and the closest unimodal one; its p-value comes
//! from the null distribution of √n·dip for uniform samples (the least
//! favourable unimodal law), simulated once by `tools/compare-dip-table.py`
//! (documented in docs/compare-statistics.md) and stored in [`TABLE`].

/// Dip statistic and its p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dip {
    pub dip: f64,
    pub p: f64,
}

/// The dip of `x` (sorted ascending, finite): a value in [1/(2n), 1/4].
pub fn dip_sorted(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 2 || x[0] == x[n - 1] {
        return if n == 0 { 0.0 } else { 0.5 / n as f64 };
    }
    // 1-based copies of the algorithm's arrays (index 0 unused).
    let x: Vec<f64> = std::iter::once(0.0).chain(x.iter().copied()).collect();
    let (mn, mj) = hulls(&x, n);
    let (mut gcm, mut lcm) = (vec![0usize; n + 2], vec![0usize; n + 2]);
    let (mut low, mut high) = (1usize, n);
    let mut dip = 1.0f64;
    loop {
        gcm[1] = high;
        let mut i = 1;
        while gcm[i] > low {
            gcm[i + 1] = mn[gcm[i]];
            i += 1;
        }
        let l_gcm = i;
        let (mut ig, mut ix) = (i, i - 1);
        lcm[1] = low;
        let mut i = 1;
        while lcm[i] < high {
            lcm[i + 1] = mj[lcm[i]];
            i += 1;
        }
        let l_lcm = i;
        let (mut ih, mut iv) = (i, 2usize);
        let mut d = 0.0f64;
        if l_gcm != 2 || l_lcm != 2 {
            loop {
                let (gcmix, lcmiv) = (gcm[ix], lcm[iv]);
                if gcmix > lcmiv {
                    let gcmi1 = gcm[ix + 1];
                    let dx = (lcmiv as f64 - gcmi1 as f64 + 1.0)
                        - slope(&x, gcmi1, gcmix, lcmiv) * (gcmix - gcmi1) as f64;
                    iv += 1;
                    if dx >= d {
                        d = dx;
                        ig = ix + 1;
                        ih = iv - 1;
                    }
                } else {
                    let lcmiv1 = lcm[iv - 1];
                    let dx = slope(&x, lcmiv1, lcmiv, gcmix) * (lcmiv - lcmiv1) as f64
                        - (gcmix as f64 - lcmiv1 as f64 - 1.0);
                    ix -= 1;
                    if dx >= d {
                        d = dx;
                        ig = ix + 1;
                        ih = iv;
                    }
                }
                ix = ix.max(1);
                iv = iv.min(l_lcm);
                if gcm[ix] == lcm[iv] {
                    break;
                }
            }
        }
        if d < dip {
            break;
        }
        let dip_l = (ig..l_gcm)
            .map(|j| segment_max(&x, gcm[j + 1], gcm[j], true))
            .fold(0.0, f64::max);
        let dip_u = (ih..l_lcm)
            .map(|j| segment_max(&x, lcm[j], lcm[j + 1], false))
            .fold(0.0, f64::max);
        dip = dip.max(dip_l.max(dip_u));
        if low == gcm[ig] && high == lcm[ih] {
            break;
        }
        low = gcm[ig];
        high = lcm[ih];
    }
    dip / (2 * n) as f64
}

/// (x[at] − x[a]) / (x[b] − x[a]), 0 when x[a] = x[b].
fn slope(x: &[f64], a: usize, b: usize, at: usize) -> f64 {
    let den = x[b] - x[a];
    if den == 0.0 {
        0.0
    } else {
        (x[at] - x[a]) / den
    }
}

/// Largest distance inside one hull segment [jb, je]. The line's height
/// at `jj` is (je − jb) times the ratio of x's distances, which lies in
/// [0, 1]: a slope (je − jb) / (x[je] − x[jb]) would overflow when the
/// values differ by a subnormal.
fn segment_max(x: &[f64], jb: usize, je: usize, convex: bool) -> f64 {
    let mut max_t = 1.0f64;
    if je > jb + 1 && x[je] != x[jb] {
        let span = (je - jb) as f64;
        for jj in jb..=je {
            let line = span * ((x[jj] - x[jb]) / (x[je] - x[jb]));
            let t = if convex {
                (jj - jb + 1) as f64 - line
            } else {
                line - (jj as f64 - jb as f64 - 1.0)
            };
            max_t = max_t.max(t);
        }
    }
    max_t
}

/// Indices of the greatest convex minorant (from the left) and the least
/// concave majorant (from the right) of the empirical CDF.
fn hulls(x: &[f64], n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut mn = vec![0usize; n + 1];
    mn[1] = 1;
    for j in 2..=n {
        mn[j] = j - 1;
        loop {
            let mnj = mn[j];
            let mnmnj = mn[mnj];
            if mnj == 1
                || (x[j] - x[mnj]) * ((mnj - mnmnj) as f64)
                    < (x[mnj] - x[mnmnj]) * ((j - mnj) as f64)
            {
                break;
            }
            mn[j] = mnmnj;
        }
    }
    let mut mj = vec![0usize; n + 1];
    mj[n] = n;
    for k in (1..n).rev() {
        mj[k] = k + 1;
        loop {
            let mjk = mj[k];
            let mjmjk = mj[mjk];
            if mjk == n
                || (x[k] - x[mjk]) * (mjk as f64 - mjmjk as f64)
                    < (x[mjk] - x[mjmjk]) * (k as f64 - mjk as f64)
            {
                break;
            }
            mj[k] = mjmjk;
        }
    }
    (mn, mj)
}

/// Upper-tail probabilities of the [`TABLE`] columns.
pub const TAIL: [f64; 8] = [0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.001];

/// Quantiles of √n·dip for uniform samples of size n (rows: n; columns:
/// the upper tails in [`TAIL`]); 20 000 simulated samples per row, made by
/// `tools/compare-dip-table.py`.
pub const TABLE: &[(usize, [f64; 8])] = &include!("dip_table.in");

/// Dip test of `values` (any order); `None` below 4 values. The dip does
/// not depend on the values' scale: huge or tiny values are scaled near 1
/// first, so that no difference of two overflows.
pub fn dip_test(values: &[f64]) -> Option<Dip> {
    let n = values.len();
    if n < 4 {
        return None;
    }
    let k = super::describe::scale_of(values);
    let s = super::describe::sorted(&super::describe::scaled(values, k));
    let dip = dip_sorted(&s);
    Some(Dip {
        dip,
        p: p_value(n, (n as f64).sqrt() * dip),
    })
}

/// Upper-tail p of √n·dip = `stat` at size n: interpolated in the table
/// (linear in the statistic between tail columns, in 1/n between rows).
fn p_value(n: usize, stat: f64) -> f64 {
    let row = |r: &[f64; 8]| tail_p(r, stat);
    let i = TABLE.partition_point(|(m, _)| *m < n);
    if i == 0 {
        return row(&TABLE[0].1);
    }
    if i == TABLE.len() {
        return row(&TABLE[TABLE.len() - 1].1);
    }
    let (n0, r0) = TABLE[i - 1];
    let (n1, r1) = TABLE[i];
    if n1 == n {
        return row(&r1);
    }
    let t = (1.0 / n0 as f64 - 1.0 / n as f64) / (1.0 / n0 as f64 - 1.0 / n1 as f64);
    row(&r0) + (row(&r1) - row(&r0)) * t
}

fn tail_p(q: &[f64; 8], stat: f64) -> f64 {
    if stat <= q[0] {
        return 1.0 - 0.5 * (stat / q[0]).clamp(0.0, 1.0);
    }
    for k in 1..8 {
        if stat <= q[k] {
            let t = (stat - q[k - 1]) / (q[k] - q[k - 1]).max(f64::MIN_POSITIVE);
            return TAIL[k - 1] + (TAIL[k] - TAIL[k - 1]) * t;
        }
    }
    TAIL[7]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn known_dips() {
        // values from Python `diptest.dipstat` (tools/compare-dip-table.py --check)
        let cases: [(&[f64], f64); 2] = [
            (
                &[0.0, 0.1, 0.2, 0.3, 0.4, 10.0, 10.1, 10.2, 10.3, 10.4],
                0.24,
            ),
            (
                &[0.1, 0.4, 0.5, 1.1, 1.5, 2.0, 3.3, 4.1, 6.0, 9.2],
                0.061_904_761_904_761_91,
            ),
        ];
        for (x, want) in cases {
            let d = dip_sorted(x);
            assert!((d - want).abs() < 1e-12, "{d} vs {want}");
        }
    }

    #[test]
    fn the_dip_does_not_depend_on_the_scale() {
        let v = [-1.7, -1.6, -1.65, -1.75, 1.6, 1.7, 1.65, 1.75, 1.72, -1.72];
        let small = dip_test(&v).unwrap();
        for k in [1e308, 1e-305] {
            let big: Vec<f64> = v.iter().map(|x| x * k).collect();
            let d = dip_test(&big).unwrap();
            assert!((d.dip - small.dip).abs() < 1e-12, "{k}: {d:?} {small:?}");
        }
    }

    #[test]
    fn values_apart_by_a_subnormal_give_a_finite_dip() {
        // found by fuzz/fuzz_targets/compare_decide.rs: "Hartigan's dip inf"
        let v = [99.0, 5e-324, 5e-324, 0.0, 0.0, 0.0, 0.0];
        let d = dip_test(&v).unwrap();
        let n = v.len() as f64;
        assert!(d.dip >= 0.5 / n && d.dip <= 0.25, "{d:?}");
        let s = [0.0, 0.0, 5e-324, 5e-324, 1.0];
        let dip = dip_sorted(&s);
        assert!(dip.is_finite() && dip <= 0.25, "{dip}");
    }

    #[test]
    fn separated_clusters_are_significant() {
        let v: Vec<f64> = (0..20)
            .map(|i| {
                if i % 2 == 0 {
                    i as f64 * 0.01
                } else {
                    10.0 + i as f64 * 0.01
                }
            })
            .collect();
        assert!(dip_test(&v).unwrap().p < 0.01);
        let u: Vec<f64> = (0..20).map(|i| (i as f64).sqrt()).collect();
        assert!(dip_test(&u).unwrap().p > 0.2, "{:?}", dip_test(&u));
    }
}

#[cfg(test)]
mod check_against_python {
    /// Prints dips of formula-generated data for `tools/compare-dip-table.py --check`.
    #[test]
    #[ignore = "prints values for a manual cross-check"]
    fn print_dips() {
        for (n, sep) in [
            (10usize, 0.0),
            (10, 50.0),
            (37, 0.0),
            (37, 30.0),
            (200, 20.0),
            (15, 5.0),
        ] {
            let v: Vec<f64> = (0..n)
                .map(|i| ((i * 7919) % 101) as f64 / 10.0 + if i % 3 == 0 { sep } else { 0.0 })
                .collect();
            let s = super::super::describe::sorted(&v);
            println!("DIP {n} {sep} {:.15}", super::dip_sorted(&s));
        }
    }
}
