//! The hot loop of the table parsers: a run of space-separated decimal
//! counts (`/proc/interrupts` and `/proc/softirqs` print each as ` %10u`),
//! read into any [`CountSink`] (a `Vec<u64>`, or a writer that turns them
//! into output as they are read).
//!
//! Columns of exactly that width are read first: a run of zero columns
//! 64 bytes at a time over its first 17 columns (where most runs of a big
//! machine's rows end), then sixteen at a time (eleven 16-byte compares),
//! a one-digit column by two word compares, any other by one 16-byte
//! compare. From the
//! first that is not such a column on,
//! the rest is read 64 bytes at a time: for each 64-byte block two bit masks are built (digit bytes, space
//! bytes; the compiler turns the loop into vector compares), and every
//! count that starts and ends inside the block is read from the masks'
//! bit positions: no byte loop over the padding, no branch per byte.
//! Whatever the fast path does not fully understand — a tab, a byte that
//! is neither digit nor space (the description, a glued `1900GIC-0`), a
//! 20-digit run, the last bytes of a line — it leaves to the caller's
//! byte-wise loop, at a position where that loop gives the same result.
//! A short row (a small machine's few CPU columns) is read by
//! [`read_columns`] instead: kernel columns one at a time, their value
//! from one word, before the same byte-wise loop.

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
    /// One count of `len` digits (1 to 16), which are the first bytes of
    /// `run` (the text that follows them fills the rest). The same as
    /// [`CountSink::push`] of those digits; a sink may copy them as one
    /// word of fixed size.
    #[inline]
    fn push_run(&mut self, v: u64, run: &[u8; 16], len: usize) {
        self.push(v, run.get(..len).unwrap_or_default());
    }
    /// `n` counts of `0`.
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
        match [0; 16].get(..n) {
            Some(z) => self.extend_from_slice(z),
            None => self.resize(self.len() + n, 0),
        }
    }

    #[inline]
    fn first_above_u32(&self) -> Option<u64> {
        first_above_u32(self)
    }
}

/// The first of `counts` above the kernel's 32-bit range, if any.
#[inline]
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

/// Kernel columns of `0` (each a space, nine spaces and `0`): the
/// pattern repeats every 176 bytes (sixteen columns, eleven 16-byte
/// words); held twice, so that it can be read from any of its words on
/// for 176 bytes.
const ZERO_COLUMNS: [u8; 352] = {
    let mut t = [b' '; 352];
    let mut k = 10;
    while k < 352 {
        t[k] = b'0';
        k += 11;
    }
    t
};

/// Sixteen bytes of the pattern from its byte `p` (taken modulo 176).
#[inline(always)]
fn pattern16(p: usize) -> &'static [u8; 16] {
    ZERO_COLUMNS
        .get(p % 176..)
        .and_then(|r| r.first_chunk::<16>())
        .unwrap_or(&[0; 16])
}

/// `part` compared with the pattern from its byte `p`: bit `i` set where
/// byte `i` matches (four 16-byte compares).
#[inline(always)]
fn eq64_at(part: &[u8; 64], p: usize) -> u64 {
    let mut m = 0u64;
    for k in 0..4 {
        if let Some(x) = part.get(16 * k..).and_then(|r| r.first_chunk::<16>()) {
            m |= u64::from(eq16(x, pattern16(p + 16 * k))) << (16 * k);
        }
    }
    m
}

/// Whether `b` is the pattern from its byte `P` (a multiple of 16):
/// eleven 16-byte compares and-ed together, one move-mask (SSE2).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn zero_block<const P: usize>(b: &[u8; 176]) -> bool {
    use safe_arch::{
        bitand_m128i, cmp_eq_mask_i8_m128i as eq, load_unaligned_m128i, move_mask_i8_m128i,
    };
    let word = |k: usize| {
        let x = b
            .get(16 * k..)
            .and_then(|r| r.first_chunk::<16>())
            .unwrap_or(&[0; 16]);
        eq(
            load_unaligned_m128i(x),
            load_unaligned_m128i(pattern16(P + 16 * k)),
        )
    };
    let mut all = word(0);
    for k in 1..11 {
        all = bitand_m128i(all, word(k));
    }
    move_mask_i8_m128i(all) == 0xffff
}

