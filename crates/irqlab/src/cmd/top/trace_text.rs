//! `top --batch --trace` text: the `TRACE` lines written after each
//! block, each starting with the block's time stamp like every other
//! line. Per shown IRQ row (same rows, same order as the block) its hard
//! IRQ handler time in µs per second (`-` for rows no tracepoint sees:
//! NMI, TLB …), then per softirq vector its own time, run p99 and
//! raise -> entry latency p50/p99, then per CPU exact irq % and softirq %.
//! Formatting only: numbers come from [`TopTrace`].

use super::text::{shown_rows, TextOpts};
use crate::report::{self, Report};
use crate::trace::top::{self, TopTrace};
use std::io::Write;

/// Width of the device column (as in the block).
const DEVICE: usize = 20;

/// The `TRACE` lines of one block.
pub fn write_trace(
    t: &str,
    report: &Report,
    opts: &TextOpts,
    tt: &TopTrace,
    out: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{t}  {:<12} {:<DEVICE$} {:>13} {:>10} {:>9} {:>9}",
        "TRACE IRQ", "DEVICE", "hardirq µs/s", "runs/s", "avg_ns", "p99_ns"
    )?;
    let secs = tt.elapsed_ns as f64 / 1e9;
    if let Some(s) = &report.interrupts {
        for r in shown_rows(s, opts) {
            let name = report::name_of(r);
            write!(out, "{t}  {:<12} {name:<DEVICE$.DEVICE$}", r.label)?;
            match tt.irq(&r.label) {
                Some(x) => writeln!(
                    out,
                    " {:>13} {:>10.1} {:>9.0} {:>9}",
                    top::us_per_s(x.us_per_s),
                    x.count as f64 / secs.max(1e-9),
                    x.avg_ns,
                    x.p99_ns.map_or("-".into(), |v| format!("{v:.0}"))
                )?,
                None if top::traceable(&r.label) => {
                    writeln!(out, " {:>13} {:>10} {:>9} {:>9}", "0.0", "0.0", "-", "-")?
                }
                None => writeln!(out, " {:>13} {:>10} {:>9} {:>9}", "-", "-", "-", "-")?,
            }
        }
    }
    writeln!(
        out,
        "{t}  {:<12} {:>13} {:>10} {:>9} {:>11} {:>11}",
        "TRACE SOFT", "softirq µs/s", "runs/s", "p99_ns", "lat_p50_ns", "lat_p99_ns"
    )?;
    let opt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
    for s in &tt.softirqs {
        writeln!(
            out,
            "{t}  {:<12} {:>13} {:>10.1} {:>9} {:>11} {:>11}",
            s.name,
            top::us_per_s(s.us_per_s),
            s.count as f64 / secs.max(1e-9),
            opt(s.p99_ns),
            opt(s.latency_p50_ns),
            opt(s.latency_p99_ns)
        )?;
    }
    writeln!(out, "{t}  {:<12} {:>8} {:>8}", "TRACE CPU", "%irq", "%soft")?;
    writeln!(
        out,
        "{t}  {:<12} {:>8.2} {:>8.2}",
        "all", tt.irq_pct, tt.softirq_pct
    )?;
    for c in &tt.cpus {
        writeln!(
            out,
            "{t}  {:<12} {:>8.2} {:>8.2}",
            c.cpu, c.irq_pct, c.softirq_pct
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::top::fake;
    use crate::tui::fixtures;

    fn text() -> String {
        let report = fixtures::sample(4, 30).report;
        let mut out = Vec::new();
        write_trace(
            "12:00:00.000",
            &report,
            &TextOpts::default(),
            &fake::top_trace(),
            &mut out,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    fn line<'a>(text: &'a str, first: &str, second: &str) -> Vec<&'a str> {
        text.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f[1] == first && f.get(2) == Some(&second))
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
            .find(|f| f[1] == "24")
            .unwrap_or_else(|| panic!("{t}"));
        assert!(f.contains(&"3035") && f.contains(&"1015.0"), "{f:?}");
        // LOC is traced but shown only when the row is
        assert!(t.contains("TRACE IRQ"), "{t}");
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
    }
}
