//! `/proc/PID/stat` and `/proc/PID/schedstat`: the CPU time of interrupt
//! threads (`ksoftirqd/N`, `irq/N-name`).
//!
//! Owns [`PidStat`] (the fields irqlab needs, by their `proc(5)` numbers)
//! and [`SchedStat`]. The comm is split at the **last** `)` because thread
//! names may contain spaces and parentheses. Fields newer than the running
//! kernel are `None`. Must not read files or compute rates; never panics.

use crate::error::{ErrorKind, ParseError};
use crate::scan::{lossy_token, next_token, push_lossy, token_u64, trim};
use crate::stat::digits;
use serde::Serialize;

/// Error name of `/proc/PID/stat`.
pub const STAT_FILE: &str = crate::paths::shown::PID_STAT;
/// Error name of `/proc/PID/schedstat`.
pub const SCHEDSTAT_FILE: &str = crate::paths::shown::PID_SCHEDSTAT;

/// The fields of `/proc/PID/stat` irqlab uses. Times are in USER_HZ ticks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PidStat {
    /// Field 1.
    pub pid: u32,
    /// Field 2, without the parentheses (`irq/140-PCIe PME`).
    pub comm: String,
    /// Field 3 (`R`, `S`, `D`, `I`…).
    pub state: char,
    /// Field 4.
    pub ppid: Option<u32>,
    /// Field 14: user-mode time.
    pub utime: Option<u64>,
    /// Field 15: kernel-mode time (essentially all of a kthread's time).
    pub stime: Option<u64>,
    /// Field 22: start time in ticks after boot.
    pub starttime: Option<u64>,
    /// Field 39: CPU last run on.
    pub processor: Option<u32>,
    /// Field 40: real-time priority (50 for threaded IRQ handlers).
    pub rt_priority: Option<u32>,
    /// Field 41: scheduling policy (0 OTHER, 1 FIFO, 2 RR …).
    pub policy: Option<u32>,
}

/// The numbered fields after the comm, by `proc(5)` field number.
const PPID: usize = 4;
const UTIME: usize = 14;
const STIME: usize = 15;
const STARTTIME: usize = 22;
const PROCESSOR: usize = 39;
const RT_PRIORITY: usize = 40;
const POLICY: usize = 41;

