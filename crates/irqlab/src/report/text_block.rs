//! Text blocks of a rates report: the text lines of `top --batch` and
//! `replay --batch`, mpstat-like blocks, every line starting
//! with the UTC time of the sample (or `Average:` for the summary over the
//! whole run, printed at the end, also after SIGINT/SIGTERM). Per block:
//! one line per shown IRQ row (`--sort`, `--threshold`; `-` = gap) with its
//! device, a `SUM` line (per-CPU sum of the kept rows, like `mpstat -I
//! SUM`; an s390 sub-class row is left out when its class row is kept:
//! [`report::SumRows`]), the labels of rows gone since the earlier
//! snapshot (only when some are), softirqs (and the vectors gone), CPU time shares (with `--cpus` the aggregate line is
//! `sel`, followed by a line naming the CPUs it sums, as `show`'s table),
//! then interrupt threads. Formatting only: numbers, the shown rows and
//! their order come from [`ReusedRates`]; lines are written as bytes
//! into the block's buffer, which the caller writes out.

use crate::export::grid::{visible_text, visible_width};
use crate::report::{self, IrqRates, ReusedRates, SoftirqRates, SortKey};
use crate::sampler::{SelfCost, Strategy};
use crate::threads::ThreadCpu;
use std::io::Write;

/// How rows are chosen and ordered (given to [`ReusedRates::new`]), and
/// whether to add self-cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOpts {
    pub sort: SortKey,
    pub threshold: Option<f64>,
    pub verbose: bool,
}

/// The stamp of the block over the whole run.
pub const AVERAGE: &str = "Average:";

/// One block of lines.
pub struct Block<'a> {
    /// First column: `HH:MM:SS.mmm` or [`AVERAGE`].
    pub stamp: &'a str,
    pub rates: &'a ReusedRates,
    pub threads: &'a [ThreadCpu],
    /// irqlab's cost (per sample; mean per sample in the summary).
    pub self_cost: SelfCost,
    pub strategy: Strategy,
}

/// A rate as printed (one decimal, `-` for a gap), formatted on the
/// stack: a block prints a few hundred of them per sample, and a `String`
/// each was most of text's allocations after the report's own.
#[derive(Clone, Copy)]
struct Rate(Option<f64>);

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(r) = self.0 else {
            return f.pad("-");
        };
        Fixed(r, 1).fmt(f)
    }
}

impl Rate {
    /// Printed width (bytes; the text is ASCII).
    fn len(self) -> usize {
        let Some(r) = self.0 else {
            return 1;
        };
        let mut buf = [0u8; FIXED_ROOM];
        match fixed(r, 1, &mut buf) {
            Some(n) => n,
            None => format!("{r:.1}").len(),
        }
    }
}

/// `{:.N}` of a float (N = the second field, at most 3), formatted by
/// [`fixed`] on the stack, through `std::fmt` only where `fixed` does
/// not apply.
#[derive(Clone, Copy)]
struct Fixed(f64, u32);

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf = [0u8; FIXED_ROOM];
        match fixed(self.0, self.1, &mut buf) {
            Some(n) => f.pad(std::str::from_utf8(buf.get(..n).unwrap_or_default()).unwrap_or("?")),
            None => f.pad(&format!("{:.*}", self.1 as usize, self.0)),
        }
    }
}

/// Room [`fixed`] needs: 20 integer digits, the point, 3 decimals.
const FIXED_ROOM: usize = 24;

