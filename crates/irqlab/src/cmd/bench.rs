//! `irqlab bench`: flags -> a plain [`Plan`] (variants, order, durations,
//! output, resume, host preparation), the checks of `--resume`, and the
//! printing of the summary. The trial loop lives in `bench::runner` and
//! never sees clap types.
//!
//! A command after `--` (or `--start`/`--stop`) without `--workload`
//! implies `--workload command`; with another explicit workload it is a
//! usage error. Usage errors (bad values, a plan that cannot run, a
//! `--resume` whose flags differ from the stored run) exit with code 2
//! before any file or host change.

use crate::bench::plan::{invalid, Invalid, Order, Output, Plan, PlanFile, Variant};
use crate::bench::prepare::{IrqSpec, PinSpec, Preparation, SysctlSpec};
use crate::bench::progress::Progress;
use crate::bench::runner;
use crate::bench::workloads::veth::{Loss, NetPath, Rate};
use crate::bench::workloads::{WorkloadKind, WorkloadOptions};
use crate::cmd::args::{self, RootArgs};
use crate::host::HostFs;
use anyhow::Context;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory};
use irqlab_core::CpuList;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Exit code of a usage error.
const EXIT_USAGE: u8 = 2;

fn workload_parser() -> impl TypedValueParser<Value = WorkloadKind> {
    let values = WorkloadKind::ALL
        .iter()
        .map(|(_, name, help)| PossibleValue::new(*name).help(*help));
    PossibleValuesParser::new(values).try_map(|s| s.parse::<WorkloadKind>())
}

fn order_parser() -> impl TypedValueParser<Value = Order> {
    let values = Order::ALL
        .iter()
        .map(|(_, name, help)| PossibleValue::new(*name).help(*help));
    PossibleValuesParser::new(values).try_map(|s| s.parse::<Order>())
}

/// The cpufreq governors of the kernel's tree, offered by shell
/// completions of `--governor`.
const GOVERNORS: [&str; 6] = [
    "performance",
    "powersave",
    "schedutil",
    "ondemand",
    "conservative",
    "userspace",
];

/// `--governor`: any name (a kernel may have governors [`GOVERNORS`]
/// does not list; `bench::prepare` checks it against the host's).
fn any_governor(s: &str) -> Result<String, String> {
    Ok(s.to_string())
}

/// The host preparation flags (flattened into bench and guard-selftest).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PrepareFlags {
    /// Set every cpufreq policy's governor (default `performance`): one
    /// of the kernel's (performance, powersave, schedutil, ondemand,
    /// conservative, userspace) or another this kernel has.
    #[arg(long, num_args = 0..=1, default_missing_value = "performance", value_name = "GOV",
          value_parser = args::Named::new(any_governor, &GOVERNORS), hide_possible_values = true)]
    pub governor: Option<String>,
    /// Pin threads named like PATTERN (glob, or re:REGEX) to CPUS, e.g.
    /// 'irq/*-eth0=0' (per-CPU kernel threads such as ksoftirqd/N cannot
    /// move and are skipped with a note).
    #[arg(long, value_name = "PATTERN=CPUS")]
    pub pin_thread: Vec<PinSpec>,
    /// Set /proc/irq/IRQ/smp_affinity_list, e.g. '45=1' (an IRQ the kernel
    /// refuses to move is skipped with a note).
    #[arg(long, value_name = "IRQ=CPUS")]
    pub irq_affinity: Vec<IrqSpec>,
    /// Set a sysctl for the run, e.g. 'kernel.timer_migration=0'.
    #[arg(long, value_name = "KEY=VALUE")]
    pub sysctl: Vec<SysctlSpec>,
    /// Fail instead of skipping a preparation this machine cannot do.
    #[arg(long)]
    pub strict: bool,
}

impl PrepareFlags {
    /// The plain preparation.
    pub fn preparation(&self) -> Preparation {
        Preparation {
            governor: self.governor.clone(),
            pin_thread: self.pin_thread.clone(),
            irq_affinity: self.irq_affinity.clone(),
            sysctl: self.sysctl.clone(),
            strict: self.strict,
        }
    }
}

/// Flags of `irqlab bench`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab bench                                      # ipi workload, 10 x 2 s\n  \
    irqlab bench --label tip -w net --trials 20 --trial-length 5s\n  \
    irqlab bench -w net --variant off='--sysctl net.core.busy_poll=0' \\\n      \
    --variant on='--sysctl net.core.busy_poll=50'   # two settings, interleaved\n  \
    irqlab bench --preset irq-rate -w disk --measure virtio1-req.0\n  \
    irqlab bench --resume irqlab-results/tip/<timestamp>  # after Ctrl-C\n  \
    irqlab compare irqlab-results/tip irqlab-results/patch --format text")]
