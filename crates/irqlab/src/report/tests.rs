//! Tests of the report builders and the streamed rates document.

#![allow(clippy::unwrap_used)]
use super::*;
use crate::filter::Filter;
use irqlab_core::stat::Stat;
use irqlab_core::{Interrupts, Shape, Snapshot, Softirqs};

/// The rates report `show` builds (with per-CPU deltas).
fn with_deltas(old: &Snapshot, new: &Snapshot, f: &Filter) -> Report {
    let opts = RateOpts {
        deltas: true,
        ..RateOpts::default()
    };
    rates(old, new, f, opts)
}

fn snap(ms: u64, text: &str) -> Snapshot {
    Snapshot {
        mono_ns: ms * 1_000_000,
        interrupts: Some(Interrupts::parse(text.as_bytes()).unwrap()),
        softirqs: Some(
            Softirqs::parse(b"       CPU0  CPU1\n  TIMER:  1  2\n NET_RX:  3  4\n").unwrap(),
        ),
        ..Snapshot::default()
    }
}

/// A CPU in both samples that accounted no tick has a line of zeros (so
/// has the aggregate when no CPU did), with and without `--cpus`; a CPU
/// that came online in between stays a gap.
#[test]
fn a_cpu_without_ticks_has_zeros_not_a_gap() {
    use irqlab_core::delta::CpuPct;
    let parse = |t: &str| Stat::parse(t.as_bytes()).unwrap();
    let old = parse("cpu  20 0 20 200 0 0 0 0 0 0\ncpu0 10 0 10 100 0 0 0 0 0 0\ncpu1 10 0 10 100 0 0 0 0 0 0\n");
    let zero = Some(CpuPct::default());
    for cpus in [None, Some([0, 1].into())] {
        let f = Filter {
            cpus,
            ..Filter::default()
        };
        let st = stat_section(&old, &old, &f, Some(0.005));
        let pct: Vec<_> = st.cpu_pct.iter().map(|l| (l.cpu, l.pct)).collect();
        assert_eq!(pct, [(None, zero), (Some(0), zero), (Some(1), zero)]);
    }
    let new = parse("cpu  20 0 20 200 0 0 0 0 0 0\ncpu0 10 0 10 100 0 0 0 0 0 0\ncpu1 10 0 10 100 0 0 0 0 0 0\ncpu2 1 0 1 1 0 0 0 0 0 0\n");
    let st = stat_section(&old, &new, &Filter::default(), Some(0.005));
    let pct: Vec<_> = st.cpu_pct.iter().map(|l| (l.cpu, l.pct)).collect();
    assert_eq!(
        pct,
        [
            (None, zero),
            (Some(0), zero),
            (Some(1), zero),
            (Some(2), None)
        ]
    );
}

/// A kept CPU that went offline during the interval (in the old sample,
/// not the new) keeps a gap line in its place, with and without `--cpus`.
#[test]
fn a_cpu_that_went_offline_keeps_a_gap_line() {
    let parse = |t: &str| Stat::parse(t.as_bytes()).unwrap();
    let old = parse("cpu  3 0 3 3 0 0 0 0 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\ncpu2 1 0 1 1 0 0 0 0 0 0\n");
    let new =
        parse("cpu  4 0 4 4 0 0 0 0 0 0\ncpu0 2 0 1 1 0 0 0 0 0 0\ncpu2 2 0 1 1 0 0 0 0 0 0\n");
    for (cpus, want) in [
        (None, vec![None, Some(0), Some(1), Some(2)]),
        (Some([1, 2].into()), vec![None, Some(1), Some(2)]),
    ] {
        let f = Filter {
            cpus,
            ..Filter::default()
        };
        let st = stat_section(&old, &new, &f, Some(1.0));
        let ids: Vec<_> = st.cpu_pct.iter().map(|l| l.cpu).collect();
        assert_eq!(ids, want);
        let gone = st.cpu_pct.iter().find(|l| l.cpu == Some(1)).unwrap();
        assert_eq!(gone.pct, None, "a gap");
        assert!(st
            .cpu_pct
            .iter()
            .filter(|l| l.cpu != Some(1))
            .all(|l| l.pct.is_some()));
    }
}

#[test]
fn a_cpu_time_jump_no_cpu_could_take_is_a_gap_not_100_pct_user() {
    let stat = |user1: u64| {
        let text = format!(
            "cpu  20 0 20 200 0 0 0 0 0 0\ncpu0 10 0 10 100 0 0 0 0 0 0\ncpu1 {user1} 0 10 100 0 0 0 0 0 0\n"
        );
        Stat::parse(text.as_bytes()).unwrap()
    };
    let (old, new) = (stat(10), stat(10 + (1 << 50)));
    let all = Filter::default();
    let st = stat_section(&old, &new, &all, Some(1.0));
    let line = |cpu| st.cpu_pct.iter().find(|l| l.cpu == cpu).unwrap().pct;
    assert_eq!(line(None), None, "the aggregate sums the impossible line");
    assert_eq!(line(Some(1)), None);
    assert_eq!(
        line(Some(0)),
        Some(irqlab_core::delta::CpuPct::default()),
        "no tick elapsed on CPU 0: zeros, not a gap"
    );
    let sel = Filter {
        cpus: Some([1].into()),
        ..Filter::default()
    };
    let st = stat_section(&old, &new, &sel, Some(1.0));
    assert_eq!(st.cpu_pct[0].pct, None);
    // the same step over a plausible interval is a share
    let (old, new) = (stat(10), stat(60));
    let st = stat_section(&old, &new, &all, Some(1.0));
    assert!(st
        .cpu_pct
        .iter()
        .find(|l| l.cpu == Some(1))
        .unwrap()
        .pct
        .is_some());
}

