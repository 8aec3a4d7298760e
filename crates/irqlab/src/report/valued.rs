//! The one "no value" rule of every sum irqlab shows: a row's total and total
//! rate, a softirq vector's, the SUM line's columns and total, and the
//! interactive top's RATE/s over the selected CPUs. A sum of parts that
//! may lack a value (a gap) has a value when some part has one, or when
//! it has no part at all (a sum of nothing is 0); a sum whose every part
//! lacks a value has none. Only the decision lives here: how a sum
//! without a value is written (`-` in text, `null` in JSON) is each
//! renderer's, and whether a rate exists at all (a positive interval) is
//! the builder's.

/// Whether a sum has a value, told part by part: [`add`](Self::add) each
/// part, then ask [`has_value`](Self::has_value).
#[derive(Debug, Clone, Copy, Default)]
pub struct Valued {
    parts: bool,
    valued: bool,
}

impl Valued {
    /// One more part; `valued`: it has a value.
    #[inline]
    pub fn add(&mut self, valued: bool) {
        self.parts = true;
        self.valued |= valued;
    }

    /// The rule: some part has a value, or there is no part.
    #[inline]
    pub fn has_value(self) -> bool {
        !self.parts || self.valued
    }
}

/// [`Valued`] of `parts` (each: whether that part has a value), stopping
/// at the first part that has one.
pub fn has_value(parts: impl IntoIterator<Item = bool>) -> bool {
    let mut sum = Valued::default();
    for valued in parts {
        sum.add(valued);
        if valued {
            break;
        }
    }
    sum.has_value()
}

/// A sum of rates under the rule: the parts that have a value added (in
/// order, from 0), `None` when none has one.
#[derive(Debug, Clone, Copy, Default)]
pub struct ValuedSum {
    sum: f64,
    valued: Valued,
}

impl ValuedSum {
    /// Add one part (`None`: it has no value).
    #[inline]
    pub fn add(&mut self, v: Option<f64>) {
        self.valued.add(v.is_some());
        if let Some(v) = v {
            self.sum += v;
        }
    }

    /// The sum, or `None` when it has no value.
    #[inline]
    pub fn value(self) -> Option<f64> {
        self.valued.has_value().then_some(self.sum)
    }
}

/// The [`ValuedSum`] of `values`.
pub fn valued_sum(values: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let mut sum = ValuedSum::default();
    values.into_iter().for_each(|v| sum.add(v));
    sum.value()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No part: 0, a value. Every part without a value: none. One part
    /// with a value among gaps: the sum of those that have one.
    #[test]
    fn a_sum_has_no_value_only_when_every_part_lacks_one() {
        assert!(has_value([]));
        assert!(!has_value([false]));
        assert!(!has_value([false, false, false]));
        assert!(has_value([false, true, false]));
        assert!(has_value([true]));
        assert_eq!(valued_sum([]), Some(0.0));
        assert_eq!(valued_sum([None, None]), None);
        assert_eq!(valued_sum([None, Some(2.0), None, Some(0.5)]), Some(2.5));
        assert_eq!(valued_sum([Some(0.0), None]), Some(0.0));
        // part by part, as a one-pass sum tells it
        for parts in [
            &[][..],
            &[false],
            &[false, true],
            &[true, false],
            &[false, false],
        ] {
            let mut sum = Valued::default();
            parts.iter().for_each(|&p| sum.add(p));
            assert_eq!(
                sum.has_value(),
                has_value(parts.iter().copied()),
                "{parts:?}"
            );
        }
    }
}
