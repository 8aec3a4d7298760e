//! Text lines of `top --batch`: mpstat-like blocks, every line starting
//! with the UTC time of the sample. Per interval: a header and one line
//! per active IRQ row (sorted by rate; `-` = gap), the same for softirqs,
//! CPU time shares, then interrupt threads. Formatting only.

use super::live::Frame;
use crate::report::IrqSection;
use crate::sampler::clock::rfc3339_utc;
use std::io::Write;

fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |r| format!("{r:.1}"))
}

fn header(t: &str, what: &str, cpus: &[u32], out: &mut impl Write) -> std::io::Result<()> {
    write!(out, "{t}  {what:<12} {:>12}", "total")?;
    for c in cpus {
        write!(out, " {:>10}", format!("CPU{c}"))?;
    }
    writeln!(out)
}

fn irq_lines(t: &str, s: &IrqSection, out: &mut impl Write) -> std::io::Result<()> {
    header(t, "IRQ/s", &s.cpus, out)?;
    for r in &s.rows {
        let active = r.total_rate.is_some_and(|x| x > 0.0) || r.gaps.is_some();
        if !active {
            continue;
        }
        write!(out, "{t}  {:<12} {:>12}", r.label, rate(r.total_rate))?;
        for v in r.rates.iter().flatten() {
            write!(out, " {:>10}", rate(*v))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Write one interval's block.
pub fn write_frame(f: &Frame, verbose: bool, out: &mut impl Write) -> anyhow::Result<()> {
    let stamp = rfc3339_utc(f.wall_ns);
    let t = stamp.get(11..23).unwrap_or(&stamp);
    let r = &f.report;
    if let Some(s) = &r.interrupts {
        irq_lines(t, s, out)?;
    }
    if let Some(s) = &r.softirqs {
        header(t, "SOFTIRQ/s", &s.cpus, out)?;
        for row in &s.rows {
            write!(out, "{t}  {:<12} {:>12}", row.name, rate(row.total_rate))?;
            for v in row.rates.iter().flatten() {
                write!(out, " {:>10}", rate(*v))?;
            }
            writeln!(out)?;
        }
    }
    if let Some(s) = &r.stat {
        writeln!(
            out,
            "{t}  {:<12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "CPU", "%usr", "%sys", "%irq", "%soft", "%steal", "%idle"
        )?;
        for l in &s.cpu_pct {
            let cpu = l.cpu.map_or_else(|| "all".to_string(), |c| c.to_string());
            match &l.pct {
                Some(p) => writeln!(
                    out,
                    "{t}  {cpu:<12} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
                    p.user_pct + p.nice_pct,
                    p.system_pct,
                    p.irq_pct,
                    p.softirq_pct,
                    p.steal_pct,
                    p.idle_pct + p.iowait_pct
                )?,
                None => writeln!(out, "{t}  {cpu:<12} {:>8}", "-")?,
            }
        }
    }
    if !f.threads.is_empty() {
        writeln!(
            out,
            "{t}  {:<12} {:>8} {:>8}  NAME",
            "THREAD", "%CPU", "LASTCPU"
        )?;
        for th in &f.threads {
            let last = th
                .last_cpu
                .map_or_else(|| "-".to_string(), |c| c.to_string());
            writeln!(
                out,
                "{t}  {:<12} {:>8.2} {:>8}  {}",
                th.pid, th.cpu_pct, last, th.name
            )?;
        }
    }
    if verbose {
        let c = &f.self_cost;
        writeln!(
            out,
            "{t}  self: cpu {} µs (user {} µs, sys {} µs), wall {} µs, strategy {}",
            c.cpu_ns / 1000,
            c.user_ns / 1000,
            c.system_ns / 1000,
            c.wall_ns / 1000,
            f.strategy.name()
        )?;
    }
    Ok(())
}