/// [`zero_block`], portable.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn zero_block<const P: usize>(b: &[u8; 176]) -> bool {
    ZERO_COLUMNS.get(P % 176..P % 176 + 176) == Some(&b[..])
}

/// How many kernel columns of `0` `b` starts with, each followed by a
/// space (the next column's first byte), at most `most`: see
/// [`zero_prefix`].
#[inline]
fn zero_run(b: &[u8], most: usize) -> usize {
    // bytes to match: `most` columns and the space after them
    let want = most.saturating_mul(11).saturating_add(1);
    // whole columns with the byte after them matched
    (zero_prefix(b, want).saturating_sub(1) / 11).min(most)
}

/// The length of the prefix of `b` that follows the repeated pattern
/// "ten spaces, `0`" ([`ZERO_COLUMNS`]), or any length of at least
/// `want` once that much matches. The first 192 bytes (17 columns, where
/// most runs of a big machine's rows end) 64 at a time, each part's
/// mismatch found from its mask; then sixteen columns at a time
/// ([`zero_block`]); the block that differs 64 bytes at a time again,
/// the last bytes a word, then a byte, at a time.
#[inline]
fn zero_prefix(b: &[u8], want: usize) -> usize {
    let mut off = 0;
    if let Some(end) = three_parts(b, &mut off, want, 0) {
        return end;
    }
    // from byte 192 on: the pattern from its byte 16
    while off < want {
        let Some(block) = b.get(off..).and_then(|r| r.first_chunk::<176>()) else {
            break;
        };
        if !zero_block::<16>(block) {
            break;
        }
        off += 176;
    }
    // the block that differs (or the last bytes): the pattern from its
    // byte 16 again
    if let Some(end) = three_parts(b, &mut off, want, 16) {
        return end;
    }
    // (a block that differed ends the run within these 192 bytes)
    off + zero_tail(b.get(off..).unwrap_or_default(), off)
}

/// Up to three 64-byte parts of `b` from `*off` against the pattern from
/// its byte `p` (where `*off` falls in it, modulo 176): the end of
/// [`zero_prefix`]'s match where a part differs, the text ends or
/// `want` is reached; `None` (`*off` 192 bytes on) when all three match.
#[inline(always)]
fn three_parts(b: &[u8], off: &mut usize, want: usize, p: usize) -> Option<usize> {
    for k in 0..3 {
        if *off >= want {
            return Some(*off);
        }
        let Some(part) = b.get(*off..).and_then(|r| r.first_chunk::<64>()) else {
            return Some(*off + zero_tail(b.get(*off..).unwrap_or_default(), *off));
        };
        let m = eq64_at(part, p + 64 * k);
        if m != u64::MAX {
            return Some(*off + m.trailing_ones() as usize);
        }
        *off += 64;
    }
    None
}

/// [`zero_prefix`] of `rest`, the last bytes of a text whose byte `at`
/// (a multiple of 16) it starts at: a word, then a byte, at a time.
#[inline(never)]
fn zero_tail(rest: &[u8], at: usize) -> usize {
    let mut off = 0;
    while let Some(x) = rest.get(off..).and_then(|r| r.first_chunk::<16>()) {
        let w = eq16(x, pattern16(at + off));
        if w != u16::MAX {
            return off + w.trailing_ones() as usize;
        }
        off += 16;
    }
    let pattern = pattern16(at + off);
    let left = rest.get(off..).unwrap_or_default();
    off + left.iter().zip(pattern).take_while(|(x, y)| x == y).count()
}

