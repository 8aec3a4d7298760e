//! [`StatFiles`]: the low-level reader of `/proc/interrupts`,
//! `/proc/softirqs` and `/proc/stat` (or, with a [`Targeted`] reader, the
//! selected IRQs' `per_cpu_count`) through [`HostFs`] into a reused
//! [`Snapshot`], with both timestamps: a private detail of the live
//! sampler's [`HostSource`](super::HostSource), through which every
//! repeated consumer samples. [`read_once`]: the same files read once
//! for a single look (`show`), `/proc/interrupts` streamed row by row
//! through the row filter instead of kept whole. One set of rules for
//! both: which errors fail the read and which make a file missing, and
//! when nothing is readable; and one rule for a `/proc/interrupts` read
//! torn by CPU hotplug: read once more ([`read_again_if_torn`] for
//! [`read_once`]'s callers, whose rows it has already handed out). Parse
//! errors name the real path, line and what was expected.

use super::{clock, located, Strategy, Targeted};
use crate::filter::prefilter::Prefilter;
use crate::filter::Filter;
use crate::host::{HostFs, RootError};
use anyhow::anyhow;
use irqlab_core::interrupts::LineParser;
use irqlab_core::{paths, CountSink, ErrorKind, Interrupts, IrqRow, ParseError, Snapshot};

/// A statistics file the sampler can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatFile {
    Interrupts,
    Softirqs,
    Stat,
}

impl StatFile {
    /// Root-relative path.
    pub fn rel(self) -> &'static str {
        match self {
            StatFile::Interrupts => paths::PROC_INTERRUPTS,
            StatFile::Softirqs => paths::PROC_SOFTIRQS,
            StatFile::Stat => paths::PROC_STAT,
        }
    }

    pub const ALL: [StatFile; 3] = [StatFile::Interrupts, StatFile::Softirqs, StatFile::Stat];
}

/// The note a live run says once, at its start, of a statistics file its
/// first sample could not read (`m`: the path and why, as
/// [`SnapshotSource::missing`](super::SnapshotSource::missing) lists it):
/// not `done` (`shown`, `exposed`) until a sample can read it. Every
/// sample tries the file again (`StatFiles::sample`), and the run has it
/// from the first sample that reads it (its rates from the interval after).
pub fn not_read_yet(done: &str, m: &str) -> String {
    format!("not {done} until a sample can read it: {m}")
}

/// Reads the statistics files of one root into a reused snapshot.
pub struct StatFiles {
    fs: HostFs,
    sources: Vec<StatFile>,
    /// Reads the interrupt counts instead of `/proc/interrupts` when set.
    targeted: Option<Targeted>,
    /// Files that could not be opened, with the reason (reported once).
    pub missing: Vec<(StatFile, String)>,
    /// Files read by a sample: one that cannot be read any more (removed
    /// from a tree under `--root`) fails the sample instead of going
    /// missing without a word.
    read: Vec<StatFile>,
}

impl StatFiles {
    /// A sampler for `sources` under `fs`'s root.
    pub fn new(fs: HostFs, sources: &[StatFile]) -> Self {
        StatFiles {
            fs,
            sources: sources.to_vec(),
            targeted: None,
            missing: Vec::new(),
            read: Vec::new(),
        }
    }

    /// Read interrupt counts through `t` (`Some`) or the full file (`None`).
    pub fn set_targeted(&mut self, t: Option<Targeted>) {
        self.targeted = t;
    }

    /// The targeted reader, if installed.
    pub fn targeted(&self) -> Option<&Targeted> {
        self.targeted.as_ref()
    }

    /// The strategy [`StatFiles::sample`] uses for interrupt counts.
    pub fn strategy(&self) -> Strategy {
        match self.targeted {
            Some(_) => Strategy::PerCpuCount,
            None => Strategy::ProcInterrupts,
        }
    }

    /// Mutable access to the gateway (kept-descriptor reads by callers).
    pub fn fs_mut(&mut self) -> &mut HostFs {
        &mut self.fs
    }

    /// The gateway (for metadata reads by callers).
    pub fn fs(&self) -> &HostFs {
        &self.fs
    }

