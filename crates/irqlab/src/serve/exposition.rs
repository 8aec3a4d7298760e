//! The `/metrics` body: Prometheus text format (version 0.0.4) from one
//! [`SampleCountersView`] of raw counters. Rates are PromQL's job; nothing here
//! divides by time. Names, labels and per-CPU shaping follow
//! [`Options`]; monotonic sums come from `accum`. A [`Renderer`] takes
//! every sample in two steps: [`Renderer::accumulate`] (always: advances
//! the sums carried from sample to sample) and [`Renderer::write`] (only
//! when a body is wanted), so a body can be skipped without changing any
//! later one. Pure: writes into a `Vec<u8>`, reads nothing.

use super::accum::{Kind, Sums};
use super::options::{Naming, Options, PerCpu};
use crate::export::row_key::RowCache;
use crate::sampler::counters::SampleCountersView;
use crate::threads::{ThreadCpu, ThreadKind};
use irqlab_core::delta::single_value;
use irqlab_core::interrupts::{IrqRow, Shape};
use irqlab_core::stat::CpuTimes;
use irqlab_core::{Interrupts, Snapshot, SoftirqRow};
use std::io::Write;

/// irqlab's own counters, as of the sample being rendered.
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnStats {
    /// CPU time of the whole process (all threads), ns.
    pub process_cpu_ns: u64,
    /// CPU time spent sampling and rendering, ns.
    pub sampling_cpu_ns: u64,
    pub samples: u64,
    pub scrapes: u64,
    pub max_rss_bytes: u64,
    /// Reads that failed (the previous sample's values are served).
    pub sample_errors: u64,
    /// Whether the latest read succeeded.
    pub last_sample_ok: bool,
}

/// Renders bodies; keeps the monotonic sums between samples.
#[derive(Debug)]
pub struct Renderer {
    opts: Options,
    irqs: Sums,
    softirqs: Sums,
    ksoftirqd: Sums,
    /// Series written into the last body.
    series: u64,
    /// Monotonic sums of the selected CPUs' irq and softirq time
    /// (`--cpus` with `sum` or `top=K`).
    cpu_time: Sums,
    /// Per row position of `/proc/interrupts`: the row's labels, built
    /// again only when the row at that position changes.
    irq_keys: RowCache<Labels>,
    /// Per vector position of `/proc/softirqs`: its labels.
    softirq_keys: RowCache<Labels>,
    /// Where a row's labels are built before they are cached.
    labels_tmp: Vec<u8>,
    /// Arch labels seen in the body being written (row index, count).
    seen: Vec<(usize, u32)>,
    /// Reused per body: the `/proc/stat` rows of the CPU time families
    /// and the ksoftirqd threads' (CPU, ns) with both columns apart.
    cpu_rows: Vec<(CpuLabel, u64, u64)>,
    ksoftirqd_rows: Vec<(u32, u64)>,
    ksoftirqd_cpus: Vec<u32>,
    ksoftirqd_ns: Vec<u64>,
    /// The per-CPU line starts of the interrupt, softirq and ksoftirqd
    /// families.
    irq_prefixes: CpuPrefixes,
    softirq_prefixes: CpuPrefixes,
    ksoftirqd_prefixes: CpuPrefixes,
}

/// The `cpu` label of a CPU time series: a CPU's id, `all` (a sum), or
/// empty (a `/proc/stat` line without an id).
#[derive(Debug, Clone, Copy)]
enum CpuLabel {
    Id(u32),
    All,
    Empty,
}

/// What a row's cache entry ([`RowCache`]: the row's label and
/// description, which the filter test depends on, then its labels) keeps
/// beside the labels: the occurrence among the kept rows they were built
/// for (which they depend on). The entry's output is `cpu="all",` then
/// the labels without `cpu` (what follows `cpu="all",` is the key of the
/// per-CPU lines), then what follows a per-CPU line's CPU id (`"`, `,`
/// and the key when there is one, `} `, see [`line_tail`]). The
/// escaping, label joins and filter test of a row are done when it
/// changes, not per sample.
#[derive(Debug, Clone, Copy)]
struct Labels {
    /// The occurrence the labels were built for ([`NOT_BUILT`]: none).
    occurrence: u32,
    /// Length of `cpu="all",` and the labels; the tail follows.
    all_len: u32,
}

/// [`Labels::occurrence`] of a row whose labels are not built.
const NOT_BUILT: u32 = u32::MAX;

impl Default for Labels {
    fn default() -> Self {
        Labels {
            occurrence: NOT_BUILT,
            all_len: 0,
        }
    }
}

/// `name{cpu="CPU",key} ` (`key`: escaped labels, maybe empty).
fn line_start(o: &mut Vec<u8>, name: &str, cpu: &str, key: &[u8]) {
    o.extend_from_slice(name.as_bytes());
    o.extend_from_slice(b"{cpu=\"");
    o.extend_from_slice(cpu.as_bytes());
    o.push(b'"');
    if !key.is_empty() {
        o.push(b',');
        o.extend_from_slice(key);
    }
    o.extend_from_slice(b"} ");
}

/// The labels of a row as cached: `cpu="all",` and the labels (its
/// single series), and its per-CPU lines' labels.
struct RowView<'a> {
    all: &'a [u8],
    series: RowSeries<'a>,
}

/// The cached labels of the row at `pos` for this occurrence, built by
/// `build` (the labels without `cpu`) when they are not yet.
#[inline]
fn labels_for<'c>(
    cache: &'c mut RowCache<Labels>,
    pos: usize,
    occurrence: u32,
    tmp: &mut Vec<u8>,
    build: impl FnOnce() -> String,
) -> RowView<'c> {
    if cache.ext(pos).occurrence != occurrence {
        build_labels(cache, pos, occurrence, tmp, build);
    }
    let out = cache.output(pos);
    let all_len = (cache.ext(pos).all_len as usize).min(out.len());
    let (all, tail) = out.split_at(all_len);
    RowView {
        all,
        series: RowSeries {
            key: all.get(ALL_PREFIX.len()..).unwrap_or_default(),
            tail,
        },
    }
}