/// Whether `b` may start with a kernel column of `0`: [`zero_run`]'s
/// first word's test, made inline; true when `b` is shorter
/// than a word (then [`zero_run`] judges).
#[inline(always)]
fn starts_zero_column(b: &[u8]) -> bool {
    match b.first_chunk::<16>() {
        Some(x) => eq16(x, pattern16(0)).trailing_ones() >= 12,
        _ => true,
    }
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
    let first = column_start(field)?;
    Some((value(field.get(first..11)?), first))
}

/// Where the digits of the kernel column at the start of `field` start
/// (see [`column`]), or `None` when it is not one.
#[inline]
fn column_start(field: &[u8; 16]) -> Option<usize> {
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
    Some(low.trailing_zeros() as usize)
}

/// Push count `v`, whose `digits` start at `at` in `line`: as a run of
/// sixteen bytes from there ([`CountSink::push_run`]) when the line goes
/// on that far.
#[inline(always)]
fn push_at<S: CountSink + ?Sized>(out: &mut S, line: &[u8], at: usize, v: u64, digits: &[u8]) {
    match line.get(at..).and_then(|r| r.first_chunk::<16>()) {
        Some(run) => out.push_run(v, run, digits.len()),
        None => out.push(v, digits),
    }
}

/// Read kernel columns ([`column`]) from `pos` into `out` until it holds
/// `limit` values or the next 16 bytes are not such a column; returns
/// the position to go on from. [`read_spaced`]'s first loop without its
/// zero runs: for rows of a few columns, where a run would be short.
#[inline]
pub(crate) fn read_columns<S: CountSink + ?Sized>(
    line: &[u8],
    mut pos: usize,
    limit: usize,
    out: &mut S,
) -> usize {
    while out.held() < limit {
        let Some(field) = line.get(pos..).and_then(|r| r.first_chunk::<16>()) else {
            break;
        };
        let Some(first) = column_start(field) else {
            break;
        };
        let digits = field.get(first..11).unwrap_or_default();
        // up to eight digits (bytes 3 to 10) by one word's arithmetic
        let v = match field.get(3..11).and_then(|w| w.first_chunk::<8>()) {
            Some(w) if first >= 3 => eight_digits(w),
            _ => value(digits),
        };
        push_at(out, line, pos + first, v, digits);
        pos += 11;
    }
    pos
}

/// Exactly `n` kernel columns ([`column`]) from `pos` to the end of
/// `line` (a narrow `/proc/softirqs` row after its colon) into `out`.
/// The last column has nothing after it to look at, so it is read from a
/// copy followed by a space. False, with `out` holding some of the
/// counts, when the rest of the line is anything else: the caller then
/// reads it by the general path, which reads the same values from such a
/// line (tested).
pub(crate) fn read_exact_columns(line: &[u8], pos: usize, n: usize, out: &mut Vec<u64>) -> bool {
    let Some(last_at) = n.checked_sub(1).map(|k| pos + 11 * k) else {
        return false;
    };
    if line.len().checked_sub(pos) != Some(11 * n) {
        return false;
    }
    // every column but the last has the next one's space in view
    if read_columns(line, pos, n - 1, out) != last_at {
        return false;
    }
    let mut last = [b' '; 16];
    match line.get(last_at..) {
        Some(tail) if tail.len() == 11 => last[..11].copy_from_slice(tail),
        _ => return false,
    }
    match column(&last) {
        Some((v, _)) => {
            out.push(v);
            true
        }
        None => false,
    }
}

