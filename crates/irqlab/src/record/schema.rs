//! The recording format (docs/recording-schema.md): its version, the
//! names of files and sources, and the serde types shared by the journal
//! and the segment footers. Plain data, no I/O.

use serde::{Deserialize, Serialize};

/// Version of the recording layout that `record` writes.
pub const SCHEMA: u32 = 3;

/// Versions this irqlab reads (schema 1: raw values, sample list and
/// shapes as plain JSON in every footer; schema 2: `time` in nanoseconds).
pub const READS: &[u32] = &[1, 2, 3];

/// Sample wall clocks are recorded in whole milliseconds (schema 3), as
/// Prometheus's TSDB stores them: `time`'s dictionary costs a third less
/// (BENCHMARKS.md "Recording size"). Rates use CLOCK_MONOTONIC (ns).
pub const WALL_NS_STEP: u64 = 1_000_000;

/// `wall_ns` as recorded: whole milliseconds.
pub fn recorded_wall_ns(wall_ns: u64) -> u64 {
    wall_ns - wall_ns % WALL_NS_STEP
}

/// Whether `schema` is one this irqlab reads.
pub fn readable(schema: u32) -> bool {
    READS.contains(&schema)
}

/// The message for a recording of a schema this irqlab does not read.
pub fn unreadable(schema: u32) -> String {
    format!("recording schema {schema}, this irqlab reads schemas 1 to 3")
}

/// Journal of the samples not yet in a closed segment, per boot directory.
pub const JOURNAL: &str = "journal.jsonl";

/// Footer keys of a segment (`irqlab.samples`: schema 1 only; schema 2
/// lists the samples as `clock` rows of the table).
pub const KEY_SCHEMA: &str = "irqlab.schema";
pub const KEY_SAMPLES: &str = "irqlab.samples";
/// `source` of the one row per sample that carries its clocks (schema 2).
pub const CLOCK_SOURCE: &str = "clock";
/// `key` of that row: its value sums to CLOCK_MONOTONIC in ns.
pub const CLOCK_KEY: &str = "mono_ns";
pub const KEY_SHAPES: &str = "irqlab.shapes";
pub const KEY_ENV: &str = "irqlab.environment";
/// The samples a segment holds and its row count ([`Seqs`]): what tells a
/// whole file holding a sample range from one that only has it in its
/// name.
pub const KEY_SEQS: &str = "irqlab.seqs";

/// Samples `a–b` for messages (one number when equal).
pub fn span(a: u64, b: u64) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}–{b}")
    }
}

/// Footer `irqlab.seqs`: the sequence numbers of a segment's samples as
/// runs `[first, last]` (one run unless `recover` skipped unreadable
/// journal lines) and the rows of the whole table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seqs {
    pub runs: Vec<[u64; 2]>,
    pub rows: u64,
}

impl Seqs {
    /// The runs of sorted, distinct `seqs`.
    pub fn of(seqs: impl IntoIterator<Item = u64>, rows: u64) -> Seqs {
        let mut runs: Vec<[u64; 2]> = Vec::new();
        for s in seqs {
            match runs.last_mut() {
                Some(r) if r[1].checked_add(1) == Some(s) => r[1] = s,
                _ => runs.push([s, s]),
            }
        }
        Seqs { runs, rows }
    }

    /// First and last sample.
    pub fn range(&self) -> Option<(u64, u64)> {
        Some((self.runs.first()?[0], self.runs.last()?[1]))
    }

    /// Whether every sample of `first..=last` is here.
    pub fn holds(&self, first: u64, last: u64) -> bool {
        self.runs.iter().any(|r| r[0] <= first && last <= r[1])
    }

    /// Runs in order, apart, each first <= last (a footer can say anything).
    pub fn well_formed(&self) -> bool {
        self.runs.iter().all(|r| r[0] <= r[1])
            && self
                .runs
                .windows(2)
                .all(|w| matches!(w, [a, b] if a[1].saturating_add(1) < b[0]))
    }

    /// Whether sample `seq` is here.
    pub fn has(&self, seq: u64) -> bool {
        self.holds(seq, seq)
    }

    /// The last sample here before `seq` (samples after it may be here too).
    pub fn last_before(&self, seq: u64) -> Option<u64> {
        let r = self.runs.iter().rev().find(|r| r[0] < seq)?;
        Some(r[1].min(seq.saturating_sub(1)))
    }

    /// Whether any sample of `first..=last` is here.
    pub fn overlaps(&self, first: u64, last: u64) -> bool {
        self.runs.iter().any(|r| r[0] <= last && r[1] >= first)
    }

    /// The runs of `first..=last` not here (runs in order).
    pub fn lacks(&self, first: u64, last: u64) -> Vec<[u64; 2]> {
        let mut out = Vec::new();
        let mut from = first;
        for r in self.runs.iter().filter(|r| r[0] <= last && r[1] >= first) {
            if r[0] > from {
                out.push([from, r[0] - 1]);
            }
            match r[1].checked_add(1) {
                Some(next) if next <= last => from = next,
                _ => return out,
            }
        }
        if from <= last {
            out.push([from, last]);
        }
        out
    }

