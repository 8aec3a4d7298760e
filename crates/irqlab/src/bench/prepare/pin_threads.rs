//! Finding threads by name (`/proc/*/task/*/comm`, kernel threads such as
//! `irq/45-eth0` and `ksoftirqd/0` included) through HostFs, and pinning
//! them through the guard.
//!
//! Patterns are globs (`*`, `?`, `[...]`, whole name) or, after `re:`,
//! regular expressions (whole name). Must not change anything except
//! through [`SystemGuard`].

use super::Outcome;
use crate::guard::SystemGuard;
use crate::host::HostFs;
use anyhow::{bail, Context, Result};
use irqlab_core::paths;
use irqlab_core::CpuList;
use regex::Regex;

/// A thread found under `proc/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Process id (thread group).
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The thread's name (`comm`).
    pub comm: String,
}

/// A compiled thread-name pattern.
#[derive(Debug, Clone)]
pub struct NamePattern {
    text: String,
    re: Regex,
}

impl NamePattern {
    /// `re:REGEX` or a glob; both must match the whole name.
    pub fn parse(text: &str) -> Result<Self> {
        let body = match text.strip_prefix("re:") {
            Some(re) => re.to_string(),
            None => glob_to_regex(text),
        };
        let re = Regex::new(&format!("^(?:{body})$"))
            .with_context(|| format!("thread pattern {text:?} is not valid"))?;
        Ok(NamePattern {
            text: text.to_string(),
            re,
        })
    }

    /// True if `name` matches.
    pub fn is_match(&self, name: &str) -> bool {
        self.re.is_match(name)
    }
}

