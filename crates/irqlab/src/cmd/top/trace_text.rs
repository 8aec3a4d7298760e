//! `top --batch --trace` text: the `TRACE` lines written after each
//! block, each starting with the block's time stamp like every other
//! line, then `TRACE` and its table (`IRQ`, `SOFT`, `CPU`), so every data
//! line says what it is. Per shown IRQ row (same rows, same order as the
//! block) its hard IRQ handler time in µs per second (`-` for rows no
//! tracepoint sees: NMI, TLB …) with the row's full device name last; then
//! per softirq vector its own time, run p99 and raise -> entry latency
//! p50/p99, then per CPU exact irq % and softirq %, and a `TRACE DROPPED`
//! line when the programs could not count some hard IRQ runs.
//! Formatting only: numbers come from [`TopTrace`].

use crate::report::ReusedRates;
use crate::trace::top::{self, TopTrace};
use std::io::Write;

/// Width of the label / name column.
const LABEL: usize = 8;

/// The `TRACE` lines of one block.
pub fn write_trace(
    t: &str,
    report: &ReusedRates,
    tt: &TopTrace,
    out: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{t}  TRACE IRQ  {:<LABEL$} {:>13} {:>10} {:>9} {:>9}  DEVICE",
        "IRQ", "hardirq µs/s", "runs/s", "avg_ns", "p99_ns"
    )?;
    let secs = tt.elapsed_ns as f64 / 1e9;
    if let Some(s) = report.interrupts() {
        for r in s.shown() {
            let (label, name) = (r.label(), r.name());
            write!(out, "{t}  TRACE IRQ  {:<LABEL$}", label)?;
            match tt.irq(label) {
                Some(x) => write!(
                    out,
                    " {:>13} {:>10.1} {:>9.0} {:>9}",
                    top::us_per_s(x.us_per_s),
                    x.count as f64 / secs.max(1e-9),
                    x.avg_ns,
                    x.p99_ns.map_or("-".into(), |v| format!("{v:.0}"))
                )?,
                None if top::traceable(label) => {
                    write!(out, " {:>13} {:>10} {:>9} {:>9}", "0.0", "0.0", "-", "-")?
                }
                None => write!(out, " {:>13} {:>10} {:>9} {:>9}", "-", "-", "-", "-")?,
            }
            writeln!(out, "  {name}")?;
        }
    }
    writeln!(
        out,
        "{t}  TRACE SOFT {:<LABEL$} {:>13} {:>10} {:>9} {:>11} {:>11}",
        "SOFTIRQ", "softirq µs/s", "runs/s", "p99_ns", "lat_p50_ns", "lat_p99_ns"
    )?;
    let opt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
    for s in &tt.softirqs {
        writeln!(
            out,
            "{t}  TRACE SOFT {:<LABEL$} {:>13} {:>10.1} {:>9} {:>11} {:>11}",
            s.name,
            top::us_per_s(s.us_per_s),
            s.count as f64 / secs.max(1e-9),
            opt(s.p99_ns),
            opt(s.latency_p50_ns),
            opt(s.latency_p99_ns)
        )?;
    }
    writeln!(
        out,
        "{t}  TRACE CPU  {:<LABEL$} {:>8} {:>8}",
        "CPU", "%irq", "%soft"
    )?;
    writeln!(
        out,
        "{t}  TRACE CPU  {:<LABEL$} {:>8.2} {:>8.2}",
        "all", tt.irq_pct, tt.softirq_pct
    )?;
    for c in &tt.cpus {
        writeln!(
            out,
            "{t}  TRACE CPU  {:<LABEL$} {:>8.2} {:>8.2}",
            c.cpu, c.irq_pct, c.softirq_pct
        )?;
    }
    if tt.dropped > 0 {
        writeln!(
            out,
            "{t}  TRACE DROPPED {} hard IRQ run(s) not counted (the programs' map is full)",
            tt.dropped
        )?;
    }
    if let Some(l) = crate::trace::missed::line(&tt.missed) {
        writeln!(out, "{t}  TRACE {l}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::top::fake;
    use crate::tui::fixtures;

    /// The text state of the fixture's sample (4 CPUs, 30 IRQs).
    fn rates() -> ReusedRates {
        let (old, new) = fixtures::snapshots(4, 30);
        let mut r = ReusedRates::default();
        r.update(&old, &new, &crate::filter::Filter::default());
        r
    }

    fn text() -> String {
        let mut out = Vec::new();
        write_trace("12:00:00.000", &rates(), &fake::top_trace(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The fields after `<stamp> TRACE <table>` of the line whose first
    /// two such fields are `first second`.
    fn line<'a>(text: &'a str, first: &str, second: &str) -> Vec<&'a str> {
        text.lines()
            .map(|l| l.split_whitespace().skip(2).collect::<Vec<_>>())
            .find(|f| f.get(1) == Some(&first) && f.get(2) == Some(&second))
            .unwrap_or_else(|| panic!("no {first} {second} line: {text}"))
    }

    #[test]
    fn every_line_is_stamped_and_rows_carry_handler_time() {
        let t = text();
        assert!(t.lines().all(|l| l.starts_with("12:00:00.000  ")), "{t}");
        // the synth tree's IRQ 24 is shown: 3035 µs/s of handlers, 1015 runs
        let f: Vec<&str> = t
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f[3] == "24")
            .unwrap_or_else(|| panic!("{t}"));
        assert!(f.contains(&"3035") && f.contains(&"1015.0"), "{f:?}");
        // LOC is traced but shown only when the row is
        assert!(t.contains("TRACE IRQ"), "{t}");
    }

    /// TRACE data rows carried no marker (`12:00:00.000  24  virtio…`)
    /// and cut names to 20 columns ("Local timer interrup").
    #[test]
    fn every_trace_line_is_marked_and_names_are_whole() {
        let t = text();
        for l in t.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f[1], "TRACE", "{l}");
            assert!(["IRQ", "SOFT", "CPU"].contains(&f[2]), "{l}");
        }
        let report = rates();
        let long = report
            .interrupts()
            .unwrap()
            .shown()
            .map(|r| r.name())
            .max_by_key(|n| n.len())
            .unwrap();
        assert!(long.len() > 20, "the fixture has a long name: {long}");
        assert!(
            t.lines().any(|l| l.ends_with(&format!("  {long}"))),
            "{long}: {t}"
        );
        let mut dropped = fake::top_trace();
        dropped.dropped = 3;
        let mut out = Vec::new();
        write_trace("x", &report, &dropped, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("x  TRACE DROPPED 3 hard IRQ run(s)"), "{out}");
        let mut missed = fake::top_trace();
        missed.missed = [("softirq".to_string(), 5)].into();
        let mut out = Vec::new();
        write_trace("x", &report, &missed, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("x  TRACE MISSED program runs: softirq 5;"),
            "{out}"
        );
    }

    #[test]
    fn softirq_latency_and_exact_cpu_time() {
        let t = text();
        let net = line(&t, "NET_RX", "19000");
        assert_eq!(net[3], "900.0", "{net:?}");
        let all = line(&t, "all", "0.22");
        assert_eq!(all[3], "0.98", "mean of 1.95 and 0.02: {all:?}");
        let cpu0 = line(&t, "0", "0.40");
        assert_eq!(cpu0[3], "1.95", "{cpu0:?}");
        assert!(!t.contains("DROPPED"), "{t}");
        assert!(!t.contains("MISSED"), "{t}");
    }
}
