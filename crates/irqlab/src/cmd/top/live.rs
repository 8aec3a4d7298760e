//! Live sampling for `top`: the strategy decision at start, the sampler,
//! the interrupt threads, metadata (affinity) and re-resolution of the
//! selected IRQs, producing one [`Frame`] (rates over the measured
//! interval plus self-cost) per call. Shared by `--batch` and the TUI.
//!
//! Does not pace (callers tick) and does not write output.

use super::StrategyChoice;
use crate::export::jsonl::{JsonlWriter, LineInput};
use crate::host::HostFs;
use crate::report::{self, Filter, Report};
use crate::sampler::clock::CostMeter;
use crate::sampler::strategy::{self, Decision};
use crate::sampler::targeted::{self, Selection};
use crate::sampler::{located, Sampler, SelfCost, Source, Strategy, Targeted};
use crate::threads::{ThreadCpu, Threads};
use anyhow::Context;
use irqlab_core::{Interrupts, Snapshot};
use std::collections::HashMap;

/// How often (ns) the targeted strategy lists `/sys/kernel/irq` to notice
/// new or freed descriptors.
const RELIST_NS: u64 = 10_000_000_000;

/// One interval's worth of everything `top` shows.
#[derive(Debug)]
pub struct Frame {
    pub report: Report,
    pub threads: Vec<ThreadCpu>,
    /// irqlab's own cost for this frame (read, parse, threads, report).
    pub self_cost: SelfCost,
    pub strategy: Strategy,
    /// Timestamps of the later sample.
    pub mono_ns: u64,
    pub wall_ns: u64,
}

/// The live sampling state of one `top` run.
pub struct Live {
    sampler: Sampler,
    threads: Threads,
    filter: Filter,
    /// `filter` without its `--irq` part: the per_cpu_count strategy's rows
    /// were selected at resolve time from the kernel's own text.
    cpu_filter: Filter,
    jsonl: JsonlWriter,
    prev: Snapshot,
    cur: Snapshot,
    affinity: HashMap<u32, Option<String>>,
    irq_list: Vec<String>,
    listed_ns: u64,
    /// Why the strategy is what it is (for `-v`).
    pub why: String,
}

/// Read and parse the whole `/proc/interrupts` once.
fn read_full(fs: &mut HostFs) -> anyhow::Result<Interrupts> {
    let rel = Source::Interrupts.rel();
    let path = fs.path(rel);
    let bytes = fs
        .read(rel)
        .with_context(|| format!("reading {}", path.display()))?;
    Interrupts::parse(bytes).map_err(|e| located(&path, &e))
}

/// The targeted reader for `filter`, or why the full file is needed.
fn resolve(fs: &mut HostFs, filter: &Filter) -> Result<Targeted, String> {
    if filter.irq.is_none() {
        return Err("no --irq selection".into());
    }
    let m = read_full(fs).map_err(|e| format!("{e:#}"))?;
    match targeted::select(&m, |r| filter.keep_irq_row(r)) {
        Selection::NeedsFullFile(label) => Err(format!("--irq matches arch row {label}")),
        Selection::Numbered(v) if v.is_empty() => Err("--irq matches no numbered IRQ".into()),
        Selection::Numbered(v) => {
            Targeted::open(fs, &v).map_err(|e| format!("per_cpu_count not usable: {e:#}"))
        }
    }
}

/// The filter that applies to the rows `strategy` reads: per_cpu_count
/// rows were selected at resolve time, so only the CPU part remains.
fn rows_filter<'a>(strategy: Strategy, all: &'a Filter, cpu_only: &'a Filter) -> &'a Filter {
    match strategy {
        Strategy::PerCpuCount => cpu_only,
        Strategy::ProcInterrupts => all,
    }
}

impl Live {
    /// Decide the strategy (measuring both when there is a choice), scan
    /// threads and take the baseline sample.
    pub fn start(
        root: &std::path::Path,
        filter: Filter,
        choice: StrategyChoice,
    ) -> anyhow::Result<Live> {
        let mut fs = HostFs::new(root);
        let resolved = match choice {
            StrategyChoice::ProcInterrupts => Err("--strategy proc-interrupts".to_string()),
            _ => resolve(&mut fs, &filter),
        };
        let (targeted, why) = match resolved {
            Err(why) => (None, format!("strategy proc_interrupts: {why}")),
            Ok(t) if choice == StrategyChoice::PerCpuCount => {
                let irqs: Vec<String> = t.irqs().map(|n| n.to_string()).collect();
                let why = format!("strategy per_cpu_count: forced (IRQs {})", irqs.join(","));
                (Some(t), why)
            }
            Ok(mut t) => {
                let d: Decision = strategy::decide(&mut fs, &mut t, strategy::ROUNDS)?;
                let irqs: Vec<String> = t.irqs().map(|n| n.to_string()).collect();
                let why = format!("{d} (IRQs {})", irqs.join(","));
                ((d.strategy == Strategy::PerCpuCount).then_some(t), why)
            }
        };
        let threads = Threads::new(&fs);
        let mut sampler = Sampler::new(fs, &Source::ALL);
        sampler.set_targeted(targeted);
        let cpu_filter = Filter {
            irq: None,
            cpus: filter.cpus.clone(),
        };
        let mut live = Live {
            sampler,
            threads,
            filter,
            cpu_filter,
            jsonl: JsonlWriter::default(),
            prev: Snapshot::default(),
            cur: Snapshot::default(),
            affinity: HashMap::new(),
            irq_list: Vec::new(),
            listed_ns: 0,
            why,
        };
        if live.sampler.targeted().is_some() {
            // Only the targeted strategy watches the IRQ set (maybe_reresolve).
            live.irq_list = live.sampler.fs().list_dir("sys/kernel/irq");
        }
        live.sampler.sample(&mut live.prev)?;
        live.listed_ns = live.prev.mono_ns;
        live.threads
            .sample(live.sampler.fs_mut(), live.prev.mono_ns);
        Ok(live)
    }

