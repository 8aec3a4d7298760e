//! Typed parse errors shared by every parser in this crate.
//!
//! Owns [`ParseError`]: which file, which 1-based line, and what was expected.
//! Parsers never panic; every malformed input ends up here.

use std::fmt;

/// What went wrong while parsing, without location. Non-exhaustive: new
/// kinds may be added without a breaking change; match with a `_` arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input was empty (or only whitespace).
    Empty,
    /// The header line has no `CPU<n>` cells.
    NoCpuHeader,
    /// A header cell did not look like `CPU<n>`.
    BadHeaderCell(String),
    /// A data line has no `:` separating its label.
    MissingColon,
    /// A numeric field was expected; the offending token is attached.
    ExpectedNumber { what: &'static str, found: String },
    /// A per-CPU count that is not one: the header's id of its CPU, its
    /// 1-based column among the row's counts, what was expected and the
    /// token found there (a count glued to text, a sign, too many digits).
    BadCount {
        cpu: u32,
        column: usize,
        what: &'static str,
        found: String,
    },
    /// A decimal number too large for its `bits`-bit field (a 64-bit
    /// count, a 32-bit id); the digits found are attached.
    TooLarge {
        what: &'static str,
        found: String,
        bits: u32,
    },
    /// A per-CPU count too large for 64 bits, named as [`BadCount`]
    /// names a count that is not one.
    ///
    /// [`BadCount`]: ErrorKind::BadCount
    CountTooLarge {
        cpu: u32,
        column: usize,
        what: &'static str,
        found: String,
    },
    /// A numbered row has a different number of counts than the header has CPUs.
    CountMismatch { expected: usize, found: usize },
    /// A line is longer than the parser accepts.
    LineTooLong { len: usize, max: usize },
    /// The input is not valid UTF-8 text where text was expected.
    NotText,
    /// A structural expectation failed; the message says which.
    Malformed(&'static str),
    /// A token is not what was expected (not a number problem: a keyword,
    /// a CPU id out of bounds, a reversed range); the token is attached.
    Invalid { what: &'static str, found: String },
    /// A CPU id the file already gave: twice in the header
    /// (`in_header`), or a second `cpuN` line of `/proc/stat`.
    DuplicateCpu { cpu: u32, in_header: bool },
}

/// A parse failure: file name, 1-based line number (0 = whole file) and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub file: &'static str,
    pub line: usize,
    pub kind: ErrorKind,
}

impl ParseError {
    pub fn new(file: &'static str, line: usize, kind: ErrorKind) -> Self {
        Self { file, line, kind }
    }
}

fn clip(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() <= MAX {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX).collect();
    out.push('…');
    out
}

/// The largest value of a `bits`-bit unsigned field.
fn max_of(bits: u32) -> u64 {
    u64::MAX
        .checked_shr(64u32.saturating_sub(bits))
        .unwrap_or(0)
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Empty => write!(f, "file is empty, expected a header line"),
            ErrorKind::NoCpuHeader => {
                write!(f, "expected a header of CPU<n> columns, found none")
            }
            ErrorKind::BadHeaderCell(c) => {
                write!(f, "expected a header cell like CPU0, found {:?}", clip(c))
            }
            ErrorKind::MissingColon => write!(f, "expected `label:` at the start of the line"),
            ErrorKind::ExpectedNumber { what, found } => {
                write!(
                    f,
                    "expected {what} (a decimal number), found {:?}",
                    clip(found)
                )
            }
            ErrorKind::BadCount {
                cpu,
                column,
                what,
                found,
            } => write!(
                f,
                "expected {what} for CPU{cpu} (a decimal number; column {column}), found {:?}",
                clip(found)
            ),
            ErrorKind::TooLarge { what, found, bits } => write!(
                f,
                "{what} exceeds the {bits}-bit range (at most {}), found {:?}",
                max_of(*bits),
                clip(found)
            ),
            ErrorKind::CountTooLarge {
                cpu,
                column,
                what,
                found,
            } => write!(
                f,
                "{what} for CPU{cpu} (column {column}) exceeds the 64-bit range (at most {}), \
                 found {:?}",
                u64::MAX,
                clip(found)
            ),
            ErrorKind::CountMismatch { expected, found } => write!(
                f,
                "expected {expected} per-CPU counts (one per header CPU), found {found} \
                 (CPU hotplug during the read, or a truncated line)"
            ),
            ErrorKind::LineTooLong { len, max } => {
                write!(f, "line of {len} bytes exceeds the {max}-byte limit")
            }
            ErrorKind::NotText => write!(f, "expected text, found bytes that are not UTF-8"),
            ErrorKind::Malformed(m) => write!(f, "{m}"),
            ErrorKind::Invalid { what, found } => {
                write!(f, "expected {what}, found {:?}", clip(found))
            }
            ErrorKind::DuplicateCpu {
                cpu,
                in_header: true,
            } => write!(f, "duplicate CPU{cpu} in the header"),
            ErrorKind::DuplicateCpu {
                cpu,
                in_header: false,
            } => write!(f, "duplicate cpu{cpu} line (CPU{cpu} has one above)"),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.kind)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.kind)
        }
    }
}

impl std::error::Error for ParseError {}
