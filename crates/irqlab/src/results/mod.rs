//! The result schema of irqlab: one typed, versioned reader and writer of
//! `trials.jsonl` (one JSON object per trial), used by `bench` (writing,
//! and reading back on `--resume`) and `compare` (reading). The schema is
//! documented in `docs/results-schema.md`.
//!
//! Owns the record types ([`TrialRecord`], [`Value`]), the schema version
//! ([`SCHEMA`]) and the upgrade of older files (schema 1: no `schema`
//! field, trials numbered from 0). Must not compute statistics or know
//! about workloads: callers hand it finished records.

mod read;
mod trial;
mod write;

pub use read::{line_of_value, parse_line, read_trials, read_trials_dir};
pub use trial::{TrialRecord, Value, SCHEMA};
pub use write::{variant_dir, write_json, TrialWriter};

/// The file of one variant's trials inside its directory.
pub const TRIALS_FILE: &str = "trials.jsonl";
/// The CSV twin of [`TRIALS_FILE`].
pub const TRIALS_CSV: &str = "trials.csv";