pub struct Args {
    /// What makes the interrupts [default: ipi, or command when `-- CMD`
    /// or --start/--stop is given].
    #[arg(long, short = 'w', value_parser = workload_parser())]
    pub workload: Option<WorkloadKind>,
    /// Timed trials per variant (1 to 4294967295).
    #[arg(long, short = 'n', default_value_t = 10, allow_hyphen_values = true,
          value_parser = |s: &str| args::whole_number::<u32>(s, 1, u32::MAX.into()))]
    pub trials: u32,
    /// Length of each trial's timed window (e.g. 2s, 500ms; at least 10ms,
    /// at most 8760h).
    /// Formerly --duration.
    #[arg(long, short = 'd', alias = "duration", default_value = "2s", value_parser = args::duration,
          allow_hyphen_values = true)]
    pub trial_length: Duration,
    /// Untimed trials per variant before the first timed one.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true,
          value_parser = |s: &str| args::whole_number::<u32>(s, 0, u32::MAX.into()))]
    pub warmup: u32,
    /// Pause between trials (e.g. 1s, 500ms; at most 8760h).
    #[arg(long, default_value = "0s", value_parser = args::duration, allow_hyphen_values = true)]
    pub cooldown: Duration,
    /// Name of this variant (e.g. tip, patch); default: the kernel release.
    #[arg(long)]
    pub label: Option<String>,
    /// Output directory (default `./irqlab-results/<label>/<timestamp>/`);
    /// one that already holds a run is refused (see --resume).
    #[arg(long, short = 'o', value_parser = super::args::path())]
    pub out: Option<PathBuf>,
    /// IRQ counters whose rate is the trial's metric: an IRQ number, a
    /// label (LOC) or a regex on actions, each matching at least one row
    /// (repeatable). Default: the counter the workload is meant to raise.
    /// Not a row filter; formerly --irq.
    #[arg(long, alias = "irq", value_name = "IRQ")]
    pub measure: Vec<String>,
    /// CPUs the workload runs on (e.g. 0-1). Formerly --cpus.
    #[arg(long, alias = "cpus", value_name = "LIST")]
    pub workload_cpus: Option<String>,
    /// Worker threads of the workload (ipi ring, tlb spinners, timers, disk readers).
    #[arg(long, allow_hyphen_values = true, value_parser = threads_parser)]
    pub threads: Option<usize>,
    /// Directory for the disk workload's file (--workload disk only).
    #[arg(long, value_parser = super::args::path())]
    pub tmp_dir: Option<PathBuf>,
    /// Shell command run before each trial's timed wait (command workload).
    #[arg(long)]
    pub start: Option<String>,
    /// Shell command run after each trial's timed wait (command workload).
    #[arg(long)]
    pub stop: Option<String>,
    /// Command workload: time from --start and the command's start to the
    /// timed window, which then covers its steady state only (it closes
    /// before the command is stopped; at most 8760h) [default: 200ms].
    #[arg(long, value_parser = args::duration, allow_hyphen_values = true)]
    pub settle: Option<Duration>,
    /// Net workload: drop this share of the packets (e.g. 0.01%, 2%; 0%
    /// is the loss-free baseline on the same path). Runs the transfer over
    /// a veth pair between two network namespaces (needs root, `nft`).
    #[arg(long, value_name = "PCT%", value_parser = |s: &str| s.parse::<Loss>())]
    pub loss: Option<Loss>,
    /// Net workload: limit the sender's rate (e.g. 200mbit, 1gbit; tc
    /// tbf). Runs the transfer over veth like --loss.
    #[arg(long, value_name = "RATE", value_parser = |s: &str| s.parse::<Rate>())]
    pub rate: Option<Rate>,
    /// Defaults of a classic experiment for the flags not given
    /// (docs/recipes.md): irq-rate = --trials 20 --trial-length 5s
    /// --governor performance --workload-cpus LAST_CPU (not for an ipi
    /// ring or a command), and needs --measure.
    #[arg(long, value_name = "NAME", value_parser = |s: &str| crate::bench::preset::find(s).map(|p| p.name.to_string()))]
    pub preset: Option<String>,
    #[command(flatten)]
    pub prepare: PrepareFlags,
    /// A variant to interleave with the others: NAME='flags' (repeat for
    /// each; flags: --workload, --workload-cpus, --threads, --start, --stop, --loss, --rate,
    /// --sysctl, --irq-affinity, --pin-thread, --governor, -- CMD).
    #[arg(long = "variant", value_name = "NAME=FLAGS")]
    pub variants: Vec<String>,
    /// Order of variants within each round (random: two or more variants).
    #[arg(long, value_parser = order_parser(), default_value = "alternate")]
    pub order: Order,
    /// Seed of the random order (--order random only) [default: 1].
    #[arg(long, allow_hyphen_values = true,
          value_parser = |s: &str| args::whole_number::<u64>(s, 0, u64::MAX))]
    pub seed: Option<u64>,
    /// Continue the interrupted run in DIR with the flags stored in its
    /// plan.json; flags given as well must equal the stored ones.
    #[arg(long, value_name = "DIR", conflicts_with = "out", value_parser = super::args::path())]
    pub resume: Option<PathBuf>,
    /// Trace every trial with eBPF (root, BTF; build feature `trace`):
    /// exact hard IRQ and softirq time, per-vector run time and
    /// raise-to-entry latency p50/p99, per-IRQ handler time, as trial
    /// metrics `trace_*` (lower is better).
    #[arg(long)]
    pub trace: bool,
    /// After the run, say how many trials per variant `compare` needs to
    /// detect a change of PCT percent in each variant's headline metric
    /// (80 % power at compare's default alpha and noise gate), from the
    /// spread this run measured. E.g. `--target-effect 1%`.
    #[arg(long, value_name = "PCT", value_parser = effect_pct)]
    pub target_effect: Option<f64>,
    /// Print the summary as a table or JSON.
    #[arg(long, value_enum, default_value = "table")]
    pub format: SummaryFormat,
    #[command(flatten)]
    pub json: super::args::JsonLayout,
    #[command(flatten)]
    pub root: RootArgs,
    /// Host-change journal (default: /var/lib/irqlab/journal.jsonl for /).
    #[arg(long, hide = true, value_parser = super::args::path())]
    pub journal: Option<PathBuf>,
    /// The command workload: CMD ARGS, run for each trial and killed at its
    /// end (implies --workload command).
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// Summary output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryFormat {
    Table,
    Json,
}

