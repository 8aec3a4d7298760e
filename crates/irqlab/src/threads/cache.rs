//! Per-boot cache of the kernel threads' names (`threads.rs`): finding
//! the interrupt threads means reading the `comm` of every child of
//! kthreadd (57 here, thousands on a big machine: ~0.3 ms of this VM's
//! 1–1.5 ms start-up budget), so the names are kept in a small file and,
//! on the next start, read again only for the children the file cannot
//! vouch for.
//!
//! Why the file can vouch: kthreadd's `children` list is in creation
//! order, and a pid names one process while it lives. The file holds the
//! list read at boot-clock tick `ticks` (taken before the read) with
//! each child's mark. At the next start, let X be the last child of the
//! new list that the file lists. If X's start time (`/proc/X/stat` field
//! 22, the same boot clock in the same ticks) is before `ticks`, X is the
//! process the file saw, and every child before X in the new list, made
//! before X, was alive then and is in the file with its name: only the
//! children after X (made since) are read. Otherwise (a pid reused, a
//! child before X missing from the file), everything is read again. A
//! child whose `comm` still read `kthreadd` (a thread being created, not
//! yet named) or could not be read is marked unknown and read again.
//!
//! The file is `$XDG_CACHE_HOME/irqlab/threads` (beside the strategy
//! cache, `sampler/strategy_cache.rs`), replaced whole by a rename when
//! the list changed, only for the live root `/` (a captured tree's start
//! times are not this boot's). A missing, foreign-boot or corrupt file
//! only means reading every name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// First line of the file (format version).
const TAG: &str = "irqlab-threads-1";
/// A file larger than this is not ours.
const MAX_LEN: u64 = 4 << 20;
/// Characters a name in the file cannot hold: a field or line would end
/// there, or (a carriage return ending the name) the name would read back
/// without it.
const NOT_IN_A_NAME: [char; 3] = ['\t', '\n', '\r'];

/// What the file knows of one child of kthreadd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// An interrupt thread (`threads::classify` knows it), by name.
    Target(String),
    /// Any other kernel thread.
    Other,
    /// Not known: unreadable, or not yet named (`kthreadd`).
    Unknown,
}

/// The file's content: the list of kthreadd's children read at boot
/// tick `ticks` of boot `boot_id`, with their marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    pub boot_id: String,
    pub ticks: u64,
    pub kids: Vec<(u32, Mark)>,
}

/// The cache file of this user, if a cache directory is known.
pub fn path() -> Option<PathBuf> {
    crate::sampler::strategy_cache::path().and_then(|p| Some(p.parent()?.join("threads")))
}

/// The cache in the file at `path`, `None` when absent or not one.
pub fn load(path: &Path) -> Option<Cache> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_LEN {
        return None;
    }
    parse(&std::fs::read_to_string(path).ok()?)
}

/// Write `c` to `path` whole (a temporary file renamed over it). Best
/// effort: an error only means reading the names again next time.
pub fn store(path: &Path, c: &Cache) -> std::io::Result<()> {
    crate::sampler::strategy_cache::replace_whole(path, format(c).as_bytes())
}

fn parse(text: &str) -> Option<Cache> {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next()?.split('\t').collect();
    let [TAG, boot_id, ticks] = head[..] else {
        return None;
    };
    if boot_id.is_empty() {
        return None;
    }
    let mut kids = Vec::new();
    for line in lines {
        let (pid, rest) = line.split_once('\t')?;
        let mark = match rest.split_once('\t') {
            Some(("t", name)) if !name.is_empty() && !name.contains(NOT_IN_A_NAME) => {
                Mark::Target(name.to_string())
            }
            None if rest == "-" => Mark::Other,
            None if rest == "?" => Mark::Unknown,
            _ => return None,
        };
        kids.push((pid.parse().ok()?, mark));
    }
    Some(Cache {
        boot_id: boot_id.to_string(),
        ticks: ticks.parse().ok()?,
        kids,
    })
}

fn format(c: &Cache) -> String {
    let mut s = format!("{TAG}\t{}\t{}\n", c.boot_id, c.ticks);
    for (pid, mark) in &c.kids {
        match mark {
            Mark::Target(name) => s.push_str(&format!("{pid}\tt\t{name}\n")),
            Mark::Other => s.push_str(&format!("{pid}\t-\n")),
            Mark::Unknown => s.push_str(&format!("{pid}\t?\n")),
        }
    }
    s
}

