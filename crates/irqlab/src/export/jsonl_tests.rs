//! `jsonl` against the reference: the rates Report serialized by serde
//! (its rows through [`reference`](super::irq_row_json::reference)),
//! sorted and annotated as `top` does, minus the row fields top lines leave
//! out. Lines must be equal as JSON values (which tells `5` from `5.0`)
//! except for `self_cost` (measured while writing).

use super::irq_row_json::reference;
use super::*;
use crate::report::{CpuPctLine, SoftirqSection};
use crate::sampler::clock::rfc3339_utc;
use crate::sampler::SelfCost;
use crate::threads::ThreadKind;
use crate::trace::top::TopTrace;
use irqlab_core::{Softirqs, Stat};
use proptest::prelude::{any, prop_assert_eq, proptest, ProptestConfig};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Serialize)]
struct Reference<'a> {
    timestamp: String,
    mono_ns: u64,
    interval_s: f64,
    interrupts: Option<reference::Section<'a>>,
    softirqs: Option<&'a SoftirqSection>,
    cpu_pct: &'a [CpuPctLine],
    #[serde(skip_serializing_if = "Option::is_none")]
    aggregate_cpus: Option<&'a Vec<u32>>,
    threads: &'a [ThreadCpu],
    self_cost: SelfCost,
    strategy: Strategy,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace: Option<&'a TopTrace>,
}

fn affinity_of(irq: u32) -> Option<String> {
    (irq % 3 != 0).then(|| format!("{}", irq % 4))
}

/// Row fields of the Report that top lines do not repeat.
const LEFT_OUT: [&str; 6] = ["shape", "counts", "chip", "hwirq", "trigger", "flow"];

fn reference(
    old: &Snapshot,
    new: &Snapshot,
    f: &Filter,
    threads: &[ThreadCpu],
) -> serde_json::Value {
    reference_above(old, new, f, threads, None)
}

/// [`reference`] of the rows text shows under `--threshold min`
/// (`report::above_threshold`).
fn reference_above(
    old: &Snapshot,
    new: &Snapshot,
    f: &Filter,
    threads: &[ThreadCpu],
    min: Option<f64>,
) -> serde_json::Value {
    let mut r = report::rates(old, new, f, report::RateOpts::default());
    if let Some(sec) = r.interrupts.as_mut() {
        if let Some(min) = min {
            sec.rows.retain(|l| report::above_threshold(l, min));
        }
        for row in &mut sec.rows {
            row.affinity = row.irq.and_then(affinity_of);
        }
        let rate = |r: &report::IrqLine| r.total_rate.unwrap_or(0.0);
        sec.rows
            .sort_by(|a, b| rate(b).partial_cmp(&rate(a)).unwrap());
    }
    let line = Reference {
        timestamp: rfc3339_utc(new.wall_ns),
        mono_ns: new.mono_ns,
        interval_s: r.interval_s.unwrap(),
        interrupts: r.interrupts.as_ref().map(reference::Section::of),
        softirqs: r.softirqs.as_ref(),
        cpu_pct: r.stat.as_ref().map_or(&[], |s| s.cpu_pct.as_slice()),
        aggregate_cpus: r.stat.as_ref().and_then(|s| s.aggregate_cpus.as_ref()),
        threads,
        self_cost: SelfCost::default(),
        strategy: Strategy::ProcInterrupts,
        trace: None,
    };
    let mut v = serde_json::to_value(&line).unwrap();
    if let Some(rows) = v
        .pointer_mut("/interrupts/rows")
        .and_then(|r| r.as_array_mut())
    {
        for row in rows {
            let obj = row.as_object_mut().unwrap();
            LEFT_OUT
                .iter()
                .for_each(|k| assert!(obj.remove(*k).is_some(), "{k}"));
        }
    }
    v
}

fn value(line: &str) -> serde_json::Value {
    assert!(
        line.ends_with('\n') && line.matches('\n').count() == 1,
        "{line}"
    );
    serde_json::from_str(line).expect("valid JSON")
}

fn streamed(w: &mut JsonlWriter, old: &Snapshot, new: &Snapshot, f: &Filter) -> String {
    streamed_of(w, old, new, f, None)
}

/// [`streamed`] of two snapshots holding the samples numbered `samples`
/// ([`LineInput::samples`]).
fn streamed_of(
    w: &mut JsonlWriter,
    old: &Snapshot,
    new: &Snapshot,
    f: &Filter,
    samples: Option<(u64, u64)>,
) -> String {
    let threads = threads();
    let meter = CostMeter::start();
    let inp = LineInput {
        old,
        new,
        filter: f,
        threads: &threads,
        meter: &meter,
        strategy: Strategy::ProcInterrupts,
        trace: None,
        samples,
    };
    let mut asked = HashMap::new();
    let mut aff = |irq: u32| {
        *asked.entry(irq).or_insert(0) += 1;
        affinity_of(irq)
    };
    let mut out = Vec::new();
    w.write_line(&inp, &mut aff, &mut out);
    let s = String::from_utf8(out).unwrap();
    serde_json::from_str::<serde_json::Value>(&s).expect("valid JSON");
    without_cost(&s)
}

/// The line with `self_cost` zeroed (it is measured while writing).
fn without_cost(s: &str) -> String {
    let start = s.find("\"self_cost\":{").unwrap() + "\"self_cost\":".len();
    let end = start + s[start..].find('}').unwrap() + 1;
    let zero = serde_json::to_string(&SelfCost::default()).unwrap();
    format!("{}{zero}{}", &s[..start], &s[end..])
}

fn threads() -> Vec<ThreadCpu> {
    vec![ThreadCpu {
        pid: Some(14),
        name: "ksoftirqd/0".into(),
        kind: ThreadKind::Ksoftirqd { cpu: 0 },
        cpu_pct: 0.25,
        last_cpu: Some(0),
        cpu_ns: 0,
    }]
}

