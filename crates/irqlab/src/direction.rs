//! Which way is better for a metric: the one `Direction` shared by bench
//! results, probe runs and compare inputs.
//!
//! `None` is for metrics whose better direction is not known (an interrupt
//! rate can rise because a patch is faster or because it causes extra
//! shootdowns); compare then reports the change without the words
//! improved/regressed. [`Direction::infer`] gives the unit-aware default
//! used wherever a metric arrives without a stated direction.

use serde::{Deserialize, Serialize};

/// Which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Higher,
    Lower,
    None,
}

impl Direction {
    /// `higher`, `lower` or `none`, as written in result files.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Higher => "higher",
            Direction::Lower => "lower",
            Direction::None => "none",
        }
    }

    /// Parse `higher`, `lower` or `none`.
    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "higher" => Some(Direction::Higher),
            "lower" => Some(Direction::Lower),
            "none" => Some(Direction::None),
            _ => None,
        }
    }

    /// The default for a metric named `name` (with an optional unit):
    /// costs and durations (`_ns`, `_us`, `_ms`, `latency`, `cycles`,
    /// `cost`, CPU `_pct`) are lower-is-better; everything else is `None`
    /// (unknown) — the caller decides what an unknown direction means.
    pub fn infer(name: &str, unit: Option<&str>) -> Direction {
        let n = name.to_ascii_lowercase();
        let lower_suffix = ["_ns", "_us", "_ms", "_cycles", "_pct"];
        let lower_words = ["latency", "cycles", "cost", "cpu_pct", "cpu_time"];
        if lower_suffix.iter().any(|s| n.ends_with(s)) || lower_words.iter().any(|w| n.contains(w))
        {
            return Direction::Lower;
        }
        match unit {
            Some("ns" | "us" | "µs" | "ms" | "cycles" | "%") => Direction::Lower,
            _ => Direction::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_lower_is_better_rates_unknown() {
        assert_eq!(Direction::infer("handler_p99_ns", None), Direction::Lower);
        assert_eq!(Direction::infer("softirq_cpu_pct", None), Direction::Lower);
        assert_eq!(Direction::infer("read_latency", None), Direction::Lower);
        assert_eq!(Direction::infer("x", Some("us")), Direction::Lower);
        assert_eq!(Direction::infer("irq_tlb_per_sec", None), Direction::None);
        assert_eq!(Direction::infer("value", None), Direction::None);
    }

    #[test]
    fn round_trips_its_words() {
        for d in [Direction::Higher, Direction::Lower, Direction::None] {
            assert_eq!(Direction::parse(d.as_str()), Some(d));
        }
        assert_eq!(Direction::parse("up"), None);
    }
}
