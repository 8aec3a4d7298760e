//! The units and directions the inputs state for each metric must agree
//! across every input of a comparison: values in two units are neither
//! pooled nor compared, and two stated directions make a verdict's
//! "improved" depend on which input came first. A disagreement is a usage
//! error naming both places and both values; a direction is settled by
//! `--direction METRIC=…`. Units a reader infers from a metric's name are
//! not statements (`bytes_per_sec` is `B/s` in a bench result). A value
//! whose unit cannot be negative (a rate, a count, a size, a duration, a
//! share) is refused when it is: [`refuse_negative`]. Specified in
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

/// What a value in `unit` is when no such value can be negative: a rate
/// (`1/s`, `B/s`), a count (`1`), a size (`B`), a duration (`ns`, `us`,
/// `ms`, `s`) or a share (`%`); `None` for any other unit.
pub fn never_negative(unit: &str) -> Option<&'static str> {
    match unit.trim() {
        u if u.ends_with("/s") => Some("a rate"),
        "1" => Some("a count"),
        "B" | "KiB" | "MiB" | "GiB" => Some("a size"),
        "ns" | "us" | "\u{b5}s" | "ms" | "s" => Some("a duration"),
        "%" => Some("a share"),
        _ => None,
    }
}

/// A negative `value` of `metric` in a unit that cannot be negative
/// ([`never_negative`]) is an error naming `at` (`file:line (trial N)`, a
/// probe file's result), the metric and the value, as a value that is not
/// a number is: such a value is a damaged or edited input, and a verdict
/// on it means nothing.
pub fn refuse_negative(
    at: impl FnOnce() -> String,
    metric: &str,
    unit: Option<&str>,
    value: f64,
) -> Result<()> {
    let Some(kind) = unit.and_then(|u| never_negative(u).map(|k| (u, k))) else {
        return Ok(());
    };
    if value >= 0.0 {
        return Ok(());
    }
    anyhow::bail!(
        "{}: metric {metric} is {value} {}: expected 0 or more ({} cannot be negative)",
        at(),
        kind.0,
        kind.1
    )
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

    #[test]
    fn a_negative_rate_count_size_duration_or_share_is_refused() {
        let at = || "f.jsonl:3 (trial 3)".to_string();
        let e = refuse_negative(at, "round_trips_per_sec", Some("1/s"), -204.5)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "f.jsonl:3 (trial 3): metric round_trips_per_sec is -204.5 1/s: expected 0 or \
             more (a rate cannot be negative)"
        );
        for unit in ["B/s", "1", "B", "ns", "%"] {
            assert!(
                refuse_negative(at, "m", Some(unit), -1e9).is_err(),
                "{unit}"
            );
            refuse_negative(at, "m", Some(unit), 0.0).unwrap();
            refuse_negative(at, "m", Some(unit), -0.0).unwrap();
        }
        // a unit that may be negative, or none, is not checked
        refuse_negative(at, "offset", Some("degC"), -3.0).unwrap();
        refuse_negative(at, "value", None, -3.0).unwrap();
    }
}
