//! `irqlab replay DIR --batch`: `top --batch` lines over a recording. The
//! recording is the snapshot source (`record::reader`); rates come from the
//! same delta code and writers as live `top --batch` (text: the Report and
//! `top::text`; JSON: `export::jsonl`).

use super::top::text::{Block, TextOpts};
use super::top::BatchFormat;
use crate::export::jsonl::{JsonlWriter, LineInput};
use crate::record::source::Sample;
use crate::record::{layout, reader};
use crate::report::{self, Filter};
use crate::sampler::clock::CostMeter;
use crate::sampler::{SelfCost, Strategy};
use crate::threads::ThreadCpu;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `irqlab replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A recording directory with one host and boot (or a boot=… directory).
    pub dir: PathBuf,
    /// Print lines (the only mode so far; the interactive view is not built yet).
    #[arg(long)]
    pub batch: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: BatchFormat,
    /// Keep only rows whose label or description matches.
    #[arg(long)]
    pub irq: Option<String>,
    /// Keep only these CPUs.
    #[arg(long)]
    pub cpus: Option<String>,
}

/// Thread CPU % between two samples' cumulative times.
fn thread_rates(old: &Sample, new: &Sample) -> Vec<ThreadCpu> {
    let wall = new.snap.mono_ns.saturating_sub(old.snap.mono_ns);
    if wall == 0 {
        return Vec::new();
    }
    new.threads
        .iter()
        .filter_map(|t| {
            let o = old.threads.iter().find(|o| o.name == t.name)?;
            Some(ThreadCpu {
                pid: 0,
                name: t.name.clone(),
                kind: t.kind,
                cpu_pct: t.cpu_ns.saturating_sub(o.cpu_ns) as f64 * 100.0 / wall as f64,
                last_cpu: None,
                cpu_ns: t.cpu_ns,
            })
        })
        .collect()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.batch {
        anyhow::bail!(
            "replay needs --batch for now (the interactive view over a recording is not built yet)"
        );
    }
    let filter = Filter::from_flags(args.irq.as_deref(), args.cpus.as_deref())?;
    let dir = layout::one_boot_dir(&args.dir)?;
    let rec = reader::open(&dir)?;
    for w in &rec.warnings {
        eprintln!("irqlab: {w}");
    }
    if rec.steps.is_empty() {
        anyhow::bail!("{}: the recording holds no sample", dir.display());
    }
    let mut rp = reader::Replayer::default();
    let mut prev: Option<Sample> = None;
    let mut out = crate::export::stdout::stdout();
    let mut jsonl = JsonlWriter::default();
    let mut buf = Vec::new();
    for step in &rec.steps {
        let cur = rp.apply(step)?;
        if let Some(old) = prev.as_ref() {
            let threads = thread_rates(old, &cur);
            match args.format {
                BatchFormat::Json => {
                    let meter = CostMeter::start();
                    let inp = LineInput {
                        old: &old.snap,
                        new: &cur.snap,
                        filter: &filter,
                        threads: &threads,
                        meter: &meter,
                        strategy: Strategy::ProcInterrupts,
                    };
                    jsonl.write_line(&inp, &mut |_| None, &mut buf);
                    out.write_all(&buf)?;
                }
                BatchFormat::Text => {
                    let mut rep = report::from_delta_rates(&old.snap, &cur.snap, &filter);
                    if let Some(sec) = rep.interrupts.as_mut() {
                        let rate = |r: &report::IrqLine| r.total_rate.unwrap_or(0.0);
                        sec.rows.sort_by(|a, b| {
                            rate(b)
                                .partial_cmp(&rate(a))
                                .unwrap_or(std::cmp::Ordering::Equal)
                        });
                    }
                    let stamp = crate::sampler::clock::rfc3339_utc(cur.snap.wall_ns);
                    let block = Block {
                        stamp: stamp.get(11..23).unwrap_or(&stamp),
                        report: &rep,
                        threads: &threads,
                        self_cost: SelfCost::default(),
                        strategy: Strategy::ProcInterrupts,
                    };
                    buf.clear();
                    super::top::text::write_block(&block, &TextOpts::default(), &mut buf)?;
                    out.write_all(&buf)?;
                }
            }
        }
        prev = Some(cur);
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