    /// Read every source into `snap`, reusing its models. A file that cannot
    /// be opened is recorded in `missing` and left `None`, unless an earlier
    /// sample read it (then it is an error naming it); a file that does
    /// not parse is an error. Fails when no source at all is readable.
    pub fn sample(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        let stamp = clock::now()?;
        snap.mono_ns = stamp.mono_ns;
        snap.wall_ns = stamp.wall_ns;
        self.read_all(snap)
    }

    fn read_all(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        let mut any = false;
        for i in 0..self.sources.len() {
            let Some(&src) = self.sources.get(i) else {
                break;
            };
            if let (StatFile::Interrupts, Some(t)) = (src, self.targeted.as_mut()) {
                let model = snap.interrupts.get_or_insert_with(Interrupts::default);
                t.read_into(&mut self.fs, model)?;
                any = true;
                continue;
            }
            let read = if src == StatFile::Interrupts {
                // streamed: a 1152-CPU file never needs a 13 MB buffer
                let model = snap.interrupts.get_or_insert_with(Interrupts::default);
                let fs = &mut self.fs;
                reread_once_if_torn(|| read_interrupts(fs, model))
            } else {
                read_small(&mut self.fs, src, snap)
            };
            match read {
                Ok(()) => {
                    any = true;
                    if !self.read.contains(&src) {
                        self.read.push(src);
                    }
                }
                Err(ReadStop::Io(e)) if self.read.contains(&src) => {
                    return Err(gone(&self.fs, src, &e));
                }
                Err(e) => {
                    let why = missing_reason(&self.fs, src, e)?;
                    if !self.missing.iter().any(|(s, _)| *s == src) {
                        self.missing.push((src, why));
                    }
                    clear(snap, src);
                }
            }
        }
        if any {
            Ok(())
        } else {
            Err(nothing_readable(&self.fs).0)
        }
    }
}

/// What [`read_once`] read besides the interrupt rows it handed out.
pub struct OnceRead {
    /// `/proc/softirqs` and `/proc/stat` (`None` when missing);
    /// `interrupts` is always `None` (its rows went to the caller).
    pub snap: Snapshot,
    /// The CPU ids of `/proc/interrupts`' header, `None` when the file
    /// could not be read.
    pub interrupt_cpus: Option<Vec<u32>>,
    /// The first count of `/proc/interrupts` out of the kernel's range,
    /// as `PATH:LINE: what` (a note, not an error).
    pub range_note: Option<String>,
}

/// One snapshot (counts since boot, no timestamps) of `fs`'s root for a
/// single look (`show`): `/proc/interrupts` streamed line by line through
/// one reused buffer and one scratch row, each row `filter` keeps handed
/// to `row` with the header's CPU ids and its counts, read into `counts`
/// (`Vec<u64>`, or a sink that formats them as read: see
/// `irqlab_core::interrupts::LineParser::line_into`; the row's own are
/// left empty; a row `--irq`'s literals rule out
/// is not even parsed: [`Prefilter`]); then `/proc/softirqs` and
/// `/proc/stat` whole. The rules are [`StatFiles::sample`]'s: a file
/// that cannot be opened is pushed to `missing` (file order, with the
/// reason) and skipped; a parse error (naming the file and line), a
/// refused file (special, endless) or an error of `row` fails the read;
/// so does a root where none of the three files is readable; a read torn
/// by hotplug is the error [`TornRead`] (the rows before the torn one
/// were handed out: the caller starts over, [`read_again_if_torn`]). `missing`
/// is filled even when the read then fails, so that the caller can say
/// which files were absent before the error (left empty when the root is
/// not a directory: the error says so).
pub fn read_once<S: CountSink>(
    fs: &mut HostFs,
    filter: &Filter,
    missing: &mut Vec<(StatFile, String)>,
    counts: &mut S,
    row: impl FnMut(&[u32], &mut IrqRow, &mut S) -> std::io::Result<()>,
) -> anyhow::Result<OnceRead> {
    let mut lp = LineParser::new();
    let mut out = OnceRead {
        snap: Snapshot::default(),
        interrupt_cpus: None,
        range_note: None,
    };
    let streamed = stream_rows(fs, filter, &mut lp, counts, row);
    // a single look: the descriptor and its stream buffer are not
    // needed again (freed before the other files are read)
    fs.forget(StatFile::Interrupts.rel());
    match streamed {
        Ok(()) => {
            out.interrupt_cpus = Some(lp.cpus().to_vec());
            out.range_note = lp.note().map(|note| {
                let path = fs.path(StatFile::Interrupts.rel());
                super::located(&path, note).to_string()
            });
        }
        Err(ReadStop::Parse(e)) if is_torn(&e) => {
            let path = fs.path(StatFile::Interrupts.rel());
            return Err(TornRead(located(&path, &e).to_string()).into());
        }
        Err(e) => missing.push((
            StatFile::Interrupts,
            missing_reason(fs, StatFile::Interrupts, e)?,
        )),
    }
    for src in [StatFile::Softirqs, StatFile::Stat] {
        if let Err(e) = read_small(fs, src, &mut out.snap) {
            missing.push((src, missing_reason(fs, src, e)?));
            clear(&mut out.snap, src);
        }
    }
    if out.interrupt_cpus.is_none() && out.snap.softirqs.is_none() && out.snap.stat.is_none() {
        let (e, not_a_directory) = nothing_readable(fs);
        if not_a_directory {
            // each file's note would say "Not a directory" once more
            missing.clear();
        }
        return Err(e);
    }
    Ok(out)
}

