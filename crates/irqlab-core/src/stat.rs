//! `/proc/stat`: model and parser.
//!
//! Owns [`Stat`]: the aggregate and per-CPU time lines (however many fields
//! the kernel prints), `intr`, `ctxt`, `btime`, `processes`,
//! `procs_running`, `procs_blocked` and `softirq`, and [`CpuTimes`] with the
//! accessors irq%/softirq% are computed from. Unknown lines (`page`, `swap`
//! on old kernels) are skipped. No I/O, no panics, no rates (those belong to
//! the delta module): malformed input yields a [`ParseError`].

pub(crate) mod digits;

use crate::error::{ErrorKind, ParseError};
use crate::scan::{check_line, lines, next_token, read_u64s, scan_u64, token_u64, Scan};
use serde::Serialize;

/// Name used in errors for this file.
pub const FILE: &str = crate::paths::shown::PROC_STAT;

/// Longest line accepted (4 MiB ≈ 380 000 `intr` values of 10 digits).
pub const MAX_LINE: usize = 4 << 20;

/// Field names of a `cpu` line, in kernel order (older kernels print fewer).
pub const CPU_FIELDS: [&str; 10] = [
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
];

/// Fewest fields a `cpu` line has ever had (user nice system idle).
const MIN_CPU_FIELDS: usize = 4;

/// One `cpu`/`cpuN` line: times in USER_HZ ticks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuTimes {
    /// `None` for the aggregate `cpu` line, else the CPU id.
    pub cpu: Option<u32>,
    /// Values in [`CPU_FIELDS`] order, as many as printed.
    pub fields: Vec<u64>,
}

impl CpuTimes {
    /// A field by its [`CPU_FIELDS`] name (`"softirq"`); `None` if the name
    /// is unknown or the kernel did not print it.
    pub fn get(&self, field: &str) -> Option<u64> {
        let i = CPU_FIELDS.iter().position(|&f| f == field)?;
        self.fields.get(i).copied()
    }

    fn at(&self, i: usize) -> u64 {
        self.fields.get(i).copied().unwrap_or(0)
    }

    /// Idle time (`idle`).
    pub fn idle(&self) -> u64 {
        self.at(3)
    }

    /// I/O-wait time (0 if not printed).
    pub fn iowait(&self) -> u64 {
        self.at(4)
    }

    /// Hard-interrupt time (0 if not printed; ≈0 without
    /// `CONFIG_IRQ_TIME_ACCOUNTING`).
    pub fn irq(&self) -> u64 {
        self.at(5)
    }

    /// Softirq time (0 if not printed).
    pub fn softirq(&self) -> u64 {
        self.at(6)
    }

    /// Steal time (0 if not printed).
    pub fn steal(&self) -> u64 {
        self.at(7)
    }

    /// All accounted time: user … steal. `guest`/`guest_nice` are already
    /// included in `user`/`nice` and are not added again; fields beyond
    /// `guest_nice` (future kernels) are not counted.
    pub fn total(&self) -> u64 {
        self.fields
            .iter()
            .take(8)
            .fold(0u64, |a, &v| a.saturating_add(v))
    }

    /// Non-idle time: [`total`](Self::total) minus `idle` and `iowait`.
    pub fn busy(&self) -> u64 {
        self.total()
            .saturating_sub(self.idle())
            .saturating_sub(self.iowait())
    }
}

/// A parsed `/proc/stat`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stat {
    /// The aggregate `cpu` line (sum over possible CPUs).
    pub total: CpuTimes,
    /// `cpuN` lines (online CPUs only; gaps possible).
    pub cpus: Vec<CpuTimes>,
    /// First value of the `intr` line (not the sum of the rest).
    pub intr_total: u64,
    /// Per-IRQ-number values of the `intr` line (index = IRQ number);
    /// empty, and `intr_per_irq` false, after `parse_totals_into`.
    pub intr: Vec<u64>,
    /// Whether `intr` holds the line's per-IRQ values (false after
    /// `parse_totals_into`, which does not read them: an empty `intr` is
    /// then no statement about the IRQs).
    #[serde(skip)]
    pub intr_per_irq: bool,
    pub ctxt: Option<u64>,
    pub btime: Option<u64>,
    pub processes: Option<u64>,
    pub procs_running: Option<u64>,
    pub procs_blocked: Option<u64>,
    /// First value of the `softirq` line.
    pub softirq_total: Option<u64>,
    /// Per-vector values of the `softirq` line (HI … RCU).
    pub softirq: Vec<u64>,
}

