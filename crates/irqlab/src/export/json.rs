//! JSON exporter: the documented contract (README, "JSON output").

use crate::report::Report;
use std::io::Write;

/// Write `report` as one pretty JSON document and a newline. Write errors
/// stay `io::Error`s (a closed stdout is recognised by `main`).
pub fn write(report: &Report, out: &mut impl Write) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}
