//! Human-readable tables. Per-CPU columns are printed for up to
//! [`MAX_CPU_COLUMNS`] CPUs; above that the busiest CPU is named instead
//! (use `--cpus` to pick columns, or `--format json|csv` for everything).
//! Every table goes through [`Grid`] (one text buffer, no `String` per
//! cell).

use super::grid::{visible_text, Grid};
use crate::report::{IrqLine, Report, SoftirqLine, CPU_PCT_HEADINGS};
use std::fmt::{self, Write as _};
use std::io::Write;

/// Most per-CPU columns a table shows.
pub const MAX_CPU_COLUMNS: usize = 16;

/// A rate as the table prints it: `-` for none, `0`, no decimals from
/// 100 up, else one.
struct Rate(Option<f64>);

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("-"),
            Some(0.0) => f.write_str("0"),
            Some(r) if r >= 100.0 => write!(f, "{r:.0}"),
            Some(r) => write!(f, "{r:.1}"),
        }
    }
}

/// A count, or `-` for none (a gap).
struct Count(Option<u64>);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("-"),
            Some(c) => write!(f, "{c}"),
        }
    }
}

/// The legend's addition for a wide table: what a gap note is.
const WIDE_GAPS: &str =
    "\n(-: cpuN) or (-: K CPUs) = the CPUs without a value; TOTAL adds the cells that have one";

fn argmax(it: impl Iterator<Item = f64>) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, v) in it.enumerate() {
        if v > 0.0 && best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

/// The last column of an interrupt row: chip, hwirq, trigger-flow,
/// actions and affinity of a numbered row; the description of others.
struct Detail<'a>(&'a IrqLine);

impl fmt::Display for Detail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        if r.irq.is_none() {
            return f.write_str(&r.description);
        }
        // Leading and trailing blanks of the whole text are dropped: only
        // the parts present are written, each after its separator.
        let mut s = String::new();
        if let Some(c) = &r.chip {
            s.push_str(c);
        }
        if let Some(h) = r.hwirq {
            let _ = write!(s, " {h}");
        }
        if let Some(t) = &r.trigger {
            let _ = write!(s, " {t}");
        }
        if let Some(fl) = &r.flow {
            let _ = write!(s, "-{fl}");
        }
        if !r.actions.is_empty() {
            s.push_str("  ");
            for (i, a) in r.actions.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(a);
            }
        }
        if let Some(a) = &r.affinity {
            let _ = write!(s, "  [cpus {a}]");
        }
        f.write_str(s.trim())
    }
}

/// What a wide row (its CPU columns hidden) says of its gaps: `(-: cpuN)`
/// naming the one CPU whose cell has no value, `(-: K CPUs)` for more;
/// `None` without a gap. `cells` are the row's per-CPU gaps (`true`: a
/// gap), in `cpus` order.
fn gap_note(cpus: &[u32], cells: impl Iterator<Item = bool>) -> Option<String> {
    let mut first = None;
    let mut n = 0usize;
    for (i, gap) in cells.enumerate() {
        if gap {
            n += 1;
            first = first.or(Some(i));
        }
    }
    match (n, first.and_then(|i| cpus.get(i))) {
        (0, _) => None,
        (1, Some(c)) => Some(format!("(-: cpu{c})")),
        _ => Some(format!("(-: {})", super::plural(n, "CPU"))),
    }
}

/// The busiest cell of a wide row: `cpuN=V` (empty when no CPU has a
/// positive value), then its [`gap_note`]; `-` when every cell is a gap.
fn busiest_cell(g: &mut Grid, busiest: Option<String>, r: &IrqLine, cpus: &[u32]) {
    let per_cpu = r.shape == irqlab_core::Shape::PerCpu;
    let gaps = r.gaps.as_deref().unwrap_or_default();
    let note = if per_cpu {
        gap_note(cpus, gaps.iter().map(Option::is_some))
    } else {
        gaps.iter().any(Option::is_some).then(|| "(-)".to_string())
    };
    match (busiest, note) {
        _ if r.no_value() => g.cell("-"),
        (Some(b), Some(n)) => g.cell(format_args!("{b} {n}")),
        (Some(b), None) => g.cell(b),
        (None, Some(n)) => g.cell(n),
        (None, None) => g.cell(""),
    };
}