#[cold]
#[inline(never)]
fn build_labels(
    cache: &mut RowCache<Labels>,
    pos: usize,
    occurrence: u32,
    tmp: &mut Vec<u8>,
    build: impl FnOnce() -> String,
) {
    tmp.clear();
    tmp.extend_from_slice(ALL_PREFIX.as_bytes());
    tmp.extend_from_slice(build().as_bytes());
    let all_len = tmp.len();
    let mut tail = Vec::new();
    line_tail(&mut tail, tmp.get(ALL_PREFIX.len()..).unwrap_or_default());
    tmp.extend_from_slice(&tail);
    let ext = Labels {
        occurrence,
        all_len: u32::try_from(all_len).unwrap_or(0),
    };
    cache.rewrite(pos, tmp, ext);
}

/// `tail` becomes what follows a per-CPU line's CPU id for labels `key`
/// (escaped, maybe empty): `"`, then `,key` when there is a key, `} `.
fn line_tail(tail: &mut Vec<u8>, key: &[u8]) {
    tail.clear();
    tail.push(b'"');
    if !key.is_empty() {
        tail.push(b',');
        tail.extend_from_slice(key);
    }
    tail.extend_from_slice(b"} ");
}

/// The labels of one per-CPU row: its key (`accum`'s identity of the
/// row, and the labels of its `all`/`other` lines) and the tail of its
/// per-CPU lines, built from the key.
#[derive(Clone, Copy)]
struct RowSeries<'a> {
    key: &'a [u8],
    tail: &'a [u8],
}

/// The start of a family's per-CPU lines, `name{cpu="K"`, for each
/// column of its CPU list: built again only when the family's name or
/// CPU list changes (a few tens of bytes a CPU), so a per-CPU line is
/// this, the row's tail and the value.
#[derive(Debug, Default)]
struct CpuPrefixes {
    name: &'static str,
    cpus: Vec<u32>,
    bytes: Vec<u8>,
    /// End of each column's prefix in `bytes`.
    ends: Vec<usize>,
}

impl CpuPrefixes {
    /// For family `name` over `cpus` (the columns, in order).
    fn prepare(&mut self, name: &'static str, cpus: &[u32]) {
        if self.name == name && self.cpus == cpus {
            return;
        }
        self.name = name;
        self.cpus.clear();
        self.cpus.extend_from_slice(cpus);
        self.bytes.clear();
        self.ends.clear();
        let mut buf = itoa::Buffer::new();
        for &c in cpus {
            self.bytes.extend_from_slice(name.as_bytes());
            self.bytes.extend_from_slice(b"{cpu=\"");
            self.bytes.extend_from_slice(buf.format(c).as_bytes());
            self.ends.push(self.bytes.len());
        }
    }

    /// The prefix of column `i` when it was prepared for CPU `cpu`.
    fn get(&self, i: usize, cpu: u32) -> Option<&[u8]> {
        if self.cpus.get(i) != Some(&cpu) {
            return None;
        }
        let start = match i.checked_sub(1) {
            Some(p) => *self.ends.get(p)?,
            None => 0,
        };
        self.bytes.get(start..*self.ends.get(i)?)
    }
}

/// The `cpu` label of a row's single series.
const ALL_PREFIX: &str = "cpu=\"all\",";

/// A family being written: its name and where the series go.
struct Family<'a> {
    name: &'static str,
    out: &'a mut Vec<u8>,
    series: &'a mut u64,
}

impl Family<'_> {
    /// One series: `name{labels} value`.
    fn line(&mut self, labels: &[u8], value: SeriesValue) {
        let o = &mut *self.out;
        o.extend_from_slice(self.name.as_bytes());
        o.push(b'{');
        o.extend_from_slice(labels);
        o.extend_from_slice(b"} ");
        value.write(o);
        o.push(b'\n');
        *self.series += 1;
    }

    /// One series labelled with `pairs` (`a="x",b="y"`, values escaped),
    /// written straight into the body: [`labels`]'s bytes without its
    /// string.
    fn line_pairs(&mut self, pairs: &[(&str, &str)], value: SeriesValue) {
        let o = &mut *self.out;
        o.extend_from_slice(self.name.as_bytes());
        o.push(b'{');
        for (i, (k, v)) in pairs.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(k.as_bytes());
            o.extend_from_slice(b"=\"");
            escape_bytes(o, v);
            o.push(b'"');
        }
        o.extend_from_slice(b"} ");
        value.write(o);
        o.push(b'\n');
        *self.series += 1;
    }

    /// One per-CPU series from its prepared start (`name{cpu="K"`, see
    /// [`CpuPrefixes`]) and its row's tail (see [`line_tail`]): the same
    /// bytes as [`Family::line_cpu`] in two copies (there are millions of
    /// these lines at 1000+ CPUs).
    fn line_prefixed(&mut self, prefix: &[u8], tail: &[u8], value: SeriesValue) {
        let o = &mut *self.out;
        o.extend_from_slice(prefix);
        o.extend_from_slice(tail);
        value.write(o);
        o.push(b'\n');
        *self.series += 1;
    }

    /// One series labelled `cpu="CPU"` then `key` (already escaped
    /// labels, maybe empty): the per-CPU lines, written without an
    /// intermediate string (there are millions of them at 1000+ CPUs).
    fn line_cpu(&mut self, cpu: &str, key: &[u8], value: SeriesValue) {
        let o = &mut *self.out;
        line_start(o, self.name, cpu, key);
        value.write(o);
        o.push(b'\n');
        *self.series += 1;
    }
}

#[derive(Clone, Copy)]
enum SeriesValue {
    Int(u64),
    /// A count of `unit`-ths of a second, written in seconds.
    Seconds {
        count: u64,
        unit: u64,
    },
}

impl SeriesValue {
    fn write(self, o: &mut Vec<u8>) {
        match self {
            SeriesValue::Int(v) => o.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
            SeriesValue::Seconds { count, unit } => {
                let unit = unit.max(1);
                o.extend_from_slice(itoa::Buffer::new().format(count / unit).as_bytes());
                let frac = nanos_of(count % unit, unit);
                if frac != 0 {
                    // `.` and nine digits, trailing zeros dropped
                    let mut digits = [b'0'; 10];
                    digits[0] = b'.';
                    let mut rest = frac;
                    for d in digits[1..].iter_mut().rev() {
                        *d = b'0' + (rest % 10) as u8;
                        rest /= 10;
                    }
                    let end = digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
                    o.extend_from_slice(&digits[..end]);
                }
            }
        }
    }
}