/// A `/proc/interrupts` text: CPUs `cpus`, rows from `rows` (irq or arch
/// label, counts, description).
fn text(cpus: &[u32], rows: &[(String, Vec<u64>, String)]) -> String {
    let mut s = String::from("    ");
    for c in cpus {
        s += &format!("       CPU{c}");
    }
    s.push('\n');
    for (label, counts, desc) in rows {
        s += &format!("{label:>4}:");
        for c in counts {
            s += &format!(" {c:>10}");
        }
        s += &format!("  {desc}\n");
    }
    s
}

fn snap(text: &str, mono_ns: u64) -> Snapshot {
    Snapshot {
        mono_ns,
        wall_ns: 1_764_400_000_000_000_000 + mono_ns,
        interrupts: Some(Interrupts::parse(text.as_bytes()).unwrap()),
        softirqs: Some(
            Softirqs::parse(
                format!(
                    "                    CPU0       CPU1\n          HI:          {}          0\n      NET_RX:        {}         7\n",
                    mono_ns % 7,
                    mono_ns % 1000
                )
                .as_bytes(),
            )
            .unwrap(),
        ),
        stat: Some(
            Stat::parse(
                format!(
                    "cpu  {0} 0 {0} 1000 0 0 {0} 0 0 0\ncpu0 {0} 0 {0} 500 0 0 {0} 0 0 0\ncpu1 0 0 0 500 0 0 0 0 0 0\nintr 5\nctxt 9\nbtime 1\n",
                    mono_ns % 97
                )
                .as_bytes(),
            )
            .unwrap(),
        ),
    }
}

/// Pseudo-random rows from `seed` (xorshift): numbered rows with chips and
/// actions, arch rows, counts near the 32-bit wrap.
fn rows(seed: u64, ncpu: usize, nrows: usize) -> Vec<(String, Vec<u64>, String)> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let arch = ["NMI", "LOC", "RES", "CAL"];
    (0..nrows)
        .map(|i| {
            let counts = (0..ncpu)
                .map(|_| match next() % 4 {
                    0 => 0,
                    1 => next() % 100,
                    2 => u64::from(u32::MAX) - next() % 50,
                    _ => next() % 1_000_000_000,
                })
                .collect();
            if i < arch.len() && i % 2 == 1 {
                let a = arch[i];
                (a.to_string(), counts, format!("{a} \"interrupts\""))
            } else {
                let desc = format!(
                    "PCI-MSI-{i:04x}  {}-edge      eth{i}-rx-{}",
                    i * 3,
                    next() % 3
                );
                ((20 + i).to_string(), counts, desc)
            }
        })
        .collect()
}

/// Counts after an interval: some cells move, some wrap, some stay.
fn later(rows: &[(String, Vec<u64>, String)], seed: u64) -> Vec<(String, Vec<u64>, String)> {
    rows.iter()
        .enumerate()
        .map(|(i, (l, c, d))| {
            let c = c
                .iter()
                .enumerate()
                .map(|(j, &v)| match (seed as usize + i * 5 + j) % 4 {
                    0 => v,
                    1 => (v + 7) % (1 << 32),
                    2 => (v + 123_456) % (1 << 32),
                    _ => v + (seed % 3),
                })
                .collect();
            (l.clone(), c, d.clone())
        })
        .collect()
}

fn check(old: &Snapshot, new: &Snapshot, f: &Filter) {
    let mut w = JsonlWriter::default();
    let want = reference(old, new, f, &threads());
    let first = streamed(&mut w, old, new, f);
    assert_eq!(value(&first), want);
    // again with a warm cache: same bytes
    assert_eq!(streamed(&mut w, old, new, f), first);
}

/// [`check`] under `--threshold min`: the rows text shows, no other.
fn check_above(old: &Snapshot, new: &Snapshot, f: &Filter, min: f64) {
    let mut w = JsonlWriter::with_threshold(Some(min));
    let want = reference_above(old, new, f, &threads(), Some(min));
    let first = streamed(&mut w, old, new, f);
    assert_eq!(value(&first), want);
    assert_eq!(streamed(&mut w, old, new, f), first);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn matches_serde_of_the_report(
        seed in any::<u64>(),
        ncpu in 1usize..6,
        nrows in 1usize..12,
        dt in 1u64..5_000_000_000,
    ) {
        let cpus: Vec<u32> = (0..ncpu as u32).collect();
        let a = rows(seed, ncpu, nrows);
        let b = later(&a, seed);
        let old = snap(&text(&cpus, &a), 1_000);
        let new = snap(&text(&cpus, &b), 1_000 + dt);
        check(&old, &new, &Filter::default());
        check(&old, &new, &Filter::from_flags(Some("eth[13]|LOC"), Some("0,2")).unwrap());
    }

    /// `--threshold` leaves out the rows text hides, by the same rule
    /// (idle rows at any threshold, gap rows never).
    #[test]
    fn a_threshold_keeps_the_rows_text_shows(
        seed in any::<u64>(),
        ncpu in 1usize..6,
        nrows in 1usize..12,
        dt in 1u64..5_000_000_000,
        min in 0.0f64..2000.0,
    ) {
        let cpus: Vec<u32> = (0..ncpu as u32).collect();
        let a = rows(seed, ncpu, nrows);
        let b = later(&a, seed);
        let old = snap(&text(&cpus, &a), 1_000);
        let new = snap(&text(&cpus, &b), 1_000 + dt);
        for min in [0.0, min] {
            check_above(&old, &new, &Filter::default(), min);
            check_above(&old, &new, &Filter::from_flags(None, Some("0,2")).unwrap(), min);
        }
    }

    #[test]
    fn rates_print_as_serde_does(v in 0.0f64..2e9, k in 0u64..10_000) {
        for v in [v, k as f64, k as f64 / 8.0, k as f64 + 0.0004999, k as f64 + 0.0005] {
            let mut mine = Vec::new();
            write_rate(&mut mine, v);
            let exact = (v as u64) as f64 == v;
            let want = if exact {
                (v as u64).to_string()
            } else {
                serde_json::to_string(&((v * 1000.0).round() / 1000.0)).unwrap()
            };
            prop_assert_eq!(String::from_utf8(mine).unwrap(), want, "{}", v);
        }
    }
}

