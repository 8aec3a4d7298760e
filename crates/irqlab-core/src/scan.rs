//! Byte-level helpers shared by the parsers: line splitting with 1-based
//! line numbers, blank skipping and overflow-checked decimal scanning.
//!
//! Hot path of every parser; kept branch-light and allocation-free.

pub(crate) mod counts;

/// The index of the first id in `ids` that an earlier one repeats, if
/// any: each id's occurrences in order after one sort, not a search of
/// the ids before every one (a hostile file of many falling ids stays
/// O(n log n)).
pub(crate) fn first_repeat_at<T: Ord>(ids: impl Iterator<Item = T>) -> Option<usize> {
    let mut at: Vec<(T, usize)> = ids.zip(0..).collect();
    at.sort_unstable();
    at.windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| w[1].1)
        .min()
}

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
        let end = find_byte_sse2(b'\n', rest).unwrap_or(rest.len());
        self.pos += end + 1;
        self.n += 1;
        Some((self.n, &rest[..end]))
    }
}

const SPACES8: u64 = u64::from_le_bytes([b' '; 8]);

/// Index of the first byte at or after `pos` that is not a space or tab.
#[inline]
pub fn skip_blanks(b: &[u8], mut pos: usize) -> usize {
    // Eight bytes at a time: count columns are mostly padding, and the
    // first non-space byte of a word is found without a byte loop.
    while let Some(chunk) = b.get(pos..pos + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w) ^ SPACES8;
        if x != 0 {
            pos += (x.trailing_zeros() / 8) as usize;
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
///
/// A plain byte loop: most counts are short (`0`), and a measured SWAR
/// variant (8 digits per step) was 1.8× slower on 1152-CPU files.
#[inline]
pub fn scan_u64(b: &[u8], pos: usize) -> Scan {
    let mut i = pos;
    let mut v: u64 = 0;
    // Up to 19 digits cannot overflow a u64: no checks on the hot path.
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    match i - pos {
        0 => Scan::NotNum,
        n if n < 20 => Scan::Num(v, i),
        _ => scan_long(b.get(pos..i).unwrap_or_default(), i),
    }
}

/// Slow path for 20+ digit runs: exact overflow check.
#[cold]
fn scan_long(digits: &[u8], end: usize) -> Scan {
    let mut v: u64 = 0;
    for &c in digits {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(c - b'0')))
        {
            Some(x) => v = x,
            None => return Scan::Overflow(end),
        }
    }
    Scan::Num(v, end)
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

/// Error if `line` (line `n` of `file`) is longer than `max` bytes.
pub fn check_line(
    file: &'static str,
    max: usize,
    n: usize,
    line: &[u8],
) -> Result<(), crate::ParseError> {
    if line.len() > max {
        let kind = crate::ErrorKind::LineTooLong {
            len: line.len(),
            max,
        };
        return Err(crate::ParseError::new(file, n, kind));
    }
    Ok(())
}

/// The first non-blank line of `it` (the header of a table file), after
/// checking every line read for length; `Empty` if there is none.
pub fn header_line<'a>(
    it: &mut Lines<'a>,
    file: &'static str,
    max: usize,
) -> Result<(usize, &'a [u8]), crate::ParseError> {
    for (n, l) in it {
        check_line(file, max, n, l)?;
        if !is_blank(l) {
            return Ok((n, l));
        }
    }
    Err(crate::ParseError::new(file, 0, crate::ErrorKind::Empty))
}

/// Where [`find_byte`] hands a scan to `memchr` (AVX2 where the CPU has it).
const SHORT: usize = 512;

/// The first `b` in `text`: sixteen bytes at a time over the first 64
/// (a label, a short row's description), then 64 at a time up to
/// 512 bytes (`SHORT`), `memchr` beyond. SSE2 up to there, so that the lines of a
/// machine with few CPUs never make the process probe the CPU's features:
/// the probe is a dozen trapped `cpuid` instructions in a VM (~60 µs here),
/// paid by every short-lived process (BENCHMARKS.md, the observer cost).
#[inline]
pub fn find_byte(b: u8, text: &[u8]) -> Option<usize> {
    find_mask(
        text,
        |c| eq_mask16(c, b),
        |block| any_eq64(block, b),
        |rest| memchr::memchr(b, rest),
        SHORT,
    )
}