impl Stat {
    /// Parse a complete `/proc/stat` text.
    ///
    /// ```
    /// let text = b"cpu  3457 0 2482 40460 328 0 74 511 0 0\ncpu0 3457 0 2482 40460 328 0 74 511 0 0\nintr 99 1 2 3\nctxt 42\nsoftirq 9 1 8\n";
    /// let st = irqlab_core::stat::Stat::parse(text).unwrap();
    /// assert_eq!(st.total.get("softirq"), Some(74));
    /// assert_eq!(st.cpus[0].cpu, Some(0));
    /// assert_eq!((st.intr_total, st.intr.as_slice()), (99, &[1, 2, 3][..]));
    /// assert_eq!(st.ctxt, Some(42));
    /// assert_eq!(st.total.busy(), 3457 + 2482 + 74 + 511);
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let mut out = Stat::default();
        out.parse_into(bytes)?;
        Ok(out)
    }

    /// Re-parse `bytes` into `self`, reusing every vector. In the steady
    /// state (same shape of file) this allocates nothing. On error the model
    /// holds whatever was parsed before the bad line; do not use it.
    pub fn parse_into(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        self.parse_with(bytes, Intr::PerIrq)
    }

    /// [`parse_into`](Self::parse_into) for readers that use only
    /// [`intr_total`](Self::intr_total): the per-IRQ values of the `intr`
    /// line (one per IRQ number, most of the file) are neither read nor
    /// checked, and [`intr`](Self::intr) is left empty. Every other line
    /// is parsed and checked as by `parse_into`; where that succeeds, this
    /// yields the same model but for `intr`.
    pub fn parse_totals_into(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        self.parse_with(bytes, Intr::TotalOnly)
    }

    fn parse_with(&mut self, bytes: &[u8], intr: Intr) -> Result<(), ParseError> {
        self.reset();
        self.intr_per_irq = matches!(intr, Intr::PerIrq);
        let mut lines_read = LinesRead::default();
        let res = self.parse_lines(bytes, intr, &mut lines_read);
        let LinesRead {
            ncpus,
            fell,
            saw_cpu,
        } = lines_read;
        // a repeated cpuN line above the error (or the end) first
        if fell {
            if let Some(e) = self.first_repeat(bytes, ncpus) {
                return Err(e);
            }
        }
        res?;
        self.cpus.truncate(ncpus);
        if !saw_cpu {
            return Err(ParseError::new(
                FILE,
                0,
                ErrorKind::Malformed("no `cpu` line found"),
            ));
        }
        Ok(())
    }

    /// The lines of `bytes` up to the end or the first error, without the
    /// duplicate-CPU check, which needs the ids only when one fell:
    /// `first_repeat` then, over the ids in `read.ncpus`.
    fn parse_lines(
        &mut self,
        bytes: &[u8],
        intr: Intr,
        read: &mut LinesRead,
    ) -> Result<(), ParseError> {
        for (n, line) in lines(bytes) {
            check_line(FILE, MAX_LINE, n, line)?;
            let at = |k| ParseError::new(FILE, n, k);
            let Some((s, e)) = key_span(line) else {
                continue;
            };
            let key = line.get(s..e).unwrap_or_default();
            if key == b"cpu" {
                read.saw_cpu = true;
                parse_cpu(line, e, None, &mut self.total).map_err(at)?;
            } else if let Some(id) = cpu_id(key) {
                let ncpus = read.ncpus;
                // ids rise in the kernel's file
                read.fell |= ncpus
                    .checked_sub(1)
                    .and_then(|i| self.cpus.get(i))
                    .is_some_and(|c| c.cpu.is_none_or(|p| id <= p));
                if ncpus == self.cpus.len() {
                    // room for every field the kernel prints: no regrowth
                    // per line on a 1152-CPU file
                    self.cpus.push(CpuTimes {
                        cpu: None,
                        fields: Vec::with_capacity(CPU_FIELDS.len()),
                    });
                }
                // counted before its values are read: a damaged line's
                // id is checked too (a repeat is its error)
                read.ncpus += 1;
                if let Some(c) = self.cpus.get_mut(ncpus) {
                    c.cpu = Some(id);
                    parse_cpu(line, e, Some(id), c).map_err(at)?;
                }
            } else {
                self.parse_other(key, line, e, intr).map_err(at)?;
            }
        }
        Ok(())
    }

    /// The error of the first `cpuN` line (of the first `ncpus`) whose CPU
    /// has a line above it, if any: each id's lines in order after one
    /// sort, not a search of the lines above each one; then `bytes` read
    /// again for that line's number (an error path: the parse keeps no
    /// line numbers).
    #[cold]
    #[inline(never)]
    fn first_repeat(&self, bytes: &[u8], ncpus: usize) -> Option<ParseError> {
        let seen = self.cpus.get(..ncpus).unwrap_or_default();
        let second = crate::scan::first_repeat_at(seen.iter().map(|c| c.cpu))?;
        let cpu = seen.get(second)?.cpu?;
        let line = lines(bytes)
            .filter(|(_, l)| {
                key_span(l).is_some_and(|(s, e)| l.get(s..e).and_then(cpu_id).is_some())
            })
            .nth(second)
            .map_or(0, |(n, _)| n);
        Some(ParseError::new(
            FILE,
            line,
            ErrorKind::DuplicateCpu {
                cpu,
                in_header: false,
            },
        ))
    }

    /// Whether `self` is the default `Stat` (`== Stat::default()`, what
    /// the delta functions take for "since boot"), field by field without
    /// building one.
    pub fn is_default(&self) -> bool {
        let Stat {
            total,
            cpus,
            intr_total,
            intr,
            intr_per_irq,
            ctxt,
            btime,
            processes,
            procs_running,
            procs_blocked,
            softirq_total,
            softirq,
        } = self;
        total.cpu.is_none()
            && total.fields.is_empty()
            && cpus.is_empty()
            && *intr_total == 0
            && intr.is_empty()
            && !intr_per_irq
            && ctxt.is_none()
            && btime.is_none()
            && processes.is_none()
            && procs_running.is_none()
            && procs_blocked.is_none()
            && softirq_total.is_none()
            && softirq.is_empty()
    }

    /// The `cpuN` line of CPU `id`, if that CPU is online.
    pub fn cpu(&self, id: u32) -> Option<&CpuTimes> {
        self.cpus.iter().find(|c| c.cpu == Some(id))
    }

    fn reset(&mut self) {
        self.total.cpu = None;
        self.total.fields.clear();
        self.intr_total = 0;
        self.intr.clear();
        self.ctxt = None;
        self.btime = None;
        self.processes = None;
        self.procs_running = None;
        self.procs_blocked = None;
        self.softirq_total = None;
        self.softirq.clear();
    }

    /// Lines other than `cpu*`: known keys are parsed, unknown ones skipped.
    fn parse_other(
        &mut self,
        key: &[u8],
        line: &[u8],
        pos: usize,
        intr: Intr,
    ) -> Result<(), ErrorKind> {
        match key {
            b"intr" => {
                let (total, rest) = first_value(line, pos, "the `intr` total")?;
                self.intr_total = total;
                match intr {
                    Intr::PerIrq => read_u64s(line, rest, &mut self.intr, "a per-IRQ `intr` value"),
                    Intr::TotalOnly => Ok(()),
                }
            }
            b"softirq" => {
                let (total, rest) = first_value(line, pos, "the `softirq` total")?;
                self.softirq_total = Some(total);
                counts(
                    line,
                    rest,
                    &mut self.softirq,
                    "a per-vector `softirq` value",
                )
            }
            b"ctxt" => single(line, pos, "the `ctxt` value", &mut self.ctxt),
            b"btime" => single(line, pos, "the `btime` value", &mut self.btime),
            b"processes" => single(line, pos, "the `processes` value", &mut self.processes),
            b"procs_running" => single(
                line,
                pos,
                "the `procs_running` value",
                &mut self.procs_running,
            ),
            b"procs_blocked" => single(
                line,
                pos,
                "the `procs_blocked` value",
                &mut self.procs_blocked,
            ),
            _ if key.iter().all(|c| c.is_ascii_graphic()) => Ok(()),
            _ => Err(ErrorKind::NotText),
        }
    }
}

