//! A small, self-contained reader of interrupt-thread CPU time for the TUI
//! (`ksoftirqd/N` and `irq/N-name`): scans `proc/*/comm` through
//! [`HostFs`], reads `proc/PID/schedstat` and turns run-time differences
//! into CPU% over the interval.
//!
//! To be replaced by `crate::threads` at merge (the batch helper's
//! `ThreadCpu`); keep it small until then.

use super::app::ThreadRow;
use crate::host::HostFs;
use irqlab_core::SchedStat;
use std::collections::{HashMap, HashSet};

/// Whether a thread name is an interrupt thread.
pub fn is_irq_thread(name: &str) -> bool {
    name.starts_with("ksoftirqd/") || name.starts_with("irq/")
}

/// Remembers each thread's last run time to compute CPU%.
pub struct ThreadsSource {
    fs: HostFs,
    /// pid -> (name, exec_runtime_ns at the last sample).
    known: HashMap<u32, (String, u64)>,
    /// pids whose name is not an interrupt thread (not re-read).
    ignored: HashSet<u32>,
}

impl ThreadsSource {
    pub fn new(fs: HostFs) -> Self {
        ThreadsSource {
            fs,
            known: HashMap::new(),
            ignored: HashSet::new(),
        }
    }

    /// Rescan and read run times; CPU% is over `elapsed_s` seconds (0 for a
    /// thread seen for the first time, or when `elapsed_s` is 0).
    pub fn sample(&mut self, elapsed_s: f64) -> Vec<ThreadRow> {
        let pids: HashSet<u32> = self
            .fs
            .list_dir("proc")
            .iter()
            .filter_map(|n| n.parse().ok())
            .collect();
        self.ignored.retain(|p| pids.contains(p));
        self.known.retain(|p, _| pids.contains(p));
        let mut rows = Vec::new();
        for &pid in &pids {
            if self.ignored.contains(&pid) {
                continue;
            }
            let name = match self.known.get(&pid) {
                Some((n, _)) => n.clone(),
                None => match self.fs.read_attr(&format!("proc/{pid}/comm")) {
                    Some(n) if is_irq_thread(&n) => n,
                    _ => {
                        self.ignored.insert(pid);
                        continue;
                    }
                },
            };
            let Some(ns) = self.runtime_ns(pid) else {
                continue;
            };
            let prev = self.known.insert(pid, (name.clone(), ns));
            let cpu_pct = match prev {
                Some((_, old)) if elapsed_s > 0.0 => {
                    ns.saturating_sub(old) as f64 / (elapsed_s * 1e9) * 100.0
                }
                _ => 0.0,
            };
            rows.push(ThreadRow { pid, name, cpu_pct });
        }
        rows.sort_by_key(|r| r.pid);
        rows
    }

    fn runtime_ns(&self, pid: u32) -> Option<u64> {
        let text = self.fs.read_attr(&format!("proc/{pid}/schedstat"))?;
        SchedStat::parse(text.as_bytes())
            .ok()
            .map(|s| s.exec_runtime_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(root: &std::path::Path, pid: u32, comm: &str, ns: u64) {
        let d = root.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(d.join("schedstat"), format!("{ns} 0 1\n")).unwrap();
    }

    #[test]
    fn finds_interrupt_threads_and_computes_pct() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        thread(root, 15, "ksoftirqd/0", 1_000_000);
        thread(root, 812, "irq/122-nvme0q1", 0);
        thread(root, 900, "bash", 5);
        std::fs::create_dir_all(root.join("proc/sys")).unwrap();
        let mut src = ThreadsSource::new(HostFs::new(root));
        let first = src.sample(0.0);
        assert_eq!(
            first.iter().map(|t| (t.pid, t.cpu_pct)).collect::<Vec<_>>(),
            vec![(15, 0.0), (812, 0.0)]
        );
        thread(root, 15, "ksoftirqd/0", 51_000_000);
        thread(root, 812, "irq/122-nvme0q1", 500_000_000);
        std::fs::remove_dir_all(root.join("proc/900")).unwrap();
        let second = src.sample(1.0);
        assert_eq!(second.len(), 2);
        assert!((second[0].cpu_pct - 5.0).abs() < 1e-9);
        assert!((second[1].cpu_pct - 50.0).abs() < 1e-9);
        assert_eq!(second[1].name, "irq/122-nvme0q1");
    }

    #[test]
    fn live_proc_has_ksoftirqd_when_available() {
        let mut src = ThreadsSource::new(HostFs::new("/"));
        let rows = src.sample(0.0);
        if rows.is_empty() {
            eprintln!("skipping: no ksoftirqd/ threads visible in /proc");
            return;
        }
        assert!(rows.iter().any(|r| r.name.starts_with("ksoftirqd/")));
    }
}