/// The mark of a child whose `comm` read `name` (`None`: unreadable).
fn mark_of(name: Option<String>) -> Mark {
    match name {
        Some(n) if n == "kthreadd" || n.contains(NOT_IN_A_NAME) => Mark::Unknown,
        Some(n) if super::classify(&n).is_some() => Mark::Target(n),
        Some(_) => Mark::Other,
        None => Mark::Unknown,
    }
}

/// The marks of `kids` (kthreadd's children of boot `boot_id`, listed
/// after boot tick `ticks`): from `cached` where it vouches for them (see
/// the module documentation), else from `comm_of`. `start_of` gives a
/// pid's start time in boot ticks. Pure but for the two readers. The
/// flag says whether `cached` vouched for the children it knew.
pub fn resolve(
    cached: Option<&Cache>,
    boot_id: &str,
    kids: &[u32],
    ticks: u64,
    start_of: impl FnOnce(u32) -> Option<u64>,
    mut comm_of: impl FnMut(u32) -> Option<String>,
) -> (Cache, bool) {
    let known = cached.filter(|c| c.boot_id == boot_id).and_then(|c| {
        let map: HashMap<u32, &Mark> = c.kids.iter().map(|(p, m)| (*p, m)).collect();
        let x = kids.iter().rposition(|p| map.contains_key(p))?;
        let made_before = start_of(kids[x]).is_some_and(|s| s < c.ticks);
        let all_known = kids[..x].iter().all(|p| map.contains_key(p));
        (made_before && all_known).then_some((x + 1, map))
    });
    let marks = kids.iter().enumerate().map(|(i, &pid)| {
        let old = known
            .as_ref()
            .filter(|(n, _)| i < *n)
            .and_then(|(_, map)| map.get(&pid).copied())
            .filter(|m| **m != Mark::Unknown);
        let mark = match old {
            Some(m) => m.clone(),
            None => mark_of(comm_of(pid)),
        };
        (pid, mark)
    });
    let c = Cache {
        boot_id: boot_id.to_string(),
        ticks,
        kids: marks.collect(),
    };
    (c, known.is_some())
}

