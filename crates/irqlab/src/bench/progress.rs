//! Progress of a bench run on stderr: an indicatif bar on a terminal, one
//! line per trial otherwise (`irqlab: trial 3/20: tip #2 round_trips_per_sec=…`),
//! trials numbered from 1 as in the result files. The [`Sink`] the command
//! layer hands to the trial loop.

use super::runner::Sink;
use crate::export::stderr::visible_lines;
use crate::results::TrialRecord;
use std::borrow::Cow;
use std::io::IsTerminal;

/// Progress bar or lines on stderr.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress {
    /// A bar when stderr is a terminal, else plain lines.
    pub fn new() -> Self {
        Progress {
            bar: None,
            started: !std::io::stderr().is_terminal(),
        }
    }

    fn bar(&mut self, total: usize) -> Option<&indicatif::ProgressBar> {
        if !self.started {
            self.started = true;
            let b = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:30} trial {pos}/{len}  {msg}  eta {eta}",
            ) {
                b.set_style(style);
            }
            self.bar = Some(b);
        }
        self.bar.as_ref()
    }
}

/// `tip #3 round_trips_per_sec=12345.6` (and the gap, if any).
pub fn line(t: &TrialRecord, headline: Option<&str>) -> String {
    let value = headline
        .and_then(|h| t.metrics.get(h).map(|v| format!(" {h}={:.1}", v.value)))
        .unwrap_or_default();
    let gap = t
        .gap
        .as_deref()
        .map(|g| format!(" (gap: {g})"))
        .unwrap_or_default();
    format!("{} #{}{value}{gap}", t.variant, t.trial)
}

/// `msg` as the bar shows it: indicatif draws it past the crate's
/// `eprintln!`, so its control characters are shown as `\xNN` here, as
/// on every other line of stderr (a variant's name cannot drive the
/// terminal).
fn bar_message(msg: String) -> String {
    match visible_lines(&msg) {
        Cow::Borrowed(_) => msg,
        Cow::Owned(shown) => shown,
    }
}

impl Sink for Progress {
    fn note(&mut self, l: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("{l}")),
            None => eprintln!("{l}"),
        }
    }

    fn trial(&mut self, done: usize, total: usize, t: &TrialRecord, headline: Option<&str>) {
        let msg = line(t, headline);
        match self.bar(total) {
            Some(b) => {
                b.set_position(done as u64);
                b.set_message(bar_message(msg));
            }
            None => eprintln!(
                "irqlab: trial {done}/{total}: {msg} ({:.2} s)",
                t.duration_s
            ),
        }
    }

    fn finish(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direction::Direction;

    #[test]
    fn progress_line_shows_the_headline_and_the_trial_number_from_1() {
        let mut t = TrialRecord::new("tip", 1, "b", "t".into());
        t.insert("round_trips_per_sec", 12345.67, "1/s", Direction::Higher);
        assert_eq!(
            line(&t, Some("round_trips_per_sec")),
            "tip #1 round_trips_per_sec=12345.7"
        );
        t.gap = Some("cpu_offline".into());
        assert_eq!(line(&t, Some("missing")), "tip #1 (gap: cpu_offline)");
    }

    #[test]
    fn the_bar_message_shows_control_characters_as_hex() {
        let t = TrialRecord::new("a\x1b[31mb\x07", 1, "b", "t".into());
        assert_eq!(bar_message(line(&t, None)), "a\\x1b[31mb\\x07 #1");
        assert_eq!(bar_message("tip #1".into()), "tip #1");
    }
}