/// `rem` `unit`-ths of a second (`rem < unit`) in whole nanoseconds,
/// rounded down: without a 128-bit division when `unit` divides 10^9
/// (ticks, ns).
fn nanos_of(rem: u64, unit: u64) -> u64 {
    const NS: u64 = 1_000_000_000;
    if unit <= NS && NS % unit == 0 {
        return rem * (NS / unit);
    }
    u64::try_from(u128::from(rem) * u128::from(NS) / u128::from(unit)).unwrap_or(NS - 1)
}

/// Append `v` to `out` as a label value (`\`, `"` and newline escaped).
pub fn escape_into(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Append `v` to `out` as a label value, escaped as [`escape_into`] does.
fn escape_bytes(out: &mut Vec<u8>, v: &str) {
    let b = v.as_bytes();
    if !b.iter().any(|&c| matches!(c, b'\\' | b'"' | b'\n')) {
        out.extend_from_slice(b);
        return;
    }
    let mut s = String::with_capacity(v.len() + 8);
    escape_into(&mut s, v);
    out.extend_from_slice(s.as_bytes());
}

/// `a="x",b="y"` from pairs.
fn labels(pairs: &[(&str, &str)]) -> String {
    let mut s = String::with_capacity(64);
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(k);
        s.push_str("=\"");
        escape_into(&mut s, v);
        s.push('"');
    }
    s
}

fn header(out: &mut Vec<u8>, name: &str, help: &str, kind: &str) {
    for part in [
        "# HELP ",
        name,
        " ",
        help,
        "\n# TYPE ",
        name,
        " ",
        kind,
        "\n",
    ] {
        out.extend_from_slice(part.as_bytes());
    }
}

impl Renderer {
    pub fn new(opts: Options) -> Renderer {
        Renderer {
            opts,
            irqs: Sums::default(),
            softirqs: Sums::default(),
            ksoftirqd: Sums::new(Kind::ThreadNs),
            series: 0,
            cpu_time: Sums::new(Kind::Ticks),
            irq_keys: RowCache::default(),
            softirq_keys: RowCache::default(),
            labels_tmp: Vec::new(),
            seen: Vec::new(),
            cpu_rows: Vec::new(),
            ksoftirqd_rows: Vec::new(),
            ksoftirqd_cpus: Vec::new(),
            ksoftirqd_ns: Vec::new(),
            irq_prefixes: CpuPrefixes::default(),
            softirq_prefixes: CpuPrefixes::default(),
            ksoftirqd_prefixes: CpuPrefixes::default(),
        }
    }

    /// The options this renderer was built with.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// [`Renderer::accumulate`] then [`Renderer::write`]: the body of a
    /// new sample `s` into `out`.
    pub fn render(&mut self, s: SampleCountersView, own: &OwnStats, out: &mut Vec<u8>) {
        self.accumulate(s);
        self.write(s, own, out);
    }

    /// Advance what the bodies carry from sample to sample, the monotonic
    /// sums of `--per-cpu sum` and `top=K` (and of `--cpus` under either),
    /// by the new sample `s`. Every sample must pass here, in order,
    /// whether or not its body is written: a CPU going offline, a wrap or
    /// a reset between two bodies is then summed as when each sample's
    /// body is written. `--per-cpu all` has no such state: nothing to do.
    pub fn accumulate(&mut self, s: SampleCountersView) {
        if self.opts.per_cpu == PerCpu::All {
            return;
        }
        let snap = s.snap;
        if let Some(m) = snap.interrupts.as_ref() {
            self.accumulate_interrupts(m, snap.mono_ns);
        }
        if let Some(m) = snap.softirqs.as_ref() {
            self.softirqs.begin(snap.mono_ns);
            let label = softirq_label(self.opts.naming);
            for (pos, row) in m.rows.iter().enumerate() {
                let k = softirq_labels(
                    &mut self.softirq_keys,
                    &mut self.labels_tmp,
                    pos,
                    row,
                    label,
                );
                let (key, counts) = (k.series.key, &row.counts);
                accumulate_row(&mut self.softirqs, &self.opts, key, &m.cpus, counts);
            }
            self.softirqs.finish();
        }
        if self.opts.naming == Naming::Irqlab {
            self.accumulate_cpu_time(snap);
        }
        if self.ksoftirqd_columns(s.threads) {
            self.ksoftirqd.begin(snap.mono_ns);
            let (cpus, ns) = (&self.ksoftirqd_cpus, &self.ksoftirqd_ns);
            let key = KSOFTIRQD_LABELS.key;
            accumulate_row(&mut self.ksoftirqd, &self.opts, key, cpus, ns);
            self.ksoftirqd.finish();
        }
    }

    fn accumulate_interrupts(&mut self, m: &Interrupts, mono_ns: u64) {
        self.irqs.begin(mono_ns);
        let (opts, sums) = (&self.opts, &mut self.irqs);
        let mut columns = Vec::new();
        each_kept_row(
            &mut self.irq_keys,
            &mut self.seen,
            &mut self.labels_tmp,
            opts,
            m.rows(),
            |row, k| match row.shape {
                Shape::PerCpu => {
                    let kind = single_value(row).map(|_| Kind::Single(row.width));
                    accumulate_row_as(sums, opts, kind, k.series.key, &m.cpus, &row.counts);
                }
                Shape::Single => accumulate_single(sums, row, k.series.key),
                Shape::Irregular => accumulate_irregular(sums, &mut columns, row, k.series.key),
                Shape::NoCounts => {}
            },
        );
        self.irqs.finish();
    }

    /// The sums of the `--cpus` selection's irq and softirq time.
    fn accumulate_cpu_time(&mut self, snap: &Snapshot) {
        let Some(st) = snap.stat.as_ref() else {
            return;
        };
        if !self.opts.picks_cpus() {
            return;
        }
        let kept: Vec<&CpuTimes> = st
            .cpus
            .iter()
            .filter(|c| c.cpu.is_some_and(|id| self.opts.keep_cpu(id)))
            .collect();
        let ids: Vec<u32> = kept.iter().filter_map(|c| c.cpu).collect();
        let irq: Vec<u64> = kept.iter().map(|c| c.irq()).collect();
        let soft: Vec<u64> = kept.iter().map(|c| c.softirq()).collect();
        self.cpu_time.begin(snap.mono_ns);
        self.cpu_time.update("irq", &ids, &irq, &[]);
        self.cpu_time.update("softirq", &ids, &soft, &[]);
        self.cpu_time.finish();
    }

