//! `replay` of a recording made with `record --trace`: each frame's traced
//! interval, rebuilt from the recorded cumulative maps and computed by the
//! same code as live tracing (`trace::interval::between`). A frame whose
//! traced counters went back (a second `record --trace` run in the same
//! boot directory attached the programs again, which restarts their
//! counters at zero) gets no traced interval rather than a wrong one; so
//! does a frame with an untraced end. Reads no files.

use super::reader::{Replayer, Step};
use crate::trace::interval::{between, Interval, Select};
use crate::trace::model::Sample;
use std::sync::Arc;

/// The recording's steps and the traced sample of the step before.
pub struct TraceReplay {
    steps: Arc<[Step]>,
    replayer: Replayer,
    next: usize,
    prev: Option<Sample>,
    sel: Select,
}

impl TraceReplay {
    /// Take the first step as the baseline; `cpus` keeps only those CPUs.
    pub fn new(steps: Arc<[Step]>, cpus: Option<Vec<u32>>) -> anyhow::Result<TraceReplay> {
        let mut t = TraceReplay {
            steps,
            replayer: Replayer::default(),
            next: 0,
            prev: None,
            sel: Select {
                cpus,
                ..Select::default()
            },
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
    /// when one end is untraced or the counters went back).
    pub fn next_interval(&mut self) -> anyhow::Result<Option<Interval>> {
        let cur = self.step()?;
        let iv = match (&self.prev, &cur) {
            (Some(p), Some(c)) if !went_back(p, c) => Some(between(p, c, &self.sel)),
            _ => None,
        };
        self.prev = cur;
        Ok(iv)
    }
}

/// Whether a counter of `cur` is below the same counter in `prev`, or the
/// clock did not advance: the programs were attached again in between.
fn went_back(prev: &Sample, cur: &Sample) -> bool {
    if cur.at_ns <= prev.at_ns {
        return true;
    }
    let irq = cur.irqs.iter().any(|(k, v)| {
        prev.irqs
            .iter()
            .find(|(pk, _)| pk == k)
            .is_some_and(|(_, p)| v.iter().zip(p).any(|(a, b)| a.count < b.count))
    });
    let soft = cur.softirqs.iter().any(|(k, v)| {
        prev.softirqs
            .iter()
            .find(|(pk, _)| pk == k)
            .is_some_and(|(_, p)| v.iter().zip(p).any(|(a, b)| a.run.count < b.run.count))
    });
    irq || soft
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::record::schema::{CellValue, SampleTime, Shape, SourceKind};
    use crate::record::trace_cells::{self, tests::sample};

    /// A step holding every traced cell of `t` (its shape when `shaped`).
    fn step(seq: u64, t: &Sample, shaped: bool) -> Step {
        let cols = [0, 1, 2];
        let keys = trace_cells::row_keys(t, &cols, &|_| true);
        let mut cells = Vec::new();
        trace_cells::row_values(t, &cols, &|_| true, &mut |i, vals| {
            let cpus: Vec<Option<u32>> = match i {
                0 => vec![None],
                _ => vec![Some(0), Some(1), Some(2)],
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
        Step {
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
        let want = between(&sample(1), &sample(3), &Select::default());
        assert_eq!(format!("{iv:?}"), format!("{want:?}"));
        assert!(t.next_interval().unwrap().is_none(), "counters went back");
        assert!(t.next_interval().unwrap().is_some(), "and go on after it");
        assert!(t.next_interval().unwrap().is_none(), "no step left");
    }
}