/// Value parser of `--threads` (also in `--variant`): 1 to
/// [`MAX_THREADS`].
fn threads_parser(s: &str) -> Result<usize, String> {
    args::whole_number(s, 1, MAX_THREADS)
}

/// Most `--threads`: far more than any workload can use, and a number
/// every platform's `usize` holds.
const MAX_THREADS: u64 = 1 << 20;

/// Per-variant overrides parsed from `--variant NAME='flags'`.
#[derive(Debug, Clone, clap::Parser)]
#[command(no_binary_name = true)]
struct VariantFlags {
    #[arg(long, short = 'w', value_parser = workload_parser())]
    workload: Option<WorkloadKind>,
    #[arg(long, alias = "cpus")]
    workload_cpus: Option<String>,
    #[arg(long, allow_hyphen_values = true, value_parser = threads_parser)]
    threads: Option<usize>,
    #[arg(long)]
    start: Option<String>,
    #[arg(long)]
    stop: Option<String>,
    #[arg(long, value_parser = |s: &str| s.parse::<Loss>())]
    loss: Option<Loss>,
    #[arg(long, value_parser = |s: &str| s.parse::<Rate>())]
    rate: Option<Rate>,
    #[command(flatten)]
    prepare: PrepareFlags,
    #[arg(last = true)]
    command: Vec<String>,
}

/// `--loss`/`--rate` as a veth path (none when neither is given).
fn net_path(loss: Option<Loss>, rate: Option<Rate>) -> Option<NetPath> {
    (loss.is_some() || rate.is_some()).then_some(NetPath { loss, rate })
}

/// `--loss`/`--rate` belong to the net workload.
fn check_net_path(kind: WorkloadKind, opts: &WorkloadOptions, whose: &str) -> anyhow::Result<()> {
    if opts.net_path.is_some() && kind != WorkloadKind::Net {
        return Err(invalid(format!(
            "{whose}--loss and --rate apply to --workload net, not --workload {}",
            kind.name()
        )));
    }
    Ok(())
}

fn cpus(s: &Option<String>) -> anyhow::Result<Option<CpuList>> {
    s.as_deref()
        .map(|s| {
            CpuList::parse_list(s.as_bytes(), "--workload-cpus")
                .map_err(|e| invalid(format!("--workload-cpus {s:?}: {}", e.kind)))
        })
        .transpose()
}

