//! The units and directions the inputs state for each metric must agree
//! across every input of a comparison: values in two units are neither
//! pooled nor compared, and two stated directions make a verdict's
//! "improved" depend on which input came first. A disagreement is a usage
//! error naming both places and both values; a direction is settled by
//! `--direction METRIC=…`. Units a reader infers from a metric's name are
//! not statements (`bytes_per_sec` is `B/s` in a bench result). Specified in
//! `docs/compare-input.md` ("Directions and units").

use super::input::VariantData;
use crate::direction::Direction;
use anyhow::Result;

/// What one place of an input (`file:line`, a probe file) states about a
/// metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub metric: String,
    pub unit: Option<String>,
    pub direction: Option<Direction>,
    pub source: String,
}

impl VariantData {
    /// Record what `source` states about `metric` (once per distinct
    /// unit and direction: the first place that states it).
    pub fn state(
        &mut self,
        metric: &str,
        unit: Option<&str>,
        direction: Option<Direction>,
        source: impl FnOnce() -> String,
    ) {
        let unit = unit.map(str::trim).filter(|u| !u.is_empty());
        if unit.is_none() && direction.is_none() {
            return;
        }
        let known = self
            .claims
            .iter()
            .any(|c| c.metric == metric && c.unit.as_deref() == unit && c.direction == direction);
        if !known {
            self.claims.push(Claim {
                metric: metric.to_string(),
                unit: unit.map(str::to_string),
                direction,
                source: source(),
            });
        }
    }
}

/// Refuse a metric stated in two units, or with two directions unless
/// `directed` (the metrics given `--direction METRIC=…`) names it.
pub fn check(variants: &[VariantData], directed: &[String]) -> Result<()> {
    let claims: Vec<&Claim> = variants.iter().flat_map(|v| &v.claims).collect();
    for (i, a) in claims.iter().enumerate() {
        for b in claims[i + 1..].iter().filter(|b| b.metric == a.metric) {
            if let (Some(ua), Some(ub)) = (&a.unit, &b.unit) {
                if ua != ub {
                    return Err(super::usage(format!(
                        "metric {}: unit {ua} in {} but {ub} in {}: values in two units \
                         are neither pooled nor compared; convert one of the inputs",
                        a.metric, a.source, b.source
                    )));
                }
            }
            if directed.contains(&a.metric) {
                continue;
            }
            if let (Some(da), Some(db)) = (a.direction, b.direction) {
                if da != db {
                    return Err(super::usage(format!(
                        "metric {m}: direction {} in {} but {} in {}: give --direction \
                         {m}=higher|lower|none to say which way is better (bench results \
                         of schema 1 state `higher` for every interrupt and softirq rate, \
                         whose better direction is not known)",
                        da.as_str(),
                        a.source,
                        db.as_str(),
                        b.source,
                        m = a.metric,
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stated(label: &str, unit: &str, dir: Direction, src: &str) -> VariantData {
        let mut v = VariantData::new(label, false);
        v.state("m", Some(unit), Some(dir), || src.to_string());
        v.state("m", Some(unit), Some(dir), || "again".to_string());
        v
    }

    #[test]
    fn units_and_directions_must_agree() {
        let a = stated("a", "1/s", Direction::Higher, "a.jsonl:1");
        assert_eq!(a.claims.len(), 1, "one claim per distinct statement");
        let b = stated("b", "1/s", Direction::Higher, "b.jsonl:1");
        check(&[a.clone(), b], &[]).unwrap();
        let ms = stated("b", "ms", Direction::Higher, "b.jsonl:2");
        let e = check(&[a.clone(), ms], &["m".into()])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "metric m: unit 1/s in a.jsonl:1 but ms in b.jsonl:2: values in two units are \
             neither pooled nor compared; convert one of the inputs"
        );
        let lower = stated("b", "1/s", Direction::Lower, "b.jsonl:3");
        let e = check(&[a.clone(), lower.clone()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "metric m: direction higher in a.jsonl:1 but lower in b.jsonl:3: give \
                 --direction m=higher|lower|none"
            ),
            "{e}"
        );
        check(&[a, lower], &["m".into()]).unwrap();
    }

    #[test]
    fn a_place_that_states_nothing_is_no_claim() {
        let mut v = VariantData::new("a", false);
        v.state("m", Some(" "), None, || "x".into());
        assert!(v.claims.is_empty());
    }
}