/// `format!("{v:.dec}")` (`dec` ≤ 3) at the start of `buf`, byte for byte,
/// without `std::fmt`'s exact float printing (most of text's per-sample
/// cost): v = M × 2^E exactly, so v × 10^dec is the integer M × 10^dec
/// shifted right by −E, rounded half to even as `std` rounds an exact
/// tie. `None` (print with `std`) for negative (also −0.0), non-finite
/// or huge (≥ 2^63 / 10^dec) values.
fn fixed(v: f64, dec: u32, buf: &mut [u8; FIXED_ROOM]) -> Option<usize> {
    if !v.is_finite() || v.is_sign_negative() || dec > 3 {
        return None;
    }
    if v == 0.0 {
        // +0.0 (−0.0 was refused above): most rates of a block
        let n = 2 + dec as usize;
        buf.get_mut(..n)?.copy_from_slice(b"0.000".get(..n)?);
        return Some(n - usize::from(dec == 0));
    }
    let scale = 10u64.pow(dec);
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = match exp {
        0 => (frac, -1074),
        _ => (frac | (1u64 << 52), exp - 1075),
    };
    let q: u64 = if e >= 0 {
        // an integer: exact when it fits
        if e > 10 {
            return None;
        }
        (m << e).checked_mul(scale)?
    } else {
        let s = e.unsigned_abs();
        if s >= 100 {
            0 // below 2^-47: rounds to zero at any `dec` ≤ 3
        } else {
            let num = u128::from(m) * u128::from(scale);
            let q = num >> s;
            let r = num & ((1u128 << s) - 1);
            let half = 1u128 << (s - 1);
            let up = r > half || (r == half && q & 1 == 1);
            u64::try_from(q + u128::from(up)).ok()?
        }
    };
    let (int, mut fr) = (q / scale, q % scale);
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut i = int;
    loop {
        k -= 1;
        *digits.get_mut(k)? = b'0' + (i % 10) as u8;
        i /= 10;
        if i == 0 {
            break;
        }
    }
    let int_digits = digits.get(k..)?;
    let n = int_digits.len();
    buf.get_mut(..n)?.copy_from_slice(int_digits);
    if dec == 0 {
        return Some(n);
    }
    *buf.get_mut(n)? = b'.';
    for j in (0..dec as usize).rev() {
        *buf.get_mut(n + 1 + j)? = b'0' + (fr % 10) as u8;
        fr /= 10;
    }
    Some(n + 1 + dec as usize)
}

/// Spaces copied for padding.
const SPACES: [u8; 64] = [b' '; 64];

/// `n` spaces.
fn pad(out: &mut Vec<u8>, mut n: usize) {
    while n > 0 {
        let k = n.min(SPACES.len());
        out.extend_from_slice(SPACES.get(..k).unwrap_or_default());
        n -= k;
    }
}

/// ` {:>w$}` of `Fixed(v, dec)` (`-` for `None`): one space, the text
/// right-aligned in `w` columns, written as bytes (a block has a few
/// hundred such cells; `std::fmt`'s padding writes them a char at a time).
fn fixed_cell(out: &mut Vec<u8>, v: Option<f64>, dec: u32, w: usize) {
    let mut buf = [0u8; FIXED_ROOM];
    let text: &[u8] = match v {
        None => b"-",
        Some(r) => match fixed(r, dec, &mut buf) {
            Some(n) => buf.get(..n).unwrap_or_default(),
            None => {
                let _ = write!(out, " {:>w$}", Fixed(r, dec));
                return;
            }
        },
    };
    pad(out, 1 + w.saturating_sub(text.len()));
    out.extend_from_slice(text);
}

fn rate(v: Option<f64>) -> Rate {
    Rate(v)
}

/// Printed width of `CPU{c}`.
fn cpu_head_len(c: u32) -> usize {
    3 + c.checked_ilog10().unwrap_or(0) as usize + 1
}

/// `CPU{c}` right-aligned in `w` columns, after one space.
fn cpu_head(c: u32, w: usize, out: &mut Vec<u8>) {
    pad(out, 1 + w.saturating_sub(cpu_head_len(c)));
    out.extend_from_slice(b"CPU");
    out.extend_from_slice(itoa::Buffer::new().format(c).as_bytes());
}

/// Printed width of `s` (chars; control characters as `\xNN`).
fn width(s: &str) -> usize {
    visible_width(s)
}

/// `s` as bytes, control characters as `\xNN` (a tree's text is
/// untrusted: [`crate::export::grid`]).
fn text(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(visible_text(s).as_bytes());
}

/// `{s:<w$}`, written as bytes.
fn left(out: &mut Vec<u8>, s: &str, w: usize) {
    text(out, s);
    pad(out, w.saturating_sub(width(s)));
}

/// `{s:>w$}`, written as bytes.
fn right(out: &mut Vec<u8>, s: &str, w: usize) {
    pad(out, w.saturating_sub(width(s)));
    text(out, s);
}

/// `{t}  {label:<lw$}`: the start of every line of a block.
fn line_start(out: &mut Vec<u8>, t: &str, label: &str, lw: usize) {
    out.extend_from_slice(t.as_bytes());
    out.extend_from_slice(b"  ");
    left(out, label, lw);
}

