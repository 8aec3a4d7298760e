//! The probe report (environment + one row per target × method × buffer)
//! and its three output formats: an aligned table, a JSON probe result set
//! that `irqlab compare` reads, and CSV. Formatting only; the numbers come
//! from `summary`.

use super::measure::Method;
use super::size::format_size;
use super::summary::{Quantiles, Summary, SysSource};
use super::target::Env;
use anyhow::Result;
use serde_json::{json, Value};
use std::io::Write;

/// One measured row.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: &'static str,
    pub label: &'static str,
    pub files: usize,
    pub method: Method,
    pub buffer: usize,
    pub summary: Summary,
}

impl Row {
    /// Metric-name stem, e.g. `proc_interrupts_pread_4k`.
    pub fn metric(&self) -> String {
        let buf = format_size(self.buffer).to_ascii_lowercase();
        format!("{}_{}_{buf}", self.name, self.method.name())
    }
}

/// Everything `probe` prints.
#[derive(Debug, Clone)]
pub struct Report {
    pub env: Env,
    pub rows: Vec<Row>,
}

const SYS_NOTE: &str = "sys from `rusage`: ru_stime (getrusage RUSAGE_THREAD) delta per read; \
from `cpu`: ru_stime does not resolve one read on this kernel (tick-based accounting, 1 µs timeval), \
so sys is the thread CPU clock (CLOCK_THREAD_CPUTIME_ID) around the read, whose user part is only \
the syscall wrappers; `ru mean` is the sum of the ru_stime deltas divided by the reads.";

/// How the sys column was obtained.
fn sys_from(s: &Summary) -> &'static str {
    match s.sys.source {
        SysSource::Rusage => "rusage",
        SysSource::CpuClock => "cpu",
    }
}

/// Aligned table, times in µs.
pub fn write_table(r: &Report, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", env_line(&r.env))?;
    writeln!(
        out,
        "{:<32} {:<5} {:>5} {:>5} {:>6} {:>8} | {:>8} {:>8} {:>8} {:>8} {:>9} | {:>8} {:>8} {:>8} {:>8} {:>9} {:<6} {:>7}",
        "target", "meth", "buf", "files", "read()", "bytes", "wall min", "p50", "p90", "p99", "max",
        "sys min", "p50", "p90", "p99", "max", "from", "ru mean"
    )?;
    for row in &r.rows {
        let s = &row.summary;
        writeln!(
            out,
            "{:<32} {:<5} {:>5} {:>5} {:>6} {:>8} | {} | {} {:<6} {:>7.1}",
            row.label,
            row.method.name(),
            format_size(row.buffer),
            row.files,
            num(s.calls_per_read),
            num(s.bytes_per_read),
            micros(&s.wall),
            micros(&s.sys.q),
            sys_from(s),
            s.sys.rusage_mean_ns / 1e3
        )?;
    }
    writeln!(
        out,
        "times in µs over {} reads per row; {SYS_NOTE}",
        r.env.reads
    )?;
    Ok(())
}

fn env_line(e: &Env) -> String {
    let or = |o: &Option<String>| o.clone().unwrap_or_else(|| "?".to_string());
    let cpus = e.cpus.map_or_else(|| "?".to_string(), |c| c.to_string());
    let pin = e.pinned_cpu.map_or_else(
        || "not pinned".to_string(),
        |c| format!("pinned to CPU {c}"),
    );
    format!(
        "kernel {}, {cpus} CPUs, {} IRQ descriptors, {} /proc/irq dirs, boot {}, {pin}",
        or(&e.kernel),
        e.irq_descriptors,
        e.proc_irq_dirs,
        or(&e.boot_id)
    )
}

fn micros(q: &Quantiles) -> String {
    format!(
        "{:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1}",
        q.min / 1e3,
        q.p50 / 1e3,
        q.p90 / 1e3,
        q.p99 / 1e3,
        q.max / 1e3
    )
}

/// An integer when whole, else one decimal.
fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn quantiles_json(q: &Quantiles) -> Value {
    json!({"min": q.min, "p50": q.p50, "p90": q.p90, "p99": q.p99, "max": q.max})
}

