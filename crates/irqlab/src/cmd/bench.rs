//! `irqlab bench`: flags, variant parsing and resume; the trial loop lives
//! in `bench::runner`.

use crate::bench::plan::Order;
use crate::bench::prepare::PrepareArgs;
use crate::bench::runner;
use crate::bench::workloads::{WorkloadKind, WorkloadOptions};
use anyhow::{bail, Context};
use irqlab_core::CpuList;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// What makes the interrupts.
    #[arg(long, short = 'w', value_enum, default_value = "ipi")]
    pub workload: WorkloadKind,
    /// Timed trials per variant.
    #[arg(long, short = 'n', default_value_t = 10)]
    pub trials: u32,
    /// Length of each trial (e.g. 2s, 500ms).
    #[arg(long, short = 'd', default_value = "2s", value_parser = crate::cmd::parse_duration)]
    pub duration: Duration,
    /// Untimed trials per variant before the first timed one.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Pause after each trial.
    #[arg(long, default_value = "0s", value_parser = crate::cmd::parse_duration)]
    pub cooldown: Duration,
    /// Name of this variant (e.g. tip, patch); default: the kernel release.
    #[arg(long)]
    pub label: Option<String>,
    /// Output directory (default ./irqlab-results/<label>/<timestamp>/).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// IRQs to measure: number, label (LOC) or regex on actions (repeatable).
    /// Default: the counter the workload is meant to raise.
    #[arg(long)]
    pub irq: Vec<String>,
    /// CPUs the workload runs on (e.g. 0-1).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Worker threads of the workload (ipi ring, tlb spinners, timers, disk readers).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Directory for the disk workload's file.
    #[arg(long)]
    pub tmp_dir: Option<PathBuf>,
    /// Shell command run before each trial's timed wait (command workload).
    #[arg(long)]
    pub start: Option<String>,
    /// Shell command run after each trial's timed wait (command workload).
    #[arg(long)]
    pub stop: Option<String>,
    #[command(flatten)]
    pub prepare: PrepareArgs,
    /// A variant to interleave with the others: NAME='flags' (repeat for
    /// each; flags: --workload, --cpus, --threads, --start, --stop,
    /// --sysctl, --irq-affinity, --pin-thread, --governor, -- CMD).
    #[arg(long = "variant", value_name = "NAME=FLAGS")]
    pub variants: Vec<String>,
    /// Order of variants within each round.
    #[arg(long, value_enum, default_value = "alternate")]
    pub order: Order,
    /// Seed of the random order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Continue an interrupted run in DIR (its plan.json holds the flags).
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// Print the summary as a table or JSON.
    #[arg(long, value_enum, default_value = "table")]
    pub format: SummaryFormat,
    /// Root of /proc and /sys (tests use fake trees).
    #[arg(long, default_value = "/", hide = true)]
    pub root: PathBuf,
    /// Host-change journal (default: /var/lib/irqlab/journal.jsonl for /).
    #[arg(long, hide = true)]
    pub journal: Option<PathBuf>,
    /// The command workload: CMD ARGS, run for each trial and killed at its end.
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// Summary output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryFormat {
    Table,
    Json,
}

/// Per-variant overrides parsed from `--variant NAME='flags'`.
#[derive(Debug, Clone, clap::Parser)]
#[command(no_binary_name = true)]
struct VariantFlags {
    #[arg(long, short = 'w', value_enum)]
    workload: Option<WorkloadKind>,
    #[arg(long)]
    cpus: Option<String>,
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long)]
    start: Option<String>,
    #[arg(long)]
    stop: Option<String>,
    #[command(flatten)]
    prepare: PrepareArgs,
    #[arg(last = true)]
    command: Vec<String>,
}

/// One variant of a run: its label, workload and host preparation.
#[derive(Debug, Clone)]
pub struct Variant {
    pub label: String,
    pub kind: WorkloadKind,
    pub options: WorkloadOptions,
    /// Preparation applied only around this variant's trials.
    pub prepare: Option<PrepareArgs>,
}