    /// Write the body of `s`, the sample last passed to
    /// [`Renderer::accumulate`], into `out` (cleared first). Any sample
    /// may be written or not: the body is the one every sample's render
    /// would have given.
    pub fn write(&mut self, s: SampleCountersView, own: &OwnStats, out: &mut Vec<u8>) {
        out.clear();
        self.series = 0;
        self.interrupts(s.snap, out);
        match self.opts.naming {
            Naming::Irqlab => {
                self.softirqs_family(s.snap, out);
                self.cpu_time(s.snap, out);
            }
            Naming::Node => {
                self.node_stat(s.snap, out);
                self.softirqs_family(s.snap, out);
                self.node_cpu(s.snap, out);
                self.node_uname(out);
            }
        }
        self.threads(s.threads, out);
        self.own(own, s.snap.wall_ns, out);
    }

    fn interrupts(&mut self, snap: &Snapshot, out: &mut Vec<u8>) {
        let (name, help) = match self.opts.naming {
            Naming::Irqlab => (
                "irqlab_interrupts_total",
                interrupts_help(self.opts.per_cpu),
            ),
            Naming::Node => ("node_interrupts_total", "Interrupt details."),
        };
        header(out, name, help, "counter");
        let Some(m) = snap.interrupts.as_ref() else {
            return;
        };
        if self.opts.per_cpu == PerCpu::All {
            self.irq_prefixes.prepare(name, &m.cpus);
        }
        let mut fam = Family {
            name,
            out,
            series: &mut self.series,
        };
        let (opts, sums, prefixes) = (&self.opts, &self.irqs, &self.irq_prefixes);
        each_kept_row(
            &mut self.irq_keys,
            &mut self.seen,
            &mut self.labels_tmp,
            opts,
            m.rows(),
            |row, k| match row.shape {
                Shape::PerCpu => per_cpu(
                    &mut fam,
                    opts,
                    sums,
                    PerCpuRow {
                        labels: k.series,
                        prefixes,
                        cpus: &m.cpus,
                        counts: &row.counts,
                    },
                ),
                Shape::Single | Shape::Irregular if opts.naming == Naming::Irqlab => {
                    let v = single_series_value(opts, sums, row, k.series.key);
                    fam.line(k.all, SeriesValue::Int(v));
                }
                _ => {}
            },
        );
    }

    fn softirqs_family(&mut self, snap: &Snapshot, out: &mut Vec<u8>) {
        let (name, help) = match self.opts.naming {
            Naming::Irqlab => ("irqlab_softirqs_total", softirqs_help(self.opts.per_cpu)),
            // node_exporter's softirqs collector (1.6.0 and later).
            Naming::Node => ("node_softirqs_functions_total", "Softirq counts per CPU."),
        };
        let label = softirq_label(self.opts.naming);
        header(out, name, help, "counter");
        let Some(m) = snap.softirqs.as_ref() else {
            return;
        };
        if self.opts.per_cpu == PerCpu::All {
            self.softirq_prefixes.prepare(name, &m.cpus);
        }
        let mut fam = Family {
            name,
            out,
            series: &mut self.series,
        };
        for (pos, row) in m.rows.iter().enumerate() {
            let k = softirq_labels(
                &mut self.softirq_keys,
                &mut self.labels_tmp,
                pos,
                row,
                label,
            );
            per_cpu(
                &mut fam,
                &self.opts,
                &self.softirqs,
                PerCpuRow {
                    labels: k.series,
                    prefixes: &self.softirq_prefixes,
                    cpus: &m.cpus,
                    counts: &row.counts,
                },
            );
        }
    }

    fn cpu_time(&mut self, snap: &Snapshot, out: &mut Vec<u8>) {
        let Some(st) = snap.stat.as_ref() else {
            return;
        };
        let unit = self.opts.ticks_per_s;
        // (cpu label, irq ticks, softirq ticks)
        let mut rows = std::mem::take(&mut self.cpu_rows);
        rows.clear();
        if self.opts.per_cpu == PerCpu::All {
            let label = |c: &CpuTimes| c.cpu.map_or(CpuLabel::Empty, CpuLabel::Id);
            rows.extend(
                st.cpus
                    .iter()
                    .filter(|c| c.cpu.is_none_or(|id| self.opts.keep_cpu(id)))
                    .map(|c| (label(c), c.irq(), c.softirq())),
            );
        } else if self.opts.picks_cpus() {
            // The selected CPUs' sum, kept monotonic as the other sums
            // (advanced by `accumulate_cpu_time`).
            let sum = |key| self.cpu_time.current(key).map_or(0, |(s, _)| s);
            rows.push((CpuLabel::All, sum("irq"), sum("softirq")));
        } else {
            rows.push((CpuLabel::All, st.total.irq(), st.total.softirq()));
        }
        let mut buf = itoa::Buffer::new();
        for mode in ["irq", "softirq"] {
            let (name, help) = match (self.opts.naming, mode) {
                (Naming::Node, _) => (
                    "node_cpu_seconds_total",
                    "Seconds the CPUs spent in each mode.",
                ),
                (Naming::Irqlab, "irq") => (
                    "irqlab_cpu_irq_seconds_total",
                    cpu_time_help(true, self.opts.per_cpu),
                ),
                (Naming::Irqlab, _) => (
                    "irqlab_cpu_softirq_seconds_total",
                    cpu_time_help(false, self.opts.per_cpu),
                ),
            };
            // node_cpu_seconds_total is one family: its header comes once.
            if self.opts.naming == Naming::Irqlab || mode == "irq" {
                header(out, name, help, "counter");
            }
            let mut fam = Family {
                name,
                out,
                series: &mut self.series,
            };
            for &(cpu, irq, softirq) in &rows {
                let id = match cpu {
                    CpuLabel::Id(c) => buf.format(c),
                    CpuLabel::All => "all",
                    CpuLabel::Empty => "",
                };
                let count = if mode == "irq" { irq } else { softirq };
                let value = SeriesValue::Seconds { count, unit };
                match self.opts.naming {
                    Naming::Irqlab => fam.line_pairs(&[("cpu", id)], value),
                    Naming::Node => fam.line_pairs(&[("cpu", id), ("mode", mode)], value),
                }
            }
        }
        self.cpu_rows = rows;
    }

