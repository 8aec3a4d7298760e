//! The one rule for filters that select nothing, or less than asked:
//! `--cpus` ids absent from the sampled files and an `--irq` that keeps no
//! interrupt row. Every subcommand that takes these filters says the same
//! warnings on stderr; this module only builds the text.

use crate::export::plural;
use irqlab_core::paths;
use irqlab_core::stat::Stat;
use irqlab_core::{CpuList, Snapshot};
use std::collections::BTreeSet;

/// The CPUs the sampled files list, as the `--cpus` warnings need them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ListedCpus {
    /// The online CPUs ([`cpus_of`]).
    pub online: BTreeSet<u32>,
    /// The CPUs `/proc/softirqs` lists, as read: every possible CPU (an
    /// offline one keeps its column there, and its softirqs are shown).
    pub softirqs: BTreeSet<u32>,
    /// Whether `/proc/interrupts` was read: it lacks offline CPUs.
    pub interrupts_read: bool,
    /// Whether `/proc/stat` was read: it lacks offline CPUs.
    pub stat_read: bool,
}

impl ListedCpus {
    /// CPUs some sampled file lists.
    pub fn contains(&self, cpu: u32) -> bool {
        self.online.contains(&cpu) || self.softirqs_only(cpu)
    }

    /// Whether only `/proc/softirqs` lists `cpu` (an offline CPU): it is
    /// not online, and `/proc/interrupts` or `/proc/stat` was read (with
    /// neither, the online CPUs are `/proc/softirqs`' own).
    pub fn softirqs_only(&self, cpu: u32) -> bool {
        (self.interrupts_read || self.stat_read)
            && self.softirqs.contains(&cpu)
            && !self.online.contains(&cpu)
    }

    /// Every CPU some sampled file lists, ascending.
    pub fn all(&self) -> BTreeSet<u32> {
        let only = self.softirqs.iter().filter(|&&c| self.softirqs_only(c));
        self.online.iter().chain(only).copied().collect()
    }

    /// Add the CPUs `/proc/softirqs` lists (`softirqs`).
    pub fn add_softirqs(&mut self, softirqs: &[u32]) {
        self.softirqs.extend(softirqs.iter().copied());
    }
}

/// The CPUs `snap`'s files list, into `into` ([`cpus_of`], which files
/// were read, and the CPUs `/proc/softirqs` lists).
pub fn listed_of(snap: &Snapshot, into: &mut ListedCpus) {
    cpus_of(snap, &mut into.online);
    into.interrupts_read |= snap.interrupts.is_some();
    into.stat_read |= snap.stat.is_some();
    if let Some(s) = &snap.softirqs {
        into.add_softirqs(&s.cpus);
    }
}

/// Warnings for filters that select nothing or less than asked: `--cpus`
/// ids that no sampled file lists (`listed`), or that only
/// `/proc/softirqs` lists (offline CPUs: their softirqs are shown, no
/// interrupts or CPU time), an `--irq` that keeps no interrupt row
/// (`irq_rows`: rows kept, when the section exists).
pub fn filter_warnings(
    cpus: Option<&str>,
    listed: &ListedCpus,
    irq: Option<&str>,
    irq_rows: Option<usize>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(list) = cpus.and_then(|s| CpuList::parse_list(s.as_bytes(), "--cpus").ok()) {
        let (shown, absent): (Vec<u32>, Vec<u32>) = list.iter().partition(|&c| listed.contains(c));
        let all = listed.all();
        if shown.is_empty() {
            out.push(format!(
                "irqlab: warning: --cpus {list} selects no CPU: the sampled files list {} ({})",
                plural(all.len(), "CPU"),
                CpuList::from_cpus(all.iter().copied())
            ));
        } else if !absent.is_empty() {
            let absent = CpuList::from_cpus(absent);
            let shown = CpuList::from_cpus(shown.iter().copied());
            out.push(format!(
                "irqlab: warning: --cpus {list}: {absent} not online (not in the sampled files); showing {shown}"
            ));
        }
        out.extend(softirqs_only_warning(&list, &shown, listed));
    }
    out.extend(irq_row_warning(irq, None, irq_rows, || irq_rows));
    out
}