#[test]
fn hotplug_new_rows_gone_rows_and_zero_interval() {
    let two = text(
        &[0, 1],
        &[
            (
                "24".into(),
                vec![1, 2],
                "IO-APIC   5-edge      ACPI:Ged".into(),
            ),
            ("25".into(), vec![0, 0], "IO-APIC   6-edge      gone".into()),
            (
                "LOC".into(),
                vec![100, 200],
                "Local timer interrupts".into(),
            ),
        ],
    );
    let one = text(
        &[0, 2],
        &[
            (
                "24".into(),
                vec![5, 1],
                "IO-APIC   5-edge      ACPI:Ged".into(),
            ),
            ("26".into(), vec![3, 4], "IO-APIC   7-edge      new".into()),
            ("LOC".into(), vec![150, 9], "Local timer interrupts".into()),
        ],
    );
    let (mut a, mut b) = (snap(&two, 1_000), snap(&one, 1_000_001_000));
    let soft = |t: &str| Some(Softirqs::parse(t.as_bytes()).unwrap());
    a.softirqs = soft("        CPU0 CPU1\n  HI: 5 6\n  TIMER: 1 2\n");
    b.softirqs = soft("        CPU0 CPU2\n  HI: 9 1\n  NET_RX: 3 4\n  TIMER: 2 2\n");
    check(&a, &b, &Filter::default());
    check(&a, &b, &Filter::from_flags(None, Some("1-2")).unwrap());
    check(&b, &a, &Filter::default());
    // zero interval: rates null, no total_rate
    check(&a, &snap(&two, 1_000), &Filter::default());
    let line = streamed(&mut JsonlWriter::default(), &a, &b, &Filter::default());
    assert!(line.contains("\"gone\":[\"25\"]"), "{line}");
    assert!(line.contains("\"cpu_online\""), "{line}");
    // a softirq vector gone over the interval is said as `show` says it
    let back = streamed(&mut JsonlWriter::default(), &b, &a, &Filter::default());
    let v: serde_json::Value = serde_json::from_str(&back).unwrap();
    assert_eq!(
        v["softirqs"]["gone"],
        serde_json::json!(["NET_RX"]),
        "{back}"
    );
    assert!(
        v["softirqs"].get("gone").is_some() && v["interrupts"]["gone"] == serde_json::json!(["26"])
    );
    assert!(!line.contains("\"gone\":[\"NET_RX\"]"), "{line}");
}

