//! CPU sets as the kernel prints them: lists (`%*pbl`, `0-3,5,7-9`, used by
//! `/proc/irq/N/smp_affinity_list`) and hex masks (`%*pb`, `ff,ffffffff`,
//! used by `/proc/irq/N/smp_affinity`).
//!
//! Owns [`CpuList`]: sorted, merged inclusive ranges with a canonical
//! [`Display`](std::fmt::Display). Must not know where the text came from
//! (callers pass the file name for errors) and must not accept CPU ids above
//! [`MAX_CPU`], so no input can make it allocate without bound. Strided
//! ranges (`0-31:2/4`, accepted by the kernel on write but never printed)
//! are refused.

use crate::error::{ErrorKind, ParseError};
use crate::scan::{lossy_token, scan_u64, trim, Scan};
use serde::Serialize;
use std::fmt;

/// Largest CPU id accepted (the kernel's `NR_CPUS` limit is 8192 today).
pub const MAX_CPU: u32 = 1 << 20;

/// A set of CPU ids, stored as sorted, non-adjacent inclusive ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct CpuList {
    ranges: Vec<(u32, u32)>,
}

impl CpuList {
    /// Parse a CPU list such as `0-3,5,7-9\n`. Empty text is the empty set.
    /// `file` names the source in errors.
    ///
    /// ```
    /// use irqlab_core::cpulist::CpuList;
    /// let l = CpuList::parse_list(b"7-9,0-3,5,4\n", "smp_affinity_list").unwrap();
    /// assert_eq!(l.to_string(), "0-5,7-9");
    /// assert!(l.contains(8) && !l.contains(6));
    /// assert_eq!(l.len(), 9);
    /// ```
    pub fn parse_list(bytes: &[u8], file: &'static str) -> Result<Self, ParseError> {
        let mut out = CpuList::default();
        out.parse_list_into(bytes, file)?;
        Ok(out)
    }

    /// Whether `bytes` is a CPU list [`parse_list`](Self::parse_list)
    /// accepts, checked without building the set (nothing allocated).
    ///
    /// ```
    /// use irqlab_core::cpulist::CpuList;
    /// assert!(CpuList::is_list(b"0-3,8\n") && CpuList::is_list(b""));
    /// assert!(!CpuList::is_list(b"zz") && !CpuList::is_list(b"0-"));
    /// ```
    pub fn is_list(bytes: &[u8]) -> bool {
        let text = trim(bytes);
        text.is_empty() || text.split(|&c| c == b',').all(|i| parse_item(i).is_ok())
    }

    /// [`parse_list`](Self::parse_list) into `self`, reusing its buffer.
    pub fn parse_list_into(&mut self, bytes: &[u8], file: &'static str) -> Result<(), ParseError> {
        self.ranges.clear();
        let text = trim(bytes);
        if text.is_empty() {
            return Ok(());
        }
        for item in text.split(|&c| c == b',') {
            let r = parse_item(item).map_err(|k| ParseError::new(file, 1, k))?;
            self.ranges.push(r);
        }
        self.normalize();
        Ok(())
    }

    /// Parse a hex mask such as `ff,ffffffff\n`: comma-separated groups of
    /// up to 8 hex digits (32 CPUs each), most significant group first.
    ///
    /// ```
    /// use irqlab_core::cpulist::CpuList;
    /// let m = CpuList::parse_mask(b"00000001,00000005\n", "smp_affinity").unwrap();
    /// assert_eq!(m.to_string(), "0,2,32");
    /// ```
    pub fn parse_mask(bytes: &[u8], file: &'static str) -> Result<Self, ParseError> {
        let mut out = CpuList::default();
        out.parse_mask_into(bytes, file)?;
        Ok(out)
    }

    /// [`parse_mask`](Self::parse_mask) into `self`, reusing its buffer.
    pub fn parse_mask_into(&mut self, bytes: &[u8], file: &'static str) -> Result<(), ParseError> {
        self.ranges.clear();
        let text = trim(bytes);
        if text.is_empty() {
            return Ok(());
        }
        let err = |k| ParseError::new(file, 1, k);
        for (i, group) in text.rsplit(|&c| c == b',').enumerate() {
            let bits = parse_group(group).map_err(err)?;
            let base = u64::try_from(i).unwrap_or(u64::MAX).saturating_mul(32);
            self.push_bits(base, bits).map_err(err)?;
        }
        Ok(())
    }

    /// Build from CPU ids in any order (duplicates allowed).
    pub fn from_cpus(cpus: impl IntoIterator<Item = u32>) -> Self {
        let mut out = CpuList {
            ranges: cpus.into_iter().map(|c| (c, c)).collect(),
        };
        out.normalize();
        out
    }

