//! The one rule for filters that select nothing, or less than asked:
//! `--cpus` ids absent from the sampled files and an `--irq` that keeps no
//! interrupt row. Every subcommand that takes these filters says the same
//! warnings on stderr; this module only builds the text.

use crate::export::plural;
use irqlab_core::{CpuList, Snapshot};
use std::collections::BTreeSet;

/// Warnings for filters that select nothing or less than asked: `--cpus`
/// ids absent from the sampled files (`present`), an `--irq` that keeps no
/// interrupt row (`irq_rows`: rows kept, when the section exists).
pub fn filter_warnings(
    cpus: Option<&str>,
    present: &BTreeSet<u32>,
    irq: Option<&str>,
    irq_rows: Option<usize>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(list) = cpus.and_then(|s| CpuList::parse_list(s.as_bytes(), "--cpus").ok()) {
        let (shown, absent): (Vec<u32>, Vec<u32>) = list.iter().partition(|c| present.contains(c));
        let online = CpuList::from_cpus(present.iter().copied());
        if shown.is_empty() {
            out.push(format!(
                "irqlab: warning: --cpus {list} selects no CPU: the sampled files list {} ({online})",
                plural(present.len(), "CPU")
            ));
        } else if !absent.is_empty() {
            let absent = CpuList::from_cpus(absent);
            let shown = CpuList::from_cpus(shown);
            out.push(format!(
                "irqlab: warning: --cpus {list}: {absent} not online (not in the sampled files); showing {shown}"
            ));
        }
    }
    if let (Some(re), Some(0)) = (irq, irq_rows) {
        out.push(format!(
            "irqlab: warning: --irq {re:?} matches no interrupt row"
        ));
    }
    out
}

/// [`filter_warnings`] for a sampled snapshot (`top --batch`'s baseline):
/// the CPUs its files list ([`cpus_of`]) and the interrupt rows
/// `rows_filter` keeps (the filter of the rows as read).
pub fn snapshot_warnings(
    cpus: Option<&str>,
    irq: Option<&str>,
    snap: &Snapshot,
    rows_filter: &crate::filter::Filter,
) -> Vec<String> {
    let mut present = BTreeSet::new();
    cpus_of(snap, &mut present);
    let rows = snap.interrupts.as_ref().map(|i| {
        i.rows()
            .iter()
            .filter(|r| rows_filter.keep_irq_row(r))
            .count()
    });
    filter_warnings(cpus, &present, irq, rows)
}

/// CPU ids listed by any file of `snap`.
/// The online CPUs the snapshot's files list: `/proc/interrupts` and
/// `/proc/stat` list online CPUs; `/proc/softirqs` lists every possible
/// CPU (an offline one keeps its frozen counts), so it counts only when
/// neither of the others was read.
pub fn cpus_of(snap: &Snapshot, into: &mut BTreeSet<u32>) {
    if let Some(i) = &snap.interrupts {
        into.extend(i.cpus.iter().copied());
    }
    if let Some(s) = &snap.stat {
        into.extend(s.cpus.iter().filter_map(|t| t.cpu));
    }
    if snap.interrupts.is_none() && snap.stat.is_none() {
        if let Some(s) = &snap.softirqs {
            into.extend(s.cpus.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_name_what_selects_nothing() {
        let two: BTreeSet<u32> = [0, 1].into();
        let w = filter_warnings(Some("99"), &two, None, Some(3));
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("irqlab: warning: --cpus 99 selects no CPU"));
        assert!(w[0].contains("2 CPUs (0-1)"), "{}", w[0]);
        let w = filter_warnings(Some("1,6-7"), &[0, 1, 7].into(), None, None);
        assert!(w[0].contains(": 6 not online"), "{}", w[0]);
        assert!(w[0].ends_with("showing 1,7"), "{}", w[0]);
        let w = filter_warnings(None, &two, Some("nope"), Some(0));
        assert_eq!(
            w,
            ["irqlab: warning: --irq \"nope\" matches no interrupt row"]
        );
        assert!(filter_warnings(Some("0"), &two, Some("x"), Some(1)).is_empty());
        assert!(filter_warnings(None, &two, Some("x"), None).is_empty());
    }
}