/// A row none of whose cells has a value over the interval (every cell a
/// reset here) has no total and no total rate: `null` in top's line and in
/// show's row, `-` in top's text, and it adds nothing to the SUM line; a row
/// with one cell left keeps the total of that cell.
#[test]
fn a_row_with_no_value_has_null_totals() {
    let rows = |loc: [u64; 2], res: [u64; 2]| {
        text(
            &[0, 1],
            &[
                ("LOC".into(), loc.to_vec(), "Local timer interrupts".into()),
                ("RES".into(), res.to_vec(), "Rescheduling interrupts".into()),
            ],
        )
    };
    let a = snap(&rows([1_000, 2_000], [10, 20]), 1_000);
    let b = snap(&rows([5, 7], [15, 3]), 1_000_001_000);
    let f = Filter::default();
    check(&a, &b, &f);
    let line = value(&streamed(&mut JsonlWriter::default(), &a, &b, &f));
    let row = |label: &str| {
        line["interrupts"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap()
            .clone()
    };
    let loc = row("LOC");
    assert!(
        loc["total"].is_null() && loc["total_rate"].is_null(),
        "{loc}"
    );
    assert_eq!(loc["gaps"], serde_json::json!(["reset", "reset"]));
    let res = row("RES");
    assert_eq!(
        (res["total"].clone(), res["total_rate"].clone()),
        (5.into(), 5.into())
    );
    let r = report::rates(&a, &b, &f, report::RateOpts::default());
    let mut out = Vec::new();
    for l in &r.interrupts.as_ref().unwrap().rows {
        super::irq_row_json::line(&mut out, l);
    }
    let shown = String::from_utf8(out).unwrap();
    assert!(shown.contains("\"total\":null"), "{shown}");
    assert!(shown.contains("\"total_rate\":null"), "{shown}");
}

/// A softirq vector whose count goes back on every CPU has no total and
/// no total rate: `null` in top's line (held to serde of the report) and
/// in show's JSON, `-` in show's table, whatever the interval; a vector
/// with one CPU left totals that CPU.
#[test]
fn a_softirq_row_with_no_value_has_null_totals() {
    let t = text(&[0, 1], &[("LOC".into(), vec![1, 2], "Local timer".into())]);
    let soft = |t: &str| Some(Softirqs::parse(t.as_bytes()).unwrap());
    let (mut a, mut b) = (snap(&t, 1_000), snap(&t, 1_000_001_000));
    a.softirqs = soft("        CPU0 CPU1\n  HI: 50 60\n  NET_RX: 10 20\n");
    b.softirqs = soft("        CPU0 CPU1\n  HI: 5 6\n  NET_RX: 15 3\n");
    let f = Filter::default();
    let mut same_time = b.clone();
    same_time.mono_ns = a.mono_ns;
    for b in [&b, &same_time] {
        check(&a, b, &f);
        check(&a, b, &Filter::from_flags(None, Some("1")).unwrap());
    }
    let row = |line: &serde_json::Value, name: &str| {
        line["softirqs"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()
            .clone()
    };
    let line = value(&streamed(&mut JsonlWriter::default(), &a, &b, &f));
    let hi = row(&line, "HI");
    assert!(hi["total"].is_null() && hi["total_rate"].is_null(), "{hi}");
    assert_eq!(hi["rates"], serde_json::json!([null, null]));
    let net = row(&line, "NET_RX");
    assert_eq!(
        (net["total"].clone(), net["total_rate"].clone()),
        (5.into(), 5.into())
    );
    let r = report::rates(&a, &b, &f, report::RateOpts::default());
    let mut shown = Vec::new();
    crate::export::report_json::write(&r, &mut shown, false).unwrap();
    let shown = value(&String::from_utf8(shown).unwrap());
    assert_eq!(row(&shown, "HI"), hi);
    let mut table = Vec::new();
    crate::export::table::write(&r, &mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    let hi = table
        .lines()
        .find(|l| l.trim_start().starts_with("HI:"))
        .unwrap();
    assert_eq!(
        hi.split_whitespace().collect::<Vec<_>>(),
        ["HI:", "-", "-", "-"],
        "{table}"
    );
    let legend = table.lines().skip_while(|l| !l.starts_with("Softirqs"));
    assert_eq!(
        legend.filter(|l| l.starts_with("- = no value")).count(),
        1,
        "{table}"
    );
}

#[test]
fn missing_sections_are_null_or_empty() {
    let t = text(
        &[0],
        &[("LOC".into(), vec![1], "Local timer interrupts".into())],
    );
    let mut a = snap(&t, 0);
    let mut b = snap(&t, 1_000_000_000);
    a.softirqs = None;
    b.stat = None;
    b.interrupts = None;
    let line = streamed(&mut JsonlWriter::default(), &a, &b, &Filter::default());
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert!(v["interrupts"].is_null() && v["softirqs"].is_null());
    assert_eq!(v["cpu_pct"], serde_json::json!([]));
    check(&a, &b, &Filter::default());
}

#[test]
fn metadata_is_rebuilt_only_when_a_row_changes() {
    let base = rows(7, 2, 5);
    let (a, b) = (
        snap(&text(&[0, 1], &base), 0),
        snap(&text(&[0, 1], &later(&base, 3)), 1_000_000_000),
    );
    let mut w = JsonlWriter::default();
    let calls = std::cell::Cell::new(0);
    let mut out = Vec::new();
    let threads = threads();
    let meter = CostMeter::start();
    let f = Filter::default();
    let inp = LineInput {
        old: &a,
        new: &b,
        filter: &f,
        threads: &threads,
        meter: &meter,
        strategy: Strategy::ProcInterrupts,
        trace: None,
        samples: None,
    };
    let mut aff = |irq: u32| {
        calls.set(calls.get() + 1);
        affinity_of(irq)
    };
    w.write_line(&inp, &mut aff, &mut out);
    w.write_line(&inp, &mut aff, &mut out);
    let numbered = base.iter().filter(|r| r.0.parse::<u32>().is_ok()).count();
    assert_eq!(
        calls.get(),
        numbered,
        "affinity asked once per numbered row"
    );
    w.invalidate();
    w.write_line(&inp, &mut aff, &mut out);
    assert_eq!(calls.get(), 2 * numbered);
}

#[test]
fn idle_rows_use_the_zero_run_for_any_width() {
    let mut w = JsonlWriter::default();
    for n in [1usize, 2, 7, 1152] {
        let cpus: Vec<u32> = (0..n as u32).collect();
        let r = vec![("30".to_string(), vec![5; n], "PCI-MSI 1-edge x".to_string())];
        let t = text(&cpus, &r);
        let (a, b) = (snap(&t, 0), snap(&t, 2_000_000_000));
        let line = streamed(&mut w, &a, &b, &Filter::default());
        let zeros = vec!["0"; n].join(",");
        assert!(line.contains(&format!("\"rates\":[{zeros}]")), "{n}");
        assert_eq!(
            value(&line),
            reference(&a, &b, &Filter::default(), &threads())
        );
    }
}

#[test]
fn repeated_and_colliding_counts_and_a_new_interval_each_line() {
    // deltas 5, 1029 and 2053 share a memo slot; 5 repeats
    let cpus = [0, 1, 2, 3, 4, 5];
    let before = vec![("30".to_string(), vec![0; 6], "PCI-MSI 1-edge x".to_string())];
    let after = vec![(
        "30".to_string(),
        vec![5, 1029, 5, 2053, 5, 1029],
        "PCI-MSI 1-edge x".to_string(),
    )];
    let a = snap(&text(&cpus, &before), 0);
    let mut w = JsonlWriter::default();
    for dt in [1_000_321_000, 999_000_000, 3_000_000_000] {
        let b = snap(&text(&cpus, &after), dt);
        let line = streamed(&mut w, &a, &b, &Filter::default());
        assert_eq!(
            value(&line),
            reference(&a, &b, &Filter::default(), &threads()),
            "{dt}"
        );
    }
}

#[test]
fn total_rate_is_rounded_like_rates() {
    // 10 and 7 interrupts over 0.3 s: 33.333… and 23.333… per second
    let one = |n: u64| {
        vec![(
            "24".to_string(),
            vec![n, 0],
            "PCI-MSI-0000  3-edge  eth0".to_string(),
        )]
    };
    let (a, b) = (
        snap(&text(&[0, 1], &one(100)), 0),
        snap(&text(&[0, 1], &one(110)), 300_000_000),
    );
    let line = streamed(&mut JsonlWriter::default(), &a, &b, &Filter::default());
    assert!(line.contains("\"rates\":[33.333,0]"), "{line}");
    assert!(line.contains("\"total_rate\":33.333,"), "{line}");
    // softirq totals too (NET_RX: 300 - 0 on CPU0 over 0.3 s = 1000 per s)
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    for r in v["softirqs"]["rows"].as_array().unwrap() {
        let t = r["total_rate"].to_string();
        assert!(t.split('.').nth(1).is_none_or(|d| d.len() <= 3), "{t}");
    }
    check(&a, &b, &Filter::default());
    // show's JSON: the same rounding
    let r = report::rates(
        &a,
        &b,
        &Filter::default(),
        report::RateOpts {
            deltas: true,
            ..report::RateOpts::default()
        },
    );
    let mut s = Vec::new();
    crate::export::report_json::write(&r, &mut s, false).unwrap();
    let s = String::from_utf8(s).unwrap();
    assert!(s.contains("\"total_rate\":33.333,"), "{s}");
}

#[test]
fn an_empty_cpu_selection_has_no_aggregate_line() {
    let t = text(&[0, 1], &rows(3, 2, 4));
    let (a, b) = (snap(&t, 0), snap(&t, 1_000_000_000));
    let f = Filter::from_flags(None, Some("99")).unwrap();
    let line = streamed(&mut JsonlWriter::default(), &a, &b, &f);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["cpu_pct"], serde_json::json!([]), "{line}");
    assert_eq!(v["aggregate_cpus"], serde_json::json!([]), "{line}");
    check(&a, &b, &f);
    let f = Filter::from_flags(None, Some("1")).unwrap();
    let line = streamed(&mut JsonlWriter::default(), &a, &b, &f);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["aggregate_cpus"], serde_json::json!([1]), "{line}");
    assert!(v["cpu_pct"][0]["cpu"].is_null(), "{line}");
    check(&a, &b, &f);
}

/// With `top --trace` the traced figures are the line's last field,
/// `trace`, written by the line writer (not spliced into a finished
/// line): the untraced line's fields, then the `TopTrace` as serde writes
/// it, and the line is still one valid JSON object.
#[test]
fn the_trace_object_is_the_last_field_of_the_line() {
    let base = rows(7, 2, 5);
    let (a, b) = (
        snap(&text(&[0, 1], &base), 0),
        snap(&text(&[0, 1], &later(&base, 3)), 1_000_000_000),
    );
    let f = Filter::default();
    let threads = threads();
    let meter = CostMeter::start();
    let tt = crate::trace::top::fake::top_trace();
    let mut inp = LineInput {
        old: &a,
        new: &b,
        filter: &f,
        threads: &threads,
        meter: &meter,
        strategy: Strategy::ProcInterrupts,
        trace: None,
        samples: None,
    };
    let mut w = JsonlWriter::default();
    let mut plain = Vec::new();
    w.write_line(&inp, &mut affinity_of, &mut plain);
    inp.trace = Some(&tt);
    let mut traced = Vec::new();
    w.write_line(&inp, &mut affinity_of, &mut traced);
    let (plain, traced) = (
        without_cost(std::str::from_utf8(&plain).unwrap()),
        without_cost(std::str::from_utf8(&traced).unwrap()),
    );
    let head = plain.strip_suffix("}\n").unwrap();
    let want = format!(
        "{head},\"trace\":{}}}\n",
        serde_json::to_string(&tt).unwrap()
    );
    assert_eq!(traced, want);
    let v = value(&traced);
    assert_eq!(v["strategy"], "proc_interrupts");
    let t = &v["trace"];
    assert_eq!(t["cpus"][0]["cpu"], 0);
    assert!(t["cpus"][0]["irq_pct"].is_number());
    assert_eq!(t["softirqs"][0]["name"], "NET_RX");
    assert!(t["softirqs"][0]["latency_p99_ns"].is_number());
    assert_eq!(t["irqs"][0]["label"], "24");
    assert!(t["irqs"][0]["us_per_s"].is_number());
}

/// The hand-written `cpu_pct`, `threads` and `self_cost` of a line are
/// serde's bytes (not only the same JSON values): gap lines, every
/// thread kind, unknown PID and last CPU, floats of every form.
#[test]
fn hand_written_fields_are_serdes_bytes() {
    use irqlab_core::delta::CpuPct;
    let pct = CpuPct {
        user_pct: 75.0,
        nice_pct: 0.0,
        system_pct: 12.345678901234,
        idle_pct: 1e-7,
        iowait_pct: 3.0e21,
        irq_pct: f64::NAN,
        softirq_pct: 0.1,
        steal_pct: 100.0,
    };
    let lines = vec![
        CpuPctLine {
            cpu: None,
            pct: Some(pct),
        },
        CpuPctLine {
            cpu: Some(0),
            pct: None,
        },
        CpuPctLine {
            cpu: Some(4_000_000_000),
            pct: Some(pct),
        },
    ];
    let mut out = Vec::new();
    cpu_pct(&mut out, &lines);
    assert_eq!(out, serde_json::to_vec(&lines).unwrap());
    out.clear();
    cpu_pct(&mut out, &[]);
    assert_eq!(out, b"[]");
    let th = |pid, name: &str, kind, cpu_pct, last_cpu| ThreadCpu {
        pid,
        name: name.into(),
        kind,
        cpu_pct,
        last_cpu,
        cpu_ns: 7,
    };
    let threads = [
        th(
            Some(14),
            "ksoftirqd/0",
            ThreadKind::Ksoftirqd { cpu: 0 },
            0.015273481533486235,
            Some(0),
        ),
        th(
            None,
            "irq/24-\"q\"\\ é\u{1}",
            ThreadKind::IrqThread { irq: 24 },
            0.0,
            None,
        ),
        th(
            Some(u32::MAX),
            "x",
            ThreadKind::IrqThread { irq: 7 },
            1e300,
            Some(1151),
        ),
    ];
    for n in 0..=threads.len() {
        out.clear();
        super::threads(&mut out, &threads[..n]);
        assert_eq!(out, serde_json::to_vec(&threads[..n]).unwrap());
    }
    let c = SelfCost {
        user_ns: 363_000,
        system_ns: 0,
        cpu_ns: u64::MAX,
        wall_ns: 9,
    };
    out.clear();
    self_cost(&mut out, &c);
    assert_eq!(out, serde_json::to_vec(&c).unwrap());
    for s in [Strategy::ProcInterrupts, Strategy::PerCpuCount] {
        assert_eq!(strategy_json(s), serde_json::to_vec(&s).unwrap());
    }
}

/// The row order of a line (few busy rows sorted by insertion, many by
/// the library's sort, idle rows after them) is exactly the stable sort
/// by rate, highest first, that `top` has always written: ties, zeros
/// and both paths.
#[test]
fn row_order_is_the_stable_sort_by_rate_highest_first() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut order = Vec::new();
    for len in [0usize, 1, 2, 5, 31, 32, 33, 40, 200, 1056] {
        for busy_in in [1u64, 2, 8, 1000] {
            let spans: Vec<Span> = (0..len)
                .map(|i| {
                    let r = next();
                    let rate = if r % busy_in == 0 {
                        (r >> 40) as f64 % 7.0
                    } else {
                        0.0
                    };
                    Span {
                        start: i,
                        end: i + 1,
                        rate,
                    }
                })
                .collect();
            let mut want: Vec<usize> = (0..len).collect();
            want.sort_by(|&a, &b| spans[b].rate.partial_cmp(&spans[a].rate).unwrap());
            order_by_rate(&spans, &mut order);
            assert_eq!(order, want, "{len} rows, 1 in {busy_in} busy");
        }
    }
}