/// The probe result set (see README for the contract).
pub fn to_json(r: &Report) -> Value {
    let e = &r.env;
    let env = json!({
        "kernel": e.kernel, "boot_id": e.boot_id, "cpus": e.cpus,
        "irq_descriptors": e.irq_descriptors, "proc_irq_dirs": e.proc_irq_dirs,
        "file_sizes": e.sizes, "pinned_cpu": e.pinned_cpu, "reads": e.reads,
        "buffers": e.buffers,
    });
    let mut rows = Vec::new();
    let mut results = Vec::new();
    for row in &r.rows {
        let s = &row.summary;
        let m = row.metric();
        rows.push(json!({
            "metric": m, "target": row.label, "method": row.method.name(),
            "buffer": row.buffer, "files": row.files, "reads": s.reads,
            "syscalls_per_read": s.calls_per_read, "bytes_per_read": s.bytes_per_read,
            "wall_ns": quantiles_json(&s.wall),
            "cpu_ns": quantiles_json(&s.cpu),
            "sys_ns": quantiles_json(&s.sys.q),
            "sys_source": sys_from(s), "sys_rusage_mean_ns": s.sys.rusage_mean_ns,
            "sys_rusage_quantum_ns": s.sys.quantum_ns,
            "sys_rusage_zero_share": s.sys.zero_share,
        }));
        results.push(json!({"metric": format!("{m}_wall_ns"), "unit": "ns",
            "direction": "lower", "values": s.wall_values}));
        results.push(json!({"metric": format!("{m}_cpu_ns"), "unit": "ns",
            "direction": "lower", "values": s.cpu_values}));
        results.push(json!({"metric": format!("{m}_sys_ns"), "unit": "ns",
            "direction": "lower", "source": sys_from(s), "values": s.sys.values}));
    }
    json!({"kind": "probe", "version": 1, "boot_id": e.boot_id, "env": env,
        "rows": rows, "results": results})
}

/// Pretty JSON plus a newline.
pub fn write_json(r: &Report, out: &mut impl Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, &to_json(r))?;
    writeln!(out)?;
    Ok(())
}

const CSV_HEADER: [&str; 26] = [
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
    "sys_min_ns",
    "sys_p50_ns",
    "sys_p90_ns",
    "sys_p99_ns",
    "sys_max_ns",
    "sys_source",
    "sys_rusage_mean_ns",
    "sys_rusage_quantum_ns",
    "kernel",
];

/// One CSV line per row, times in ns.
pub fn write_csv(r: &Report, out: &mut impl Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_HEADER)?;
    for row in &r.rows {
        let s = &row.summary;
        let q = |q: &Quantiles| [q.min, q.p50, q.p90, q.p99, q.max].map(|v| v.to_string());
        let mut rec = vec![
            row.label.to_string(),
            row.method.name().to_string(),
            row.buffer.to_string(),
            row.files.to_string(),
            s.reads.to_string(),
            s.calls_per_read.to_string(),
            s.bytes_per_read.to_string(),
        ];
        rec.extend(q(&s.wall));
        rec.extend(q(&s.cpu));
        rec.extend(q(&s.sys.q));
        rec.push(sys_from(s).to_string());
        rec.push(s.sys.rusage_mean_ns.to_string());
        rec.push(s.sys.quantum_ns.to_string());
        rec.push(r.env.kernel.clone().unwrap_or_default());
        w.write_record(&rec)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::probe::summary::{summarize, ReadSample};

    fn report() -> Report {
        let samples: Vec<ReadSample> = (0..10)
            .map(|i| ReadSample {
                wall_ns: 80_000 + i * 1000,
                cpu_ns: 79_000,
                sys_ns: 70_000 + (i % 2) * 1000,
                calls: 2,
                bytes: 2252,
            })
            .collect();
        let row = Row {
            name: "proc_interrupts",
            label: "/proc/interrupts",
            files: 1,
            method: Method::Pread,
            buffer: 4096,
            summary: summarize(&samples).unwrap(),
        };
        Report {
            env: Env {
                reads: 10,
                ..Env::default()
            },
            rows: vec![row],
        }
    }

    #[test]
    fn json_is_a_probe_result_set() {
        let v = to_json(&report());
        assert_eq!(v["kind"], "probe");
        assert_eq!(
            v["results"][0]["metric"],
            "proc_interrupts_pread_4k_wall_ns"
        );
        assert_eq!(v["results"][0]["values"].as_array().unwrap().len(), 10);
        assert_eq!(v["results"][1]["metric"], "proc_interrupts_pread_4k_cpu_ns");
        assert_eq!(v["results"][2]["metric"], "proc_interrupts_pread_4k_sys_ns");
        assert_eq!(v["rows"][0]["sys_source"], "rusage");
        assert_eq!(v["rows"][0]["wall_ns"]["p50"], 84_500.0);
        assert_eq!(v["rows"][0]["syscalls_per_read"], 2.0);
    }

    #[test]
    fn table_and_csv_have_one_line_per_row() {
        let mut t = Vec::new();
        write_table(&report(), &mut t).unwrap();
        let t = String::from_utf8(t).unwrap();
        assert!(t.contains("/proc/interrupts"), "{t}");
        assert!(t.contains("84.5"), "{t}");
        let mut c = Vec::new();
        write_csv(&report(), &mut c).unwrap();
        let c = String::from_utf8(c).unwrap();
        assert_eq!(c.lines().count(), 2);
        assert!(c
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("/proc/interrupts,pread,4096,1,10,2,2252,80000,"));
    }
}
