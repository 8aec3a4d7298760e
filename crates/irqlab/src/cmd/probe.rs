//! `irqlab probe`: flags, then [`crate::probe::run`], then the report to
//! stdout or, whole or not at all, to `--out` (`export::atomic`).

use crate::export::{atomic, stdout};
use crate::host::HostFs;
use crate::probe::{self, output, size, ProbePlan, ProbeReport};
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Most `--reads`: every read's times are kept (and printed in JSON).
pub const MAX_READS: u64 = 1_000_000;

/// Output formats of `probe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProbeFormat {
    /// Aligned table, one line per target × method × buffer, times in µs.
    Table,
    /// JSON probe result set: the run as one trial for `irqlab compare`, plus every read's times.
    Json,
    /// CSV, one line per target × method × buffer, times in whole ns.
    Csv,
}

/// `irqlab probe --help`'s description (set on the subcommand in `cli.rs`).
pub const LONG_ABOUT: &str = "Measure what reading /proc/interrupts, /proc/softirqs, /proc/stat \
and the per-IRQ files costs on this kernel: wall time and thread CPU time per read, read() calls \
and bytes, for each target × method (open every time, or pread on a kept descriptor) × buffer \
size.\n\nA probe run is one trial for `irqlab compare`: to compare kernels, run probe several \
times on each and compare the runs, not the reads of one run.";

/// Flags of `irqlab probe`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab probe                                   # 1000 reads per target x method x buffer\n  \
    irqlab probe --reads 100 --buffer 128,4k,1M    # fewer reads, three buffer sizes\n  \
    irqlab probe --cpu 0 --format csv              # the measuring thread on CPU 0\n  \
    irqlab probe --format json --out k1-a.json     # one trial for `irqlab compare`\n  \
    irqlab probe --format json --out k1-b.json     # a second trial on the same kernel\n  \
    irqlab compare k1=k1-a.json k1=k1-b.json k2=k2-a.json k2=k2-b.json  # k2-*: another kernel's\n  \
    irqlab synth --ncpus 4 --irqs 40 --out t && irqlab probe --root t --reads 50  # a fake tree\n  \
    sudo irqlab probe --kernel --reads 100         # plus time in the kernel (feature trace)")]
pub struct Args {
    #[command(flatten)]
    pub root: super::args::RootArgs,
    /// Timed reads per target × method × buffer (1 to 1000000).
    #[arg(long, default_value_t = 1000, allow_hyphen_values = true,
          value_parser = |s: &str| super::args::whole_number::<u64>(s, 1, MAX_READS))]
    pub reads: u64,
    /// Bytes asked for per read() call, comma-separated (`128`, `4k`, `1M`).
    #[arg(long, default_value = "4k,64k", value_parser = size::parse_sizes)]
    pub buffer: std::vec::Vec<usize>,
    /// Pin the measuring thread to this CPU (affinity restored afterwards).
    #[arg(long, allow_hyphen_values = true,
          value_parser = |s: &str| super::args::whole_number::<usize>(s, 0, u32::MAX.into()))]
    pub cpu: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ProbeFormat,
    /// Write the output to this file instead of stdout (replaced only once complete).
    #[arg(long, value_parser = super::args::path())]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub json: super::args::JsonLayout,
    /// Also measure the kernel side of the same reads: time inside seq_read_iter() per read
    /// and show_interrupts() calls per read (eBPF fentry/fexit; needs root, the kernel's BTF
    /// and irqlab built with `--features trace`; only on the live host, not with --root).
    #[arg(long)]
    pub kernel: bool,
}

/// SIGINT and SIGTERM end the probe at once (exit 128 + signal), also
/// when the shell started it with them ignored (a script's background
/// job): it writes nothing until every read is measured, changes nothing
/// on the host, and its eBPF programs go with its descriptors.
fn end_on_signals() -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let always = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    for s in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            s,
            128 + s,
            std::sync::Arc::clone(&always),
        )
        .map_err(|e| anyhow::anyhow!("cannot handle SIGINT/SIGTERM: {e}"))?;
    }
    Ok(())
}

