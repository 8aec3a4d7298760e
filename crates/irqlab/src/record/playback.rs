//! A recording as a [`SnapshotSource`]: the steps of one boot directory
//! (`reader::open`) replayed one per read, so `replay` takes frames from
//! the same [`LiveSampler`](crate::sampler::LiveSampler) as live `top`
//! (deltas, thread CPU, affinity cache). Thread CPU % comes from the
//! recorded cumulative times; affinity from the recorded row metadata.
//!
//! Reads only the recording; writes nothing.

use super::reader::{RecordedSample, Recording, Replayer};
use super::schema::Shape;
use crate::filter::Filter;
use crate::sampler::{SnapshotSource, Strategy};
use crate::threads::{self, ThreadCpu};
use irqlab_core::Snapshot;
use std::sync::Arc;

/// The steps of a recording, replayed in order from any position.
pub struct RecordingSource {
    steps: Arc<[RecordedSample]>,
    /// Index of the step the next read returns.
    next: usize,
    replayer: Replayer,
    /// Thread totals and CLOCK_MONOTONIC of the previous and current step.
    prev: (Vec<ThreadCpu>, u64),
    cur: (Vec<ThreadCpu>, u64),
    /// Affinity of the numbered rows at the current step.
    affinity: Vec<(u32, Option<String>)>,
    /// A step read since the last [`SnapshotSource::metadata_changed`]
    /// changed `affinity`.
    affinity_moved: bool,
    why: String,
}

impl RecordingSource {
    /// Replay `rec` from its first step.
    pub fn new(rec: Recording) -> Self {
        let why = format!("replaying {}", rec.dir.display());
        Self::at(rec.steps.into(), 0, why)
    }

    /// The steps it replays (shared, not copied).
    pub fn steps(&self) -> Arc<[RecordedSample]> {
        Arc::clone(&self.steps)
    }

    /// Replay `steps` from step `first` (the layout and counters of the
    /// steps before it are taken in without building their samples).
    pub fn at(steps: Arc<[RecordedSample]>, first: usize, why: String) -> Self {
        let mut replayer = Replayer::default();
        let mut affinity = Vec::new();
        for step in steps.iter().take(first) {
            replayer.advance(step);
            if let Some(shape) = &step.shape {
                affinity = affinity_of(shape);
            }
        }
        RecordingSource {
            steps,
            next: first,
            replayer,
            prev: (Vec::new(), 0),
            cur: (Vec::new(), 0),
            affinity,
            affinity_moved: false,
            why,
        }
    }
}

fn affinity_of(shape: &Shape) -> Vec<(u32, Option<String>)> {
    shape
        .irq_rows
        .iter()
        .filter_map(|r| Some((r.label.parse().ok()?, r.affinity.clone())))
        .collect()
}

impl SnapshotSource for RecordingSource {
    fn read(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        let Some(step) = self.steps.get(self.next) else {
            anyhow::bail!("{}: no more samples", self.why);
        };
        self.next += 1;
        if let Some(shape) = &step.shape {
            let affinity = affinity_of(shape);
            self.affinity_moved |= affinity != self.affinity;
            self.affinity = affinity;
        }
        let s = self.replayer.apply(step)?;
        *snap = s.snap;
        self.prev = std::mem::replace(&mut self.cur, (s.threads, snap.mono_ns));
        Ok(())
    }

    fn threads(&mut self, _mono_ns: u64, out: &mut Vec<ThreadCpu>) {
        *out = threads::shares_between((&self.prev.0, self.prev.1), (&self.cur.0, self.cur.1));
    }

    fn thread_totals(&self, out: &mut Vec<ThreadCpu>) {
        out.clone_from(&self.cur.0);
    }

    fn affinity(&mut self, irq: u32) -> Option<String> {
        self.affinity
            .iter()
            .find(|(n, _)| *n == irq)
            .and_then(|(_, a)| a.clone())
    }

