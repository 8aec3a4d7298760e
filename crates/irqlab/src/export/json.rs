//! JSON exporter: the documented contract (README, "JSON output"), as one
//! compact document (scripts, pipes: a fifth of the bytes on a big
//! machine) or indented for people (`show` on a terminal, `--pretty`).

use std::io::Write;

/// Write `report` (a [`Report`](crate::report::Report), or
/// [`RatesJson`](crate::report::RatesJson), the same document streamed)
/// as one JSON document and a newline, indented when `pretty`. Write
/// errors stay `io::Error`s (a closed stdout is recognised by `main`).
pub fn write(
    report: &impl serde::Serialize,
    out: &mut impl Write,
    pretty: bool,
) -> anyhow::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut *out, report).map_err(std::io::Error::from)?;
    } else {
        serde_json::to_writer(&mut *out, report).map_err(std::io::Error::from)?;
    }
    writeln!(out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::Report;

    #[test]
    fn compact_and_pretty_are_the_same_document() {
        let r = Report {
            interval_s: Some(1.5),
            ..Report::default()
        };
        let (mut c, mut p) = (Vec::new(), Vec::new());
        write(&r, &mut c, false).unwrap();
        write(&r, &mut p, true).unwrap();
        let c = String::from_utf8(c).unwrap();
        let p = String::from_utf8(p).unwrap();
        assert_eq!(c.lines().count(), 1, "{c}");
        assert!(p.lines().count() > 1, "{p}");
        let cv: serde_json::Value = serde_json::from_str(&c).unwrap();
        let pv: serde_json::Value = serde_json::from_str(&p).unwrap();
        assert_eq!(cv, pv);
    }
}