    /// The samples for messages: `10–12`, or with holes `10, 12`.
    pub fn listed(&self) -> String {
        let runs: Vec<String> = self.runs.iter().map(|r| span(r[0], r[1])).collect();
        runs.join(", ")
    }

    /// Samples missing between the first and the last, as runs.
    pub fn gaps(&self) -> Vec<[u64; 2]> {
        self.runs
            .windows(2)
            .filter_map(|w| match w {
                [a, b] => Some([a[1].saturating_add(1), b[0].saturating_sub(1)]),
                _ => None,
            })
            .collect()
    }
}

/// What a cell counts.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    #[default]
    Interrupts,
    Softirqs,
    Stat,
    Threads,
    /// Traced time (`record --trace`): the eBPF maps' cumulative counters
    /// (`record::trace_cells`).
    Trace,
}

impl SourceKind {
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Interrupts => "interrupts",
            SourceKind::Softirqs => "softirqs",
            SourceKind::Stat => "stat",
            SourceKind::Threads => "threads",
            SourceKind::Trace => "trace",
        }
    }

    pub fn from_name(s: &str) -> Option<SourceKind> {
        [
            Self::Interrupts,
            Self::Softirqs,
            Self::Stat,
            Self::Threads,
            Self::Trace,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }
}

/// One changed (or, in a segment's first sample, every) counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellValue {
    pub source: SourceKind,
    pub key: String,
    /// Real CPU id; `None` for single-value rows and totals.
    pub cpu: Option<u32>,
    pub value: u64,
}

/// Timestamps of one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleTime {
    pub seq: u64,
    pub wall_ns: u64,
    pub mono_ns: u64,
}

impl SampleTime {
    /// Whether `other` is this sample as read from another file: the same
    /// clock readings, monotonic nanoseconds exactly and wall time to the
    /// millisecond (a file of schema 2 holds it in nanoseconds, one of
    /// schema 3 in milliseconds). Every recording numbers its samples
    /// from 0 and every run from the last one there: two files holding a
    /// sample of one number with other readings are files of two
    /// recordings, and neither holds the other's samples.
    pub fn same_clock(&self, other: &SampleTime) -> bool {
        self.mono_ns == other.mono_ns && self.wall_ns / WALL_NS_STEP == other.wall_ns / WALL_NS_STEP
    }

    /// Its clock readings for messages: `2026-…Z (monotonic N ns)`.
    pub fn readings(&self) -> String {
        format!(
            "{} (monotonic {} ns)",
            crate::timestamp::rfc3339_ns(self.wall_ns, crate::timestamp::Precision::Millis),
            self.mono_ns
        )
    }
}

/// How a `/proc/interrupts` row lays out its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// One count per header CPU (cells keyed by CPU id).
    PerCpu,
    /// One count (cell with no CPU).
    Single,
    /// No counts.
    NoCounts,
    /// `n` counts not aligned with the header (cells keyed by position).
    Irregular { n: usize },
}

/// Row metadata of one interrupts row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowMeta {
    /// Cell key: the label, `#N` appended for the N-th repeat of a label.
    pub key: String,
    pub label: String,
    pub kind: RowKind,
    /// Everything after the counts (chip, hwirq, trigger, actions or the
    /// arch description), as printed.
    pub description: String,
    /// `/proc/irq/N/smp_affinity_list` when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
}

/// The layout of the files at a sample: which rows and CPUs exist. Stored
/// when it changes, so a reader rebuilds each sample exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Header CPUs of `/proc/interrupts` (`None`: file not read).
    pub irq_cpus: Option<Vec<u32>>,
    pub irq_rows: Vec<RowMeta>,
    pub soft_cpus: Option<Vec<u32>>,
    pub soft_rows: Vec<String>,
    /// CPU ids of the `cpuN` lines of `/proc/stat` (`None`: not read).
    pub stat_cpus: Option<Vec<u32>>,
    /// Fields per `cpu` line.
    pub stat_fields: usize,
    /// Other `/proc/stat` counters present (`intr`, `ctxt`, `softirq` …).
    pub stat_other: Vec<String>,
    /// Interrupt thread names (from a run's first sample on; in
    /// recordings made before it kept them there, from its second).
    pub threads: Vec<String>,
    /// Their PIDs, in the order of `threads`; empty in recordings made
    /// before PIDs were recorded (the PID is then not known).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_pids: Vec<Option<u32>>,
    /// CPUs of the traced rows (`None`: not traced; `record --trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_cpus: Option<Vec<u32>>,
    /// Keys of the traced rows (`record::trace_cells`), in layout order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace_rows: Vec<String>,
    /// Set in the shape of a `record` run's first sample only: a run
    /// starts there (replay never makes an interval across two runs).
    /// Absent in recordings made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunStart>,
}

