//! One snapshot-mode interrupts row ([`IrqLine`]) as compact JSON, written
//! by hand into a byte buffer: the same bytes as `serde_json::to_writer`
//! of the line (a test holds the two equal), without serde's per-number
//! `write_all` (one `memcpy` call per count: at 1152 CPUs × 1056 rows the
//! largest share of `show --format json`'s own time). Rows in rates mode
//! (deltas, rates, gaps) go through serde unchanged.

use crate::report::IrqLine;

/// Appends `l` as compact JSON to `out`.
pub fn write_line(out: &mut Vec<u8>, l: &IrqLine) -> serde_json::Result<()> {
    if l.deltas.is_some() || l.rates.is_some() || l.total_rate.is_some() || l.gaps.is_some() {
        return serde_json::to_writer(out, l);
    }
    out.extend_from_slice(b"{\"label\":");
    serde_json::to_writer(&mut *out, &l.label)?;
    out.extend_from_slice(b",\"irq\":");
    opt_u64(out, l.irq.map(u64::from));
    out.extend_from_slice(b",\"shape\":");
    serde_json::to_writer(&mut *out, &l.shape)?;
    out.extend_from_slice(b",\"counts\":");
    match &l.counts {
        Some(c) => counts(out, c),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"total\":");
    push_u64(out, l.total);
    out.extend_from_slice(b",\"chip\":");
    serde_json::to_writer(&mut *out, &l.chip)?;
    out.extend_from_slice(b",\"hwirq\":");
    serde_json::to_writer(&mut *out, &l.hwirq)?;
    out.extend_from_slice(b",\"trigger\":");
    serde_json::to_writer(&mut *out, &l.trigger)?;
    out.extend_from_slice(b",\"flow\":");
    serde_json::to_writer(&mut *out, &l.flow)?;
    out.extend_from_slice(b",\"actions\":");
    serde_json::to_writer(&mut *out, &l.actions)?;
    out.extend_from_slice(b",\"description\":");
    serde_json::to_writer(&mut *out, &l.description)?;
    if let Some(a) = &l.affinity {
        out.extend_from_slice(b",\"affinity\":");
        serde_json::to_writer(&mut *out, a)?;
    }
    out.push(b'}');
    Ok(())
}

fn opt_u64(out: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(v) => push_u64(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

/// `[c0,c1,…]`, reserving the worst case once. Runs of zeros (most cells
/// of a big machine's rows) are copied from [`ZEROS`] a block at a time.
fn counts(out: &mut Vec<u8>, c: &[u64]) {
    out.reserve(c.len() * (MAX_DIGITS + 1) + 2);
    out.push(b'[');
    let mut i = 0;
    while let Some(&v) = c.get(i) {
        if v != 0 {
            if i > 0 {
                out.push(b',');
            }
            push_u64(out, v);
            i += 1;
            continue;
        }
        let run = c[i..].iter().take_while(|&&v| v == 0).count();
        // ",0" per zero; the row's first value has no comma
        let mut bytes = 2 * run;
        let mut from = 0;
        if i == 0 {
            (bytes, from) = (bytes - 1, 1);
        }
        while bytes > 0 {
            let k = bytes.min(ZEROS.len() - from);
            out.extend_from_slice(&ZEROS[from..from + k]);
            (bytes, from) = (bytes - k, 0);
        }
        i += run;
    }
    out.push(b']');
}

/// 64 zeros, each with its comma.
const ZEROS: &[u8; 128] = b",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\
,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0";

const MAX_DIGITS: usize = 20;

/// Two decimal digits per entry, "00" to "99".
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal digits of `v`: written into a fixed 20-byte block
/// (a copy of constant size, no `memcpy` call), then cut to length.
#[inline]
fn push_u64(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    let digits = v.ilog10() as usize + 1;
    let mut buf = [0u8; MAX_DIGITS];
    let (mut n, mut end) = (v, digits);
    while n >= 100 {
        let p = (n % 100) as usize * 2;
        n /= 100;
        buf[end - 2] = PAIRS[p];
        buf[end - 1] = PAIRS[p + 1];
        end -= 2;
    }
    if n >= 10 {
        let p = n as usize * 2;
        buf[end - 2] = PAIRS[p];
        buf[end - 1] = PAIRS[p + 1];
    } else {
        buf[end - 1] = b'0' + n as u8;
    }
    let len = out.len();
    out.extend_from_slice(&buf);
    out.truncate(len + digits);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use irqlab_core::interrupts::Shape;

    fn line() -> IrqLine {
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
        write_line(&mut out, l).unwrap();
        String::from_utf8(out[1..].to_vec()).unwrap()
    }

    #[test]
    fn same_bytes_as_serde() {
        let mut l = line();
        assert_eq!(by_hand(&l), serde_json::to_string(&l).unwrap());
        l.irq = None;
        l.counts = None;
        l.affinity = None;
        l.chip = None;
        l.hwirq = None;
        l.shape = Shape::NoCounts;
        assert_eq!(by_hand(&l), serde_json::to_string(&l).unwrap());
        l.counts = Some(Vec::new());
        assert_eq!(by_hand(&l), serde_json::to_string(&l).unwrap());
        l.rates = Some(vec![Some(1.5), None]);
        assert_eq!(by_hand(&l), serde_json::to_string(&l).unwrap());
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
            let mut l = line();
            (l.label, l.irq, l.counts, l.chip, l.hwirq) = (label, irq, counts, chip, hwirq);
            (l.actions, l.description, l.affinity) = (actions, description, affinity);
            proptest::prop_assert_eq!(by_hand(&l), serde_json::to_string(&l).unwrap());
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
                counts(&mut out, &c);
                assert_eq!(out, serde_json::to_vec(&c).unwrap(), "{len} {lead}");
            }
        }
        let mut out = Vec::new();
        counts(&mut out, &[]);
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
}