/// From this many CPUs in `/proc/interrupts`' header, a single look puts
/// the rest of the process's heap on a huge page
/// (`alloc::heap_on_huge_page`): the file then has some 5 MB or more,
/// and what show holds of it and builds faults in hundreds of pages
/// (1152 CPUs × 1056 IRQs: ~440 → ~110 page faults and 0.4–0.6 ms less
/// CPU for show json; BENCHMARKS.md, session 32).
const HUGE_HEAP_CPUS: usize = 512;

/// The rest of the heap on a huge page when the header lists `cpus` ≥
/// [`HUGE_HEAP_CPUS`] and the running kernel's huge page mode is not
/// `[never]` (`MADV_COLLAPSE` would make one even then, and an
/// administrator's `never` is kept). The mode is read at `/` whatever
/// the shown tree: the pages are this process's, on this kernel.
fn heap_for_a_large_machine(cpus: usize) {
    if cpus < HUGE_HEAP_CPUS {
        return;
    }
    let mut buf = Vec::new();
    let allowed = HostFs::new("/")
        .read_once_text(paths::THP_ENABLED, &mut buf)
        .is_ok_and(|mode| !mode.windows(7).any(|w| w == b"[never]"));
    if allowed {
        crate::alloc::heap_on_huge_page();
    }
}

/// The rows of `/proc/interrupts` that `filter` keeps, to `row` (see
/// [`read_once`]).
fn stream_rows<S: CountSink>(
    fs: &mut HostFs,
    filter: &Filter,
    lp: &mut LineParser,
    counts: &mut S,
    mut row: impl FnMut(&[u32], &mut IrqRow, &mut S) -> std::io::Result<()>,
) -> Result<(), ReadStop> {
    let mut scratch = IrqRow::default();
    // `--irq` before the counts: a row whose text holds none of the
    // pattern's literals is dropped unparsed
    let pre = filter
        .irq
        .as_ref()
        .and_then(|re| Prefilter::new(re.as_str()));
    fs.read_lines(StatFile::Interrupts.rel(), |line| {
        if !lp.has_header() {
            lp.line_into(line, &mut scratch, counts)
                .map_err(ReadStop::Parse)?;
            heap_for_a_large_machine(lp.cpus().len());
            return Ok(());
        }
        if pre.as_ref().is_some_and(|p| !p.may_match(line)) {
            return lp.skip_line(line).map_err(ReadStop::Parse);
        }
        // without `--irq` every row is kept (no fields gathered to say so)
        if lp
            .line_into(line, &mut scratch, counts)
            .map_err(ReadStop::Parse)?
            && (filter.irq.is_none() || filter.keep_irq_row(&scratch))
        {
            row(lp.cpus(), &mut scratch, counts).map_err(ReadStop::Row)?;
        }
        Ok(())
    })?;
    lp.finish().map_err(ReadStop::Parse)
}

/// Why reading one statistics file stopped.
enum ReadStop {
    /// The file could not be read (absent, unreadable, refused).
    Io(std::io::Error),
    /// Its text is not what the kernel writes.
    Parse(ParseError),
    /// The caller's row callback failed ([`read_once`]).
    Row(std::io::Error),
}

impl From<std::io::Error> for ReadStop {
    fn from(e: std::io::Error) -> Self {
        ReadStop::Io(e)
    }
}

