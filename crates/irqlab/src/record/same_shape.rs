//! Whether a sample keeps the layout of the sample before: the test
//! `cells::Differ` runs on every sample, made field by field against the
//! stored [`Shape`] instead of building a new one (which cloned every
//! row's label, description and affinity and then compared them: most of
//! the differ's own time on a small machine). Must agree with
//! `cells::shape_of` exactly; the differ checks that in debug builds.
//! The shape's strings (IRQ rows' kind, label, description and affinity,
//! softirq and thread names) are compared against [`Packed`], one
//! contiguous copy of them, so that a sample reads a few cache lines of
//! it rather than every row's scattered heap strings. Pure: no I/O.

use super::cells::stat_others;
use super::schema::{RowKind, Shape};
use super::trace_cells;
use crate::filter::Filter;
use crate::sampler::counters::SampleCountersView;
use irqlab_core::interrupts::Shape as IrqShape;

/// `cpus[cols[i]]` for every `i`, equal to `want`.
fn same_cpus(cpus: &[u32], cols: &[usize], want: &[u32]) -> bool {
    cols.len() == want.len()
        && cols
            .iter()
            .zip(want)
            .all(|(&i, &c)| cpus.get(i) == Some(&c))
}

/// The strings of a [`Shape`] that [`same_shape`] compares, in the order
/// it compares them, in one buffer: per IRQ row a marker, its kind, label,
/// description and affinity, then an end marker; the softirq names; the
/// thread names and PIDs. Strings are a length (u32) and their bytes.
#[derive(Debug, Default, Clone)]
pub struct Packed(Vec<u8>);

const ROW: u8 = 1;
const END: u8 = 0;

impl Packed {
    pub fn of(sh: &Shape) -> Packed {
        let mut b = Vec::new();
        for r in &sh.irq_rows {
            b.push(ROW);
            put_kind(&mut b, r.kind);
            put_str(&mut b, &r.label);
            put_str(&mut b, &r.description);
            put_opt(&mut b, r.affinity.as_deref());
        }
        b.push(END);
        for n in &sh.soft_rows {
            put_str(&mut b, n);
        }
        for (i, n) in sh.threads.iter().enumerate() {
            put_str(&mut b, n);
            put_pid(&mut b, sh.thread_pid(i));
        }
        Packed(b)
    }
}

fn put_kind(b: &mut Vec<u8>, k: RowKind) {
    match k {
        RowKind::PerCpu => b.push(0),
        RowKind::Single => b.push(1),
        RowKind::NoCounts => b.push(2),
        RowKind::Irregular { n } => {
            b.push(3);
            b.extend_from_slice(&(n as u64).to_le_bytes());
        }
    }
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
}

fn put_opt(b: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => b.push(0),
        Some(s) => {
            b.push(1);
            put_str(b, s);
        }
    }
}

fn put_pid(b: &mut Vec<u8>, p: Option<u32>) {
    match p {
        None => b.push(0),
        Some(p) => {
            b.push(1);
            b.extend_from_slice(&p.to_le_bytes());
        }
    }
}

/// Reads a [`Packed`] in order, each step comparing with a value of the
/// sample; a mismatch (or the end) answers false.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn bytes(&mut self, want: &[u8]) -> bool {
        match self.0.split_at_checked(want.len()) {
            Some((a, rest)) if a == want => {
                self.0 = rest;
                true
            }
            _ => false,
        }
    }

    fn byte(&mut self, want: u8) -> bool {
        self.bytes(&[want])
    }

    fn str(&mut self, s: &str) -> bool {
        u32::try_from(s.len()).is_ok_and(|n| self.bytes(&n.to_le_bytes()))
            && self.bytes(s.as_bytes())
    }

    fn kind(&mut self, shape: IrqShape, n: usize) -> bool {
        match shape {
            IrqShape::PerCpu => self.byte(0),
            IrqShape::Single => self.byte(1),
            IrqShape::NoCounts => self.byte(2),
            IrqShape::Irregular => self.byte(3) && self.bytes(&(n as u64).to_le_bytes()),
        }
    }

    fn opt(&mut self, s: Option<&str>) -> bool {
        match s {
            None => self.byte(0),
            Some(s) => self.byte(1) && self.str(s),
        }
    }

    fn pid(&mut self, p: Option<u32>) -> bool {
        match p {
            None => self.byte(0),
            Some(p) => self.byte(1) && self.bytes(&p.to_le_bytes()),
        }
    }
}