    fn metadata_changed(&mut self) -> bool {
        std::mem::take(&mut self.affinity_moved)
    }

    fn strategy(&self) -> Strategy {
        Strategy::ProcInterrupts
    }

    fn refresh(&mut self, _: &Snapshot, _: &Filter) -> anyhow::Result<bool> {
        Ok(false)
    }

    fn why(&self) -> &str {
        &self.why
    }
}

/// Steps for tests (here and in the replay player's).
#[cfg(test)]
pub(crate) mod fixtures {
    use super::RecordedSample;
    use crate::record::schema::{CellValue, RowKind, RowMeta, SampleTime, Shape, SourceKind};

    /// Step `seq`: LOC on CPU 0 at `loc`, ksoftirqd/0 at `ksoft_ns`; with
    /// a `shape`, as `record` lists a layout's first sample: every
    /// interrupts, softirqs and stat cell it lays out (0 unless given),
    /// none it does not.
    pub(crate) fn step(seq: u64, loc: u64, ksoft_ns: u64, shape: Option<Shape>) -> RecordedSample {
        let mut s = listed(seq, loc, ksoft_ns, shape);
        if let Some(sh) = &s.shape {
            s.cells = laid_out(sh, std::mem::take(&mut s.cells));
        }
        s
    }

    /// `cells` as a first sample of `shape` lists them: those of its
    /// interrupts, softirqs and stat cells (and every other source's)
    /// kept, the rest of its cells added as 0.
    pub(crate) fn laid_out(shape: &Shape, cells: Vec<CellValue>) -> Vec<CellValue> {
        use crate::record::reader::laid_out::checked;
        let layout: Vec<(SourceKind, String, Option<u32>)> = crate::record::cells::rows_of(shape)
            .into_iter()
            .filter(|r| checked(r.source))
            .flat_map(|r| {
                let (source, key) = (r.source, r.key);
                r.cpus.into_iter().map(move |c| (source, key.clone(), c))
            })
            .collect();
        let mut out: Vec<CellValue> = cells
            .into_iter()
            .filter(|c| !checked(c.source) || layout.contains(&(c.source, c.key.clone(), c.cpu)))
            .collect();
        for (source, key, cpu) in layout {
            if !out
                .iter()
                .any(|c| c.source == source && c.key == key && c.cpu == cpu)
            {
                out.push(CellValue {
                    source,
                    key,
                    cpu,
                    value: 0,
                });
            }
        }
        out
    }

    fn listed(seq: u64, loc: u64, ksoft_ns: u64, shape: Option<Shape>) -> RecordedSample {
        RecordedSample {
            time: SampleTime {
                seq,
                wall_ns: seq * 1_000_000_000,
                mono_ns: seq * 1_000_000_000,
            },
            shape,
            cells: vec![
                CellValue {
                    source: SourceKind::Interrupts,
                    key: "LOC".into(),
                    cpu: Some(0),
                    value: loc,
                },
                CellValue {
                    source: SourceKind::Threads,
                    key: "ksoftirqd/0".into(),
                    cpu: Some(0),
                    value: ksoft_ns,
                },
            ],
        }
    }

