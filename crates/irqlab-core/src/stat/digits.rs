//! Short decimal numbers read eight bytes at a time: the counts of
//! `/proc/stat`'s `cpu` lines and of `/proc/PID/stat` and `schedstat`,
//! which the kernel prints as `%llu` separated by single spaces.
//!
//! Each reader here is a fast path that accepts a subset of what the
//! general token readers of `crate::scan` accept and yields exactly their
//! values there; on anything else it declines (`None`/`false`) and the
//! caller runs the general reader, which also names what is wrong.

/// One in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte.
const HIGH: u64 = 0x80 * ONES;

/// The eight bytes of `b` from `pos` as a little-endian word, bytes past
/// the end of `b` read as 0 (not a digit, not a blank).
#[inline(always)]
pub(crate) fn word_at(b: &[u8], pos: usize) -> u64 {
    match b.get(pos..).and_then(|r| r.first_chunk::<8>()) {
        Some(c) => u64::from_le_bytes(*c),
        None => tail_word(b, pos),
    }
}

/// [`word_at`] where fewer than eight bytes are left: the last eight
/// bytes shifted down.
#[inline]
fn tail_word(b: &[u8], pos: usize) -> u64 {
    match b.last_chunk::<8>() {
        Some(last) => {
            let skip = pos.saturating_sub(b.len() - 8);
            let bits = u32::try_from(8 * skip).unwrap_or(u32::MAX);
            u64::from_le_bytes(*last).checked_shr(bits).unwrap_or(0)
        }
        None => short_text_word(b, pos),
    }
}

/// [`word_at`] of a text shorter than eight bytes, a byte at a time.
#[cold]
#[inline(never)]
fn short_text_word(b: &[u8], pos: usize) -> u64 {
    let rest = b.get(pos..).unwrap_or_default();
    rest.iter()
        .enumerate()
        .fold(0, |w, (i, &c)| w | u64::from(c) << (8 * i))
}

/// How many of the low bytes of `w` are ASCII digits before the first
/// that is not (0 to 8). A byte of 0x80 or more may carry into the bytes
/// above it, which are past the first non-digit and not counted.
#[inline(always)]
pub(crate) fn digit_run(w: u64) -> usize {
    let x = w ^ (0x30 * ONES);
    let not_digit = (x.wrapping_add(0x76 * ONES) | x) & HIGH;
    (not_digit.trailing_zeros() / 8) as usize
}

/// The value of the `n` (1 to 8) low digit bytes of `w`, the first the
/// most significant: the digits are moved to the top (zeros below are
/// leading zeros), then pairs, quads and octets are combined in place.
#[inline(always)]
fn value(w: u64, n: usize) -> u64 {
    let d = (w & (0x0f * ONES)) << (8 * (8 - n.clamp(1, 8)));
    let d = (d.wrapping_mul(10) + (d >> 8)) & 0x00ff_00ff_00ff_00ff;
    let d = (d.wrapping_mul(100) + (d >> 16)) & 0x0000_ffff_0000_ffff;
    (d.wrapping_mul(10_000) + (d >> 32)) & 0xffff_ffff
}

/// The number whose digits start at `pos` and the offset just past it,
/// for runs of 1 to 16 digits; `None` for none or more (the general
/// reader's to judge: up to 20 digits may still fit a u64). Inlined in
/// the loop of [`spaced_u64s`]; readers of a few numbers share
/// [`number_at`].
#[inline(always)]
pub(crate) fn short_u64(b: &[u8], pos: usize) -> Option<(u64, usize)> {
    let w = word_at(b, pos);
    let (v, end) = match digit_run(w) {
        0 => return None,
        n @ 1..8 => (value(w, n), pos + n),
        _ => long_u64(b, pos, value(w, 8)),
    };
    (end > pos).then_some((v, end))
}

/// [`short_u64`] as one copy shared by the readers of a few numbers per
/// line (fewer code lines per sample than a copy inlined in each).
#[inline(never)]
pub(crate) fn number_at(b: &[u8], pos: usize) -> Option<(u64, usize)> {
    short_u64(b, pos)
}

/// The rest of [`short_u64`] past the first eight digits (`hi`) of the
/// number at `pos`: up to eight more, a byte at a time; `(0, pos)` (none)
/// past sixteen.
#[inline(never)]
fn long_u64(b: &[u8], pos: usize, hi: u64) -> (u64, usize) {
    let mut v = hi;
    let mut end = pos + 8;
    while let Some(d) = b.get(end).map(|c| c.wrapping_sub(b'0')).filter(|&d| d < 10) {
        if end - pos == 16 {
            return (0, pos);
        }
        v = v * 10 + u64::from(d);
        end += 1;
    }
    (v, end)
}

