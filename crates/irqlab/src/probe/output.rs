//! The probe report (environment + one row per target × method × buffer)
//! and its three output formats: an aligned table, a JSON probe result set
//! and CSV. Formatting only; the numbers come from `quantiles`.
//!
//! JSON (version 3): a probe run is ONE trial. `trial` has the shape of a
//! bench `trials.jsonl` line (`crate::results::TrialRecord`) with the
//! run's medians as metrics (`<target>_<method>_<buf>_wall_ns`, `_cpu_ns`);
//! `results` lists the same metrics with that one value each plus the
//! run's `summary` of the per-read distribution (`reads`, `min`, `p50`,
//! `p90`, `p99`, `max`: what `irqlab compare` reads, the median as the
//! metric and the p99 as `<metric>_p99`); per-read values are in
//! `rows[].per_read` and are not trials. Version 2 had no `summary` (its
//! p99 is in `rows[].wall_ns` / `cpu_ns`).
//!
//! With `--kernel` (still version 3: only fields are added) every row has
//! a `kernel` object (time in `seq_read_iter()` per read as quantiles and
//! per read, `show_interrupts()` calls per read), the document a top-level
//! `kernel` object (mechanism and the walk of /proc/interrupts: `nr_irqs`,
//! rows printed, CPUs, descriptors) and `results`/`trial` a third metric
//! per row, `<stem>_kernel_ns` (median, with its `summary`).

use super::kernel::{KernelSummary, Walk};
use super::measure::ReadMethod;
use super::quantiles::{Quantiles, ReadSummary, CPU_CLOCK};
use super::size::format_size;
use super::target::Env;
use crate::direction::Direction;
use crate::export::grid::{Align, Grid};
use crate::export::plural;
use crate::results::TrialRecord;
use anyhow::Result;
use irqlab_core::paths::shown;
use serde_json::{json, Value};
use std::io::Write;

/// One measured row.
#[derive(Debug, Clone)]
pub struct ProbeRow {
    pub name: &'static str,
    pub label: &'static str,
    pub files: usize,
    pub method: ReadMethod,
    pub buffer: usize,
    pub summary: ReadSummary,
    /// With `--kernel`: the kernel side of the same reads.
    pub kernel: Option<KernelSummary>,
}

/// `--kernel`'s run-level facts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelRun {
    /// How the kernel figures were taken.
    pub mechanism: String,
    /// The walk of /proc/interrupts.
    pub walk: Walk,
}

impl ProbeRow {
    /// Metric-name stem, e.g. `proc_interrupts_pread_4k`.
    pub fn metric(&self) -> String {
        let buf = format_size(self.buffer).to_ascii_lowercase();
        format!("{}_{}_{buf}", self.name, self.method.name())
    }

    /// The run-level metrics of this row: median wall and CPU time per
    /// read (and kernel time with `--kernel`), each with the per-read
    /// distribution behind it.
    fn trial_metrics(&self) -> Vec<(String, f64, &Quantiles)> {
        let m = self.metric();
        let mut v = vec![
            (
                format!("{m}_wall_ns"),
                self.summary.wall.p50,
                &self.summary.wall,
            ),
            (
                format!("{m}_cpu_ns"),
                self.summary.cpu.p50,
                &self.summary.cpu,
            ),
        ];
        if let Some(k) = &self.kernel {
            v.push((format!("{m}_kernel_ns"), k.ns.p50, &k.ns));
        }
        v
    }
}

/// Everything `probe` prints: one run.
#[derive(Debug, Clone, Default)]
pub struct ProbeReport {
    pub env: Env,
    pub rows: Vec<ProbeRow>,
    /// With `--kernel`: mechanism and walk facts.
    pub kernel: Option<KernelRun>,
    /// RFC 3339 UTC start of the run.
    pub started_at: String,
    pub duration_s: f64,
}

/// Version of the probe JSON document (see the module doc).
pub const VERSION: u64 = 3;

