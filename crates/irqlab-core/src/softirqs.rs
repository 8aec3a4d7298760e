//! `/proc/softirqs`: model and parser.
//!
//! Owns [`Softirqs`]: the header's CPU ids (possible CPUs, unlike
//! `/proc/interrupts`) and one row per softirq vector in file order, and
//! [`Softirqs::parse_into`], which re-parses without allocating once the
//! buffers have grown. Columns are found by whitespace, never by byte offset
//! (names may overflow their 12-character field, headers may be indented
//! oddly); a row of a few CPUs is first tried as the kernel's 11-byte
//! columns, each checked, and read by whitespace when it is anything else. No I/O, no panics: malformed input yields a [`ParseError`].

use crate::error::{ErrorKind, ParseError};
use crate::interrupts::{in_column, parse_cpu_header};
use crate::scan::{
    check_line, header_line, is_blank, lines, push_lossy, range_note, read_u64s, trim,
};
use serde::Serialize;

/// Name used in errors for this file.
pub const FILE: &str = crate::paths::shown::PROC_SOFTIRQS;

/// Longest line accepted (1 MiB ≈ 95 000 CPUs); longer lines are an error.
pub const MAX_LINE: usize = 1 << 20;

/// Rows of at most this many CPUs are first read column by column.
const NARROW: usize = 8;

/// One vector's line (`NET_RX`, `TIMER`, or an old name like `BLOCK_IOPOLL`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SoftirqRow {
    /// Vector name, trimmed.
    pub name: String,
    /// Counts aligned with [`Softirqs::cpus`].
    pub counts: Vec<u64>,
}

impl SoftirqRow {
    /// Sum of the row's per-CPU counts.
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.wrapping_add(c))
    }
}

/// A parsed `/proc/softirqs`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Softirqs {
    /// CPU ids from the header (possible CPUs).
    pub cpus: Vec<u32>,
    /// Rows in file order.
    pub rows: Vec<SoftirqRow>,
    /// The first per-CPU count out of the kernel's range, if any.
    #[serde(skip)]
    note: Option<ParseError>,
}

impl PartialEq for Softirqs {
    fn eq(&self, other: &Self) -> bool {
        self.cpus == other.cpus && self.rows == other.rows
    }
}

impl Eq for Softirqs {}

impl Softirqs {
    /// A model from its parts (for generators and tests), without a note.
    pub fn new(cpus: Vec<u32>, rows: Vec<SoftirqRow>) -> Self {
        Softirqs {
            cpus,
            rows,
            note: None,
        }
    }

    /// A note on the last parse: the first per-CPU count above the
    /// kernel's 32-bit range (the kernel prints softirq counts with `%10u`),
    /// with file, line and value. Such a count is kept, and every delta of
    /// it is a gap.
    pub fn note(&self) -> Option<&ParseError> {
        self.note.as_ref()
    }

    /// Parse a complete `/proc/softirqs` text.
    ///
    /// ```
    /// let text = b"                    CPU0       CPU1       \n          HI:          0          0\n      NET_RX:       1476       1934\n";
    /// let s = irqlab_core::softirqs::Softirqs::parse(text).unwrap();
    /// assert_eq!(s.cpus, vec![0, 1]);
    /// assert_eq!(s.row("NET_RX").unwrap().counts, vec![1476, 1934]);
    /// assert_eq!(s.row("NET_RX").unwrap().total(), 3410);
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let mut out = Softirqs::default();
        out.parse_into(bytes)?;
        Ok(out)
    }

    /// Re-parse `bytes` into `self`, reusing the row strings and vectors.
    /// In the steady state (same shape of file) this allocates nothing. On
    /// error the model is left without rows.
    pub fn parse_into(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        let res = self.parse_inner(bytes);
        if res.is_err() {
            self.rows.clear();
        }
        res
    }

    /// The row named `name` (exact match, e.g. `"NET_RX"`).
    pub fn row(&self, name: &str) -> Option<&SoftirqRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    fn parse_inner(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        self.note = None;
        let mut it = lines(bytes);
        let (hline, header) = header_line(&mut it, FILE, MAX_LINE)?;
        parse_cpu_header(header, &mut self.cpus).map_err(|k| ParseError::new(FILE, hline, k))?;
        let mut len = 0;
        for (n, line) in it {
            check_line(FILE, MAX_LINE, n, line)?;
            if is_blank(line) {
                continue;
            }
            if len == self.rows.len() {
                self.rows.push(SoftirqRow::default());
            }
            if let Some(row) = self.rows.get_mut(len) {
                parse_row(line, &self.cpus, row).map_err(|k| ParseError::new(FILE, n, k))?;
                if self.note.is_none() {
                    self.note = range_note(FILE, n, &row.counts);
                }
            }
            len += 1;
        }
        self.rows.truncate(len);
        Ok(())
    }
}