    /// node_exporter's stat collector: `node_intr_total` and
    /// `node_softirqs_total{vector}` (the `/proc/stat` `softirq` line,
    /// vector names in lower case as node_exporter writes them).
    fn node_stat(&mut self, snap: &Snapshot, out: &mut Vec<u8>) {
        let Some(st) = snap.stat.as_ref() else {
            return;
        };
        let name = "node_intr_total";
        header(out, name, "Total number of interrupts serviced.", "counter");
        let _ = writeln!(out, "{name} {}", st.intr_total);
        self.series += 1;
        if st.softirq_total.is_none() {
            return;
        }
        let name = "node_softirqs_total";
        header(out, name, "Number of softirq calls.", "counter");
        let mut fam = Family {
            name,
            out,
            series: &mut self.series,
        };
        for (vector, &v) in NODE_SOFTIRQ_VECTORS.iter().zip(&st.softirq) {
            fam.line_pairs(&[("vector", vector)], SeriesValue::Int(v));
        }
    }

    /// node_exporter's cpu collector: `node_cpu_seconds_total{cpu,mode}`
    /// for every mode and `node_cpu_guest_seconds_total{cpu,mode}`, one
    /// series per CPU whatever `--per-cpu` (`--cpus` still selects).
    fn node_cpu(&mut self, snap: &Snapshot, out: &mut Vec<u8>) {
        let Some(st) = snap.stat.as_ref() else {
            return;
        };
        let unit = self.opts.ticks_per_s;
        let cpus: Vec<&CpuTimes> = st
            .cpus
            .iter()
            .filter(|c| c.cpu.is_some_and(|id| self.opts.keep_cpu(id)))
            .collect();
        let families: [(&'static str, &str, NodeModes); 2] = [
            (
                "node_cpu_seconds_total",
                "Seconds the CPUs spent in each mode.",
                &[
                    ("user", "user"),
                    ("nice", "nice"),
                    ("system", "system"),
                    ("idle", "idle"),
                    ("iowait", "iowait"),
                    ("irq", "irq"),
                    ("softirq", "softirq"),
                    ("steal", "steal"),
                ],
            ),
            (
                "node_cpu_guest_seconds_total",
                "Seconds the CPUs spent in guests (VMs) for each mode.",
                &[("user", "guest"), ("nice", "guest_nice")],
            ),
        ];
        let mut buf = itoa::Buffer::new();
        for (name, help, modes) in families {
            header(out, name, help, "counter");
            let mut fam = Family {
                name,
                out,
                series: &mut self.series,
            };
            for c in &cpus {
                let id = buf.format(c.cpu.unwrap_or(0));
                for (mode, field) in modes {
                    // Older kernels print fewer fields: those modes are absent.
                    let Some(count) = c.get(field) else {
                        continue;
                    };
                    fam.line_pairs(
                        &[("cpu", id), ("mode", mode)],
                        SeriesValue::Seconds { count, unit },
                    );
                }
            }
        }
    }

    /// node_exporter's uname collector: `node_uname_info`, which Node
    /// Exporter Full's `$job` and `$node` variables are built from.
    fn node_uname(&mut self, out: &mut Vec<u8>) {
        let name = "node_uname_info";
        header(
            out,
            name,
            "Labeled system information as provided by the uname system call.",
            "gauge",
        );
        let Ok(u) = nix::sys::utsname::uname() else {
            return;
        };
        let s = |v: &std::ffi::OsStr| v.to_string_lossy().into_owned();
        let l = labels(&[
            ("domainname", &s(u.domainname())),
            ("machine", &s(u.machine())),
            ("nodename", &s(u.nodename())),
            ("release", &s(u.release())),
            ("sysname", &s(u.sysname())),
            ("version", &s(u.version())),
        ]);
        let _ = writeln!(out, "{name}{{{l}}} 1");
        self.series += 1;
    }

    /// The ksoftirqd threads' CPUs and CPU times into `ksoftirqd_cpus`
    /// and `ksoftirqd_ns` (by CPU); false when there are none.
    fn ksoftirqd_columns(&mut self, threads: &[ThreadCpu]) -> bool {
        let ks = &mut self.ksoftirqd_rows;
        ks.clear();
        ks.extend(threads.iter().filter_map(|t| match t.kind {
            ThreadKind::Ksoftirqd { cpu } => Some((cpu, t.cpu_ns)),
            ThreadKind::IrqThread { .. } => None,
        }));
        ks.sort_unstable();
        let (cpus, ns) = (&mut self.ksoftirqd_cpus, &mut self.ksoftirqd_ns);
        cpus.clear();
        cpus.extend(ks.iter().map(|k| k.0));
        ns.clear();
        ns.extend(ks.iter().map(|k| k.1));
        !ks.is_empty()
    }

    fn threads(&mut self, threads: &[ThreadCpu], out: &mut Vec<u8>) {
        let name = "irqlab_ksoftirqd_cpu_seconds_total";
        header(out, name, ksoftirqd_help(self.opts.per_cpu), "counter");
        if self.ksoftirqd_columns(threads) {
            let (cpus, ns) = (&self.ksoftirqd_cpus, &self.ksoftirqd_ns);
            let mut fam = Family {
                name,
                out,
                series: &mut self.series,
            };
            if self.opts.per_cpu == PerCpu::All {
                self.ksoftirqd_prefixes.prepare(name, cpus);
            }
            per_cpu_with(
                &mut fam,
                &self.opts,
                &self.ksoftirqd,
                PerCpuRow {
                    labels: KSOFTIRQD_LABELS,
                    prefixes: &self.ksoftirqd_prefixes,
                    cpus,
                    counts: ns,
                },
                1_000_000_000,
            );
        }
        let name = "irqlab_irq_thread_cpu_seconds_total";
        header(
            out,
            name,
            "CPU time of the threaded interrupt handlers irq/N-name.",
            "counter",
        );
        let mut fam = Family {
            name,
            out,
            series: &mut self.series,
        };
        let mut buf = itoa::Buffer::new();
        for t in threads {
            let ThreadKind::IrqThread { irq } = t.kind else {
                continue;
            };
            let irq = buf.format(irq);
            if self.opts.keep_thread(irq, &t.name) {
                fam.line_pairs(
                    &[("irq", irq), ("thread", &t.name)],
                    SeriesValue::Seconds {
                        count: t.cpu_ns,
                        unit: 1_000_000_000,
                    },
                );
            }
        }
    }

    fn own(&mut self, own: &OwnStats, wall_ns: u64, out: &mut Vec<u8>) {
        let secs = |ns| SeriesValue::Seconds {
            count: ns,
            unit: 1_000_000_000,
        };
        let rows: [(&'static str, &str, &str, SeriesValue); 8] = [
            (
                "irqlab_process_cpu_seconds_total",
                "CPU time of the whole irqlab process.",
                "counter",
                secs(own.process_cpu_ns),
            ),
            (
                "irqlab_sampling_cpu_seconds_total",
                "CPU time irqlab spent reading /proc and rendering this body.",
                "counter",
                secs(own.sampling_cpu_ns),
            ),
            (
                "irqlab_samples_total",
                "Samples taken.",
                "counter",
                SeriesValue::Int(own.samples),
            ),
            (
                "irqlab_sample_errors_total",
                "Reads that failed; the body keeps the last good sample's values.",
                "counter",
                SeriesValue::Int(own.sample_errors),
            ),
            (
                "irqlab_last_sample_success",
                "1 if the latest read succeeded, 0 if this body is of an older sample.",
                "gauge",
                SeriesValue::Int(u64::from(own.last_sample_ok)),
            ),
            (
                "irqlab_scrapes_total",
                "Scrapes answered before this sample.",
                "counter",
                SeriesValue::Int(own.scrapes),
            ),
            (
                "irqlab_process_max_resident_memory_bytes",
                "Peak resident memory of the irqlab process.",
                "gauge",
                SeriesValue::Int(own.max_rss_bytes),
            ),
            (
                "irqlab_last_sample_timestamp_seconds",
                "Wall-clock time of the sample this body is from.",
                "gauge",
                secs(wall_ns),
            ),
        ];
        let rows_len = rows.len() as u64;
        for (name, help, kind, v) in rows {
            header(out, name, help, kind);
            out.extend_from_slice(name.as_bytes());
            out.push(b' ');
            v.write(out);
            out.push(b'\n');
        }
        let series = self.series + rows_len + 1;
        header(
            out,
            "irqlab_exposed_series",
            "Series in this body (cardinality).",
            "gauge",
        );
        let _ = writeln!(out, "irqlab_exposed_series {series}");
    }
}

/// The HELP of `irqlab_interrupts_total` under `per_cpu`: which series
/// are raw counters and which monotonic sums (no double quotes: an
/// OpenMetrics HELP would have to escape them).
fn interrupts_help(per_cpu: PerCpu) -> &'static str {
    match per_cpu {
        PerCpu::All => {
            "Interrupts handled per IRQ and CPU (raw /proc/interrupts counters; arch rows by label; \
             a single-value row, and an irregular row's total, as cpu all, raw)."
        }
        PerCpu::Sum => {
            "Interrupts handled per IRQ, cpu all: a monotonic sum of the /proc/interrupts \
             counters' increments over CPUs, at each row's width (arch rows by label)."
        }
        PerCpu::Top(_) => {
            "Interrupts handled per IRQ: raw /proc/interrupts counters of each row's top K CPUs; \
             cpu other, and a single-value or irregular row's cpu all, monotonic sums of \
             increments (arch rows by label)."
        }
    }
}

/// The HELP of `irqlab_softirqs_total` under `per_cpu`, as
/// [`interrupts_help`].
fn softirqs_help(per_cpu: PerCpu) -> &'static str {
    match per_cpu {
        PerCpu::All => "Softirqs raised per vector and CPU (raw /proc/softirqs counters).",
        PerCpu::Sum => {
            "Softirqs raised per vector, cpu all: a monotonic sum of the /proc/softirqs \
             counters' increments over CPUs."
        }
        PerCpu::Top(_) => {
            "Softirqs raised per vector: raw /proc/softirqs counters of each vector's top K CPUs; \
             cpu other, a monotonic sum of the other CPUs' increments."
        }
    }
}