/// What `Stat::parse_lines` saw, kept on an error too.
#[derive(Default)]
struct LinesRead {
    /// `cpuN` lines read (their ids are `Stat::cpus`' first ones).
    ncpus: usize,
    /// Whether a `cpuN` line's id did not rise over the one above.
    fell: bool,
    /// Whether the aggregate `cpu` line was read.
    saw_cpu: bool,
}

/// How much of the `intr` line a parse reads.
#[derive(Clone, Copy)]
enum Intr {
    /// The total and every per-IRQ value.
    PerIrq,
    /// The total only.
    TotalOnly,
}

/// The first token of `line` as `next_token(line, 0)` finds it: a key
/// at the start ended by a space or the end of the line is found a word
/// at a time; anything else by `next_token`.
#[inline]
fn key_span(line: &[u8]) -> Option<(usize, usize)> {
    match digits::spaced_token_end(line, 0) {
        Some(end) if end > 0 => Some((0, end)),
        _ => next_token(line, 0),
    }
}

/// `cpu17` → 17; anything else (`cpu`, `cpux`, `cpu1x`) → `None`.
fn cpu_id(key: &[u8]) -> Option<u32> {
    let digits = key.strip_prefix(b"cpu")?;
    match scan_u64(digits, 0) {
        Scan::Num(v, end) if end == digits.len() => u32::try_from(v).ok(),
        _ => None,
    }
}

