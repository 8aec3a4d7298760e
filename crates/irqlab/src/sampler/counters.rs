//! Raw counters, not rates: what `serve` and `record` take from the live
//! sampler. [`CounterSampler`] wraps the one [`LiveSampler`] of the run (whole `/proc/interrupts`,
//! kept-open files, thread CPU, affinity cache, clocks) and yields a
//! [`LiveSampleCounters`] per call — the sampler's frame plus the interrupt
//! threads' cumulative CPU time ([`ThreadCpu::cpu_ns`], PID and name) — the first call the baseline taken at
//! open, each later call a new frame.
//!
//! [`SampleCounters`] is the owned form of the same data (raw counters at one
//! instant): what a recording read back (`record::reader`) yields.
//! [`SampleCountersView`] is what the consumers read of either.
//!
//! Does not pace (callers tick) and writes nothing.

use crate::filter::Filter;
use crate::sampler::strategy::Choice;
use crate::sampler::{Frame, LivePlan, LiveSampler};
use crate::threads::ThreadCpu;
use irqlab_core::Snapshot;

/// One sample, owned: raw counters at one instant (a recording read back).
#[derive(Debug, Clone, Default)]
pub struct SampleCounters {
    pub snap: Snapshot,
    /// Threads whose CPU time was read at this sample (sorted by name;
    /// `cpu_ns` is what was recorded, `cpu_pct` 0).
    pub threads: Vec<ThreadCpu>,
}

/// One live sample, borrowed from the [`CounterSampler`] until the next call.
pub struct LiveSampleCounters<'a> {
    /// The sampler's frame: `frame.cur` is this sample (for the first
    /// sample `prev` and `cur` are the same baseline); affinity through
    /// `frame.affinity`, irqlab's cost through `frame.self_cost`.
    pub frame: Frame<'a>,
    /// Threads whose CPU time was read at this sample (sorted by name).
    pub threads: &'a [ThreadCpu],
}

impl<'a> LiveSampleCounters<'a> {
    /// The counters of this sample.
    pub fn snap(&self) -> &'a Snapshot {
        self.frame.cur
    }

    /// What the consumers read of it.
    pub fn view(&self) -> SampleCountersView<'a> {
        SampleCountersView {
            snap: self.frame.cur,
            threads: self.threads,
            trace: None,
        }
    }
}

/// Raw counters at one instant as the consumers (`serve::exposition`,
/// `record::cells`) read them, live or replayed.
#[derive(Debug, Clone, Copy)]
pub struct SampleCountersView<'a> {
    pub snap: &'a Snapshot,
    /// Threads whose CPU time was read at this sample (sorted by name).
    pub threads: &'a [ThreadCpu],
    /// The tracing maps read right after the files (`record --trace`).
    pub trace: Option<&'a crate::trace::sample::Sample>,
}

impl SampleCounters {
    /// What the consumers read of it.
    pub fn view(&self) -> SampleCountersView<'_> {
        SampleCountersView {
            snap: &self.snap,
            threads: &self.threads,
            trace: None,
        }
    }
}

/// Live samples of one root (`/` or a fake tree).
pub struct CounterSampler {
    live: LiveSampler,
    totals: Vec<ThreadCpu>,
    /// The baseline taken at open has been handed out.
    started: bool,
}

impl CounterSampler {
    /// A source reading every statistics file under `root`; takes the
    /// baseline sample (an unreadable tree is an error here).
    pub fn open(root: &std::path::Path) -> anyhow::Result<CounterSampler> {
        let mut live = LiveSampler::open(&LivePlan {
            root: root.to_path_buf(),
            filter: Filter::default(),
            strategy: Choice::ProcInterrupts,
        })?;
        // record's and serve's threads only sample, write and sleep
        live.chain_meters();
        Ok(CounterSampler {
            live,
            totals: Vec::new(),
            started: false,
        })
    }

    /// Files that could not be read at all, with the reason.
    pub fn missing(&self) -> Vec<String> {
        self.live.missing()
    }

