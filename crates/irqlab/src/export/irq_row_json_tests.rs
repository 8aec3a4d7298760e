//! The row encoder against its reference: serde_json's rendering of the
//! model ([`reference`](super::reference)), byte for byte.

#![allow(clippy::unwrap_used)]
use super::reference::Line;
use super::*;
use irqlab_core::delta::Gap;

fn row() -> IrqLine {
    IrqLine {
        label: "PIW\"\\<".into(),
        irq: Some(4_000_000_000),
        shape: Shape::PerCpu,
        counts: Some(vec![0, 9, 10, 99, 100, 12345, 4_294_967_295, u64::MAX]),
        total: 1_000_000_000_000,
        deltas: None,
        rates: None,
        total_rate: None,
        gaps: None,
        chip: Some("IR-PCI-MSIX-0000:00:1f.3".into()),
        hwirq: Some(-1),
        trigger: None,
        flow: Some("edge".into()),
        actions: vec!["eth0-rx-0".into(), "é\n".into()],
        description: "IR-PCI-MSIX-0000:00:1f.3 0-edge eth0-rx-0".into(),
        affinity: Some("0-3,8".into()),
        since_boot: None,
        busiest: None,
        busiest_count: None,
    }
}

fn by_hand(l: &IrqLine) -> String {
    let mut out = b"x".to_vec();
    line(&mut out, l);
    String::from_utf8(out[1..].to_vec()).unwrap()
}

fn by_serde(l: &IrqLine) -> String {
    serde_json::to_string(&Line::of(l)).unwrap()
}

#[test]
fn same_bytes_as_serde() {
    let mut l = row();
    assert_eq!(by_hand(&l), by_serde(&l));
    l.irq = None;
    l.counts = None;
    l.affinity = None;
    l.chip = None;
    l.hwirq = None;
    l.shape = Shape::NoCounts;
    assert_eq!(by_hand(&l), by_serde(&l));
    l.counts = Some(Vec::new());
    assert_eq!(by_hand(&l), by_serde(&l));
    l.rates = Some(vec![Some(1.5), None, Some(f64::NAN), Some(2e9 + 0.25)]);
    assert_eq!(by_hand(&l), by_serde(&l));
    l.deltas = Some(vec![Some(3), None]);
    l.total_rate = Some(f64::INFINITY);
    l.gaps = Some(vec![None, Some(Gap::NewRow)]);
    assert_eq!(by_hand(&l), by_serde(&l));
}

fn gap() -> impl proptest::strategy::Strategy<Value = Option<Gap>> {
    proptest::prop_oneof![
        proptest::strategy::Just(None),
        proptest::strategy::Just(Some(Gap::NewRow)),
        proptest::strategy::Just(Some(Gap::CpuOnline)),
    ]
}

proptest::proptest! {
    #[test]
    fn any_line_has_serdes_bytes(
        label in ".{0,8}",
        irq in proptest::option::of(proptest::num::u32::ANY),
        counts in proptest::option::of(proptest::collection::vec(
            proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..1000, proptest::num::u64::ANY],
            0..200,
        )),
        chip in proptest::option::of(".{0,6}"),
        hwirq in proptest::option::of(proptest::num::i64::ANY),
        actions in proptest::collection::vec(".{0,5}", 0..3),
        description in ".{0,12}",
        affinity in proptest::option::of("[0-9,-]{0,8}"),
    ) {
        let mut l = row();
        (l.label, l.irq, l.counts, l.chip, l.hwirq) = (label, irq, counts, chip, hwirq);
        (l.actions, l.description, l.affinity) = (actions, description, affinity);
        proptest::prop_assert_eq!(by_hand(&l), by_serde(&l));
    }

    #[test]
    fn any_rates_line_has_serdes_bytes(
        deltas in proptest::option::of(proptest::collection::vec(
            proptest::option::of(proptest::num::u64::ANY), 0..40)),
        rates in proptest::option::of(proptest::collection::vec(
            proptest::option::of(proptest::prop_oneof![
                proptest::strategy::Just(0.0f64), 0.0f64..1e12, proptest::num::f64::ANY,
            ]), 0..40)),
        total_rate in proptest::option::of(proptest::num::f64::ANY),
        gaps in proptest::option::of(proptest::collection::vec(gap(), 0..10)),
    ) {
        let mut l = row();
        (l.counts, l.deltas, l.rates, l.total_rate, l.gaps) = (None, deltas, rates, total_rate, gaps);
        proptest::prop_assert_eq!(by_hand(&l), by_serde(&l));
    }
}