fn parse_cpu(
    line: &[u8],
    pos: usize,
    cpu: Option<u32>,
    out: &mut CpuTimes,
) -> Result<(), ErrorKind> {
    out.cpu = cpu;
    out.fields.clear();
    counts(line, pos, &mut out.fields, "a cpu time value")?;
    if out.fields.len() < MIN_CPU_FIELDS {
        return Err(ErrorKind::Malformed(
            "expected at least 4 cpu time values (user nice system idle)",
        ));
    }
    Ok(())
}

/// Append the numbers from `pos` to the end of `line` to `out` as
/// [`read_u64s`] reads them: the kernel's form (short numbers after
/// spaces) a word at a time, anything else by `read_u64s`, which also
/// names a bad token.
fn counts(
    line: &[u8],
    pos: usize,
    out: &mut Vec<u64>,
    what: &'static str,
) -> Result<(), ErrorKind> {
    let mark = out.len();
    if digits::spaced_u64s(line, pos, out) {
        return Ok(());
    }
    out.truncate(mark);
    read_u64s(line, pos, out, what)
}

/// The first number after `pos` and the offset just past it.
#[inline]
fn first_value(line: &[u8], pos: usize, what: &'static str) -> Result<(u64, usize), ErrorKind> {
    // the kernel's form: one space, then a short number ending at a space
    // or at the end of the line
    if line.get(pos) == Some(&b' ') {
        if let Some((v, end)) = digits::number_at(line, pos + 1) {
            if matches!(line.get(end), None | Some(b' ')) {
                return Ok((v, end));
            }
        }
    }
    first_token_value(line, pos, what)
}

/// [`first_value`] of any form: the first whitespace-separated token,
/// which must be a number.
#[cold]
#[inline(never)]
fn first_token_value(
    line: &[u8],
    pos: usize,
    what: &'static str,
) -> Result<(u64, usize), ErrorKind> {
    let (s, e) = next_token(line, pos).ok_or_else(|| ErrorKind::ExpectedNumber {
        what,
        found: String::new(),
    })?;
    Ok((token_u64(line.get(s..e).unwrap_or_default(), what)?, e))
}