/// [`find_byte`] without the hand-over: SSE2 to the end, for the lines of
/// the small files read every sample (`/proc/stat`'s `intr` line runs to
/// a few KB), so that they never cost the feature probe.
#[inline]
pub fn find_byte_sse2(b: u8, text: &[u8]) -> Option<usize> {
    find_mask(
        text,
        |c| eq_mask16(c, b),
        |block| any_eq64(block, b),
        |_| None,
        usize::MAX,
    )
}

/// The first `a` or `b` in `text`, as [`find_byte`].
#[inline]
pub fn find_either(a: u8, b: u8, text: &[u8]) -> Option<usize> {
    find_mask(
        text,
        |c| eq_mask16(c, a) | eq_mask16(c, b),
        |block| any_eq64(block, a) || any_eq64(block, b),
        |rest| memchr::memchr2(a, b, rest),
        SHORT,
    )
}

/// The last `b` in `text`, sixteen bytes at a time from the end.
#[inline]
pub fn rfind_byte(b: u8, text: &[u8]) -> Option<usize> {
    let mut end = text.len();
    while end >= 16 {
        let Some(chunk) = text.get(end - 16..end).and_then(|c| c.first_chunk::<16>()) else {
            break;
        };
        let m = eq_mask16(chunk, b);
        if m != 0 {
            return Some(end - 1 - m.leading_zeros() as usize);
        }
        end -= 16;
    }
    text.get(..end)?.iter().rposition(|&c| c == b)
}

/// The first position whose bit is set in its sixteen-byte chunk's
/// `mask`; past the first 64 bytes, 64-byte blocks are skipped while `hit`
/// finds nothing in them (the block with a hit is then read by `mask`).
#[inline]
fn find_mask(
    text: &[u8],
    mask: impl Fn(&[u8; 16]) -> u16,
    hit: impl Fn(&[u8]) -> bool,
    long: impl Fn(&[u8]) -> Option<usize>,
    limit: usize,
) -> Option<usize> {
    let mut pos = 0;
    while pos < 64 {
        let Some(chunk) = text.get(pos..).and_then(|r| r.first_chunk::<16>()) else {
            return find_tail(text, pos, &mask);
        };
        let m = mask(chunk);
        if m != 0 {
            return Some(pos + m.trailing_zeros() as usize);
        }
        pos += 16;
    }
    let blocks = text
        .get(pos..limit.min(text.len()))
        .unwrap_or_default()
        .chunks_exact(64);
    let n = blocks.len();
    pos += 64 * blocks.take_while(|b| !hit(b)).count().min(n);
    if pos >= limit {
        // a long line (many CPUs): memchr's wider vectors, its one-time
        // feature probe small against the line
        let rest = text.get(pos..).unwrap_or_default();
        return long(rest).map(|i| pos + i);
    }
    while let Some(chunk) = text.get(pos..).and_then(|r| r.first_chunk::<16>()) {
        let m = mask(chunk);
        if m != 0 {
            return Some(pos + m.trailing_zeros() as usize);
        }
        pos += 16;
    }
    find_tail(text, pos, &mask)
}

/// Fewer than sixteen bytes left at `pos`: the last sixteen of `text`,
/// whose bytes before `pos` hold no match, or a plain loop on a short text.
#[inline]
fn find_tail(text: &[u8], pos: usize, mask: &impl Fn(&[u8; 16]) -> u16) -> Option<usize> {
    if pos >= text.len() {
        return None;
    }
    let Some(last) = text.last_chunk::<16>() else {
        let mut one = [0u8; 16];
        let rest = text.get(pos..)?;
        one.get_mut(..rest.len())?.copy_from_slice(rest);
        let m = mask(&one) & ((1u32 << rest.len()) - 1) as u16;
        return (m != 0).then(|| pos + m.trailing_zeros() as usize);
    };
    let m = mask(last);
    (m != 0).then(|| text.len() - 16 + m.trailing_zeros() as usize)
}