/// Does `s` under `filter` have layout `sh` (what `shape_of` would build)?
/// `packed` is [`Packed::of`] `sh`.
pub fn same_shape(
    sh: &Shape,
    packed: &Packed,
    s: SampleCountersView,
    filter: &Filter,
    affinity: &mut dyn FnMut(u32) -> Option<String>,
) -> bool {
    let mut c = Cursor(&packed.0);
    same_irqs(sh, &mut c, s, filter, affinity)
        && same_softirqs(sh, &mut c, s, filter)
        && same_stat(sh, s, filter)
        && same_threads(&mut c, s)
        && c.0.is_empty()
        && same_trace(sh, s, filter)
}

/// The same threads (names and PIDs) in the same order.
fn same_threads(c: &mut Cursor, s: SampleCountersView) -> bool {
    s.threads.iter().all(|t| c.str(&t.name) && c.pid(t.pid))
}

fn same_irqs(
    sh: &Shape,
    c: &mut Cursor,
    s: SampleCountersView,
    filter: &Filter,
    affinity: &mut dyn FnMut(u32) -> Option<String>,
) -> bool {
    let (m, cpus) = match (s.snap.interrupts.as_ref(), &sh.irq_cpus) {
        (None, None) => return c.byte(END),
        (Some(m), Some(cpus)) => (m, cpus),
        _ => return false,
    };
    if !same_cpus(&m.cpus, &filter.columns(&m.cpus), cpus) {
        return false;
    }
    // keys follow from the sequence of labels: equal labels, equal keys
    for r in m.rows().iter().filter(|r| filter.keep_irq_row(r)) {
        if !(c.byte(ROW)
            && c.kind(r.shape, r.counts.len())
            && c.str(&r.label)
            && c.str(&r.description)
            && c.opt(r.irq.and_then(&mut *affinity).as_deref()))
        {
            return false;
        }
    }
    c.byte(END)
}

fn same_softirqs(sh: &Shape, c: &mut Cursor, s: SampleCountersView, filter: &Filter) -> bool {
    match (s.snap.softirqs.as_ref(), &sh.soft_cpus) {
        (None, None) => true,
        (Some(m), Some(cpus)) => {
            same_cpus(&m.cpus, &filter.columns(&m.cpus), cpus)
                && m.rows.len() == sh.soft_rows.len()
                && m.rows.iter().all(|r| c.str(&r.name))
        }
        _ => false,
    }
}

fn same_stat(sh: &Shape, s: SampleCountersView, filter: &Filter) -> bool {
    let (st, cpus) = match (s.snap.stat.as_ref(), &sh.stat_cpus) {
        (None, None) => return true,
        (Some(st), Some(cpus)) => (st, cpus),
        _ => return false,
    };
    let ids: Vec<u32> = st.cpus.iter().filter_map(|c| c.cpu).collect();
    let kept = filter.columns(&ids);
    let same_ids = kept.len() == cpus.len()
        && kept
            .iter()
            .zip(cpus)
            .all(|(&i, &c)| st.cpus.get(i).and_then(|x| x.cpu) == Some(c));
    let mut others = stat_others(st)
        .into_iter()
        .filter(|(_, v)| v.is_some())
        .map(|(n, _)| n);
    same_ids
        && st.total.fields.len() == sh.stat_fields
        && sh
            .stat_other
            .iter()
            .all(|n| others.next() == Some(n.as_str()))
        && others.next().is_none()
}