fn json(r: &Report, pretty: bool) -> String {
    let mut out = Vec::new();
    crate::export::report_json::write(r, &mut out, pretty).unwrap();
    String::from_utf8(out).unwrap()
}

/// The reference: the report rendered by serde_json.
fn serde_json_of(r: &Report, pretty: bool) -> String {
    let doc = crate::export::irq_row_json::reference::Doc::of(r);
    let s = if pretty {
        serde_json::to_string_pretty(&doc)
    } else {
        serde_json::to_string(&doc)
    };
    s.unwrap() + "\n"
}

/// A 20-CPU `/proc/interrupts`: six IO-APIC rows whose counts scale
/// with `k`, a LOC row of 5s, a row of zeros and ERR.
fn wide_text(k: u64) -> String {
    let mut t: String = (0..20).map(|c| format!(" CPU{c}")).collect();
    t.push('\n');
    for irq in 0..6u64 {
        let counts: String = (0..20u64)
            .map(|c| format!(" {}", k * ((irq * 7 + c * 3) % 5 + irq % 2) * (c % 4)))
            .collect();
        t.push_str(&format!("{irq}:{counts} IO-APIC {irq}-edge dev{irq}\n"));
    }
    let (fives, zeros) = (" 5".repeat(20), " 0".repeat(20));
    t.push_str(&format!(
        "LOC:{fives} Local timer\n 9:{zeros} x\nERR: {k}\n"
    ));
    t
}