impl PidStat {
    /// Parse one `/proc/PID/stat` line.
    ///
    /// ```
    /// let line = b"812 (irq/140-PCIe PME) S 2 0 0 0 -1 2129984 0 0 0 0 0 7 0 0 -51 0 1 0 19 0\n";
    /// let st = irqlab_core::pidstat::PidStat::parse(line).unwrap();
    /// assert_eq!((st.pid, st.comm.as_str(), st.state), (812, "irq/140-PCIe PME", 'S'));
    /// assert_eq!((st.ppid, st.stime, st.starttime), (Some(2), Some(7), Some(19)));
    /// assert_eq!(st.processor, None); // an old kernel printing fewer fields
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let mut out = PidStat::default();
        out.parse_into(bytes)?;
        Ok(out)
    }

    /// Parse into `self`, reusing the comm buffer.
    pub fn parse_into(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        self.parse_inner(bytes)
            .map_err(|k| ParseError::new(STAT_FILE, 1, k))
    }

    fn parse_inner(&mut self, bytes: &[u8]) -> Result<(), ErrorKind> {
        let line = trim(bytes);
        let open = crate::scan::find_byte(b'(', line)
            .ok_or(ErrorKind::Malformed("expected `pid (comm)`"))?;
        let close = crate::scan::rfind_byte(b')', line)
            .filter(|&c| c > open)
            .ok_or(ErrorKind::Malformed("expected `)` closing the comm"))?;
        let pid = token_u64(trim(line.get(..open).unwrap_or_default()), "a pid")?;
        self.pid = u32::try_from(pid).map_err(|_| ErrorKind::Invalid {
            what: "a pid below 2^32",
            found: pid.to_string(),
        })?;
        self.comm.clear();
        push_lossy(
            &mut self.comm,
            line.get(open + 1..close).unwrap_or_default(),
        );
        self.parse_fields(line, close + 1)
    }

    /// Fields 3 onwards, starting at byte `pos` (just after the comm).
    fn parse_fields(&mut self, line: &[u8], pos: usize) -> Result<(), ErrorKind> {
        self.clear_fields();
        if self.fields_spaced(line, pos) {
            return Ok(());
        }
        self.clear_fields();
        self.fields_by_token(line, pos)
    }

    /// Every field after the comm unset (pid and comm kept).
    fn clear_fields(&mut self) {
        *self = PidStat {
            pid: self.pid,
            comm: std::mem::take(&mut self.comm),
            ..PidStat::default()
        };
    }

    /// [`fields_by_token`](Self::fields_by_token) for the kernel's form,
    /// where every blank is a space: the token starts are found eight
    /// bytes at a time and only the fields kept are read. False (with
    /// `self` partly set) at a control byte (a tab, a `\r`) or a field
    /// [`store`](Self::store) refuses, which `fields_by_token` judges.
    fn fields_spaced(&mut self, line: &[u8], pos: usize) -> bool {
        let mut field = 2;
        // bit 7 of byte 0 set when the byte before the word is a blank: the
        // first byte after the comm starts a token like any after a space
        let mut blank_before = 0x80;
        let mut at = pos;
        while at < line.len() {
            let w = digits::word_at(line, at);
            let live = live_bytes(line.len() - at);
            let space = digits::spaces(w) & live;
            if digits::blanks_or_controls(w) & live != space {
                return false;
            }
            let mut starts = !space & live & (space << 8 | blank_before);
            while starts != 0 {
                field += 1;
                if KEPT >> field & 1 == 1 {
                    let s = at + (starts.trailing_zeros() / 8) as usize;
                    let Some(tok) = spaced_token(line, s) else {
                        return false;
                    };
                    if self.store(field, tok).is_err() {
                        return false;
                    }
                    if field == POLICY {
                        return true;
                    }
                }
                starts &= starts - 1;
            }
            blank_before = (space >> 56) & 0x80;
            at += 8;
        }
        field >= 3
    }

    /// The general reader of fields 3 onwards: whitespace-separated tokens.
    fn fields_by_token(&mut self, line: &[u8], mut pos: usize) -> Result<(), ErrorKind> {
        let mut field = 3;
        while let Some((s, e)) = next_token(line, pos) {
            let tok = line.get(s..e).unwrap_or_default();
            self.store(field, tok)?;
            field += 1;
            pos = e;
            if field > POLICY {
                break;
            }
        }
        if field == 3 {
            return Err(ErrorKind::Malformed("expected the state after the comm"));
        }
        Ok(())
    }

    fn store(&mut self, field: usize, tok: &[u8]) -> Result<(), ErrorKind> {
        match field {
            3 => self.state = state_char(tok)?,
            PPID => self.ppid = Some(u32_tok(tok, "the ppid (field 4)")?),
            UTIME => self.utime = Some(token_u64(tok, "utime (field 14)")?),
            STIME => self.stime = Some(token_u64(tok, "stime (field 15)")?),
            STARTTIME => self.starttime = Some(token_u64(tok, "starttime (field 22)")?),
            PROCESSOR => self.processor = Some(u32_tok(tok, "processor (field 39)")?),
            RT_PRIORITY => self.rt_priority = Some(u32_tok(tok, "rt_priority (field 40)")?),
            POLICY => self.policy = Some(u32_tok(tok, "policy (field 41)")?),
            _ => {}
        }
        Ok(())
    }

    /// utime + stime in ticks, if both were printed.
    pub fn cpu_ticks(&self) -> Option<u64> {
        Some(self.utime?.saturating_add(self.stime?))
    }
}