/// Run `irqlab probe`.
pub fn run(args: Args) -> Result<ExitCode> {
    if let Some(why) = args
        .out
        .as_deref()
        .and_then(|p| out_format_mismatch(p, args.format))
    {
        eprintln!("irqlab: error: {why}");
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    if let Some(why) = args.json.refused_with(args.format, ProbeFormat::Json) {
        eprintln!("irqlab: error: {why}");
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    if let Some(cpu) = args.cpu {
        if let Err(e) = check_cpu(cpu) {
            eprintln!("irqlab: error: {e}");
            return Ok(ExitCode::from(super::top::EXIT_USAGE));
        }
    }
    if args.kernel {
        if let Some(why) = kernel_usage(&args) {
            eprintln!("irqlab: error: {why}");
            return Ok(ExitCode::from(super::top::EXIT_USAGE));
        }
        let fs = args.root.host_fs();
        if let Some(why) = probe::kernel::missing(&fs, nix::unistd::geteuid().is_root()) {
            anyhow::bail!("{why}");
        }
    }
    match &args.out {
        // refused now rather than after the measurement
        Some(path) => atomic::check(path)?,
        None => stdout::check_open()?,
    }
    let plan = ProbePlan {
        reads: usize::try_from(args.reads)?,
        buffers: args.buffer.clone(),
        cpu: args.cpu,
    };
    end_on_signals()?;
    let mut counter = attach(args.kernel, &args.root.host_fs())?;
    let rep = probe::run(
        &args.root.host_fs(),
        &plan,
        counter.as_mut().map(as_counter),
        |m| {
            eprintln!("irqlab: note: {m}");
        },
    )?;
    match &args.out {
        // a file, not a terminal
        Some(path) => atomic::write_file(path, |w| {
            write(&rep, args.format, args.json.pretty_to(false), w)
        }),
        None => {
            let mut out = stdout::stdout();
            let pretty = args.json.pretty_on_stdout();
            write(&rep, args.format, pretty, &mut out)?;
            Ok(out.flush()?)
        }
    }?;
    Ok(ExitCode::SUCCESS)
}

/// The `--format` word of `f`, as clap takes it.
fn format_name(f: ProbeFormat) -> String {
    clap::ValueEnum::to_possible_value(&f).map_or_else(String::new, |v| v.get_name().to_string())
}

/// Why `--out PATH` contradicts `--format` (a usage error), if so: its
/// extension (`.json`, `.csv`) names another format than the one that
/// would be written. The format is never inferred from the name, as in
/// every command; another extension or none takes any format.
fn out_format_mismatch(path: &std::path::Path, format: ProbeFormat) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let named = match ext.as_str() {
        "json" => ProbeFormat::Json,
        "csv" => ProbeFormat::Csv,
        _ => return None,
    };
    (named != format).then(|| {
        format!(
            "--out {}: the name says {ext} but --format is {}{}; give --format {ext} \
             (or another file name for the {} output)",
            path.display(),
            format_name(format),
            if format == ProbeFormat::Table {
                " (the default)"
            } else {
                ""
            },
            format_name(format),
        )
    })
}

/// Why `--kernel` cannot be used as asked (a usage error), if so: the
/// feature is not built in, or the root is not the live host's.
fn kernel_usage(args: &Args) -> Option<String> {
    if !cfg!(feature = "trace") {
        return Some(format!("probe --kernel: {}", crate::trace::NOT_BUILT));
    }
    if !args.root.is_host() {
        return Some(format!(
            "probe --kernel measures the running kernel: it cannot be used with --root {}",
            args.root.path().display()
        ));
    }
    None
}

type KernelCounter = probe::kernel::Bpf;

#[cfg(feature = "trace")]
fn attach(on: bool, fs: &HostFs) -> Result<Option<KernelCounter>> {
    on.then(|| probe::kernel::Bpf::attach(fs)).transpose()
}

#[cfg(not(feature = "trace"))]
fn attach(_on: bool, _fs: &HostFs) -> Result<Option<KernelCounter>> {
    Ok(None)
}

#[cfg(feature = "trace")]
fn as_counter(k: &mut KernelCounter) -> &mut (dyn probe::kernel::Counter + 'static) {
    k
}

#[cfg(not(feature = "trace"))]
fn as_counter(k: &mut KernelCounter) -> &mut (dyn probe::kernel::Counter + 'static) {
    match *k {}
}

/// `--cpu N` must be a CPU this process may run on (online and in its
/// affinity; the measuring thread runs on this host whatever `--root`
/// says): a usage error before anything is measured otherwise.
fn check_cpu(cpu: usize) -> std::result::Result<(), String> {
    let allowed = crate::pin::allowed_cpus()
        .map_err(|e| format!("--cpu {cpu}: cannot read this process's CPU affinity: {e}"))?;
    if u32::try_from(cpu).is_ok_and(|c| allowed.contains(&c)) {
        return Ok(());
    }
    let noun = if allowed.len() == 1 { "CPU" } else { "CPUs" };
    let list = irqlab_core::CpuList::from_cpus(allowed);
    Err(format!(
        "--cpu {cpu}: not an online CPU this process may run on (it may run on {noun} {list})"
    ))
}

/// Write `rep` in `format` (JSON indented when `pretty`).
fn write(rep: &ProbeReport, format: ProbeFormat, pretty: bool, out: &mut dyn Write) -> Result<()> {
    let mut out = out;
    match format {
        ProbeFormat::Table => output::write_table(rep, &mut out),
        ProbeFormat::Json => output::write_json(rep, pretty, &mut out),
        ProbeFormat::Csv => output::write_csv(rep, &mut out),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use clap::{CommandFactory, Parser};

    /// `probe --help` ends with examples (the man page's EXAMPLES
    /// section), and every `irqlab` command line in them parses.
    #[test]
    fn help_has_examples_that_parse() {
        let mut cli = crate::cli::Cli::command();
        let help = cli
            .find_subcommand_mut("probe")
            .unwrap()
            .render_long_help()
            .to_string();
        let (_, examples) = help
            .split_once("Examples:")
            .unwrap_or_else(|| panic!("{help}"));
        let mut parsed = 0;
        for line in examples.lines() {
            let command = line.split('#').next().unwrap_or_default();
            for part in command.split("&&") {
                let words: Vec<&str> = part
                    .split_whitespace()
                    .skip_while(|w| *w == "sudo")
                    .collect();
                if words.first() != Some(&"irqlab") {
                    continue;
                }
                crate::cli::Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{line}: {e}"));
                parsed += 1;
            }
        }
        assert_eq!(parsed, 9, "{examples}");
    }
}
