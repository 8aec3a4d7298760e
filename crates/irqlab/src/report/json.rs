//! `show --interval --format json` streamed: the rates document written
//! row by row from two snapshots, the same bytes as serializing the built
//! [`Report`]. Formatting only: rows come from `rates`, selection
//! (`--threshold`) and affinity from the caller.

use super::rates::RateCols;
use super::{pick, IrqLine, Report};
use crate::filter::Filter;
use irqlab_core::delta;
use irqlab_core::{Interrupts, Snapshot};
use serde::Serialize;

/// The rates report of `show --interval` as JSON, written straight from
/// the two snapshots: each interrupt row is built, serialized and dropped
/// in turn, so a 1152-CPU machine never holds a million deltas and rates
/// at once. The same document as serializing the [`Report`] of
/// [`rates`](fn@super::rates) with per-CPU deltas (tested). `rest` holds the
/// other sections (its
/// `interrupts` is ignored); `show` decides whether a row is written
/// (`--threshold`) and gives each numbered row's affinity.
pub struct RatesJson<'a> {
    pub rest: &'a Report,
    pub old: &'a Snapshot,
    pub new: &'a Snapshot,
    pub filter: &'a Filter,
    pub show: &'a dyn Fn(&IrqLine) -> bool,
    pub affinity: &'a dyn Fn(u32) -> Option<String>,
}

impl Serialize for RatesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let secs = self.new.elapsed_since(self.old);
        let irqs = match (&self.old.interrupts, &self.new.interrupts) {
            (Some(o), Some(n)) => Some(LazyIrqs {
                doc: self,
                o,
                n,
                secs,
            }),
            _ => None,
        };
        let mut st = s.serialize_struct("Report", 4)?;
        st.serialize_field("interval_s", &secs)?;
        st.serialize_field("interrupts", &irqs)?;
        st.serialize_field("softirqs", &self.rest.softirqs)?;
        st.serialize_field("stat", &self.rest.stat)?;
        st.end()
    }
}

/// The interrupts section of [`RatesJson`].
struct LazyIrqs<'a> {
    doc: &'a RatesJson<'a>,
    o: &'a Interrupts,
    n: &'a Interrupts,
    secs: f64,
}

impl Serialize for LazyIrqs<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let rc = RateCols::new(self.o, self.n, self.doc.filter);
        let gone = std::cell::RefCell::new(Vec::new());
        let mut st = s.serialize_struct("IrqSection", 3)?;
        st.serialize_field("cpus", &pick(&rc.union, &rc.cols))?;
        st.serialize_field(
            "rows",
            &LazyRows {
                irqs: self,
                rc: &rc,
                gone: &gone,
            },
        )?;
        let gone = gone.into_inner();
        if !gone.is_empty() {
            st.serialize_field("gone", &gone)?;
        }
        st.end()
    }
}

/// The rows of [`LazyIrqs`]; leaves the labels of the rows that went
/// away in `gone`.
struct LazyRows<'a> {
    irqs: &'a LazyIrqs<'a>,
    rc: &'a RateCols,
    gone: &'a std::cell::RefCell<Vec<String>>,
}

impl Serialize for LazyRows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let LazyIrqs { doc, o, n, secs } = *self.irqs;
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        let mut picked = Vec::new();
        let (_, gone) = delta::interrupts_delta_each(o, n, secs, |r, _status, cells| {
            if failed.is_some() || !doc.filter.keep_irq_row(r) {
                return;
            }
            let mut line = self.rc.line(r, cells, secs, true, &mut picked);
            if !(doc.show)(&line) {
                return;
            }
            line.affinity = r.irq.and_then(doc.affinity);
            if let Err(e) = seq.serialize_element(&line) {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        *self.gone.borrow_mut() = gone.into_iter().map(|g| g.label).collect();
        seq.end()
    }
}