/// [`filter_warnings`] when `--exclude` may be given too: `kept` are the
/// interrupt rows both flags keep (when the section exists), `by_irq`
/// counts those `--irq` alone keeps (every row without it), asked only
/// when `kept` is 0 and `--exclude` is given. `--irq` is blamed only when
/// it alone matches no row; when `--exclude` removed every row, it is.
pub fn filter_warnings_excluding(
    cpus: Option<&str>,
    listed: &ListedCpus,
    irq: Option<&str>,
    exclude: Option<&str>,
    kept: Option<usize>,
    by_irq: impl FnOnce() -> Option<usize>,
) -> Vec<String> {
    let mut out = filter_warnings(cpus, listed, None, kept);
    out.extend(irq_row_warning(irq, exclude, kept, by_irq));
    out
}

/// The warning for row filters that keep no interrupt row (`kept`
/// `Some(0)`): `--irq` matching none by itself (`by_irq`), else
/// `--exclude` removing every row `--irq` (or the file) has.
fn irq_row_warning(
    irq: Option<&str>,
    exclude: Option<&str>,
    kept: Option<usize>,
    by_irq: impl FnOnce() -> Option<usize>,
) -> Option<String> {
    if kept != Some(0) {
        return None;
    }
    let by_irq = match exclude {
        Some(_) => by_irq(),
        None => Some(0),
    };
    match (irq, exclude, by_irq) {
        (Some(re), _, Some(0)) => Some(format!(
            "irqlab: warning: --irq {re:?} matches no interrupt row"
        )),
        (Some(re), Some(ex), Some(_)) => Some(format!(
            "irqlab: warning: --exclude {ex:?} removes every interrupt row --irq {re:?} keeps"
        )),
        (None, Some(ex), Some(n)) if n > 0 => Some(format!(
            "irqlab: warning: --exclude {ex:?} removes every interrupt row"
        )),
        _ => None,
    }
}

/// The interrupt rows `rows_filter` keeps of `rows`, and a closure
/// counting those its `--irq` alone keeps (for
/// [`filter_warnings_excluding`]: [`snapshot_warnings`]).
fn kept_rows<'a>(
    rows: &'a [irqlab_core::IrqRow],
    rows_filter: &'a crate::filter::Filter,
) -> (usize, impl FnOnce() -> Option<usize> + 'a) {
    let kept = rows.iter().filter(|r| rows_filter.keep_irq_row(r)).count();
    let by_irq = move || {
        let irq_only = crate::filter::Filter {
            irq: rows_filter.irq.clone(),
            ..crate::filter::Filter::default()
        };
        Some(rows.iter().filter(|r| irq_only.keep_irq_row(r)).count())
    };
    (kept, by_irq)
}

/// The warning for the CPUs of `shown` (selected by `--cpus {list}`)
/// that only `/proc/softirqs` lists: which files have none of them.
pub fn softirqs_only_warning(list: &CpuList, shown: &[u32], listed: &ListedCpus) -> Option<String> {
    let only: Vec<u32> = shown
        .iter()
        .copied()
        .filter(|&c| listed.softirqs_only(c))
        .collect();
    let (cpu, have, its) = match only.len() {
        0 => return None,
        1 => ("CPU", "has", "its"),
        _ => ("CPUs", "have", "their"),
    };
    let lacking = match (listed.interrupts_read, listed.stat_read) {
        (true, true) => "no column in /proc/interrupts and no line in /proc/stat",
        (true, false) => "no column in /proc/interrupts",
        (false, _) => "no line in /proc/stat",
    };
    Some(format!(
        "irqlab: warning: --cpus {list}: {cpu} {} {have} {lacking} (offline?); {its} softirqs are shown",
        CpuList::from_cpus(only)
    ))
}