/// The fields [`PidStat`] keeps, as bits by field number.
const KEPT: u64 = 1 << 3
    | 1 << PPID
    | 1 << UTIME
    | 1 << STIME
    | 1 << STARTTIME
    | 1 << PROCESSOR
    | 1 << RT_PRIORITY
    | 1 << POLICY;

/// Bit 7 of each of the first `n` bytes of a word (all eight from 8 on).
fn live_bytes(n: usize) -> u64 {
    let bits = u32::try_from(8 * n).unwrap_or(u32::MAX);
    0x8080_8080_8080_8080 & 1u64.checked_shl(bits).map_or(u64::MAX, |b| b - 1)
}

/// The token starting at `s`: up to the next space or the end of the
/// line; `None` when a control byte ends it first.
fn spaced_token(line: &[u8], s: usize) -> Option<&[u8]> {
    line.get(s..digits::spaced_token_end(line, s)?)
}

fn state_char(tok: &[u8]) -> Result<char, ErrorKind> {
    match tok {
        [c] if c.is_ascii_alphabetic() => Ok(char::from(*c)),
        _ => Err(ErrorKind::Invalid {
            what: "a one-letter state (field 3)",
            found: lossy_token(tok),
        }),
    }
}

fn u32_tok(tok: &[u8], what: &'static str) -> Result<u32, ErrorKind> {
    let v = token_u64(tok, what)?;
    u32::try_from(v).map_err(|_| ErrorKind::TooLarge {
        what,
        found: v.to_string(),
        bits: 32,
    })
}

/// `/proc/PID/schedstat`: nanosecond run and wait times (`CONFIG_SCHED_INFO`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SchedStat {
    /// Time spent on the CPU, ns.
    pub exec_runtime_ns: u64,
    /// Time spent waiting on a runqueue, ns.
    pub wait_ns: u64,
    /// Number of timeslices run on this CPU.
    pub timeslices: u64,
}