/// Least width of the label, device, total and per-CPU columns; a block
/// whose labels, names or rates are longer widens the column for all its
/// lines (header, rows, SUM), so that columns stay aligned.
const LABEL: usize = 12;
const DEVICE: usize = 20;
const TOTAL: usize = 12;
const PER_CPU: usize = 10;

/// Column widths of one section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Widths {
    label: usize,
    device: usize,
    total: usize,
    cpu: usize,
}

impl Widths {
    /// Widths fitting a section's widest label and device name, its
    /// largest total rate and per-CPU rate (the printed width of a rate
    /// grows with it) and its CPU heads.
    fn of(label: usize, device: usize, top_total: f64, top_cell: f64, cpus: &[u32]) -> Widths {
        let mut cpu = PER_CPU.max(rate(Some(top_cell)).len());
        for c in cpus {
            cpu = cpu.max(cpu_head_len(*c));
        }
        Widths {
            label: LABEL.max(label),
            device: DEVICE.max(device),
            total: TOTAL.max(rate(Some(top_total)).len()),
            cpu,
        }
    }
}

fn header(t: &str, what: &str, second: &str, cpus: &[u32], w: Widths, out: &mut Vec<u8>) {
    line_start(out, t, what, w.label);
    out.push(b' ');
    left(out, second, w.device);
    out.push(b' ');
    right(out, "total/s", w.total);
    for c in cpus {
        cpu_head(*c, w.cpu, out);
    }
    out.push(b'\n');
}

/// The IRQ table: every kept row counts for the widths and the SUM line,
/// the shown ones are printed (`--threshold`, `--sort`: [`ReusedRates`]).
fn irq_lines(t: &str, s: &IrqRates, out: &mut Vec<u8>) {
    let w = Widths::of(
        s.label_width(),
        s.name_width(),
        s.top_total(),
        s.top_cell(),
        s.cpus(),
    );
    let (lw, dw, tw, cw) = (w.label, w.device, w.total, w.cpu);
    header(t, "IRQ", "DEVICE", s.cpus(), w, out);
    for r in s.shown() {
        line_start(out, t, r.label(), lw);
        out.push(b' ');
        text(out, r.name());
        pad(out, dw.saturating_sub(r.name_width()));
        fixed_cell(out, r.total_rate(), 1, tw);
        for v in r.rates() {
            fixed_cell(out, v, 1, cw);
        }
        out.push(b'\n');
    }
    let (per, total) = s.sum();
    line_start(out, t, "SUM", lw);
    out.push(b' ');
    left(out, "all rows", dw);
    fixed_cell(out, total, 1, tw);
    for v in per {
        fixed_cell(out, v, 1, cw);
    }
    out.push(b'\n');
    if let Some(gone) = s.gone() {
        gone_line(t, gone, out);
    }
}

/// `{t}  gone since the previous sample: 24, LOC` (`Average:`: since the
/// first sample, as `show` says it): the labels of the rows (or the names
/// of the softirq vectors) the earlier snapshot had and the later one has
/// not.
#[cold]
#[inline(never)]
fn gone_line(t: &str, gone: &str, out: &mut Vec<u8>) {
    let since = if t == AVERAGE { "first" } else { "previous" };
    out.extend_from_slice(t.as_bytes());
    out.extend_from_slice(b"  gone since the ");
    out.extend_from_slice(since.as_bytes());
    out.extend_from_slice(b" sample: ");
    text(out, gone);
    out.push(b'\n');
}

fn softirq_lines(t: &str, s: &SoftirqRates, out: &mut Vec<u8>) {
    let w = Widths::of(s.name_width(), 0, s.top_total(), s.top_cell(), s.cpus());
    let (lw, dw, tw, cw) = (w.label, w.device, w.total, w.cpu);
    header(t, "SOFTIRQ", "", s.cpus(), w, out);
    for (name, total, rates) in s.rows() {
        line_start(out, t, name, lw);
        pad(out, 1 + dw);
        fixed_cell(out, total, 1, tw);
        for v in rates {
            fixed_cell(out, v, 1, cw);
        }
        out.push(b'\n');
    }
    if let Some(gone) = s.gone() {
        gone_line(t, gone, out);
    }
}

