//! `top --trace`: exact interrupt time beside the /proc rates. Starts the
//! tracing session (feature `trace`; without it the flag is refused, exit
//! 2, saying how to build it), reads it once per sampler tick right after
//! the frame's /proc read, and adds the traced figures to the output: a
//! `trace` object on each JSON line, `TRACE` lines after each text block
//! (see `text.rs`), columns and a footer line in the interactive view.
//! Nothing here runs when `--trace` is off.

use crate::filter::Filter;
use crate::trace::interval::Interval;
use crate::trace::top::TopTrace;
use irqlab_core::Snapshot;
use std::path::Path;
use std::time::Duration;

/// The session behind `--trace`, read once per tick.
pub type Tracing = crate::trace::live::LiveTrace;

/// How long a signal waits for top to print its last lines and detach
/// before the guard restores the host itself (see `guard::defer_signals`).
pub const SIGNAL_GRACE: Duration = Duration::from_secs(3);

/// Attach the programs; notes (mount, absent tracepoints) for stderr.
#[cfg(feature = "trace")]
pub fn start(root: &Path, filter: &Filter) -> anyhow::Result<(Tracing, Vec<String>)> {
    use anyhow::Context;
    let fs = crate::host::HostFs::new(root);
    let (t, notes) = crate::trace::live::LiveTrace::start(&fs, filter.cpus.clone())
        .context("--trace: attaching the tracing programs")?;
    Ok((t, notes))
}

/// Without the feature: the error `top` prints before exiting 2.
#[cfg(not(feature = "trace"))]
pub fn start(_: &Path, _: &Filter) -> anyhow::Result<(Tracing, Vec<String>)> {
    anyhow::bail!("top --trace: {}", crate::trace::NOT_BUILT)
}

/// The traced figures of this tick, handler time kept for the IRQ rows
/// the `--irq` filter keeps in `cur`.
pub fn tick(t: &mut Tracing, cur: &Snapshot, filter: &Filter) -> anyhow::Result<TopTrace> {
    let iv = t.tick()?;
    Ok(shown(&iv, cur, filter))
}

/// The traced figures from the first tick to the last (`Average:`).
pub fn whole_run(t: &Tracing, latest: &Snapshot, filter: &Filter) -> TopTrace {
    shown(&t.whole_run(), latest, filter)
}

/// What a frame shows of traced interval `iv`: handler time kept for the
/// IRQ rows `filter` keeps in `cur` (live, and `replay` of a traced
/// recording).
pub fn shown(iv: &Interval, cur: &Snapshot, filter: &Filter) -> TopTrace {
    let rows = cur
        .interrupts
        .as_ref()
        .map(|i| i.rows())
        .unwrap_or_default();
    TopTrace::new(iv, |label| {
        rows.iter()
            .any(|r| r.label == label && filter.keep_irq_row(r))
    })
}

/// Append `"trace":{…}` to a JSON line written by `JsonlWriter` (which
/// ends with `}\n`).
pub fn append_json(line: &mut Vec<u8>, t: &TopTrace) -> anyhow::Result<()> {
    if line.ends_with(b"}\n") {
        line.truncate(line.len() - 2);
        line.extend_from_slice(b",\"trace\":");
        serde_json::to_writer(&mut *line, t)?;
        line.extend_from_slice(b"}\n");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::interval::IntervalView;
    use crate::trace::live::{LiveTrace, TraceSession};
    use crate::trace::model::{Sample, Stats};
    use crate::trace::top::fake;

    /// A tracing session whose counters grow by the fake interval's at
    /// every read (from zero at the baseline).
    struct Fake(u64);

    impl TraceSession for Fake {
        fn read(&mut self, out: &mut Sample) -> anyhow::Result<()> {
            let k = self.0;
            self.0 += 1;
            let scale = |s: &mut Stats| {
                s.count *= k;
                s.total_ns *= k;
                s.hist.iter_mut().for_each(|h| *h *= k);
            };
            *out = fake::sample();
            out.at_ns *= k;
            for s in out.irqs.iter_mut().flat_map(|(_, v)| v) {
                scale(s);
            }
            for s in out.softirqs.iter_mut().flat_map(|(_, v)| v) {
                scale(&mut s.run);
                scale(&mut s.latency);
                s.nested_irq_ns *= k;
            }
            Ok(())
        }
    }

    fn snapshot() -> Snapshot {
        let spec = irqlab_core::synth::SynthSpec {
            cpus: 2,
            irqs: 30,
            nr_irqs: 2048,
            arch: irqlab_core::render::Arch::X86,
            era: irqlab_core::render::Era::E3,
            offline: vec![],
            seed: 7,
        };
        let tree = spec.build().unwrap();
        let files = tree.files();
        let text = &files.iter().find(|f| f.0 == "proc/interrupts").unwrap().1;
        Snapshot {
            mono_ns: 0,
            wall_ns: 0,
            interrupts: Some(irqlab_core::Interrupts::parse(text).unwrap()),
            softirqs: None,
            stat: None,
        }
    }

    #[test]
    fn handler_time_is_kept_for_the_rows_the_filter_keeps() {
        let mut t: Tracing = LiveTrace::new(Box::new(Fake(0)), IntervalView::default()).unwrap();
        let snap = snapshot();
        let all = tick(&mut t, &snap, &Filter::default()).unwrap();
        let labels: Vec<&str> = all.irqs.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["24", "LOC"], "both rows exist in the tree");
        let only_loc = Filter::from_flags(Some("^LOC$"), None).unwrap();
        let t1 = tick(&mut t, &snap, &only_loc).unwrap();
        assert_eq!(t1.irqs.len(), 1);
        assert_eq!(t1.irqs[0].label, "LOC");
        assert_eq!(t1.cpus.len(), 2, "CPU time is not row-filtered");
        assert_eq!(t1.softirqs.len(), 2, "nor are softirqs");
        let avg = whole_run(&t, &snap, &only_loc);
        assert_eq!(avg, t1);
    }

    #[test]
    fn the_trace_object_closes_the_json_line() {
        let mut line = b"{\"timestamp\":\"x\",\"strategy\":\"proc_interrupts\"}\n".to_vec();
        append_json(&mut line, &fake::top_trace()).unwrap();
        assert!(line.ends_with(b"}}\n"));
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["strategy"], "proc_interrupts");
        let t = &v["trace"];
        assert_eq!(t["cpus"][0]["cpu"], 0);
        assert!(t["cpus"][0]["irq_pct"].is_number());
        assert_eq!(t["softirqs"][0]["name"], "NET_RX");
        assert!(t["softirqs"][0]["latency_p99_ns"].is_number());
        assert_eq!(t["irqs"][0]["label"], "24");
        assert!(t["irqs"][0]["us_per_s"].is_number());
    }
}