/// The workload: explicit, or command when something is to be run.
fn kind(
    explicit: Option<WorkloadKind>,
    opts: &WorkloadOptions,
    whose: &str,
) -> anyhow::Result<WorkloadKind> {
    let wants_command = !opts.command.is_empty() || opts.start.is_some() || opts.stop.is_some();
    match explicit {
        None if wants_command => Ok(WorkloadKind::Command),
        None => Ok(WorkloadKind::Ipi),
        Some(k) if wants_command && k != WorkloadKind::Command => Err(invalid(format!(
            "{whose}a command (-- CMD, --start, --stop) needs --workload command, not --workload {}",
            k.name()
        ))),
        Some(k) => Ok(k),
    }
}

/// Seed of `--order random` when `--seed` is not given.
const DEFAULT_SEED: u64 = 1;

fn base_options(a: &Args) -> anyhow::Result<WorkloadOptions> {
    let defaults = WorkloadOptions::default();
    Ok(WorkloadOptions {
        cpus: cpus(&a.workload_cpus)?,
        threads: a.threads,
        tmp_dir: a.tmp_dir.clone(),
        command: a.command.clone(),
        start: a.start.clone(),
        stop: a.stop.clone(),
        settle: a.settle.unwrap_or(defaults.settle),
        net_path: net_path(a.loss, a.rate),
        ..defaults
    })
}

/// The distinct workloads of `kinds`, as `--workload` values (`ipi, tlb`).
fn workload_names(kinds: &[WorkloadKind]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for k in kinds {
        if !names.contains(&k.name()) {
            names.push(k.name());
        }
    }
    names.join(", ")
}

/// Refuse `--threads` or `--workload-cpus` (given as `threads`, `cpus`)
/// when no workload of `kinds` uses them; `whose` prefixes the message.
fn check_placement(
    threads: bool,
    cpus: bool,
    kinds: &[WorkloadKind],
    whose: &str,
) -> anyhow::Result<()> {
    if threads && !kinds.iter().any(|k| k.uses_threads()) {
        return Err(invalid(format!(
            "{whose}--threads applies to --workload ipi, tlb, timer and disk, not --workload {}",
            workload_names(kinds)
        )));
    }
    if cpus && !kinds.iter().any(|k| k.uses_cpus()) {
        return Err(invalid(format!(
            "{whose}--workload-cpus places the built-in workloads, not --workload command \
             (the command runs where it is started: pin it with taskset)"
        )));
    }
    Ok(())
}

/// Refuse run-wide flags that nothing in the run would use: `--settle`,
/// `--tmp-dir`, `--threads` and `--workload-cpus` without a variant whose
/// workload uses them, `--label` with `--variant`, `--order random` with
/// one variant, `--seed` without `--order random`.
fn check_unused_flags(a: &Args, vs: &[Variant]) -> anyhow::Result<()> {
    let runs = |k: WorkloadKind| vs.iter().any(|v| v.kind == k);
    let kinds: Vec<WorkloadKind> = vs.iter().map(|v| v.kind).collect();
    check_placement(a.threads.is_some(), a.workload_cpus.is_some(), &kinds, "")?;
    if let (Some(label), false) = (&a.label, a.variants.is_empty()) {
        return Err(invalid(format!(
            "--label {label:?} names the variant of a run without --variant; \
             each --variant NAME=… names its own"
        )));
    }
    if a.settle.is_some() && !runs(WorkloadKind::Command) {
        return Err(invalid(format!(
            "--settle applies to --workload command (the wait before its timed window), \
             not --workload {}",
            workload_names(&kinds)
        )));
    }
    if a.tmp_dir.is_some() && !runs(WorkloadKind::Disk) {
        return Err(invalid(format!(
            "--tmp-dir applies to --workload disk (the directory of its file), not --workload {}",
            workload_names(&kinds)
        )));
    }
    if a.order == Order::Random && vs.len() < 2 {
        return Err(invalid(
            "--order random: a run of one variant has nothing to reorder; \
             give two or more --variant",
        ));
    }
    if a.seed.is_some() && a.order != Order::Random {
        return Err(invalid(
            "--seed seeds --order random only; this run's order is alternate",
        ));
    }
    Ok(())
}

