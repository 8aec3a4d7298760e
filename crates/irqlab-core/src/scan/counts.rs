//! The hot loop of the table parsers: a run of space-separated decimal
//! counts (`/proc/interrupts` and `/proc/softirqs` print each as ` %10u`),
//! read into any [`CountSink`] (a `Vec<u64>`, or a writer that turns them
//! into output as they are read).
//!
//! Columns of exactly that width are read one at a time first: eight
//! zero columns by six 16-byte compares, four by three word compares, a
//! one-digit column by two, any other by one 16-byte compare. From the
//! first that is not such a column on,
//! the rest is read 64 bytes at a time: for each 64-byte block two bit masks are built (digit bytes, space
//! bytes; the compiler turns the loop into vector compares), and every
//! count that starts and ends inside the block is read from the masks'
//! bit positions: no byte loop over the padding, no branch per byte.
//! Whatever the fast path does not fully understand — a tab, a byte that
//! is neither digit nor space (the description, a glued `1900GIC-0`), a
//! 20-digit run, the last bytes of a line — it leaves to the caller's
//! byte-wise loop, at a position where that loop gives the same result.

/// Where a parser puts a row's counts as it reads them: a `Vec<u64>`
/// (the model), or a writer that formats each count from its digits as
/// it is read (`show --format json`), so that a row's counts need not be
/// stored and read again.
pub trait CountSink {
    /// A new row: drop the counts held; `room` counts are expected (a
    /// vector reserves them).
    fn start(&mut self, room: usize);
    /// Counts held since [`CountSink::start`].
    fn held(&self) -> usize;
    /// One count: its value and its token (`digits`: ASCII digits only,
    /// possibly with leading zeros).
    fn push(&mut self, v: u64, digits: &[u8]);
    /// `n` (at most 8) counts of `0`.
    fn zeros(&mut self, n: usize);
    /// The first count held above the kernel's 32-bit range, if any.
    fn first_above_u32(&self) -> Option<u64>;
}

impl CountSink for Vec<u64> {
    #[inline]
    fn start(&mut self, room: usize) {
        self.clear();
        self.reserve(room);
    }

    #[inline]
    fn held(&self) -> usize {
        self.len()
    }

    #[inline]
    fn push(&mut self, v: u64, _digits: &[u8]) {
        Vec::push(self, v);
    }

    #[inline]
    fn zeros(&mut self, n: usize) {
        match [0; 8].get(..n) {
            Some(z) => self.extend_from_slice(z),
            None => self.resize(self.len() + n, 0),
        }
    }

    fn first_above_u32(&self) -> Option<u64> {
        first_above_u32(self)
    }
}

/// The first of `counts` above the kernel's 32-bit range, if any.
pub(crate) fn first_above_u32(counts: &[u64]) -> Option<u64> {
    // an OR of the high halves first: vectorised, and nearly always zero
    if counts.iter().fold(0, |acc, &c| acc | c >> 32) == 0 {
        return None;
    }
    counts.iter().copied().find(|&c| c > u64::from(u32::MAX))
}

/// Bit `i` of the first mask is set where `block[i]` is an ASCII digit;
/// of the second, where it is a space.
#[inline]
fn masks(block: &[u8; 64]) -> (u64, u64) {
    let mut digits = 0u64;
    let mut spaces = 0u64;
    for k in 0..4 {
        let Some(chunk) = block[16 * k..].first_chunk::<16>() else {
            continue;
        };
        let (d, s) = masks16(chunk);
        digits |= u64::from(d) << (16 * k);
        spaces |= u64::from(s) << (16 * k);
    }
    (digits, spaces)
}

/// [`masks`] of 16 bytes with SSE2 (part of every x86_64 CPU): one
/// compare and one move-mask per class, through `safe_arch`'s safe
/// wrappers (this crate has no unsafe code).
#[cfg(target_arch = "x86_64")]
#[inline]
fn masks16(chunk: &[u8; 16]) -> (u16, u16) {
    use safe_arch::{
        cmp_eq_mask_i8_m128i as eq, load_unaligned_m128i, min_u8_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i as splat, sub_i8_m128i,
    };
    let v = load_unaligned_m128i(chunk);
    // a digit is a byte at most 9 above '0' (unsigned, wrapping)
    let t = sub_i8_m128i(v, splat(b'0' as i8));
    let digit = eq(min_u8_m128i(t, splat(9)), t);
    let space = eq(v, splat(b' ' as i8));
    (
        move_mask_i8_m128i(digit) as u16,
        move_mask_i8_m128i(space) as u16,
    )
}

/// [`masks`] of 16 bytes, portable: a byte loop.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn masks16(chunk: &[u8; 16]) -> (u16, u16) {
    let mut digits = 0u16;
    let mut spaces = 0u16;
    for (i, &c) in chunk.iter().enumerate() {
        digits |= u16::from(c.wrapping_sub(b'0') < 10) << i;
        spaces |= u16::from(c == b' ') << i;
    }
    (digits, spaces)
}