/// Parse `NAME: c0 c1 …` into `row`, reusing its buffers; `cpus`: the
/// header's CPU ids.
fn parse_row(line: &[u8], cpus: &[u32], row: &mut SoftirqRow) -> Result<(), ErrorKind> {
    let ncols = cpus.len();
    let colon = crate::scan::find_byte(b':', line).ok_or(ErrorKind::MissingColon)?;
    let name = trim(line.get(..colon).unwrap_or_default());
    if name.is_empty() {
        return Err(ErrorKind::Malformed("expected a softirq name before `:`"));
    }
    // the same vector as last time in this row (the usual case)
    if row.name.as_bytes() != name {
        row.name.clear();
        push_lossy(&mut row.name, name);
    }
    row.counts.clear();
    // a few CPUs: the kernel's columns, one 16-byte compare each
    let by_columns = ncols <= NARROW
        && crate::scan::counts::read_exact_columns(line, colon + 1, ncols, &mut row.counts);
    if !by_columns {
        row.counts.clear();
        // one allocation for a new row, not a doubling per power of two
        // (at most what the line can hold: a count takes two bytes or more)
        row.counts.reserve(ncols.min(line.len() / 2 + 1));
        read_u64s(line, colon + 1, &mut row.counts, "a softirq count")
            .map_err(|e| in_column(e, cpus, row.counts.len()))?;
    }
    if row.counts.len() != ncols {
        return Err(ErrorKind::CountMismatch {
            expected: ncols,
            found: row.counts.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const VM: &[u8] = include_bytes!("../tests/fixtures/vm-2cpu-6.18/proc_softirqs");

    fn err(text: &[u8]) -> ParseError {
        match Softirqs::parse(text) {
            Err(e) => e,
            Ok(s) => panic!("expected an error, parsed {s:?}"),
        }
    }

    #[test]
    fn a_cpu_twice_in_the_header_is_an_error() {
        let e = err(b"       CPU0   CPU0\n  HI:  1  2\n");
        assert_eq!(
            e.to_string(),
            "/proc/softirqs:1: duplicate CPU0 in the header"
        );
    }

    #[test]
    fn parses_vm_capture() {
        let s = Softirqs::parse(VM).unwrap();
        assert_eq!(s.cpus, vec![0, 1]);
        assert_eq!(s.rows.len(), 10);
        let names: Vec<_> = s.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
                "HRTIMER", "RCU"
            ]
        );
        assert_eq!(s.row("TIMER").unwrap().counts, vec![4158, 4920]);
        assert_eq!(s.row("TIMER").unwrap().total(), 9078);
        assert!(s.row("NOPE").is_none());
    }

    #[test]
    fn offline_cpu_keeps_possible_columns() {
        // docs/formats/edge-cases.md, case 23: possible CPUs, not online ones.
        let t = b"                    CPU0       CPU1       CPU2       CPU3       \n          HI:          1          0          0          2\n";
        let s = Softirqs::parse(t).unwrap();
        assert_eq!(s.cpus, vec![0, 1, 2, 3]);
        assert_eq!(s.rows[0].counts, vec![1, 0, 0, 2]);
    }

    #[test]
    fn overflowing_name_odd_indent_trailing_spaces() {
        let t = b"                      CPU0       CPU1\n BLOCK_IOPOLL:          0          0   \n           HI:\t5 6\r\n";
        let s = Softirqs::parse(t).unwrap();
        assert_eq!(s.rows[0].name, "BLOCK_IOPOLL");
        assert_eq!(s.rows[1].counts, vec![5, 6]);
        let glued = Softirqs::parse(b"CPU0\nBLOCK_IOPOLL:4294967295\n").unwrap();
        assert_eq!(glued.rows[0].counts, vec![4294967295]);
    }

    #[test]
    fn count_out_of_the_kernel_range_is_a_note_not_an_error() {
        let t = b"CPU0 CPU1\n  HI: 1 2\n  TIMER: 3 4294967296\n  NET_RX: 18446744073709551615 0\n";
        let s = Softirqs::parse(t).unwrap();
        assert_eq!(s.row("TIMER").unwrap().counts, vec![3, 4294967296]);
        let note = s.note().unwrap();
        assert_eq!(note.line, 3, "the first out-of-range line");
        assert!(note.to_string().starts_with("/proc/softirqs:3:"), "{note}");
        assert!(note.to_string().contains("4294967296"), "{note}");
        let mut again = s.clone();
        again.parse_into(VM).unwrap();
        assert!(again.note().is_none(), "a clean re-parse clears the note");
        assert!(Softirqs::parse(b"CPU0\nHI: 4294967295\n")
            .unwrap()
            .note()
            .is_none());
    }

    #[test]
    fn count_mismatch_names_line() {
        let e = err(b"    CPU0 CPU1\n  HI: 1 2\n  TIMER: 3\n");
        assert_eq!(e.line, 3);
        assert_eq!(
            e.kind,
            ErrorKind::CountMismatch {
                expected: 2,
                found: 1
            }
        );
        assert!(e.to_string().starts_with("/proc/softirqs:3:"));
    }

    #[test]
    fn a_count_that_is_not_a_number_is_named_with_its_cpu_and_column() {
        // CPU1 not possible: the CPU is the header's id, not the column
        for h in [
            "CPU0 CPU2\n",
            "CPU0 CPU2 CPU3 CPU4 CPU5 CPU6 CPU7 CPU8 CPU9\n",
        ] {
            let ncols = h.split_whitespace().count();
            let rest = " 0".repeat(ncols - 2);
            let e = err(format!("{h}  HI: 1 2{rest}\n  TIMER: 3 14x453{rest}\n").as_bytes());
            assert_eq!(
                (e.line, e.kind.clone()),
                (
                    3,
                    ErrorKind::BadCount {
                        cpu: 2,
                        column: 2,
                        what: "a softirq count",
                        found: "14x453".into()
                    }
                ),
                "{h}"
            );
            assert_eq!(
                e.to_string(),
                "/proc/softirqs:3: expected a softirq count for CPU2 (a decimal number; \
                 column 2), found \"14x453\""
            );
            let e = err(format!("{h}  HI: -5 2{rest}\n").as_bytes());
            assert!(
                e.to_string()
                    .ends_with("for CPU0 (a decimal number; column 1), found \"-5\""),
                "{e}"
            );
        }
        // digits beyond 64 bits: too large, not "not a number"
        let e = err(b"CPU0 CPU2\n  HI: 1 18446744073709551616\n");
        assert_eq!(
            e.to_string(),
            "/proc/softirqs:2: a softirq count for CPU2 (column 2) exceeds the 64-bit range \
             (at most 18446744073709551615), found \"18446744073709551616\""
        );
        // a token past the header's CPUs has no CPU to name
        let e = err(b"CPU0\nHI: 1 x\n");
        assert_eq!(
            e.kind,
            ErrorKind::ExpectedNumber {
                what: "a softirq count",
                found: "x".into()
            }
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert_eq!(err(b"").kind, ErrorKind::Empty);
        assert_eq!(err(b"\n  \n").kind, ErrorKind::Empty);
        assert_eq!(err(b"   \n  HI: 1\n").line, 2); // header without CPUs
        assert_eq!(err(b"CPU0\nHI: x\n").line, 2);
        assert_eq!(err(b"CPU0\nHI 1\n").kind, ErrorKind::MissingColon);
        assert_eq!(err(b"CPU0\n: 1\n").line, 2);
        assert_eq!(err(b"CPU0\nHI: 99999999999999999999999\n").line, 2);
        assert_eq!(err(b"\x00\xff\xfe garbage\n").line, 1);
        let truncated = &VM[..VM.len() - 8];
        assert!(Softirqs::parse(truncated).is_err());
        let mut long = b"CPU0\nHI:".to_vec();
        long.resize(10 << 20, b' ');
        let e = err(&long);
        assert_eq!((e.file, e.line), (FILE, 2));
        assert!(matches!(e.kind, ErrorKind::LineTooLong { .. }));
    }

    #[test]
    fn parse_into_reuses_and_truncates() {
        let mut s = Softirqs::parse(VM).unwrap();
        let ptr = s.rows[3].name.as_ptr();
        s.parse_into(VM).unwrap();
        assert_eq!(s.rows[3].name.as_ptr(), ptr);
        assert_eq!(s, Softirqs::parse(VM).unwrap());
        s.parse_into(b"CPU0 CPU1\nHI: 1 2\n").unwrap();
        assert_eq!(s.rows.len(), 1);
        assert!(s.parse_into(b"CPU0\nHI: 1 2\n").is_err());
        assert!(s.rows.is_empty());
    }
}