impl SchedStat {
    /// Parse `exec_runtime_ns wait_ns timeslices`.
    ///
    /// ```
    /// let s = irqlab_core::pidstat::SchedStat::parse(b"114952267 548892773 2685\n").unwrap();
    /// assert_eq!((s.exec_runtime_ns, s.wait_ns, s.timeslices), (114952267, 548892773, 2685));
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        match Self::parse_kernel_form(bytes) {
            Some(s) => Ok(s),
            None => Self::parse_tokens(bytes),
        }
    }

    /// The line as the kernel prints it (`%llu %llu %lu\n`: three numbers
    /// of at most 16 digits, single spaces, an optional newline), read a
    /// word at a time; `None` for anything else, which
    /// [`parse_tokens`](Self::parse_tokens) reads (or names as wrong).
    fn parse_kernel_form(bytes: &[u8]) -> Option<Self> {
        let mut v = [0u64; 3];
        let mut pos = 0;
        for (i, slot) in v.iter_mut().enumerate() {
            let (n, end) = digits::number_at(bytes, pos)?;
            *slot = n;
            // a space after the first two, a newline or nothing after the last
            pos = match (i, bytes.get(end)) {
                (0 | 1, Some(b' ')) => end + 1,
                (2, None) => end,
                (2, Some(b'\n')) if end + 1 == bytes.len() => end,
                _ => return None,
            };
        }
        let [exec_runtime_ns, wait_ns, timeslices] = v;
        Some(SchedStat {
            exec_runtime_ns,
            wait_ns,
            timeslices,
        })
    }

    /// [`parse`](Self::parse) of any whitespace-separated form: three
    /// numbers, or an error naming what is wrong.
    fn parse_tokens(bytes: &[u8]) -> Result<Self, ParseError> {
        let err = |k| ParseError::new(SCHEDSTAT_FILE, 1, k);
        let mut vals = [0u64; 3];
        let mut pos = 0;
        for (slot, what) in vals
            .iter_mut()
            .zip(["exec_runtime_ns", "wait_ns", "timeslices"])
        {
            let (s, e) = next_token(bytes, pos).ok_or_else(|| {
                err(ErrorKind::ExpectedNumber {
                    what,
                    found: String::new(),
                })
            })?;
            *slot = token_u64(bytes.get(s..e).unwrap_or_default(), what).map_err(err)?;
            pos = e;
        }
        if let Some((s, e)) = next_token(bytes, pos) {
            let found = lossy_token(bytes.get(s..e).unwrap_or_default());
            return Err(err(ErrorKind::Invalid {
                what: "the end of the line after 3 values",
                found,
            }));
        }
        let [exec_runtime_ns, wait_ns, timeslices] = vals;
        Ok(SchedStat {
            exec_runtime_ns,
            wait_ns,
            timeslices,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const KSOFTIRQD: &[u8] = include_bytes!("../tests/fixtures/vm-2cpu-6.18/proc_14_stat");
    const IRQ24: &[u8] = include_bytes!("../tests/fixtures/vm-2cpu-6.18/proc_50_stat");

    #[test]
    fn vm_ksoftirqd() {
        let st = PidStat::parse(KSOFTIRQD).unwrap();
        assert_eq!(
            (st.pid, st.comm.as_str(), st.state, st.ppid),
            (14, "ksoftirqd/0", 'S', Some(2))
        );
        assert_eq!(
            (st.utime, st.stime, st.starttime),
            (Some(2), Some(0), Some(9))
        );
        assert_eq!(
            (st.processor, st.rt_priority, st.policy),
            (Some(0), Some(0), Some(0))
        );
        assert_eq!(st.cpu_ticks(), Some(2));
    }

    #[test]
    fn vm_irq_thread_is_fifo_50() {
        let st = PidStat::parse(IRQ24).unwrap();
        assert_eq!(st.comm, "irq/24-ACPI:Ged");
        assert_eq!((st.rt_priority, st.policy), (Some(50), Some(1)));
    }

    #[test]
    fn comm_with_space_and_parentheses() {
        // docs/formats/edge-cases.md, case 26.
        let st = PidStat::parse(b"812 (irq/140-PCIe PME) S 2").unwrap();
        assert_eq!(
            (st.comm.as_str(), st.ppid, st.utime),
            ("irq/140-PCIe PME", Some(2), None)
        );
        let st = PidStat::parse(b"9 (a) b (c)) R 1 2").unwrap();
        assert_eq!((st.comm.as_str(), st.state), ("a) b (c)", 'R'));
        let st = PidStat::parse(b"9 () R").unwrap();
        assert_eq!((st.comm.as_str(), st.ppid), ("", None));
    }

    #[test]
    fn malformed_stat_is_error() {
        for bad in [
            &b""[..],
            b"\xff\x00\x01",
            b"12 no-parens S 1",
            b"x (a) S 1",
            b"12 (a)",
            b"12 (a) SS 1",
            b"12 (a) S x",
            b"12 (a S 1",
            b"12 )a( S 1",
            b"99999999999 (a) S 1",
        ] {
            let e = PidStat::parse(bad).unwrap_err();
            assert_eq!((e.file, e.line), (STAT_FILE, 1), "{bad:?}");
        }
        let mut long = b"1 (a) S 1 2 3 4 5 6 7 8 9 10 ".to_vec();
        long.resize(10 << 20, b'1');
        assert!(PidStat::parse(&long).is_err());
        // a ppid beyond 32 bits is too large, not "not a number"
        let e = PidStat::parse(b"12 (a) S 4294967296").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{STAT_FILE}:1: the ppid (field 4) exceeds the 32-bit range (at most 4294967295), \
                 found \"4294967296\""
            )
        );
    }

    #[test]
    fn parse_into_resets_optional_fields() {
        let mut st = PidStat::parse(KSOFTIRQD).unwrap();
        let p = st.comm.as_ptr();
        st.parse_into(b"15 (x) R 2").unwrap();
        assert_eq!(
            (st.comm.as_str(), st.utime, st.comm.as_ptr()),
            ("x", None, p)
        );
    }

    /// A `/proc/PID/stat` tail after the comm: the kernel's layout, or
    /// random bytes, or the kernel's layout with a byte changed.
    fn random_tail(rng: &mut crate::rng::Rng, case: u32) -> Vec<u8> {
        let alphabet = b"0123456789     -\t\r\n\x0b\x00\xffSRx()";
        let pick =
            |rng: &mut crate::rng::Rng| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize];
        if case % 4 == 0 {
            let len = (rng.next_u64() % 120) as usize;
            return (0..len).map(|_| pick(rng)).collect();
        }
        let mut t = b" S".to_vec();
        for k in 4..=(4 + rng.next_u64() % 52) {
            let v = match k % 9 {
                0 => u64::MAX - rng.next_u64() % 3,
                1 => rng.next_u64() >> (rng.next_u64() % 64),
                _ => rng.next_u64() % 1000,
            };
            let sep = if rng.next_u64() % 16 == 0 { "  " } else { " " };
            // tpgid, priority and nice are negative for kernel threads
            let sign = if matches!(k, 8 | 18 | 19) { "-" } else { "" };
            t.extend_from_slice(format!("{sep}{sign}{v}").as_bytes());
        }
        if case % 4 == 1 {
            let at = (rng.next_u64() as usize) % (t.len() + 1);
            t.insert(at, pick(rng));
        }
        if case % 8 == 2 {
            t.push(b'\n');
        }
        t
    }

    #[test]
    fn fields_read_by_words_are_the_fields_read_by_token() {
        let mut rng = crate::rng::Rng::new(39);
        for case in 0..20_000 {
            let tail = random_tail(&mut rng, case);
            let mut line = b"77 (irq/9-acpi)".to_vec();
            let pos = line.len();
            line.extend_from_slice(&tail);
            let mut fast = PidStat::default();
            let got = fast.parse_fields(&line, pos);
            let mut slow = PidStat::default();
            let want = slow.fields_by_token(&line, pos);
            let shown = String::from_utf8_lossy(&tail);
            assert_eq!(got, want, "{case}: {shown:?}");
            if want.is_ok() {
                assert_eq!(fast, slow, "{case}: {shown:?}");
            }
        }
    }

    #[test]
    fn schedstat_read_by_words_is_schedstat_read_by_token() {
        let mut rng = crate::rng::Rng::new(41);
        let alphabet = b"0123456789 \t\r\nx-";
        for case in 0..20_000u32 {
            let mut b = Vec::new();
            for k in 0..(1 + rng.next_u64() % 4) {
                let v = match rng.next_u64() % 4 {
                    0 => u64::MAX - rng.next_u64() % 2,
                    1 => rng.next_u64() >> (rng.next_u64() % 64),
                    _ => rng.next_u64() % 100_000,
                };
                let sep = if k == 0 { "" } else { " " };
                b.extend_from_slice(format!("{sep}{v}").as_bytes());
            }
            if case % 2 == 0 {
                b.push(b'\n');
            }
            if case % 3 == 0 {
                let at = (rng.next_u64() as usize) % (b.len() + 1);
                b.insert(
                    at,
                    alphabet[(rng.next_u64() % alphabet.len() as u64) as usize],
                );
            }
            let shown = String::from_utf8_lossy(&b);
            assert_eq!(
                SchedStat::parse(&b),
                SchedStat::parse_tokens(&b),
                "{shown:?}"
            );
        }
    }

    #[test]
    fn schedstat() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/vm-2cpu-6.18/");
        for f in ["proc_14_schedstat", "proc_50_schedstat"] {
            let s = SchedStat::parse(&std::fs::read(format!("{dir}{f}")).unwrap()).unwrap();
            assert!(s.exec_runtime_ns > 0 && s.timeslices > 0);
        }
        for bad in [&b""[..], b"1 2", b"1 2 x", b"1 2 3 4", b"-1 2 3", b"\xff"] {
            assert_eq!(
                SchedStat::parse(bad).unwrap_err().file,
                SCHEDSTAT_FILE,
                "{bad:?}"
            );
        }
    }
}