fn parse_variant(spec: &str, a: &Args) -> anyhow::Result<Variant> {
    let (name, flags) = spec
        .split_once('=')
        .filter(|(n, _)| !n.trim().is_empty())
        .ok_or_else(|| invalid(format!("--variant {spec:?}: expected NAME='flags'")))?;
    let words = shlex::split(flags)
        .ok_or_else(|| invalid(format!("--variant {name}: unbalanced quotes in {flags:?}")))?;
    let f = <VariantFlags as clap::Parser>::try_parse_from(&words).map_err(|e| {
        invalid(format!(
            "--variant {name}: {}",
            e.render().to_string().trim()
        ))
    })?;
    let mut options = base_options(a)?;
    for w in args::deprecated_spellings(&words, RENAMED) {
        eprintln!("irqlab: warning: --variant {name}: {w}");
    }
    if f.workload_cpus.is_some() {
        options.cpus = cpus(&f.workload_cpus)?;
    }
    options.threads = f.threads.or(options.threads);
    options.start = f.start.or(options.start);
    options.stop = f.stop.or(options.stop);
    if !f.command.is_empty() {
        options.command = f.command;
    }
    if f.loss.is_some() || f.rate.is_some() {
        let base = options.net_path.unwrap_or_default();
        options.net_path = net_path(f.loss.or(base.loss), f.rate.or(base.rate));
    }
    let prepare = f.prepare.preparation();
    let kind = kind(
        f.workload.or(a.workload),
        &options,
        &format!("--variant {name}: "),
    )?;
    check_net_path(kind, &options, &format!("--variant {name}: "))?;
    check_placement(
        f.threads.is_some(),
        f.workload_cpus.is_some(),
        &[kind],
        &format!("--variant {name}: "),
    )?;
    Ok(Variant {
        label: name.trim().to_string(),
        kind,
        options,
        prepare: (!prepare.is_empty()).then_some(prepare),
    })
}