/// One row's CPU cells (all, or the busiest as `cpuN=V` when `wide`, with
/// its gaps: [`busiest_cell`]) and total, into `g`. The total adds the
/// cells that have a value (`-` when none has one), in every layout.
fn irq_cells(g: &mut Grid, r: &IrqLine, cpus: &[u32], rates: bool, wide: bool) {
    let per_cpu = r.shape == irqlab_core::Shape::PerCpu;
    if rates {
        let v = r.rates.as_deref().unwrap_or_default();
        if wide && r.rates.is_none() && per_cpu {
            // reduced to the busiest CPU as the report was built
            let b = r.busiest.map(|(c, x)| format!("cpu{c}={}", Rate(Some(x))));
            busiest_cell(g, b, r, cpus);
        } else if wide {
            let busiest = argmax(v.iter().map(|x| x.unwrap_or(0.0)));
            let b = busiest
                .and_then(|i| Some((cpus.get(i)?, v.get(i)?)))
                .map(|(c, x)| format!("cpu{c}={}", Rate(*x)));
            busiest_cell(g, b, r, cpus);
        } else if v.is_empty() || !per_cpu {
            g.cells(std::iter::repeat_n("", cpus.len()));
        } else {
            g.cells(v.iter().map(|x| Rate(*x)));
        }
        g.cell(Rate(r.total_rate));
    } else {
        let v = r.counts.as_deref().unwrap_or_default();
        if wide && r.counts.is_none() && per_cpu {
            // reduced to the busiest CPU as the report was built
            let b = r.busiest_count.map(|(c, x)| format!("cpu{c}={x}"));
            busiest_cell(g, b, r, cpus);
        } else if wide {
            let busiest = argmax(v.iter().map(|&x| x as f64));
            let b = busiest
                .and_then(|i| Some((cpus.get(i)?, v.get(i)?)))
                .map(|(c, x)| format!("cpu{c}={x}"));
            busiest_cell(g, b, r, cpus);
        } else if v.is_empty() || !per_cpu {
            g.cells(std::iter::repeat_n("", cpus.len()));
        } else {
            g.cells(v);
        }
        g.cell(r.total);
    }
}

/// The layout of every table here: right-aligned columns one space
/// apart, the last one free text after two spaces.
fn grid() -> Grid {
    Grid::new().separator(" ").free_last("  ")
}

fn write_interrupts(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let Some(s) = &report.interrupts else {
        return Ok(());
    };
    let rates = report.interval_s.is_some();
    let wide = s.cpus.len() > MAX_CPU_COLUMNS;
    let unit = if rates { "/s" } else { "" };
    let mut g = grid();
    g.cell("IRQ");
    if wide {
        g.cell(format_args!("BUSIEST CPU{unit}"));
    } else {
        g.cells(s.cpus.iter().map(|c| format!("CPU{c}{unit}")));
    }
    g.cell(format_args!("TOTAL{unit}"))
        .cell("CHIP / ACTIONS / DESCRIPTION")
        .end_row();
    for r in &s.rows {
        g.cell(format_args!("{}:", r.label));
        irq_cells(&mut g, r, &s.cpus, rates, wide);
        g.cell(Detail(r)).end_row();
    }
    writeln!(
        out,
        "Interrupts ({}{})",
        super::plural(s.cpus.len(), "CPU"),
        if wide {
            "; per-CPU columns hidden, see --cpus"
        } else {
            ""
        }
    )?;
    g.write_to(out)?;
    gone_line(&s.gone, out)?;
    if s.rows.iter().any(|r| r.gaps.is_some()) {
        writeln!(
            out,
            "- = no value: CPU went on/offline, IRQ reused or counter reset during the interval{}",
            if wide { WIDE_GAPS } else { "" }
        )?;
    }
    Ok(())
}

/// `gone since the first sample: …`, under a section some of whose
/// rows went away over the interval.
fn gone_line(gone: &[String], out: &mut impl Write) -> std::io::Result<()> {
    if gone.is_empty() {
        return Ok(());
    }
    let gone = gone.join(", ");
    writeln!(out, "gone since the first sample: {}", visible_text(&gone))
}

fn softirq_cells(g: &mut Grid, r: &SoftirqLine, rates: bool, wide: bool) {
    if rates {
        if !wide {
            g.cells(r.rates.iter().flatten().map(|x| Rate(*x)));
        }
        g.cell(Rate(r.total_rate));
    } else {
        if !wide {
            g.cells(r.counts.iter().map(|c| Count(*c)));
        }
        g.cell(Count(r.total));
    }
}

fn write_softirqs(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let Some(s) = &report.softirqs else {
        return Ok(());
    };
    let rates = report.interval_s.is_some();
    let wide = s.cpus.len() > MAX_CPU_COLUMNS;
    let unit = if rates { "/s" } else { "" };
    let mut g = grid();
    g.cell("SOFTIRQ");
    if !wide {
        g.cells(s.cpus.iter().map(|c| format!("CPU{c}{unit}")));
    }
    g.cell(format_args!("TOTAL{unit}")).cell("").end_row();
    for r in &s.rows {
        g.cell(format_args!("{}:", r.name));
        softirq_cells(&mut g, r, rates, wide);
        let note = wide.then(|| gap_note(&s.cpus, r.counts.iter().map(Option::is_none)));
        g.cell(note.flatten().unwrap_or_default()).end_row();
    }
    writeln!(out, "\nSoftirqs ({})", super::plural(s.cpus.len(), "CPU"))?;
    g.write_to(out)?;
    gone_line(&s.gone, out)?;
    if s.rows.iter().any(|r| r.counts.contains(&None)) {
        writeln!(
            out,
            "- = no value: CPU went on/offline or counter reset during the interval{}",
            if wide { WIDE_GAPS } else { "" }
        )?;
    }
    Ok(())
}

