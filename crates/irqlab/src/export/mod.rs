//! Exporters: one file per output format, each writing a
//! [`Report`](crate::report::Report) to any `io::Write` — except `jsonl`,
//! the `top --batch` JSON line, which streams the same contract from two
//! snapshots without building the Report (see its module doc).

pub mod csv;
pub mod grid;
pub mod json;
pub mod jsonl;
pub mod table;

/// Output formats of tabular commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned human-readable tables.
    Table,
    /// One JSON document (see README for the contract).
    Json,
    /// Long-format CSV: one line per (section, row, CPU).
    Csv,
}
