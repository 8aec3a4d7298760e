//! CSV exporter (through the `csv` crate, which owns quoting): long
//! format, one line per (section, row, CPU), so any number of CPUs fits.
//! Columns: `section,label,irq,cpu,value,rate_per_sec,actions,description`
//! — `value` = count, or delta in rates mode; `rate_per_sec` empty without
//! an interval; `cpu` empty for single-value rows and for the all-CPU
//! line of stat, `sel` for the `--cpus` CPUs summed; `actions` (`;`-separated handler names) and `description`
//! only on interrupt lines. Stat lines carry one time share each
//! (`user_pct`, `nice_pct`, … as `label`), an empty `value` for a gap.
//! Text from the tree (`label`, `actions`, `description`) has its control
//! characters written as `\xNN`, as in the table ([`super::grid::visible`]):
//! CSV is often read on a terminal; JSON keeps the exact text.

use super::grid::visible_text;
use crate::report::{IrqLine, Report};
use irqlab_core::Shape;
use std::io::Write;

/// The header line.
pub const HEADER: [&str; 8] = [
    "section",
    "label",
    "irq",
    "cpu",
    "value",
    "rate_per_sec",
    "actions",
    "description",
];

fn num<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// A rate without float noise: integral values as integers, others to
/// 1e-3 (what the JSON contract prints).
fn rate(v: Option<f64>) -> String {
    match v {
        Some(r) if r.is_finite() => {
            let s = format!("{r:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        _ => String::new(),
    }
}

/// Per-cell counts of one interrupt row (counts, deltas, or the total).
fn irq_values(r: &IrqLine) -> Vec<Option<u64>> {
    match (&r.counts, &r.deltas) {
        (Some(c), _) => c.iter().copied().map(Some).collect(),
        (None, Some(d)) => d.clone(),
        (None, None) => vec![Some(r.total)],
    }
}

type Csv<W> = csv::Writer<W>;

fn interrupts<W: Write>(report: &Report, w: &mut Csv<W>) -> csv::Result<()> {
    let Some(s) = &report.interrupts else {
        return Ok(());
    };
    for r in &s.rows {
        let irq = num(r.irq);
        let actions = r.actions.join(";");
        let actions = visible_text(&actions);
        let (label, desc) = (visible_text(&r.label), visible_text(&r.description));
        let per_cpu = r.shape == Shape::PerCpu;
        for (i, v) in irq_values(r).iter().enumerate() {
            let cpu = if per_cpu {
                num(s.cpus.get(i))
            } else {
                String::new()
            };
            let rt = r.rates.as_ref().and_then(|x| x.get(i).copied().flatten());
            w.write_record([
                "interrupts",
                &label,
                &irq,
                &cpu,
                &num(*v),
                &rate(rt),
                &actions,
                &desc,
            ])?;
        }
    }
    Ok(())
}

fn softirqs<W: Write>(report: &Report, w: &mut Csv<W>) -> csv::Result<()> {
    let Some(s) = &report.softirqs else {
        return Ok(());
    };
    for r in &s.rows {
        for (i, v) in r.counts.iter().enumerate() {
            let rt = r.rates.as_ref().and_then(|x| x.get(i).copied().flatten());
            let cpu = num(s.cpus.get(i));
            let name = visible_text(&r.name);
            w.write_record(["softirqs", &name, "", &cpu, &num(*v), &rate(rt), "", ""])?;
        }
    }
    Ok(())
}

fn stat<W: Write>(report: &Report, w: &mut Csv<W>) -> csv::Result<()> {
    let Some(s) = &report.stat else { return Ok(()) };
    for l in &s.cpu_pct {
        let cpu = match (l.cpu, &s.aggregate_cpus) {
            (Some(c), _) => c.to_string(),
            // the `--cpus` CPUs summed, told from the whole machine's line
            (None, Some(_)) => s.aggregate_label().to_string(),
            (None, None) => String::new(),
        };
        // a gap line keeps its lines, with empty values
        let p = l.pct.as_ref();
        for (name, v) in [
            ("user_pct", p.map(|p| p.user_pct)),
            ("nice_pct", p.map(|p| p.nice_pct)),
            ("system_pct", p.map(|p| p.system_pct)),
            ("idle_pct", p.map(|p| p.idle_pct)),
            ("iowait_pct", p.map(|p| p.iowait_pct)),
            ("irq_pct", p.map(|p| p.irq_pct)),
            ("softirq_pct", p.map(|p| p.softirq_pct)),
            ("steal_pct", p.map(|p| p.steal_pct)),
        ] {
            let v = v.map(|v| format!("{v:.3}")).unwrap_or_default();
            w.write_record(["stat", name, "", &cpu, &v, "", "", ""])?;
        }
    }
    Ok(())
}

/// Write `report` as CSV. Write errors stay `io::Error`s.
pub fn write(report: &Report, out: &mut impl Write) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let io = |e: csv::Error| match e.into_kind() {
        csv::ErrorKind::Io(e) => anyhow::Error::from(e),
        other => anyhow::anyhow!("CSV: {other:?}"),
    };
    w.write_record(HEADER).map_err(io)?;
    interrupts(report, &mut w).map_err(io)?;
    softirqs(report, &mut w).map_err(io)?;
    stat(report, &mut w).map_err(io)?;
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_have_no_float_noise() {
        assert_eq!(rate(Some(68103.77999999998)), "68103.78");
        assert_eq!(rate(Some(2.0)), "2");
        assert_eq!(rate(Some(0.0)), "0");
        assert_eq!(rate(Some(0.0004)), "0");
        assert_eq!(rate(None), "");
        assert_eq!(rate(Some(f64::NAN)), "");
    }
}
