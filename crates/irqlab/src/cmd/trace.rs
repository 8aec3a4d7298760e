//! `irqlab trace`: per-interval hard IRQ, vector and softirq durations,
//! raise-to-entry latency and exact irq/softirq CPU % from eBPF programs on
//! the irq tracepoints (see `crate::trace`). Without the `trace` feature it
//! says how to get it and exits 1. SIGINT/SIGTERM end the run, not the
//! process: the interval they cut short is printed (marked; one caught
//! while the interval that reaches `-d` is read cuts none short and adds
//! none), `--cost` still says what it measured (and that it was
//! interrupted), the programs detach, tracefs is unmounted if irqlab
//! mounted it, and the exit code is 128 + signal (also for one caught
//! after the loop, while they detach).

use crate::cmd::args;
use crate::trace::interval::IntervalView;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Output of `irqlab trace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// bcc hardirqs/softirqs-like tables.
    Text,
    /// One JSON object per interval (JSON Lines).
    Json,
}

/// Flags of `irqlab trace`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples (root, a build with --features trace):\n  \
    irqlab trace -i 1s -d 10s                   # per-interval tables\n  \
    irqlab trace --irq 'virtio|NET_RX' --cpus 1 --hist\n  \
    irqlab trace --format json -d 5s            # one JSON object per interval")]
pub struct Args {
    /// Print one report per interval (at least 10ms, at most 24h).
    #[arg(long, short = 'i', default_value = "1s", allow_hyphen_values = true,
          value_parser = |s: &str| args::bounded_interval(s, Some((MIN_INTERVAL, SHORTEST))))]
    pub interval: Duration,
    /// Stop after this long (default: until Ctrl-C): more than 0, at most
    /// 8760h (365 days), as `serve --duration` and `record -d`.
    #[arg(long, short = 'd', value_parser = args::positive_duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,
    // rows: a hard IRQ action is a row with its label and one action (its
    // name); a vector or softirq row is its name (`NET_RX`)
    #[command(flatten)]
    pub filter: args::FilterArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TraceFormat,
    /// Add log2 histograms (durations, softirq latency).
    #[arg(long)]
    pub hist: bool,
    /// Also measure what tracing costs: the kernel's own run-time
    /// accounting of irqlab's BPF programs (on for this run only), said at
    /// the end as ns per traced event and share of one CPU.
    #[arg(long)]
    pub cost: bool,
    /// Only / (the default): trace attaches to the running kernel, so a
    /// captured tree (`irqlab synth` output, a sosreport) cannot be traced.
    #[arg(long = "root", value_name = "DIR", default_value = "/", value_parser = super::args::path())]
    pub root: PathBuf,
}

/// Why `--root` cannot be used as asked (a usage error), if so: a root
/// other than the live host's `/` (the programs attach to the running
/// kernel), as `probe --kernel` says.
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn root_usage(root: &Path) -> Option<String> {
    (root != Path::new("/")).then(|| {
        format!(
            "trace attaches to the running kernel: it cannot be used with --root {} \
             (`show --root` reads a captured tree)",
            root.display()
        )
    })
}

/// Shortest `--interval`: each interval copies every map (one syscall per
/// (IRQ, action) key and CPU row) and prints a report, so shorter ones
/// spend more time reading than the interrupts they measure (a zero
/// interval was a busy loop). docs/trace.md says why.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// What an `--interval` below [`MIN_INTERVAL`] is told.
const SHORTEST: &str =
    "the shortest trace interval (10ms): each interval reads every map and prints a report";

/// Longest `--interval` (one sleep; as `show --interval`).
pub const MAX_INTERVAL: Duration = args::MAX_INTERVAL;

impl Args {
    /// The `--irq` / `--exclude` / `--cpus` / `--hist` selection.
    pub fn select(&self) -> anyhow::Result<IntervalView> {
        Ok(IntervalView {
            filter: self.filter.filter()?,
            hist: self.hist,
        })
    }

    /// The run's pace: `-d` cut into `-i` intervals (the last may be
    /// shorter; `sampler/pace.rs`), or intervals until a signal.
    pub fn pace(&self) -> crate::sampler::PacedRun {
        crate::sampler::PacedRun::new(
            self.interval.max(MIN_INTERVAL),
            crate::sampler::End::of(None, self.duration),
        )
    }
}

/// Without the feature: the selection first (as with it), then
/// the usage error (exit 2, as `top --trace` and `bench --trace`) saying
/// how to build tracing in.
#[cfg(not(feature = "trace"))]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    args.select()?;
    eprintln!("irqlab: error: trace: {}", crate::trace::NOT_BUILT);
    Ok(ExitCode::from(2))
}

#[cfg(feature = "trace")]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_to(args, &mut std::io::stdout())
}

/// [`run`] with the intervals written to `out` (flushed after each); the
/// notes, the cost line and errors still go to stderr.
#[cfg(feature = "trace")]
pub fn run_to(args: Args, out: &mut impl std::io::Write) -> anyhow::Result<ExitCode> {
    use crate::host::HostFs;
    use crate::trace::session::Session;

    let sel = args.select()?;
    if let Some(why) = root_usage(&args.root) {
        eprintln!("irqlab: error: {why}");
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    // SIGINT/SIGTERM end the loop (not the process): what was measured
    // (--cost) is still said, then the session detaches and unmounts.
    let stop = crate::sampler::Stop::install()?;
    crate::guard::defer_signals(SIGNAL_GRACE);
    for w in start_warnings(&args, &sel) {
        eprintln!("{w}");
    }
    let session = Session::start(&HostFs::new(&args.root))?;
    for n in &session.notes {
        eprintln!("irqlab: note: {n}");
    }
    eprintln!(
        "irqlab: tracing {} tracepoints; Ctrl-C to stop",
        session.attached().tracepoints.len()
    );
    let mut session = session;
    let signal = intervals(&args, &sel, &mut session, &stop, out)?;
    session.stop()?;
    // one caught while the programs detached still ends the run as a
    // signal does
    let signal = signal.or_else(|| stop.caught());
    Ok(signal.map_or(ExitCode::SUCCESS, crate::cmd::top::signal_exit))
}

/// What `show` and `serve` say of a filter that selects nothing or less
/// than asked, against one read of the counter files before anything
/// attaches; without a filter flag there is nothing to say and nothing is
/// read. Files that cannot be read give no warning: the session says what
/// it cannot trace.
#[cfg(feature = "trace")]
fn start_warnings(args: &Args, sel: &IntervalView) -> Vec<String> {
    use crate::sampler::{StatFile, StatFiles};
    let f = &args.filter;
    if f.cpus.is_none() && f.irq.is_none() && f.exclude.is_none() {
        return Vec::new();
    }
    let mut files = StatFiles::new(crate::host::HostFs::new(&args.root), &StatFile::ALL);
    let mut snap = irqlab_core::Snapshot::default();
    match files.sample(&mut snap) {
        Ok(()) => selection_warnings(f, sel, &snap),
        Err(_) => Vec::new(),
    }
}

/// [`filter_warnings_excluding`](crate::filter::warnings::filter_warnings_excluding)
/// of `flags` in `snap`: the CPUs its files list, and the rows `sel`
/// keeps. trace's rows are interrupt rows and softirq vectors (`--irq
/// NET_RX` keeps one), so both count as rows an `--irq` matches.
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn selection_warnings(
    flags: &args::FilterArgs,
    sel: &IntervalView,
    snap: &irqlab_core::Snapshot,
) -> Vec<String> {
    use crate::filter::warnings::{filter_warnings_excluding, listed_of, ListedCpus};
    let mut listed = ListedCpus::default();
    listed_of(snap, &mut listed);
    let rows_of = |v: &IntervalView| {
        let softirqs = snap.softirqs.as_ref().map_or(0, |s| {
            s.rows.iter().filter(|r| v.row(&r.name, &r.name)).count()
        });
        snap.interrupts.as_ref().map(|i| {
            let kept = i.rows().iter().filter(|r| v.filter.keep_irq_row(r));
            kept.count() + softirqs
        })
    };
    let by_irq = IntervalView {
        filter: crate::filter::Filter {
            irq: sel.filter.irq.clone(),
            ..crate::filter::Filter::default()
        },
        hist: false,
    };
    let (cpus, irq, exclude) = (
        flags.cpus.as_deref(),
        flags.irq.as_deref(),
        flags.exclude.as_deref(),
    );
    let kept = rows_of(sel);
    filter_warnings_excluding(cpus, &listed, irq, exclude, kept, || rows_of(&by_irq))
}

