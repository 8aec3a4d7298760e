//! CSV exporter: long format, one line per (section, row, CPU), so any
//! number of CPUs fits. Columns: `section,label,irq,cpu,value,rate_per_sec`
//! (`value` = count, or delta in rates mode; `rate_per_sec` empty without
//! an interval; `cpu` empty for single-value rows and totals of stat).

use crate::report::Report;
use irqlab_core::Shape;
use std::io::Write;

/// Quote a field when it contains a comma, quote or newline.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Write `report` as CSV.
pub fn write(report: &Report, out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(out, "section,label,irq,cpu,value,rate_per_sec")?;
    if let Some(s) = &report.interrupts {
        for r in &s.rows {
            let label = field(&r.label);
            let irq = num(r.irq);
            let values: Vec<Option<u64>> = match (&r.counts, &r.deltas) {
                (Some(c), _) => c.iter().copied().map(Some).collect(),
                (None, Some(d)) => d.clone(),
                (None, None) => vec![Some(r.total)],
            };
            let per_cpu = r.shape == Shape::PerCpu;
            for (i, v) in values.iter().enumerate() {
                let cpu = if per_cpu {
                    num(s.cpus.get(i))
                } else {
                    String::new()
                };
                let rate = r.rates.as_ref().and_then(|x| x.get(i).copied().flatten());
                writeln!(
                    out,
                    "interrupts,{label},{irq},{cpu},{},{}",
                    num(*v),
                    num(rate)
                )?;
            }
        }
    }
    if let Some(s) = &report.softirqs {
        for r in &s.rows {
            for (i, v) in r.counts.iter().enumerate() {
                let rate = r.rates.as_ref().and_then(|x| x.get(i).copied().flatten());
                writeln!(
                    out,
                    "softirqs,{},,{},{},{}",
                    field(&r.name),
                    num(s.cpus.get(i)),
                    num(*v),
                    num(rate)
                )?;
            }
        }
    }
    if let Some(s) = &report.stat {
        for l in &s.cpu_pct {
            if let Some(p) = &l.pct {
                let cpu = num(l.cpu);
                for (name, v) in [
                    ("user_pct", p.user_pct),
                    ("system_pct", p.system_pct),
                    ("idle_pct", p.idle_pct),
                    ("iowait_pct", p.iowait_pct),
                    ("irq_pct", p.irq_pct),
                    ("softirq_pct", p.softirq_pct),
                    ("steal_pct", p.steal_pct),
                ] {
                    writeln!(out, "stat,{name},,{cpu},{v:.3},")?;
                }
            }
        }
    }
    Ok(())
}
