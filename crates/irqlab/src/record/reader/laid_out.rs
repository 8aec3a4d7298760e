//! The interrupts, softirqs and stat cells of a recording's layout, and
//! which of them the steps taken in have listed: what
//! [`Replayer`](super::Replayer) holds each step to (no cell the layout
//! has not; no laid-out cell never listed). Kept per row (source and
//! key), not per cell: the row's CPUs in a sorted list that rows of the
//! same CPUs share, and a flag byte per CPU, so that a layout of a
//! million cells costs a walk of its rows and a byte per cell.

use crate::record::cells::each_row;
use crate::record::schema::{CellValue, Shape, SourceKind};
use std::collections::HashMap;
use std::sync::Arc;

/// The cell is in the current layout.
const LAID: u8 = 1;
/// The cell was listed by a step taken in (its value is known).
const LISTED: u8 = 2;

/// Whether a cell of `source` is rebuilt as 0 when never listed, so that
/// one a step lacks or misnames must be refused.
pub(in crate::record) fn checked(source: SourceKind) -> bool {
    matches!(
        source,
        SourceKind::Interrupts | SourceKind::Softirqs | SourceKind::Stat
    )
}

/// One row (source and key) of some layout so far.
#[derive(Debug)]
struct Row {
    source: SourceKind,
    key: String,
    /// Every CPU a layout gave the row, sorted and distinct.
    cpus: Arc<[Option<u32>]>,
    /// [`LAID`] and [`LISTED`] of each of `cpus`.
    flags: Vec<u8>,
}

impl Row {
    /// Mark `cpus` (sorted, distinct) laid out, adding those the row had
    /// not to its CPUs (the cells listed before stay listed).
    fn lay_out(&mut self, cpus: &Arc<[Option<u32>]>) {
        if self.cpus.is_empty() {
            self.flags = vec![0; cpus.len()];
            self.cpus = Arc::clone(cpus);
        }
        if self.cpus == *cpus {
            self.cpus = Arc::clone(cpus);
            self.flags.iter_mut().for_each(|f| *f |= LAID);
            return;
        }
        let (mut all, mut flags) = (Vec::new(), Vec::new());
        let (mut i, mut j) = (0, 0);
        loop {
            let old = self.flags.get(i).copied().unwrap_or(0);
            let (cpu, flag) = match (self.cpus.get(i), cpus.get(j)) {
                (None, None) => break,
                (Some(&o), Some(&n)) if o == n => {
                    (i, j) = (i + 1, j + 1);
                    (o, old | LAID)
                }
                (Some(&o), Some(&n)) if o > n => {
                    j += 1;
                    (n, LAID)
                }
                (Some(&o), _) => {
                    i += 1;
                    (o, old)
                }
                (None, Some(&n)) => {
                    j += 1;
                    (n, LAID)
                }
            };
            all.push(cpu);
            flags.push(flag);
        }
        self.cpus = match *all == **cpus {
            true => Arc::clone(cpus),
            false => all.into(),
        };
        self.flags = flags;
    }
}

/// The checked cells of the current layout and which have been listed.
#[derive(Debug, Default)]
pub(super) struct LaidOut {
    rows: Vec<Row>,
    /// The index in `rows` of each source's rows by key.
    index: HashMap<SourceKind, HashMap<String, usize>>,
    /// The rows of the current layout, in its order.
    current: Vec<usize>,
    /// The row of the last cell listed (a step lists a row's cells together).
    last: Option<usize>,
}

impl LaidOut {
    /// Take `shape` as the current layout.
    pub(super) fn lay_out(&mut self, shape: &Shape) {
        for &i in &self.current {
            if let Some(r) = self.rows.get_mut(i) {
                r.flags.iter_mut().for_each(|f| *f &= !LAID);
            }
        }
        self.current.clear();
        // the CPUs of the rows before, as laid out and sorted
        let (mut raw, mut shared): (Vec<Option<u32>>, Arc<[Option<u32>]>) =
            (Vec::new(), Arc::from([]));
        each_row(shape, |source, key, cpus| {
            if !checked(source) {
                return;
            }
            if raw != cpus {
                raw = cpus.to_vec();
                let mut sorted = cpus.to_vec();
                sorted.sort_unstable();
                sorted.dedup();
                if *shared != *sorted {
                    shared = sorted.into();
                }
            }
            let i = self.row(source, key);
            if let Some(r) = self.rows.get_mut(i) {
                r.lay_out(&shared);
            }
            self.current.push(i);
        });
    }