/// Whether `b` is in `block` (64 bytes), with SSE2: four compares, or-ed,
/// one move-mask.
#[cfg(target_arch = "x86_64")]
#[inline]
fn any_eq64(block: &[u8], b: u8) -> bool {
    use safe_arch::{
        bitor_m128i as or, cmp_eq_mask_i8_m128i as eq, load_unaligned_m128i as load,
        move_mask_i8_m128i, set_splat_i8_m128i as splat,
    };
    let n = splat(b as i8);
    let acc = block
        .chunks_exact(16)
        .filter_map(|c| c.first_chunk::<16>())
        .fold(splat(0), |acc, c| or(acc, eq(load(c), n)));
    move_mask_i8_m128i(acc) != 0
}

/// [`any_eq64`], portable.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn any_eq64(block: &[u8], b: u8) -> bool {
    block.contains(&b)
}

/// Bit `i` set where `chunk[i] == b`, with SSE2 (one compare, one move-mask).
#[cfg(target_arch = "x86_64")]
#[inline]
fn eq_mask16(chunk: &[u8; 16], b: u8) -> u16 {
    use safe_arch::{
        cmp_eq_mask_i8_m128i as eq, load_unaligned_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i as splat,
    };
    move_mask_i8_m128i(eq(load_unaligned_m128i(chunk), splat(b as i8))) as u16
}

/// [`eq_mask16`], portable: a byte loop.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn eq_mask16(chunk: &[u8; 16], b: u8) -> u16 {
    let mut m = 0u16;
    for (i, &c) in chunk.iter().enumerate() {
        m |= u16::from(c == b) << i;
    }
    m
}

/// `a == b` without a `memcmp` call: eight bytes at a time (the last
/// word overlapping), a byte loop under eight (labels, short descriptions
/// compared with the last sample's).
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (Some(la), Some(lb)) = (a.last_chunk::<8>(), b.last_chunk::<8>()) else {
        return a.iter().zip(b).all(|(x, y)| x == y);
    };
    let mut pos = 0;
    while let (Some(x), Some(y)) = (
        a.get(pos..).and_then(|r| r.first_chunk::<8>()),
        b.get(pos..).and_then(|r| r.first_chunk::<8>()),
    ) {
        if u64::from_le_bytes(*x) != u64::from_le_bytes(*y) {
            return false;
        }
        pos += 8;
    }
    u64::from_le_bytes(*la) == u64::from_le_bytes(*lb)
}

/// True if the line holds only ASCII whitespace (or nothing).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// The next whitespace-separated token at or after `pos`, as
/// `(start, end)`, or `None` at the end of the line.
pub fn next_token(b: &[u8], pos: usize) -> Option<(usize, usize)> {
    let rest = b.get(pos..)?;
    let start = pos + rest.iter().position(|c| !c.is_ascii_whitespace())?;
    let tail = b.get(start..)?;
    let end = start
        + tail
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(tail.len());
    Some((start, end))
}

/// Parse a whole token as an unsigned decimal that fits in a u64 (one
/// of digits only that does not is [`TooLarge`](crate::ErrorKind::TooLarge)).
pub fn token_u64(tok: &[u8], what: &'static str) -> Result<u64, crate::ErrorKind> {
    match scan_u64(tok, 0) {
        Scan::Num(v, end) if end == tok.len() => Ok(v),
        Scan::Overflow(end) if end == tok.len() => Err(crate::ErrorKind::TooLarge {
            what,
            found: lossy_token(tok),
            bits: 64,
        }),
        _ => Err(crate::ErrorKind::ExpectedNumber {
            what,
            found: lossy_token(tok),
        }),
    }
}

/// A token for an error message (clipped to 64 bytes, lossy UTF-8).
pub fn lossy_token(tok: &[u8]) -> String {
    String::from_utf8_lossy(tok.get(..64).unwrap_or(tok)).into_owned()
}

