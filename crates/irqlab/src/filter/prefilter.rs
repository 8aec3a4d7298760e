//! A necessary condition of the `--irq` filter on a raw `/proc/interrupts`
//! line, so that `show` can drop a row without parsing its counts: the
//! literals one of which every match of the regex begins with (prefix
//! extraction of `regex-syntax`, the parser behind `regex`). Every field
//! the filter tests — label, description, chip, each action — is a piece
//! of the line's text, so a line holding none of those literals cannot be
//! kept. Patterns whose matches have no such finite set (`.`, `\d+`, an
//! empty alternative, too many literals) get no prefilter. Pure.

use memchr::memmem::Finder;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

/// At most this many literals (each is one substring search per line).
const MAX_LITERALS: usize = 8;

/// The literals of one `--irq` pattern.
#[derive(Debug)]
pub struct Prefilter {
    finders: Vec<Finder<'static>>,
    /// With at most three literals: each literal's rarest byte in
    /// `/proc/interrupts` text and its offset in the literal, searched
    /// with one `memchr`/`memchr2`/`memchr3` pass over the line (a
    /// single-byte search costs a third of a substring search per byte,
    /// and a line is mostly digits and spaces, which no rare byte is).
    rare: Vec<(u8, usize, Vec<u8>)>,
}

/// How common `b` is in `/proc/interrupts` (lower: rarer): the counts'
/// digits and spaces everywhere, lower-case words and punctuation in the
/// descriptions, upper-case letters in a few labels and chip names.
fn commonness(b: u8) -> u8 {
    match b {
        b' ' | b'0'..=b'9' => 255,
        b'a'..=b'z' => 100,
        b'-' | b',' | b':' | b'_' | b'.' => 150,
        b'A'..=b'Z' => 10,
        _ => 50,
    }
}

/// A literal's rarest byte and its offset ([`commonness`]; the first of
/// equals).
fn rarest(lit: &[u8]) -> Option<(u8, usize)> {
    let (at, &b) = lit
        .iter()
        .enumerate()
        .min_by_key(|&(i, &b)| (commonness(b), i))?;
    Some((b, at))
}

impl Prefilter {
    /// The prefilter of `pattern` (as `Regex::new` parses it), if it has one.
    pub fn new(pattern: &str) -> Option<Prefilter> {
        let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
        let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
        let lits = seq.literals()?;
        if lits.is_empty() || lits.len() > MAX_LITERALS {
            return None;
        }
        let mut finders = Vec::with_capacity(lits.len());
        for l in lits {
            let bytes = l.as_bytes();
            // an empty literal matches anywhere; U+FFFD may stand for
            // bytes that were not UTF-8 in the file (fields are lossy)
            if bytes.is_empty() || std::str::from_utf8(bytes).is_ok_and(|s| s.contains('\u{FFFD}'))
            {
                return None;
            }
            finders.push(Finder::new(bytes).into_owned());
        }
        let mut rare = Vec::new();
        if finders.len() <= 3 {
            for f in &finders {
                let lit = f.needle();
                let (b, at) = rarest(lit)?;
                rare.push((b, at, lit.to_vec()));
            }
        }
        Some(Prefilter { finders, rare })
    }

    /// False when no field of `line` can match (the row can be dropped):
    /// exactly when `line` holds none of the literals.
    pub fn may_match(&self, line: &[u8]) -> bool {
        match self.rare.as_slice() {
            [a] => candidates(memchr::memchr_iter(a.0, line), line, &self.rare),
            [a, b] => candidates(memchr::memchr2_iter(a.0, b.0, line), line, &self.rare),
            [a, b, c] => candidates(memchr::memchr3_iter(a.0, b.0, c.0, line), line, &self.rare),
            _ => self.finders.iter().any(|f| f.find(line).is_some()),
        }
    }
}