fn cpus(s: &Option<String>) -> anyhow::Result<Option<CpuList>> {
    s.as_deref()
        .map(|s| {
            CpuList::parse_list(s.as_bytes(), "--cpus")
                .map_err(|e| anyhow::anyhow!("--cpus {s:?}: {}", e.kind))
        })
        .transpose()
}

fn base_options(a: &Args) -> anyhow::Result<WorkloadOptions> {
    Ok(WorkloadOptions {
        cpus: cpus(&a.cpus)?,
        threads: a.threads,
        tmp_dir: a.tmp_dir.clone(),
        command: a.command.clone(),
        start: a.start.clone(),
        stop: a.stop.clone(),
        ..WorkloadOptions::default()
    })
}

fn has_prepare(p: &PrepareArgs) -> bool {
    p.governor.is_some()
        || !p.pin_thread.is_empty()
        || !p.irq_affinity.is_empty()
        || !p.sysctl.is_empty()
}

fn parse_variant(spec: &str, a: &Args) -> anyhow::Result<Variant> {
    let (name, flags) = spec
        .split_once('=')
        .filter(|(n, _)| !n.trim().is_empty())
        .with_context(|| format!("--variant {spec:?}: expected NAME='flags'"))?;
    let words = shlex::split(flags)
        .with_context(|| format!("--variant {name}: unbalanced quotes in {flags:?}"))?;
    let f = <VariantFlags as clap::Parser>::try_parse_from(&words)
        .map_err(|e| anyhow::anyhow!("--variant {name}: {}", e.render().to_string().trim()))?;
    let mut options = base_options(a)?;
    if f.cpus.is_some() {
        options.cpus = cpus(&f.cpus)?;
    }
    options.threads = f.threads.or(options.threads);
    options.start = f.start.or(options.start);
    options.stop = f.stop.or(options.stop);
    if !f.command.is_empty() {
        options.command = f.command;
    }
    let prepare = has_prepare(&f.prepare).then_some(f.prepare);
    Ok(Variant {
        label: name.trim().to_string(),
        kind: f.workload.unwrap_or(a.workload),
        options,
        prepare,
    })
}

/// The variants of a run: one from the main flags, or one per `--variant`.
pub fn variants(a: &Args, default_label: &str) -> anyhow::Result<Vec<Variant>> {
    if a.variants.is_empty() {
        let label = a.label.clone().unwrap_or_else(|| default_label.to_string());
        return Ok(vec![Variant {
            label,
            kind: a.workload,
            options: base_options(a)?,
            prepare: None,
        }]);
    }
    let v: Vec<Variant> = a
        .variants
        .iter()
        .map(|s| parse_variant(s, a))
        .collect::<anyhow::Result<_>>()?;
    for (i, x) in v.iter().enumerate() {
        if v[..i].iter().any(|y| y.label == x.label) {
            bail!("--variant {:?} given twice", x.label);
        }
    }
    Ok(v)
}

/// Re-read the flags of an interrupted run from `dir/plan.json`.
fn resumed_args(dir: &std::path::Path) -> anyhow::Result<Args> {
    let path = dir.join("plan.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("--resume: reading {}", path.display()))?;
    let plan: runner::PlanFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a bench plan", path.display()))?;
    let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(&plan.argv)
        .map_err(|e| anyhow::anyhow!("{}: stored flags no longer parse: {e}", path.display()))?;
    match cli.command {
        crate::cli::Command::Bench(mut a) => {
            a.out = Some(dir.to_path_buf());
            a.resume = Some(dir.to_path_buf());
            Ok(*a)
        }
        _ => bail!("{}: not a bench plan", path.display()),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let args = match &args.resume {
        Some(dir) => resumed_args(dir)?,
        None => args,
    };
    runner::run(&args)
}
