//! `replay` of a recording made with `record --trace`: each frame's traced
//! interval, rebuilt from the recorded cumulative maps and computed by the
//! same code as live tracing (`trace::interval::between`). A frame whose
//! traced counters all went back (a second `record --trace` run in the same
//! boot directory attached the programs again, which restarts their
//! counters at zero) gets no traced interval rather than a wrong one; so
//! does a frame with an untraced end. A frame where only some rows went
//! back (a negative increment, which `record --trace` never writes) keeps
//! its traced interval without those rows' cells, and stderr says which. Reads no
//! files; the warnings go to stderr.

use super::reader::{RecordedSample, Replayer};
use crate::trace::interval::{between, Interval, IntervalView};
use crate::trace::sample::Sample;
use std::sync::Arc;

/// The recording's steps and the traced sample of the step before.
pub struct TraceReplay {
    steps: Arc<[RecordedSample]>,
    replayer: Replayer,
    next: usize,
    prev: Option<Sample>,
    sel: IntervalView,
}

impl TraceReplay {
    /// Take the first step as the baseline; `cpus` keeps only those CPUs.
    pub fn new(
        steps: Arc<[RecordedSample]>,
        cpus: Option<Vec<u32>>,
    ) -> anyhow::Result<TraceReplay> {
        let mut t = TraceReplay {
            steps,
            replayer: Replayer::default(),
            next: 0,
            prev: None,
            sel: IntervalView::of_cpus(cpus),
        };
        t.prev = t.step()?;
        Ok(t)
    }

    fn step(&mut self) -> anyhow::Result<Option<Sample>> {
        let Some(step) = self.steps.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        self.replayer.trace(step)
    }

    /// The traced interval from the step before to the next step (`None`
    /// when one end is untraced or the programs were attached again).
    pub fn next_interval(&mut self) -> anyhow::Result<Option<Interval>> {
        let cur = self.step()?;
        let seq = self
            .next
            .checked_sub(1)
            .and_then(|i| self.steps.get(i))
            .map_or(0, |s| s.time.seq);
        let iv = match (&self.prev, &cur) {
            (Some(p), Some(c)) => {
                let (iv, warning) = interval(p, c, &self.sel);
                if let Some(w) = warning {
                    eprintln!("irqlab: warning: replay: sample {seq}: {w}");
                }
                iv
            }
            _ => None,
        };
        self.prev = cur;
        Ok(iv)
    }
}

/// The traced interval from `prev` to `cur` and what stderr must say
/// about it: none when the clock did not advance or every counter went
/// back (the programs were attached again); without the rows that went
/// back (a negative increment) otherwise.
fn interval(prev: &Sample, cur: &Sample, sel: &IntervalView) -> (Option<Interval>, Option<String>) {
    if cur.at_ns <= prev.at_ns {
        return (
            None,
            Some("the traced read time did not advance: no traced interval".into()),
        );
    }
    if restarted(prev, cur) {
        return (
            None,
            Some(
                "every traced counter restarted (the programs were attached again): \
                 no traced interval"
                    .into(),
            ),
        );
    }
    let mut held = cur.clone();
    let back = held.hold_monotonic(prev);
    let warning = (!back.is_empty()).then(|| {
        format!(
            "traced counters of {} went back (a negative increment): left out of this \
             frame's trace on the CPUs where they did",
            back.join(", ")
        )
    });
    (Some(between(prev, &held, sel)), warning)
}