/// The value of a run of at most 19 ASCII digits (no overflow possible).
#[inline]
fn value(digits: &[u8]) -> u64 {
    digits
        .iter()
        .fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'))
}

/// Twelve spaces (the rest of a 16-byte load is not looked at).
const BLANK_COLUMN: u128 = u128::from_le_bytes(*b"            \0\0\0\0");
/// The bytes of a one-digit column that must be spaces: 0 to 9 and 11.
const ONE_DIGIT_MASK: u128 = u128::from_le_bytes([
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0, 0, 0, 0,
]);

/// Four columns of `0` and the space that starts the next one (the last
/// three bytes of 48 are not looked at).
const ZERO_COLUMNS: &[u8; 48] = b"          0          0          0          0    ";

/// Whether `b` starts with four kernel columns of `0` (each a space,
/// nine spaces and `0`) and the next column's space: three word compares.
#[inline]
fn zero_columns(b: &[u8; 48]) -> bool {
    let word = |k: usize, of: &[u8; 48]| {
        let mut w = [0u8; 16];
        w.copy_from_slice(&of[16 * k..16 * k + 16]);
        u128::from_le_bytes(w)
    };
    // bytes 32 to 44 of the last word
    const TAIL: u128 = (1u128 << (13 * 8)) - 1;
    word(0, b) == word(0, ZERO_COLUMNS)
        && word(1, b) == word(1, ZERO_COLUMNS)
        && (word(2, b) ^ word(2, ZERO_COLUMNS)) & TAIL == 0
}

/// Eight columns of `0` and the space that starts the next one (the
/// last seven bytes of 96 are not looked at).
const ZERO_COLUMNS_8: &[u8; 96] = b"          0          0          0          0          0          0          0          0        ";

/// Whether `b` starts with eight kernel columns of `0` and the next
/// column's space ([`zero_columns`] twice over): six 16-byte compares.
#[inline]
fn zero_columns_8(b: &[u8; 96]) -> bool {
    // all 16 bytes of the first five words, bytes 80 to 88 of the last
    let mut all = u16::MAX;
    for k in 0..6 {
        let (Some(x), Some(want)) = (
            b.get(16 * k..).and_then(|r| r.first_chunk::<16>()),
            ZERO_COLUMNS_8
                .get(16 * k..)
                .and_then(|r| r.first_chunk::<16>()),
        ) else {
            return false;
        };
        let care = if k == 5 { 0x1ff } else { u16::MAX };
        all &= eq16(x, want) | !care;
    }
    all == u16::MAX
}

/// Bit `i` set where `a[i] == b[i]`, with SSE2 (one compare, one move-mask).
#[cfg(target_arch = "x86_64")]
#[inline]
fn eq16(a: &[u8; 16], b: &[u8; 16]) -> u16 {
    use safe_arch::{cmp_eq_mask_i8_m128i as eq, load_unaligned_m128i, move_mask_i8_m128i};
    move_mask_i8_m128i(eq(load_unaligned_m128i(a), load_unaligned_m128i(b))) as u16
}

/// [`eq16`], portable: a byte loop.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn eq16(a: &[u8; 16], b: &[u8; 16]) -> u16 {
    let mut m = 0u16;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        m |= u16::from(x == y) << i;
    }
    m
}

/// The count of one kernel column at the start of `field`: a space, then
/// spaces and at least one digit filling ten bytes, then the space that
/// starts the next column (`seq_put_decimal_ull_width(" ", v, 10)`, how
/// `/proc/interrupts` and `/proc/softirqs` print every per-CPU count).
/// `None` for anything else; else the count and where its digits start.
#[inline]
fn column(field: &[u8; 16]) -> Option<(u64, usize)> {
    let (d, s) = masks16(field);
    // bits 1..=10: the ten bytes after the leading space
    let digits = d & 0x7fe;
    let low = digits & digits.wrapping_neg();
    // spaces, then digits up to byte 10; spaces around the field
    let aligned =
        digits != 0 && digits.wrapping_add(low) == 0x800 && s & 0xfff == 0x801 | (0x7fe & !digits);
    if !aligned {
        return None;
    }
    let first = low.trailing_zeros() as usize;
    Some((value(field.get(first..11)?), first))
}

