//! Welch's unequal-variance t test (two-sided), as scipy
//! `ttest_ind(y, x, equal_var=False)`: t is positive when `y` has the larger mean.

use super::describe::{joint_scale, mean, scaled, variance};
use super::special::t_two_sided;
use serde::Serialize;

/// Result of Welch's test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    pub p: f64,
}

/// Welch's t of `y` against `x`; `None` with fewer than two values on a side,
/// when both sides have zero variance (t undefined) or when t or df is
/// not a finite number.
pub fn welch(x: &[f64], y: &[f64]) -> Option<Welch> {
    // t and df do not depend on the unit: huge or tiny values are scaled by
    // one power of two (exact) so that no sum overflows or underflows.
    let k = joint_scale(x, y);
    if k != 1.0 {
        return welch(&scaled(x, k), &scaled(y, k));
    }
    let (vx, vy) = (variance(x)?, variance(y)?);
    let (sx, sy) = (vx / x.len() as f64, vy / y.len() as f64);
    let se2 = sx + sy;
    if se2 <= 0.0 {
        return None;
    }
    let t = (mean(y) - mean(x)) / se2.sqrt();
    let denom = sx * sx / (x.len() - 1) as f64 + sy * sy / (y.len() - 1) as f64;
    let df = se2 * se2 / denom;
    if !(t.is_finite() && df.is_finite()) {
        return None;
    }
    let p = t_two_sided(t, df).clamp(0.0, 1.0);
    Some(Welch { t, df, p })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_and_refuses() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [2.0, 3.0, 4.0, 5.0, 6.0];
        let a = welch(&x, &y).unwrap();
        let b = welch(&y, &x).unwrap();
        assert!((a.t + b.t).abs() < 1e-12 && (a.p - b.p).abs() < 1e-12);
        assert!(a.t > 0.0);
        assert!(welch(&[1.0], &y).is_none());
        assert!(welch(&[1.0, 1.0], &[2.0, 2.0]).is_none());
    }

    #[test]
    fn values_near_the_float_limit_give_finite_t_df_and_p() {
        let x = [1e308, 1.1e308, 1.2e308];
        let y = [1.5e308, 1.6e308, 1.7e308];
        let w = welch(&x, &y).unwrap();
        let small = welch(&[1.0, 1.1, 1.2], &[1.5, 1.6, 1.7]).unwrap();
        assert!(
            w.t.is_finite() && w.df.is_finite() && w.p.is_finite(),
            "{w:?}"
        );
        assert!(
            (w.t - small.t).abs() < 1e-9 * small.t.abs(),
            "{w:?} {small:?}"
        );
        // Tiny values: the variances would underflow to 0 unscaled.
        let x = [1e-300, 1.1e-300, 1.2e-300];
        let y = [1.5e-300, 1.6e-300, 1.7e-300];
        let w = welch(&x, &y).unwrap();
        assert!((w.t - small.t).abs() < 1e-9 * small.t.abs(), "{w:?}");
        // Opposite signs at the limit: the difference of means overflows
        // unscaled.
        let w = welch(
            &[-1.7e308, -1.6e308, -1.75e308],
            &[1.7e308, 1.6e308, 1.75e308],
        )
        .unwrap();
        assert!(w.t.is_finite() && w.t > 0.0 && w.p < 0.01, "{w:?}");
    }
}