/// Append every whitespace-separated token from `pos` to the end of the
/// line to `out` as a u64; any other token is an error naming `what`.
/// Space-padded runs of counts (a 1152-CPU `/proc/softirqs` row, the
/// `intr` line of `/proc/stat`) are read 64 bytes at a time first
/// (`counts::read_spaced`, which like the token loop takes the bytes from
/// `pos` on as they are); the token loop reads the rest, so both accept
/// and reject the same lines.
pub fn read_u64s(
    b: &[u8],
    mut pos: usize,
    out: &mut Vec<u64>,
    what: &'static str,
) -> Result<(), crate::ErrorKind> {
    pos = counts::read_spaced(b, pos, usize::MAX, out);
    let mark = out.len();
    if short_tokens(b.get(pos..).unwrap_or_default(), out) {
        return Ok(());
    }
    // something else than short counts and blanks: the token loop
    // judges the whole rest (and names the bad token)
    out.truncate(mark);
    while let Some((s, e)) = next_token(b, pos) {
        out.push(token_u64(b.get(s..e).unwrap_or_default(), what)?);
        pos = e;
    }
    Ok(())
}

/// Append every token of `b` to `out` if all of them are counts of at
/// most 19 digits between ASCII blanks (`cpu3 1 0 2 …` lines of
/// `/proc/stat`): one pass over the bytes, no token search. False (with
/// `out` holding some of them) at anything else, which is
/// [`read_u64s`]' token loop's to judge.
fn short_tokens(b: &[u8], out: &mut Vec<u64>) -> bool {
    let (mut v, mut digits) = (0u64, 0u32);
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d < 10 {
            if digits == 19 {
                return false;
            }
            v = v * 10 + u64::from(d);
            digits += 1;
        } else if c.is_ascii_whitespace() {
            if digits > 0 {
                out.push(v);
                (v, digits) = (0, 0);
            }
        } else {
            return false;
        }
    }
    if digits > 0 {
        out.push(v);
    }
    true
}

/// A note (not an error: the parse goes on) for the first per-CPU count in
/// `counts` above the kernel's 32-bit range: the kernel prints these
/// counters as `%10u`, so such a value is not the kernel's (docs/limits.md).
pub(crate) fn range_note(
    file: &'static str,
    line: usize,
    counts: &[u64],
) -> Option<crate::error::ParseError> {
    counts::first_above_u32(counts).map(|v| range_of(file, line, v))
}