/// Idle rows go straight into the line and busy ones are moved in front
/// of them at the end: the row list equals the reference's (order,
/// commas) when no row, every row or some rows are busy, and when the
/// filter keeps none.
#[test]
fn rows_written_in_place_and_moved_equal_the_reference_in_every_mix() {
    let cpus = [0, 1, 2];
    let base = rows(11, cpus.len(), 9);
    let all_busy: Vec<_> = base
        .iter()
        .map(|(l, c, d)| (l.clone(), c.iter().map(|v| v + 1).collect(), d.clone()))
        .collect();
    let idle = text(&cpus, &base);
    let some = text(&cpus, &later(&base, 5));
    let every = text(&cpus, &all_busy);
    let none = text(&cpus, &[]);
    let nothing = Filter::from_flags(Some("^no such row$"), None).unwrap();
    for (old, new) in [
        (&idle, &idle),
        (&idle, &some),
        (&idle, &every),
        (&none, &none),
    ] {
        let (a, b) = (snap(old, 1_000_000_000), snap(new, 2_000_000_000));
        check(&a, &b, &Filter::default());
        check(&a, &b, &nothing);
    }
}

#[test]
fn a_warm_writer_writes_a_fresh_writers_bytes_as_rows_go_idle_and_busy() {
    // the cached idle line of a row replaces its head and tail in place:
    // rows going idle, busy and idle again, a zero interval, a change of
    // width (CPUs) and of row identity, each line as a new writer's
    let base = rows(11, 2, 6);
    let moved = later(&base, 5);
    let wide: Vec<_> = base
        .iter()
        .map(|(l, c, d)| (l.clone(), [c.clone(), vec![0]].concat(), d.clone()))
        .collect();
    let mut renamed = base.clone();
    renamed[0].2 = "IO-APIC 9-fasteoi other".to_string();
    let seq = [
        text(&[0, 1], &base),
        text(&[0, 1], &base),
        text(&[0, 1], &moved),
        text(&[0, 1], &moved),
        text(&[0, 1], &moved),
        text(&[0, 1, 2], &wide),
        text(&[0, 1, 2], &wide),
        text(&[0, 1], &renamed),
        text(&[0, 1], &renamed),
    ];
    let mono = [0, 1, 2, 2, 3, 4, 5, 6, 7].map(|s: u64| s * 1_000_000_000);
    let snaps: Vec<Snapshot> = seq.iter().zip(mono).map(|(t, m)| snap(t, m)).collect();
    let f = Filter::default();
    let mut warm = JsonlWriter::default();
    for pair in snaps.windows(2) {
        let got = streamed(&mut warm, &pair[0], &pair[1], &f);
        let fresh = streamed(&mut JsonlWriter::default(), &pair[0], &pair[1], &f);
        assert_eq!(got, fresh);
        assert_eq!(value(&got), reference(&pair[0], &pair[1], &f, &threads()));
    }
}