/// Whether every row that had counted runs in `prev` counts fewer in
/// `cur` (summed over CPUs): a new attach, not a fault of some rows.
fn restarted(prev: &Sample, cur: &Sample) -> bool {
    fn total<'a, V: 'a>(v: impl IntoIterator<Item = &'a V>, count: fn(&V) -> u64) -> u64 {
        v.into_iter().map(count).sum()
    }
    let mut had = 0usize;
    let mut back = 0usize;
    for (k, p) in &prev.irqs {
        let before = total(p, |s| s.count);
        if before == 0 {
            continue;
        }
        had += 1;
        let now = cur
            .irqs
            .iter()
            .find(|(ck, _)| ck == k)
            .map_or(0, |(_, c)| total(c, |s| s.count));
        back += usize::from(now < before);
    }
    for (k, p) in &prev.softirqs {
        let before = total(p, |s| s.run.count);
        if before == 0 {
            continue;
        }
        had += 1;
        let now = cur
            .softirqs
            .iter()
            .find(|(ck, _)| ck == k)
            .map_or(0, |(_, c)| total(c, |s| s.run.count));
        back += usize::from(now < before);
    }
    had > 0 && back == had
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::record::schema::{CellValue, SampleTime, Shape, SourceKind};
    use crate::record::trace_cells::{self, tests::sample};

    /// A step holding every traced cell of `t` (its shape when `shaped`).
    fn step(seq: u64, t: &Sample, shaped: bool) -> RecordedSample {
        let cols = [0, 1, 2];
        let keys = trace_cells::row_keys(t, &cols, &|_| true);
        let mut cells = Vec::new();
        trace_cells::row_values(t, &cols, &|_| true, &mut |i, vals| {
            let cpus: Vec<Option<u32>> = match trace_cells::cpuless(&keys[i]) {
                true => vec![None],
                false => vec![Some(0), Some(1), Some(2)],
            };
            for (c, &v) in cpus.into_iter().zip(vals) {
                cells.push(CellValue {
                    source: SourceKind::Trace,
                    key: keys[i].clone(),
                    cpu: c,
                    value: v,
                });
            }
        });
        RecordedSample {
            time: SampleTime {
                seq,
                wall_ns: seq * 1_000_000_000,
                mono_ns: seq * 1_000_000_000,
            },
            shape: shaped.then(|| Shape {
                trace_cpus: Some(vec![0, 1, 2]),
                trace_rows: keys,
                ..Shape::default()
            }),
            cells,
        }
    }

    #[test]
    fn intervals_between_recorded_samples_and_none_after_a_restart() {
        let steps = vec![
            step(0, &sample(1), true),
            step(1, &sample(3), false),
            step(2, &sample(2), false),
            step(3, &sample(4), false),
        ];
        let mut t = TraceReplay::new(steps.into(), None).unwrap();
        let iv = t.next_interval().unwrap().unwrap();
        let want = between(&sample(1), &sample(3), &IntervalView::default());
        assert_eq!(format!("{iv:?}"), format!("{want:?}"));
        assert!(t.next_interval().unwrap().is_none(), "counters went back");
        assert!(t.next_interval().unwrap().is_some(), "and go on after it");
        assert!(t.next_interval().unwrap().is_none(), "no step left");
    }

    /// `record --trace` once wrote a sample where one IRQ's counter went
    /// back (two rows for one cell): `replay --batch` dropped the whole
    /// `trace` object, softirqs included. It keeps the frame, without
    /// that row, and says so.
    #[test]
    fn a_negative_increment_leaves_out_its_row_not_the_frame() {
        let a = sample(2);
        let mut b = sample(3);
        // IRQ 24's count on CPU 2 goes back from 10 to 6
        b.irqs[0].1[2].count = 6;
        let (iv, warning) = interval(&a, &b, &IntervalView::default());
        let iv = iv.expect("the frame keeps its traced interval");
        let w = warning.expect("and stderr says so");
        assert!(
            w.contains("24 virtio0-input.0") && w.contains("negative increment"),
            "{w}"
        );
        let irq24 = iv.irqs.iter().find(|l| l.label == "24");
        assert_eq!(
            irq24.map(|l| (l.count, l.per_cpu.len())),
            Some((1, 1)),
            "the CPU that went back is left out, CPU 0's run kept: {iv:?}"
        );
        assert!(iv.irqs.iter().any(|l| l.label == "LOC"), "{iv:?}");
        let net = iv.softirqs.iter().find(|s| s.name == "NET_RX");
        assert_eq!(net.map(|s| s.count), Some(27 - 18), "softirqs kept");
        // a restart (every counter back) and a clock that did not move:
        // no interval, said too
        let mut restart = sample(2);
        restart.at_ns = sample(3).at_ns + 1;
        let (iv, w) = interval(&sample(3), &restart, &IntervalView::default());
        assert!(iv.is_none() && w.is_some_and(|w| w.contains("restarted")));
        let mut same = sample(4);
        same.at_ns = sample(3).at_ns;
        let (iv, w) = interval(&sample(3), &same, &IntervalView::default());
        assert!(iv.is_none() && w.is_some());
        let (iv, w) = interval(&sample(1), &sample(2), &IntervalView::default());
        assert!(iv.is_some() && w.is_none());
    }
}