    /// The index of row `key` of `source`, added when new.
    fn row(&mut self, source: SourceKind, key: &str) -> usize {
        let keys = self.index.entry(source).or_default();
        if let Some(&i) = keys.get(key) {
            return i;
        }
        let i = self.rows.len();
        keys.insert(key.to_string(), i);
        self.rows.push(Row {
            source,
            key: key.to_string(),
            cpus: Arc::from([]),
            flags: Vec::new(),
        });
        i
    }

    /// Take `c` as listed; whether the current layout has it (a cell of a
    /// source not checked: always).
    pub(super) fn list(&mut self, c: &CellValue) -> bool {
        if !checked(c.source) {
            return true;
        }
        let cached = self
            .last
            .filter(|&i| {
                self.rows
                    .get(i)
                    .is_some_and(|r| r.source == c.source && r.key == c.key)
            })
            .or_else(|| self.index.get(&c.source)?.get(c.key.as_str()).copied());
        self.last = cached;
        let Some(r) = cached.and_then(|i| self.rows.get_mut(i)) else {
            return false;
        };
        let Ok(p) = r.cpus.binary_search(&c.cpu) else {
            return false;
        };
        let Some(f) = r.flags.get_mut(p) else {
            return false;
        };
        *f |= LISTED;
        *f & LAID != 0
    }

    /// The first cell of the current layout, in its order, that no step
    /// taken in has listed.
    pub(super) fn unlisted(&self) -> Option<(SourceKind, &str, Option<u32>)> {
        self.current.iter().find_map(|&i| {
            let r = self.rows.get(i)?;
            let p = r.flags.iter().position(|&f| f & (LAID | LISTED) == LAID)?;
            Some((r.source, r.key.as_str(), *r.cpus.get(p)?))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::record::playback::fixtures::shape;

    fn cell(key: &str, cpu: Option<u32>) -> CellValue {
        CellValue {
            source: SourceKind::Interrupts,
            key: key.into(),
            cpu,
            value: 1,
        }
    }

    fn with_cpus(cpus: &[u32]) -> Shape {
        Shape {
            irq_cpus: Some(cpus.to_vec()),
            ..shape()
        }
    }

    /// Exactly the cells [`each_row`] lays out, of the checked sources,
    /// whatever the order of the layout's CPU list.
    #[test]
    fn the_cells_of_a_layout_are_those_of_its_rows() {
        let mut l = LaidOut::default();
        l.lay_out(&with_cpus(&[3, 1, 2]));
        assert_eq!(l.unlisted(), Some((SourceKind::Interrupts, "24", Some(1))));
        for key in ["24", "LOC"] {
            for cpu in [2, 1, 3] {
                assert!(l.list(&cell(key, Some(cpu))));
            }
            assert!(!l.list(&cell(key, Some(0))));
            assert!(!l.list(&cell(key, None)));
        }
        assert!(!l.list(&cell("NMI", Some(1))));
        let thread = CellValue {
            source: SourceKind::Threads,
            ..cell("ksoftirqd/9", Some(9))
        };
        assert!(l.list(&thread));
        let stat = CellValue {
            source: SourceKind::Stat,
            ..cell("24", Some(1))
        };
        assert!(!l.list(&stat));
        assert_eq!(l.unlisted(), None);
    }

    /// A cell listed once stays listed through layouts without it: a
    /// row or CPU a later layout drops and the one after brings back is
    /// not unlisted, a CPU it had never is.
    #[test]
    fn a_cell_listed_under_an_earlier_layout_stays_listed() {
        let mut l = LaidOut::default();
        l.lay_out(&with_cpus(&[0, 1]));
        for c in [cell("24", Some(0)), cell("24", Some(1))] {
            assert!(l.list(&c));
        }
        assert!(l.list(&cell("LOC", Some(0))));
        assert_eq!(l.unlisted(), Some((SourceKind::Interrupts, "LOC", Some(1))));
        assert!(l.list(&cell("LOC", Some(1))));
        let mut fewer = with_cpus(&[0]);
        fewer.irq_rows.truncate(1);
        l.lay_out(&fewer);
        assert_eq!(l.unlisted(), None);
        assert!(!l.list(&cell("24", Some(1))));
        assert!(!l.list(&cell("LOC", Some(0))));
        l.lay_out(&with_cpus(&[0, 1, 2]));
        assert_eq!(l.unlisted(), Some((SourceKind::Interrupts, "24", Some(2))));
        assert!(l.list(&cell("24", Some(2))));
        assert_eq!(l.unlisted(), Some((SourceKind::Interrupts, "LOC", Some(2))));
        l.lay_out(&with_cpus(&[0, 1]));
        assert_eq!(l.unlisted(), None);
    }
}
