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

    /// The default for a metric named `name` (with an optional unit),
    /// decided only for the metric families irqlab knows to be costs:
    /// durations and latencies (a name ending `_ns`, `_us`, `_ms` or
    /// `_cycles` that is not a rate such as `ops_per_us`; `latency`,
    /// `cost`, `cpu_time`; a duration unit), and CPU shares (`cpu_pct`
    /// and `irq_pct`, `softirq_pct`, `sys_pct`, `system_pct`, `user_pct`,
    /// `steal_pct`, `iowait_pct` — not every percent: `idle_pct` or
    /// `cache_hit_pct` are not costs). Everything else is `None`
    /// (unknown) — the caller decides what an unknown direction means.
    pub fn infer(name: &str, unit: Option<&str>) -> Direction {
        let n = name.to_ascii_lowercase();
        let rate = n.contains("_per_") || n.starts_with("per_") || n.contains("hit");
        if rate || n.contains("idle") {
            return Direction::None;
        }
        let duration_suffix = ["_ns", "_us", "_ms", "_cycles"];
        let cost_words = ["latency", "cost", "cpu_time"];
        let cpu_shares = [
            "cpu_pct",
            "irq_pct",
            "softirq_pct",
            "sys_pct",
            "system_pct",
            "user_pct",
            "steal_pct",
            "iowait_pct",
        ];
        if duration_suffix.iter().any(|s| n.ends_with(s))
            || cost_words.iter().any(|w| n.contains(w))
            || cpu_shares.iter().any(|s| n.ends_with(s))
        {
            return Direction::Lower;
        }
        match unit {
            Some("ns" | "us" | "µs" | "ms" | "cycles") => Direction::Lower,
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
    fn direction_by_name_only_for_known_cost_families() {
        for rate_or_share in ["ops_per_us", "cache_hit_pct", "idle_pct", "bytes_per_ms"] {
            assert_eq!(
                Direction::infer(rate_or_share, None),
                Direction::None,
                "{rate_or_share}"
            );
        }
        assert_eq!(
            Direction::infer("cache_hit_pct", Some("%")),
            Direction::None
        );
        for cost in [
            "irq_cpu_pct",
            "system_cpu_pct",
            "softirq_pct",
            "rtt_p99_ns",
            "wake_us",
        ] {
            assert_eq!(Direction::infer(cost, None), Direction::Lower, "{cost}");
        }
    }

    #[test]
    fn round_trips_its_words() {
        for d in [Direction::Higher, Direction::Lower, Direction::None] {
            assert_eq!(Direction::parse(d.as_str()), Some(d));
        }
        assert_eq!(Direction::parse("up"), None);
    }
}