/// The variants of a run: one from the main flags, or one per `--variant`.
fn variants(a: &Args, default_label: &str) -> anyhow::Result<Vec<Variant>> {
    if a.variants.is_empty() {
        let label = a.label.clone().unwrap_or_else(|| default_label.to_string());
        if label.trim().is_empty() {
            return Err(invalid(format!(
                "--label {label:?}: a variant needs a name (its results go to <out>/<label>/)"
            )));
        }
        let options = base_options(a)?;
        let kind = kind(a.workload, &options, "")?;
        check_net_path(kind, &options, "")?;
        return Ok(vec![Variant {
            label,
            kind,
            options,
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
            return Err(invalid(format!("--variant {:?} given twice", x.label)));
        }
    }
    Ok(v)
}

/// The plan of `a`; `argv` is recorded for `--resume`.
pub fn plan(a: &Args, argv: Vec<String>) -> anyhow::Result<Plan> {
    let kernel =
        crate::env::kernel_release(&HostFs::new(a.root.path())).unwrap_or_else(|| "run".into());
    let variants = variants(a, &kernel)?;
    check_unused_flags(a, &variants)?;
    Ok(Plan {
        variants,
        trials: a.trials,
        warmup: a.warmup,
        duration: a.trial_length,
        cooldown: a.cooldown,
        order: a.order,
        seed: a.seed.unwrap_or(DEFAULT_SEED),
        irq: a.measure.clone(),
        prepare: a.prepare.preparation(),
        output: Output {
            dir: a.resume.clone().or_else(|| a.out.clone()),
            resume: a.resume.is_some(),
        },
        root: a.root.dir.clone(),
        journal: a.journal.clone(),
        trace: a.trace,
        target_effect_pct: a.target_effect,
        argv,
    })
}

/// `--target-effect`: a percentage above 0 and below 100 (`1%` or `1`).
fn effect_pct(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| format!("expected a percentage such as 1% or 0.5, found {s:?}"))?;
    if v.is_finite() && v > 0.0 && v < 100.0 {
        Ok(v)
    } else {
        Err(format!("must be above 0 % and below 100 %, found {s:?}"))
    }
}

/// The `bench` matches of a full irqlab command line.
fn bench_matches(argv: &[String]) -> anyhow::Result<ArgMatches> {
    let m = crate::cli::Cli::command()
        .try_get_matches_from(argv)
        .map_err(|e| anyhow::anyhow!("{}", e.render().to_string().trim()))?;
    match m.subcommand() {
        Some(("bench", b)) => Ok(b.clone()),
        _ => Err(anyhow::anyhow!("not a bench command line")),
    }
}

/// Flags that may differ between a run and its `--resume`.
/// (`dir` is the id of `--root`, from the shared `RootArgs`.)
const FREE_ON_RESUME: [&str; 7] = [
    "resume", "format", "compact", "pretty", "dir", "journal", "out",
];

fn raw(m: &ArgMatches, id: &str) -> Vec<OsString> {
    m.get_raw(id)
        .map(|v| v.map(|s| s.to_os_string()).collect())
        .unwrap_or_default()
}

/// Refuse a `--resume` whose explicitly given flags differ from the
/// stored run's, naming the first that differs.
fn check_resume_flags(dir: &Path, current: &ArgMatches, stored: &ArgMatches) -> anyhow::Result<()> {
    for id in current.ids().map(|i| i.as_str()) {
        if FREE_ON_RESUME.contains(&id)
            || current.value_source(id) != Some(ValueSource::CommandLine)
        {
            continue;
        }
        let (now, then) = (raw(current, id), raw(stored, id));
        if now != then {
            let show = |v: &[OsString]| {
                if v.is_empty() {
                    "(not given)".to_string()
                } else {
                    v.iter()
                        .map(|s| s.to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join(" ")
                }
            };
            let flag = if id == "command" {
                "-- CMD".to_string()
            } else {
                format!("--{}", id.replace('_', "-"))
            };
            return Err(invalid(format!(
                "--resume {}: {flag} differs from the stored run ({} there, {} here); \
                 resume without it, or start a new run with another --out",
                dir.display(),
                show(&then),
                show(&now)
            )));
        }
    }
    Ok(())
}

/// `a` with its `--preset`'s defaults for the flags `argv` does not give
/// (said on stderr).
fn with_preset(mut a: Args, argv: &[String]) -> anyhow::Result<Args> {
    let Some(name) = a.preset.clone() else {
        return Ok(a);
    };
    let p = crate::bench::preset::find(&name).map_err(invalid)?;
    let m = bench_matches(argv).ok();
    let given = |id: &str| {
        m.as_ref()
            .is_some_and(|m| m.value_source(id) == Some(ValueSource::CommandLine))
    };
    if p.needs_irq && a.measure.is_empty() {
        return Err(invalid(format!(
            "--preset {name}: name the IRQ with --measure (a /proc/interrupts label such as \
             virtio1-req.0, an action regex or a number)"
        )));
    }
    let mut set = Vec::new();
    if !given("trials") {
        a.trials = p.trials;
        set.push(format!("--trials {}", p.trials));
    }
    if !given("trial_length") {
        a.trial_length = p.duration;
        set.push(format!("--trial-length {}s", p.duration.as_secs_f64()));
    }
    if let (Some(g), None) = (p.governor, &a.prepare.governor) {
        a.prepare.governor = Some(g.to_string());
        set.push(format!("--governor {g}"));
    }
    if p.pin_last_cpu && a.workload_cpus.is_none() {
        match unpinnable(&a) {
            Some(why) => set.push(format!("(no --workload-cpus: {why})")),
            None => {
                let cpus = crate::bench::workloads::placement::allowed_cpus()?;
                if let Some(last) = cpus.last() {
                    a.workload_cpus = Some(last.to_string());
                    set.push(format!("--workload-cpus {last}"));
                }
            }
        }
    }
    if !set.is_empty() {
        eprintln!("irqlab: --preset {name}: {}", set.join(" "));
    }
    Ok(a)
}

/// Why the run of `a` cannot have its workload pinned to one CPU: an ipi
/// ring there sends no IPI, a command is not placed by irqlab. None when
/// every variant can (or the flags do not parse: the plan says why).
fn unpinnable(a: &Args) -> Option<&'static str> {
    let vs = variants(a, "preset").ok()?;
    vs.iter().find_map(|v| match v.kind {
        WorkloadKind::Ipi => Some("an ipi ring on one CPU sends no IPI"),
        WorkloadKind::Command => Some("a command runs where it is started"),
        _ => None,
    })
}

/// Re-read the flags of an interrupted run from `dir/plan.json` and check
/// the flags given now against them.
fn resumed_args(dir: &Path, now: &Args) -> anyhow::Result<(Args, Vec<String>)> {
    let path = dir.join("plan.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("--resume: reading {}", path.display()))?;
    let stored: PlanFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a bench plan", path.display()))?;
    let stored_m = bench_matches(&stored.argv)
        .with_context(|| format!("{}: stored flags no longer parse", path.display()))?;
    let argv: Vec<String> = std::env::args().collect();
    let cur = bench_matches(&argv).ok();
    if let Some(cur) = &cur {
        check_resume_flags(dir, cur, &stored_m)?;
    }
    let given = |id: &str| {
        cur.as_ref()
            .is_some_and(|m| m.value_source(id) == Some(ValueSource::CommandLine))
    };
    let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(&stored.argv)
        .map_err(|e| anyhow::anyhow!("{}: stored flags no longer parse: {e}", path.display()))?;
    match cli.command {
        crate::cli::Command::Bench(mut a) => {
            a.out = None;
            a.resume = Some(dir.to_path_buf());
            a.format = now.format;
            a.json = now.json;
            if given("dir") {
                a.root = now.root.clone();
            }
            if given("journal") {
                a.journal = now.journal.clone();
            }
            Ok((*a, stored.argv))
        }
        _ => anyhow::bail!("{}: not a bench plan", path.display()),
    }
}

/// The summary on stdout (`export::stdout`: a failed write names stdout,
/// as every command's does).
fn print_summary(a: &Args, f: &runner::Finished) -> anyhow::Result<()> {
    let mut o = crate::export::stdout::stdout();
    match a.format {
        SummaryFormat::Json => {
            if a.json.pretty_on_stdout() {
                serde_json::to_writer_pretty(&mut o, &f.summary)?;
            } else {
                serde_json::to_writer(&mut o, &f.summary)?;
            }
            std::io::Write::write_all(&mut o, b"\n")?;
        }
        SummaryFormat::Table => crate::bench::summary::write(&f.summary, &mut o)?,
    }
    std::io::Write::flush(&mut o)?;
    if f.variants > 1 && f.summary.finished_trials > 0 {
        eprint!("{}", compare_hint(f));
    }
    Ok(())
}

/// What stderr says after a run of several variants: the `compare`
/// command when every variant has 2 or more trials (compare needs them),
/// else which variants have too few.
fn compare_hint(f: &runner::Finished) -> String {
    let short: Vec<String> = f
        .trials_per_variant
        .iter()
        .filter(|(_, n)| *n < 2)
        .map(|(label, n)| format!("{label} ({n} trial{})", if *n == 1 { "" } else { "s" }))
        .collect();
    if short.is_empty() {
        return format!(
            "irqlab: compare the variants with: irqlab compare {}\n",
            f.out.display()
        );
    }
    format!(
        "irqlab: too few trials to compare the variants (compare needs 2 per variant): {}\n",
        short.join(", ")
    )
}

/// How long a signal waits for the run to end its trial, restore the
/// host and say what it measured before the guard restores the host
/// itself and exits (see `guard::defer_signals`). Every workload ends its
/// trial on the runner's stop within a poll, whatever `--trial-length`
/// and `--settle` are; what may remain is ending a command's process
/// group (SIGTERM, then SIGKILL after `KILL_GRACE`), restoring the host
/// and writing the summary.
const SIGNAL_GRACE: Duration = Duration::from_secs(30);

fn run_checked(args: Args) -> anyhow::Result<ExitCode> {
    let (args, argv) = match &args.resume {
        Some(dir) => resumed_args(dir, &args)?,
        None => (args.clone(), std::env::args().collect()),
    };
    let args = with_preset(args, &argv)?;
    if let Some(why) = args.json.refused_with(args.format, SummaryFormat::Json) {
        return Err(invalid(why));
    }
    let plan = plan(&args, argv)?;
    // SIGINT/SIGTERM end the trials (not the process): the host is
    // restored and what was measured is printed and kept.
    let stop = crate::sampler::Stop::install()?;
    crate::guard::defer_signals(SIGNAL_GRACE);
    let finished = runner::run(&plan, &mut Progress::new(), &stop)?;
    if finished.nothing_to_do {
        eprintln!(
            "irqlab: --resume {}: all {} trials finished already; nothing to do \
             (the summary is in summary.json; irqlab compare reads the trials)",
            finished.out.display(),
            finished.summary.finished_trials
        );
        return Ok(ExitCode::SUCCESS);
    }
    let printed = match finished.summary.finished_trials > 0 || finished.interrupted.is_none() {
        true => print_summary(&args, &finished),
        false => Ok(()),
    };
    match finished.interrupted {
        None => printed.map(|()| ExitCode::SUCCESS),
        Some(sig) => {
            // a closed or full stdout does not hide the signal's exit code
            if let Err(e) = &printed {
                if !crate::export::stdout::is_closed(e) {
                    eprint!("{}", super::error_text(e));
                }
            }
            let s = &finished.summary;
            if s.finished_trials > 0 {
                eprintln!(
                    "irqlab: interrupted by {}: {} of {} trials finished (summary.json marks the \
                     run interrupted); continue with: {}",
                    runner::signal_name(sig),
                    s.finished_trials,
                    s.planned_trials,
                    runner::resume_command(&plan, &finished.out)
                );
            } else {
                eprintln!(
                    "irqlab: interrupted by {} before the first trial finished: nothing measured",
                    runner::signal_name(sig)
                );
            }
            Ok(crate::cmd::top::signal_exit(sig))
        }
    }
}

/// Old spellings of renamed flags (hidden aliases for one release): they
/// meant something else in the row-filtering commands (`--irq`, `--cpus`)
/// or in `record` (`--duration`, the whole run's length).
const RENAMED: &[(&str, &str)] = &[
    ("--irq", "--measure"),
    ("--cpus", "--workload-cpus"),
    ("--duration", "--trial-length"),
];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let argv: Vec<String> = std::env::args().collect();
    for w in self::args::deprecated_spellings(&argv, RENAMED) {
        eprintln!("irqlab: warning: {w}");
    }
    match run_checked(args) {
        Err(e) if e.downcast_ref::<Invalid>().is_some() => {
            eprint!("{}", super::error_text(&e));
            Ok(ExitCode::from(EXIT_USAGE))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::{compare_hint, runner};
    use clap::CommandFactory;

    /// `--governor` takes a name the completions do not offer (a kernel
    /// may have more governors than they list).
    #[test]
    fn governor_takes_a_name_the_completions_lack() {
        let argv = ["irqlab", "bench", "--governor", "mygov"];
        let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(argv).unwrap();
        let crate::cli::Command::Bench(a) = cli.command else {
            panic!("not bench");
        };
        assert_eq!(a.prepare.governor.as_deref(), Some("mygov"));
    }

    /// No `compare` advice when a variant has fewer than 2 trials (an
    /// interrupted run): compare would refuse; the variant is named.
    #[test]
    fn compare_hint_names_a_variant_without_trials() {
        let summary = crate::bench::result_files::SummaryFile {
            schema: 2,
            complete: false,
            interrupted: Some("SIGINT".into()),
            finished_trials: 1,
            planned_trials: 4,
            notes: Vec::new(),
            warnings: Vec::new(),
            variants: Default::default(),
        };
        let mut f = runner::Finished {
            out: "varint1".into(),
            summary,
            variants: 2,
            trials_per_variant: vec![("off".into(), 1), ("on".into(), 0)],
            interrupted: Some(2),
            nothing_to_do: false,
        };
        let hint = compare_hint(&f);
        assert!(!hint.contains("irqlab compare"), "{hint}");
        assert!(hint.contains("off (1 trial), on (0 trials)"), "{hint}");
        f.trials_per_variant = vec![("off".into(), 2), ("on".into(), 3)];
        assert_eq!(
            compare_hint(&f),
            "irqlab: compare the variants with: irqlab compare varint1\n"
        );
    }

    /// The `--flag` words of `text`, but not an old spelling it names
    /// (`formerly --irq`).
    fn flags_named(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (i, _) in text.match_indices("--") {
            if text[..i].to_lowercase().ends_with("formerly ") {
                continue;
            }
            let name: String = text[i + 2..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
        out
    }

    #[test]
    fn help_names_only_flags_bench_has() {
        let cli = crate::cli::Cli::command();
        let bench = cli
            .get_subcommands()
            .find(|c| c.get_name() == "bench")
            .unwrap();
        let longs: Vec<&str> = bench
            .get_arguments()
            .filter_map(|a| a.get_long())
            .chain(["help"])
            .collect();
        let mut texts: Vec<String> = crate::bench::preset::PRESETS
            .iter()
            .map(|p| p.help.to_string())
            .collect();
        for a in bench.get_arguments() {
            texts.extend(a.get_help().map(|h| h.to_string()));
            texts.extend(a.get_long_help().map(|h| h.to_string()));
            for v in a.get_possible_values() {
                texts.extend(v.get_help().map(|h| h.to_string()));
            }
        }
        texts.extend(bench.get_about().map(|h| h.to_string()));
        for text in &texts {
            for flag in flags_named(text) {
                assert!(longs.contains(&flag.as_str()), "--{flag} in {text:?}");
            }
        }
        assert!(flags_named("a --b, formerly --c").contains(&"b".to_string()));
        assert_eq!(flags_named("Formerly --duration."), Vec::<String>::new());
    }
}