/// The idle rows of a line stay in the writer's buffer while they are
/// the last line's: over a run where rows go busy and idle, the busy part
/// in front of them grows and shrinks, rows appear and go, a filter
/// drops some and an interval is zero, every line is a fresh writer's.
#[test]
fn idle_rows_kept_in_place_equal_a_fresh_writers_over_a_random_run() {
    let cpus = [0, 1];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut cur = rows(3, cpus.len(), 10);
    let mut snaps = vec![snap(&text(&cpus, &cur), 1_000_000_000)];
    let mut mono = 1_000_000_000;
    for step in 0..60u64 {
        for (_, counts, _) in cur.iter_mut() {
            // most rows idle; a few busy, by a few or many (the busy part's
            // length moves the idle rows both ways)
            match next() % 8 {
                0 => counts[0] += 1,
                1 => counts[1] += next() % 1_000_000,
                _ => {}
            }
        }
        match step % 13 {
            5 => {
                let i = (next() % cur.len() as u64) as usize;
                cur.remove(i);
            }
            9 => cur.push((
                format!("{}", 100 + step),
                vec![0, 0],
                format!("PCI-MSI 9{step}-edge new{step}"),
            )),
            _ => {}
        }
        if step % 11 != 7 {
            mono += 1_000_000_000;
        }
        snaps.push(snap(&text(&cpus, &cur), mono));
    }
    let some = Filter::from_flags(Some("eth[0-5]|LOC|new"), None).unwrap();
    for f in [Filter::default(), some] {
        let mut warm = JsonlWriter::default();
        for pair in snaps.windows(2) {
            let got = streamed(&mut warm, &pair[0], &pair[1], &f);
            let fresh = streamed(&mut JsonlWriter::default(), &pair[0], &pair[1], &f);
            assert_eq!(got, fresh);
        }
    }
}

/// Snapshots of a scripted run, each made from the rows of the last one
/// a second later (unless said otherwise).
struct Script {
    cpus: Vec<u32>,
    rows: Vec<(String, Vec<u64>, String)>,
    mono: u64,
    snaps: Vec<Snapshot>,
}

/// Row `i` of a script: numbered, counts `100 i` on every CPU.
fn script_row(i: usize, ncpu: usize) -> (String, Vec<u64>, String) {
    (
        (30 + i).to_string(),
        vec![100 * i as u64; ncpu],
        format!("PCI-MSI {i}-edge q{i}"),
    )
}

impl Script {
    fn new(ncpu: usize, nrows: usize) -> Script {
        let mut s = Script {
            cpus: (0..ncpu as u32).collect(),
            rows: (0..nrows).map(|i| script_row(i, ncpu)).collect(),
            mono: 0,
            snaps: Vec::new(),
        };
        s.busy(&[]);
        s
    }