/// How long a signal waits for the run to say what it measured and
/// detach before the guard restores the host itself.
#[cfg(feature = "trace")]
const SIGNAL_GRACE: Duration = Duration::from_secs(3);

/// The interval loop (with `--cost` around it); returns the signal that
/// ended it, if any.
#[cfg(feature = "trace")]
fn intervals(
    args: &Args,
    sel: &IntervalView,
    session: &mut crate::trace::session::Session,
    stop: &crate::sampler::Stop,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Option<i32>> {
    use std::time::Instant;

    let cost_from = if args.cost {
        Some((session.account_cost()?, Instant::now()))
    } else {
        None
    };
    let signal = write_intervals(args, sel, session, &mut args.pace(), stop, out)?;
    if let Some((from, t0)) = cost_from {
        let line = cost_line(session.run_stats().since(from), t0.elapsed());
        match signal {
            None => eprintln!("irqlab: {line}"),
            Some(sig) => eprintln!("irqlab: {line} (interrupted by {})", signal_name(sig)),
        }
    }
    Ok(signal)
}

/// The baseline, then an interval per tick of `pace`, written to `out`
/// until the run ends or `stop` catches a signal (returned, also when
/// caught in the read that ends the run). The run's last read is closing
/// ([`closing`]).
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn write_intervals(
    args: &Args,
    sel: &IntervalView,
    session: &mut dyn crate::trace::live_trace::TraceSession,
    pace: &mut crate::sampler::PacedRun,
    stop: &crate::sampler::Stop,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Option<i32>> {
    use crate::sampler::Tick;
    use crate::trace::{interval, output, sample::Sample};

    let (mut prev, mut cur) = (Sample::default(), Sample::default());
    session.read(&mut prev)?;
    let mut signal = None;
    for n in 1u64.. {
        let tick = pace.wait(stop);
        match tick {
            Tick::Due => {}
            // a signal caught in the read that reached `-d` ends the run
            // as a signal does, with no interval after it
            Tick::End => {
                signal = stop.caught();
                break;
            }
            Tick::Signal(s) => signal = Some(s),
        }
        session.read_closing_if(&mut cur, closing(tick, pace))?;
        let iv = interval::between(&prev, &cur, sel);
        // a signal cuts the interval short: what it saw is still printed
        let cut = signal.map(signal_name);
        match args.format {
            TraceFormat::Text => {
                let missed = sel.missed_shown(&iv.missed, &cur);
                output::text(&iv, &missed, n, cut.as_deref(), out)?
            }
            TraceFormat::Json => output::json(&iv, n, cut.as_deref(), out)?,
        }
        out.flush()?;
        if signal.is_some() {
            break;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    Ok(signal)
}

/// Whether the read after `tick` is the run's last, so closing (every
/// run no program saw is in its interval): the interval a signal cut
/// short, or the tick that reached `-d`.
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn closing(tick: crate::sampler::Tick, pace: &crate::sampler::PacedRun) -> bool {
    matches!(tick, crate::sampler::Tick::Signal(_)) || pace.was_last()
}

/// `SIGINT`, `SIGTERM` or the number.
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn signal_name(sig: i32) -> String {
    match sig {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// `trace --cost`'s summary of what the programs ran over `wall`.
#[cfg_attr(not(feature = "trace"), allow(dead_code))]
fn cost_line(r: irqlab_bpf::RunStats, wall: Duration) -> String {
    let share = r.ns as f64 / wall.as_nanos().max(1) as f64 * 100.0;
    match r.ns_per_run() {
        Some(per) => format!(
            "tracing cost: {} program runs, {per:.0} ns per run, {:.3} ms of CPU in {:.1} s \
             ({share:.3} % of one CPU; kernel BPF run-time accounting, without the \
             tracepoint's own dispatch)",
            r.runs,
            r.ns as f64 / 1e6,
            wall.as_secs_f64()
        ),
        None => format!(
            "tracing cost: no traced event in {:.1} s",
            wall.as_secs_f64()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_line_says_ns_per_run_and_cpu_share() {
        let r = irqlab_bpf::RunStats {
            ns: 3_000_000,
            runs: 20_000,
        };
        let l = cost_line(r, Duration::from_secs(2));
        assert!(l.contains("20000 program runs, 150 ns per run"), "{l}");
        assert!(
            l.contains("3.000 ms of CPU in 2.0 s (0.150 % of one CPU"),
            "{l}"
        );
        let none = cost_line(irqlab_bpf::RunStats::default(), Duration::from_secs(1));
        assert!(none.contains("no traced event"), "{none}");
        assert_eq!(signal_name(2), "SIGINT");
        assert_eq!(signal_name(15), "SIGTERM");
    }
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: Args,
    }

    fn args(v: &[&str]) -> Args {
        T::parse_from(std::iter::once("t").chain(v.iter().copied())).a
    }

    #[test]
    fn duration_is_cut_into_intervals() {
        let a = args(&["-i", "1s", "-d", "2.5s"]);
        let mut p = a.pace();
        let t0 = p.start();
        let v: Vec<_> = std::iter::from_fn(|| p.next_due())
            .map(|d| d - t0)
            .collect();
        assert_eq!(
            v,
            [
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_millis(2500)
            ]
        );
        let mut p = args(&[]).pace();
        assert_eq!(std::iter::from_fn(|| p.next_due()).take(3).count(), 3);
    }

    /// Only the read of the run's last interval is closing: the one a
    /// signal cut short, or the one `-d` ends with.
    #[test]
    fn the_last_read_is_closing() {
        use crate::sampler::{Stop, Tick};
        use crate::trace::live_trace::tests::Closing;
        let a = args(&["-i", "10ms", "-d", "25ms", "--format", "json"]);
        let mut log = Closing::default();
        let mut out = Vec::new();
        let stop = Stop::unhooked();
        let signal = write_intervals(
            &a,
            &a.select().unwrap(),
            &mut log,
            &mut a.pace(),
            &stop,
            &mut out,
        );
        assert_eq!(signal.unwrap(), None);
        assert_eq!(
            log.reads(),
            [false, false, false, true],
            "baseline, 3 ticks"
        );
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 3);
        let p = args(&[]).pace();
        assert!(closing(Tick::Signal(2), &p));
        assert!(!closing(Tick::Due, &p));
    }

    /// `write_intervals` of `trace FLAGS --format json` on a fake session
    /// that catches SIGINT after the read where `when` (given every read's
    /// closing flag so far) holds: the signal returned, each read's closing
    /// flag and the text written.
    fn signalled(flags: &[&str], when: fn(&[bool]) -> bool) -> (Option<i32>, Vec<bool>, String) {
        use crate::sampler::Stop;
        use crate::trace::live_trace::tests::{Closing, SignalAfter};
        let a = args(&[flags, &["--format", "json"]].concat());
        let stop = Stop::unhooked();
        let log = Closing::default();
        let mut session = SignalAfter {
            log: log.clone(),
            stop: stop.clone(),
            when,
        };
        let mut out = Vec::new();
        let signal = write_intervals(
            &a,
            &a.select().unwrap(),
            &mut session,
            &mut a.pace(),
            &stop,
            &mut out,
        );
        (
            signal.unwrap(),
            log.reads(),
            String::from_utf8(out).unwrap(),
        )
    }

    /// A signal between two ticks ends the run with the interval it cut
    /// short, read closing, and nothing after it.
    #[test]
    fn a_signal_between_ticks_ends_with_a_closing_read() {
        // caught after the second interval's read
        let (signal, reads, text) = signalled(&["-i", "10ms"], |r| r.len() == 3);
        assert_eq!(signal, Some(signal_hook::consts::SIGINT));
        assert_eq!(reads, [false, false, false, true]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[2].contains(r#""interrupted":"SIGINT""#), "{text}");
        assert!(!lines[1].contains("interrupted"), "{text}");
    }

    /// A signal caught in the read of the interval that reaches `-d`
    /// adds no interval after it (none is cut short); the signal is still
    /// returned, for the exit code.
    #[test]
    fn a_signal_in_the_last_read_adds_no_interval() {
        let (signal, reads, text) =
            signalled(&["-i", "10ms", "-d", "25ms"], |r| r.last() == Some(&true));
        assert_eq!(signal, Some(signal_hook::consts::SIGINT));
        assert_eq!(reads, [false, false, false, true], "baseline, 3 ticks");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(!text.contains("interrupted"), "{text}");
    }

    /// `trace -i 0` ran a busy loop (577 MB of output in 10 minutes).
    #[test]
    fn intervals_below_the_minimum_are_usage_errors() {
        for bad in ["0", "0s", "1ms", "9ms", "-1s", "25h"] {
            let e = T::try_parse_from(["t", "-i", bad]).err();
            let e = e.unwrap_or_else(|| panic!("-i {bad} accepted"));
            assert_eq!(e.exit_code(), 2, "{bad}: {e}");
            assert!(e.to_string().contains("interval"), "{bad}: {e}");
        }
        assert_eq!(args(&["-i", "10ms"]).interval, MIN_INTERVAL);
        assert_eq!(args(&["-i", "24h"]).interval, MAX_INTERVAL);
    }

    /// `trace -d 0` attached every program, printed nothing and exited 0.
    #[test]
    fn durations_are_bounded_as_serve_and_record() {
        for bad in ["0", "0s", "-1s", "8761h", "9999999h"] {
            let e = T::try_parse_from(["t", "-d", bad]).err();
            let e = e.unwrap_or_else(|| panic!("-d {bad} accepted"));
            assert_eq!(e.exit_code(), 2, "{bad}: {e}");
            assert!(e.to_string().contains("duration"), "{bad}: {e}");
        }
        assert_eq!(
            args(&["-d", "8760h"]).duration,
            Some(crate::sampler::pace::LONGEST_RUN)
        );
        assert_eq!(
            args(&["-d", "1ms"]).duration,
            Some(Duration::from_millis(1))
        );
    }

    /// `trace --irq nomatchxyz --cpus 99` said nothing of its selection.
    #[test]
    fn a_selection_of_nothing_is_warned_as_show_and_serve_do() {
        let snap = irqlab_core::Snapshot {
            interrupts: irqlab_core::Interrupts::parse(
                b"           CPU0       CPU1\n \
                  24:         10          0  PCI-MSI 1-edge      virtio2-req.0\n \
                 LOC:        100        200   Local timer interrupts\n",
            )
            .ok(),
            softirqs: irqlab_core::softirqs::Softirqs::parse(
                b"                    CPU0       CPU1\n          HI:          1          0\n      NET_RX:          5          7\n",
            )
            .ok(),
            ..irqlab_core::Snapshot::default()
        };
        assert!(snap.interrupts.is_some() && snap.softirqs.is_some());
        let warned = |v: &[&str]| {
            let a = args(v);
            selection_warnings(&a.filter, &a.select().unwrap(), &snap)
        };
        let w = warned(&["--irq", "nomatchxyz", "--cpus", "99"]);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("irqlab: warning: --cpus 99 selects no CPU"),
            "{w:?}"
        );
        assert_eq!(
            w[1],
            "irqlab: warning: --irq \"nomatchxyz\" matches no interrupt row"
        );
        // a softirq vector or an interrupt row is a row trace shows
        assert_eq!(
            warned(&["--irq", "NET_RX", "--cpus", "1"]),
            Vec::<String>::new()
        );
        assert_eq!(warned(&["--irq", "virtio"]), Vec::<String>::new());
        let w = warned(&["--irq", "virtio", "--exclude", "virtio"]);
        assert_eq!(
            w,
            ["irqlab: warning: --exclude \"virtio\" removes every interrupt row --irq \"virtio\" keeps"]
        );
    }

    /// `trace --root DIR` failed on the tree's tracefs, or traced the
    /// live kernel beside the tree's counts.
    #[test]
    fn only_the_live_hosts_root_is_taken() {
        assert_eq!(root_usage(&args(&[]).root), None);
        assert_eq!(root_usage(&args(&["--root", "/"]).root), None);
        let why = root_usage(&args(&["--root", "/tmp/synth"]).root);
        let why = why.unwrap_or_default();
        assert!(
            why.contains("running kernel") && why.contains("--root /tmp/synth"),
            "{why}"
        );
        let mut cmd = <T as clap::CommandFactory>::command();
        let help = cmd.render_long_help().to_string();
        assert!(
            help.contains("trace attaches to the running kernel"),
            "{help}"
        );
    }

    #[test]
    fn bad_selectors_are_named() {
        for bad in [["--irq", "("], ["--exclude", "("], ["--cpus", "x"]] {
            let e = T::try_parse_from(["t", bad[0], bad[1]]).err();
            let e = e.unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert_eq!(e.exit_code(), 2, "{bad:?}: {e}");
            assert!(e.to_string().contains(bad[0]), "{bad:?}: {e}");
        }
        let s = args(&["--irq", "virtio", "--exclude", "input", "--cpus", "1"])
            .select()
            .unwrap();
        assert!(s.filter.irq.is_some() && s.filter.exclude.is_some());
        assert!(s.filter.keep_cpu(1) && !s.filter.keep_cpu(0));
    }
}