/// Whether `new` says nothing `old` did not (same boot and children,
/// same marks) and `old` vouched for them (`vouched`, from [`resolve`]):
/// then `old`, with its earlier tick, stays. A file that could not vouch
/// (a reused pid) is replaced even when the names came out the same, or
/// every later start would read them all again.
pub fn same(old: Option<&Cache>, new: &Cache, vouched: bool) -> bool {
    vouched && old.is_some_and(|o| o.boot_id == new.boot_id && o.kids == new.kids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn cache(ticks: u64, kids: &[(u32, &str)]) -> Cache {
        Cache {
            boot_id: "b1".into(),
            ticks,
            kids: kids
                .iter()
                .map(|&(p, n)| (p, mark_of(Some(n.to_string()))))
                .collect(),
        }
    }

    /// resolve against a machine whose comm and start times are `names`
    /// and `starts`: the cache and the pids whose comm was read.
    fn run(
        cached: Option<&Cache>,
        kids: &[u32],
        names: &[(u32, &str)],
        start: u64,
    ) -> (Cache, Vec<u32>, bool) {
        let read = RefCell::new(Vec::new());
        let (c, vouched) = resolve(
            cached,
            "b1",
            kids,
            500,
            |_| Some(start),
            |pid| {
                read.borrow_mut().push(pid);
                names
                    .iter()
                    .find(|(p, _)| *p == pid)
                    .map(|(_, n)| n.to_string())
            },
        );
        (c, read.into_inner(), vouched)
    }

    const MACHINE: [(u32, &str); 5] = [
        (3, "pool_workqueue_release"),
        (14, "ksoftirqd/0"),
        (22, "ksoftirqd/1"),
        (50, "irq/24-ACPI:Ged"),
        (60, "kworker/0:1"),
    ];

    #[test]
    fn thread_names_come_from_the_boot_cache_when_the_kthread_list_is_unchanged() {
        let kids = [3, 14, 22, 50, 60];
        let (first, read, vouched) = run(None, &kids, &MACHINE, 7);
        assert_eq!(read, kids, "no cache: every name read");
        assert_eq!(first, cache(500, &MACHINE));
        assert!(!same(None, &first, vouched));
        let old = Cache {
            ticks: 400,
            ..first
        };
        let (again, read, vouched) = run(Some(&old), &kids, &MACHINE, 7);
        assert!(read.is_empty(), "read {read:?}");
        assert!(same(Some(&old), &again, vouched), "nothing to store");
    }

    #[test]
    fn only_children_made_since_are_read() {
        let old = cache(400, &MACHINE);
        // 60 exited, 61 and 62 were made: only they are read
        let now = [3, 14, 22, 50, 61, 62];
        let names = [(61, "irq/30-virtio0"), (62, "kworker/1:2")];
        let (c, read, vouched) = run(Some(&old), &now, &names, 7);
        assert_eq!(read, [61, 62]);
        assert_eq!(c.kids[4], (61, Mark::Target("irq/30-virtio0".into())));
        assert!(!same(Some(&old), &c, vouched));
    }

    #[test]
    fn a_reused_pid_or_a_foreign_boot_reads_every_name_again() {
        let old = cache(400, &MACHINE);
        let kids = [3, 14, 22, 50, 60];
        // the last listed child started at or after the cached tick: it
        // may be a new process under an old pid
        let (c, read, vouched) = run(Some(&old), &kids, &MACHINE, 400);
        assert_eq!(read, kids);
        // the same names, but the file could not vouch: it is replaced
        // (its tick moves on), else every start would read them all
        assert_eq!(c.kids, old.kids);
        assert!(!same(Some(&old), &c, vouched));
        let other_boot = Cache {
            boot_id: "b0".into(),
            ..old.clone()
        };
        let (_, read, _) = run(Some(&other_boot), &kids, &MACHINE, 7);
        assert_eq!(read, kids);
        // a child before the last known one that the cache lacks
        let (_, read, _) = run(Some(&old), &[3, 9, 14, 22, 50, 60], &MACHINE, 7);
        assert_eq!(read.len(), 6);
    }

    #[test]
    fn unnamed_and_unreadable_children_are_read_again() {
        let names = [(14, "kthreadd"), (22, "ksoftirqd/1")];
        let (c, _, _) = run(None, &[14, 22, 99], &names, 7);
        assert_eq!(
            c.kids,
            [
                (14, Mark::Unknown),
                (22, Mark::Target("ksoftirqd/1".into())),
                (99, Mark::Unknown)
            ]
        );
        let old = Cache { ticks: 400, ..c };
        let (c, read, _) = run(Some(&old), &[14, 22, 99], &MACHINE, 7);
        assert_eq!(read, [14, 99]);
        assert_eq!(c.kids[0], (14, Mark::Target("ksoftirqd/0".into())));
    }

    #[test]
    fn a_name_the_file_cannot_hold_is_read_again() {
        for name in ["irq/9-x\r", "irq/9\tx", "irq/9\nx"] {
            assert_eq!(mark_of(Some(name.into())), Mark::Unknown, "{name:?}");
        }
    }

    #[test]
    fn file_round_trips_and_a_corrupt_file_is_none() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("irqlab/threads");
        assert_eq!(load(&p), None);
        let mut c = cache(400, &MACHINE);
        c.kids.push((70, Mark::Unknown));
        c.kids.push((71, Mark::Target("irq/140-s-PCIe PME".into())));
        store(&p, &c).unwrap();
        assert_eq!(load(&p), Some(c));
        for bad in [
            "",
            "irqlab-threads-0\tb1\t4\n",
            "irqlab-threads-1\tb1\tx\n",
            "irqlab-threads-1\tb1\t4\n3\tz\n",
            "irqlab-threads-1\tb1\t4\n3\tt\t\n",
            "irqlab-threads-1\t\t4\n",
            "irqlab-threads-1\tb1\t4\n3\tt\tirq/9-x\r",
            "irqlab-threads-1\tb1\t4\n3\tt\tirq/9\tx\n",
        ] {
            std::fs::write(&p, bad).unwrap();
            assert_eq!(load(&p), None, "{bad:?}");
        }
    }
}
