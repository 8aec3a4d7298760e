//! `irqlab show`: one snapshot of interrupts, softirqs and CPU time, or
//! rates over `--interval`. Reads through the sampler (HostFs), so
//! `--root` works on any captured or synthesized tree.

use crate::export::{self, Format};
use crate::host::HostFs;
use crate::report::{self, Filter};
use crate::sampler::{Sampler, Source, Ticker};
use irqlab_core::Snapshot;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read a captured tree (sosreport, `irqlab synth` output) instead of `/`.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Show rates over this interval (e.g. `1s`, `250ms`) instead of counts.
    #[arg(long, short = 'i', value_parser = crate::cmd::parse_duration)]
    pub interval: Option<Duration>,
    /// Keep only rows whose label, chip, actions or description match.
    #[arg(long)]
    pub irq: Option<String>,
    /// Keep only these CPUs (e.g. `0-3,8`).
    #[arg(long)]
    pub cpus: Option<String>,
}

/// Effective (else configured) affinity of every numbered row, from
/// `/proc/irq/N/` when the tree has it.
fn annotate_affinity(report: &mut report::Report, fs: &HostFs) {
    let Some(sec) = report.interrupts.as_mut() else {
        return;
    };
    for row in &mut sec.rows {
        if let Some(irq) = row.irq {
            row.affinity = crate::sampler::targeted::read_affinity(fs, irq);
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = Filter::from_flags(args.irq.as_deref(), args.cpus.as_deref())?;
    let mut sampler = Sampler::new(HostFs::new(&args.root), &Source::ALL);
    let mut first = Snapshot::default();
    sampler.sample(&mut first)?;
    for (src, why) in &sampler.missing {
        eprintln!(
            "irqlab: note: {} not shown: {why}",
            sampler.fs().path(src.rel()).display()
        );
    }
    if let Some(note) = first.interrupts.as_ref().and_then(|i| i.note()) {
        let path = sampler.fs().path("proc/interrupts");
        eprintln!("irqlab: note: {}: {note}", path.display());
    }
    let mut report = match args.interval {
        None => {
            drop(sampler); // frees the read buffers before the report is built
            report::from_snapshot(first, &filter)
        }
        Some(iv) => {
            let mut ticker = Ticker::new(iv);
            let mut second = Snapshot::default();
            ticker.wait();
            sampler.sample(&mut second)?;
            report::from_delta(&first, &second, &filter)
        }
    };
    annotate_affinity(&mut report, &HostFs::new(&args.root));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Table => export::table::write(&report, &mut out)?,
        Format::Json => export::json::write(&report, &mut out)?,
        Format::Csv => export::csv::write(&report, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