/// The HELP of the `/proc/stat` CPU-time families (hard-IRQ when `irq`,
/// else softirq) under `per_cpu`, as [`interrupts_help`].
fn cpu_time_help(irq: bool, per_cpu: PerCpu) -> &'static str {
    match (irq, per_cpu) {
        (true, PerCpu::All) => {
            "CPU time in hard interrupt context per CPU (raw /proc/stat; cpu empty: all CPUs)."
        }
        (true, _) => {
            "CPU time in hard interrupt context, cpu all (raw /proc/stat total; with --cpus, \
             a monotonic sum of the selected CPUs' increments)."
        }
        (false, PerCpu::All) => {
            "CPU time in softirq context per CPU (raw /proc/stat; cpu empty: all CPUs)."
        }
        (false, _) => {
            "CPU time in softirq context, cpu all (raw /proc/stat total; with --cpus, \
             a monotonic sum of the selected CPUs' increments)."
        }
    }
}

/// The HELP of `irqlab_ksoftirqd_cpu_seconds_total` under `per_cpu`, as
/// [`interrupts_help`].
fn ksoftirqd_help(per_cpu: PerCpu) -> &'static str {
    match per_cpu {
        PerCpu::All => "CPU time of the ksoftirqd/N threads, per CPU N (each thread's own total).",
        PerCpu::Sum => {
            "CPU time of the ksoftirqd/N threads, cpu all: a monotonic sum of their increments."
        }
        PerCpu::Top(_) => {
            "CPU time of the ksoftirqd/N threads: the top K CPUs' threads' own totals; \
             cpu other, a monotonic sum of the other threads' increments."
        }
    }
}

/// The labels of the ksoftirqd family's one row: `cpu` only (its sums'
/// key is empty).
const KSOFTIRQD_LABELS: RowSeries<'static> = RowSeries {
    key: b"",
    tail: b"\"} ",
};

