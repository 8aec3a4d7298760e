//! Human-readable tables. Per-CPU columns are printed for up to
//! [`MAX_CPU_COLUMNS`] CPUs; above that the busiest CPU is named instead
//! (use `--cpus` to pick columns, or `--format json|csv` for everything).

use crate::report::{IrqLine, Report, SoftirqLine};
use std::io::Write;

/// Most per-CPU columns a table shows.
pub const MAX_CPU_COLUMNS: usize = 16;

fn fmt_rate(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(0.0) => "0".to_string(),
        Some(r) if r >= 100.0 => format!("{r:.0}"),
        Some(r) => format!("{r:.1}"),
    }
}

fn fmt_count(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |c| c.to_string())
}

/// Cells (as text) of one row over the CPU columns, its total and the
/// busiest column index.
fn irq_cells(r: &IrqLine, rates: bool) -> (Vec<String>, String, Option<usize>) {
    if rates {
        let v = r.rates.clone().unwrap_or_default();
        let busiest = argmax(v.iter().map(|x| x.unwrap_or(0.0)));
        (
            v.into_iter().map(fmt_rate).collect(),
            fmt_rate(r.total_rate),
            busiest,
        )
    } else {
        let v = r.counts.clone().unwrap_or_default();
        let busiest = argmax(v.iter().map(|&x| x as f64));
        (
            v.into_iter().map(|c| c.to_string()).collect(),
            r.total.to_string(),
            busiest,
        )
    }
}

fn argmax(it: impl Iterator<Item = f64>) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, v) in it.enumerate() {
        if v > 0.0 && best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

fn detail(r: &IrqLine) -> String {
    if r.irq.is_none() {
        return r.description.clone();
    }
    let mut s = String::new();
    if let Some(c) = &r.chip {
        s.push_str(c);
    }
    if let Some(h) = r.hwirq {
        s.push_str(&format!(" {h}"));
    }
    if let Some(t) = &r.trigger {
        s.push_str(&format!(" {t}"));
    }
    if let Some(f) = &r.flow {
        s.push_str(&format!("-{f}"));
    }
    if !r.actions.is_empty() {
        s.push_str("  ");
        s.push_str(&r.actions.join(", "));
    }
    if let Some(a) = &r.affinity {
        s.push_str(&format!("  [cpus {a}]"));
    }
    s.trim().to_string()
}

/// Write rows of cells right-aligned, the last column left-aligned.
fn write_grid(out: &mut impl Write, grid: &[Vec<String>]) -> std::io::Result<()> {
    let ncol = grid.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..ncol)
        .map(|c| {
            grid.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in grid {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let w = widths.get(c).copied().unwrap_or(0);
            if c + 1 == row.len() && c > 0 {
                line.push_str("  ");
                line.push_str(cell);
            } else {
                if c > 0 {
                    line.push(' ');
                }
                line.push_str(&format!("{cell:>w$}"));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn write_interrupts(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let Some(s) = &report.interrupts else {
        return Ok(());
    };
    let rates = report.interval_s.is_some();
    let wide = s.cpus.len() > MAX_CPU_COLUMNS;
    let unit = if rates { "/s" } else { "" };
    let mut head = vec!["IRQ".to_string()];
    if wide {
        head.push(format!("BUSIEST CPU{unit}"));
    } else {
        head.extend(s.cpus.iter().map(|c| format!("CPU{c}{unit}")));
    }
    head.extend([
        format!("TOTAL{unit}"),
        "CHIP / ACTIONS / DESCRIPTION".to_string(),
    ]);
    let mut grid = vec![head];
    for r in &s.rows {
        let (cells, total, busiest) = irq_cells(r, rates);
        let mut line = vec![format!("{}:", r.label)];
        if wide {
            line.push(
                busiest
                    .and_then(|i| Some(format!("cpu{}={}", s.cpus.get(i)?, cells.get(i)?)))
                    .unwrap_or_default(),
            );
        } else if cells.is_empty() || r.shape != irqlab_core::Shape::PerCpu {
            line.extend(std::iter::repeat_n(String::new(), s.cpus.len()));
        } else {
            line.extend(cells);
        }
        line.extend([total, detail(r)]);
        grid.push(line);
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
    write_grid(out, &grid)?;
    if !s.gone.is_empty() {
        writeln!(out, "gone since the first sample: {}", s.gone.join(", "))?;
    }
    if s.rows.iter().any(|r| r.gaps.is_some()) {
        writeln!(
            out,
            "- = no value: CPU went on/offline, IRQ reused or counter reset during the interval"
        )?;
    }
    Ok(())
}

fn softirq_cells(r: &SoftirqLine, rates: bool) -> (Vec<String>, String) {
    if rates {
        let v = r.rates.clone().unwrap_or_default();
        (
            v.into_iter().map(fmt_rate).collect(),
            fmt_rate(r.total_rate),
        )
    } else {
        (
            r.counts.iter().map(|c| fmt_count(*c)).collect(),
            r.total.to_string(),
        )
    }
}

fn write_softirqs(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let Some(s) = &report.softirqs else {
        return Ok(());
    };
    let rates = report.interval_s.is_some();
    let wide = s.cpus.len() > MAX_CPU_COLUMNS;
    let unit = if rates { "/s" } else { "" };
    let mut head = vec!["SOFTIRQ".to_string()];
    if !wide {
        head.extend(s.cpus.iter().map(|c| format!("CPU{c}{unit}")));
    }
    head.push(format!("TOTAL{unit}"));
    head.push(String::new());
    let mut grid = vec![head];
    for r in &s.rows {
        let (cells, total) = softirq_cells(r, rates);
        let mut line = vec![format!("{}:", r.name)];
        if !wide {
            line.extend(cells);
        }
        line.push(total);
        line.push(String::new());
        grid.push(line);
    }
    writeln!(out, "\nSoftirqs ({})", super::plural(s.cpus.len(), "CPU"))?;
    write_grid(out, &grid)
}

fn write_stat(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let Some(s) = &report.stat else { return Ok(()) };
    let when = if report.interval_s.is_some() {
        "over the interval"
    } else {
        "since boot"
    };
    writeln!(out, "\nCPU time ({when})")?;
    let mut grid = vec![[
        "CPU", "usr%", "nice%", "sys%", "irq%", "soft%", "iowait%", "steal%", "idle%",
    ]
    .map(String::from)
    .to_vec()];
    for l in &s.cpu_pct {
        let Some(p) = &l.pct else { continue };
        let name = match (l.cpu, &s.aggregate_cpus) {
            (Some(c), _) => c.to_string(),
            (None, None) => "all".to_string(),
            (None, Some(_)) => "sel".to_string(),
        };
        let mut row = vec![name];
        for v in [
            p.user_pct,
            p.nice_pct,
            p.system_pct,
            p.irq_pct,
            p.softirq_pct,
            p.iowait_pct,
            p.steal_pct,
            p.idle_pct,
        ] {
            row.push(format!("{v:.2}"));
        }
        grid.push(row);
    }
    let grid: Vec<Vec<String>> = grid
        .into_iter()
        .map(|mut r| {
            r.push(String::new());
            r
        })
        .collect();
    write_grid(out, &grid)?;
    if let Some(cpus) = s.aggregate_cpus.as_ref().filter(|c| !c.is_empty()) {
        let list = irqlab_core::CpuList::from_cpus(cpus.iter().copied());
        let noun = if cpus.len() == 1 { "CPU" } else { "CPUs" };
        writeln!(out, "sel = {noun} {list} together (--cpus)")?;
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