const CLOCK_NOTE: &str = "wall = CLOCK_MONOTONIC around each read; \
cpu = CLOCK_THREAD_CPUTIME_ID inside that window (ns resolution, never above wall): \
the read's system time plus the few ns of the syscall wrappers; \
ru_sys = getrusage(RUSAGE_THREAD) ru_stime over the whole batch / reads \
(tick-sampled, so not a per-read measurement).";

/// Aligned table (the one grid writer, `export::grid`), times in µs to
/// 0.1 (a read costs µs to ms; JSON and CSV keep whole ns), the unit in
/// each time column's header.
pub fn write_table(r: &ProbeReport, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", env_line(&r.env))?;
    let mut grid = Grid::new()
        .separator(" ")
        .align(0, Align::Left)
        .align(1, Align::Left);
    grid.row([
        "target",
        "meth",
        "buf",
        "files",
        "read()",
        "bytes",
        "|",
        "wall µs min",
        "p50",
        "p90",
        "p99",
        "max",
        "|",
        "cpu µs min",
        "p50",
        "p90",
        "p99",
        "max",
        "|",
        "ru_sys µs",
    ]);
    for row in &r.rows {
        let s = &row.summary;
        grid.cell(row.label)
            .cell(row.method.name())
            .cell(format_size(row.buffer))
            .cell(row.files)
            .cell(num(s.calls_per_read))
            .cell(num(s.bytes_per_read))
            .cell("|");
        micros(&s.wall, &mut grid);
        grid.cell("|");
        micros(&s.cpu, &mut grid);
        grid.cell("|")
            .cell(format_args!("{:.1}", s.rusage_sys_per_read_ns / 1e3))
            .end_row();
    }
    grid.write_to(out)?;
    writeln!(
        out,
        "times in µs over {} per row; {CLOCK_NOTE}",
        plural(r.env.reads, "read")
    )?;
    if let Some(k) = &r.kernel {
        write_kernel_table(r, k, out)?;
    }
    Ok(())
}

/// `--kernel`'s table: kernel time per read beside the wall and CPU
/// medians, `show_interrupts()` calls per read, then the walk line.
fn write_kernel_table(r: &ProbeReport, k: &KernelRun, out: &mut impl Write) -> Result<()> {
    writeln!(out)?;
    writeln!(out, "kernel side of the same reads ({}):", k.mechanism)?;
    let lookups = r
        .rows
        .iter()
        .any(|row| row.kernel.as_ref().is_some_and(|k| k.lookups.is_some()));
    let counted = if lookups {
        "irq_to_desc() min"
    } else {
        "show_interrupts() min"
    };
    let mut grid = Grid::new()
        .separator(" ")
        .align(0, Align::Left)
        .align(1, Align::Left);
    grid.row([
        "target",
        "meth",
        "buf",
        "calls",
        "|",
        "kernel µs min",
        "p50",
        "p90",
        "p99",
        "max",
        "|",
        "wall µs p50",
        "cpu µs p50",
        "|",
        counted,
        "p50",
        "max",
        "|",
        ">cpu",
        ">wall",
    ]);
    for row in &r.rows {
        let Some(ks) = &row.kernel else { continue };
        grid.cell(row.label)
            .cell(row.method.name())
            .cell(format_size(row.buffer))
            .cell(num(ks.calls_per_read))
            .cell("|");
        micros(&ks.ns, &mut grid);
        grid.cell("|")
            .cell(format_args!("{:.1}", row.summary.wall.p50 / 1e3))
            .cell(format_args!("{:.1}", row.summary.cpu.p50 / 1e3))
            .cell("|");
        match ks.show_calls.as_ref().or(ks.lookups.as_ref()) {
            Some(q) => grid.cell(num(q.min)).cell(num(q.p50)).cell(num(q.max)),
            None => grid.cell("n/a").cell("n/a").cell("n/a"),
        };
        grid.cell("|")
            .cell(ks.above_cpu)
            .cell(ks.above_wall)
            .end_row();
    }
    grid.write_to(out)?;
    writeln!(
        out,
        "kernel = this thread's time inside the hooked kernel calls (mechanism above) per read, \
         over all its read() calls (calls = hooked calls per read), µs; show_interrupts() / \
         irq_to_desc() = calls / descriptor lookups per read in a second, untimed pass of the \
         same reads (n/a: not countable with this mechanism); >cpu / >wall = reads whose kernel time exceeds their CPU / wall \
         time (>cpu: preempted or CPU-clock granularity; >wall must be 0)"
    )?;
    writeln!(out, "{}", walk_line(&k.walk))?;
    Ok(())
}