/// [`filter_warnings`] for a sampled snapshot (the baseline of `top` and
/// `replay`, batch or interactive): the CPUs its files list ([`cpus_of`])
/// and the interrupt rows `rows_filter` keeps (the filter of the rows as
/// read). `cpus` and `irq` are the flags' text.
pub fn snapshot_warnings(
    cpus: Option<&str>,
    irq: Option<&str>,
    snap: &Snapshot,
    rows_filter: &crate::filter::Filter,
) -> Vec<String> {
    let mut listed = ListedCpus::default();
    listed_of(snap, &mut listed);
    let exclude = rows_filter.exclude.as_ref().map(|r| r.as_str());
    let Some(i) = &snap.interrupts else {
        return filter_warnings(cpus, &listed, irq, None);
    };
    let (kept, by_irq) = kept_rows(i.rows(), rows_filter);
    filter_warnings_excluding(cpus, &listed, irq, exclude, Some(kept), by_irq)
}

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

/// A note when the files of one sample disagree on the CPUs:
/// `/proc/interrupts`' header (`interrupts`) and `/proc/stat`'s `cpuN`
/// lines both list the online CPUs, and `/proc/softirqs` (`softirqs`)
/// every possible CPU, so it holds theirs. `None` on a consistent tree
/// (compared in place, nothing allocated); `root` names the files as read.
pub fn cpu_disagreement(
    root: &std::path::Path,
    interrupts: Option<&[u32]>,
    stat: Option<&Stat>,
    softirqs: Option<&[u32]>,
) -> Option<String> {
    let stat_ids = || stat.map(|s| s.cpus.iter().filter_map(|t| t.cpu));
    let online = |i: &[u32]| -> bool { stat_ids().is_none_or(|ids| same_cpus(ids, i)) };
    let in_softirqs = |ids: &mut dyn Iterator<Item = u32>| -> bool {
        let Some(s) = softirqs else { return true };
        // /proc/softirqs lists its ids ascending: a binary search finds
        // each, and a scan on a miss covers a header in another order
        for c in ids {
            if s.binary_search(&c).is_err() && !s.contains(&c) {
                return false;
            }
        }
        true
    };
    let agree = match interrupts {
        Some(i) => online(i) && in_softirqs(&mut i.iter().copied()),
        None => stat_ids().is_none_or(|mut ids| in_softirqs(&mut ids)),
    };
    if agree {
        return None;
    }
    let path = |rel: &str| root.join(rel).display().to_string();
    let listed = |name: &str, ids: &mut dyn Iterator<Item = u32>| {
        let cpus: Vec<u32> = ids.collect();
        let n = plural(cpus.len(), "CPU");
        format!("{} lists {n} ({})", path(name), CpuList::from_cpus(cpus))
    };
    let mut parts = Vec::new();
    if let Some(i) = interrupts {
        parts.push(listed(paths::PROC_INTERRUPTS, &mut i.iter().copied()));
    }
    if let Some(mut ids) = stat_ids() {
        parts.push(listed(paths::PROC_STAT, &mut ids));
    }
    if let Some(s) = softirqs {
        parts.push(listed(paths::PROC_SOFTIRQS, &mut s.iter().copied()));
    }
    Some(format!(
        "irqlab: note: the files disagree on the CPUs: {}; each section shows its own file's",
        parts.join(", ")
    ))
}