fn table_of(r: &Report) -> String {
    let mut out = Vec::new();
    crate::export::table::write(r, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// A table too wide for CPU columns prints the same from rows reduced
/// to their busiest CPU (ties: the first), including rows with no
/// positive rate, gaps and arch rows.
#[test]
fn busiest_rows_print_the_same_wide_table() {
    let (old, new) = (snap(0, &wide_text(1)), snap(1000, &wide_text(3)));
    for cpus in [None, Some("1-19")] {
        let f = Filter::from_flags(None, cpus).unwrap();
        let narrow = rates(
            &old,
            &new,
            &f,
            RateOpts {
                irqs: IrqRows::Busiest,
                ..RateOpts::default()
            },
        );
        let rows = &narrow.interrupts.as_ref().unwrap().rows;
        assert!(rows
            .iter()
            .all(|l| l.rates.is_none() || l.shape != Shape::PerCpu));
        let full = table_of(&rates(&old, &new, &f, RateOpts::default()));
        assert_eq!(table_of(&narrow), full);
        assert!(full.contains("cpu"), "{full}");
    }
}

/// The same for counts: a wide snapshot table from lines reduced to
/// their busiest CPU as they are kept prints what the full report does.
#[test]
fn busiest_counts_print_the_same_wide_table() {
    let t = wide_text(1);
    for cpus in [None, Some("1-19")] {
        let f = Filter::from_flags(None, cpus).unwrap();
        let full = counts(snap(0, &t), &f);
        let mut m = Interrupts::parse(t.as_bytes()).unwrap();
        let b = IrqCounts::new(&m.cpus.clone(), &f);
        let mut rows = Vec::new();
        for r in m.rows_mut() {
            let mut l = b.line(r).unwrap();
            b.keep_busiest_count(&mut l, r);
            rows.push(l);
        }
        let reduced = Report {
            interrupts: Some(IrqSection {
                cpus: b.cpus().to_vec(),
                rows,
                gone: Vec::new(),
            }),
            ..counts(snap(0, &t), &f)
        };
        assert_eq!(table_of(&reduced), table_of(&full));
        assert!(table_of(&full).contains("cpu"));
    }
}

/// The streamed rates document is byte for byte the Report's, with
/// gaps (a CPU came online, a new row), a row gone, filters, the
/// threshold and affinity.
#[test]
fn rates_json_is_the_reports_document() {
    let old = snap(
        0,
        "   CPU0  CPU1\n  1:  10  20  IO-APIC 1-edge  i8042\n  7:  5  5  IO-APIC 7-edge  gone\nLOC:  100  200  Local timer interrupts\nERR:  1\n",
    );
    let new = snap(
        500,
        "   CPU0  CPU1  CPU2\n  1:  15  20  4  IO-APIC 1-edge  i8042\n  9:  1  0  0  PCI-MSI 9-edge  eth0\nLOC:  150  260  9  Local timer interrupts\nERR:  3\n",
    );
    let aff = |irq: u32| (irq == 1).then(|| "0-1".to_string());
    for (irq, cpus, min) in [
        (None, None, None),
        (Some("i8042|LOC"), None, None),
        (None, Some("0,2"), None),
        (None, None, Some(50.0)),
    ] {
        let f = Filter::from_flags(irq, cpus).unwrap();
        let mut want = with_deltas(&old, &new, &f);
        let sec = want.interrupts.as_mut().unwrap();
        if let Some(min) = min {
            sec.rows.retain(|l| above_threshold(l, min));
        }
        for l in &mut sec.rows {
            l.affinity = l.irq.and_then(aff);
        }
        let rest = rates(
            &old,
            &new,
            &f,
            RateOpts {
                deltas: true,
                irqs: IrqRows::Omitted,
            },
        );
        let show = |l: &IrqLine| min.is_none_or(|m| above_threshold(l, m));
        let rows = RateRows::new(&old, &new, &f);
        for pretty in [false, true] {
            let mut streamed = Vec::new();
            crate::export::report_json::write_rate_rows(
                &rest,
                rows.as_ref(),
                &show,
                &aff,
                &mut streamed,
                pretty,
            )
            .unwrap();
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                json(&want, pretty),
                "{irq:?} {cpus:?} {min:?}"
            );
            assert_eq!(json(&want, pretty), serde_json_of(&want, pretty));
        }
    }
    let s = json(&with_deltas(&old, &new, &Filter::default()), false);
    assert!(s.contains(r#""gone":["7"]"#), "{s}");
}

/// The system counters of `/proc/stat` over an interval are `delta`'s
/// differences: a counter that went backwards has no count (never a 0
/// that reads as "nothing happened"); since boot they are the values.
#[test]
fn stat_counters_over_an_interval_come_from_delta() {
    let stat = |ctxt: u64, intr: u64| {
        let text = format!(
            "cpu  20 0 20 200 0 0 0 0 0 0\ncpu0 20 0 20 200 0 0 0 0 0 0\nintr {intr}\nctxt {ctxt}\nprocesses 50\nsoftirq 9 9\n"
        );
        Stat::parse(text.as_bytes()).unwrap()
    };
    let all = Filter::default();
    let st = stat_section(&stat(100, 10), &stat(130, 15), &all, Some(1.0));
    assert_eq!(
        (st.ctxt, st.intr_total, st.processes),
        (Some(30), 5, Some(0))
    );
    let st = stat_section(&stat(100, 10), &stat(40, 15), &all, Some(1.0));
    assert_eq!(st.ctxt, None, "ctxt went backwards: a reset, no count");
    let since_boot = stat_section(&Stat::default(), &stat(100, 10), &all, None);
    assert_eq!((since_boot.ctxt, since_boot.intr_total), (Some(100), 10));
}

/// A softirq vector in the first sample only is said, as a gone
/// interrupt row is: under the table's softirqs, in the JSON's softirqs
/// section (the streamed document's too), and left out otherwise.
#[test]
fn a_softirq_vector_gone_over_the_interval_is_said() {
    let t = "   CPU0  CPU1\n  1:  10  20  IO-APIC 1-edge  i8042\n";
    let old = snap(0, t);
    let mut new = snap(500, t);
    new.softirqs = Some(Softirqs::parse(b"       CPU0  CPU1\n  TIMER:  2  3\n").unwrap());
    let f = Filter::default();
    let r = with_deltas(&old, &new, &f);
    assert_eq!(r.softirqs.as_ref().unwrap().gone, ["NET_RX"]);
    let table = table_of(&r);
    let soft = table.split("Softirqs").nth(1).unwrap();
    assert!(
        soft.contains("gone since the first sample: NET_RX\n"),
        "{table}"
    );
    let doc = json(&r, false);
    assert!(
        doc.contains(r#""softirqs":{"cpus":[0,1],"rows":[{"name":"TIMER","#),
        "{doc}"
    );
    assert!(doc.contains(r#"}],"gone":["NET_RX"]},"stat""#), "{doc}");
    assert_eq!(doc, serde_json_of(&r, false));
    let rest = rates(
        &old,
        &new,
        &f,
        RateOpts {
            deltas: true,
            irqs: IrqRows::Omitted,
        },
    );
    let mut streamed = Vec::new();
    let rows = RateRows::new(&old, &new, &f);
    crate::export::report_json::write_rate_rows(
        &rest,
        rows.as_ref(),
        &|_| true,
        &|_| None,
        &mut streamed,
        false,
    )
    .unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), doc);
    let same = with_deltas(&old, &old, &f);
    assert!(same.softirqs.as_ref().unwrap().gone.is_empty());
    assert!(!table_of(&same).contains("gone"));
    assert!(!json(&same, false).contains("gone"));
}