fn glob_to_regex(glob: &str) -> String {
    let mut out = String::new();
    let mut in_class = false;
    for c in glob.chars() {
        match c {
            '[' if !in_class => {
                in_class = true;
                out.push('[');
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '!' if in_class && out.ends_with('[') => out.push('^'),
            _ if in_class => out.push(c),
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            _ => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    out
}

/// Every thread under `fs`'s `proc/` (sorted by pid, tid).
pub fn all_threads(fs: &HostFs) -> Vec<ThreadInfo> {
    let mut out = Vec::new();
    for pid in fs
        .list_dir(paths::PROC)
        .iter()
        .filter_map(|p| p.parse::<i32>().ok())
    {
        let tids = fs.list_dir(&paths::task_dir(pid));
        for tid in tids.iter().filter_map(|t| t.parse::<i32>().ok()) {
            if let Some(comm) = fs.read_attr(&paths::task_file(pid, tid, "comm")) {
                out.push(ThreadInfo { pid, tid, comm });
            }
        }
    }
    out.sort_by_key(|t| (t.pid, t.tid));
    out
}

/// `PF_NO_SETAFFINITY` in `/proc/PID/task/TID/stat` field 9: a per-CPU
/// kernel thread (`ksoftirqd/N`, `migration/N`, bound kworkers) that the
/// kernel will not move.
const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// `PF_KTHREAD` in the same field: a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// True when thread `t` is a per-CPU kernel thread (see [`PF_NO_SETAFFINITY`]).
pub fn is_per_cpu_kthread(fs: &HostFs, t: &ThreadInfo) -> bool {
    task_flags(fs, t).is_some_and(|f| f & PF_NO_SETAFFINITY != 0)
}

/// True when thread `t` is a kernel thread (`PF_KTHREAD`).
fn is_kthread(fs: &HostFs, t: &ThreadInfo) -> bool {
    task_flags(fs, t).is_some_and(|f| f & PF_KTHREAD != 0)
}

/// The `flags` field of `/proc/PID/task/TID/stat`, when readable.
fn task_flags(fs: &HostFs, t: &ThreadInfo) -> Option<u64> {
    let stat = fs.read_attr(&paths::task_file(t.pid, t.tid, "stat"))?;
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(6)?.parse::<u64>().ok())
}

/// The threads matching `pattern`; no match is an error naming the most
/// similar thread names.
fn matching(fs: &HostFs, pattern: &str) -> Result<Vec<ThreadInfo>> {
    let pat = NamePattern::parse(pattern)?;
    let all = all_threads(fs);
    let found: Vec<ThreadInfo> = all
        .iter()
        .filter(|t| pat.is_match(&t.comm))
        .cloned()
        .collect();
    if found.is_empty() {
        bail!(
            "no thread named like {pattern:?} under {}; {}",
            fs.path(paths::PROC).display(),
            similar_or_none(&all, &pat.text)
        );
    }
    Ok(found)
}

/// The end of the no-match error: the most similar names, or, when the
/// tree lists no thread at all (a fake tree of only the statistics
/// files), that it has none (no `PID/task/TID/comm`).
fn similar_or_none(all: &[ThreadInfo], pattern: &str) -> String {
    if all.is_empty() {
        return "it lists no thread at all (no PID/task/TID/comm file)".to_string();
    }
    format!("similar names: {}", similar_names(all, pattern).join(", "))
}

/// Check (changing nothing) that `pattern` matches a thread and, under
/// `strict`, that no match is a per-CPU kernel thread.
pub fn check_pattern(fs: &HostFs, pattern: &str, strict: bool) -> Result<()> {
    let found = matching(fs, pattern)?;
    if strict {
        if let Some(t) = found.iter().find(|t| is_per_cpu_kthread(fs, t)) {
            bail!(
                "--strict: {} is a per-CPU kernel thread; the kernel does not move it",
                t.comm
            );
        }
    }
    Ok(())
}

/// Pin every thread matching `pattern` to `cpus`. No match is an error
/// naming the most similar thread names. Per-CPU kernel threads cannot
/// move: they are skipped with an [`Outcome::Skipped`] naming them (an
/// error under `--strict`).
pub fn pin_thread(guard: &mut SystemGuard, pattern: &str, cpus: &CpuList) -> Result<Vec<Outcome>> {
    let found = matching(guard.fs(), pattern)?;
    let mut changed = Vec::new();
    let mut per_cpu = Vec::new();
    for t in &found {
        if is_per_cpu_kthread(guard.fs(), t) {
            per_cpu.push(t.comm.clone());
            continue;
        }
        if let Some(why) = not_this_hosts(guard.fs(), t) {
            bail!(
                "thread {} ({}) of {} is not this host's: {why}; pinning moves this \
                 host's thread of that id, so --pin-thread takes only threads this \
                 host runs under that id and name",
                t.tid,
                t.comm,
                guard.fs().path(paths::PROC).display()
            );
        }
        match guard.set_thread_affinity(t.tid, cpus) {
            Ok(true) => changed.push(format!("thread {} ({}) -> CPUs {cpus}", t.tid, t.comm)),
            Ok(false) => {}
            Err(_)
                if guard
                    .fs()
                    .read_attr(&paths::task_file(t.pid, t.tid, "comm"))
                    .is_none() => {}
            // a kernel thread the kernel will not move; any other thread's
            // EINVAL is a real error
            Err(e) if format!("{e:#}").contains("EINVAL") && is_kthread(guard.fs(), t) => {
                per_cpu.push(t.comm.clone());
            }
            Err(e) => return Err(e.context(format!("pinning thread {} ({})", t.tid, t.comm))),
        }
    }
    let mut out = Vec::new();
    if per_cpu.len() < found.len() {
        out.push(Outcome::done(
            changed,
            format!("threads {pattern:?} already on CPUs {cpus}"),
        ));
    }
    if !per_cpu.is_empty() {
        out.push(Outcome::Skipped(format!(
            "{} cannot move (per-CPU kernel thread{})",
            per_cpu.join(", "),
            if per_cpu.len() == 1 { "" } else { "s" }
        )));
    }
    Ok(out)
}

/// Why thread `t`, found in the tree of a `--root` other than `/`, is
/// not the live kernel's thread of the same id (the affinity a pin sets
/// is always the live kernel's): no such thread, or another name.
/// `None` on the live root and for a live thread of the same name.
fn not_this_hosts(fs: &HostFs, t: &ThreadInfo) -> Option<String> {
    if fs.root() == std::path::Path::new("/") {
        return None;
    }
    let live = HostFs::new("/").read_attr(&paths::task_file(t.tid, t.tid, "comm"));
    match live {
        Some(name) if name == t.comm => None,
        Some(name) => Some(format!("this host's thread {} is {name:?}", t.tid)),
        None => Some(format!("this host has no thread {}", t.tid)),
    }
}

/// Up to 8 distinct thread names closest (edit distance) to `pattern`'s
/// literal characters.
fn similar_names(all: &[ThreadInfo], pattern: &str) -> Vec<String> {
    let lit: String = pattern
        .trim_start_matches("re:")
        .chars()
        .filter(|c| !"*?[]!^$().+\\|{}".contains(*c))
        .collect::<String>()
        .to_lowercase();
    let mut names: Vec<&str> = all.iter().map(|t| t.comm.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .map(|n| (distance(&lit, &n.to_lowercase()), n))
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(8)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.last().copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_proc(threads: &[(i32, i32, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (pid, tid, comm) in threads {
            let d = dir.path().join(format!("proc/{pid}/task/{tid}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("proc/sys")).unwrap();
        dir
    }

    #[test]
    fn globs_and_regexes_match_whole_names() {
        let g = NamePattern::parse("irq/*-eth0").unwrap();
        assert!(g.is_match("irq/45-eth0") && !g.is_match("irq/45-eth0-rx"));
        let q = NamePattern::parse("ksoftirqd/[!1]").unwrap();
        assert!(q.is_match("ksoftirqd/0") && !q.is_match("ksoftirqd/1"));
        let r = NamePattern::parse(r"re:ksoftirqd/\d+").unwrap();
        assert!(r.is_match("ksoftirqd/12") && !r.is_match("xksoftirqd/1"));
        assert!(NamePattern::parse("re:(").is_err());
        assert!(NamePattern::parse("a.b").unwrap().is_match("a.b"));
        assert!(!NamePattern::parse("a.b").unwrap().is_match("axb"));
    }

    #[test]
    fn finds_kthreads_and_user_threads_in_a_fake_tree() {
        let dir = fake_proc(&[
            (15, 15, "ksoftirqd/0"),
            (23, 23, "ksoftirqd/1"),
            (301, 301, "irq/45-eth0"),
            (900, 900, "iperf3"),
            (900, 903, "iperf3-worker"),
        ]);
        let fs = HostFs::new(dir.path());
        let p = NamePattern::parse("ksoftirqd/*").unwrap();
        let found = |p: &NamePattern| -> Vec<i32> {
            let all = all_threads(&fs);
            all.iter()
                .filter(|t| p.is_match(&t.comm))
                .map(|t| t.tid)
                .collect()
        };
        let tids = found(&p);
        assert_eq!(tids, [15, 23]);
        let p = NamePattern::parse("iperf3*").unwrap();
        assert_eq!(found(&p), [900, 903]);
    }

    #[test]
    fn per_cpu_kthreads_are_skipped_with_a_note_and_refused_under_strict() {
        let dir = fake_proc(&[(15, 15, "ksoftirqd/0"), (23, 23, "ksoftirqd/1")]);
        for (tid, flags) in [(15, 0x0420_8040u64), (23, 0x0420_8040)] {
            let stat = format!("{tid} (ksoftirqd/0) S 2 0 0 0 -1 {flags} 0 0 0 0 0 0\n");
            std::fs::write(dir.path().join(format!("proc/{tid}/task/{tid}/stat")), stat).unwrap();
        }
        let fs = HostFs::new(dir.path());
        check_pattern(&fs, "ksoftirqd/*", false).unwrap();
        let e = check_pattern(&fs, "ksoftirqd/*", true).unwrap_err();
        assert!(e.to_string().contains("per-CPU kernel thread"), "{e}");
        let mut g = SystemGuard::new(&fs, dir.path().join("j.jsonl")).unwrap();
        let out = pin_thread(&mut g, "ksoftirqd/*", &CpuList::from_cpus([0])).unwrap();
        assert_eq!(
            out,
            vec![Outcome::Skipped(
                "ksoftirqd/0, ksoftirqd/1 cannot move (per-CPU kernel threads)".into()
            )]
        );
        assert_eq!(g.pending(), 0);
    }

    /// EINVAL from a thread that is no kernel thread is the error it is,
    /// not "cannot move (per-CPU kernel thread)". The thread is one of
    /// this test's own, and the CPU one no CPU set holds: nothing moves.
    #[test]
    fn einval_of_an_ordinary_thread_is_an_error() {
        std::thread::scope(|s| {
            let named = std::thread::Builder::new().name("victimthr".into());
            named
                .spawn_scoped(s, || {
                    let tid = nix::unistd::gettid().as_raw();
                    let dir = fake_proc(&[(tid, tid, "victimthr")]);
                    let stat = format!("{tid} (victimthr) S 1 0 0 0 -1 4194560 0 0\n");
                    std::fs::write(dir.path().join(format!("proc/{tid}/task/{tid}/stat")), stat)
                        .unwrap();
                    let fs = HostFs::new(dir.path());
                    let mut g = SystemGuard::new(&fs, dir.path().join("j.jsonl")).unwrap();
                    let cpus = CpuList::from_cpus([1_000_000]);
                    let e = pin_thread(&mut g, "victimthr", &cpus).unwrap_err();
                    let text = format!("{e:#}");
                    assert!(
                        text.contains("pinning thread") && !text.contains("per-CPU"),
                        "{text}"
                    );
                    assert_eq!(g.pending(), 0);
                })
                .unwrap();
        });
    }

    /// A fake tree's thread ids are not this host's: a thread of the tree
    /// whose id this host gives to another thread (or to none) is refused
    /// before anything moves; this host's thread keeps its affinity.
    #[test]
    fn a_fake_trees_thread_is_never_taken_for_this_hosts() {
        std::thread::scope(|s| {
            let named = std::thread::Builder::new().name("livename".into());
            named
                .spawn_scoped(s, || {
                    let tid = nix::unistd::gettid().as_raw();
                    let before = crate::pin::thread_affinity(tid).unwrap();
                    let dir = fake_proc(&[(tid, tid, "treename"), (4_194_999, 4_194_999, "gone")]);
                    let fs = HostFs::new(dir.path());
                    let mut g = SystemGuard::new(&fs, dir.path().join("j.jsonl")).unwrap();
                    let one = CpuList::from_cpus([0]);
                    let e = format!("{:#}", pin_thread(&mut g, "treename", &one).unwrap_err());
                    let says = format!("this host's thread {tid} is \"livename\"");
                    assert!(e.contains(&says) && e.contains("not this host's"), "{e}");
                    let e = format!("{:#}", pin_thread(&mut g, "gone", &one).unwrap_err());
                    assert!(e.contains("this host has no thread 4194999"), "{e}");
                    assert_eq!(g.pending(), 0);
                    assert_eq!(crate::pin::thread_affinity(tid).unwrap(), before);
                })
                .unwrap();
        });
    }

    #[test]
    fn no_match_lists_similar_names() {
        let dir = fake_proc(&[
            (15, 15, "ksoftirqd/0"),
            (301, 301, "irq/45-eth0"),
            (9, 9, "rcu_sched"),
        ]);
        let mut g =
            crate::guard::SystemGuard::new(&HostFs::new(dir.path()), dir.path().join("j.jsonl"))
                .unwrap();
        let err = pin_thread(&mut g, "ksoftirq/*", &CpuList::from_cpus([0]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("similar names: ksoftirqd/0"), "{err}");
        let empty = fake_proc(&[]);
        let mut g = crate::guard::SystemGuard::new(
            &HostFs::new(empty.path()),
            empty.path().join("j.jsonl"),
        )
        .unwrap();
        let err = pin_thread(&mut g, "irq/*", &CpuList::from_cpus([0]))
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("; it lists no thread at all (no PID/task/TID/comm file)")
                && !err.contains("similar names"),
            "{err}"
        );
    }

    #[test]
    fn live_pin_named_thread_and_restore() {
        let name = format!("iqpin{}", std::process::id() % 10_000_000);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let h = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                tid_tx.send(nix::unistd::gettid().as_raw()).unwrap();
                let _ = rx.recv();
            })
            .unwrap();
        let tid: i32 = tid_rx.recv().unwrap();
        let live = HostFs::new("/");
        let comm = format!("proc/self/task/{tid}/comm");
        if live.read_attr(&comm).as_deref() != Some(name.as_str()) {
            eprintln!("skipping: /proc does not show thread names here");
            return;
        }
        let before = crate::pin::thread_affinity(tid).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut g = SystemGuard::new(&live, dir.path().join("j.jsonl")).unwrap();
        let out = pin_thread(&mut g, &name, &CpuList::from_cpus([0])).unwrap();
        let now = crate::pin::thread_affinity(tid).unwrap();
        assert_eq!(now.iter().collect::<Vec<_>>(), [0], "{out:?}");
        g.restore().unwrap();
        let after = crate::pin::thread_affinity(tid).unwrap();
        assert_eq!(after, before);
        drop(tx);
        h.join().unwrap();
    }
}
