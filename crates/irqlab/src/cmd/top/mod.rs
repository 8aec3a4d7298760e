//! `irqlab top`: watch interrupts live, sorted by rate. `--batch` prints
//! lines for scripts (text or JSON Lines, see `batch.rs`); without it the
//! interactive ratatui view runs (`crate::tui`). Both take their frames
//! from the same `sampler::LiveSampler`.
//!
//! Owns the flags of the whole subcommand and turns them into plain
//! values (`LivePlan`, `TuiConfig`); flags that cannot apply to the chosen
//! mode are refused by clap. `--trace` adds exact interrupt time from eBPF
//! to both modes (`crate::trace::top`; its text lines: `trace_text.rs`). Exit codes: 0 (also on `q`), 1 error, 2
//! usage, 128 + signal on SIGINT (130) / SIGTERM (143), as `bench`.

pub mod batch;
pub mod trace_text;

use crate::cmd::args::RootArgs;
use crate::report::SortKey;
use crate::sampler::host_source::{per_cpu_count_start, Resolved, Untargetable};
use crate::sampler::strategy::Choice;
use crate::sampler::LivePlan;
use clap::ValueEnum as _;
use std::process::ExitCode;
use std::time::Duration;

/// A flag this binary cannot honour (`--trace` without the feature).
pub(crate) const EXIT_USAGE: u8 = 2;

/// Output format of `--batch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BatchFormat {
    /// mpstat-like lines, each starting with the UTC time.
    Text,
    /// JSON Lines: one JSON object per interval (see README).
    Json,
}

/// How to read interrupt counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum StrategyChoice {
    /// Measure both at start when --irq selects only numbered IRQs; take the cheaper.
    #[default]
    Auto,
    /// Always read the whole /proc/interrupts.
    ProcInterrupts,
    /// Read /sys/kernel/irq/N/per_cpu_count of the selected IRQs (refused at start when --irq
    /// keeps an arch row or no numbered IRQ, or the files cannot be read).
    PerCpuCount,
}

impl From<StrategyChoice> for Choice {
    fn from(c: StrategyChoice) -> Choice {
        match c {
            StrategyChoice::Auto => Choice::Auto,
            StrategyChoice::ProcInterrupts => Choice::ProcInterrupts,
            StrategyChoice::PerCpuCount => Choice::PerCpuCount,
        }
    }
}

/// Row order of the IRQ table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SortArg {
    /// Rate over the interval, highest first.
    #[default]
    Rate,
    /// Count since boot, highest first.
    Total,
    /// IRQ number (arch rows after).
    Irq,
    /// Device name.
    Name,
}

impl From<SortArg> for SortKey {
    fn from(s: SortArg) -> SortKey {
        match s {
            SortArg::Rate => SortKey::Rate,
            SortArg::Total => SortKey::Total,
            SortArg::Irq => SortKey::Irq,
            SortArg::Name => SortKey::Name,
        }
    }
}

/// `--count`: a whole number of intervals, at least 1 (a run of none
/// would print nothing and exit 0).
pub fn parse_count(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("the count must be at least 1 interval (e.g. -n 3)".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("expected a whole number of intervals, found {s:?}")),
    }
}

/// `--threshold` of `top` and `replay`: a rate (per second) of at least 0.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    threshold_of(s, "a rate per second like 10 or 0.5", "a rate")
}

/// `show --threshold`: a count since boot, or with `--interval` a rate
/// per second, of at least 0 (which of the two is not known while the
/// flags are parsed, so the messages name both).
pub fn parse_show_threshold(s: &str) -> Result<f64, String> {
    threshold_of(
        s,
        "a count like 1000 (with --interval a rate per second like 0.5)",
        "a count (with --interval a rate per second)",
    )
}

/// A threshold of at least 0; `expected` and `what` say what it is in
/// the messages for text that is not a number and for a negative one.
fn threshold_of(s: &str, expected: &str, what: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected {expected}, found {s:?}"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{s:?} is not {what} of 0 or more"));
    }
    Ok(v)
}

/// Flags of `irqlab top`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab top                                     # interactive (needs a terminal)\n  \
    irqlab top -i 250ms --irq 'nvme|eth0' --cpus 0-7\n  \
    irqlab top --batch -i 1s -n 10                 # mpstat-like text lines\n  \
    irqlab top --batch --format json --irq virtio  # JSON Lines, one object per interval\n  \
    irqlab top --batch --format json --affinity    # ... with each IRQ's CPUs, followed as they move\n  \
    sudo irqlab top --trace                        # + exact handler/softirq time (eBPF, feature trace)")]