/// The value of eight bytes that are spaces then ASCII digits (a space
/// reads as `0`): SWAR, three multiplications.
#[inline]
fn eight_digits(w: &[u8; 8]) -> u64 {
    // a space (0x20) becomes `0` (0x30); digits keep their bit 4
    let x = (u64::from_le_bytes(*w) | 0x1010_1010_1010_1010) - 0x3030_3030_3030_3030;
    // pairs, then fours, then the eight (the first byte is the most
    // significant digit)
    let x = (x & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(10 << 8 | 1) >> 8;
    let x = (x & 0x00ff_00ff_00ff_00ff).wrapping_mul(100 << 16 | 1) >> 16;
    (x & 0x0000_ffff_0000_ffff).wrapping_mul(10000 << 32 | 1) >> 32
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
    // just after a run of zero columns the next column is not one (the
    // run stopped there): it is not looked for again
    let mut after_run = false;
    while out.held() < limit {
        // a run of zero columns at once (a big machine's device rows are
        // mostly zeros); a column that does not start like one is told
        // here, without a call (every column of a busy row)
        if !after_run && starts_zero_column(line.get(pos..).unwrap_or_default()) {
            let left = limit - out.held();
            let zeros = zero_run(line.get(pos..).unwrap_or_default(), left);
            if zeros > 0 {
                out.zeros(zeros);
                pos += 11 * zeros;
                after_run = true;
                continue;
            }
        }
        after_run = false;
        let Some(field) = line.get(pos..).and_then(|r| r.first_chunk::<16>()) else {
            break;
        };
        // a one-digit column (most counts of a big machine are 0) by two
        // word compares, any other by its masks
        let blanks = u128::from_le_bytes(*field) ^ BLANK_COLUMN;
        let digit = field[10].wrapping_sub(b'0');
        if blanks & ONE_DIGIT_MASK == 0 && digit < 10 {
            push_at(out, line, pos + 10, u64::from(digit), &field[10..11]);
        } else {
            match column(field) {
                Some((v, first)) => push_at(
                    out,
                    line,
                    pos + first,
                    v,
                    field.get(first..11).unwrap_or_default(),
                ),
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
    fn zero_runs_are_kernel_zeros_each_with_a_space_after() {
        for n in [1, 4, 8, 15, 16, 17, 31, 32, 33, 100] {
            for tail in [" xyz", "", "\n", "  IR-PCI-MSI 1-edge", "x"] {
                let mut line = String::new();
                for _ in 0..n {
                    line.push_str(&format!(" {:>10}", 0));
                }
                line.push_str(tail);
                let b = line.as_bytes();
                // the last column counts only with a space after it
                let whole = if tail.starts_with(' ') { n } else { n - 1 };
                for most in [0, 1, n - 1, n, n + 1, usize::MAX] {
                    assert_eq!(zero_run(b, most), whole.min(most), "{n} {tail:?} {most}");
                }
                // any byte changed ends the run before its column
                for at in 0..(11 * whole) {
                    for c in [b'1', b'\t', b'x', b'0', b' '] {
                        let mut bad = b.to_vec();
                        if bad[at] == c {
                            continue;
                        }
                        bad[at] = c;
                        let got = zero_run(&bad, usize::MAX);
                        // a space before the changed byte's column may
                        // still end a whole column
                        let col = at / 11;
                        let want = if at % 11 == 0 {
                            col.saturating_sub(1)
                        } else {
                            col
                        };
                        let want = if at % 11 == 0 && c == b' ' { col } else { want };
                        assert!(got == want || got == col, "{n} {tail:?} {at} {c} {got}");
                        assert!(got <= col, "{n} {tail:?} {at} {c} {got}");
                    }
                }
                let mut out = Vec::new();
                let end = read_spaced(b, 0, usize::MAX, &mut out);
                assert!(
                    out.len() >= whole && out.iter().all(|&v| v == 0),
                    "{n} {tail:?}"
                );
                assert!(end >= 11 * whole);
            }
        }
        assert_eq!(zero_run(&[b' '; 200], usize::MAX), 0);
    }

    /// [`zero_prefix`]'s job by a byte loop: the length of the prefix of
    /// `b` that follows the pattern, capped at `want`.
    fn zero_prefix_bytes(b: &[u8], want: usize) -> usize {
        let same = b
            .iter()
            .zip(ZERO_COLUMNS.iter().cycle())
            .take_while(|(x, y)| x == y)
            .count();
        same.min(want)
    }

    #[test]
    fn zero_prefix_is_the_byte_loops_at_every_length_and_mismatch() {
        // zero columns of every length across the parts, the blocks and
        // the tail, one byte changed anywhere (or none), any cap
        let mut rng = crate::rng::Rng::new(31);
        for case in 0..20_000 {
            let cols = (rng.next_u64() % 90) as usize;
            let mut b: Vec<u8> = ZERO_COLUMNS
                .iter()
                .copied()
                .cycle()
                .take(11 * cols)
                .collect();
            b.extend_from_slice(&b"  IR-PCI-MSI 1-edge eth0"[..(rng.next_u64() % 24) as usize]);
            if case % 3 > 0 && !b.is_empty() {
                let at = (rng.next_u64() as usize) % b.len();
                b[at] = b"01 x\t9"[(rng.next_u64() % 6) as usize];
            }
            let want = match case % 4 {
                0 => usize::MAX,
                _ => (rng.next_u64() % 1100) as usize,
            };
            let got = zero_prefix(&b, want);
            assert_eq!(
                got.min(want),
                zero_prefix_bytes(&b, want),
                "{cols} {want} {:?}",
                String::from_utf8_lossy(&b)
            );
            // never more than matches
            assert!(got <= zero_prefix_bytes(&b, usize::MAX));
        }
    }

    /// A sink that keeps what it was given.
    #[derive(Default)]
    struct Recorded {
        values: Vec<u64>,
        tokens: Vec<Option<Vec<u8>>>,
    }

    impl CountSink for Recorded {
        fn start(&mut self, _room: usize) {
            *self = Recorded::default();
        }
        fn held(&self) -> usize {
            self.values.len()
        }
        fn push(&mut self, v: u64, digits: &[u8]) {
            self.values.push(v);
            self.tokens.push(Some(digits.to_vec()));
        }
        fn push_run(&mut self, v: u64, run: &[u8; 16], len: usize) {
            // the digits are the run's first `len` bytes, and no more
            assert!(
                !run.get(len).is_some_and(u8::is_ascii_digit),
                "{run:?} {len}"
            );
            self.push(v, &run[..len]);
        }
        fn zeros(&mut self, n: usize) {
            self.values.extend(std::iter::repeat_n(0, n));
            self.tokens.extend(std::iter::repeat_n(None, n));
        }
        fn first_above_u32(&self) -> Option<u64> {
            first_above_u32(&self.values)
        }
    }

    #[test]
    fn a_sink_gets_the_vectors_counts_each_with_its_own_digits() {
        let mut rng = crate::rng::Rng::new(12);
        for case in 0..3000 {
            let mut line = Vec::new();
            for _ in 0..(rng.next_u64() % 60) {
                let v = match rng.next_u64() % 5 {
                    0 => rng.next_u64() % [10, 100_000, 10_000_000_000][case % 3],
                    _ => 0,
                };
                line.extend_from_slice(format!(" {v:>10}").as_bytes());
                if rng.next_u64() % 10 == 0 {
                    let c = b"0 \tx"[(rng.next_u64() % 4) as usize];
                    let at = (rng.next_u64() as usize) % (line.len() + 1);
                    line.insert(at, c);
                }
            }
            let limit = [usize::MAX, 17, 3][case % 3];
            let (mut vec, mut rec) = (Vec::new(), Recorded::default());
            let a = read_spaced(&line, 0, limit, &mut vec);
            let b = read_spaced(&line, 0, limit, &mut rec);
            assert_eq!((a, &vec), (b, &rec.values));
            for (v, t) in rec.values.iter().zip(&rec.tokens) {
                let text = t.as_deref().unwrap_or(b"0");
                assert!(text.iter().all(u8::is_ascii_digit), "{text:?}");
                assert_eq!(
                    std::str::from_utf8(text).unwrap().parse::<u64>().unwrap(),
                    *v
                );
            }
        }
    }

    #[test]
    fn read_exact_columns_reads_what_read_u64s_reads() {
        // kernel columns (some damaged: a glued byte, a tab, a wider
        // count, a trailing blank) against the general reader: where the
        // narrow reader says yes, the values are the same; on every
        // undamaged line of counts it fits, it says yes
        let mut rng = crate::rng::Rng::new(11);
        let mut yes = 0;
        for case in 0..20_000 {
            let n = 1 + (rng.next_u64() % 8) as usize;
            let mut line = Vec::new();
            for _ in 0..n {
                let v = match rng.next_u64() % 3 {
                    0 => rng.next_u64() % [10, 100_000, 10_000_000_000, u64::MAX][case % 4],
                    _ => rng.next_u64() % 100_000_000,
                };
                line.extend_from_slice(format!(" {v:>10}").as_bytes());
            }
            let clean = line.len() == 11 * n;
            if rng.next_u64() % 4 == 0 {
                let c = b" 0x\t9-"[(rng.next_u64() % 6) as usize];
                let at = (rng.next_u64() as usize) % (line.len() + 1);
                line.insert(at, c);
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let fits = read_exact_columns(&line, 0, n, &mut a);
            let general = crate::scan::read_u64s(&line, 0, &mut b, "a count");
            if fits {
                yes += 1;
                assert_eq!(
                    Ok(a),
                    general.map(|()| b),
                    "{:?}",
                    String::from_utf8_lossy(&line)
                );
            } else if clean && line.len() == 11 * n {
                panic!(
                    "a line of {n} columns refused: {:?}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
        assert!(yes > 10_000, "{yes} lines read by columns");
        // no columns, or a start past the end
        assert!(!read_exact_columns(b"", 0, 0, &mut Vec::new()));
        assert!(!read_exact_columns(b"          1", 5, 1, &mut Vec::new()));
    }

    #[test]
    fn read_columns_reads_what_read_spaced_reads() {
        // the short-row reader against the fast path, the byte loop after
        // both (as `interrupts::read_counts` runs it) left aside: every
        // count it reads is read alike, and it stops no further on
        let mut rng = crate::rng::Rng::new(5);
        for case in 0..5000 {
            let mut line = Vec::new();
            for _ in 0..(rng.next_u64() % 10) {
                let v = match rng.next_u64() % 3 {
                    0 => rng.next_u64() % [10, 100_000, 10_000_000_000, u64::MAX][case % 4],
                    _ => rng.next_u64() % 100_000_000,
                };
                line.extend_from_slice(format!(" {v:>10}").as_bytes());
                if rng.next_u64() % 6 == 0 {
                    let c = b" 0x\t9"[(rng.next_u64() % 5) as usize];
                    let at = (rng.next_u64() as usize) % (line.len() + 1);
                    line.insert(at, c);
                }
            }
            line.extend_from_slice(b"  IO-APIC   5-edge      ACPI:Ged");
            let limit = [usize::MAX, 2, 8][case % 3];
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let end_a = read_columns(&line, 0, limit, &mut a);
            let end_b = read_spaced(&line, 0, limit, &mut b);
            assert!(a.len() <= b.len(), "{:?}", String::from_utf8_lossy(&line));
            assert_eq!(a, b[..a.len()], "{:?}", String::from_utf8_lossy(&line));
            assert!(end_a <= end_b);
            assert_eq!(end_a, 11 * a.len());
        }
        for v in [0u64, 7, 12_345_678, 99_999_999, 100_000_000, 4_294_967_295] {
            let line = format!(" {v:>10}  IO-APIC");
            let mut out = Vec::new();
            read_columns(line.as_bytes(), 0, usize::MAX, &mut out);
            assert_eq!(out, [v]);
        }
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
