//! Wall-clock timestamps as RFC 3339 (UTC, `Z`), through `humantime`: the
//! one formatter of the crate (trial records, `top --batch` lines, results).
//!
//! Owns the textual form only; clocks are read elsewhere
//! (`sampler::clock`, `SystemTime::now`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Digits after the seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// `2026-11-29T19:30:01Z`
    Seconds,
    /// `2026-11-29T19:30:01.123Z`
    Millis,
}

/// `t` as RFC 3339 UTC, e.g. `2026-11-29T19:30:01.123Z`; usable with
/// `write!` without building a `String`.
pub fn rfc3339(t: SystemTime, p: Precision) -> impl std::fmt::Display {
    match p {
        Precision::Seconds => humantime::format_rfc3339_seconds(t),
        Precision::Millis => humantime::format_rfc3339_millis(t),
    }
}

/// Nanoseconds since the Unix epoch (`CLOCK_REALTIME`) as RFC 3339 UTC.
pub fn rfc3339_ns(wall_ns: u64, p: Precision) -> String {
    rfc3339(UNIX_EPOCH + Duration::from_nanos(wall_ns), p).to_string()
}

/// Now, to the second (`started_at` of runs and trials).
pub fn now_seconds() -> String {
    rfc3339(SystemTime::now(), Precision::Seconds).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_ns(0, Precision::Millis), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339_ns(951_782_400_123_000_000, Precision::Millis),
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(
            rfc3339_ns(1_795_462_201_999_999_999, Precision::Millis),
            "2026-11-23T19:30:01.999Z"
        );
        assert_eq!(
            rfc3339_ns(1_795_462_201_999_999_999, Precision::Seconds),
            "2026-11-23T19:30:01Z"
        );
        let now = now_seconds();
        assert!(
            now.len() == 20 && now.ends_with('Z') && now.starts_with("20"),
            "{now}"
        );
    }
}