#[test]
fn runs_of_zeros_of_every_length() {
    for len in [0usize, 1, 2, 63, 64, 65, 127, 128, 129, 1152] {
        for lead in [0u64, 5] {
            let mut c = vec![0u64; len];
            if let Some(f) = c.first_mut() {
                *f = lead;
            }
            c.push(7);
            c.extend(std::iter::repeat_n(0, len));
            let mut out = Vec::new();
            counts_array(&mut out, &c);
            assert_eq!(out, serde_json::to_vec(&c).unwrap(), "{len} {lead}");
        }
    }
    let mut out = Vec::new();
    counts_array(&mut out, &[]);
    assert_eq!(out, b"[]");
}

#[test]
fn digits_of_every_length() {
    let mut v = 1u64;
    for _ in 0..20 {
        for x in [v - 1, v, v + 1, v.saturating_mul(7)] {
            let mut out = Vec::new();
            push_u64(&mut out, x);
            assert_eq!(String::from_utf8(out).unwrap(), x.to_string());
        }
        v = v.saturating_mul(10);
    }
    let mut out = Vec::new();
    push_u64(&mut out, u64::MAX);
    assert_eq!(String::from_utf8(out).unwrap(), u64::MAX.to_string());
}

/// No other source file writes an interrupts row's JSON by hand: the
/// row's opening bytes are spelled only here.
#[test]
fn rows_are_encoded_only_here() {
    fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, found);
            } else if p.extension().is_some_and(|x| x == "rs")
                && !p.ends_with("export/irq_row_json.rs")
                && !p.ends_with("export/irq_row_json_tests.rs")
                && std::fs::read_to_string(&p)
                    .unwrap()
                    .contains(r#"{\"label\":"#)
            {
                found.push(p.display().to_string());
            }
        }
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    walk(&src, &mut found);
    assert!(
        found.is_empty(),
        "rows encoded outside irq_row_json: {found:?}"
    );
}

#[test]
fn rate_memo_grows_to_the_line_and_gives_put_rates_bytes() {
    // the table starts empty (a 1-line run on a small machine does not
    // fill 48 KiB), grows while a line formats more cells than it has
    // slots, never past SLOTS, and stays put for lines no longer than the
    // longest; every rate is put_rate's bytes at every size
    let mut memo = RateMemo::default();
    assert!(memo.slots.is_empty());
    let mut lens = Vec::new();
    for (secs, cells) in [
        (1.0, 5u64),
        (1.0, 100),
        (0.5, 100),
        (0.5, 3000),
        (0.25, 3000),
    ] {
        memo.start(secs);
        for c in 0..cells {
            let count = c * 7 % 900;
            let (mut got, mut want) = ([0u8; 32], [0u8; 24]);
            let n = memo.put(&mut got, count).unwrap();
            let m = put_rate(&mut want, Cell::Count(count).rate(secs).unwrap()).unwrap();
            assert_eq!(got[..n], want[..m], "count {count} over {secs}");
        }
        lens.push(memo.slots.len());
    }
    assert_eq!(lens, [FEW_SLOTS, 128, 128, SLOTS, SLOTS]);
}

#[test]
fn strings_are_serdes_strings() {
    let mut cases: Vec<String> = (0u8..128).map(|c| format!("a{}b", c as char)).collect();
    cases.extend(["", "eth0-TxRx-3", "IR-PCI-MSI", "é→", "\u{7f}", "a\"b\\c"].map(String::from));
    // long strings (checked sixteen bytes at a time): one odd byte anywhere
    for c in [0u8, 0x1f, b'"', b'\\', 0x7f, b'x'] {
        for at in [0, 15, 16, 31, 39] {
            let mut b = vec![b'a'; 40];
            b[at] = c;
            cases.push(String::from_utf8(b).unwrap());
        }
    }
    for s in cases {
        let mut out = Vec::new();
        json_str(&mut out, &s);
        assert_eq!(out, serde_json::to_vec(&s).unwrap(), "{s:?}");
    }
}