/// Append to `out` the numbers from `pos` to the end of `b` when they are
/// runs of 1 to 16 digits, each after one or more spaces (a `cpu` line
/// after its key). False at anything else (`out` then holds some of
/// them): a tab, a `\r`, a longer number, any other byte.
#[inline]
pub(crate) fn spaced_u64s(b: &[u8], mut pos: usize, out: &mut Vec<u64>) -> bool {
    loop {
        while b.get(pos) == Some(&b' ') {
            pos += 1;
        }
        if pos >= b.len() {
            return true;
        }
        let Some((v, end)) = short_u64(b, pos) else {
            return false;
        };
        // a number ends at a space or at the end of the line
        match b.get(end) {
            None => {
                out.push(v);
                return true;
            }
            Some(b' ') => {
                out.push(v);
                pos = end + 1;
            }
            Some(_) => return false,
        }
    }
}

/// Bit 7 of each byte of `w` set where the byte is a space; exact for
/// every byte.
#[inline]
pub(crate) fn spaces(w: u64) -> u64 {
    let x = w ^ (0x20 * ONES);
    !(((x & !HIGH) + !HIGH) | x) & HIGH
}

/// Bit 7 of each byte of `w` set where the byte is at most 0x20 (a space
/// or a control byte, every ASCII blank among them); exact for every byte.
#[inline]
pub(crate) fn blanks_or_controls(w: u64) -> u64 {
    !((w & !HIGH) + 0x5f * ONES) & !w & HIGH
}

/// The end of the token that starts at `s` when a space or the end of
/// the line ends it, found eight bytes at a time; `None` when a control
/// byte (a tab, a `\r`, a NUL …) ends it first.
#[inline]
pub(crate) fn spaced_token_end(line: &[u8], s: usize) -> Option<usize> {
    let mut at = s;
    let end = loop {
        let stop = blanks_or_controls(word_at(line, at));
        if stop != 0 {
            break (at + (stop.trailing_zeros() / 8) as usize).min(line.len());
        }
        at += 8;
    };
    matches!(line.get(end), None | Some(b' ')).then_some(end)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The leading digits of `b[pos..]` as the general scanner reads them.
    fn plain(b: &[u8], pos: usize) -> Option<(u64, usize)> {
        let digits = b
            .get(pos..)?
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let s = std::str::from_utf8(&b[pos..pos + digits]).ok()?;
        (1..=16)
            .contains(&digits)
            .then(|| (s.parse().unwrap(), pos + digits))
    }

    #[test]
    fn short_numbers_are_the_digits_read_one_by_one() {
        let mut rng = Rng::new(7);
        let alphabet = b"0123456789 \t\r\n:x-\x00\x80\xff/";
        for case in 0..20_000 {
            let len = (rng.next_u64() % 40) as usize;
            let b: Vec<u8> = (0..len)
                .map(|_| match rng.next_u64() % 3 {
                    0 => alphabet[(rng.next_u64() % alphabet.len() as u64) as usize],
                    _ => b'0' + (rng.next_u64() % 10) as u8,
                })
                .collect();
            let pos = (rng.next_u64() as usize) % (len + 2);
            assert_eq!(short_u64(&b, pos), plain(&b, pos), "{case}: {b:?} at {pos}");
        }
        for v in [0u64, 9, 10, 99_999_999, 100_000_000, 9_999_999_999_999_999] {
            let s = v.to_string();
            assert_eq!(short_u64(s.as_bytes(), 0), Some((v, s.len())));
        }
        assert_eq!(short_u64(b"10000000000000000", 0), None);
    }

    #[test]
    fn byte_classes_are_exact_for_every_byte() {
        for c in 0..=255u8 {
            for lane in 0..8 {
                // the byte among others of every kind, below and above it
                for fill in [0u8, b' ', b'7', 0x80, 0xff, 0x21] {
                    let mut w = [fill; 8];
                    w[lane] = c;
                    let w = u64::from_le_bytes(w);
                    let bit = |m: u64| (m >> (8 * lane + 7)) & 1 == 1;
                    assert_eq!(bit(spaces(w)), c == b' ', "{c:#x} {lane} {fill:#x}");
                    assert_eq!(bit(blanks_or_controls(w)), c <= 0x20, "{c:#x} {lane}");
                }
            }
        }
    }
}