/// The note of [`range_note`] for the count `v`.
pub(crate) fn range_of(file: &'static str, line: usize, v: u64) -> crate::error::ParseError {
    crate::error::ParseError::new(
        file,
        line,
        crate::error::ErrorKind::Invalid {
            what: "a count the kernel can print (at most 4294967295); \
                   its deltas are gaps",
            found: v.to_string(),
        },
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn find_byte_and_same_bytes_agree_with_the_plain_ones() {
        let mut rng = crate::rng::Rng::new(21);
        for _ in 0..6_000 {
            let len = (rng.next_u64() % 700) as usize;
            let a: Vec<u8> = (0..len)
                .map(|_| match rng.next_u64() % 64 {
                    // sparse hits, so that the 64-byte steps and the tails are tried
                    k @ 0..4 => b"\n:ab"[k as usize],
                    _ => b' ',
                })
                .collect();
            for b in [b'\n', b':', b'z'] {
                assert_eq!(find_byte(b, &a), a.iter().position(|&c| c == b), "{a:?}");
                assert_eq!(
                    find_byte_sse2(b, &a),
                    a.iter().position(|&c| c == b),
                    "{a:?}"
                );
                assert_eq!(rfind_byte(b, &a), a.iter().rposition(|&c| c == b), "{a:?}");
                let either = a.iter().position(|&c| c == b || c == b'a');
                assert_eq!(find_either(b, b'a', &a), either, "{a:?}");
            }
            let mut c = a.clone();
            if !c.is_empty() && rng.next_u64() % 2 == 0 {
                let at = (rng.next_u64() as usize) % c.len();
                c[at] = b"ab \n"[(rng.next_u64() % 4) as usize];
            }
            if rng.next_u64() % 8 == 0 {
                c.push(b'a');
            }
            assert_eq!(same_bytes(&a, &c), a == c, "{a:?} {c:?}");
        }
    }

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
    fn scan_matches_std_parse() {
        for s in [
            "0",
            "7 ",
            "12345678",
            "123456789",
            "4294967295 x",
            "00000001",
            "99999999 ",
            "1234x",
            "x",
            "  ",
            "18446744073709551615",
        ] {
            let padded = format!("{s}        ");
            let naive: String = padded.chars().take_while(char::is_ascii_digit).collect();
            let want = if naive.is_empty() {
                Scan::NotNum
            } else {
                naive
                    .parse::<u64>()
                    .map_or(Scan::Overflow(naive.len()), |v| Scan::Num(v, naive.len()))
            };
            assert_eq!(scan_u64(padded.as_bytes(), 0), want, "{s:?}");
            assert_eq!(scan_u64(s.as_bytes(), 0), want, "{s:?} unpadded");
        }
        for v in [
            0u64,
            9,
            10,
            99,
            100,
            12_345_678,
            99_999_999,
            100_000_000,
            u32::MAX as u64,
        ] {
            for tail in [" ", ":", "\n", "GIC-0 xx", "/"] {
                let s = format!("{v}{tail}12345678");
                let n = v.to_string().len();
                assert_eq!(scan_u64(s.as_bytes(), 0), Scan::Num(v, n), "{s:?}");
            }
        }
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
    fn reads_tokens() {
        let mut v = Vec::new();
        assert!(read_u64s(b"x: 1  2\t3 \r", 2, &mut v, "n").is_ok());
        assert_eq!(v, vec![1, 2, 3]);
        assert!(read_u64s(b"1 2x", 0, &mut v, "n").is_err());
        assert!(read_u64s(b"99999999999999999999999", 0, &mut v, "n").is_err());
        assert_eq!(next_token(b"   ", 0), None);
        assert_eq!(next_token(b"ab", 5), None);
    }

    /// The token loop alone, as `read_u64s` was before its fast path.
    fn tokens_one_by_one(b: &[u8], mut pos: usize, out: &mut Vec<u64>) -> Result<(), ()> {
        while let Some((s, e)) = next_token(b, pos) {
            out.push(token_u64(&b[s..e], "n").map_err(|_| ())?);
            pos = e;
        }
        Ok(())
    }

    #[test]
    fn padded_counts_read_as_the_token_loop_reads_them() {
        let mut rng = crate::rng::Rng::new(11);
        let alphabet = b"      0123456789\t:x\r";
        for case in 0..4000 {
            let len = (rng.next_u64() % 400) as usize;
            let mut line: Vec<u8> = (0..len)
                .map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize])
                .collect();
            if case % 2 == 0 {
                // the kernel's layout: `%10u` columns, long digit runs now and then
                line.clear();
                for k in 0..(rng.next_u64() % 60) {
                    let v = match k % 7 {
                        0 => u64::MAX - rng.next_u64() % 3,
                        _ => rng.next_u64() % 100_000,
                    };
                    line.extend_from_slice(format!(" {v:>10}").as_bytes());
                }
                if case % 4 == 0 {
                    let at = (rng.next_u64() as usize) % (line.len() + 1);
                    line.insert(
                        at,
                        alphabet[(rng.next_u64() % alphabet.len() as u64) as usize],
                    );
                }
            }
            let pos = (rng.next_u64() as usize) % (line.len() + 1);
            let (mut fast, mut slow) = (vec![7], vec![7]);
            let got = read_u64s(&line, pos, &mut fast, "n").map_err(|_| ());
            let want = tokens_one_by_one(&line, pos, &mut slow);
            assert_eq!(got, want, "{:?} from {pos}", String::from_utf8_lossy(&line));
            if want.is_ok() {
                assert_eq!(
                    fast,
                    slow,
                    "{:?} from {pos}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
    }

    #[test]
    fn trims() {
        assert_eq!(trim(b"  a b \r"), b"a b");
        assert_eq!(trim(b"   "), b"");
    }
}
