//! `irqlab replay DIR`: the interactive `top` screen over a recording with
//! time navigation (`tui::replay`), or with `--batch` `top --batch` lines.
//! The
//! recording is a snapshot source (`record::playback`) behind the same
//! `LiveSampler` as live `top`; rates come from the same delta code and
//! writers as live `top --batch` (text: the Report and `top::text`; JSON:
//! `export::jsonl`). A recording made with `record --trace` adds each
//! frame's traced time as `top --trace` does (`record::trace_replay`).

use super::top::text::{Block, TextOpts};
use super::top::trace_text;
use super::top::BatchFormat;
use crate::export::jsonl::JsonlWriter;
use crate::filter::Filter;
use crate::record::playback::RecordingSource;
use crate::record::trace_replay::TraceReplay;
use crate::record::{layout, reader};
use crate::report::{self, RateOpts};
use crate::sampler::strategy::Choice;
use crate::sampler::{LiveSampler, SelfCost, Strategy};
use crate::trace::top as top_trace;
use crate::tui::app::SortKey;
use crate::tui::replay::Player;
use crate::tui::TuiConfig;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab replay`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab replay rec                          # interactive: space plays, . and , step\n  \
    irqlab replay rec --batch --format json    # JSON lines, rates per interval\n  \
    irqlab replay rec/host=web1/boot=…         # one recording of a dataset")]
pub struct Args {
    /// A recording directory with one host and boot (or a boot=… directory).
    pub dir: PathBuf,
    /// Print `top --batch` lines instead of the interactive view.
    #[arg(long)]
    pub batch: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: BatchFormat,
    /// Keep only rows whose label or description matches.
    #[arg(long, value_parser = super::show::regex_arg)]
    pub irq: Option<String>,
    /// Keep only these CPUs (e.g. `0-3,8`).
    #[arg(long, value_parser = super::show::cpu_list_arg)]
    pub cpus: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = Filter::from_flags(args.irq.as_deref(), args.cpus.as_deref())?;
    let dir = layout::one_boot_dir(&args.dir)?;
    let rec = reader::open(&dir)?;
    for w in &rec.warnings {
        eprintln!("irqlab: {w}");
    }
    if rec.steps.is_empty() {
        anyhow::bail!("{}: the recording holds no sample", dir.display());
    }
    if !args.batch {
        return interactive(&args, rec);
    }
    // the first step is the baseline; one frame per later step
    let frames = rec.steps.len().saturating_sub(1);
    let traced = reader::Replayer::traced(&rec.steps);
    let source = RecordingSource::new(rec);
    // a recording made with `record --trace`: each frame's traced interval
    let mut traces = match traced {
        true => Some(TraceReplay::new(source.steps(), filter.cpus.clone())?),
        false => None,
    };
    let mut live = LiveSampler::with_source(source, filter)?;
    let mut out = crate::export::stdout::stdout();
    let mut jsonl = JsonlWriter::default();
    let mut buf = Vec::new();
    for _ in 0..frames {
        let mut frame = live.next_frame()?;
        let traced = match traces.as_mut() {
            Some(t) => t
                .next_interval()?
                .map(|iv| top_trace::shown(&iv, frame.cur, frame.filter())),
            None => None,
        };
        match args.format {
            BatchFormat::Json => {
                jsonl.write_frame(&mut frame, traced.as_ref(), &mut buf);
            }
            BatchFormat::Text => {
                let mut rep =
                    report::rates(frame.prev, frame.cur, frame.filter(), RateOpts::default());
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
                if let Some(tt) = &traced {
                    trace_text::write_trace(block.stamp, &rep, &TextOpts::default(), tt, &mut buf)?;
                }
            }
        }
        out.write_all(&buf)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The replay screen: the App of live `top` (its flags checked before the
/// screen is taken) fed by a [`Player`].
fn interactive(args: &Args, rec: reader::Recording) -> anyhow::Result<ExitCode> {
    if rec.steps.len() < 2 {
        anyhow::bail!("{}: one sample only; rates need two", rec.dir.display());
    }
    let cfg = TuiConfig {
        root: rec.dir.clone(),
        interval: median_interval(&rec.steps),
        irq: args.irq.clone(),
        cpus: args.cpus.clone(),
        strategy: Choice::Auto,
        sort: SortKey::Rate,
        threshold: None,
        verbose: true,
    };
    let app = crate::tui::initial_app(&cfg, crate::tui::color_enabled())?;
    let name = rec.dir.display().to_string();
    let filter = Filter {
        irq: app.filter.irq.clone(),
        cpus: None,
    };
    let player = Player::new(rec.steps.into(), name, filter)?;
    let signal = crate::tui::replay::run(app, player)?;
    Ok(signal.map_or(ExitCode::SUCCESS, super::top::signal_exit))
}

/// The recording's typical interval (the status line's "every").
fn median_interval(steps: &[reader::Step]) -> Duration {
    let mut d: Vec<u64> = steps
        .windows(2)
        .filter_map(|w| match w {
            [a, b] => Some(b.time.mono_ns.saturating_sub(a.time.mono_ns)),
            _ => None,
        })
        .collect();
    d.sort_unstable();
    let ns = d.get(d.len() / 2).copied().unwrap_or(1_000_000_000);
    Duration::from_nanos(ns).max(Duration::from_millis(10))
}