    /// The next snapshot, the rows at `busy` (positions) counting.
    fn busy(&mut self, busy: &[usize]) -> &mut Self {
        for &i in busy {
            for (j, c) in self.rows[i].1.iter_mut().enumerate() {
                *c += (i + j + 1) as u64 * 1000 + 7;
            }
        }
        self.mono += 1_000_000_000;
        self.snaps
            .push(snap(&text(&self.cpus, &self.rows), self.mono));
        self
    }

    /// The next snapshot without an interrupt section.
    fn no_interrupts(&mut self) -> &mut Self {
        self.busy(&[]);
        if let Some(s) = self.snaps.last_mut() {
            s.interrupts = None;
        }
        self
    }

    /// The next snapshot at the same time as the last (a zero interval).
    fn again(&mut self) -> &mut Self {
        self.snaps
            .push(snap(&text(&self.cpus, &self.rows), self.mono));
        self
    }

    /// Row `i`'s label written with a leading zero, or without it again:
    /// the same IRQ number, another label.
    fn relabel(&mut self, i: usize) -> &mut Self {
        if let Some(r) = self.rows.get_mut(i) {
            r.0 = match r.0.strip_prefix('0') {
                Some(l) => l.to_string(),
                None => format!("0{}", r.0),
            };
        }
        self.busy(&[])
    }

    /// Row `i`'s description with the other trigger (`edge` or `level`):
    /// the same identity (chip, hwirq, actions), another description;
    /// with `other_actions`, its actions renamed too: another identity.
    fn redescribe(&mut self, i: usize, other_actions: bool) -> &mut Self {
        if let Some(r) = self.rows.get_mut(i) {
            r.2 = if r.2.contains("-edge") {
                r.2.replace("-edge", "-level")
            } else {
                r.2.replace("-level", "-edge")
            };
            if other_actions {
                r.2.push('x');
            }
        }
        self.busy(&[])
    }

    /// One more CPU, counting nothing.
    fn widen(&mut self) -> &mut Self {
        self.cpus.push(self.cpus.len() as u32);
        self.rows.iter_mut().for_each(|r| r.1.push(0));
        self
    }

    /// Every line of the run by one reused writer, each a fresh writer's
    /// and the reference's. The reused writer is told the snapshots'
    /// numbers (snapshot `k` holds sample `k + 1`, as a sampler numbers
    /// them): each line's `old` is the last line's `new`.
    fn check(&self, f: &Filter) {
        let mut warm = JsonlWriter::default();
        for (k, pair) in self.snaps.windows(2).enumerate() {
            let no = k as u64 + 1;
            let got = streamed_of(&mut warm, &pair[0], &pair[1], f, Some((no, no + 1)));
            let fresh = streamed(&mut JsonlWriter::default(), &pair[0], &pair[1], f);
            assert_eq!(got, fresh, "line {k}");
            assert_eq!(
                value(&got),
                reference(&pair[0], &pair[1], f, &threads()),
                "line {k}"
            );
        }
    }
}

/// The start of the line (up to the idle rows) is written into the slack
/// in front of the idle rows, which stay where they are: a reused
/// writer's lines are a fresh writer's while the start grows past the
/// slack and shrinks, the idle rows change (a busy row going idle and
/// back, rows added, removed and reordered, none idle), the interrupt
/// section is absent, and an interval is zero.
#[test]
fn a_reused_writer_equals_a_fresh_one_as_the_start_and_the_idle_rows_change() {
    let mut s = Script::new(4, 10);
    s.busy(&[]).busy(&[]);
    // a row going busy and idle: the start grows and shrinks, the row
    // leaves the idle rows and comes back
    s.busy(&[2]).busy(&[]).busy(&[2]).busy(&[2]).busy(&[]);
    // the start grows past the slack (8 busy rows), then shrinks
    s.busy(&[0, 1, 2, 3, 4, 5, 6, 7]).busy(&[1, 3]).busy(&[]);
    // every row busy (no idle rows), then a line after it
    s.busy(&(0..10).collect::<Vec<_>>()).busy(&[]).busy(&[]);
    s.busy(&(0..10).collect::<Vec<_>>()).busy(&[9]).busy(&[]);
    // rows added at the end and in the middle
    s.rows.push(script_row(20, 4));
    s.busy(&[]).busy(&[]);
    s.rows.insert(3, script_row(21, 4));
    s.busy(&[]).busy(&[4]);
    // rows removed (the first, a middle one, the last)
    s.rows.remove(0);
    s.busy(&[]);
    s.rows.remove(5);
    s.rows.pop();
    s.busy(&[]).busy(&[]);
    // rows reordered
    s.rows.swap(1, 6);
    s.busy(&[]).busy(&[]);
    s.rows.reverse();
    s.busy(&[0]).busy(&[]);
    // no interrupt section, once and twice, between lines with one
    s.no_interrupts().busy(&[]).busy(&[]);
    s.no_interrupts().no_interrupts().busy(&[3]).busy(&[]);
    // a zero interval (rows written, not cached), between idle lines
    s.busy(&[]).again().busy(&[]).busy(&[]);
    // more CPUs: a longer section head and longer idle rows
    s.widen().busy(&[]).busy(&[]).busy(&[1]);
    s.check(&Filter::default());
    s.check(&Filter::from_flags(Some("q[13579]|q2[01]"), None).unwrap());
    s.check(&Filter::from_flags(None, Some("0,2")).unwrap());
}

/// Where the line starts in the writer's buffer (it is the buffer's
/// end), and the offset in the line of the row labelled `label`.
fn layout(w: &JsonlWriter, line: &[u8], label: u32) -> (usize, usize) {
    let start = w.line.len() - line.len();
    let s = std::str::from_utf8(line).unwrap();
    let key = format!("\"label\":\"{label}\"");
    // the row's object opens just before its first key
    (start, s.find(&key).unwrap() - 1)
}