    /// The latest good sample (the baseline before the first frame), also
    /// after a [`CounterSampler::next_sample`] that failed.
    pub fn latest_view(&self) -> SampleCountersView<'_> {
        SampleCountersView {
            snap: self.live.latest(),
            threads: &self.totals,
            trace: None,
        }
    }

    /// The next sample: the baseline on the first call, then a new frame.
    pub fn next_sample(&mut self) -> anyhow::Result<LiveSampleCounters<'_>> {
        let frame = if self.started {
            self.live.next_frame()?
        } else {
            self.started = true;
            self.live.latest_frame()
        };
        // every thread read at this sample, the baseline's included (the
        // frame's shares leave out those read for the first time)
        frame.thread_totals(&mut self.totals);
        self.totals.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(LiveSampleCounters {
            frame,
            threads: &self.totals,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn tree(loc: u64) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("proc");
        std::fs::create_dir_all(p.join("irq/24")).unwrap();
        std::fs::write(
            p.join("interrupts"),
            format!("      CPU0\n 24:  7  IO-APIC 5-edge ACPI:Ged\nLOC: {loc}  Local timer\n"),
        )
        .unwrap();
        std::fs::write(p.join("irq/24/smp_affinity_list"), "0\n").unwrap();
        d
    }

    fn loc(s: &Snapshot) -> u64 {
        let m = s.interrupts.as_ref().unwrap();
        m.rows().iter().find(|r| r.label == "LOC").unwrap().total()
    }

    #[test]
    fn the_baseline_comes_first_then_frames_of_the_live_sampler() {
        let d = tree(100);
        let mut src = CounterSampler::open(d.path()).unwrap();
        let mut first = src.next_sample().unwrap();
        assert_eq!(loc(first.snap()), 100);
        assert_eq!(
            first.frame.interval_s(),
            0.0,
            "the baseline has no interval"
        );
        assert_eq!(first.frame.affinity(24).as_deref(), Some("0"));
        let t0 = first.snap().mono_ns;
        std::fs::write(
            d.path().join("proc/interrupts"),
            "      CPU0\n 24:  7  IO-APIC 5-edge ACPI:Ged\nLOC: 250  Local timer\n",
        )
        .unwrap();
        let second = src.next_sample().unwrap();
        assert_eq!(loc(second.snap()), 250);
        assert_eq!(
            loc(second.frame.prev),
            100,
            "the frame starts at the baseline"
        );
        assert!(second.snap().mono_ns >= t0);
        assert!(src.missing().iter().any(|m| m.contains("softirqs")));
    }

    /// `proc/PID/{comm,stat,schedstat}` of kernel thread `comm` in `root`.
    fn thread(root: &std::path::Path, pid: u32, comm: &str, cpu_ns: u64) {
        let dir = root.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&dir).unwrap();
        let rest = vec!["0"; 39].join(" ");
        std::fs::write(dir.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(dir.join("stat"), format!("{pid} ({comm}) S {rest}\n")).unwrap();
        std::fs::write(dir.join("schedstat"), format!("{cpu_ns} 0 1\n")).unwrap();
    }

    /// The baseline carries every interrupt thread's CPU time (what
    /// `record` stores as its first sample: replay's first frame then has
    /// their shares), sorted by name; each later sample too, the
    /// totals replaced whole.
    #[test]
    fn thread_totals_are_in_every_sample_from_the_baseline_on() {
        let d = tree(100);
        thread(d.path(), 22, "ksoftirqd/1", 5_000);
        thread(d.path(), 14, "ksoftirqd/0", 7_000);
        let mut src = CounterSampler::open(d.path()).unwrap();
        let totals = |s: &LiveSampleCounters| -> Vec<(String, u64)> {
            s.threads
                .iter()
                .map(|t| (t.name.clone(), t.cpu_ns))
                .collect()
        };
        let first = src.next_sample().unwrap();
        let want = [
            ("ksoftirqd/0".to_string(), 7_000),
            ("ksoftirqd/1".to_string(), 5_000),
        ];
        assert_eq!(totals(&first), want);
        assert_eq!(first.threads[0].pid, Some(14));
        std::fs::write(d.path().join("proc/14/schedstat"), "9000 0 2\n").unwrap();
        let second = src.next_sample().unwrap();
        let want = [
            ("ksoftirqd/0".to_string(), 9_000),
            ("ksoftirqd/1".to_string(), 5_000),
        ];
        assert_eq!(totals(&second), want);
    }

    #[test]
    fn an_unreadable_tree_fails_at_open() {
        let d = tempfile::tempdir().unwrap();
        let err = CounterSampler::open(d.path()).err().unwrap();
        assert!(format!("{err:#}").contains("nothing readable"), "{err:#}");
    }
}