/// What follows the time on the `CPU` header line: `{:<12}` of `CPU`,
/// then ` {:>8}` of each column name (a test ties it to the format).
const CPU_HEAD: &[u8] =
    b"  CPU              %usr    %nice     %sys  %iowait     %irq    %soft   %steal    %idle\n";

/// What follows the time on the `THREAD` header line.
const THREAD_HEAD: &[u8] = b"  THREAD           %CPU  LASTCPU  NAME\n";

fn cpu_lines(t: &str, s: &report::StatSection, out: &mut Vec<u8>) {
    out.extend_from_slice(t.as_bytes());
    out.extend_from_slice(CPU_HEAD);
    for l in &s.cpu_pct {
        let mut id = itoa::Buffer::new();
        let cpu = match l.cpu {
            Some(c) => id.format(c),
            None => s.aggregate_label(),
        };
        line_start(out, t, cpu, 12);
        match &l.pct {
            Some(p) => {
                for v in p.in_print_order() {
                    fixed_cell(out, Some(v), 2, 8);
                }
            }
            None => fixed_cell(out, None, 2, 8),
        }
        out.push(b'\n');
    }
    if let Some(note) = s.aggregate_note() {
        line_start(out, t, &note, 0);
        out.push(b'\n');
    }
}

/// Write one block.
pub fn write_block(b: &Block, opts: &TextOpts, out: &mut Vec<u8>) -> anyhow::Result<()> {
    let t = b.stamp;
    let r = b.rates;
    if let Some(s) = r.interrupts() {
        irq_lines(t, s, out);
    }
    if let Some(s) = r.softirqs() {
        softirq_lines(t, s, out);
    }
    if let Some(s) = r.stat() {
        cpu_lines(t, s, out);
    }
    if !b.threads.is_empty() {
        out.extend_from_slice(t.as_bytes());
        out.extend_from_slice(THREAD_HEAD);
        for th in b.threads {
            // as `crate::tui::format::pid_text`: `-` when not known
            let (mut pid, mut last) = (itoa::Buffer::new(), itoa::Buffer::new());
            let pid = th.pid.map_or("-", |p| pid.format(p));
            let last = th.last_cpu.map_or("-", |c| last.format(c));
            line_start(out, t, pid, 12);
            fixed_cell(out, Some(th.cpu_pct), 2, 8);
            out.push(b' ');
            right(out, last, 8);
            out.extend_from_slice(b"  ");
            text(out, &th.name);
            out.push(b'\n');
        }
    }
    if opts.verbose {
        let c = &b.self_cost;
        writeln!(
            out,
            "{t}  self: cpu {} µs (user {} µs, sys {} µs), wall {} µs, strategy {}",
            c.cpu_ns / 1000,
            c.user_ns / 1000,
            c.system_ns / 1000,
            c.wall_ns / 1000,
            b.strategy.name()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header lines written as constant bytes are the formatted
    /// ones, column for column.
    #[test]
    fn constant_header_lines_equal_their_formatted_text() {
        let cpu = format!(
            "  {:<12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
            "CPU", "%usr", "%nice", "%sys", "%iowait", "%irq", "%soft", "%steal", "%idle"
        );
        assert_eq!(std::str::from_utf8(CPU_HEAD).unwrap(), cpu);
        let threads = format!("  {:<12} {:>8} {:>8}  NAME\n", "THREAD", "%CPU", "LASTCPU");
        assert_eq!(std::str::from_utf8(THREAD_HEAD).unwrap(), threads);
    }

    #[test]
    fn stack_formatted_rates_and_cpu_heads_equal_the_string_ones() {
        let old = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |r| format!("{r:.1}"));
        for v in [
            None,
            Some(0.0),
            Some(0.04),
            Some(0.05),
            Some(12.345),
            Some(1e12),
            Some(4.2e30),
            Some(1e300),
            Some(f64::MAX),
            Some(f64::INFINITY),
            Some(f64::NAN),
            Some(-1.5),
        ] {
            let o = old(v);
            assert_eq!(rate(v).to_string(), o);
            assert_eq!(rate(v).len(), o.len(), "{o}");
            assert_eq!(
                format!("{:>12}|{:<9}|", rate(v), rate(v)),
                format!("{o:>12}|{o:<9}|")
            );
        }
        for c in [0u32, 9, 10, 99, 100, 1151, u32::MAX] {
            let o = format!("CPU{c}");
            assert_eq!(cpu_head_len(c), o.len());
            for w in [0, 4, 10, 20] {
                let mut b = Vec::new();
                cpu_head(c, w, &mut b);
                assert_eq!(String::from_utf8(b).unwrap(), format!(" {o:>w$}"));
            }
        }
    }
    /// The stack formatter of rates and CPU shares is `std`'s `{:.N}`
    /// byte for byte: exact ties (0.25, 1.25 round half to even),
    /// decimals that are not exact in binary (0.05, 0.35), subnormals,
    /// integers up to the fallback's edge, and random values of every
    /// magnitude.
    #[test]
    fn fixed_point_rates_equal_std_formatting() {
        let mut vals = vec![
            0.0,
            -0.0,
            0.25,
            0.75,
            1.25,
            0.05,
            0.15,
            0.35,
            0.45,
            0.0005,
            0.0015,
            0.995,
            9.95,
            99.995,
            12345.65,
            5e-324,
            f64::MIN_POSITIVE,
            1e-30,
            (1u64 << 53) as f64,
            (1u64 << 60) as f64,
            (1u64 << 62) as f64 * 1.5,
            1e19,
            1e20,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
            -3.5,
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..40_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mag = 10f64.powi((x % 25) as i32 - 6);
            vals.push((x >> 11) as f64 / (1u64 << 53) as f64 * mag);
            vals.push(((x >> 40) as f64) / 20.0); // many exact ties
            vals.push(f64::from_bits(x >> 1));
        }
        for v in vals {
            for dec in 0..=3u32 {
                let want = format!("{:.*}", dec as usize, v);
                assert_eq!(Fixed(v, dec).to_string(), want, "{v:e} .{dec}");
                assert_eq!(format!("{:>9}", Fixed(v, dec)), format!("{want:>9}"));
                for w in [0, 3, 8, 70] {
                    let mut b = Vec::new();
                    fixed_cell(&mut b, Some(v), dec, w);
                    assert_eq!(String::from_utf8(b).unwrap(), format!(" {want:>w$}"));
                }
            }
            let r = rate(Some(v));
            assert_eq!(r.len(), format!("{v:.1}").len(), "{v:e}");
        }
        let mut b = Vec::new();
        fixed_cell(&mut b, None, 1, 5);
        assert_eq!(b, b"     -");
    }

    #[test]
    fn threads_without_a_known_pid_show_a_dash_not_0() {
        let rates = ReusedRates::default();
        let thread = |pid| crate::threads::ThreadCpu {
            pid,
            name: "ksoftirqd/0".into(),
            kind: crate::threads::ThreadKind::Ksoftirqd { cpu: 0 },
            cpu_pct: 1.5,
            last_cpu: None,
            cpu_ns: 0,
        };
        let threads = [thread(None), thread(Some(15))];
        let text = threads_text(&rates, &threads);
        let pids: Vec<&str> = text
            .lines()
            .filter(|l| l.ends_with("ksoftirqd/0"))
            .map(|l| l.split_whitespace().nth(1).unwrap())
            .collect();
        assert_eq!(pids, ["-", "15"], "{text}");
    }

    /// The text block of `threads` (no interrupt rows), default options.
    fn threads_text(rates: &ReusedRates, threads: &[crate::threads::ThreadCpu]) -> String {
        let b = Block {
            stamp: "12:00:00.000",
            rates,
            threads,
            self_cost: SelfCost::default(),
            strategy: Strategy::ProcInterrupts,
        };
        let mut out = Vec::new();
        write_block(&b, &TextOpts::default(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A name from the host (a thread's comm, a device) reaches the
    /// text with its control characters as `\xNN`, padded by that width.
    #[test]
    fn control_characters_of_names_are_escaped() {
        let rates = ReusedRates::default();
        let threads = [crate::threads::ThreadCpu {
            pid: Some(7),
            name: "\x1b]0;pwned\x07".into(),
            kind: crate::threads::ThreadKind::Ksoftirqd { cpu: 0 },
            cpu_pct: 1.5,
            last_cpu: None,
            cpu_ns: 0,
        }];
        let text = threads_text(&rates, &threads);
        assert!(text.ends_with("  \\x1b]0;pwned\\x07\n"), "{text:?}");
        let mut l = Vec::new();
        left(&mut l, "a\u{9b}", 7);
        assert_eq!(l, b"a\\x9b  ");
    }
}
