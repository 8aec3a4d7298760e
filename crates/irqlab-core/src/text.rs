//! Byte-level helpers shared by the parsers: line splitting with 1-based
//! line numbers, blank skipping and overflow-checked decimal scanning.
//!
//! Hot path of every parser; kept branch-light and allocation-free.

/// Iterate over `(line_number, line_bytes)` (1-based, without `\n`; a
/// trailing `\r` is kept and treated as whitespace by callers).
pub fn lines(bytes: &[u8]) -> Lines<'_> {
    Lines {
        bytes,
        pos: 0,
        n: 0,
    }
}

/// Iterator returned by [`lines`].
pub struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    n: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        self.pos += end + 1;
        self.n += 1;
        Some((self.n, &rest[..end]))
    }
}

const SPACES8: u64 = u64::from_ne_bytes([b' '; 8]);

/// Index of the first byte at or after `pos` that is not a space or tab.
#[inline]
pub fn skip_blanks(b: &[u8], mut pos: usize) -> usize {
    // Eight spaces at a time: count columns are mostly padding.
    while let Some(chunk) = b.get(pos..pos + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if u64::from_ne_bytes(w) != SPACES8 {
            break;
        }
        pos += 8;
    }
    while let Some(&c) = b.get(pos) {
        if c != b' ' && c != b'\t' {
            break;
        }
        pos += 1;
    }
    pos
}

/// Result of scanning a decimal number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Value and the index just past its last digit.
    Num(u64, usize),
    /// Digits that do not fit in a u64; index just past them.
    Overflow(usize),
    /// No digit at the position.
    NotNum,
}

/// Scan an unsigned decimal number starting exactly at `pos`.
#[inline]
pub fn scan_u64(b: &[u8], pos: usize) -> Scan {
    let mut i = pos;
    let mut v: u64 = 0;
    let mut overflow = false;
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        match v.checked_mul(10).and_then(|x| x.checked_add(u64::from(d))) {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == pos {
        Scan::NotNum
    } else if overflow {
        Scan::Overflow(i)
    } else {
        Scan::Num(v, i)
    }
}

/// Append `bytes` to `s`, replacing invalid UTF-8 (device names are
/// free text from drivers; we never fail on them).
pub fn push_lossy(s: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(t) => s.push_str(t),
        Err(_) => s.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// Trim ASCII whitespace from both ends of a byte slice.
pub fn trim(b: &[u8]) -> &[u8] {
    let s = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let e = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(s, |p| p + 1);
    &b[s..e]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_numbers() {
        assert_eq!(scan_u64(b"  12 ", 2), Scan::Num(12, 4));
        assert_eq!(scan_u64(b"x", 0), Scan::NotNum);
        assert_eq!(scan_u64(b"99999999999999999999999", 0), Scan::Overflow(23));
        assert_eq!(
            scan_u64(b"18446744073709551615", 0),
            Scan::Num(u64::MAX, 20)
        );
    }

    #[test]
    fn skips_blanks() {
        assert_eq!(skip_blanks(b"                 7", 0), 17);
        assert_eq!(skip_blanks(b"\t 7", 0), 2);
        assert_eq!(skip_blanks(b"   ", 0), 3);
    }

    #[test]
    fn numbers_lines() {
        let v: Vec<_> = lines(b"a\n\nb").collect();
        assert_eq!(v, vec![(1, &b"a"[..]), (2, &b""[..]), (3, &b"b"[..])]);
    }

    #[test]
    fn trims() {
        assert_eq!(trim(b"  a b \r"), b"a b");
        assert_eq!(trim(b"   "), b"");
    }
}
