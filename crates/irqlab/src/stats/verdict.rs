//! The direction-aware verdict: improved or regressed only when p < alpha
//! and the whole confidence interval of the relative change lies beyond the
//! ±noise threshold on one side; otherwise no significant change (`~`).

use serde::Serialize;

pub use crate::direction::Direction;

/// Outcome for one metric and variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    NoChange,
    /// A significant change for a metric whose better direction is unknown.
    Changed,
}

impl Verdict {
    /// Short form for tables: `improved`, `regressed`, `changed`, `~`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::NoChange => "~",
            Verdict::Changed => "changed",
        }
    }
}

/// Decide from p, the interval [lo, hi] of the relative change (percent),
/// alpha, the noise threshold (percent) and the metric's direction.
pub fn decide(p: f64, lo: f64, hi: f64, alpha: f64, noise: f64, dir: Direction) -> Verdict {
    if p >= alpha {
        return Verdict::NoChange;
    }
    let up = lo > noise;
    let down = hi < -noise;
    match (up, down, dir) {
        (true, _, Direction::Higher) | (_, true, Direction::Lower) => Verdict::Improved,
        (true, _, Direction::Lower) | (_, true, Direction::Higher) => Verdict::Regressed,
        (true, _, Direction::None) | (_, true, Direction::None) => Verdict::Changed,
        _ => Verdict::NoChange,
    }
}

/// Decide from p and an absolute interval [lo, hi] of the shift (used when
/// the relative change is undefined because the baseline's centre is 0):
/// the verdict follows the sign of the shift; no noise threshold applies.
pub fn decide_shift(p: f64, lo: f64, hi: f64, alpha: f64, dir: Direction) -> Verdict {
    decide(p, lo, hi, alpha, 0.0, dir)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use Direction::*;

    #[test]
    fn rules() {
        assert_eq!(decide(0.01, 1.5, 2.5, 0.05, 1.0, Higher), Verdict::Improved);
        assert_eq!(decide(0.01, 1.5, 2.5, 0.05, 1.0, Lower), Verdict::Regressed);
        assert_eq!(
            decide(0.01, -2.5, -1.5, 0.05, 1.0, Lower),
            Verdict::Improved
        );
        assert_eq!(decide(0.01, 0.5, 2.5, 0.05, 1.0, Higher), Verdict::NoChange);
        assert_eq!(decide(0.2, 1.5, 2.5, 0.05, 1.0, Higher), Verdict::NoChange);
    }
}