/// In the steady state (the idle rows of the last line, unchanged) no
/// idle row is written or moved: the start of the line is written right
/// in front of them. The idle rows move only when the start outgrows the
/// slack, to leave twice its length; nothing in the slack is read.
#[test]
fn steady_idle_rows_stay_in_place_and_move_only_when_the_start_outgrows_the_slack() {
    let mut s = Script::new(4, 10);
    s.busy(&[]).busy(&[]).busy(&[]).busy(&[0]).busy(&[0]);
    s.busy(&[0, 1, 2, 3, 4, 5, 6, 7])
        .busy(&[0, 1, 2, 3, 4, 5, 6, 7]);
    let f = Filter::default();
    let mut w = JsonlWriter::default();
    let threads = threads();
    let meter = CostMeter::start();
    let mut ats = Vec::new();
    for (k, pair) in s.snaps.windows(2).enumerate() {
        // whatever is in front of the idle rows is not read
        let n = w.run.at.min(w.line.len());
        w.line[..n].fill(b'X');
        let at = w.run.at;
        let inp = LineInput {
            old: &pair[0],
            new: &pair[1],
            filter: &f,
            threads: &threads,
            meter: &meter,
            strategy: Strategy::ProcInterrupts,
            trace: None,
            samples: None,
        };
        let line = w.line(&inp, &mut affinity_of).to_vec();
        let got = without_cost(std::str::from_utf8(&line).unwrap());
        let fresh = streamed(&mut JsonlWriter::default(), &pair[0], &pair[1], &f);
        assert_eq!(got, fresh, "line {k}");
        // the first idle row: row 0 is busy in lines 3 and 4, rows 0-7
        // in lines 5 and 6
        let first = [30, 30, 30, 31, 31, 38, 38][k];
        let (start, idle) = layout(&w, &line, first);
        assert_eq!(start + idle, w.run.at, "line {k}: the idle rows at `at`");
        match k {
            // the same idle rows as the last line: kept, not moved
            1 | 2 | 4 | 6 => {
                assert!(w.run.same, "line {k}");
                assert_eq!(w.run.at, at, "line {k}");
            }
            // the start outgrew the slack: moved once, with headroom
            5 => assert!(w.run.at > at && w.run.at == 2 * idle, "line {k}"),
            _ => assert_eq!(w.run.at, at, "line {k}"),
        }
        ats.push(w.run.at);
    }
    assert_eq!(ats[0], MIN_SLACK, "a small start fits the first slack");
}

/// A row's label or description text changing at the same position (the
/// same IRQ number written `031`, then `31` again; another trigger, the
/// same identity; other actions, another identity), alone, one after the
/// other and over idle and busy lines: a reused writer that knows each
/// line's `old` is the last line's `new` writes a fresh writer's lines.
#[test]
fn a_reused_writer_sees_every_label_and_description_change_at_a_position() {
    let mut s = Script::new(3, 6);
    s.busy(&[]).busy(&[]);
    s.relabel(1).busy(&[]).busy(&[1]).relabel(1).busy(&[]);
    s.relabel(2).relabel(2).relabel(2).busy(&[2]);
    s.redescribe(3, false)
        .busy(&[])
        .redescribe(3, false)
        .busy(&[3]);
    s.redescribe(4, true)
        .busy(&[])
        .busy(&[4])
        .redescribe(4, true);
    s.relabel(0)
        .redescribe(0, false)
        .redescribe(5, true)
        .relabel(5);
    s.busy(&[0, 5]).busy(&[]);
    s.check(&Filter::default());
    s.check(&Filter::from_flags(Some("q[13]|q4x|^0"), None).unwrap());
}

/// A line whose `old` is not the last line's `new` (a frame not written,
/// another sampler's snapshot) checks every row's key: a row whose
/// label or description changed in between is written as it is now.
#[test]
fn a_line_not_after_the_last_one_checks_every_row() {
    let mut s = Script::new(3, 4);
    s.busy(&[]);
    s.relabel(1).redescribe(2, false).redescribe(3, true);
    s.busy(&[]).busy(&[]);
    let f = Filter::default();
    let mut w = JsonlWriter::default();
    let n = s.snaps.len();
    // lines 0 -> 1, then 2 -> 3 (1 -> 2 not written), then n-2 -> n-1
    for (a, b) in [(0, 1), (2, 3), (n - 2, n - 1)] {
        let no = (a as u64 + 1, b as u64 + 1);
        let (old, new) = (&s.snaps[a], &s.snaps[b]);
        let got = streamed_of(&mut w, old, new, &f, Some(no));
        let fresh = streamed(&mut JsonlWriter::default(), old, new, &f);
        assert_eq!(got, fresh, "{a} -> {b}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random runs of steps (some, many or every row busy, a row added,
    /// removed or two swapped, no interrupt section, a zero interval, one
    /// more CPU, the same idle rows again): a reused writer's lines are a
    /// fresh writer's.
    #[test]
    fn a_reused_writer_equals_a_fresh_one_over_random_steps(
        steps in proptest::collection::vec((0u8..13, any::<u64>()), 1..24),
        nrows in 0usize..12,
    ) {
        let mut s = Script::new(3, nrows);
        let mut added = 40;
        for (op, x) in steps {
            let n = s.rows.len();
            let mask = match op {
                0 => x & (x >> 13) & (x >> 29),
                1 => x,
                _ => u64::MAX,
            };
            match op {
                0..=2 => {
                    let busy: Vec<usize> = (0..n).filter(|i| mask >> (i % 64) & 1 == 1).collect();
                    s.busy(&busy);
                }
                3 => {
                    s.rows.insert(x as usize % (n + 1), script_row(added, s.cpus.len()));
                    added += 1;
                    s.busy(&[]);
                }
                4 => {
                    if n > 0 {
                        s.rows.remove(x as usize % n);
                    }
                    s.busy(&[]);
                }
                5 => {
                    if n > 1 {
                        s.rows.swap(x as usize % n, (x >> 32) as usize % n);
                    }
                    s.busy(&[]);
                }
                6 => {
                    s.no_interrupts();
                }
                7 => {
                    s.again();
                }
                8 => {
                    s.widen().busy(&[]);
                }
                10 => {
                    s.relabel(x as usize % n.max(1));
                }
                11 | 12 => {
                    s.redescribe(x as usize % n.max(1), op == 12);
                }
                _ => {
                    s.busy(&[]);
                }
            }
        }
        s.check(&Filter::default());
        s.check(&Filter::from_flags(Some("q[13579]|q4"), Some("0,2")).unwrap());
    }
}
