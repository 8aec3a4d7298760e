//! `irqlab show`: one snapshot of interrupts, softirqs and CPU time, or
//! rates over `--interval`. Reads through the sampler (HostFs), so
//! `--root` works on any captured or synthesized tree. Flags are checked
//! by clap (bad values exit 2); filters that select nothing are said on
//! stderr (`crate::filter::warnings`); a closed stdout ends the run before it
//! samples.

use super::top::{parse_show_threshold, SortArg};
use super::Format;
use crate::cmd::args::{FilterArgs, JsonLayout, RootArgs};
use crate::export;
use crate::filter::warnings::{
    cpu_disagreement, filter_warnings_excluding, listed_of, snapshot_disagreement, ListedCpus,
};
use crate::filter::Filter;
use crate::host::HostFs;
use crate::report::{self, SortKey};
use crate::sampler::strategy::Choice;
use crate::sampler::targeted::{affinity_of, bad_affinity_note};
use crate::sampler::{
    read_again_if_torn, read_once, LivePlan, LiveSampler, OnceRead, StatFile, Ticker,
};
use irqlab_core::{CountSink, IrqRow, Shape};
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab show`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab show                                      # counts since boot, tables\n  \
    irqlab show -i 1s --irq 'nvme|eth0' --cpus 0-3   # rates over 1 s, filtered\n  \
    irqlab show --root ./sosreport-host42 --format json  # a captured tree\n  \
    irqlab show --format json --affinity             # with each IRQ's CPUs\n  \
    irqlab show --format csv > snap.csv")]
pub struct Args {
    #[command(flatten)]
    pub root: RootArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Show rates over this interval (e.g. `1s`, `250ms`; at least 1ms, at most 24h) instead of counts.
    #[arg(long, short = 'i', value_parser = super::args::interval, allow_hyphen_values = true)]
    pub interval: Option<Duration>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Order interrupt rows by rate (with --interval; else by count), count
    /// since boot, IRQ number or device name (default: file order).
    #[arg(long, value_enum)]
    pub sort: Option<SortArg>,
    /// Hide interrupt rows whose total is below this (a count since boot,
    /// or a rate per second with --interval); rows with no interrupt are
    /// hidden at any threshold, rows with a gap never.
    #[arg(long, value_name = "MIN", value_parser = parse_show_threshold, allow_hyphen_values = true)]
    pub threshold: Option<f64>,
    /// Add each numbered IRQ's affinity to JSON (`affinity`: the
    /// effective CPU list, else the configured one; one file read per
    /// IRQ). The table always shows it; CSV has no column for it.
    #[arg(long)]
    pub affinity: bool,
    #[command(flatten)]
    pub json: JsonLayout,
}

impl Args {
    /// Whether the output carries affinity, so that it is read: the table
    /// always, JSON with `--affinity`, CSV never.
    fn shows_affinity(&self) -> bool {
        match self.format {
            Format::Table => true,
            Format::Json => self.affinity,
            Format::Csv => false,
        }
    }
}

/// `--affinity` where it cannot apply: CSV has no column for it.
fn affinity_refusal(args: &Args) -> Option<&'static str> {
    (args.affinity && args.format == Format::Csv).then_some(
        "--affinity: CSV lines show no affinity (use --format json; the table always shows it)",
    )
}

/// Rows in `--sort` order, then only those at or above `--threshold`.
/// Counts (no interval): "rate" orders by the total count, and the
/// threshold applies to it.
fn order_rows(report: &mut report::Report, sort: Option<SortKey>, threshold: Option<f64>) {
    let counts = report.interval_s.is_none();
    let Some(sec) = report.interrupts.as_mut() else {
        return;
    };
    if let Some(min) = threshold {
        sec.rows.retain(|l| {
            if counts {
                count_above(l, min)
            } else {
                report::above_threshold(l, min)
            }
        });
    }
    if let Some(key) = sort {
        if counts {
            for l in &mut sec.rows {
                l.since_boot = Some(l.total);
            }
        }
        report::sort_rows(
            &mut sec.rows,
            key,
            |l| l,
            |l| {
                if counts {
                    Some(l.total as f64)
                } else {
                    l.total_rate
                }
            },
        );
    }
}

/// `--threshold` on counts since boot: a row with none is hidden at any
/// threshold.
fn count_above(l: &report::IrqLine, min: f64) -> bool {
    l.total > 0 && l.total as f64 >= min
}

/// Say on stderr when the sampled files disagree on the CPUs
/// ([`snapshot_disagreement`]).
fn note_disagreement(root: &std::path::Path, snap: &irqlab_core::Snapshot) {
    if let Some(note) = snapshot_disagreement(root, snap) {
        eprintln!("{note}");
    }
}

/// Say [`filter_warnings_excluding`] of `args`' filters on stderr:
/// `irq_rows` interrupt rows kept. When none is and `--exclude` is given,
/// the file is read again to count the rows `--irq` alone keeps (the
/// rows were dropped as they were parsed).
fn warn_filters(args: &Args, present: &ListedCpus, irq_rows: Option<usize>) {
    let f = &args.filter;
    let (cpus, irq, exclude) = (f.cpus.as_deref(), f.irq.as_deref(), f.exclude.as_deref());
    let by_irq = || rows_by_irq_alone(args.root.path(), irq);
    for w in filter_warnings_excluding(cpus, present, irq, exclude, irq_rows, by_irq) {
        eprintln!("{w}");
    }
}

/// The interrupt rows of `root`'s `/proc/interrupts` that `--irq` alone
/// keeps (every row without it); `None` when it cannot be read now.
fn rows_by_irq_alone(root: &std::path::Path, irq: Option<&str>) -> Option<usize> {
    let f = Filter::from_flags(irq, None).ok()?;
    let mut host = HostFs::new(root);
    let text = host.read(irqlab_core::paths::PROC_INTERRUPTS).ok()?;
    let parsed = irqlab_core::Interrupts::parse(text).ok()?;
    Some(parsed.rows().iter().filter(|r| f.keep_irq_row(r)).count())
}

/// Effective (else configured) affinity of every numbered row, from
/// `/proc/irq/N/` when the tree has it: read for the printed rows only.
fn annotate_affinity(report: &mut report::Report, fs: &HostFs) {
    let Some(sec) = report.interrupts.as_mut() else {
        return;
    };
    let irqs: Vec<u32> = sec.rows.iter().filter_map(|r| r.irq).collect();
    let mut got = affinities(fs, &irqs).into_iter();
    for row in &mut sec.rows {
        if row.irq.is_some() {
            row.affinity = got.next().flatten();
        }
    }
}

/// The affinity of each IRQ of `irqs`, in order, by `sampler::targeted::affinity_of`'s
/// rule (the first of `AFFINITY_FILES` holding a CPU list), each file opened
/// relative to one open `/proc/irq` (`host::AttrDir`: open, one short
/// read; the files closed by one `close_range` per run of up to 256)
/// under a name built in one reused buffer. All `None` when the tree has
/// no `/proc/irq`; nothing opened for no IRQ. A file that is not a CPU
/// list is unknown, with a note on stderr. Plain reads, not an io_uring batch:
/// measured on a 1056-IRQ synth tree (ext4, kernel 6.18, 2-vCPU VM), a
/// ring's set-up, requests and linked completions cost 0.15–0.2 ms more
/// CPU than plain reads with a `close` each (3168 system calls, 1.1 ms);
/// BENCHMARKS.md, session 13.
fn affinities(fs: &HostFs, irqs: &[u32]) -> Vec<Option<String>> {
    if irqs.is_empty() {
        return Vec::new();
    }
    let Ok(mut dir) = fs.attr_dir(irqlab_core::paths::PROC_IRQ) else {
        return vec![None; irqs.len()];
    };
    // `N/file`, without the formatting machinery (a thousand names)
    let mut name = String::with_capacity(40);
    irqs.iter()
        .map(|&irq| {
            affinity_of(
                |file| {
                    name.clear();
                    name.push_str(itoa::Buffer::new().format(irq));
                    name.push('/');
                    name.push_str(file);
                    dir.read(&name)
                },
                |file, text| {
                    if let Some(note) = bad_affinity_note(fs, irq, file, text) {
                        eprintln!("irqlab: note: {note}");
                    }
                },
            )
        })
        .collect()
}

/// Say the live sampler's notes (affinity files that are not CPU lists).
fn say_notes(live: &mut LiveSampler) {
    for n in live.take_notes() {
        eprintln!("irqlab: note: {n}");
    }
}

/// The sampler's reason for a missing file, in words.
fn reason(why: &str) -> String {
    if why.contains("os error 21") {
        "it is a directory, expected a file".to_string()
    } else {
        why.to_string()
    }
}

/// Notes for the files that could not be read (said even when the run
/// then fails because none could).
fn note_missing(fs: &HostFs, missing: &[(StatFile, String)]) {
    for (src, why) in missing {
        eprintln!(
            "irqlab: note: {} not shown: {}",
            fs.path(src.rel()).display(),
            reason(why)
        );
    }
}

/// One snapshot (counts since boot), and the CPUs its files list.
/// `/proc/interrupts` is streamed (never whole in memory); the row
/// filter applies before a row is kept; nothing is printed before the
/// whole file parsed, so a read torn by hotplug is read again from
/// scratch ([`read_again_if_torn`]).
/// With `table`, rows of a table too wide for CPU columns keep only their
/// busiest CPU (and the scratch row its count buffer).
fn snapshot_report(
    root: &std::path::Path,
    filter: &Filter,
    table: bool,
) -> anyhow::Result<(report::Report, ListedCpus)> {
    read_again_if_torn(|| snapshot_report_once(root, filter, table))
}

/// One read of [`snapshot_report`], its rows gathered afresh.
fn snapshot_report_once(
    root: &std::path::Path,
    filter: &Filter,
    table: bool,
) -> anyhow::Result<(report::Report, ListedCpus)> {
    let mut rows = Vec::new();
    let (cpus, mut report, present) = snapshot_with(root, filter, |counts, mut l, row| {
        if table && counts.cpus().len() > export::table::MAX_CPU_COLUMNS {
            counts.keep_busiest_count(&mut l, row);
        }
        rows.push(l);
        Ok(())
    })?;
    report.interrupts = cpus.map(|cpus| report::IrqSection {
        cpus,
        rows,
        gone: Vec::new(),
    });
    Ok((report, present))
}

/// The reads of one snapshot, through the sampler's [`read_once`]: each
/// row of `/proc/interrupts` the filter keeps goes to `keep` as a report
/// line (with the kept CPU columns; the scratch row comes along, so that
/// `keep` may give its count buffer back), softirqs and stat into a
/// report without its interrupts section; missing files and range notes
/// said on stderr. Returns the kept columns' CPU ids (`None` when
/// `/proc/interrupts` could not be read), the report and the CPUs the
/// files list.
fn snapshot_with(
    root: &std::path::Path,
    filter: &Filter,
    mut keep: impl FnMut(&report::IrqCounts, report::IrqLine, &mut IrqRow) -> std::io::Result<()>,
) -> anyhow::Result<Snapped> {
    let mut sec: Option<report::IrqCounts> = None;
    snapshot_into(root, filter, &mut Vec::new(), |cpus, row, c| {
        swap_counts(row, c);
        let counts = sec.get_or_insert_with(|| report::IrqCounts::new(cpus, filter));
        let res = match counts.line(row) {
            Some(l) => keep(counts, l, row),
            None => Ok(()),
        };
        swap_counts(row, c);
        res
    })
}

/// Swap the row's counts with the vector `c` (no copy once a row holds
/// more counts than fit inline).
fn swap_counts(row: &mut IrqRow, c: &mut Vec<u64>) {
    let held = std::mem::take(&mut row.counts).into_vec();
    row.counts = irqlab_core::interrupts::Counts::from_vec(std::mem::replace(c, held));
}

/// [`snapshot_with`] at the level of the parser: each row of
/// `/proc/interrupts` the `--irq` prefilter and the parse let through
/// goes to `row` with the header's CPU ids and its counts read into
/// `counts` (`row.counts` left empty); the caller applies the filter.
fn snapshot_into<S: CountSink>(
    root: &std::path::Path,
    filter: &Filter,
    counts: &mut S,
    row: impl FnMut(&[u32], &mut IrqRow, &mut S) -> std::io::Result<()>,
) -> anyhow::Result<Snapped> {
    let mut fs = HostFs::new(root);
    let mut missing = Vec::new();
    let read = read_once(&mut fs, filter, &mut missing, counts, row);
    note_missing(&fs, &missing);
    let OnceRead {
        snap,
        interrupt_cpus,
        range_note,
    } = read?;
    if let Some(note) = &range_note {
        eprintln!("irqlab: note: {note}");
    }
    if let Some(note) = snap.softirqs.as_ref().and_then(|s| s.note()) {
        let path = fs.path(StatFile::Softirqs.rel());
        eprintln!("irqlab: note: {}", crate::sampler::located(&path, note));
    }
    if let Some(note) = cpu_disagreement(
        root,
        interrupt_cpus.as_deref(),
        snap.stat.as_ref(),
        snap.softirqs.as_ref().map(|s| s.cpus.as_slice()),
    ) {
        eprintln!("{note}");
    }
    // gathered in a list, then made a set at once (sorted: bulk-built,
    // not 3 x 1152 inserts one by one)
    let mut present = Vec::new();
    // the kept columns' ids; the section builder is freed here, before
    // the softirqs and stat sections are built
    let cpus = interrupt_cpus.map(|all| {
        present.extend(all.iter().copied());
        report::IrqCounts::new(&all, filter).cpus().to_vec()
    });
    if cpus.is_none() && snap.stat.is_none() {
        if let Some(s) = &snap.softirqs {
            present.extend(s.cpus.iter().copied());
        }
    }
    if let Some(s) = &snap.stat {
        // the same CPUs as /proc/interrupts' header, in the same order,
        // on most machines: then nothing to add (nor to sort)
        let ids = s.cpus.iter().filter_map(|t| t.cpu);
        if !ids.clone().eq(present.iter().copied()) {
            present.extend(ids);
        }
    }
    if !present.is_sorted() {
        present.sort_unstable();
    }
    present.dedup();
    let mut listed = ListedCpus {
        online: present.into_iter().collect(),
        interrupts_read: cpus.is_some(),
        stat_read: snap.stat.is_some(),
        ..ListedCpus::default()
    };
    // only `--cpus`' warnings need them
    if let (Some(_), Some(s)) = (&filter.cpus, &snap.softirqs) {
        listed.add_softirqs(&s.cpus);
    }
    Ok((cpus, report::counts(snap, filter), listed))
}

/// `show --format json` of one snapshot, compact, without `--sort`: each
/// kept interrupt row is serialized as it is parsed (without `--cpus`
/// its counts go straight from the file's digits to JSON:
/// [`held_rows_as_read`]; with it, through the report's line:
/// [`held_rows`]) and held
/// ([`export::report_json::HeldRows`]: runs of zero counts as their
/// length), written once the whole file parsed — so a bad line still fails
/// before anything is printed, and a 1152-CPU file's 3 MB of JSON rows is
/// held in a few hundred KB of fresh pages, not 10 MB of counts. With
/// `--affinity`, numbered rows are held with a slot for their affinity,
/// read for all of them in one pass ([`affinities`]) once the file
/// parsed; without it none is read. The same document as
/// the report's (tested byte for byte in tests/show_json_stream.rs).
/// A read torn by hotplug is read again from scratch
/// ([`read_again_if_torn`]).
fn snapshot_json(args: &Args, filter: &Filter) -> anyhow::Result<ExitCode> {
    let root = args.root.path();
    let (held, (cpus, rest, present)) =
        read_again_if_torn(|| held_once(root, filter, args.threshold, args.shows_affinity()))?;
    let Held { rows, kept, irqs } = held;
    let irq_rows = cpus.as_ref().map(|_| kept);
    // (no IRQ held without `--affinity`: nothing opened)
    let affinity = affinities(&HostFs::new(root), &irqs);
    warn_filters(args, &present, irq_rows);
    let mut out = export::stdout::stdout();
    out.write_all(b"{\"interrupts\":")?;
    match &cpus {
        Some(cpus) => {
            out.write_all(b"{\"cpus\":")?;
            serde_json::to_writer(&mut out, cpus).map_err(std::io::Error::from)?;
            out.write_all(b",\"rows\":[")?;
            rows.write_to(&mut out, &affinity)?;
            out.write_all(b"]}")?;
        }
        None => out.write_all(b"null")?,
    }
    out.write_all(b",\"softirqs\":")?;
    export::report_json::softirqs(&mut out, rest.softirqs.as_ref())?;
    out.write_all(b",\"stat\":")?;
    export::report_json::stat(&mut out, rest.stat.as_ref())?;
    out.write_all(b"}\n")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The rows [`snapshot_json`] holds until the file parsed.
#[derive(Default)]
struct Held {
    /// The shown rows, serialized.
    rows: export::report_json::HeldRows,
    /// The rows the filter kept (shown or under the threshold).
    kept: usize,
    /// The shown numbered rows' IRQs, with `--affinity` (else none):
    /// their affinity is read in one pass once the file parsed, and
    /// written into each row's slot.
    irqs: Vec<u32>,
}

/// One read of [`snapshot_json`]'s snapshot, its rows held afresh; the
/// numbered ones with a slot for their affinity when `slots`.
fn held_once(
    root: &std::path::Path,
    filter: &Filter,
    threshold: Option<f64>,
    slots: bool,
) -> anyhow::Result<(Held, Snapped)> {
    let mut h = Held::default();
    let (rows, kept) = (&mut h.rows, &mut h.kept);
    let irqs = slots.then_some(&mut h.irqs);
    let snapped = if filter.cpus.is_none() {
        held_rows_as_read(root, filter, threshold, rows, kept, irqs)?
    } else {
        held_rows(root, filter, threshold, rows, kept, irqs)?
    };
    Ok((h, snapped))
}

/// What a snapshot's rows were held with: the kept columns' CPU ids
/// (`None` without `/proc/interrupts`), the report without its
/// interrupts section, the CPUs the files list.
type Snapped = (Option<Vec<u32>>, report::Report, ListedCpus);

/// The rows `filter` keeps, in `rows` (those at or above `threshold`;
/// with `irqs`, numbered ones with a slot for their affinity: their IRQ
/// in `irqs`), the number kept in `kept`: each row serialized as it is
/// parsed (the scratch row's count buffer lent to the line and taken
/// back).
fn held_rows(
    root: &std::path::Path,
    filter: &Filter,
    threshold: Option<f64>,
    rows: &mut export::report_json::HeldRows,
    kept: &mut usize,
    mut irqs: Option<&mut Vec<u32>>,
) -> anyhow::Result<Snapped> {
    let mut one = Vec::new();
    snapshot_with(root, filter, |counts, mut l, row| {
        *kept += 1;
        let shown = threshold.is_none_or(|min| count_above(&l, min));
        if shown {
            // one row into a reused buffer, then held (runs of zero
            // counts as their length)
            one.clear();
            if !rows.is_empty() {
                one.push(b',');
            }
            export::irq_row_json::line(&mut one, &l);
            match (l.irq, irqs.as_deref_mut()) {
                (Some(irq), Some(irqs)) => {
                    rows.push_with_affinity(&one, irqs.len());
                    irqs.push(irq);
                }
                _ => rows.push(&one),
            }
        }
        if let Some(c) = l.counts.take() {
            counts.give_back(c, row);
        }
        Ok(())
    })
}

/// [`held_rows`] without a CPU filter: each row's counts go from the
/// file's digits to held JSON as they are parsed
/// ([`export::report_json::HeldCounts`]), never stored as numbers; the
/// row's other fields are written from the parsed row. The same bytes
/// (tested against [`held_rows`] in this module's tests).
fn held_rows_as_read(
    root: &std::path::Path,
    filter: &Filter,
    threshold: Option<f64>,
    rows: &mut export::report_json::HeldRows,
    kept: &mut usize,
    mut irqs: Option<&mut Vec<u32>>,
) -> anyhow::Result<Snapped> {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut counts = export::report_json::HeldCounts::default();
    snapshot_into(root, filter, &mut counts, |_, row, counts| {
        if !filter.keep_irq_row(row) {
            return Ok(());
        }
        *kept += 1;
        let total = counts.total();
        if threshold.is_some_and(|min| !(total > 0 && total as f64 >= min)) {
            return Ok(());
        }
        before.clear();
        if !rows.is_empty() {
            before.push(b',');
        }
        use export::irq_row_json as rj;
        rj::head(&mut before, &row.label, row.irq, Some(row.shape));
        before.extend_from_slice(b",\"counts\":");
        after.clear();
        after.extend_from_slice(b",\"total\":");
        rj::push_u64(&mut after, total);
        let p = &row.parts;
        let split = rj::Split {
            chip: nonempty(&p.chip),
            hwirq: p.hwirq,
            trigger: nonempty(&p.trigger),
            flow: nonempty(&p.flow),
        };
        rj::tail(&mut after, Some(split), p.actions(), &row.description, None);
        let slot = row.irq.zip(irqs.as_deref_mut()).map(|(irq, irqs)| {
            irqs.push(irq);
            irqs.len() - 1
        });
        let array = (row.shape == Shape::PerCpu).then_some(&*counts);
        rows.push_counted(&before, array, &after, slot);
        Ok(())
    })
}

/// `s` unless empty (a row's split part as `report` keeps it).
fn nonempty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The live sampler of `show --interval` (the kernel's own rows: the
/// full `/proc/interrupts`), its missing files said.
fn open_live(root: &std::path::Path, filter: &Filter) -> anyhow::Result<LiveSampler> {
    let plan = LivePlan {
        root: root.to_path_buf(),
        filter: filter.clone(),
        strategy: Choice::ProcInterrupts,
    };
    // show prints no interrupt threads: do not look for them
    let live = LiveSampler::open_without_threads(&plan)?;
    for m in live.missing() {
        eprintln!("irqlab: note: not shown: {}", reason(&m));
    }
    Ok(live)
}

/// Rates over `iv`: one frame of the live sampler, with affinity from its
/// metadata when `affinity` (read only then).
fn interval_report(
    root: &std::path::Path,
    filter: &Filter,
    iv: Duration,
    with_deltas: bool,
    affinity: bool,
) -> anyhow::Result<(report::Report, ListedCpus)> {
    let mut live = open_live(root, filter)?;
    let mut ticker = Ticker::new(iv);
    ticker.wait();
    let mut frame = live.next_frame()?;
    note_disagreement(root, frame.cur);
    let mut present = ListedCpus::default();
    listed_of(frame.prev, &mut present);
    listed_of(frame.cur, &mut present);
    // the table prints rates only: no per-CPU deltas for it, and no
    // per-CPU rates when it is too wide for CPU columns (the busiest CPU)
    let (prev, cur, f) = (frame.prev, frame.cur, frame.filter());
    let columns = cur
        .interrupts
        .as_ref()
        .map_or(0, |m| f.columns(&m.cpus).len());
    let irqs = if !with_deltas && columns > export::table::MAX_CPU_COLUMNS {
        report::IrqRows::Busiest
    } else {
        report::IrqRows::PerCpu
    };
    let opts = report::RateOpts {
        deltas: with_deltas,
        irqs,
    };
    let mut report = report::rates(prev, cur, f, opts);
    if affinity {
        report::annotate_affinity(&mut report, &mut frame);
    }
    say_notes(&mut live);
    Ok((report, present))
}

/// `show --interval --format json` without `--sort`: the same document
/// as [`interval_report`]'s, written row by row from the frame
/// ([`report::RateRows`]) instead of built whole first.
fn interval_json(args: &Args, filter: &Filter, iv: Duration) -> anyhow::Result<ExitCode> {
    let mut live = open_live(args.root.path(), filter)?;
    let mut ticker = Ticker::new(iv);
    ticker.wait();
    let mut frame = live.next_frame()?;
    let (prev, cur, f) = (frame.prev, frame.cur, frame.filter());
    note_disagreement(args.root.path(), cur);
    let mut present = ListedCpus::default();
    listed_of(prev, &mut present);
    listed_of(cur, &mut present);
    let opts = report::RateOpts {
        deltas: true,
        irqs: report::IrqRows::Omitted,
    };
    let rest = report::rates(prev, cur, f, opts);
    let mut irq_rows = None;
    let mut affinity = HashMap::new();
    if let (Some(_), Some(n)) = (&prev.interrupts, &cur.interrupts) {
        let kept = n.rows().iter().filter(|r| f.keep_irq_row(r));
        irq_rows = Some(kept.clone().count());
        if args.shows_affinity() {
            for irq in kept.filter_map(|r| r.irq) {
                affinity.insert(irq, frame.affinity(irq));
            }
        }
    }
    warn_filters(args, &present, irq_rows);
    let threshold = args.threshold;
    let rows = report::RateRows::new(prev, cur, f);
    let mut out = export::stdout::stdout();
    export::report_json::write_rate_rows(
        &rest,
        rows.as_ref(),
        &|l| threshold.is_none_or(|min| report::above_threshold(l, min)),
        &|irq| affinity.get(&irq).cloned().flatten(),
        &mut out,
        args.json.pretty_on_stdout(),
    )?;
    out.flush()?;
    say_notes(&mut live);
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(why) = args.json.refused_with(args.format, Format::Json) {
        eprintln!("irqlab: error: {why}");
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    if let Some(why) = affinity_refusal(&args) {
        eprintln!("irqlab: error: show {why}");
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    let filter = args.filter.filter()?;
    export::stdout::check_open()?;
    if args.interval.is_none() {
        // one look: the streamed file's buffer, freed after the parse, is
        // then reused by the softirqs, stat and output buffers instead of
        // unmapped and faulted in again (measured on 1152 CPUs: 0.1 ms
        // less CPU, the same peak RSS within 2 %)
        crate::alloc::keep_large_blocks_in_heap();
    }
    match (args.interval, args.format, args.sort) {
        (Some(iv), Format::Json, None) => return interval_json(&args, &filter, iv),
        (None, Format::Json, None) if !args.json.pretty_on_stdout() => {
            return snapshot_json(&args, &filter)
        }
        _ => {}
    }
    let (mut report, present) = match args.interval {
        None => snapshot_report(args.root.path(), &filter, args.format == Format::Table)?,
        Some(iv) => {
            let deltas = args.format != Format::Table;
            interval_report(args.root.path(), &filter, iv, deltas, args.shows_affinity())?
        }
    };
    let irq_rows = report.interrupts.as_ref().map(|s| s.rows.len());
    order_rows(&mut report, args.sort.map(SortKey::from), args.threshold);
    // affinity of the printed rows only, when the output carries it
    if args.interval.is_none() && args.shows_affinity() {
        annotate_affinity(&mut report, &HostFs::new(args.root.path()));
    }
    warn_filters(&args, &present, irq_rows);
    let mut out = export::stdout::stdout();
    match args.format {
        Format::Table => export::table::write(&report, &mut out)?,
        Format::Json => {
            export::report_json::write(&report, &mut out, args.json.pretty_on_stdout())?
        }
        Format::Csv => export::csv::write(&report, &mut out)?,
    }
    out.flush()?;
    if args.format == Format::Csv {
        for note in gone_notes(&report) {
            eprintln!("irqlab: note: {note}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What the CSV cannot say: the kept interrupt rows and the softirq
/// vectors gone since the first sample (the table and JSON list them;
/// CSV has a line per row and CPU only).
fn gone_notes(report: &report::Report) -> Vec<String> {
    let irqs = report.interrupts.as_ref().map(|s| ("", &s.gone));
    let softirqs = report.softirqs.as_ref().map(|s| ("softirqs ", &s.gone));
    irqs.into_iter()
        .chain(softirqs)
        .filter(|(_, gone)| !gone.is_empty())
        .map(|(what, gone)| {
            let list = gone.join(", ");
            format!(
                "{what}gone since the first sample (no CSV line): {}",
                export::grid::visible_text(&list)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// CSV's notes name the gone interrupt rows and softirq vectors
    /// apart, none when nothing went away.
    #[test]
    fn csv_notes_say_gone_softirqs_as_gone_rows() {
        let soft = |gone: Vec<String>| report::SoftirqSection {
            cpus: vec![0],
            rows: Vec::new(),
            gone,
        };
        let irqs = |gone: Vec<String>| report::IrqSection {
            cpus: vec![0],
            rows: Vec::new(),
            gone,
        };
        let mut r = report::Report {
            interrupts: Some(irqs(Vec::new())),
            softirqs: Some(soft(vec!["NET_RX".into(), "BLOCK".into()])),
            ..report::Report::default()
        };
        assert_eq!(
            gone_notes(&r),
            ["softirqs gone since the first sample (no CSV line): NET_RX, BLOCK"]
        );
        r.interrupts = Some(irqs(vec!["7".into()]));
        assert_eq!(gone_notes(&r).len(), 2);
        assert_eq!(
            gone_notes(&r)[0],
            "gone since the first sample (no CSV line): 7"
        );
        r.softirqs = Some(soft(Vec::new()));
        r.interrupts = None;
        assert!(gone_notes(&r).is_empty());
    }

    #[test]
    fn intervals_must_be_positive_and_bounded() {
        use crate::cmd::args::{interval, MAX_INTERVAL};
        assert_eq!(interval("250ms"), Ok(Duration::from_millis(250)));
        assert!(interval("-1s").unwrap_err().contains("negative"));
        assert!(interval("0").unwrap_err().contains("greater than 0"));
        assert!(interval("10000000000s")
            .unwrap_err()
            .contains("longest interval"));
        assert!(interval("99999999999999999999999s").is_err());
        assert_eq!(interval("24h"), Ok(MAX_INTERVAL));
    }

    const GOOD: &str = "           CPU0       CPU1       \n 24:          1          2  IO-APIC   5-edge      ACPI:Ged\n 25:          3          4  IO-APIC   6-edge      i8042\n";
    /// CPU1 went offline between the header and the second row.
    const TORN: &str = "           CPU0       CPU1       \n 24:          1          2  IO-APIC   5-edge      ACPI:Ged\n 25:          3  IO-APIC   6-edge      i8042\n";

    /// Each attempt of `once` under a tree whose `/proc/interrupts` is
    /// torn at the first read and whole after (torn at every read with
    /// `always_torn`): the result and the number of reads.
    fn torn_then_whole<T>(
        always_torn: bool,
        mut once: impl FnMut(&std::path::Path) -> anyhow::Result<T>,
    ) -> (anyhow::Result<T>, u32) {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("proc/interrupts");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut reads = 0;
        let r = read_again_if_torn(|| {
            reads += 1;
            let text = if reads == 1 || always_torn {
                TORN
            } else {
                GOOD
            };
            std::fs::write(&path, text).unwrap();
            once(d.path())
        });
        (r, reads)
    }

    #[test]
    fn a_snapshot_torn_by_hotplug_is_read_again_from_scratch() {
        for table in [true, false] {
            let (r, reads) = torn_then_whole(false, |root| {
                snapshot_report_once(root, &Filter::default(), table)
            });
            let (report, present) = r.unwrap();
            assert_eq!(reads, 2);
            let sec = report.interrupts.unwrap();
            // the first read's row is not kept twice
            let labels: Vec<&str> = sec.rows.iter().map(|l| l.label.as_str()).collect();
            assert_eq!(labels, ["24", "25"]);
            assert_eq!(sec.rows[1].total, 7);
            assert_eq!(present.online, std::collections::BTreeSet::from([0, 1]));
        }
    }

    #[test]
    fn a_json_snapshot_torn_by_hotplug_is_read_again_from_scratch() {
        for (cpus, slots) in [None, Some("0-1")].into_iter().zip([true, false]) {
            let filter = Filter::from_flags(None, cpus).unwrap();
            let (r, reads) = torn_then_whole(false, |root| held_once(root, &filter, None, slots));
            let (held, (cpus, _, _)) = r.unwrap();
            assert_eq!(reads, 2);
            assert_eq!(cpus, Some(vec![0, 1]));
            // an IRQ (a slot) for each numbered row only with `--affinity`
            let irqs = if slots { vec![24, 25] } else { vec![] };
            assert_eq!((held.kept, held.irqs), (2, irqs));
            let mut json = Vec::new();
            let affinity = [Some("1".to_string()), Some("0".to_string())];
            held.rows.write_to(&mut json, &affinity).unwrap();
            let json = String::from_utf8(json).unwrap();
            assert_eq!(json.matches("\"label\"").count(), 2, "{json}");
            assert!(json.contains("[3,4]"), "{json}");
            let want = if slots { 2 } else { 0 };
            assert_eq!(json.matches("\"affinity\"").count(), want, "{json}");
        }
    }

    #[test]
    fn a_snapshot_torn_at_every_read_is_the_error_naming_file_and_line() {
        let (r, reads) = torn_then_whole(true, |root| {
            snapshot_report_once(root, &Filter::default(), true)
        });
        let e = format!("{:#}", r.err().unwrap());
        assert_eq!(reads, 2);
        assert!(
            e.contains("proc/interrupts:3: expected 2 per-CPU counts"),
            "{e}"
        );
        let (r, reads) =
            torn_then_whole(true, |root| held_once(root, &Filter::default(), None, true));
        let e = format!("{:#}", r.err().unwrap());
        assert_eq!(reads, 2);
        assert!(
            e.contains("proc/interrupts:3: expected 2 per-CPU counts"),
            "{e}"
        );
    }

    #[test]
    fn regexes_and_cpu_lists_are_checked() {
        use crate::cmd::args::{cpu_list_arg, regex_arg};
        assert!(regex_arg("(").is_err());
        assert_eq!(regex_arg("^LOC$").as_deref(), Ok("^LOC$"));
        assert!(cpu_list_arg("5-2").is_err());
        assert_eq!(cpu_list_arg("0-1,3").as_deref(), Ok("0-1,3"));
    }
}