/// Read counts from `pos` (a space or the first digit of a count) into
/// `out` until it holds `limit` values or a block holds something the fast
/// path leaves to the byte loop. Returns the position to go on from: just
/// past the last count read (a space follows it), or `pos` itself.
///
/// Columns of the kernel's fixed width are read one at a time first (one
/// 16-byte compare each, [`column`]); the first that is not one (a wider
/// count, a tab, the description) goes to the 64-byte blocks.
#[inline]
pub(crate) fn read_spaced<S: CountSink + ?Sized>(
    line: &[u8],
    mut pos: usize,
    limit: usize,
    out: &mut S,
) -> usize {
    while out.held() < limit {
        // eight or four zero columns at once (a big machine's device rows
        // are mostly zeros)
        let left = limit - out.held();
        if left >= 4 {
            let rest = line.get(pos..).unwrap_or_default();
            if left >= 8 {
                if let Some(eight) = rest.first_chunk::<96>() {
                    if zero_columns_8(eight) {
                        out.zeros(8);
                        pos += 88;
                        continue;
                    }
                }
            }
            if let Some(four) = rest.first_chunk::<48>() {
                if zero_columns(four) {
                    out.zeros(4);
                    pos += 44;
                    continue;
                }
            }
        }
        let Some(field) = line.get(pos..).and_then(|r| r.first_chunk::<16>()) else {
            break;
        };
        // a one-digit column (most counts of a big machine are 0) by two
        // word compares, any other by its masks
        let blanks = u128::from_le_bytes(*field) ^ BLANK_COLUMN;
        let digit = field[10].wrapping_sub(b'0');
        if blanks & ONE_DIGIT_MASK == 0 && digit < 10 {
            out.push(u64::from(digit), &field[10..11]);
        } else {
            match column(field) {
                Some((v, first)) => out.push(v, field.get(first..11).unwrap_or_default()),
                None => break,
            }
        }
        pos += 11;
    }
    while out.held() < limit {
        let Some(block) = line.get(pos..).and_then(|r| r.first_chunk::<64>()) else {
            break;
        };
        let (d, s) = masks(block);
        let other = !(d | s);
        // only the bytes before the first other byte are the fast path's
        let valid = match other.trailing_zeros() {
            0 => break,
            64 => u64::MAX,
            n => (1u64 << n) - 1,
        };
        // counts that end inside that part: a digit followed by a space
        let mut ends = d & (s >> 1) & valid;
        let mut starts = d & !(d << 1);
        let room = limit - out.held();
        let mut k = 0;
        let mut next = 0;
        while ends != 0 && k < room {
            let a = starts.trailing_zeros() as usize;
            let b = ends.trailing_zeros() as usize;
            if b - a >= 19 {
                // a run of 20+ digits may overflow: the byte loop says so
                break;
            }
            let digits = block.get(a..=b).unwrap_or_default();
            out.push(value(digits), digits);
            k += 1;
            next = b + 1;
            starts &= starts - 1;
            ends &= ends - 1;
        }
        if next > 0 {
            pos += next;
        } else if d == 0 && other == 0 {
            // only spaces: skip them all
            pos += 64;
        } else {
            break;
        }
        if other != 0 || ends != 0 {
            // the rest of this block is the byte loop's
            break;
        }
    }
    pos
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_padded_counts_and_stops_before_text() {
        let mut line = String::new();
        let want: Vec<u64> = (0..40).map(|i| (i * 7919) % 100_000).collect();
        for v in &want {
            line.push_str(&format!("{v:>10} "));
        }
        line.push_str("  IR-PCI-MSI 327680-edge      eth0");
        let mut out = Vec::new();
        let end = read_spaced(line.as_bytes(), 0, usize::MAX, &mut out);
        assert!(out.len() > 30, "{}", out.len());
        assert_eq!(out, want[..out.len()]);
        assert_eq!(line.as_bytes()[end], b' ');
        assert!(line[..end].ends_with(&out.last().unwrap().to_string()));
    }

    #[test]
    fn masks_match_a_byte_loop() {
        let mut rng = crate::rng::Rng::new(7);
        let alphabet = b" 0123456789\t:/x\x80\xff";
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            for b in &mut block {
                *b = alphabet[(rng.next_u64() % alphabet.len() as u64) as usize];
            }
            let (d, s) = masks(&block);
            for (i, &c) in block.iter().enumerate() {
                assert_eq!(d >> i & 1 == 1, c.is_ascii_digit(), "{block:?} {i}");
                assert_eq!(s >> i & 1 == 1, c == b' ', "{block:?} {i}");
            }
        }
    }

    #[test]
    fn kernel_columns_are_read_one_at_a_time() {
        let mut line = String::new();
        let want: Vec<u64> = (0..50)
            .map(|i| [0, 7, 4_294_967_295, 1234][i % 4])
            .collect();
        for v in &want {
            line.push_str(&format!(" {v:>10}"));
        }
        line.push_str("  IR-PCI-MSI 327680-edge      eth0");
        for (i, &v) in want.iter().enumerate() {
            let mut field = [0u8; 16];
            field.copy_from_slice(&line.as_bytes()[11 * i..11 * i + 16]);
            assert_eq!(column(&field).map(|c| c.0), Some(v), "{i}");
        }
        let mut out = Vec::new();
        let end = read_spaced(line.as_bytes(), 0, usize::MAX, &mut out);
        assert_eq!(out, want);
        assert_eq!(end, 11 * want.len());
        // not a column: no leading space, a tab, a glued or wider count,
        // a digit run not reaching byte 10, only spaces
        for bad in [
            "x         1       ",
            " \t        1       ",
            "          12x     ",
            " 12345678901      ",
            "         1  2     ",
            "                  ",
            "           1      ",
        ] {
            let field: [u8; 16] = bad.as_bytes()[..16].try_into().unwrap();
            assert_eq!(column(&field), None, "{bad:?}");
        }
    }

    #[test]
    fn any_line_reads_as_the_byte_loop_reads_it() {
        // the fast paths against a plain tokenizer: every count they read
        // is a whole space-separated token, and they stop where the next
        // token is not one they can read
        let mut rng = crate::rng::Rng::new(3);
        let alphabet = b"          0123456789\tx";
        for case in 0..5000 {
            let mut line = Vec::new();
            for _ in 0..(rng.next_u64() % 40) {
                let v = match rng.next_u64() % 4 {
                    0 => rng.next_u64() % [10, 100_000, 10_000_000_000][case % 3],
                    _ => 0,
                };
                line.extend_from_slice(format!(" {v:>10}").as_bytes());
                if rng.next_u64() % 8 == 0 {
                    let c = alphabet[(rng.next_u64() % alphabet.len() as u64) as usize];
                    let at = (rng.next_u64() as usize) % (line.len() + 1);
                    line.insert(at, c);
                }
            }
            let limit = match case % 5 {
                0 => (rng.next_u64() % 30) as usize,
                _ => usize::MAX,
            };
            let mut out = Vec::new();
            let end = read_spaced(&line, 0, limit, &mut out);
            let tokens: Vec<&[u8]> = line[..end]
                .split(|&c| c == b' ')
                .filter(|t| !t.is_empty())
                .collect();
            let read: Vec<u64> = tokens
                .iter()
                .map(|t| std::str::from_utf8(t).unwrap().parse().unwrap())
                .collect();
            assert_eq!(out, read, "{:?}", String::from_utf8_lossy(&line));
            assert!(out.len() <= limit);
            assert!(end == line.len() || line[end] == b' ' || end == 0, "{end}");
        }
    }

    #[test]
    fn zero_columns_are_four_kernel_zeros_and_a_space() {
        let mut line = String::new();
        for _ in 0..4 {
            line.push_str(&format!(" {:>10}", 0));
        }
        line.push_str(" xyz");
        let b: [u8; 48] = line.as_bytes()[..48].try_into().unwrap();
        assert!(zero_columns(&b));
        for at in 0..45 {
            for c in [b'1', b'\t', b'x', b'0'] {
                let mut bad = b;
                if bad[at] == c {
                    continue;
                }
                bad[at] = c;
                assert!(!zero_columns(&bad), "{at} {c}");
            }
        }
        assert!(!zero_columns(&[b' '; 48]));
    }

    #[test]
    fn eight_zero_columns_are_eight_kernel_zeros_and_a_space() {
        let mut line = String::new();
        for _ in 0..8 {
            line.push_str(&format!(" {:>10}", 0));
        }
        line.push_str(" xyzxyzx");
        let b: [u8; 96] = line.as_bytes()[..96].try_into().unwrap();
        assert!(zero_columns_8(&b));
        for at in 0..96 {
            for c in [b'1', b'\t', b'x', b'0', b' '] {
                let mut bad = b;
                if bad[at] == c {
                    continue;
                }
                bad[at] = c;
                // bytes past the next column's space are not looked at
                assert_eq!(zero_columns_8(&bad), at > 88, "{at} {c}");
            }
        }
        let mut out = Vec::new();
        assert_eq!(read_spaced(line.as_bytes(), 0, usize::MAX, &mut out), 88);
        assert_eq!(out, [0; 8]);
    }

    #[test]
    fn stops_at_the_limit() {
        let line = "         1          2          3          4          5          6          7 x";
        let mut out = Vec::new();
        let end = read_spaced(line.as_bytes(), 0, 2, &mut out);
        assert_eq!(out, [1, 2]);
        assert_eq!(&line[..end], "         1          2");
    }

    #[test]
    fn leaves_tabs_long_runs_and_glued_counts_to_the_byte_loop() {
        for line in [
            "\t        1          2          3          4          5          6          7",
            "12345678901234567890123         1          2          3          4          5",
            "       1900GIC-0          2          3          4          5          6       ",
        ] {
            let mut out = Vec::new();
            let end = read_spaced(line.as_bytes(), 0, usize::MAX, &mut out);
            assert_eq!((end, out.len()), (0, 0), "{line:?}");
        }
    }
}