/// Why `src` is missing (its read stopped on an absent or unreadable
/// file), or the error that fails the whole read: a parse error (with
/// the real path and line), a refusal (a special or endless file is a
/// broken tree, not an absent source) or a failed row callback.
fn missing_reason(fs: &HostFs, src: StatFile, e: ReadStop) -> anyhow::Result<String> {
    match e {
        ReadStop::Parse(e) => Err(located(&fs.path(src.rel()), &e)),
        ReadStop::Io(e) if crate::host::is_refusal(&e) => Err(e.into()),
        ReadStop::Io(e) => Ok(e.to_string()),
        ReadStop::Row(e) => Err(e.into()),
    }
}

/// The error of `src`, read by an earlier sample, that cannot be read now
/// (`e`): named by its path once (the gateway names a failed read of a
/// kept file, not a failed open).
fn gone(fs: &HostFs, src: StatFile, e: &std::io::Error) -> anyhow::Error {
    let path = fs.path(src.rel()).display().to_string();
    let why = e.to_string();
    if why.starts_with(&path) {
        anyhow!("{why} (read by an earlier sample)")
    } else {
        anyhow!("{path}: {why} (read by an earlier sample)")
    }
}

/// The error of a root where no statistics file is readable, from one
/// `stat` of the root: a root that is not a directory is said to be one
/// (`--root FILE: not a directory`, as `restore` says; then `true`).
fn nothing_readable(fs: &HostFs) -> (anyhow::Error, bool) {
    match fs.check_root() {
        Err(RootError::NotADirectory(e)) => (e, true),
        Ok(()) | Err(RootError::Stat(_)) => (
            anyhow!(
                "nothing readable under {}: no proc/interrupts, proc/softirqs or proc/stat",
                fs.root().display()
            ),
            false,
        ),
    }
}

/// Re-parse `/proc/interrupts` into `model` line by line as it is read
/// (kept descriptor, buffer of about `host::STREAM_CHUNK`).
fn read_interrupts(fs: &mut HostFs, model: &mut Interrupts) -> Result<(), ReadStop> {
    let mut refill = model.refill();
    fs.read_lines(StatFile::Interrupts.rel(), |line| {
        refill.line(line).map_err(ReadStop::Parse)
    })?;
    refill.finish().map_err(ReadStop::Parse)
}

/// `read()`, and once more at once if it stopped on a row whose number of
/// counts is not the header's: the kernel prints the header and each row
/// of `/proc/interrupts` over the CPUs online at that moment, so a CPU
/// going on or offline during a read tears it that way. The re-read
/// (with the hotplug over) gives the sample; the delta then shows the
/// hotplug as a gap. A file torn the same way twice is the error.
fn reread_once_if_torn(mut read: impl FnMut() -> Result<(), ReadStop>) -> Result<(), ReadStop> {
    match read() {
        Err(ReadStop::Parse(e)) if is_torn(&e) => read(),
        r => r,
    }
}

/// Whether `e` is the mark of a `/proc/interrupts` read torn by hotplug:
/// a row whose number of counts is not the header's.
fn is_torn(e: &ParseError) -> bool {
    matches!(e.kind, ErrorKind::CountMismatch { .. })
}

/// The error of a [`read_once`] that stopped on a `/proc/interrupts` row
/// torn by CPU hotplug ([`reread_once_if_torn`]): its text is the parse
/// error's, naming the file and line.
#[derive(Debug)]
pub struct TornRead(String);

impl std::fmt::Display for TornRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TornRead {}

/// `attempt()` (a single look through [`read_once`], with state of its
/// own), and once more at once if it failed on a read torn by hotplug
/// ([`TornRead`]): [`reread_once_if_torn`]'s rule for a caller that was
/// handed rows before the tear. Nothing is redone when the first read is
/// whole; a file torn twice is the error.
pub fn read_again_if_torn<T>(mut attempt: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
    match attempt() {
        Err(e) if e.is::<TornRead>() => attempt(),
        r => r,
    }
}

/// Read and parse `/proc/softirqs` or `/proc/stat` into `snap`: one
/// record each, so no read is spent to see EOF
/// ([`HostFs::read_record`]).
fn read_small(fs: &mut HostFs, src: StatFile, snap: &mut Snapshot) -> Result<(), ReadStop> {
    let bytes = fs.read_record(src.rel())?;
    parse_source(src, bytes, snap).map_err(ReadStop::Parse)
}