    /// True if `cpu` is in the set.
    pub fn contains(&self, cpu: u32) -> bool {
        let i = self.ranges.partition_point(|&(_, end)| end < cpu);
        self.ranges.get(i).is_some_and(|&(start, _)| start <= cpu)
    }

    /// Number of CPUs in the set.
    pub fn len(&self) -> usize {
        self.ranges.iter().map(|&(s, e)| (e - s) as usize + 1).sum()
    }

    /// True for the empty set.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The CPU ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|&(s, e)| s..=e)
    }

    /// The inclusive ranges, sorted and merged.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// Sort and merge overlapping or adjacent ranges.
    fn normalize(&mut self) {
        self.ranges.sort_unstable();
        let mut w: usize = 0;
        for r in 0..self.ranges.len() {
            let Some(&(s, e)) = self.ranges.get(r) else {
                break;
            };
            if let Some(last) = w.checked_sub(1).and_then(|i| self.ranges.get_mut(i)) {
                if s <= last.1.saturating_add(1) {
                    last.1 = last.1.max(e);
                    continue;
                }
            }
            if let Some(slot) = self.ranges.get_mut(w) {
                *slot = (s, e);
            }
            w += 1;
        }
        self.ranges.truncate(w);
    }

    /// Append the set bits of a 32-bit group whose bit 0 is CPU `base`.
    fn push_bits(&mut self, base: u64, bits: u32) -> Result<(), ErrorKind> {
        if bits == 0 {
            return Ok(());
        }
        let top = base + u64::from(31 - bits.leading_zeros());
        if top > u64::from(MAX_CPU) {
            return Err(too_big(top));
        }
        for b in (0..32u32).filter(|b| bits & (1 << b) != 0) {
            let cpu = base as u32 + b;
            match self.ranges.last_mut() {
                Some(last) if last.1.checked_add(1) == Some(cpu) => last.1 = cpu,
                _ => self.ranges.push((cpu, cpu)),
            }
        }
        Ok(())
    }
}

impl fmt::Display for CpuList {
    /// The kernel's compact list form: `0-3,5,7-9` (empty set: empty string).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(s, e)) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if s == e {
                write!(f, "{s}")?;
            } else {
                write!(f, "{s}-{e}")?;
            }
        }
        Ok(())
    }
}

impl FromIterator<u32> for CpuList {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        CpuList::from_cpus(iter)
    }
}

fn too_big(cpu: u64) -> ErrorKind {
    ErrorKind::Invalid {
        what: "a CPU id of at most 1048576",
        found: cpu.to_string(),
    }
}

/// One list item: `N` or `A-B`.
fn parse_item(item: &[u8]) -> Result<(u32, u32), ErrorKind> {
    let item = trim(item);
    let bad = || ErrorKind::Invalid {
        what: "a CPU id or range like `0-3`",
        found: lossy_token(item),
    };
    if item.contains(&b':') || item.contains(&b'/') {
        return Err(ErrorKind::Invalid {
            what: "an unstrided range (`A-B:used/group` is not supported)",
            found: lossy_token(item),
        });
    }
    let (start, pos) = cpu_at(item, 0).ok_or_else(bad)??;
    let (end, pos) = match item.get(pos) {
        None => (start, pos),
        Some(b'-') => cpu_at(item, pos + 1).ok_or_else(bad)??,
        Some(_) => return Err(bad()),
    };
    if pos != item.len() {
        return Err(bad());
    }
    if start > end {
        return Err(ErrorKind::Invalid {
            what: "a range whose start is not above its end",
            found: lossy_token(item),
        });
    }
    Ok((start, end))
}

/// A CPU id starting exactly at `pos`: `None` if no digits, an error if
/// above [`MAX_CPU`].
fn cpu_at(b: &[u8], pos: usize) -> Option<Result<(u32, usize), ErrorKind>> {
    match scan_u64(b, pos) {
        Scan::NotNum => None,
        Scan::Overflow(end) => Some(Err(too_big_tok(b, pos, end))),
        Scan::Num(v, end) if v > u64::from(MAX_CPU) => Some(Err(too_big_tok(b, pos, end))),
        Scan::Num(v, end) => Some(Ok((v as u32, end))),
    }
}

fn too_big_tok(b: &[u8], s: usize, e: usize) -> ErrorKind {
    let found = lossy_token(b.get(s..e).unwrap_or_default());
    ErrorKind::Invalid {
        what: "a CPU id of at most 1048576",
        found,
    }
}