    pub(crate) fn shape() -> Shape {
        let row = |label: &str, kind, description: &str, affinity: Option<&str>| RowMeta {
            key: label.into(),
            label: label.into(),
            kind,
            description: description.into(),
            affinity: affinity.map(String::from),
        };
        Shape {
            irq_cpus: Some(vec![0]),
            irq_rows: vec![
                row("24", RowKind::PerCpu, "IO-APIC 5-edge ACPI:Ged", Some("0")),
                row("LOC", RowKind::PerCpu, "Local timer interrupts", None),
            ],
            threads: vec!["ksoftirqd/0".into()],
            ..Shape::default()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::fixtures::{shape, step};
    use super::*;
    use crate::record::schema::{CellValue, SourceKind};
    use crate::sampler::LiveSampler;
    use irqlab_core::delta::Gap;

    #[test]
    fn a_recording_yields_frames_with_rates_threads_and_affinity() {
        let rec = Recording {
            dir: "rec".into(),
            steps: vec![
                step(1, 100, 0, Some(shape())),
                step(2, 300, 500_000_000, None),
            ],
            warnings: Vec::new(),
            ..Recording::default()
        };
        let mut live =
            LiveSampler::with_source(RecordingSource::new(rec), Filter::default()).unwrap();
        assert_eq!(live.why(), "replaying rec");
        let mut f = live.next_frame().unwrap();
        assert_eq!(f.interval_s(), 1.0);
        assert_eq!(f.affinity(24).as_deref(), Some("0"));
        let mut r = crate::report::rates(
            f.prev,
            f.cur,
            f.filter(),
            crate::report::RateOpts::default(),
        );
        crate::report::annotate_affinity(&mut r, &mut f);
        let loc = r.interrupts.as_ref().unwrap().rows.iter();
        let loc = loc.clone().find(|l| l.label == "LOC").unwrap();
        assert_eq!(loc.total_rate, Some(200.0));
        assert_eq!(f.threads.len(), 1);
        assert_eq!(f.threads[0].cpu_pct, 50.0);
        assert!(live.next_frame().is_err(), "the end of the recording");
    }

    /// LOC per second of each frame of `steps` (`None`: a gap).
    fn loc_rates(steps: Vec<RecordedSample>) -> Vec<Option<f64>> {
        loc_frames(steps).into_iter().map(|(r, _)| r).collect()
    }

    /// `each` of the rates report of every frame `steps` replay to.
    fn each_report<T>(
        steps: Vec<RecordedSample>,
        mut each: impl FnMut(&crate::report::Report) -> T,
    ) -> Vec<T> {
        let rec = Recording {
            dir: "rec".into(),
            steps,
            warnings: Vec::new(),
            ..Recording::default()
        };
        let mut live =
            LiveSampler::with_source(RecordingSource::new(rec), Filter::default()).unwrap();
        let mut out = Vec::new();
        while let Ok(f) = live.next_frame() {
            let opts = crate::report::RateOpts::default();
            out.push(each(&crate::report::rates(f.prev, f.cur, f.filter(), opts)));
        }
        out
    }

    /// LOC per second (CPU 0) and its gap of each frame of `steps`.
    fn loc_frames(steps: Vec<RecordedSample>) -> Vec<(Option<f64>, Option<Gap>)> {
        each_report(steps, |r| {
            let rows = &r.interrupts.as_ref().unwrap().rows;
            let loc = rows.iter().find(|l| l.label == "LOC").unwrap();
            let gap = loc.gaps.as_ref().and_then(|g| g[0]);
            (loc.rates.as_ref().unwrap()[0], gap)
        })
    }

    /// A step of LOC (CPU 0) not listed: unchanged since the step before.
    fn unlisted(seq: u64) -> RecordedSample {
        RecordedSample {
            cells: Vec::new(),
            ..step(seq, 0, 0, None)
        }
    }

    /// Sample 2 is missing (an unreadable journal line) and LOC is not
    /// listed at sample 3: its value there is unknown, so the frames
    /// around the missing sample and up to LOC's next listing are gaps,
    /// never the low-then-high rates of a stale value. A counter listed
    /// right after the missing sample keeps its rate over the span.
    #[test]
    fn missing_samples_make_a_counter_a_gap_until_it_is_listed_again() {
        let steps = vec![
            step(0, 100, 0, Some(shape())),
            step(1, 200, 0, None),
            unlisted(3),
            step(4, 500, 0, None),
            step(5, 600, 0, None),
        ];
        assert_eq!(loc_rates(steps), vec![Some(100.0), None, None, Some(100.0)]);
        let steps = vec![
            step(0, 100, 0, Some(shape())),
            step(1, 200, 0, None),
            step(3, 400, 0, None),
            step(4, 500, 0, None),
        ];
        assert_eq!(
            loc_rates(steps),
            vec![Some(100.0), Some(100.0), Some(100.0)]
        );
    }

    /// The gaps a missing sample makes say so (`missing_samples`, not
    /// `reset` or `out_of_range`), and a counter of unknown value that is
    /// not listed between two samples after them did not change: its
    /// rate there is 0. A second run of missing samples makes it unknown
    /// again.
    #[test]
    fn missing_samples_gaps_say_so_and_a_quiet_unknown_counter_rates_zero() {
        let missing = Some(Gap::MissingSamples);
        let steps = vec![
            step(0, 100, 0, Some(shape())),
            step(1, 200, 0, None),
            unlisted(3),
            unlisted(4),
            unlisted(5),
            step(6, 700, 0, None),
            step(7, 800, 0, None),
        ];
        assert_eq!(
            loc_frames(steps),
            vec![
                (Some(100.0), None),
                (None, missing),
                (Some(0.0), None),
                (Some(0.0), None),
                (None, missing),
                (Some(100.0), None),
            ]
        );
        let steps = vec![
            step(0, 100, 0, Some(shape())),
            step(1, 200, 0, None),
            unlisted(3),
            unlisted(5),
            unlisted(6),
            step(7, 50, 0, None),
        ];
        assert_eq!(
            loc_frames(steps),
            vec![
                (Some(100.0), None),
                (None, missing),
                (None, missing),
                (Some(0.0), None),
                (None, missing),
            ]
        );
    }

    /// A step listing user and idle ticks of the CPUs in `ticks` (`cpu`,
    /// user, idle) and nothing else.
    fn stat_step(seq: u64, ticks: &[(u32, u64, u64)], shape: Option<Shape>) -> RecordedSample {
        let cell = |cpu, key: &str, value| CellValue {
            source: SourceKind::Stat,
            key: key.into(),
            cpu: Some(cpu),
            value,
        };
        let cells: Vec<CellValue> = ticks
            .iter()
            .flat_map(|&(c, user, idle)| [cell(c, "user", user), cell(c, "idle", idle)])
            .collect();
        let mut s = step(seq, 0, 0, shape);
        s.cells = match &s.shape {
            Some(sh) => super::fixtures::laid_out(sh, cells),
            None => cells,
        };
        s
    }

    /// CPU 0's, CPU 1's and the all-CPU user share of each frame.
    fn user_shares(steps: Vec<RecordedSample>) -> Vec<[Option<f64>; 3]> {
        each_report(steps, |r| {
            let lines = &r.stat.as_ref().unwrap().cpu_pct;
            let user = |cpu| {
                let l = lines.iter().find(|l| l.cpu == cpu).unwrap();
                l.pct.map(|p| p.user_pct)
            };
            [user(Some(0)), user(Some(1)), user(None)]
        })
    }

    /// A CPU-time line has no share (nor has the all-CPU line) over the
    /// intervals around the missing sample and around the sample listing
    /// one of its fields again; its fields not listed after that did not
    /// change, so it has its shares again (the line is not a gap until
    /// every field of it, `steal` too, changes).
    #[test]
    fn a_cpu_time_line_of_unknown_fields_has_shares_again_once_they_are_known_unchanged() {
        let shape = Shape {
            stat_cpus: Some(vec![0, 1]),
            stat_fields: 8,
            ..shape()
        };
        let mut first = stat_step(0, &[(0, 100, 100), (1, 100, 100)], Some(shape));
        for c in [0, 1] {
            for k in ["nice", "system", "iowait", "irq", "softirq", "steal"] {
                first.cells.push(CellValue {
                    source: SourceKind::Stat,
                    key: k.into(),
                    cpu: Some(c),
                    value: 5,
                });
            }
        }
        let steps = vec![
            first,
            stat_step(1, &[(0, 110, 190), (1, 150, 150)], None),
            stat_step(3, &[(0, 130, 370)], None),
            stat_step(4, &[(0, 140, 460)], None),
            stat_step(5, &[(0, 150, 550)], None),
            stat_step(6, &[(0, 160, 640), (1, 300, 300)], None),
            stat_step(7, &[(0, 170, 730)], None),
            stat_step(8, &[(0, 180, 820), (1, 350, 350)], None),
        ];
        let none = [None, None, None];
        assert_eq!(
            user_shares(steps),
            vec![
                [Some(10.0), Some(50.0), Some(30.0)],
                none,
                none,
                // CPU 1 not listed since the missing sample: no tick
                [Some(10.0), Some(0.0), Some(10.0)],
                [Some(10.0), None, None],
                [Some(10.0), None, None],
                [Some(10.0), Some(50.0), Some(30.0)],
            ]
        );
    }

    /// A `/proc/stat` total (`ctxt`) across missing samples: no count
    /// (not the huge step to or from a stand-in value), then 0 while not
    /// listed, no count into its next listing, then counts again.
    #[test]
    fn a_stat_total_across_missing_samples_has_no_count_then_zero() {
        let shape = Shape {
            stat_cpus: Some(vec![0]),
            stat_fields: 8,
            stat_other: vec!["ctxt".into()],
            ..shape()
        };
        let ctxt = |seq, v: Option<u64>, shape| {
            let mut s = stat_step(seq, &[], shape);
            s.cells.retain(|c| c.key != "ctxt");
            s.cells.extend(v.map(|value| CellValue {
                source: SourceKind::Stat,
                key: "ctxt".into(),
                cpu: None,
                value,
            }));
            s
        };
        let steps = vec![
            ctxt(0, Some(1000), Some(shape)),
            ctxt(1, Some(1100), None),
            ctxt(3, None, None),
            ctxt(4, None, None),
            ctxt(5, Some(1500), None),
            ctxt(6, Some(1600), None),
        ];
        let rec = Recording {
            dir: "rec".into(),
            steps,
            warnings: Vec::new(),
            ..Recording::default()
        };
        let mut live =
            LiveSampler::with_source(RecordingSource::new(rec), Filter::default()).unwrap();
        let mut got = Vec::new();
        while let Ok(f) = live.next_frame() {
            let r = crate::report::rates(
                f.prev,
                f.cur,
                f.filter(),
                crate::report::RateOpts::default(),
            );
            got.push(r.stat.as_ref().unwrap().ctxt);
        }
        assert_eq!(got, vec![Some(100), None, Some(0), None, Some(100)]);
    }

    /// `step` with its monotonic clock at `mono_ns`.
    fn clocked(mut s: RecordedSample, mono_ns: u64) -> RecordedSample {
        s.time.mono_ns = mono_ns;
        s
    }

    /// A monotonic clock that jumps far ahead of the wall clock (10^6 s in
    /// a 1 s recording) makes both intervals around the sample gaps,
    /// never a rate over the jumped span; an interval as long on both
    /// clocks (a stall) has its rate.
    #[test]
    fn a_monotonic_clock_jumping_ahead_of_the_wall_clock_makes_gaps() {
        const JUMP: u64 = 1_000_000 * 1_000_000_000;
        let missing = Some(Gap::MissingSamples);
        let steps = |wall_too: bool| {
            let mut v: Vec<RecordedSample> = (0..6)
                .map(|q| step(q, 100 * (q + 1), 0, (q == 0).then(shape)))
                .collect();
            for s in &mut v[3..] {
                s.time.mono_ns += JUMP;
                if wall_too {
                    s.time.wall_ns += JUMP;
                }
            }
            v
        };
        assert_eq!(
            loc_frames(steps(false)),
            vec![
                (Some(100.0), None),
                (Some(100.0), None),
                (None, missing),
                (None, missing),
                (Some(100.0), None),
            ]
        );
        let stalled = loc_frames(steps(true));
        assert_eq!(stalled[2].1, None);
        assert!(
            stalled[2].0.is_some_and(|r| r > 0.0 && r < 0.001),
            "{stalled:?}"
        );
        assert_eq!(stalled[3], (Some(100.0), None));
    }

    /// A sample whose clock did not advance (went back, or stood still)
    /// makes both intervals around it gaps, for counters, CPU time and
    /// threads: never a rate over no time, nor over the span back to
    /// where the clock was. The intervals after it have rates again.
    #[test]
    fn a_clock_that_did_not_advance_makes_both_intervals_around_it_gaps() {
        let missing = Some(Gap::MissingSamples);
        let steps = |bad: u64| {
            let shape = Shape {
                stat_cpus: Some(vec![0, 1]),
                stat_fields: 8,
                ..shape()
            };
            let ticks = |q| [(0, 10 * q, 90 * q), (1, 10 * q, 90 * q)];
            let mut v: Vec<RecordedSample> = (0..6)
                .map(|q| {
                    let mut s = stat_step(q, &ticks(q), (q == 0).then(|| shape.clone()));
                    s.cells
                        .extend(step(q, 100 * (q + 1), q * 500_000_000, None).cells);
                    s
                })
                .collect();
            v[3] = clocked(v[3].clone(), bad);
            v
        };
        for bad in [1, 1_500_000_000, 2_000_000_000] {
            assert_eq!(
                loc_frames(steps(bad)),
                vec![
                    (Some(100.0), None),
                    (Some(100.0), None),
                    (None, missing),
                    (None, missing),
                    (Some(100.0), None),
                ],
                "sample 3 at {bad} ns"
            );
        }
        let shares = user_shares(steps(1));
        let ten = [Some(10.0); 3];
        assert_eq!(shares, [ten, ten, [None; 3], [None; 3], ten]);
        // threads: none over either interval
        let rec = Recording {
            dir: "rec".into(),
            steps: steps(1),
            ..Recording::default()
        };
        let mut live =
            LiveSampler::with_source(RecordingSource::new(rec), Filter::default()).unwrap();
        let mut threads = Vec::new();
        while let Ok(f) = live.next_frame() {
            threads.push(f.threads.iter().map(|t| t.cpu_pct).collect::<Vec<_>>());
        }
        assert_eq!(
            threads,
            [vec![50.0], vec![50.0], vec![], vec![], vec![50.0]]
        );
    }

    /// `record --cpus 0,1` of a bigger host: `IPI0` prints two counts
    /// (irregular: not one per online CPU), `ERR` one. CPU 0 goes offline
    /// at sample 2: one column left, as many as `ERR` has counts. Each row
    /// replays as the kind recorded, as live `top --cpus` read it from the
    /// whole file: no `shape_changed` gap at the layout change, `ERR` one
    /// single value throughout (not a count in CPU 1's column), `IPI0` its
    /// two counts (per second: one-second samples).
    #[test]
    fn rows_replay_as_their_recorded_kind_under_as_many_columns_as_counts() {
        use crate::record::schema::{RowKind, RowMeta};
        use irqlab_core::Shape as IrqShape;
        let row = |label: &str, kind, description: &str| RowMeta {
            key: label.into(),
            label: label.into(),
            kind,
            description: description.into(),
            affinity: None,
        };
        let layout = |cpus: Vec<u32>| Shape {
            irq_cpus: Some(cpus),
            irq_rows: vec![
                row("LOC", RowKind::PerCpu, "Local timer interrupts"),
                row(
                    "IPI0",
                    RowKind::Irregular { n: 2 },
                    "Rescheduling interrupts",
                ),
                row("ERR", RowKind::Single, ""),
            ],
            ..Shape::default()
        };
        let cell = |key: &str, cpu, value| CellValue {
            source: SourceKind::Interrupts,
            key: key.into(),
            cpu,
            value,
        };
        let sample = |seq: u64, shape, cpus: &[u32]| {
            let v = 10 * (seq + 1);
            let mut cells: Vec<CellValue> = cpus.iter().map(|&c| cell("LOC", Some(c), v)).collect();
            cells.extend([
                cell("IPI0", Some(0), v),
                cell("IPI0", Some(1), 2 * v),
                cell("ERR", None, seq + 1),
            ]);
            RecordedSample {
                cells,
                ..step(seq, 0, 0, shape)
            }
        };
        let steps = vec![
            sample(0, Some(layout(vec![0, 1])), &[0, 1]),
            sample(1, None, &[0, 1]),
            sample(2, Some(layout(vec![1])), &[1]),
            sample(3, None, &[1]),
        ];
        let frames = each_report(steps, |r| {
            let rows = &r.interrupts.as_ref().unwrap().rows;
            rows.iter()
                .filter(|l| l.label != "LOC")
                .map(|l| {
                    let gaps = l.gaps.iter().flatten();
                    assert!(gaps.clone().all(Option::is_none), "{l:?}");
                    (l.label.clone(), l.shape, l.rates.clone().unwrap())
                })
                .collect::<Vec<_>>()
        });
        let each = vec![
            (
                "IPI0".to_string(),
                IrqShape::Irregular,
                vec![Some(10.0), Some(20.0)],
            ),
            ("ERR".to_string(), IrqShape::Single, vec![Some(1.0)]),
        ];
        assert_eq!(frames, vec![each; 3]);
    }

    #[test]
    fn a_recorded_affinity_change_shows_from_its_own_frame() {
        let mut moved = shape();
        moved.irq_rows[0].affinity = Some("1".into());
        let rec = Recording {
            dir: "rec".into(),
            steps: vec![
                step(1, 100, 0, Some(shape())),
                step(2, 300, 500_000_000, None),
                step(3, 400, 600_000_000, Some(moved)),
                step(4, 500, 700_000_000, None),
            ],
            ..Recording::default()
        };
        let mut live =
            LiveSampler::with_source(RecordingSource::new(rec), Filter::default()).unwrap();
        let mut seen = Vec::new();
        for _ in 0..3 {
            let mut f = live.next_frame().unwrap();
            seen.push((f.affinity(24), f.meta_epoch));
        }
        let affinity: Vec<_> = seen.iter().map(|(a, _)| a.as_deref()).collect();
        assert_eq!(affinity, [Some("0"), Some("1"), Some("1")]);
        assert_ne!(seen[0].1, seen[1].1, "the change moves the epoch");
        assert_eq!(seen[1].1, seen[2].1);
    }

    #[test]
    fn a_source_started_later_gives_the_same_frame_as_playing_through() {
        let steps: Arc<[RecordedSample]> = vec![
            step(1, 100, 0, Some(shape())),
            step(2, 300, 500_000_000, None),
            step(3, 1300, 600_000_000, None),
        ]
        .into();
        let src = RecordingSource::at(Arc::clone(&steps), 1, "seek".into());
        let mut live = LiveSampler::with_source(src, Filter::default()).unwrap();
        let mut f = live.next_frame().unwrap();
        assert_eq!(f.affinity(24).as_deref(), Some("0"), "layout from step 1");
        let mut r = crate::report::rates(
            f.prev,
            f.cur,
            f.filter(),
            crate::report::RateOpts::default(),
        );
        crate::report::annotate_affinity(&mut r, &mut f);
        let rows = &r.interrupts.as_ref().unwrap().rows;
        let loc = rows.iter().find(|l| l.label == "LOC").unwrap();
        assert_eq!(loc.total_rate, Some(1000.0), "steps 2 -> 3");
        assert!((f.threads[0].cpu_pct - 10.0).abs() < 1e-9);
    }
}