fn clear(snap: &mut Snapshot, src: StatFile) {
    match src {
        StatFile::Interrupts => snap.interrupts = None,
        StatFile::Softirqs => snap.softirqs = None,
        StatFile::Stat => snap.stat = None,
    }
}

fn parse_source(src: StatFile, bytes: &[u8], snap: &mut Snapshot) -> Result<(), ParseError> {
    match src {
        StatFile::Interrupts => snap
            .interrupts
            .get_or_insert_with(Interrupts::default)
            .parse_into(bytes),
        StatFile::Softirqs => snap
            .softirqs
            .get_or_insert_with(Default::default)
            .parse_into(bytes),
        // only `intr_total` of the `intr` line is used (its per-IRQ
        // values were a third of a JSON sample's parsing)
        StatFile::Stat => snap
            .stat
            .get_or_insert_with(Default::default)
            .parse_totals_into(bytes),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use irqlab_core::softirqs::Softirqs;
    use irqlab_core::stat::Stat;
    use std::path::Path;

    const IRQS: &str = "           CPU0       CPU1       \n 24:          1          2  IO-APIC   5-edge      ACPI:Ged\nLOC:        100        200   Local timer interrupts\nLOCX:         3          4   Not the timer\nNMI:          0          0   Non-maskable interrupts\n";

    fn w(root: &Path, rel: &str, s: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    }

    /// `/proc/softirqs` and `/proc/stat` of `n` CPUs (both over one page
    /// from about 64 CPUs on).
    fn small_files(root: &Path, n: u32) {
        let mut soft = String::from("    ");
        for c in 0..n {
            soft += &format!("       CPU{c}");
        }
        soft.push('\n');
        for name in [
            "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
            "RCU",
        ] {
            soft += &format!("{name:>9}:");
            for c in 0..n {
                soft += &format!(" {:>10}", c * 7 + 1);
            }
            soft.push('\n');
        }
        w(root, "proc/softirqs", &soft);
        let mut stat = String::from("cpu  10 0 20 30 4 5 6 0 0 0\n");
        for c in 0..n {
            stat += &format!("cpu{c} 1 0 2 3 {c} 0 0 0 0 0\n");
        }
        stat += "intr 0\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n";
        w(root, "proc/stat", &stat);
    }

    #[test]
    fn a_read_torn_by_hotplug_is_read_again_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let good = "           CPU0       CPU1       \n 24:          1          2  IO-APIC   5-edge      ACPI:Ged\n";
        // CPU1 went offline between the header and the row
        let torn =
            "           CPU0       CPU1       \n 24:          1  IO-APIC   5-edge      ACPI:Ged\n";
        let mut fs = HostFs::new(root);
        let mut m = Interrupts::default();
        let mut reads = 0;
        let r = reread_once_if_torn(|| {
            reads += 1;
            w(
                root,
                "proc/interrupts",
                if reads == 1 { torn } else { good },
            );
            read_interrupts(&mut fs, &mut m)
        });
        assert!(r.is_ok());
        assert_eq!(reads, 2);
        assert_eq!(m.rows().len(), 1);
        assert_eq!(m.rows()[0].counts.as_slice(), [1, 2]);

        // torn twice: the error, after one re-read only
        let mut reads = 0;
        let r = reread_once_if_torn(|| {
            reads += 1;
            w(root, "proc/interrupts", torn);
            read_interrupts(&mut fs, &mut m)
        });
        assert!(matches!(
            r,
            Err(ReadStop::Parse(ParseError {
                kind: ErrorKind::CountMismatch { .. },
                ..
            }))
        ));
        assert_eq!(reads, 2);

        // any other parse error is not read again
        let mut reads = 0;
        let r = reread_once_if_torn(|| {
            reads += 1;
            w(root, "proc/interrupts", "garbage\n");
            read_interrupts(&mut fs, &mut m)
        });
        assert!(matches!(r, Err(ReadStop::Parse(_))));
        assert_eq!(reads, 1);
    }

    #[test]
    fn a_file_torn_at_every_read_still_fails_the_sample() {
        // a file that stays torn still fails the sample, naming file and line
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        small_files(root, 2);
        w(
            root,
            "proc/interrupts",
            "           CPU0       CPU1       \n 24:          1  IO-APIC   5-edge      ACPI:Ged\n",
        );
        let mut files = StatFiles::new(HostFs::new(root), &[StatFile::Interrupts]);
        let mut snap = Snapshot::default();
        let e = files.sample(&mut snap).unwrap_err().to_string();
        assert!(
            e.contains("proc/interrupts:2: expected 2 per-CPU counts"),
            "{e}"
        );
    }

    #[test]
    fn a_single_look_torn_by_hotplug_is_read_again_with_its_rows_anew() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let good = "           CPU0       CPU1       \n 24:          1          2  IO-APIC   5-edge      ACPI:Ged\n 25:          3          4  IO-APIC   6-edge      i8042\n";
        // CPU1 went offline before the second row: the first was handed out
        let torn = "           CPU0       CPU1       \n 24:          1          2  IO-APIC   5-edge      ACPI:Ged\n 25:          3  IO-APIC   6-edge      i8042\n";
        let mut reads = 0;
        let mut attempt = |text: &str| {
            reads += 1;
            w(root, "proc/interrupts", text);
            let mut seen = Vec::new();
            let mut missing = Vec::new();
            read_once(
                &mut HostFs::new(root),
                &Filter::default(),
                &mut missing,
                &mut Vec::new(),
                |_, r, _| {
                    seen.push(r.label.to_string());
                    Ok(())
                },
            )
            .map(|_| (seen, missing))
        };
        let e = attempt(torn).err().unwrap();
        assert!(e.is::<TornRead>());
        let path = root.join("proc/interrupts");
        let want = format!("{}:3: expected 2 per-CPU counts", path.display());
        assert!(e.to_string().starts_with(&want), "{e}");
        let mut n = 0;
        let (seen, missing) = read_again_if_torn(|| {
            n += 1;
            attempt(if n == 1 { torn } else { good })
        })
        .unwrap();
        assert_eq!((n, seen), (2, vec!["24".to_string(), "25".to_string()]));
        assert_eq!(missing.len(), 2, "softirqs and stat: {missing:?}");
        // torn twice: the error, after one more read only
        let mut n = 0;
        let e = read_again_if_torn(|| {
            n += 1;
            attempt(torn)
        })
        .err()
        .unwrap();
        assert!(e.is::<TornRead>() && n == 2, "{e}");
        // any other error is not read again
        let mut n = 0;
        let e = read_again_if_torn(|| {
            n += 1;
            attempt("garbage\n")
        })
        .err()
        .unwrap();
        assert!(!e.is::<TornRead>() && n == 1, "{e}");
    }

    fn labels(root: &Path, filter: &Filter) -> Vec<String> {
        let mut fs = HostFs::new(root);
        let mut seen = Vec::new();
        read_once(
            &mut fs,
            filter,
            &mut Vec::new(),
            &mut Vec::new(),
            |cpus, r, _| {
                assert_eq!(cpus, [0, 1]);
                seen.push(r.label.to_string());
                Ok(())
            },
        )
        .unwrap();
        seen
    }

    #[test]
    fn show_reads_softirqs_and_stat_as_the_live_sampler_does() {
        // the two copies read these files differently (whole file to EOF
        // vs one record); one rule now, checked on files over one page
        let d = tempfile::tempdir().unwrap();
        w(d.path(), "proc/interrupts", IRQS);
        small_files(d.path(), 300);
        let once = read_once(
            &mut HostFs::new(d.path()),
            &Filter::default(),
            &mut Vec::new(),
            &mut Vec::new(),
            |_, _, _| Ok(()),
        )
        .unwrap();
        let mut files = StatFiles::new(HostFs::new(d.path()), &StatFile::ALL);
        let mut snap = Snapshot::default();
        files.sample(&mut snap).unwrap();
        let soft = std::fs::read(d.path().join("proc/softirqs")).unwrap();
        let stat = std::fs::read(d.path().join("proc/stat")).unwrap();
        assert!(soft.len() > 4096 && stat.len() > 4096);
        let json = |s: &Option<Softirqs>| serde_json::to_string(s).unwrap();
        assert_eq!(
            json(&once.snap.softirqs),
            json(&Some(Softirqs::parse(&soft).unwrap()))
        );
        let mut totals = Stat::default();
        totals.parse_totals_into(&stat).unwrap();
        assert_eq!(once.snap.stat, Some(totals));
        assert_eq!(json(&once.snap.softirqs), json(&snap.softirqs));
        assert_eq!(once.snap.stat, snap.stat);
        assert_eq!(once.interrupt_cpus, Some(vec![0, 1]));
        assert!(once.snap.interrupts.is_none());
    }

    #[test]
    fn show_gets_only_the_rows_the_filter_keeps() {
        let d = tempfile::tempdir().unwrap();
        w(d.path(), "proc/interrupts", IRQS);
        assert_eq!(
            labels(d.path(), &Filter::default()),
            ["24", "LOC", "LOCX", "NMI"]
        );
        // `LOCX` passes the prefilter's literal `LOC`, not the regex
        let exact = Filter::from_flags(Some("^LOC$"), None).unwrap();
        assert_eq!(labels(d.path(), &exact), ["LOC"]);
        let chip = Filter::from_flags(Some("IO-APIC"), None).unwrap();
        assert_eq!(labels(d.path(), &chip), ["24"]);
    }

    /// The error of a `read_once` under `root` that must fail, and the
    /// files it found missing.
    fn read_once_error(root: &std::path::Path) -> (String, Vec<(StatFile, String)>) {
        let mut missing = Vec::new();
        let e = read_once(
            &mut HostFs::new(root),
            &Filter::default(),
            &mut missing,
            &mut Vec::new(),
            |_, _, _| Ok(()),
        )
        .err()
        .unwrap()
        .to_string();
        (e, missing)
    }

    #[test]
    fn show_lists_missing_files_even_when_the_read_then_fails() {
        let d = tempfile::tempdir().unwrap();
        w(d.path(), "proc/stat", "cpu  1 2 x\n");
        let (e, missing) = read_once_error(d.path());
        let stat = d.path().join("proc/stat");
        assert!(e.starts_with(&format!("{}:1:", stat.display())), "{e}");
        let srcs: Vec<StatFile> = missing.iter().map(|(s, _)| *s).collect();
        assert_eq!(srcs, [StatFile::Interrupts, StatFile::Softirqs]);
    }

    #[test]
    fn a_parse_error_in_show_names_the_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        w(
            d.path(),
            "proc/interrupts",
            "           CPU0       CPU1\nLOC:        100        200   Local timer interrupts\nnot a row\n",
        );
        small_files(d.path(), 2);
        let (e, missing) = read_once_error(d.path());
        let path = d.path().join("proc/interrupts");
        assert!(e.starts_with(&format!("{}:3:", path.display())), "{e}");
        assert!(missing.is_empty());
    }

    #[test]
    fn a_failed_row_of_show_fails_the_read_rather_than_hiding_the_file() {
        let d = tempfile::tempdir().unwrap();
        w(d.path(), "proc/interrupts", IRQS);
        small_files(d.path(), 2);
        let mut missing = Vec::new();
        let e = read_once(
            &mut HostFs::new(d.path()),
            &Filter::default(),
            &mut missing,
            &mut Vec::new(),
            |_, _, _| Err(std::io::Error::other("out of room")),
        )
        .err()
        .unwrap();
        assert_eq!(e.to_string(), "out of room");
        assert!(missing.is_empty());
    }

    #[test]
    fn nothing_readable_is_one_rule_for_show_and_the_live_sampler() {
        let d = tempfile::tempdir().unwrap();
        let (once, missing) = read_once_error(d.path());
        let mut files = StatFiles::new(HostFs::new(d.path()), &StatFile::ALL);
        let live = files
            .sample(&mut Snapshot::default())
            .unwrap_err()
            .to_string();
        assert_eq!(once, live);
        assert!(once.starts_with("nothing readable under"), "{once}");
        assert_eq!(missing.len(), 3);
        assert_eq!(files.missing.len(), 3);
    }

    #[test]
    fn a_root_that_is_a_file_is_not_a_directory_for_show_and_the_live_sampler() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("file");
        std::fs::write(&file, "").unwrap();
        let (once, missing) = read_once_error(&file);
        let mut files = StatFiles::new(HostFs::new(&file), &StatFile::ALL);
        let live = files
            .sample(&mut Snapshot::default())
            .unwrap_err()
            .to_string();
        assert_eq!(once, format!("--root {}: not a directory", file.display()));
        assert_eq!(once, live);
        assert!(missing.is_empty(), "{missing:?}");
    }
}