pub struct Args {
    #[command(flatten)]
    pub root: RootArgs,
    /// Time between samples (e.g. `1s`, `250ms`); at least 1ms, at most 24h.
    #[arg(long, short = 'i', default_value = "1s", value_parser = crate::cmd::args::interval,
          allow_hyphen_values = true)]
    pub interval: Duration,
    /// Stop after this many intervals, at least 1 (default: run until
    /// interrupted; --batch only).
    #[arg(long, short = 'n', requires = "batch", value_parser = parse_count,
          allow_hyphen_values = true)]
    pub count: Option<u64>,
    /// Print lines for scripts instead of the interactive view.
    #[arg(long)]
    pub batch: bool,
    /// Output format of --batch.
    #[arg(long, value_enum, default_value = "text", requires = "batch")]
    pub format: BatchFormat,
    #[command(flatten)]
    pub filter: crate::cmd::args::FilterArgs,
    /// How interrupt counts are read.
    #[arg(long, value_enum, default_value = "auto")]
    pub strategy: StrategyChoice,
    /// Row order of the IRQ table (text and the interactive view; JSON
    /// Lines are always by rate).
    #[arg(long, value_enum, default_value = "rate")]
    pub sort: SortArg,
    /// Hide IRQ rows below this rate (per second, all kept CPUs), in text
    /// and JSON; rows with no interrupt are hidden at any threshold, rows
    /// with a gap never.
    #[arg(long, value_name = "RATE", value_parser = parse_threshold, allow_hyphen_values = true)]
    pub threshold: Option<f64>,
    /// Explain the sampling strategy (on stderr with --batch) and add
    /// irqlab's own cost to text lines.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Add each numbered IRQ's affinity to JSON lines (`affinity`: the
    /// effective CPU list, else the configured one), read at start and
    /// again when the IRQ fires outside it (about 17 us an IRQ at start;
    /// the interactive view always shows it; text lines have none).
    #[arg(long)]
    pub affinity: bool,
    /// Exact hard IRQ and softirq time from eBPF programs (as `irqlab
    /// trace`; root, a binary built with `--features trace`): per CPU, per
    /// shown IRQ row, per softirq vector with raise -> entry latency.
    #[arg(long)]
    pub trace: bool,
}

impl Args {
    /// The live sampler's plan (checks --irq and --cpus).
    pub fn plan(&self) -> anyhow::Result<LivePlan> {
        Ok(LivePlan {
            root: self.root.dir.clone(),
            filter: self.filter.filter()?,
            strategy: self.strategy.into(),
        })
    }
}