/// Whether a literal of `rare` sits at one of the `hits` (positions of a
/// rare byte in `line`): compared in place, byte for byte.
fn candidates(
    hits: impl Iterator<Item = usize>,
    line: &[u8],
    rare: &[(u8, usize, Vec<u8>)],
) -> bool {
    for i in hits {
        let Some(&hit) = line.get(i) else {
            continue;
        };
        for (b, at, lit) in rare {
            if *b == hit
                && i.checked_sub(*at)
                    .and_then(|start| line.get(start..start + lit.len()))
                    == Some(lit.as_slice())
            {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::filter::Filter;
    use proptest::prelude::*;

    const LINE: &[u8] = b" 42:   1   2  IR-PCI-MSIX-0000:00:04.0   2-edge      virtio3-tx, eth0";

    #[test]
    fn literals_of_the_usual_patterns() {
        let p = Prefilter::new("^NMI$").unwrap();
        assert!(!p.may_match(LINE));
        assert!(p.may_match(b"NMI:  0 0  Non-maskable interrupts"));
        assert!(Prefilter::new("virtio|nvme").unwrap().may_match(LINE));
        assert!(Prefilter::new("^eth0$").unwrap().may_match(LINE));
        assert!(!Prefilter::new("(?i)NV").unwrap().may_match(LINE));
        assert!(Prefilter::new("(?i)VIR").unwrap().may_match(LINE));
    }

    #[test]
    fn patterns_without_a_literal_set_have_none() {
        for p in [
            ".",
            r"\d+",
            "a|",
            "",
            "^",
            "[a-z]+x",
            "(?i)virtio-input-queue-number",
        ] {
            assert!(Prefilter::new(p).is_none(), "{p}");
        }
    }

    /// A row the prefilter drops is one the filter would not keep.
    fn never_drops_a_kept_row(pattern: &str, line: &str) -> Result<(), TestCaseError> {
        let (Some(p), Ok(f)) = (
            Prefilter::new(pattern),
            Filter::from_flags(Some(pattern), None),
        ) else {
            return Ok(());
        };
        let text = format!("  CPU0 CPU1\n{line}\n");
        if let Ok(m) = irqlab_core::Interrupts::parse(text.as_bytes()) {
            for r in m.rows() {
                if f.keep_irq_row(r) {
                    prop_assert!(p.may_match(line.as_bytes()), "{pattern:?} dropped {line:?}");
                }
            }
        }
        Ok(())
    }

    /// The rare-byte search answers like a substring search of every
    /// literal, literals at the line's edges and overlapping ones too.
    #[test]
    fn rare_byte_search_finds_exactly_the_lines_holding_a_literal() {
        let mut rng = irqlab_core::rng::Rng::new(26);
        let alphabet = b"NMIL OC0123 -eth0xX:,vV";
        for pattern in [
            "^NMI$",
            "LOC|NMI",
            "eth0",
            "NMI|LOC|x",
            "(?i)nv",
            "0x|:,",
            "a|b|c|d",
        ] {
            let p = Prefilter::new(pattern).unwrap();
            let lits: Vec<Vec<u8>> = p.finders.iter().map(|f| f.needle().to_vec()).collect();
            for _ in 0..3000 {
                let len = (rng.next_u64() % 40) as usize;
                let line: Vec<u8> = (0..len)
                    .map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize])
                    .collect();
                let want = lits.iter().any(|l| line.windows(l.len()).any(|w| w == l));
                assert_eq!(
                    p.may_match(&line),
                    want,
                    "{pattern} {:?}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
        assert_eq!(Prefilter::new("^NMI$").unwrap().rare.len(), 1);
        assert!(Prefilter::new("a|b|c|d").unwrap().rare.is_empty());
    }

    proptest! {
        #[test]
        fn a_dropped_row_is_never_one_the_filter_keeps(
            pattern in "(\\^?)(NMI|LOC|virtio[0-9]?|eth0|edge|PCI)(\\$?)(\\|(MSI|ACPI|x))?",
            label in prop::sample::select(vec!["NMI", "LOC", "24", "42"]),
            words in prop::collection::vec(prop::sample::select(vec![
                "IR-PCI-MSIX-0000:00:04.0", "virtio3-tx,", "eth0", "2-edge", "Non-maskable",
                "interrupts", "ACPI:Ged", "MSI", "x", "PCI-MSI", "virtio0-input.0",
            ]), 0..5),
        ) {
            let line = format!("{label}: 1 2  {}", words.join(" "));
            never_drops_a_kept_row(&pattern, &line)?;
        }
    }
}