/// (mode label, `/proc/stat` field) pairs of a node_exporter CPU family.
type NodeModes = &'static [(&'static str, &'static str)];

/// The `/proc/stat` `softirq` line's vectors as node_exporter's stat
/// collector names them (kernel order; `block_iopoll` is `IRQ_POLL`).
const NODE_SOFTIRQ_VECTORS: [&str; 10] = [
    "hi",
    "timer",
    "net_tx",
    "net_rx",
    "block",
    "block_iopoll",
    "tasklet",
    "sched",
    "hrtimer",
    "rcu",
];

/// The label of a softirq row's vector in `naming`.
fn softirq_label(naming: Naming) -> &'static str {
    match naming {
        Naming::Irqlab => "vector",
        Naming::Node => "type",
    }
}

/// The cached labels of the softirq row `row` at `pos` (`label`: the
/// naming's label for its vector).
fn softirq_labels<'c>(
    keys: &'c mut RowCache<Labels>,
    tmp: &mut Vec<u8>,
    pos: usize,
    row: &SoftirqRow,
    label: &str,
) -> RowView<'c> {
    if !keys.is_for(pos, &row.name, "") {
        keys.set(pos, &row.name, "", true, |_| Labels::default());
    }
    labels_for(keys, pos, 0, tmp, || labels(&[(label, &row.name)]))
}

/// Call `f` with each row of `rows` the filter keeps and its labels
/// (cached per position in `keys`, built when the row changed; `seen` and
/// `tmp` are scratch).
fn each_kept_row(
    keys: &mut RowCache<Labels>,
    seen: &mut Vec<(usize, u32)>,
    tmp: &mut Vec<u8>,
    opts: &Options,
    rows: &[IrqRow],
    mut f: impl FnMut(&IrqRow, RowView<'_>),
) {
    seen.clear();
    // While every row so far is the one of the last body, so are the
    // occurrences: `seen` is only filled from the first changed row on.
    let mut same_rows = true;
    for (pos, row) in rows.iter().enumerate() {
        if !keys.is_for(pos, &row.label, &row.description) {
            new_row(keys, pos, row, opts);
            if same_rows {
                same_rows = false;
                fill_seen(seen, keys, rows, pos, opts.naming);
            }
        }
        if !keys.slot(pos).is_some_and(|s| s.keep()) {
            continue;
        }
        let built = keys.ext(pos).occurrence;
        let occurrence = if same_rows && built != NOT_BUILT {
            built
        } else {
            if same_rows {
                same_rows = false;
                fill_seen(seen, keys, rows, pos, opts.naming);
            }
            occurrence(seen, rows, pos, opts.naming)
        };
        let k = labels_for(keys, pos, occurrence, tmp, || {
            row_labels(opts.naming, row, occurrence)
        });
        f(row, k);
    }
}

/// The cache entry of `pos` becomes the one of `row` (the row at that
/// position changed): its filter decision, its labels not built.
#[cold]
#[inline(never)]
fn new_row(keys: &mut RowCache<Labels>, pos: usize, row: &IrqRow, opts: &Options) {
    let keep = opts.filter.keep_irq_row(row);
    keys.set(pos, &row.label, &row.description, keep, |_| {
        Labels::default()
    });
}

/// `seen` as [`occurrence`] leaves it after the kept rows before `pos`
/// (their entries in `keys` are current).
#[cold]
#[inline(never)]
fn fill_seen(
    seen: &mut Vec<(usize, u32)>,
    keys: &RowCache<Labels>,
    rows: &[IrqRow],
    pos: usize,
    naming: Naming,
) {
    seen.clear();
    for p in 0..pos {
        if keys.slot(p).is_some_and(|s| s.keep()) {
            occurrence(seen, rows, p, naming);
        }
    }
}

/// 0 for the first row with a label, 1 for the next one … (arch rows may
/// repeat: powerpc's two `LOC` rows) of the kept row at `pos` in `rows`;
/// `seen` holds (index of the first kept row with a label, count so far)
/// for the kept rows before it. Under node_exporter's naming a row's
/// description is a label of its own (`info`), so rows count as repeats
/// only when their descriptions are equal too: `type` stays the row's
/// label, as node_exporter's (which keeps only the last row of a label).
fn occurrence(seen: &mut Vec<(usize, u32)>, rows: &[IrqRow], pos: usize, naming: Naming) -> u32 {
    let Some(row) = rows.get(pos) else {
        return 0;
    };
    if row.irq.is_some() {
        return 0;
    }
    let same = |i: usize| {
        rows.get(i).is_some_and(|r| {
            r.label == row.label && (naming == Naming::Irqlab || r.description == row.description)
        })
    };
    if let Some(e) = seen.iter_mut().find(|e| same(e.0)) {
        e.1 += 1;
        return e.1;
    }
    seen.push((pos, 0));
    0
}

/// The labels of a row, without `cpu`.
fn row_labels(naming: Naming, row: &IrqRow, occurrence: u32) -> String {
    let id = if occurrence == 0 {
        row.label.to_string()
    } else {
        format!("{}#{occurrence}", row.label)
    };
    match naming {
        Naming::Irqlab => {
            let (chip, actions) = match row.irq {
                Some(_) => (row.parts.chip.as_str(), row.parts.actions.as_str()),
                None => ("", ""),
            };
            labels(&[("irq", &id), ("chip", chip), ("actions", actions)])
        }
        Naming::Node => {
            let mut words = row.description.split_whitespace();
            let (info, devices) = match row.irq {
                Some(_) => {
                    let info = words.next().unwrap_or("");
                    (info.to_string(), words.collect::<Vec<_>>().join(" "))
                }
                None => (words.collect::<Vec<_>>().join(" "), String::new()),
            };
            labels(&[("type", &id), ("info", &info), ("devices", &devices)])
        }
    }
}

/// One per-CPU row to write: its labels, the prefixes of its family's
/// columns, its CPUs and counts.
struct PerCpuRow<'a> {
    labels: RowSeries<'a>,
    prefixes: &'a CpuPrefixes,
    cpus: &'a [u32],
    counts: &'a [u64],
}

fn per_cpu(fam: &mut Family, opts: &Options, sums: &Sums, row: PerCpuRow) {
    per_cpu_with(fam, opts, sums, row, 0);
}

