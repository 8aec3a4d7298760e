//! The trial record: one line of `trials.jsonl`.

use crate::direction::Direction;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Current schema version, written in every record's `schema` field.
///
/// - 1: no `schema` field; `trial` numbered from 0.
/// - 2: `schema: 2`; `trial` numbered from 1 (as progress lines and
///   errors say); optional `gap`; rates of unknown better direction carry
///   `direction: "none"`; optional `headline: true` on the workload's
///   headline metric (older readers ignore it).
pub const SCHEMA: u32 = 2;

fn schema_one() -> u32 {
    1
}

/// One metric's value in a trial record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub value: f64,
    /// e.g. `1/s`, `%`, `ns`.
    pub unit: String,
    pub direction: Direction,
    /// The workload's headline metric (the one number a reader wants
    /// first); `compare` leads its text summary with it. Absent: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headline: bool,
}

/// One finished trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Schema version of this record (see [`SCHEMA`]); records read from
    /// older files are upgraded and carry the current version.
    #[serde(default = "schema_one")]
    pub schema: u32,
    /// Variant label (`tip`, `patch`).
    pub variant: String,
    /// Trial number within the variant, from 1.
    pub trial: u32,
    pub boot_id: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Measured length of the timed window.
    pub duration_s: f64,
    /// Why this trial's workload metrics are missing (`cpu_offline`), when
    /// something disturbed it; the trial is kept, marked, and the run goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
    pub metrics: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl TrialRecord {
    /// An empty record of the current schema.
    pub fn new(variant: &str, trial: u32, boot_id: &str, started_at: String) -> Self {
        TrialRecord {
            schema: SCHEMA,
            variant: variant.to_string(),
            trial,
            boot_id: boot_id.to_string(),
            started_at,
            duration_s: 0.0,
            gap: None,
            metrics: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// Add one metric (a later duplicate wins; a non-finite value is
    /// dropped with a note).
    pub fn insert(&mut self, name: &str, value: f64, unit: &str, direction: Direction) {
        if value.is_finite() {
            let v = Value {
                value,
                unit: unit.to_string(),
                direction,
                headline: false,
            };
            self.metrics.insert(name.to_string(), v);
        } else {
            self.notes.push(format!("{name}: non-finite value dropped"));
        }
    }

    /// Mark `name` as the workload's headline metric (no effect when the
    /// record has no such metric).
    pub fn mark_headline(&mut self, name: &str) {
        if let Some(v) = self.metrics.get_mut(name) {
            v.headline = true;
        }
    }

    /// Bring a record of an older schema to the current one.
    pub(super) fn upgrade(&mut self) {
        if self.schema < 2 {
            self.trial += 1;
        }
        self.schema = SCHEMA;
    }
}
