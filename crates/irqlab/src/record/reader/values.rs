//! The last listed value of every cell [`Replayer`](super::Replayer) has
//! taken in, kept per row (source, then key), then CPU: a row's cells are
//! found by one lookup of its key by `&str`, and each cell by its CPU in
//! that row's small map. One map of every cell, keyed by
//! `(source, String, cpu)`, made each cell of a 1152-CPU × 1056-IRQ
//! sample a probe of a million-entry table with a string compare, and
//! each lookup a `String` (BENCHMARKS.md, session 50).

use crate::record::schema::SourceKind;
use std::collections::HashMap;

/// A cell's coordinates, owned: source, key, CPU (`None`: a single value).
pub(super) type CellKey = (SourceKind, String, Option<u32>);

/// One row's cells: value by CPU.
pub(super) type Row = HashMap<Option<u32>, u64>;

/// Every listed cell's last value (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct Values(HashMap<SourceKind, HashMap<String, Row>>);

impl Values {
    /// Set the cell's value.
    pub(super) fn insert(&mut self, source: SourceKind, key: &str, cpu: Option<u32>, v: u64) {
        let rows = self.0.entry(source).or_default();
        match rows.get_mut(key) {
            Some(row) => {
                row.insert(cpu, v);
            }
            None => {
                rows.insert(key.to_string(), Row::from([(cpu, v)]));
            }
        }
    }

    /// The row of `key` under `source`, if any of its cells was listed.
    pub(super) fn row(&self, source: SourceKind, key: &str) -> Option<&Row> {
        self.0.get(&source)?.get(key)
    }

    /// The cell's value, if it was listed.
    pub(super) fn get(&self, source: SourceKind, key: &str, cpu: Option<u32>) -> Option<u64> {
        self.row(source, key)?.get(&cpu).copied()
    }

    /// Every listed cell's coordinates.
    pub(super) fn keys(&self) -> impl Iterator<Item = CellKey> + '_ {
        self.0.iter().flat_map(|(&source, rows)| {
            rows.iter()
                .flat_map(move |(key, row)| row.keys().map(move |&cpu| (source, key.clone(), cpu)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_found_by_its_source_key_and_cpu_only() {
        let mut v = Values::default();
        v.insert(SourceKind::Interrupts, "24", Some(0), 5);
        v.insert(SourceKind::Interrupts, "24", Some(1), 6);
        v.insert(SourceKind::Interrupts, "24", None, 7);
        v.insert(SourceKind::Softirqs, "24", Some(0), 8);
        v.insert(SourceKind::Interrupts, "24", Some(0), 9);
        assert_eq!(v.get(SourceKind::Interrupts, "24", Some(0)), Some(9));
        assert_eq!(v.get(SourceKind::Interrupts, "24", Some(1)), Some(6));
        assert_eq!(v.get(SourceKind::Interrupts, "24", None), Some(7));
        assert_eq!(v.get(SourceKind::Softirqs, "24", Some(0)), Some(8));
        assert_eq!(v.get(SourceKind::Softirqs, "24", Some(1)), None);
        assert_eq!(v.get(SourceKind::Interrupts, "25", Some(0)), None);
        assert_eq!(v.get(SourceKind::Stat, "24", Some(0)), None);
        assert_eq!(
            v.row(SourceKind::Interrupts, "24").map(|r| r.len()),
            Some(3)
        );
        let mut keys: Vec<CellKey> = v.keys().collect();
        keys.sort();
        let want: Vec<CellKey> = vec![
            (SourceKind::Interrupts, "24".into(), None),
            (SourceKind::Interrupts, "24".into(), Some(0)),
            (SourceKind::Interrupts, "24".into(), Some(1)),
            (SourceKind::Softirqs, "24".into(), Some(0)),
        ];
        assert_eq!(keys, want);
    }
}