    /// Files that could not be read at all (reported once by callers).
    pub fn missing(&self) -> Vec<String> {
        self.sampler
            .missing
            .iter()
            .map(|(s, why)| format!("{}: {why}", self.sampler.fs().path(s.rel()).display()))
            .collect()
    }

    /// Number of interrupt threads tracked.
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// Sample now and return the rates since the previous sample.
    pub fn next_frame(&mut self) -> anyhow::Result<Frame> {
        let meter = CostMeter::start();
        self.sampler.sample(&mut self.cur)?;
        let threads = self.threads.sample(self.sampler.fs_mut(), self.cur.mono_ns);
        let strategy = self.sampler.strategy();
        let filter = rows_filter(strategy, &self.filter, &self.cpu_filter);
        let mut report = report::from_delta_rates(&self.prev, &self.cur, filter);
        self.annotate(&mut report);
        let frame = Frame {
            report,
            threads,
            self_cost: meter.stop(),
            strategy,
            mono_ns: self.cur.mono_ns,
            wall_ns: self.cur.wall_ns,
        };
        self.advance()?;
        Ok(frame)
    }

    /// Sample now and write the rates since the previous sample into `out`
    /// as one JSON line (the `top --batch` contract), without building a
    /// [`Report`]: see `export::jsonl`.
    pub fn next_json(&mut self, out: &mut Vec<u8>) -> anyhow::Result<()> {
        let meter = CostMeter::start();
        self.sampler.sample(&mut self.cur)?;
        let threads = self.threads.sample(self.sampler.fs_mut(), self.cur.mono_ns);
        let strategy = self.sampler.strategy();
        let inp = LineInput {
            old: &self.prev,
            new: &self.cur,
            filter: rows_filter(strategy, &self.filter, &self.cpu_filter),
            threads: &threads,
            meter: &meter,
            strategy,
        };
        let fs = self.sampler.fs();
        let known = &mut self.affinity;
        let mut affinity = |irq: u32| {
            known
                .entry(irq)
                .or_insert_with(|| targeted::read_affinity(fs, irq))
                .clone()
        };
        self.jsonl.write_line(&inp, &mut affinity, out);
        self.advance()
    }

    /// The later sample becomes the baseline of the next interval.
    fn advance(&mut self) -> anyhow::Result<()> {
        std::mem::swap(&mut self.prev, &mut self.cur);
        self.maybe_reresolve()
    }

    /// Affinity per row (read once per IRQ number) and rows by rate.
    fn annotate(&mut self, report: &mut Report) {
        let Some(sec) = report.interrupts.as_mut() else {
            return;
        };
        let fs = self.sampler.fs();
        for row in &mut sec.rows {
            if let Some(irq) = row.irq {
                let aff = self
                    .affinity
                    .entry(irq)
                    .or_insert_with(|| targeted::read_affinity(fs, irq));
                row.affinity.clone_from(aff);
            }
        }
        let rate = |r: &report::IrqLine| r.total_rate.unwrap_or(0.0);
        sec.rows.sort_by(|a, b| {
            rate(b)
                .partial_cmp(&rate(a))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }

    /// Targeted only: re-select the IRQs when one vanished or, every
    /// [`RELIST_NS`], when the `/sys/kernel/irq` listing changed.
    fn maybe_reresolve(&mut self) -> anyhow::Result<()> {
        let Some(t) = self.sampler.targeted() else {
            return Ok(());
        };
        let mut stale = !t.vanished.is_empty();
        let now = self.prev.mono_ns;
        if now.saturating_sub(self.listed_ns) >= RELIST_NS {
            self.listed_ns = now;
            let list = self.sampler.fs().list_dir("sys/kernel/irq");
            stale |= list != self.irq_list;
            self.irq_list = list;
        }
        if stale {
            self.affinity.clear();
            self.jsonl.invalidate();
            let fs = self.sampler.fs_mut();
            let t = resolve(fs, &self.filter).ok();
            if t.is_none() {
                self.why = format!("{}; re-resolved to proc_interrupts", self.why);
            }
            self.sampler.set_targeted(t);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