/// Run `irqlab top`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.trace && !cfg!(feature = "trace") {
        eprintln!("irqlab: error: top --trace: {}", crate::trace::NOT_BUILT);
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    if let Some(why) = usage_error(&args) {
        eprintln!("irqlab: error: top {why}");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    // Batch: SIGINT/SIGTERM caught before anything is read or attached
    // (see batch::run).
    let stop = args.batch.then(crate::sampler::Stop::install).transpose()?;
    let resolved = match strategy_start(&args)? {
        Ok(resolved) => resolved,
        Err(why) => {
            eprintln!("irqlab: error: top {why}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    match stop {
        Some(stop) => batch::run(&args, resolved, &stop),
        None => interactive(args, resolved),
    }
}

/// A flag that cannot apply, refused before anything runs: `--sort`
/// other than `rate` with JSON Lines (their rows are always by rate), and
/// `--strategy per-cpu-count` without `--irq` (it reads the selected
/// numbered IRQs' files: with no selection there are none to read), and
/// `--affinity` with text lines ([`affinity_refusal`]).
fn usage_error(args: &Args) -> Option<String> {
    if let Some(why) = affinity_refusal(args.affinity, args.batch, args.format) {
        return Some(why);
    }
    if args.batch && args.format == BatchFormat::Json && args.sort != SortArg::Rate {
        let sort = args.sort.to_possible_value()?.get_name().to_string();
        return Some(format!(
            "--sort {sort}: JSON Lines rows are always by rate (use --format text, or sort the JSON)"
        ));
    }
    if args.strategy == StrategyChoice::PerCpuCount && args.filter.irq.is_none() {
        return Some(
            "--strategy per-cpu-count needs --irq selecting numbered IRQs (their per_cpu_count files are read)"
                .to_string(),
        );
    }
    None
}

/// `--affinity` of `top` and `replay` where it cannot apply: text lines
/// (`--batch`, format text) print no affinity. The interactive view
/// always shows it, JSON lines with the flag.
pub(crate) fn affinity_refusal(affinity: bool, batch: bool, format: BatchFormat) -> Option<String> {
    (affinity && batch && format == BatchFormat::Text).then(|| {
        "--affinity: text lines show no affinity (use --format json; the interactive view always shows it)"
            .to_string()
    })
}

/// `--strategy per-cpu-count` at start ([`per_cpu_count_start`]): the
/// targeted reader it resolved, handed to the sampler so that it is
/// resolved once (`Ok(Some)`; `Ok(None)` for another strategy or nothing
/// to say yet), or the refusal when it cannot apply to the selection (an
/// arch row, which has no `per_cpu_count` file, now or later; no numbered
/// IRQ; files that cannot be read), said before anything runs: the flags,
/// why, and what to use instead. A filter changed in the interactive view
/// while it runs falls back to the whole file instead (`-v` shows the
/// strategy).
fn strategy_start(args: &Args) -> anyhow::Result<Result<Option<Resolved>, String>> {
    if args.strategy != StrategyChoice::PerCpuCount {
        return Ok(Ok(None));
    }
    let plan = args.plan()?;
    Ok(per_cpu_count_start(&plan.root, &plan.filter).map_err(|why| refusal(args, why)))
}

/// The refusal of `--strategy per-cpu-count` for the reason `why`.
fn refusal(args: &Args, why: Untargetable) -> String {
    let f = &args.filter;
    let mut flags = format!("--irq {:?}", f.irq.as_deref().unwrap_or_default());
    if let Some(ex) = &f.exclude {
        flags.push_str(&format!(" --exclude {ex:?}"));
    }
    let because = match why {
        Untargetable::ArchRow(label) => format!(
            "keeps the arch row {label}, which has no /sys/kernel/irq/N/per_cpu_count file \
             (only /proc/interrupts counts it); select numbered IRQs only, or use"
        ),
        Untargetable::NoNumberedIrq => "keeps no numbered IRQ, so no \
             /sys/kernel/irq/N/per_cpu_count file to read; select numbered IRQs, or use"
            .to_string(),
        Untargetable::FilesUnusable(e) => format!(
            "selects IRQs whose counts cannot be read from /sys/kernel/irq/N/per_cpu_count \
             ({e}; the files need Linux 4.9+ with CONFIG_SPARSE_IRQ); use"
        ),
        other => format!("cannot apply ({other}); use"),
    };
    format!("--strategy per-cpu-count: {flags} {because} --strategy auto or proc-interrupts")
}

/// The interactive view (`crate::tui`) configured from the flags;
/// `resolved`: the reader `--strategy per-cpu-count` resolved at start.
pub fn interactive(args: Args, resolved: Option<Resolved>) -> anyhow::Result<ExitCode> {
    // bad values are said before "needs a terminal"
    args.plan()?;
    let trace = args.trace;
    let filter = args.filter.clone();
    let warnings = move |snap: &irqlab_core::Snapshot, rows: &crate::filter::Filter| {
        filter.warnings(snap, rows)
    };
    let signal = crate::tui::run_traced(tui_config(args), trace, &warnings, resolved)?;
    Ok(signal.map_or(ExitCode::SUCCESS, signal_exit))
}

/// The UI's configuration from the flags.
pub fn tui_config(args: Args) -> crate::tui::TuiConfig {
    crate::tui::TuiConfig {
        root: args.root.dir,
        interval: args.interval,
        irq: args.filter.irq,
        exclude: args.filter.exclude,
        cpus: args.filter.cpus,
        strategy: args.strategy.into(),
        sort: args.sort.into(),
        threshold: args.threshold,
        verbose: args.verbose,
    }
}

/// Exit status after a signal ended the run: 128 + signal, as `bench`.
pub fn signal_exit(sig: i32) -> ExitCode {
    ExitCode::from(u8::try_from(128 + sig).unwrap_or(1))
}