/// `f` of the columns `--cpus` selects of `cpus` and `counts`: the
/// slices themselves without `--cpus` (no copy), else a copy of the
/// selected ones.
fn with_picked<R>(
    opts: &Options,
    cpus: &[u32],
    counts: &[u64],
    f: impl FnOnce(&[u32], &[u64]) -> R,
) -> R {
    if !opts.picks_cpus() {
        return f(cpus, counts);
    }
    let (cpus, counts): (Vec<u32>, Vec<u64>) = cpus
        .iter()
        .zip(counts)
        .filter(|(&c, _)| opts.keep_cpu(c))
        .map(|(&c, &v)| (c, v))
        .unzip();
    f(&cpus, &counts)
}

/// A row's sums key (its labels) as text: the labels were built from
/// `&str`s, so they are always UTF-8.
fn key_str(key: &[u8]) -> &str {
    std::str::from_utf8(key).unwrap_or_default()
}

/// Advance the monotonic sums of one per-CPU row (`key`: its labels)
/// under `--per-cpu sum` or `top=K` by this sample's counts.
fn accumulate_row(sums: &mut Sums, opts: &Options, key: &[u8], cpus: &[u32], counts: &[u64]) {
    accumulate_row_as(sums, opts, None, key, cpus, counts);
}

/// [`accumulate_row`] of a row whose values are of `kind` (`None`: of
/// the family's kind). With one online CPU a single global value looks
/// per-CPU (`delta::single_value`): it is `Kind::Single` at its width.
fn accumulate_row_as(
    sums: &mut Sums,
    opts: &Options,
    kind: Option<Kind>,
    key: &[u8],
    cpus: &[u32],
    counts: &[u64],
) {
    let key = key_str(key);
    with_picked(opts, cpus, counts, |cpus, counts| {
        let shown = match opts.per_cpu {
            PerCpu::Top(k) => top_k(counts, k),
            PerCpu::Sum | PerCpu::All => Vec::new(),
        };
        match kind {
            Some(kind) => sums.update_as(kind, key, cpus, counts, &shown),
            None => sums.update(key, cpus, counts, &shown),
        };
    });
}

/// Advance the monotonic sum of a single-value row (x86's `ERR` and
/// `MIS`, arm64's `Err`; `key`: its labels) at the row's width. It is
/// no CPU's: `--cpus` does not select it.
fn accumulate_single(sums: &mut Sums, row: &IrqRow, key: &[u8]) {
    let key = key_str(key);
    sums.update_as(Kind::Single(row.width), key, &[0], &row.counts, &[]);
}

/// Advance the monotonic sum of an irregular row (a count per possible
/// CPU under a header of online CPUs: not aligned with CPU ids; `key`:
/// its labels) over its columns, by position (`columns`: scratch), as
/// 32-bit per-CPU counters. `--cpus` does not select its columns.
fn accumulate_irregular(sums: &mut Sums, columns: &mut Vec<u32>, row: &IrqRow, key: &[u8]) {
    let key = key_str(key);
    columns.clear();
    columns.extend((0..row.counts.len()).map(|i| u32::try_from(i).unwrap_or(u32::MAX)));
    sums.update(key, columns, &row.counts, &[]);
}

/// The value of the `cpu="all"` series of a single-value or irregular
/// row (`key`: its labels): the raw value (an irregular row's: the
/// total of its columns) under `--per-cpu all`, else the monotonic sum
/// [`accumulate_single`] or [`accumulate_irregular`] left.
fn single_series_value(opts: &Options, sums: &Sums, row: &IrqRow, key: &[u8]) -> u64 {
    if opts.per_cpu == PerCpu::All {
        return row.total();
    }
    let key = key_str(key);
    sums.current(key)
        .map_or_else(|| row.total(), |(sum, _)| sum)
}

/// The series of one per-CPU row under `--per-cpu`; `unit` 0 writes
/// integers, otherwise seconds of `unit`-ths. The sums of `sum` and
/// `top=K` are read as [`accumulate_row`] left them for this sample.
fn per_cpu_with(fam: &mut Family, opts: &Options, sums: &Sums, row: PerCpuRow, unit: u64) {
    let n = row.cpus.len().min(row.counts.len());
    let (cpus, counts) = (&row.cpus[..n], &row.counts[..n]);
    let key = row.labels.key;
    let value = |v: u64| match unit {
        0 => SeriesValue::Int(v),
        u => SeriesValue::Seconds { count: v, unit: u },
    };
    let mut buf = itoa::Buffer::new();
    if opts.per_cpu == PerCpu::All {
        // `--cpus`: only the selected columns.
        let picks = opts.picks_cpus();
        for (i, (&c, &v)) in cpus.iter().zip(counts).enumerate() {
            if picks && !opts.keep_cpu(c) {
                continue;
            }
            match row.prefixes.get(i, c) {
                Some(p) => fam.line_prefixed(p, row.labels.tail, value(v)),
                None => fam.line_cpu(buf.format(c), key, value(v)),
            }
        }
        return;
    }
    let line = |fam: &mut Family, cpu: &str, v: u64| fam.line_cpu(cpu, key, value(v));
    let (sum, other) = sums.current(key_str(key)).unwrap_or_default();
    match opts.per_cpu {
        PerCpu::Sum => line(fam, "all", sum),
        PerCpu::Top(k) => {
            with_picked(opts, cpus, counts, |cpus, counts| {
                let shown = top_k(counts, k);
                for ((&c, &v), s) in cpus.iter().zip(counts).zip(&shown) {
                    if *s {
                        line(fam, buf.format(c), v);
                    }
                }
            });
            line(fam, "other", other);
        }
        PerCpu::All => {}
    }
}

/// Marks the `k` largest counts (ties: lower column first).
fn top_k(counts: &[u64], k: usize) -> Vec<bool> {
    let mut idx: Vec<usize> = (0..counts.len()).collect();
    idx.sort_by_key(|&i| (std::cmp::Reverse(counts.get(i).copied().unwrap_or(0)), i));
    let mut shown = vec![false; counts.len()];
    for &i in idx.iter().take(k) {
        if let Some(s) = shown.get_mut(i) {
            *s = true;
        }
    }
    shown
}

#[cfg(test)]
#[path = "exposition_tests.rs"]
mod tests;
