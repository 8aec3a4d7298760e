//! What `serve` says on stderr about failed reads: the first failure at
//! once, repeats of the same message at most once per
//! [`REPEAT_EVERY`] (with how many were not shown), a different message
//! or a recovery at once. The metrics count every failure; this only
//! keeps stderr readable when a file stays broken at a short interval.
//! Pure: the caller passes the time and prints the lines.

use std::time::{Duration, Instant};

/// Most one line per this long for repeats of one message.
pub const REPEAT_EVERY: Duration = Duration::from_secs(60);

/// The prefix of every failure line.
const FAILED: &str = "irqlab: sample failed, serving the previous one: ";

/// The failures since the last good read.
#[derive(Debug, Default)]
pub struct FailureLog {
    /// The message of the last failure, while reads keep failing.
    last: Option<String>,
    /// When the last line about it was printed.
    printed_at: Option<Instant>,
    /// Failures of `last` since that line, not shown.
    unshown: u64,
    /// Failed reads since the last good one.
    run: u64,
}

impl FailureLog {
    /// A failed read with message `msg` at `now`: the lines to print.
    pub fn failed(&mut self, now: Instant, msg: String) -> Vec<String> {
        self.run += 1;
        let mut lines = Vec::new();
        if self.last.as_deref() == Some(msg.as_str()) {
            let due = self
                .printed_at
                .is_none_or(|t| now.saturating_duration_since(t) >= REPEAT_EVERY);
            if !due {
                self.unshown += 1;
                return lines;
            }
            lines.push(format!(
                "{FAILED}{msg} ({} more failures since)",
                self.unshown
            ));
        } else {
            lines.extend(self.unshown_line());
            lines.push(format!("{FAILED}{msg}"));
            self.last = Some(msg);
        }
        self.unshown = 0;
        self.printed_at = Some(now);
        lines
    }

    /// A good read: the line to print if reads were failing (it counts
    /// every failed read, shown or not).
    pub fn recovered(&mut self) -> Option<String> {
        self.last.as_ref()?;
        let line = format!("irqlab: sampling recovered after {} failed reads", self.run);
        *self = Self::default();
        Some(line)
    }

    /// The summary of the repeats not shown, if any.
    fn unshown_line(&self) -> Option<String> {
        let msg = self.last.as_deref()?;
        (self.unshown > 0).then(|| format!("{FAILED}{msg} ({} more failures since)", self.unshown))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_summarised_once_per_period() {
        let t0 = Instant::now();
        let mut log = FailureLog::default();
        let first = log.failed(t0, "a: bad".into());
        assert_eq!(first, [format!("{FAILED}a: bad")]);
        for i in 1..100 {
            let at = t0 + Duration::from_millis(10 * i);
            assert!(log.failed(at, "a: bad".into()).is_empty(), "{i}");
        }
        let later = log.failed(t0 + REPEAT_EVERY, "a: bad".into());
        assert_eq!(later, [format!("{FAILED}a: bad (99 more failures since)")]);
        let soon = log.failed(t0 + REPEAT_EVERY + Duration::from_secs(1), "a: bad".into());
        assert!(soon.is_empty());
    }

    #[test]
    fn a_new_message_or_a_recovery_is_said_at_once() {
        let t0 = Instant::now();
        let mut log = FailureLog::default();
        log.failed(t0, "a".into());
        log.failed(t0, "a".into());
        log.failed(t0, "a".into());
        let b = log.failed(t0, "b".into());
        assert_eq!(
            b,
            [
                format!("{FAILED}a (2 more failures since)"),
                format!("{FAILED}b")
            ]
        );
        log.failed(t0, "b".into());
        let ok = log.recovered();
        assert_eq!(
            ok.as_deref(),
            Some("irqlab: sampling recovered after 5 failed reads")
        );
        assert_eq!(log.recovered(), None);
        assert_eq!(log.failed(t0, "b".into()), [format!("{FAILED}b")]);
    }
}
