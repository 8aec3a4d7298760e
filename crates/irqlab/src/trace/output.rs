//! [`Interval`] -> text (bcc hardirqs/softirqs-like tables, log2
//! histograms, per-CPU exact irq/softirq %) or one JSON object per line.
//! Formats only: every number comes from `interval.rs`.

use super::interval::{Interval, MissedShown};
use super::sample::HIST_SLOTS;
use std::io::{self, Write};

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

/// The tables of one interval (`n` counts intervals from 1); `cut` names
/// the signal that cut it short (`SIGINT`); `missed`: its missed runs as
/// the selection shows them ([`IntervalView::missed_shown`](super::interval::IntervalView::missed_shown)).
pub fn text(
    iv: &Interval,
    missed: &MissedShown,
    n: u64,
    cut: Option<&str>,
    out: &mut impl Write,
) -> io::Result<()> {
    write!(out, "interval {n}: {:.3} s", iv.elapsed_ns as f64 / 1e9)?;
    match cut {
        Some(sig) => writeln!(out, " (cut short by {sig})")?,
        None => writeln!(out)?,
    }
    if iv.irqs.is_empty() {
        writeln!(out, "no hard IRQ or vector ran (in the selection)")?;
    } else {
        writeln!(
            out,
            "{:<6} {:<28} {:>10} {:>12} {:>9} {:>9} {:>9}",
            "IRQ", "NAME", "COUNT", "TOTAL_us", "AVG_ns", "P50_ns", "P99_ns"
        )?;
        for l in &iv.irqs {
            writeln!(
                out,
                "{:<6} {:<28} {:>10} {:>12.1} {:>9.0} {:>9} {:>9}",
                l.label,
                l.key.name(),
                l.count,
                us(l.total_ns),
                l.avg_ns,
                opt(l.p50_ns),
                opt(l.p99_ns)
            )?;
        }
    }
    if iv.softirqs.is_empty() {
        writeln!(out, "no softirq ran (in the selection)")?;
    } else {
        writeln!(
            out,
            "{:<9} {:>10} {:>12} {:>12} {:>9} {:>9} {:>10} {:>11} {:>11}",
            "SOFTIRQ",
            "COUNT",
            "TOTAL_us",
            "OWN_us",
            "AVG_ns",
            "P99_ns",
            "KSOFTIRQD%",
            "LAT_P50_ns",
            "LAT_P99_ns"
        )?;
        for s in &iv.softirqs {
            let ksoft = if s.total_ns == 0 {
                0.0
            } else {
                s.ksoftirqd_ns as f64 * 100.0 / s.total_ns as f64
            };
            writeln!(
                out,
                "{:<9} {:>10} {:>12.1} {:>12.1} {:>9.0} {:>9} {:>10.1} {:>11} {:>11}",
                s.name,
                s.count,
                us(s.total_ns),
                us(s.own_ns),
                s.avg_ns,
                opt(s.p99_ns),
                ksoft,
                opt(s.latency_p50_ns),
                opt(s.latency_p99_ns)
            )?;
        }
    }
    writeln!(out, "{:<5} {:>8} {:>9}", "CPU", "IRQ%", "SOFTIRQ%")?;
    for c in &iv.cpus {
        writeln!(
            out,
            "{:<5} {:>8.2} {:>9.2}",
            c.cpu, c.irq_pct, c.softirq_pct
        )?;
    }
    if iv.dropped > 0 {
        writeln!(out, "{}", dropped_line(iv.dropped))?;
    }
    if let Some(l) = super::missed::line_of(&missed.groups, missed.all_cpus, missed.rows_filtered) {
        writeln!(out, "{l}")?;
    }
    for l in &iv.irqs {
        if let Some(h) = &l.hist {
            writeln!(out, "\n{} {} duration", l.label, l.key.name())?;
            histogram(h, out)?;
        }
    }
    for s in &iv.softirqs {
        if let Some(h) = &s.hist {
            writeln!(out, "\n{} duration", s.name)?;
            histogram(h, out)?;
        }
        if let Some(h) = s.latency_hist.as_ref().filter(|h| h.iter().any(|&n| n > 0)) {
            writeln!(out, "\n{} raise -> entry latency", s.name)?;
            histogram(h, out)?;
        }
    }
    writeln!(out)
}

/// What a text output says when hard IRQ runs were not counted.
pub fn dropped_line(n: u64) -> String {
    format!(
        "DROPPED {n} hard IRQ run(s) not counted: the programs' (IRQ, action) map is full; \
         the IRQ rows and IRQ% above miss them"
    )
}

/// A bcc-style log2 histogram: `lo -> hi : count |****|`.
pub fn histogram(h: &[u64; HIST_SLOTS], out: &mut impl Write) -> io::Result<()> {
    let Some(first) = h.iter().position(|&n| n > 0) else {
        return writeln!(out, "  (empty)");
    };
    let last = h.iter().rposition(|&n| n > 0).unwrap_or(first);
    let max = h.iter().copied().max().unwrap_or(1).max(1);
    writeln!(out, "{:>24} : {:<8} distribution", "ns", "count")?;
    for (k, &n) in h.iter().enumerate().take(last + 1).skip(first) {
        let (lo, hi) = if k == 0 {
            (0, 0)
        } else {
            (1u64 << (k - 1), (1u64 << k) - 1)
        };
        let stars = usize::try_from(n * 40 / max).unwrap_or(40);
        writeln!(
            out,
            "{:>11} -> {:<10} : {:<8} |{:<40}|",
            lo,
            hi,
            n,
            "*".repeat(stars)
        )?;
    }
    Ok(())
}