/// A `key value` line: exactly one number.
fn single(
    line: &[u8],
    pos: usize,
    what: &'static str,
    out: &mut Option<u64>,
) -> Result<(), ErrorKind> {
    let (v, rest) = first_value(line, pos, what)?;
    if let Some((s, e)) = next_token(line, rest) {
        let found = crate::scan::lossy_token(line.get(s..e).unwrap_or_default());
        return Err(ErrorKind::Invalid {
            what: "the end of the line after the value",
            found,
        });
    }
    *out = Some(v);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const VM: &[u8] = include_bytes!("../tests/fixtures/vm-2cpu-6.18/proc_stat");

    fn err(text: &[u8]) -> ParseError {
        match Stat::parse(text) {
            Err(e) => e,
            Ok(s) => panic!("expected an error, parsed {s:?}"),
        }
    }

    #[test]
    fn a_second_line_of_a_cpu_is_an_error() {
        let e = err(b"cpu  2 0 2 8\ncpu0 1 0 1 4\ncpu0 1 0 1 4\n");
        assert_eq!(e.line, 3);
        assert_eq!(
            e.kind,
            ErrorKind::DuplicateCpu {
                cpu: 0,
                in_header: false
            }
        );
        let e = err(b"cpu  3 0 3 9\ncpu0 1 0 1 4\ncpu2 1 0 1 4\ncpu0 1 0 1 4\n");
        assert_eq!(
            e.to_string(),
            "/proc/stat:4: duplicate cpu0 line (CPU0 has one above)"
        );
        let st = Stat::parse(b"cpu  2 0 2 8\ncpu1 1 0 1 4\ncpu0 1 0 1 4\n").unwrap();
        assert_eq!(st.cpus.len(), 2);
    }

    #[test]
    fn parses_vm_capture() {
        let st = Stat::parse(VM).unwrap();
        assert_eq!(st.total.fields.len(), 10);
        assert_eq!(st.cpus.len(), 2);
        assert_eq!(st.cpu(1).unwrap().cpu, Some(1));
        assert_eq!(st.total.get("user"), Some(10876));
        assert_eq!(st.total.get("softirq"), Some(37));
        assert_eq!(st.total.get("bogus"), None);
        // nr_irqs = 424 on this VM: one value per IRQ number.
        assert_eq!(st.intr.len(), 424);
        assert_eq!(st.intr_total, 140082);
        assert_eq!(st.softirq.len(), 10);
        assert_eq!(st.softirq_total, Some(st.softirq.iter().sum()));
        assert!(st.procs_running >= Some(1));
        for k in [st.ctxt, st.btime, st.processes, st.procs_blocked] {
            assert!(k.is_some());
        }
        let cpu_sum: u64 = st.cpus.iter().map(CpuTimes::total).sum();
        assert!(
            cpu_sum.abs_diff(st.total.total()) <= 4,
            "per-CPU sum ≈ aggregate"
        );
    }

    #[test]
    fn formats_md_case_24_and_accessors() {
        let t = b"cpu  3457 0 2482 40460 328 0 74 511 0 0\ncpu0 1 2 3 4\ncpu2 1 2 3 4 5 6 7 8 9 10 11 12\nintr 5 0 0 0\nprocs_running 1\n";
        let st = Stat::parse(t).unwrap();
        assert_eq!(st.total.irq(), 0);
        assert_eq!(st.total.softirq(), 74);
        assert_eq!(st.total.steal(), 511);
        assert_eq!(st.total.total(), 3457 + 2482 + 40460 + 328 + 74 + 511);
        assert_eq!(st.total.busy(), 3457 + 2482 + 74 + 511);
        // cpu1 offline: ids have a gap; old 4-field line; future 12-field line.
        assert_eq!(
            st.cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(),
            [Some(0), Some(2)]
        );
        assert_eq!(st.cpu(0).unwrap().get("iowait"), None);
        assert_eq!(st.cpu(0).unwrap().softirq(), 0);
        assert_eq!(st.cpu(2).unwrap().fields.len(), 12);
        assert_eq!(st.cpu(2).unwrap().total(), 36);
        assert_eq!(st.ctxt, None);
    }

    #[test]
    fn thousands_of_intr_values() {
        let mut t = b"cpu  1 2 3 4\nintr 123".to_vec();
        for i in 0..5000u32 {
            t.extend_from_slice(format!(" {}", i % 7).as_bytes());
        }
        t.push(b'\n');
        let st = Stat::parse(&t).unwrap();
        assert_eq!(st.intr.len(), 5000);
        assert_eq!(st.intr[4999], 4999 % 7);
    }

    #[test]
    fn unknown_lines_are_ignored() {
        let t = b"cpu  1 2 3 4\npage 5741 1808\nswap 1 0\ndisk_io: (3,0):(1,2,3,4,5)\nctxt 7\n";
        assert_eq!(Stat::parse(t).unwrap().ctxt, Some(7));
    }

    #[test]
    fn bad_known_lines_name_line_and_expectation() {
        let e = err(b"cpu  1 2 3 4\nctxt lots\n");
        assert_eq!((e.file, e.line), (FILE, 2));
        assert!(e.to_string().contains("`ctxt`"), "{e}");
        assert_eq!(err(b"cpu  1 2 3 4\nbtime\n").line, 2);
        assert_eq!(err(b"cpu  1 2 3 4\nprocesses 1 2\n").line, 2);
        assert_eq!(err(b"cpu  1 2 3 x\n").line, 1);
        assert_eq!(err(b"cpu  1 2 3\n").line, 1);
        assert_eq!(err(b"cpu  1 2 3 4\ncpu0 1 2 3 -4\n").line, 2);
        assert_eq!(err(b"cpu  1 2 3 4\nintr\n").line, 2);
        assert_eq!(err(b"cpu  1 2 3 4\nintr 1 2 3x\n").line, 2);
        assert_eq!(
            err(b"cpu  1 2 3 4\nsoftirq 1 99999999999999999999999\n").line,
            2
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert_eq!(err(b"").line, 0);
        assert_eq!(err(b"ctxt 5\n").line, 0); // no cpu line
        assert_eq!(err(b"\x00\xff\xfe\x01 garbage\n").line, 1);
        let cut = VM.windows(5).position(|w| w == b"ctxt ").unwrap() + 5;
        assert_eq!(
            err(&VM[..cut]).kind,
            ErrorKind::ExpectedNumber {
                what: "the `ctxt` value",
                found: String::new()
            }
        );
        let mut long = b"cpu  1 2 3 4\nintr".to_vec();
        long.resize(10 << 20, b' ');
        let e = err(&long);
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, ErrorKind::LineTooLong { .. }));
    }

    #[test]
    fn totals_only_parse_skips_per_irq_intr_values() {
        let full = Stat::parse(VM).unwrap();
        let mut st = Stat::parse(VM).unwrap();
        st.parse_totals_into(VM).unwrap();
        assert!(st.intr.is_empty() && !st.intr_per_irq && full.intr_per_irq);
        assert_eq!(st.intr_total, 140082);
        assert_eq!(
            st,
            Stat {
                intr: Vec::new(),
                intr_per_irq: false,
                ..full
            }
        );
        // every other line is still checked, the `intr` total too
        let mut e = Stat::default();
        for bad in [
            &b"cpu  1 2 3 4\nintr\n"[..],
            b"cpu  1 2 3 4\nintr x 1\n",
            b"cpu  1 2 3 4\nintr 1 2\nctxt lots\n",
            b"cpu  1 2 3\nintr 1 2\n",
            b"intr 1 2\n",
        ] {
            assert!(e.parse_totals_into(bad).is_err(), "{bad:?}");
        }
        // per-IRQ values are not read: a bad one is not seen
        e.parse_totals_into(b"cpu  1 2 3 4\nintr 7 1 2 3x\n")
            .unwrap();
        assert_eq!((e.intr_total, e.intr.len()), (7, 0));
    }

    /// A line of `/proc/stat` counts: the kernel's form (values after
    /// single spaces, some long), random bytes, or the kernel's form with
    /// one byte changed.
    fn random_counts_line(rng: &mut crate::rng::Rng, case: u32) -> Vec<u8> {
        let alphabet = b"0123456789 \t\r\n\x0b\x00\xffx-";
        let pick =
            |rng: &mut crate::rng::Rng| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize];
        let mut line = b"cpu7".to_vec();
        if case % 4 == 0 {
            line.extend((0..rng.next_u64() % 80).map(|_| pick(rng)));
            return line;
        }
        for _ in 0..rng.next_u64() % 14 {
            let v = match rng.next_u64() % 6 {
                0 => u64::MAX - rng.next_u64() % 2,
                1 => rng.next_u64() >> (rng.next_u64() % 64),
                2 => 0,
                _ => rng.next_u64() % 1_000_000,
            };
            let sep = if rng.next_u64() % 12 == 0 { "  " } else { " " };
            line.extend_from_slice(format!("{sep}{v}").as_bytes());
        }
        if case % 4 == 1 {
            let at = 4 + (rng.next_u64() as usize) % (line.len() - 3);
            line.insert(at, pick(rng));
        }
        line
    }

    #[test]
    fn counts_read_by_words_are_what_read_u64s_reads() {
        let mut rng = crate::rng::Rng::new(23);
        for case in 0..30_000 {
            let line = random_counts_line(&mut rng, case);
            let pos = if case % 5 == 0 {
                (rng.next_u64() as usize) % (line.len() + 2)
            } else {
                4
            };
            let (mut fast, mut slow) = (vec![9], vec![9]);
            let got = counts(&line, pos, &mut fast, "n");
            let want = read_u64s(&line, pos, &mut slow, "n");
            let shown = String::from_utf8_lossy(&line);
            assert_eq!(got, want, "{shown:?} from {pos}");
            if want.is_ok() {
                assert_eq!(fast, slow, "{shown:?} from {pos}");
            }
            assert_eq!(
                first_value(&line, pos, "n"),
                first_token_value(&line, pos, "n"),
                "{shown:?} from {pos}"
            );
        }
    }

    #[test]
    fn keys_found_by_words_are_the_first_tokens() {
        let mut rng = crate::rng::Rng::new(29);
        let alphabet = b"cpu_intrxs0123456789  \t\r\n\x0b\x00\xff";
        for case in 0..20_000 {
            let len = (rng.next_u64() % 30) as usize;
            let mut line: Vec<u8> = (0..len)
                .map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize])
                .collect();
            if case % 2 == 0 {
                let key = [
                    "cpu",
                    "cpu12",
                    "intr",
                    "softirq",
                    "processes",
                    "procs_running",
                ][case % 6];
                line.splice(0..0, format!("{key} ").bytes());
            }
            let shown = String::from_utf8_lossy(&line);
            assert_eq!(key_span(&line), next_token(&line, 0), "{shown:?}");
        }
    }

    #[test]
    fn damaged_cpu_lines_still_name_line_and_expectation() {
        for (bad, found) in [
            (&b"cpu  1 2 3 4\ncpu0 1 2 3 4x\n"[..], "4x"),
            (b"cpu  1 2 3 4\ncpu0 1 2\t3 -4\n", "-4"),
            (
                b"cpu  1 2 3 4\ncpu0 1 2 3 99999999999999999999x\n",
                "99999999999999999999x",
            ),
        ] {
            let e = err(bad);
            assert_eq!((e.file, e.line), (FILE, 2));
            assert_eq!(
                e.kind,
                ErrorKind::ExpectedNumber {
                    what: "a cpu time value",
                    found: found.into()
                }
            );
        }
        let e = err(b"cpu  1 2 3 4\nctxt 12 x\n");
        assert!(e.to_string().contains("the end of the line"), "{e}");
        let e = err(b"cpu  1 2 3 4\nsoftirq 1x 2\n");
        assert!(e.to_string().contains("`softirq` total"), "{e}");
    }

    /// A value of digits only that does not fit 64 bits is said to be
    /// too large, with file and line, on every kind of line (cpu time,
    /// `intr`, `softirq`, a single value, the first value of a line).
    #[test]
    fn a_value_beyond_64_bits_is_said_to_be_too_large() {
        let big = "18446744073709551616";
        for (bad, what) in [
            (
                format!("cpu  1 2 3 4\ncpu0 1 2 3 {big}\n"),
                "a cpu time value",
            ),
            (format!("cpu  1 2 3 {big}\n"), "a cpu time value"),
            (format!("cpu  1 2 3 4\nctxt {big}\n"), "the `ctxt` value"),
            (
                format!("cpu  1 2 3 4\nintr 5 1 {big}\n"),
                "a per-IRQ `intr` value",
            ),
            (
                format!("cpu  1 2 3 4\nsoftirq 1 {big} 2\n"),
                "a per-vector `softirq` value",
            ),
            (
                format!("cpu  1 2 3 4\nsoftirq {big} 2\n"),
                "the `softirq` total",
            ),
        ] {
            let e = err(bad.as_bytes());
            let ErrorKind::TooLarge { found, bits, .. } = &e.kind else {
                panic!("{bad:?}: {e:?}");
            };
            assert_eq!((found.as_str(), *bits), (big, 64), "{bad:?}");
            let line = bad.lines().count();
            assert_eq!(
                e.to_string(),
                format!(
                    "{FILE}:{line}: {what} exceeds the 64-bit range \
                     (at most 18446744073709551615), found \"{big}\""
                )
            );
        }
        // u64::MAX itself fits
        let max = format!("cpu  1 2 3 4\nctxt {}\n", u64::MAX);
        assert_eq!(Stat::parse(max.as_bytes()).unwrap().ctxt, Some(u64::MAX));
    }

    /// The parse with the plain duplicate check: each `cpuN` line's id
    /// searched among the ids of the lines above it, before its values
    /// are read (the reference the sorted check is held to).
    fn parse_by_search(bytes: &[u8]) -> Result<Stat, ParseError> {
        let mut st = Stat {
            intr_per_irq: true,
            ..Stat::default()
        };
        let mut saw_cpu = false;
        for (n, line) in lines(bytes) {
            check_line(FILE, MAX_LINE, n, line)?;
            let at = |k| ParseError::new(FILE, n, k);
            let Some((s, e)) = key_span(line) else {
                continue;
            };
            let key = &line[s..e];
            if key == b"cpu" {
                saw_cpu = true;
                parse_cpu(line, e, None, &mut st.total).map_err(at)?;
            } else if let Some(id) = cpu_id(key) {
                if st.cpus.iter().any(|c| c.cpu == Some(id)) {
                    return Err(at(ErrorKind::DuplicateCpu {
                        cpu: id,
                        in_header: false,
                    }));
                }
                let mut c = CpuTimes::default();
                parse_cpu(line, e, Some(id), &mut c).map_err(at)?;
                st.cpus.push(c);
            } else {
                st.parse_other(key, line, e, Intr::PerIrq).map_err(at)?;
            }
        }
        if !saw_cpu {
            return Err(ParseError::new(
                FILE,
                0,
                ErrorKind::Malformed("no `cpu` line found"),
            ));
        }
        Ok(st)
    }

    #[test]
    fn the_duplicate_cpu_check_is_a_search_of_the_lines_above() {
        let mut rng = crate::rng::Rng::new(31);
        let mut st = Stat::default();
        let (mut errors, mut repeats) = (0, 0);
        for case in 0..20_000 {
            let mut text = String::new();
            for _ in 0..rng.next_u64() % 12 {
                let id = rng.next_u64() % 16;
                let line = match rng.next_u64() % 40 {
                    0 => "cpu  4 3 2 1".to_string(),
                    1 => format!("cpu{id} 1 2"),
                    2 => format!("cpu{id} 1 x 3 4"),
                    3 => "intr 5 1 2".to_string(),
                    4 => "intr 5 1 x".to_string(),
                    5 => "ctxt 3 4".to_string(),
                    6 => "page 1 2".to_string(),
                    7 => String::new(),
                    _ => format!("cpu{id} 1 2 3 {case}"),
                };
                text.push_str(&line);
                text.push('\n');
            }
            if case % 8 != 0 {
                text.insert_str(0, "cpu  1 1 1 1\n");
            }
            let want = parse_by_search(text.as_bytes());
            // reused: a model holding the last case's cpu lines
            let got = st.parse_into(text.as_bytes()).map(|()| st.clone());
            errors += usize::from(want.is_err());
            repeats += usize::from(matches!(
                want,
                Err(ParseError {
                    kind: ErrorKind::DuplicateCpu { .. },
                    ..
                })
            ));
            assert_eq!(got, want, "{text}");
        }
        // both kinds of case, and many repeats among the errors
        assert!((3_000..17_000).contains(&errors), "{errors} errors");
        assert!(repeats > 2_000, "{repeats} repeats");
    }

    #[test]
    fn a_repeated_cpu_after_a_rise_is_found() {
        // cpu5 rises over cpu0: still a second line of CPU5
        let e = err(b"cpu  3 0 3 9\ncpu5 1 0 1 4\ncpu0 1 0 1 4\ncpu5 1 0 1 4\n");
        assert_eq!(
            e.to_string(),
            "/proc/stat:4: duplicate cpu5 line (CPU5 has one above)"
        );
        // the first repeat in file order, before a later line's error
        let e =
            err(b"cpu  3 0 3 9\ncpu3 1 0 1 4\ncpu1 1 0 1 4\ncpu1 1 0 1 4\ncpu3 1 0 1 4\nctxt x\n");
        assert_eq!(
            (e.line, e.to_string().contains("cpu1 line")),
            (4, true),
            "{e}"
        );
        // an earlier line's error before a later repeat
        let e = err(b"cpu  3 0 3 9\ncpu3 1 0 1 4\ncpu1 1 0 1 4\nctxt x\ncpu1 1 0 1 4\n");
        assert_eq!(e.line, 4, "{e}");
        // a repeated line that is also damaged: the repeat
        let e = err(b"cpu  3 0 3 9\ncpu3 1 0 1 4\ncpu3 1 0\n");
        assert_eq!(e.line, 3);
        assert!(
            matches!(e.kind, ErrorKind::DuplicateCpu { cpu: 3, .. }),
            "{e}"
        );
        // a repeat in a file without the aggregate line: the repeat
        let e = err(b"cpu3 1 0 1 4\ncpu3 1 0 1 4\n");
        assert_eq!(e.line, 2);
    }

    /// Falling ids on every line (each one different): a file the kernel
    /// does not write, read without a search of the lines above per line.
    /// 200 000 such lines take minutes by a search in a debug build.
    #[test]
    fn many_falling_cpu_lines_are_checked_once() {
        const N: u32 = 200_000;
        let mut text = b"cpu  1 1 1 1\n".to_vec();
        for id in (0..N).rev() {
            text.extend_from_slice(format!("cpu{id} 1 2 3 4\n").as_bytes());
        }
        let st = Stat::parse(&text).unwrap();
        assert_eq!(st.cpus.len(), N as usize);
        assert_eq!(st.cpus.last().and_then(|c| c.cpu), Some(0));
        // and a repeat at the end is that line's error
        text.extend_from_slice(b"ctxt 1\ncpu7 1 2 3 4\nctxt x\n");
        let e = err(&text);
        assert_eq!(e.line, N as usize + 3, "{e}");
        assert_eq!(
            e.kind,
            ErrorKind::DuplicateCpu {
                cpu: 7,
                in_header: false
            }
        );
    }

    #[test]
    fn is_default_is_equality_with_the_default() {
        assert!(Stat::default().is_default());
        let full = Stat::parse(VM).unwrap();
        assert!(!full.is_default());
        let one = |f: fn(&mut Stat)| {
            let mut s = Stat::default();
            f(&mut s);
            s
        };
        for s in [
            one(|s| s.total.cpu = Some(0)),
            one(|s| s.total.fields.push(0)),
            one(|s| s.cpus.push(CpuTimes::default())),
            one(|s| s.intr_total = 1),
            one(|s| s.intr.push(0)),
            one(|s| s.intr_per_irq = true),
            one(|s| s.ctxt = Some(0)),
            one(|s| s.btime = Some(0)),
            one(|s| s.processes = Some(0)),
            one(|s| s.procs_running = Some(0)),
            one(|s| s.procs_blocked = Some(0)),
            one(|s| s.softirq_total = Some(0)),
            one(|s| s.softirq.push(0)),
        ] {
            assert_eq!(s.is_default(), s == Stat::default(), "{s:?}");
            assert!(!s.is_default());
        }
    }

    #[test]
    fn parse_into_reuses_buffers() {
        let mut st = Stat::parse(VM).unwrap();
        let p = st.intr.as_ptr();
        let c = st.cpus[1].fields.as_ptr();
        st.parse_into(VM).unwrap();
        assert_eq!((st.intr.as_ptr(), st.cpus[1].fields.as_ptr()), (p, c));
        assert_eq!(st, Stat::parse(VM).unwrap());
        st.parse_into(b"cpu  1 2 3 4\n").unwrap();
        assert!(st.cpus.is_empty() && st.intr.is_empty() && st.ctxt.is_none());
    }
}
