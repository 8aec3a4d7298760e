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
        Some(Prefilter { finders })
    }

    /// False when no field of `line` can match (the row can be dropped).
    pub fn may_match(&self, line: &[u8]) -> bool {
        self.finders.iter().any(|f| f.find(line).is_some())
    }
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