/// One JSON object per interval, on one line; `interrupted` (the signal's
/// name) only on an interval a signal cut short.
pub fn json(iv: &Interval, n: u64, cut: Option<&str>, out: &mut impl Write) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        interval: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        interrupted: Option<&'a str>,
        #[serde(flatten)]
        iv: &'a Interval,
    }
    let line = Line {
        interval: n,
        interrupted: cut,
        iv,
    };
    serde_json::to_writer(&mut *out, &line)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::interval::{between, IntervalView};
    use crate::trace::sample::{Sample, SoftirqStats, Stats, TraceKey};

    fn interval() -> Interval {
        let mut s = Stats {
            count: 4,
            total_ns: 4000,
            ..Stats::default()
        };
        s.hist[10] = 4;
        let cur = Sample {
            at_ns: 1_000_000_000,
            irqs: vec![(
                TraceKey::Vector {
                    label: "RES".into(),
                    tracepoint: "reschedule".into(),
                },
                vec![s],
            )],
            softirqs: vec![(
                3,
                vec![SoftirqStats {
                    run: s,
                    latency: s,
                    ksoftirqd_ns: 1000,
                    ..SoftirqStats::default()
                }],
            )],
            drops: vec![],
            missed: Default::default(),
        };
        between(
            &Sample::default(),
            &cur,
            &IntervalView {
                hist: true,
                ..IntervalView::default()
            },
        )
    }

    /// `iv`'s missed runs for a report of every row on every CPU.
    fn every_row(iv: &Interval) -> MissedShown {
        MissedShown {
            groups: iv.missed.clone(),
            ..MissedShown::default()
        }
    }

    #[test]
    fn text_has_tables_cpu_time_and_histograms() {
        let mut out = Vec::new();
        text(&interval(), &MissedShown::default(), 1, None, &mut out).unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(t.contains("interval 1: 1.000 s"), "{t}");
        assert!(t.contains("RES    reschedule"), "{t}");
        assert!(t.contains("NET_RX"), "{t}");
        assert!(t.contains("25.0"), "ksoftirqd share: {t}");
        assert!(t.contains("512 -> 1023"), "{t}");
        assert!(t.contains("raise -> entry latency"), "{t}");
        assert!(
            t.contains("CPU       IRQ%  SOFTIRQ%\n0         0.00      0.00"),
            "{t}"
        );
        assert!(!t.contains("DROPPED"), "{t}");
    }

    #[test]
    fn dropped_runs_are_said_in_text_and_json() {
        let mut iv = interval();
        let mut out = Vec::new();
        json(&iv, 1, None, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["dropped"], 0, "always present");
        iv.dropped = 17;
        let mut out = Vec::new();
        json(&iv, 1, None, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["dropped"], 17);
        let mut out = Vec::new();
        text(&iv, &every_row(&iv), 1, None, &mut out).unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(t.contains("DROPPED 17 hard IRQ run(s) not counted"), "{t}");
    }

    #[test]
    fn missed_runs_are_said_in_text_and_json() {
        let mut iv = interval();
        let mut out = Vec::new();
        json(&iv, 1, None, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["missed"], serde_json::json!({}), "always present");
        let mut out = Vec::new();
        text(&iv, &every_row(&iv), 1, None, &mut out).unwrap();
        assert!(!String::from_utf8(out).unwrap().contains("MISSED"));
        iv.missed = [("RES".to_string(), 4), ("hardirq".to_string(), 2)].into();
        let mut out = Vec::new();
        json(&iv, 1, None, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["missed"], serde_json::json!({"RES": 4, "hardirq": 2}));
        let mut out = Vec::new();
        text(&iv, &every_row(&iv), 1, None, &mut out).unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(t.contains("MISSED program runs: RES 4, hardirq 2;"), "{t}");
        // a selection: only its groups, said to be counts of all CPUs
        let sel = IntervalView {
            filter: crate::filter::Filter::from_flags(Some("^NET_RX$"), Some("1")).unwrap(),
            ..IntervalView::default()
        };
        iv.missed.insert("softirq".into(), 1);
        let shown = sel.missed_shown(&iv.missed, &Sample::default());
        let mut out = Vec::new();
        text(&iv, &shown, 1, None, &mut out).unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(
            t.contains("MISSED program runs on all CPUs (not split per CPU): softirq 1;"),
            "{t}"
        );
        let mut out = Vec::new();
        json(&iv, 1, None, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v["missed"],
            serde_json::json!({"RES": 4, "hardirq": 2, "softirq": 1}),
            "JSON keeps every group"
        );
    }

    #[test]
    fn json_is_one_line_with_the_documented_fields() {
        let mut out = Vec::new();
        json(&interval(), 2, None, &mut out).unwrap();
        let line = String::from_utf8(out).unwrap();
        assert_eq!(line.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["interval"], 2);
        assert_eq!(v["end_mono_ns"], 1_000_000_000, "lines other tracers up");
        assert_eq!(v["irqs"][0]["kind"], "vector");
        assert_eq!(v["irqs"][0]["label"], "RES");
        // each key once: a vector row's label is the row's, not also its key's
        assert_eq!(line.matches("\"label\"").count(), 1, "{line}");
        assert_eq!(v["softirqs"][0]["name"], "NET_RX");
        assert_eq!(v["softirqs"][0]["latency_count"], 4);
        assert!(v["cpus"][0]["softirq_pct"].is_number());
        assert!(v.get("interrupted").is_none());
        let mut out = Vec::new();
        json(&interval(), 3, Some("SIGINT"), &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["interrupted"], "SIGINT");
        let mut out = Vec::new();
        text(
            &interval(),
            &MissedShown::default(),
            3,
            Some("SIGTERM"),
            &mut out,
        )
        .unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(
            t.starts_with("interval 3: 1.000 s (cut short by SIGTERM)\n"),
            "{t}"
        );
    }
}
