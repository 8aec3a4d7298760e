//! `irqlab probe`: what reading `/proc/interrupts` and friends costs on
//! this kernel. For every target × method × buffer size it times `--reads`
//! reads (wall and system time, read calls, bytes) and prints a table, CSV,
//! or a JSON probe result set for `irqlab compare`. All file access goes
//! through HostFs (`--root` works on synthesized trees); this module only
//! orchestrates: targets -> measure -> summary -> report.

mod measure;
mod report;
mod size;
mod summary;
mod target;

use crate::export::Format;
use crate::host::HostFs;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `irqlab probe`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read a captured tree (sosreport, `irqlab synth` output) instead of `/`.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// Timed reads per target × method × buffer.
    #[arg(long, default_value_t = 1000)]
    pub reads: usize,
    /// Bytes asked for per read() call, comma-separated (`128`, `4k`, `1M`).
    #[arg(long, default_value = "4k,64k", value_parser = size::parse_sizes)]
    pub buffer: std::vec::Vec<usize>,
    /// Pin the measuring thread to this CPU (affinity restored afterwards).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the output to this file instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Run `irqlab probe`.
pub fn run(args: Args) -> Result<ExitCode> {
    if args.reads == 0 {
        bail!("--reads must be at least 1");
    }
    let fs = HostFs::new(&args.root);
    let (targets, missing) = target::discover(&fs);
    for m in &missing {
        eprintln!("{m}");
    }
    if targets.is_empty() {
        bail!("{}: none of the probe targets exist", args.root.display());
    }
    let mut env = target::environment(&fs);
    env.reads = args.reads;
    env.buffers = args.buffer.clone();
    env.pinned_cpu = args.cpu;
    let rows = {
        let _pin = args.cpu.map(measure::Pinned::to).transpose()?;
        measure_all(&fs, &targets, &args)?
    };
    for row in &rows {
        let bytes = row.summary.bytes_per_read.round() as u64;
        env.sizes.entry(row.label.to_string()).or_insert(bytes);
    }
    let rep = report::Report { env, rows };
    write(&rep, &args)?;
    Ok(ExitCode::SUCCESS)
}

fn measure_all(fs: &HostFs, targets: &[target::Target], args: &Args) -> Result<Vec<report::Row>> {
    let mut rows = Vec::new();
    for t in targets {
        for method in measure::Method::ALL {
            for &buffer in &args.buffer {
                let samples = measure::measure(fs, &t.paths, method, buffer, args.reads)?;
                let Some(summary) = summary::summarize(&samples) else {
                    continue;
                };
                rows.push(report::Row {
                    name: t.name,
                    label: t.label,
                    files: t.paths.len(),
                    method,
                    buffer,
                    summary,
                });
            }
        }
    }
    Ok(rows)
}

fn write(rep: &report::Report, args: &Args) -> Result<()> {
    let mut buf = Vec::new();
    match args.format {
        Format::Table => report::write_table(rep, &mut buf)?,
        Format::Json => report::write_json(rep, &mut buf)?,
        Format::Csv => report::write_csv(rep, &mut buf)?,
    }
    match &args.out {
        Some(path) => {
            std::fs::write(path, &buf).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(&buf).and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                other => other.context("writing to stdout"),
            }
        }
    }
}
