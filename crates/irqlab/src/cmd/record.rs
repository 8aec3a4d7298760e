//! `irqlab record`: flags -> `record::writer::RecordConfig`, then the recording
//! loop; prints where it wrote and what it cost.

use crate::record::{layout, writer};
use crate::sampler::Stop;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab record`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab record -o rec --duration 10m        # 1-s samples for 10 minutes\n  \
    irqlab record -o rec --merge 0             # a file per 60-s segment\n  \
    irqlab record -o rec -i 5s --irq virtio    # until Ctrl-C, virtio rows only\n  \
    irqlab record -o rec --trace -d 1m         # plus traced IRQ/softirq time (root, feature trace)\n  \
    irqlab replay rec --batch                  # read it back (top --batch lines)\n  \
    irqlab recover rec                         # after a crash: journal -> segment\n\
Schema and SQL: docs/recording-schema.md")]
pub struct Args {
    #[command(flatten)]
    pub root: super::args::RootArgs,
    /// Time between samples: at least 1ms, at most 24h.
    #[arg(long, short = 'i', default_value = "1s", value_parser = super::args::interval,
          allow_hyphen_values = true)]
    pub interval: Duration,
    /// Stop after this long (default: until SIGINT, SIGTERM or SIGHUP,
    /// which end the run with a last sample of the interval they cut
    /// short, if it is 1ms or longer, and exit 0); the last sample is
    /// taken at this time, even when samples fall behind.
    #[arg(long, short = 'd', value_parser = super::args::positive_duration,
          allow_hyphen_values = true)]
    pub duration: Option<Duration>,
    /// Close a Parquet segment this often (and at exit): its samples are
    /// then in a Parquet file, and the journal starts afresh.
    #[arg(long, default_value = "60s", value_parser = super::args::positive_duration,
          allow_hyphen_values = true)]
    pub segment: Duration,
    /// Merge closing segments into one file while it spans less than this
    /// and holds at most 262 144 rows (0: every segment its own file).
    /// Each file repeats every counter once, its dictionaries and its
    /// footer, so a quiet machine's 60-s files cost ~3 bytes per changed
    /// counter and a merged 10-min file ~1.9 (docs/recording-schema.md).
    #[arg(long, default_value = "10m", value_parser = super::args::duration, allow_hyphen_values = true)]
    pub merge: Duration,
    /// Also close a segment once it holds this many changed counters after
    /// its first sample: bounds the memory of the segment being buffered
    /// (~24 bytes a counter) on big or busy machines.
    #[arg(long, default_value_t = 1_000_000, allow_hyphen_values = true,
          value_parser = |s: &str| super::args::whole_number::<u64>(s, 1, u64::MAX))]
    pub segment_changes: u64,
    #[command(flatten)]
    pub filter: super::args::FilterArgs,
    /// Partition host name (default: the tree's hostname): the directory
    /// host=NAME, so only A-Z, a-z, 0-9, '.', '_' and '-'.
    #[arg(long, value_parser = host_name)]
    pub host: Option<String>,
    /// Also record traced hard IRQ, vector and softirq time, counts and
    /// latency histograms (eBPF, as `irqlab trace`; root; needs a build
    /// with the `trace` feature): source `trace` in the schema.
    #[arg(long)]
    pub trace: bool,
    /// Synthetic clock `START_UNIX_SECONDSxSCALE` (benchmarks and tests of
    /// fleet datasets): recorded times start at START and run SCALE times
    /// faster than real time; --interval, --duration, --segment and
    /// --merge are in that synthetic time (docs/recording-schema.md).
    #[arg(long, hide = true, value_parser = synth_clock)]
    pub synthetic_clock: Option<writer::SynthClock>,
    /// Dataset directory; the recording goes to DIR/host=…/boot=…/.
    /// DIR is created if needed, but its parent must exist.
    #[arg(long, short = 'o', value_parser = super::args::path())]
    pub out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Before anything else: a background job of a non-interactive shell
    // starts with SIGINT ignored, and a signal then, while the run starts
    // (reads, directories, attaching), would be lost; caught, it ends the
    // run cleanly as at any other time. SIGHUP (the terminal closed) ends
    // it as SIGTERM does.
    let stop = Stop::install_with_hangup()?;
    // the kept deflate state (record/gzip.rs) and the segment's buffers
    // are heap blocks, not mappings made and unmapped
    crate::alloc::keep_large_blocks_in_heap();
    let filter = args.filter.filter()?;
    if args.trace && !cfg!(feature = "trace") {
        eprintln!("irqlab: error: record --trace: {}", crate::trace::NOT_BUILT);
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    // synthetic time -> the real time the loop waits
    let real = |d: Duration| match args.synthetic_clock {
        Some(c) => (d / c.scale).max(Duration::from_micros(1)),
        None => d,
    };
    let merge = match args.merge.is_zero() {
        true => args.merge,
        false => real(args.merge),
    };
    let cfg = writer::RecordConfig {
        filter,
        filter_flags: filter_flags(&args.filter),
        root: args.root.dir,
        out: args.out,
        interval: real(args.interval),
        duration: args.duration.map(real),
        segment: real(args.segment),
        segment_changes: args.segment_changes,
        merge,
        merge_rows: writer::MERGE_ROWS,
        host: args.host,
        clock: args.synthetic_clock,
        // the shortest -i: a shorter cut interval is not recorded
        final_after: real(super::args::MIN_INTERVAL),
    };
    // a mistyped -o is refused before anything is sampled, attached or
    // mounted
    writer::check_out_dir(&cfg.out)?;
    let announce = |dir: &std::path::Path| say(format!("irqlab: recording to {}\n", dir.display()));
    let sum = match args.trace {
        true => traced(&cfg, &stop, announce),
        false => writer::run(&cfg, None, &stop, announce),
    };
    let sum = match sum {
        Err(e) if e.downcast_ref::<writer::NoCpuSelected>().is_some() => {
            eprintln!("irqlab: error: {e}");
            return Ok(ExitCode::from(super::top::EXIT_USAGE));
        }
        r => r?,
    };
    if sum.skipped > 0 {
        say(format!(
            "irqlab: note: {} sample(s) not taken: sampling fell more than -i {} behind (a sample took longer); rates use each interval's measured length\n",
            sum.skipped,
            humantime::format_duration(args.interval)
        ));
    }
    let per = |v: u64| v as f64 / sum.samples.max(1) as f64;
    say(format!(
        "irqlab: {} samples, {} changed counters, {} segment(s), {} bytes ({:.2} bytes per changed counter); CPU per sample {:.3} ms (+ {:.3} ms for segments)\n",
        sum.samples,
        sum.cells,
        sum.segments,
        sum.segment_bytes,
        sum.segment_bytes as f64 / sum.cells.max(1) as f64,
        per(sum.sample_cpu_ns) / 1e6,
        per(sum.segment_cpu_ns) / 1e6,
    ));
    Ok(ExitCode::SUCCESS)
}

/// The row filter flags as given (`--irq LOC --cpus 1`), stored with the
/// run.
fn filter_flags(f: &super::args::FilterArgs) -> String {
    let flags = [
        ("--irq", &f.irq),
        ("--exclude", &f.exclude),
        ("--cpus", &f.cpus),
    ];
    let given: Vec<String> = flags
        .iter()
        .filter_map(|(name, v)| v.as_ref().map(|v| format!("{name} {v}")))
        .collect();
    given.join(" ")
}

/// A message to stderr in one write, control characters shown as
/// `\xNN`; a failed write is ignored (`export::stderr`).
fn say(msg: String) {
    crate::export::stderr::write(format_args!("{msg}"), false);
}

/// `--host NAME`: taken as given, never changed, so it must be a
/// partition value already (`layout::partition_char`): not empty, and
/// only the characters a directory name `host=NAME` keeps.
fn host_name(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("the host name is empty (without --host, the tree's hostname is used)".into());
    }
    match s.chars().find(|c| !layout::partition_char(*c)) {
        Some(c) => Err(format!(
            "{c:?} is not allowed in a host name: it names the directory host=NAME, so only A-Z, a-z, 0-9, '.', '_' and '-'"
        )),
        None => Ok(s.to_string()),
    }
}

/// `--synthetic-clock START_UNIX_SECONDSxSCALE`.
fn synth_clock(s: &str) -> Result<writer::SynthClock, String> {
    let bad = || format!("expected START_UNIX_SECONDSxSCALE (e.g. 1767225600x720), got {s:?}");
    let (a, b) = s.split_once('x').ok_or_else(bad)?;
    let start: u64 = a.parse().map_err(|_| bad())?;
    let scale: u32 = b.parse().map_err(|_| bad())?;
    if scale == 0 {
        return Err(bad());
    }
    Ok(writer::SynthClock {
        start_wall_ns: start.checked_mul(1_000_000_000).ok_or_else(bad)?,
        scale,
    })
}

/// How long a signal waits for the run to close its segment and detach
/// before the guard restores the host itself (see `guard::defer_signals`).
#[cfg(feature = "trace")]
const SIGNAL_GRACE: Duration = Duration::from_secs(10);

/// `record --trace`: attach (mounting tracefs through the session's guard
/// when needed), record, then detach and unmount; `-o` was checked
/// before.
#[cfg(feature = "trace")]
fn traced(
    cfg: &writer::RecordConfig,
    stop: &Stop,
    announce: impl FnOnce(&std::path::Path),
) -> anyhow::Result<writer::RecordSummary> {
    use crate::trace::session::Session;
    // a signal ends the loop; the segment is closed, then the session
    // detaches and unmounts
    crate::guard::defer_signals(SIGNAL_GRACE);
    let mut session = Session::start(&crate::host::HostFs::new(&cfg.root))?;
    for n in &session.notes {
        eprintln!("irqlab: note: trace: {n}");
    }
    let sum = writer::run(cfg, Some(&mut session), stop, announce);
    session.stop()?;
    sum
}

#[cfg(not(feature = "trace"))]
fn traced(
    _: &writer::RecordConfig,
    _: &Stop,
    _: impl FnOnce(&std::path::Path),
) -> anyhow::Result<writer::RecordSummary> {
    anyhow::bail!("record --trace: {}", crate::trace::NOT_BUILT)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A negative duration is told it is negative, for every duration
    /// flag (not clap's "unexpected argument '-5' found").
    #[test]
    fn negative_durations_are_named_as_negative() {
        #[derive(Debug, clap::Parser)]
        struct T {
            #[command(flatten)]
            args: Args,
        }
        for flag in ["-i", "-d", "--duration", "--segment", "--merge"] {
            let e = <T as clap::Parser>::try_parse_from(["record", "-o", "rec", flag, "-5s"])
                .unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{flag}");
            assert!(
                e.to_string().contains("the duration is negative: \"-5s\""),
                "{flag}: {e}"
            );
        }
    }

    /// A negative `--segment-changes` reaches the value parser and is
    /// told the range, not taken for an unknown flag.
    #[test]
    fn negative_counts_are_told_the_range() {
        #[derive(Debug, clap::Parser)]
        struct T {
            #[command(flatten)]
            args: Args,
        }
        for v in ["-1", "0"] {
            let e = <T as clap::Parser>::try_parse_from([
                "record",
                "-o",
                "rec",
                "--segment-changes",
                v,
            ])
            .unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{v}");
            assert!(
                e.to_string().contains(&format!(
                    "expected a whole number from 1 to 18446744073709551615, found \"{v}\""
                )),
                "{v}: {e}"
            );
        }
    }

    /// A host name is a directory name as given: empty, or with a
    /// character a partition value changes, it is refused.
    #[test]
    fn host_names_are_refused_unless_they_are_safe_as_given() {
        assert_eq!(host_name("web-01.example_a"), Ok("web-01.example_a".into()));
        assert!(host_name("").is_err_and(|e| e.contains("empty")));
        for bad in ["../../etc", "a/b", " a", "a b", "h\u{e9}"] {
            let e = host_name(bad).unwrap_err();
            assert!(
                e.contains("only A-Z, a-z, 0-9, '.', '_' and '-'"),
                "{bad:?}: {e}"
            );
        }
    }
}