fn same_trace(sh: &Shape, s: SampleCountersView, filter: &Filter) -> bool {
    match (s.trace, &sh.trace_cpus) {
        (None, None) => true,
        (Some(t), Some(cpus)) => {
            // traced rows are few; their keys are built to compare
            let ids = trace_cells::cpu_ids(t);
            let cols = filter.columns(&ids);
            same_cpus(&ids, &cols, cpus)
                && trace_cells::row_keys(t, &cols, &super::cells::keep_traced(s, filter))
                    == sh.trace_rows
        }
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::record::cells::shape_of;
    use crate::threads::{ThreadCpu, ThreadKind};

    const STAT: &str = "cpu  1 0 2 3 4 5 6 0 0 0\ncpu0 1 0 2 3 4 5 6 0 0 0\nintr 9 1\nctxt 7\n";
    const SOFT: &str = "   CPU0 CPU1\nTIMER: 1 2\nNET_RX: 3 4\n";

    fn snap(irqs: &str, stat: &str) -> irqlab_core::Snapshot {
        irqlab_core::Snapshot {
            interrupts: Some(irqlab_core::Interrupts::parse(irqs.as_bytes()).unwrap()),
            softirqs: Some(irqlab_core::Softirqs::parse(SOFT.as_bytes()).unwrap()),
            stat: Some(irqlab_core::Stat::parse(stat.as_bytes()).unwrap()),
            ..Default::default()
        }
    }

    const A: &str = "  CPU0 CPU1\n 24: 1 2 PCI-MSI a\n 24: 3 4 PCI-MSI b\nLOC: 5 6 Local timer\n";

    fn same(
        sh: &Shape,
        snap: &irqlab_core::Snapshot,
        threads: &[ThreadCpu],
        filter: &Filter,
        aff: &str,
    ) -> bool {
        let s = SampleCountersView {
            snap,
            threads,
            trace: None,
        };
        same_shape(sh, &Packed::of(sh), s, filter, &mut |_| {
            Some(aff.to_string())
        })
    }

    #[test]
    fn every_layout_change_is_seen_and_nothing_else() {
        let t = |n: &str| ThreadCpu {
            pid: Some(14),
            name: n.into(),
            kind: ThreadKind::Ksoftirqd { cpu: 0 },
            cpu_pct: 0.0,
            last_cpu: None,
            cpu_ns: 5,
        };
        let threads = [t("ksoftirqd/0")];
        for filter in [
            Filter::default(),
            Filter::from_flags(Some("^24$"), Some("1")).unwrap(),
        ] {
            let base = snap(A, STAT);
            let view = SampleCountersView {
                snap: &base,
                threads: &threads,
                trace: None,
            };
            let sh = shape_of(view, &filter, &mut |_| Some("0-1".into()));
            assert!(same(&sh, &base, &threads, &filter, "0-1"));
            // the counters move: same layout
            let moved = snap(&A.replace("5 6", "50 60").replace("1 2", "9 9"), STAT);
            assert!(same(&sh, &moved, &threads, &filter, "0-1"));
            // what changes the layout
            assert!(!same(&sh, &base, &threads, &filter, "1"), "affinity");
            assert!(!same(&sh, &base, &[], &filter, "0-1"), "threads");
            let restarted = [ThreadCpu {
                pid: Some(15),
                ..t("ksoftirqd/0")
            }];
            assert!(
                !same(&sh, &base, &restarted, &filter, "0-1"),
                "a thread's PID"
            );
            let desc = snap(&A.replace("PCI-MSI b", "PCI-MSI c"), STAT);
            assert!(!same(&sh, &desc, &threads, &filter, "0-1"), "description");
            let gone = snap(
                "  CPU0 CPU1\n 24: 1 2 PCI-MSI a\nLOC: 5 6 Local timer\n",
                STAT,
            );
            assert!(!same(&sh, &gone, &threads, &filter, "0-1"), "row gone");
            let cpu = snap(
                "  CPU0\n 24: 1 PCI-MSI a\n 24: 3 PCI-MSI b\nLOC: 5 Local timer\n",
                STAT,
            );
            assert!(!same(&sh, &cpu, &threads, &filter, "0-1"), "CPU gone");
            let stat = snap(A, &STAT.replace("ctxt 7\n", ""));
            assert!(
                !same(&sh, &stat, &threads, &filter, "0-1"),
                "stat line gone"
            );
        }
    }
}
