//! Probe: what reading `/proc/interrupts` and friends costs on this
//! kernel. For every target × method × buffer size it times a number of
//! reads (wall and thread-CPU time, read calls, bytes) and builds a
//! [`ProbeReport`]: one run, which `irqlab compare` reads as one trial.
//! All file access goes through HostFs (`--root` works on synthesized
//! trees). `cmd/probe.rs` only turns flags into a [`ProbePlan`] and writes the
//! report.
//!
//! - `target`: what is read, and the environment recorded with it;
//! - `measure`: the timed loop (clocks, pinning);
//! - `quantiles`: per-row statistics (one system-time source, stated);
//! - `output`: the report type and its table / JSON / CSV writers;
//! - `size`: buffer sizes (`4k`, `1M`);
//! - `kernel`: `--kernel`, the kernel side of the same reads (BPF);
//! - `nr_irqs`: the kernel's `nr_irqs` from kernel memory, where
//!   `show_interrupts()` cannot be hooked.

pub mod kernel;
pub mod measure;
pub mod nr_irqs;
pub mod output;
pub mod quantiles;
pub mod size;
pub mod target;
pub mod watch;

pub use output::{ProbeReport, ProbeRow};

use crate::host::HostFs;
use crate::sampler::clock;
use anyhow::{bail, Result};
use irqlab_core::paths::shown;

/// What one probe run measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbePlan {
    /// Timed reads per target × method × buffer (at least 1).
    pub reads: usize,
    /// Bytes asked for per read() call.
    pub buffers: Vec<usize>,
    /// Pin the measuring thread to this CPU.
    pub cpu: Option<usize>,
}

/// Measure every target present under `fs`'s root. `note` receives one
/// line per target that is absent. With `kernel`, every read's
/// kernel-side figures are taken too (`--kernel`).
pub fn run(
    fs: &HostFs,
    plan: &ProbePlan,
    mut kernel: Option<&mut (dyn kernel::Counter + 'static)>,
    mut note: impl FnMut(&str),
) -> Result<ProbeReport> {
    if plan.reads == 0 {
        bail!("a probe needs at least 1 read per row");
    }
    let (targets, missing) = target::discover(fs);
    for m in &missing {
        note(m);
    }
    if targets.is_empty() {
        bail!("{}: none of the probe targets exist", fs.root().display());
    }
    let start = clock::now()?;
    let started_at = clock::rfc3339_utc(start.wall_ns);
    let mut env = target::environment(fs, started_at.clone(), &mut note);
    env.reads = plan.reads;
    env.buffers = plan.buffers.clone();
    env.pinned_cpu = plan.cpu;
    let rows = {
        let _pin = plan
            .cpu
            .map(|c| {
                let c = u32::try_from(c).map_err(|_| anyhow::anyhow!("CPU {c} is out of range"))?;
                // the message names the errno once (no source chain)
                crate::pin::Pinned::to(c).map_err(|e| anyhow::anyhow!("{e}"))
            })
            .transpose()?;
        if let Some(k) = kernel.as_deref_mut() {
            k.watch_lookups(fs);
        }
        measure_all(fs, &targets, plan, kernel.as_deref_mut())?
    };
    let end = clock::now()?;
    let kernel = match kernel {
        Some(k) => {
            let max = k.counts()?.show_max_pos;
            let mut walk = kernel::walk(fs, (max > 0).then_some(max), &mut note);
            if walk.nr_irqs.is_none() {
                walk.nr_irqs_read = k.read_nr_irqs(fs, walk.descriptor_bound);
            }
            walk.lookups = rows
                .iter()
                .filter(|r| r.label == shown::PROC_INTERRUPTS)
                .filter_map(|r| r.kernel.as_ref()?.lookups.as_ref())
                .map(|q| q.p50.round() as u64)
                .max();
            Some(output::KernelRun {
                mechanism: k.mechanism(),
                walk,
            })
        }
        None => None,
    };
    for row in &rows {
        let bytes = row.summary.bytes_per_read.round() as u64;
        env.sizes.entry(row.label.to_string()).or_insert(bytes);
    }
    Ok(ProbeReport {
        env,
        rows,
        kernel,
        started_at,
        duration_s: end.mono_ns.saturating_sub(start.mono_ns) as f64 / 1e9,
    })
}

fn measure_all(
    fs: &HostFs,
    targets: &[target::Target],
    plan: &ProbePlan,
    mut kernel: Option<&mut (dyn kernel::Counter + 'static)>,
) -> Result<Vec<ProbeRow>> {
    let mut rows = Vec::new();
    for t in targets {
        for method in measure::ReadMethod::ALL {
            for &buffer in &plan.buffers {
                let batch = measure::measure_with(
                    fs,
                    &t.paths,
                    method,
                    buffer,
                    plan.reads,
                    kernel.as_deref_mut(),
                )?;
                let Some(summary) = quantiles::summarize(&batch) else {
                    continue;
                };
                let ksum = kernel.is_some().then(|| {
                    kernel::summarize(
                        &batch.kernel,
                        &batch.counting,
                        &summary.wall_values,
                        &summary.cpu_values,
                    )
                });
                rows.push(ProbeRow {
                    name: t.name,
                    label: t.label,
                    files: t.paths.len(),
                    method,
                    buffer,
                    summary,
                    kernel: ksum,
                });
            }
        }
    }
    Ok(rows)
}