/// The start of a `record` run in a boot directory (several runs may
/// follow one another there: the next one numbers its samples after the
/// last one's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStart {
    /// The run's row filter flags as given (`--irq LOC --cpus 1`; empty:
    /// none).
    pub filter: String,
    /// The run's `--cpus` list, ascending (absent: all CPUs, or a
    /// recording made before it was kept apart from `filter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<u32>>,
}

impl RunStart {
    /// The CPUs the run selected (`None`: every CPU): `cpus`, or in a
    /// recording made before it, the list of the `--cpus` in `filter`.
    pub fn selected_cpus(&self) -> Option<Vec<u32>> {
        if self.cpus.is_some() {
            return self.cpus.clone();
        }
        // `record` writes `--cpus LIST` last (a CPU list has no space)
        let (before, list) = self.filter.rsplit_once("--cpus ")?;
        if !(before.is_empty() || before.ends_with(' ')) || list.contains(' ') {
            return None;
        }
        let cpus = irqlab_core::CpuList::parse_list(list.as_bytes(), "--cpus").ok()?;
        Some(cpus.iter().collect())
    }

    /// The run's row filter for messages: `recorded with --cpus 1`, or
    /// `recorded without a row filter`.
    pub fn describe(&self) -> String {
        match self.filter.is_empty() {
            true => "recorded without a row filter".into(),
            false => format!("recorded with {}", self.filter),
        }
    }
}

impl Shape {
    /// The PID of thread `i` of `threads`, when recorded.
    pub fn thread_pid(&self, i: usize) -> Option<u32> {
        self.thread_pids.get(i).copied().flatten()
    }
}

/// One journal line: a sample with its changed cells.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalLine {
    pub schema: u32,
    #[serde(flatten)]
    pub time: SampleTime,
    /// Present when the layout changed (always on a journal's first line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    pub cells: Vec<CellValue>,
}

/// A shape taking effect at sample `seq` (segment footer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeAt {
    pub seq: u64,
    pub shape: Shape,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The last sample before another: in a run, at a run's end, or none.
    #[test]
    fn last_before_is_the_highest_sample_below() {
        let s = Seqs::of([3, 4, 6, 7, 8], 0);
        let got: Vec<Option<u64>> = [3, 4, 6, 7, 9].map(|q| s.last_before(q)).into();
        assert_eq!(got, [None, Some(3), Some(4), Some(6), Some(8)]);
    }

    /// A set for messages: its runs.
    #[test]
    fn listed_names_each_run() {
        let s = Seqs::of([3, 4, 6, 9, 10], 0);
        assert_eq!(s.listed(), "3–4, 6, 9–10");
        assert_eq!(Seqs::of([10, 12], 0).listed(), "10, 12");
        assert_eq!(Seqs::of([10, 11, 12], 0).listed(), "10–12");
    }

    /// The samples of a range a set lacks, and whether it has any.
    #[test]
    fn lacks_and_overlaps_go_by_runs() {
        let s = Seqs::of([3, 4, 6, 9, 10], 0);
        assert_eq!(s.lacks(0, 12), vec![[0, 2], [5, 5], [7, 8], [11, 12]]);
        assert_eq!(s.lacks(4, 6), vec![[5, 5]]);
        assert_eq!(s.lacks(3, 4), Vec::<[u64; 2]>::new());
        assert_eq!(s.lacks(7, 8), vec![[7, 8]]);
        assert_eq!(s.lacks(5, 4), Vec::<[u64; 2]>::new());
        let top = Seqs::of([u64::MAX - 1, u64::MAX], 0);
        assert_eq!(
            top.lacks(u64::MAX - 2, u64::MAX),
            vec![[u64::MAX - 2, u64::MAX - 2]]
        );
        assert!(s.overlaps(5, 6) && s.overlaps(0, 3) && !s.overlaps(7, 8));
        assert!(!s.overlaps(11, u64::MAX));
    }

    /// The CPUs a run selected: its own field, else (a recording made
    /// before it) the `--cpus` of its filter flags; none without one.
    #[test]
    fn a_run_s_cpus_come_from_its_field_or_its_filter_flags() {
        let run = |filter: &str, cpus: Option<Vec<u32>>| RunStart {
            filter: filter.into(),
            cpus,
        };
        assert_eq!(
            run("--cpus 1", Some(vec![1])).selected_cpus(),
            Some(vec![1])
        );
        assert_eq!(
            run("--irq LOC --cpus 1,3-4", None).selected_cpus(),
            Some(vec![1, 3, 4])
        );
        assert_eq!(run("--cpus 2", None).selected_cpus(), Some(vec![2]));
        assert_eq!(run("--irq LOC", None).selected_cpus(), None);
        assert_eq!(run("", None).selected_cpus(), None);
        // a regex that only looks like the flag
        assert_eq!(run("--irq x--cpus 1", None).selected_cpus(), None);
        let old: RunStart = serde_json::from_str(r#"{"filter":"--cpus 1"}"#).unwrap();
        assert_eq!(
            old.cpus, None,
            "read from a recording made before the field"
        );
        assert_eq!(old.selected_cpus(), Some(vec![1]));
    }
}