/// The walk where the watchpoint counted its descriptor lookups.
fn lookup_walk_line(w: &Walk, bound: &str) -> String {
    let opt = |v: Option<usize>| v.map_or_else(|| "?".to_string(), |v| v.to_string());
    let l = w
        .lookups
        .map_or(0, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let agree = match w.nr_irqs_read {
        Some(n) if n == l => format!(
            "nr_irqs = {n} (read from kernel memory): one lookup for every IRQ number below \
             it, holes included, so {} show_interrupts() calls per read (the last prints the \
             arch rows)",
            l + 1
        ),
        Some(n) => format!(
            "nr_irqs = {n} (read from kernel memory) differs from the count, so the count is \
             not read as the walk's length"
        ),
        None => "nr_irqs unknown".to_string(),
    };
    format!(
        "{} walk: {l} descriptor lookups per read, counted; {agree}; {} numbered IRQ rows \
         printed, {} online CPUs summed per row; {} in {}{bound}",
        shown::PROC_INTERRUPTS,
        opt(w.irq_rows),
        opt(w.cpus),
        plural(w.descriptors, "descriptor"),
        shown::SYS_KERNEL_IRQ,
    )
}

/// The /proc/interrupts walk as one sentence.
pub fn walk_line(w: &Walk) -> String {
    let opt = |v: Option<usize>| v.map_or_else(|| "?".to_string(), |v| v.to_string());
    let bound = w
        .descriptor_bound
        .map_or_else(String::new, |b| format!(", largest + 1 = {b}"));
    match w.nr_irqs {
        Some(n) => {
            let silent = w
                .irq_rows
                .map_or_else(|| "?".to_string(), |r| (n - r as i64).max(0).to_string());
            format!(
                "{} walk: nr_irqs = {n} (largest position show_interrupts() was \
                 called with; that position prints the arch rows), so one full walk is {} \
                 show_interrupts() calls; {} numbered IRQ rows printed ({} of the {n} IRQ \
                 numbers walked print nothing: holes or no action), {} online CPUs summed per \
                 row; {} in {}{bound}",
                shown::PROC_INTERRUPTS,
                n + 1,
                opt(w.irq_rows),
                silent,
                opt(w.cpus),
                plural(w.descriptors, "descriptor"),
                shown::SYS_KERNEL_IRQ,
            )
        }
        None if w.lookups.is_some() => lookup_walk_line(w, &bound),
        None => {
            let nr = match w.nr_irqs_read {
                Some(n) => format!(
                    "nr_irqs = {n} (read from kernel memory), so one full walk would be {} \
                     show_interrupts() calls (positions 0..=nr_irqs: derived, not counted)",
                    n + 1
                ),
                None => "nr_irqs unknown".to_string(),
            };
            format!(
                "{} walk: show_interrupts() calls not seen (not countable with this \
                 mechanism), {nr}; {} numbered IRQ rows, {} online CPUs, {} in \
                 {}{bound}",
                shown::PROC_INTERRUPTS,
                opt(w.irq_rows),
                opt(w.cpus),
                plural(w.descriptors, "descriptor"),
                shown::SYS_KERNEL_IRQ,
            )
        }
    }
}

fn env_line(e: &Env) -> String {
    let or = |o: Option<&str>| o.unwrap_or("?").to_string();
    let cpus = e
        .cpus
        .map_or_else(|| "? CPUs".to_string(), |c| plural(c, "CPU"));
    let pin = e.pinned_cpu.map_or_else(
        || "not pinned".to_string(),
        |c| format!("pinned to CPU {c}"),
    );
    format!(
        "kernel {}, {cpus}, {}, {}, boot {}, {pin}",
        or(e.kernel()),
        plural(e.irq_descriptors, "IRQ descriptor"),
        plural(e.proc_irq_dirs, &format!("{} dir", shown::PROC_IRQ)),
        or(e.boot_id())
    )
}

/// min, p50, p90, p99 and max of `q` in µs, as five cells.
fn micros(q: &Quantiles, grid: &mut Grid) {
    for v in [q.min, q.p50, q.p90, q.p99, q.max] {
        grid.cell(format_args!("{:.1}", v / 1e3));
    }
}

/// An integer when whole, else up to three decimals (no float noise).
fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn quantiles_json(q: &Quantiles) -> Value {
    json!({"min": q.min, "p50": q.p50, "p90": q.p90, "p99": q.p99, "max": q.max})
}

/// The run as one trial record (a `trials.jsonl` line, `crate::results`):
/// trial 1 of a variant named by `compare` (LABEL= or the file stem).
pub fn trial(r: &ProbeReport) -> TrialRecord {
    let boot = r.env.boot_id().unwrap_or("unknown");
    let mut t = TrialRecord::new("", 1, boot, r.started_at.clone());
    t.duration_s = r.duration_s;
    for row in &r.rows {
        for (name, value, _) in row.trial_metrics() {
            t.insert(&name, value, "ns", Direction::Lower);
        }
    }
    t
}

/// The probe result set (see the module doc and README for the contract).
pub fn to_json(r: &ProbeReport) -> Value {
    let e = &r.env;
    let mut env = json!({
        "kernel": e.kernel(), "boot_id": e.boot_id(), "root": e.root, "cpus": e.cpus,
        "irq_descriptors": e.irq_descriptors, "proc_irq_dirs": e.proc_irq_dirs,
        "file_sizes": e.sizes, "pinned_cpu": e.pinned_cpu, "reads": e.reads,
        "buffers": e.buffers,
    });
    if let (Some(m), Some(obj)) = (&e.machine, env.as_object_mut()) {
        obj.insert("machine".to_string(), json!(m));
    }
    let mut rows = Vec::new();
    let mut results = Vec::new();
    for row in &r.rows {
        let s = &row.summary;
        let mut j = json!({
            "metric": row.metric(), "target": row.label, "method": row.method.name(),
            "buffer": row.buffer, "files": row.files, "reads": s.reads,
            "syscalls_per_read": s.calls_per_read, "bytes_per_read": s.bytes_per_read,
            "wall_ns": quantiles_json(&s.wall),
            "cpu_ns": quantiles_json(&s.cpu),
            "cpu_clock": CPU_CLOCK,
            "rusage_sys_per_read_ns": s.rusage_sys_per_read_ns,
            "per_read": {"wall_ns": s.wall_values, "cpu_ns": s.cpu_values},
        });
        if let (Some(k), Some(obj)) = (&row.kernel, j.as_object_mut()) {
            obj.insert(
                "kernel".to_string(),
                json!({
                    "seq_read_iter_calls_per_read": k.calls_per_read,
                    "kernel_ns": quantiles_json(&k.ns),
                    "show_interrupts_calls": k.show_calls.as_ref().map(quantiles_json),
                    "descriptor_lookups": k.lookups.as_ref().map(quantiles_json),
                    "counting_pass_kernel_ns": k.counting_ns.as_ref().map(quantiles_json),
                    "reads_above_cpu": k.above_cpu, "reads_above_wall": k.above_wall,
                    "per_read": {"kernel_ns": k.values,
                        "show_interrupts_calls": k.show_values,
                        "descriptor_lookups": k.lookup_values},
                }),
            );
        }
        rows.push(j);
        for (metric, value, q) in row.trial_metrics() {
            let mut summary = quantiles_json(q);
            if let Some(o) = summary.as_object_mut() {
                o.insert("reads".to_string(), json!(s.reads));
            }
            results.push(json!({"metric": metric, "unit": "ns",
                "direction": "lower", "values": [value], "summary": summary}));
        }
    }
    let mut doc = json!({"kind": "probe", "version": VERSION, "boot_id": e.boot_id(),
        "started_at": r.started_at, "env": env, "rows": rows,
        "trial": trial(r), "results": results});
    if let (Some(k), Some(obj)) = (&r.kernel, doc.as_object_mut()) {
        let w = &k.walk;
        obj.insert(
            "kernel".to_string(),
            json!({"mechanism": k.mechanism, "nr_irqs": w.nr_irqs,
                "show_interrupts_calls_per_walk": w.nr_irqs.map(|n| n + 1),
                "descriptor_lookups_per_walk": w.lookups,
                "nr_irqs_from_kernel_memory": w.nr_irqs_read,
                "irq_rows": w.irq_rows, "cpus": w.cpus, "descriptors": w.descriptors,
                "descriptor_bound": w.descriptor_bound}),
        );
    }
    doc
}

/// JSON, indented when `pretty` (else on one line), plus a newline.
pub fn write_json(r: &ProbeReport, pretty: bool, out: &mut impl Write) -> Result<()> {
    let doc = to_json(r);
    if pretty {
        serde_json::to_writer_pretty(&mut *out, &doc)
    } else {
        serde_json::to_writer(&mut *out, &doc)
    }
    .map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

const CSV_HEADER: [&str; 21] = [
    "target",
    "method",
    "buffer",
    "files",
    "reads",
    "syscalls_per_read",
    "bytes_per_read",
    "wall_min_ns",
    "wall_p50_ns",
    "wall_p90_ns",
    "wall_p99_ns",
    "wall_max_ns",
    "cpu_min_ns",
    "cpu_p50_ns",
    "cpu_p90_ns",
    "cpu_p99_ns",
    "cpu_max_ns",
    "cpu_clock",
    "rusage_sys_per_read_ns",
    "kernel",
    "boot_id",
];

/// One CSV line per row, times in whole ns.
pub fn write_csv(r: &ProbeReport, out: &mut impl Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_HEADER)?;
    for row in &r.rows {
        let s = &row.summary;
        let q = |q: &Quantiles| [q.min, q.p50, q.p90, q.p99, q.max].map(num);
        let mut rec = vec![
            row.label.to_string(),
            row.method.name().to_string(),
            row.buffer.to_string(),
            row.files.to_string(),
            s.reads.to_string(),
            num(s.calls_per_read),
            num(s.bytes_per_read),
        ];
        rec.extend(q(&s.wall));
        rec.extend(q(&s.cpu));
        rec.push(CPU_CLOCK.to_string());
        rec.push(num(s.rusage_sys_per_read_ns));
        rec.push(r.env.kernel().unwrap_or_default().to_string());
        rec.push(r.env.boot_id().unwrap_or_default().to_string());
        w.write_record(&rec)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::probe::measure::Batch;
    use crate::probe::quantiles::{summarize, ReadSample};

    fn report() -> ProbeReport {
        let samples: Vec<ReadSample> = (0..10)
            .map(|i| ReadSample {
                wall_ns: 80_000 + i * 1000,
                cpu_ns: 79_000,
                calls: 2,
                bytes: 2252,
            })
            .collect();
        let batch = Batch {
            samples,
            rusage_sys_ns: 681_037,
            cpu_ns: 790_000,
            ..Batch::default()
        };
        let row = ProbeRow {
            name: "proc_interrupts",
            label: "/proc/interrupts",
            files: 1,
            method: ReadMethod::Pread,
            buffer: 4096,
            summary: summarize(&batch).unwrap(),
            kernel: None,
        };
        ProbeReport {
            env: Env {
                reads: 10,
                machine: Some(crate::env::collect(
                    &crate::host::HostFs::new("/nonexistent"),
                    String::new(),
                )),
                ..Env::default()
            },
            rows: vec![row],
            kernel: None,
            started_at: "2026-11-30T12:00:00.000Z".to_string(),
            duration_s: 0.5,
        }
    }

    #[test]
    fn json_run_is_one_trial() {
        let v = to_json(&report());
        assert_eq!(
            (v["kind"].as_str(), v["version"].as_u64()),
            (Some("probe"), Some(3))
        );
        let results = v["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["metric"], "proc_interrupts_pread_4k_wall_ns");
        assert_eq!(results[0]["values"], json!([84_500.0]));
        assert_eq!(results[1]["metric"], "proc_interrupts_pread_4k_cpu_ns");
        let t: TrialRecord = serde_json::from_value(v["trial"].clone()).unwrap();
        assert_eq!((t.trial, t.boot_id.as_str()), (1, "unknown"));
        let wall = &t.metrics["proc_interrupts_pread_4k_wall_ns"];
        assert_eq!((wall.value, wall.direction), (84_500.0, Direction::Lower));
        assert_eq!(t.metrics.len(), 2);
        let row = &v["rows"][0];
        assert_eq!(row["cpu_clock"], "CLOCK_THREAD_CPUTIME_ID");
        assert_eq!(row["per_read"]["wall_ns"].as_array().unwrap().len(), 10);
        assert_eq!(row["syscalls_per_read"], 2.0);
        assert_eq!(row["rusage_sys_per_read_ns"], 68_103.7);
    }

    #[test]
    fn json_results_carry_the_runs_real_p99_not_only_the_median() {
        let v = to_json(&report());
        let wall = &v["results"][0]["summary"];
        assert_eq!(wall["p50"], 84_500.0);
        assert_eq!(wall["p99"], 88_910.0);
        assert_eq!(
            (wall["min"].as_f64(), wall["max"].as_f64()),
            (Some(80_000.0), Some(89_000.0))
        );
        assert_eq!(wall["reads"], 10);
        assert_eq!(v["results"][1]["summary"]["p99"], 79_000.0);
    }

    #[test]
    fn table_and_csv_have_one_line_per_row_without_float_noise() {
        let mut t = Vec::new();
        write_table(&report(), &mut t).unwrap();
        let t = String::from_utf8(t).unwrap();
        assert!(t.contains("/proc/interrupts"), "{t}");
        assert!(t.contains("84.5"), "{t}");
        assert!(t.contains("over 10 reads per row"), "{t}");
        assert!(t.contains("? CPUs, 0 IRQ descriptors"), "{t}");
        let mut c = Vec::new();
        write_csv(&report(), &mut c).unwrap();
        let c = String::from_utf8(c).unwrap();
        assert_eq!(c.lines().count(), 2);
        let line = c.lines().nth(1).unwrap();
        assert!(
            line.starts_with("/proc/interrupts,pread,4096,1,10,2,2252,80000,84500,"),
            "{line}"
        );
        assert!(line.contains(",CLOCK_THREAD_CPUTIME_ID,68103.7,"), "{line}");
        assert!(
            !line.contains("9999") && !line.contains("0000001"),
            "{line}"
        );
    }

    #[test]
    fn table_headers_name_the_time_unit() {
        let mut r = report();
        r.rows[0].kernel = Some(KernelSummary::default());
        r.kernel = Some(KernelRun::default());
        let mut t = Vec::new();
        write_table(&r, &mut t).unwrap();
        let t = String::from_utf8(t).unwrap();
        let headers: Vec<&str> = t.lines().filter(|l| l.starts_with("target ")).collect();
        assert_eq!(headers.len(), 2, "{t}");
        for want in ["| wall µs min ", "| cpu µs min ", "| ru_sys µs"] {
            assert!(headers[0].contains(want), "{want}: {t}");
        }
        for want in ["| kernel µs min ", "| wall µs p50 cpu µs p50 |"] {
            assert!(headers[1].contains(want), "{want}: {t}");
        }
    }

    #[test]
    fn wording_is_singular_for_one() {
        let mut r = report();
        r.env.reads = 1;
        r.env.cpus = Some(1);
        r.env.irq_descriptors = 1;
        let mut t = Vec::new();
        write_table(&r, &mut t).unwrap();
        let t = String::from_utf8(t).unwrap();
        assert!(t.contains("1 CPU, 1 IRQ descriptor,"), "{t}");
        assert!(t.contains("over 1 read per row"), "{t}");
    }
}