/// Whether `ids` are the CPUs of `cpus` in any order: the same order
/// compared in place, another order (a file the kernel does not print,
/// its columns still mapped by id) sorted first.
fn same_cpus(ids: impl Iterator<Item = u32> + Clone, cpus: &[u32]) -> bool {
    if ids.clone().eq(cpus.iter().copied()) {
        return true;
    }
    let mut a: Vec<u32> = ids.collect();
    let mut b = cpus.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// [`cpu_disagreement`] of a sampled snapshot.
pub fn snapshot_disagreement(root: &std::path::Path, snap: &Snapshot) -> Option<String> {
    cpu_disagreement(
        root,
        snap.interrupts.as_ref().map(|i| i.cpus.as_slice()),
        snap.stat.as_ref(),
        snap.softirqs.as_ref().map(|s| s.cpus.as_slice()),
    )
}

/// Snapshots for tests (here, in record's and in replay's).
#[cfg(test)]
pub(crate) mod fixtures {
    use irqlab_core::{Interrupts, Snapshot, Softirqs};

    /// CPUs 0-2 online and CPU 3 offline: `/proc/interrupts` lists three
    /// CPUs, `/proc/softirqs` four; no `/proc/stat`.
    pub(crate) fn cpu3_offline() -> Snapshot {
        let irqs = "           CPU0       CPU1       CPU2\n  1:          1          2          3  IO-APIC   1-edge      i8042\n";
        let soft = "                    CPU0       CPU1       CPU2       CPU3\n          HI:          1          0          0          4\n";
        Snapshot {
            interrupts: Some(Interrupts::parse(irqs.as_bytes()).unwrap()),
            softirqs: Some(Softirqs::parse(soft.as_bytes()).unwrap()),
            ..Snapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--irq` is blamed only when it alone keeps no row; an `--exclude`
    /// that removed every row is named instead, with or without `--irq`;
    /// `by_irq` is asked only then.
    #[test]
    fn empty_selection_names_the_flag_that_emptied_it() {
        let l = ListedCpus::default();
        let w = |irq, ex, kept, by: Option<usize>| {
            filter_warnings_excluding(None, &l, irq, ex, kept, || by)
        };
        assert_eq!(
            w(Some("^LOC$"), Some("^LOC$"), Some(0), Some(1)),
            ["irqlab: warning: --exclude \"^LOC$\" removes every interrupt row --irq \"^LOC$\" keeps"]
        );
        assert_eq!(
            w(None, Some(""), Some(0), Some(9)),
            ["irqlab: warning: --exclude \"\" removes every interrupt row"]
        );
        assert_eq!(
            w(Some("x"), Some("y"), Some(0), Some(0)),
            ["irqlab: warning: --irq \"x\" matches no interrupt row"]
        );
        assert!(
            w(None, Some("y"), Some(0), Some(0)).is_empty(),
            "no row at all"
        );
        assert!(w(Some("x"), Some("y"), Some(2), Some(5)).is_empty());
        assert!(
            w(Some("x"), Some("y"), None, Some(0)).is_empty(),
            "no section"
        );
        let asked = std::cell::Cell::new(false);
        let by = || {
            asked.set(true);
            Some(0)
        };
        filter_warnings_excluding(None, &l, Some("x"), Some("y"), Some(3), by);
        assert!(!asked.get());
    }

    #[test]
    fn files_that_disagree_on_the_cpus_get_one_note() {
        let root = std::path::Path::new("/t");
        let stat = |cpus: &[u32]| {
            let mut text = String::from("cpu  1 0 1 1 0 0 0 0 0 0\n");
            for c in cpus {
                text.push_str(&format!("cpu{c} 1 0 1 1 0 0 0 0 0 0\n"));
            }
            Stat::parse(text.as_bytes()).unwrap()
        };
        let four: &[u32] = &[0, 1, 2, 3];
        // consistent: the same online CPUs; softirqs lists a possible one more
        let two = stat(&[0, 1, 3]);
        assert_eq!(
            cpu_disagreement(root, Some(&[0, 1, 3]), Some(&two), Some(four)),
            None
        );
        assert_eq!(cpu_disagreement(root, None, None, Some(four)), None);
        let note = cpu_disagreement(root, Some(four), Some(&stat(&[0, 1])), Some(four)).unwrap();
        assert_eq!(
            note,
            "irqlab: note: the files disagree on the CPUs: /t/proc/interrupts lists 4 CPUs \
             (0-3), /t/proc/stat lists 2 CPUs (0-1), /t/proc/softirqs lists 4 CPUs (0-3); \
             each section shows its own file's"
        );
        // softirqs lacks an online CPU
        assert!(cpu_disagreement(root, Some(four), None, Some(&[0, 1])).is_some());
        assert!(cpu_disagreement(root, None, Some(&stat(&[0, 5])), Some(four)).is_some());
    }

    /// CPUs `online` as `/proc/interrupts` and `/proc/stat` list them.
    fn online(cpus: &[u32]) -> ListedCpus {
        ListedCpus {
            online: cpus.iter().copied().collect(),
            interrupts_read: true,
            stat_read: true,
            ..ListedCpus::default()
        }
    }

    #[test]
    fn warnings_name_what_selects_nothing() {
        let two = online(&[0, 1]);
        let w = filter_warnings(Some("99"), &two, None, Some(3));
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("irqlab: warning: --cpus 99 selects no CPU"));
        assert!(w[0].contains("2 CPUs (0-1)"), "{}", w[0]);
        let w = filter_warnings(Some("1,6-7"), &online(&[0, 1, 7]), None, None);
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

    #[test]
    fn an_offline_cpu_only_softirqs_lists_is_shown_and_said_so() {
        // CPUs 0-2 online, 3 offline: /proc/softirqs lists all 4
        let mut listed = online(&[0, 1, 2]);
        listed.add_softirqs(&[0, 1, 2, 3]);
        let w = filter_warnings(Some("3"), &listed, None, None);
        assert_eq!(
            w,
            [
                "irqlab: warning: --cpus 3: CPU 3 has no column in /proc/interrupts and no line \
              in /proc/stat (offline?); its softirqs are shown"
            ]
        );
        let w = filter_warnings(Some("1,3,9"), &listed, None, None);
        assert_eq!(
            w,
            [
                "irqlab: warning: --cpus 1,3,9: 9 not online (not in the sampled files); showing 1,3",
                "irqlab: warning: --cpus 1,3,9: CPU 3 has no column in /proc/interrupts and no line \
                 in /proc/stat (offline?); its softirqs are shown"
            ]
        );
        let w = filter_warnings(Some("99"), &listed, None, None);
        assert_eq!(
            w,
            ["irqlab: warning: --cpus 99 selects no CPU: the sampled files list 4 CPUs (0-3)"]
        );
        assert!(filter_warnings(Some("0-2"), &listed, None, None).is_empty());
        // only /proc/interrupts read
        listed.stat_read = false;
        let w = filter_warnings(Some("2-3"), &listed, None, None);
        assert_eq!(
            w,
            [
                "irqlab: warning: --cpus 2-3: CPU 3 has no column in /proc/interrupts (offline?); \
              its softirqs are shown"
            ]
        );
        // only /proc/softirqs read: every CPU it lists is online
        let mut soft = ListedCpus::default();
        soft.add_softirqs(&[0, 1, 2, 3]);
        assert!(!(0..4).any(|c| soft.softirqs_only(c)));
        // the online CPUs known after /proc/softirqs: the same CPU 3
        soft.online = [0, 1, 2].into();
        soft.interrupts_read = true;
        assert_eq!(soft.all(), [0, 1, 2, 3].into());
        assert!(soft.softirqs_only(3) && !soft.softirqs_only(2));
    }

    #[test]
    fn a_snapshot_lists_the_cpus_only_softirqs_has() {
        let snap = fixtures::cpu3_offline();
        let mut listed = ListedCpus::default();
        listed_of(&snap, &mut listed);
        assert_eq!(listed.online, [0, 1, 2].into());
        let only: Vec<u32> = (0..5).filter(|&c| listed.softirqs_only(c)).collect();
        assert_eq!(only, [3]);
        assert_eq!(listed.all(), [0, 1, 2, 3].into());
        assert!(listed.interrupts_read && !listed.stat_read);
        let w = snapshot_warnings(Some("3"), None, &snap, &crate::filter::Filter::default());
        assert_eq!(
            w,
            [
                "irqlab: warning: --cpus 3: CPU 3 has no column in /proc/interrupts (offline?); \
              its softirqs are shown"
            ]
        );
    }
}
