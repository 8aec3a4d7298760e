//! [`RunStats`]: what the kernel's run-time accounting of BPF programs
//! says (always compiled, so that irqlab can format it without the
//! loader).

/// Accumulated run time and run count of programs, from the kernel's own
/// accounting (`bpf_prog_info.run_time_ns` / `run_cnt`), which counts only
/// while some process holds the descriptor `loader::enable_run_stats` returns.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunStats {
    /// Nanoseconds spent running the programs.
    pub ns: u64,
    /// Times the programs ran (one per traced event each).
    pub runs: u64,
}

impl RunStats {
    /// What ran between `earlier` and `self`.
    pub fn since(self, earlier: RunStats) -> RunStats {
        RunStats {
            ns: self.ns.saturating_sub(earlier.ns),
            runs: self.runs.saturating_sub(earlier.runs),
        }
    }

    /// Mean nanoseconds per run, `None` without runs.
    pub fn ns_per_run(self) -> Option<f64> {
        (self.runs > 0).then(|| self.ns as f64 / self.runs as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_and_means() {
        let a = RunStats { ns: 1000, runs: 10 };
        let b = RunStats { ns: 4000, runs: 30 };
        assert_eq!(b.since(a), RunStats { ns: 3000, runs: 20 });
        assert_eq!(b.since(a).ns_per_run(), Some(150.0));
        assert_eq!(a.since(b), RunStats::default());
        assert_eq!(RunStats::default().ns_per_run(), None);
    }
}
