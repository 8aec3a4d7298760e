//! Data-quality checks behind compare's warnings: sample size, trend across
//! trial order (Spearman ρ with its t-approximation p, as scipy `spearmanr`),
//! the bimodality coefficient (bias-corrected skewness/kurtosis, as pandas
//! `skew()`/`kurt()`), and the coefficient of variation. Pure numbers only;
//! the wording lives in the compare model.

use super::describe::{mean, std_dev};
use super::mannwhitney::average_ranks;
use super::special::t_two_sided;

/// Below this many trials a 95 % interval is not meaningful.
pub const MIN_FOR_CI: usize = 6;
/// Below this many trials per side p < 0.05 cannot be reached.
pub const MIN_FOR_P: usize = 4;
/// Bimodality coefficient threshold (uniform distribution's value).
pub const BIMODAL_BC: f64 = 0.555;
/// The dip test's p below which a sample is called multimodal.
pub const BIMODAL_P: f64 = 0.05;

pub use super::dip::dip_test;
/// Coefficient of variation above which spread is called high (percent).
pub const HIGH_CV_PCT: f64 = 5.0;

/// Spearman rank correlation of `values` with their order, and its p-value.
/// `None` with fewer than 3 values or constant values.
pub fn trend(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 3 {
        return None;
    }
    let (rv, _) = average_ranks(values);
    let ro: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    let rho = pearson(&ro, &rv)?;
    let df = (n - 2) as f64;
    if (1.0 - rho.abs()) <= 0.0 {
        return Some((rho, 0.0));
    }
    let t = rho * (df / ((rho + 1.0) * (1.0 - rho))).sqrt();
    Some((rho, t_two_sided(t, df)))
}

fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let (ma, mb) = (mean(a), mean(b));
    let mut sab = 0.0;
    let mut saa = 0.0;
    let mut sbb = 0.0;
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| (sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0))
}

/// Sample skewness and excess kurtosis, both bias-corrected (n ≥ 4).
pub fn skew_kurt(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 4 {
        return None;
    }
    let m = mean(values);
    let moment = |k: i32| values.iter().map(|v| (v - m).powi(k)).sum::<f64>() / n as f64;
    let (m2, m3, m4) = (moment(2), moment(3), moment(4));
    if m2 <= 0.0 {
        return None;
    }
    let nf = n as f64;
    let g1 = m3 / m2.powf(1.5);
    let g2 = m4 / (m2 * m2) - 3.0;
    let skew = (nf * (nf - 1.0)).sqrt() / (nf - 2.0) * g1;
    let kurt = (nf - 1.0) / ((nf - 2.0) * (nf - 3.0)) * ((nf + 1.0) * g2 + 6.0);
    Some((skew, kurt))
}

/// Bimodality coefficient (g² + 1) / (k + 3(n−1)²/((n−2)(n−3))).
pub fn bimodality_coefficient(values: &[f64]) -> Option<f64> {
    let (g, k) = skew_kurt(values)?;
    let nf = values.len() as f64;
    let denom = k + 3.0 * (nf - 1.0).powi(2) / ((nf - 2.0) * (nf - 3.0));
    (denom > 0.0).then(|| (g * g + 1.0) / denom)
}

/// Coefficient of variation in percent; `None` when undefined.
pub fn cv_pct(values: &[f64]) -> Option<f64> {
    let m = mean(values);
    let s = std_dev(values)?;
    (m != 0.0).then(|| s / m.abs() * 100.0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn trend_detects_monotone() {
        let v: Vec<f64> = (0..10).map(|i| i as f64 * 1.5).collect();
        assert_eq!(trend(&v), Some((1.0, 0.0)));
        assert!(trend(&[1.0, 1.0, 1.0]).is_none());
    }

    #[test]
    fn bimodal_two_clusters() {
        let v: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1.0 } else { 10.0 })
            .collect();
        assert!(bimodality_coefficient(&v).unwrap() > BIMODAL_BC);
        assert!(cv_pct(&v).unwrap() > HIGH_CV_PCT);
    }
}