/// One 32-bit group of a hex mask: 1 to 8 hex digits.
fn parse_group(group: &[u8]) -> Result<u32, ErrorKind> {
    let bad = || ErrorKind::Invalid {
        what: "a group of 1 to 8 hex digits",
        found: lossy_token(group),
    };
    if group.is_empty() || group.len() > 8 {
        return Err(bad());
    }
    group.iter().try_fold(0u32, |acc, &c| {
        let d = char::from(c).to_digit(16).ok_or_else(bad)?;
        Ok((acc << 4) | d)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn list(t: &str) -> Result<CpuList, ParseError> {
        CpuList::parse_list(t.as_bytes(), "list")
    }

    #[test]
    fn is_list_is_what_parse_list_accepts() {
        let mut rng = crate::rng::Rng::new(37);
        let alphabet = b"0123456789,-: /\n\tx";
        for _ in 0..20_000 {
            let len = (rng.next_u64() % 12) as usize;
            let t: Vec<u8> = (0..len)
                .map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize])
                .collect();
            let shown = String::from_utf8_lossy(&t);
            let ok = CpuList::parse_list(&t, "l").is_ok();
            assert_eq!(CpuList::is_list(&t), ok, "{shown:?}");
        }
        for t in [
            "0-3,8", "", " 7 \n", "zz", "0-", "3-1", "1048577", "0-31:2/4",
        ] {
            assert_eq!(CpuList::is_list(t.as_bytes()), list(t).is_ok(), "{t:?}");
        }
    }

    fn mask(t: &str) -> Result<CpuList, ParseError> {
        CpuList::parse_mask(t.as_bytes(), "mask")
    }

    #[test]
    fn lists_round_trip_canonically() {
        for (input, canon) in [
            ("0-1\n", "0-1"),
            ("0-3,5,7-9", "0-3,5,7-9"),
            ("5,0-3,4", "0-5"),
            ("3,3,3", "3"),
            ("0-10,2-4", "0-10"),
            ("\n", ""),
            ("", ""),
            ("1048576", "1048576"),
        ] {
            let l = list(input).unwrap();
            assert_eq!(l.to_string(), canon, "{input:?}");
            assert_eq!(list(&l.to_string()).unwrap(), l);
        }
    }

    #[test]
    fn queries() {
        let l = list("0-3,5,7-9").unwrap();
        assert_eq!(l.len(), 8);
        assert_eq!(l.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 5, 7, 8, 9]);
        assert!(l.contains(0) && l.contains(5) && l.contains(9));
        assert!(!l.contains(4) && !l.contains(10) && !l.contains(u32::MAX));
        assert!(list("").unwrap().is_empty());
        assert_eq!(
            [9, 1, 2].into_iter().collect::<CpuList>().to_string(),
            "1-2,9"
        );
    }

    #[test]
    fn bad_lists_are_clear_errors() {
        for bad in [
            "5-3",
            "1048577",
            "0-99999999999999999999",
            "a",
            "1-",
            "-1",
            "1,,2",
            "0-31:2/4",
            "1 2",
            "1-2-3",
        ] {
            let e = list(bad).unwrap_err();
            assert_eq!((e.file, e.line), ("list", 1), "{bad:?}");
        }
        assert!(list("5-3").unwrap_err().to_string().contains("start"));
        assert!(list("2000000").unwrap_err().to_string().contains("1048576"));
    }

    #[test]
    fn masks() {
        assert_eq!(mask("3\n").unwrap().to_string(), "0-1");
        assert_eq!(mask("ff,ffffffff").unwrap().to_string(), "0-39");
        assert_eq!(mask("00000000,00000000").unwrap().to_string(), "");
        assert_eq!(mask("80000000,00000001").unwrap().to_string(), "0,63");
        assert_eq!(mask("1,0,0").unwrap().to_string(), "64");
        assert_eq!(mask("F0").unwrap().to_string(), "4-7");
        for bad in ["", "g", "123456789", "1,,2", ",", "0x3"] {
            if bad.is_empty() {
                assert!(mask(bad).unwrap().is_empty());
            } else {
                assert!(mask(bad).is_err(), "{bad:?}");
            }
        }
        // A bit above MAX_CPU is refused, zero groups up there are fine.
        let mut big = String::from("1");
        big.push_str(&",00000000".repeat(32769));
        assert!(mask(&big).is_err());
        let zeros = "0,".repeat(40000) + "1";
        assert_eq!(mask(&zeros).unwrap().to_string(), "0");
    }

    #[test]
    fn vm_capture() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/vm-2cpu-6.18/");
        let read = |f: &str| std::fs::read(format!("{dir}{f}")).unwrap();
        let l = CpuList::parse_list(&read("proc_irq_24_smp_affinity_list"), "l").unwrap();
        let m = CpuList::parse_mask(&read("proc_irq_24_smp_affinity"), "m").unwrap();
        assert_eq!(l, m);
        assert_eq!(l.to_string(), "0-1");
        let e = CpuList::parse_list(&read("proc_irq_24_effective_affinity_list"), "l").unwrap();
        assert_eq!(
            e,
            CpuList::parse_mask(&read("proc_irq_24_effective_affinity"), "m").unwrap()
        );
    }
}
