//! `irqlab replay DIR --batch`: `top --batch` lines over a recording. The
//! recording is a snapshot source (`record::playback`) behind the same
//! `LiveSampler` as live `top`; rates come from the same delta code and
//! writers as live `top --batch` (text: the Report and `top::text`; JSON:
//! `export::jsonl`).

use super::top::text::{Block, TextOpts};
use super::top::BatchFormat;
use crate::export::jsonl::JsonlWriter;
use crate::record::playback::RecordingSource;
use crate::record::{layout, reader};
use crate::report::{self, Filter};
use crate::sampler::{LiveSampler, SelfCost, Strategy};
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
    // the first step is the baseline; one frame per later step
    let frames = rec.steps.len().saturating_sub(1);
    let mut live = LiveSampler::with_source(RecordingSource::new(rec), filter)?;
    let mut out = crate::export::stdout::stdout();
    let mut jsonl = JsonlWriter::default();
    let mut buf = Vec::new();
    for _ in 0..frames {
        let mut frame = live.next_frame()?;
        match args.format {
            BatchFormat::Json => jsonl.write_frame(&mut frame, &mut buf),
            BatchFormat::Text => {
                let mut rep = report::from_delta_rates(frame.prev, frame.cur, frame.filter());
                if let Some(sec) = rep.interrupts.as_mut() {
                    let rate = |r: &report::IrqLine| r.total_rate.unwrap_or(0.0);
                    sec.rows.sort_by(|a, b| {
                        rate(b)
                            .partial_cmp(&rate(a))
                            .unwrap_or(std::cmp::Ordering::Equal)
                    });
                }
                let stamp = crate::sampler::clock::rfc3339_utc(frame.cur.wall_ns);
                let block = Block {
                    stamp: stamp.get(11..23).unwrap_or(&stamp),
                    report: &rep,
                    threads: frame.threads,
                    self_cost: SelfCost::default(),
                    strategy: Strategy::ProcInterrupts,
                };
                buf.clear();
                super::top::text::write_block(&block, &TextOpts::default(), &mut buf)?;
            }
        }
        out.write_all(&buf)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