fn write_stat(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let Some(s) = &report.stat else { return Ok(()) };
    let when = if report.interval_s.is_some() {
        "over the interval"
    } else {
        "since boot"
    };
    writeln!(out, "\nCPU time ({when})")?;
    let mut g = grid();
    // mpstat's order, named as `top`'s CPU-time panel
    g.cell("CPU").cells(CPU_PCT_HEADINGS).cell("").end_row();
    for l in &s.cpu_pct {
        match l.cpu {
            Some(c) => g.cell(c),
            None => g.cell(s.aggregate_label()),
        };
        match &l.pct {
            Some(p) => {
                for v in p.in_print_order() {
                    g.cell(format_args!("{v:.2}"));
                }
            }
            // a gap (the CPU came online, or an impossible step): shown
            // as such, never left out
            None => {
                for _ in CPU_PCT_HEADINGS {
                    g.cell("-");
                }
            }
        }
        g.cell("").end_row();
    }
    g.write_to(out)?;
    if let Some(note) = s.aggregate_note() {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

/// Write `report` as tables: interrupts, softirqs, CPU time.
pub fn write(report: &Report, out: &mut impl Write) -> anyhow::Result<()> {
    if let Some(i) = report.interval_s {
        writeln!(out, "Rates over {i:.3} s")?;
    }
    write_interrupts(report, out)?;
    write_softirqs(report, out)?;
    write_stat(report, out)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::filter::Filter;
    use crate::report::{rates, IrqRows, RateOpts};
    use irqlab_core::{Interrupts, Snapshot, Softirqs};

    /// 20 CPUs: every count `base`, except `(row, cpu, count)` overrides.
    fn snap(ms: u64, base: u64, set: &[(&str, usize, u64)]) -> Snapshot {
        let head: String = (0..20).map(|c| format!(" CPU{c}")).collect();
        let row = |label: &str, tail: &str| {
            let cells: String = (0..20)
                .map(|c| {
                    let v = set
                        .iter()
                        .find(|s| s.0 == label && s.1 == c)
                        .map_or(base, |s| s.2);
                    format!(" {v}")
                })
                .collect();
            format!("{label}:{cells}{tail}\n")
        };
        let irqs = format!(
            "{head}\n{}{}",
            row("0", " IO-APIC 2-edge timer"),
            row("1", " IO-APIC 1-edge i8042")
        );
        let soft = format!("{head}\n{}{}", row("TIMER", ""), row("HI", ""));
        Snapshot {
            mono_ns: ms * 1_000_000,
            interrupts: Some(Interrupts::parse(irqs.as_bytes()).unwrap()),
            softirqs: Some(Softirqs::parse(soft.as_bytes()).unwrap()),
            ..Snapshot::default()
        }
    }

    /// A wide table marks a row's gaps beside its busiest CPU (a counter
    /// that went back on CPU 7: not a 0), as the narrow layout's `-` and
    /// JSON's gaps do, whether the report kept every rate or only the
    /// busiest; softirq rows too; the legend says what the mark is.
    #[test]
    fn wide_rows_mark_their_gaps() {
        let old = snap(0, 10, &[]);
        let new = snap(
            1000,
            10,
            &[
                ("0", 5, 110),
                ("0", 7, 3),
                ("1", 7, 3),
                ("1", 8, 3),
                ("TIMER", 3, 1),
            ],
        );
        let f = Filter::from_flags(None, None).unwrap();
        for irqs in [IrqRows::PerCpu, IrqRows::Busiest] {
            let r = rates(
                &old,
                &new,
                &f,
                RateOpts {
                    deltas: false,
                    irqs,
                },
            );
            let mut out = Vec::new();
            write(&r, &mut out).unwrap();
            let t = String::from_utf8(out).unwrap();
            let line = |p: &str| t.lines().find(|l| l.trim_start().starts_with(p)).unwrap();
            assert!(line("0:").contains("cpu5=100 (-: cpu7)"), "{t}");
            assert!(line("1:").contains(" (-: 2 CPUs)"), "{t}");
            assert!(line("TIMER:").ends_with("(-: cpu3)"), "{t}");
            assert!(!line("HI:").contains("(-"), "{t}");
            assert!(
                t.contains("(-: cpuN) or (-: K CPUs) = the CPUs without a value"),
                "{t}"
            );
        }
    }
}
