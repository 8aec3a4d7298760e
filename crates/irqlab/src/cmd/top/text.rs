//! Text lines of `top --batch`: mpstat-like blocks, every line starting
//! with the UTC time of the sample (or `Average:` for the summary over the
//! whole run, printed at the end, also after SIGINT/SIGTERM). Per block:
//! one line per shown IRQ row (`--sort`, `--threshold`; `-` = gap) with its
//! device, a `SUM` line (per-CPU sum of the kept rows, like `mpstat -I
//! SUM`), softirqs, CPU time shares (with `--cpus` the aggregate line is
//! `sel`, followed by a line naming the CPUs it sums, as `show`'s table),
//! then interrupt threads. Formatting
//! only: numbers come from the [`Report`].

use crate::report::{self, IrqLine, IrqSection, Report, SortKey};
use crate::sampler::{SelfCost, Strategy};
use crate::threads::ThreadCpu;
use std::io::Write;

/// How rows are chosen and ordered, and whether to add self-cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOpts {
    pub sort: SortKey,
    pub threshold: Option<f64>,
    pub verbose: bool,
}

/// One block of lines.
pub struct Block<'a> {
    /// First column: `HH:MM:SS.mmm` or `Average:`.
    pub stamp: &'a str,
    pub report: &'a Report,
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
fn pad(out: &mut impl Write, mut n: usize) -> std::io::Result<()> {
    while n > 0 {
        let k = n.min(SPACES.len());
        out.write_all(SPACES.get(..k).unwrap_or_default())?;
        n -= k;
    }
    Ok(())
}

/// ` {:>w$}` of `Fixed(v, dec)` (`-` for `None`): one space, the text
/// right-aligned in `w` columns, written as bytes (a block has a few
/// hundred such cells; `std::fmt`'s padding writes them a char at a time).
fn fixed_cell(out: &mut impl Write, v: Option<f64>, dec: u32, w: usize) -> std::io::Result<()> {
    let mut buf = [0u8; FIXED_ROOM];
    let text: &[u8] = match v {
        None => b"-",
        Some(r) => match fixed(r, dec, &mut buf) {
            Some(n) => buf.get(..n).unwrap_or_default(),
            None => return write!(out, " {:>w$}", Fixed(r, dec)),
        },
    };
    pad(out, 1 + w.saturating_sub(text.len()))?;
    out.write_all(text)
}

fn rate(v: Option<f64>) -> Rate {
    Rate(v)
}

/// `report::name_of(l).chars().count()` without building the name.
fn name_width(l: &IrqLine) -> usize {
    if !l.actions.is_empty() {
        let chars: usize = l.actions.iter().map(|a| width(a)).sum();
        chars + l.actions.len() - 1
    } else if !l.description.is_empty() {
        width(&l.description)
    } else {
        width(&l.label)
    }
}

/// Printed width of `CPU{c}`.
fn cpu_head_len(c: u32) -> usize {
    3 + c.checked_ilog10().unwrap_or(0) as usize + 1
}

/// `CPU{c}` right-aligned in `w` columns, after one space.
fn cpu_head(c: u32, w: usize, out: &mut impl Write) -> std::io::Result<()> {
    pad(out, 1 + w.saturating_sub(cpu_head_len(c)))?;
    out.write_all(b"CPU")?;
    out.write_all(itoa::Buffer::new().format(c).as_bytes())
}

/// Printed width of `s` as `std::fmt` counts it for padding (chars).
fn width(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// `{s:<w$}`, written as bytes.
fn left(out: &mut impl Write, s: &str, w: usize) -> std::io::Result<()> {
    out.write_all(s.as_bytes())?;
    pad(out, w.saturating_sub(width(s)))
}

/// `{s:>w$}`, written as bytes.
fn right(out: &mut impl Write, s: &str, w: usize) -> std::io::Result<()> {
    pad(out, w.saturating_sub(width(s)))?;
    out.write_all(s.as_bytes())
}

/// `{t}  {label:<lw$}`: the start of every line of a block.
fn line_start(out: &mut impl Write, t: &str, label: &str, lw: usize) -> std::io::Result<()> {
    out.write_all(t.as_bytes())?;
    out.write_all(b"  ")?;
    left(out, label, lw)
}

/// `{:<w$}` of [`report::name_of`], written without building the name.
fn name_cell(out: &mut impl Write, l: &IrqLine, w: usize) -> std::io::Result<()> {
    if !l.actions.is_empty() {
        for (k, a) in l.actions.iter().enumerate() {
            if k > 0 {
                out.write_all(b",")?;
            }
            out.write_all(a.as_bytes())?;
        }
    } else if !l.description.is_empty() {
        out.write_all(l.description.as_bytes())?;
    } else {
        out.write_all(l.label.as_bytes())?;
    }
    pad(out, w.saturating_sub(name_width(l)))
}

/// Least width of the label, device, total and per-CPU columns; a block
/// whose labels, names or rates are longer widens the column for all its
/// lines (header, rows, SUM), so that columns stay aligned.
const LABEL: usize = 12;
const DEVICE: usize = 20;
const TOTAL: usize = 12;
const PER_CPU: usize = 10;

/// Column widths of one IRQ section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Widths {
    label: usize,
    device: usize,
    total: usize,
    cpu: usize,
}

impl Widths {
    /// Widths fitting every row of `s` (shown or not, so that the columns
    /// do not move when a row crosses the threshold) and its SUM line
    /// (`per` and `total`: [`report::rate_sum`] of its rows, summed once
    /// per block by the caller).
    fn of(s: &IrqSection, per: &[f64], total: f64) -> Widths {
        let mut w = Widths {
            label: LABEL,
            device: DEVICE,
            total: TOTAL,
            cpu: PER_CPU,
        };
        let mut top_total = 0.0f64;
        let mut top_cell = 0.0f64;
        for r in &s.rows {
            w.label = w.label.max(width(&r.label));
            w.device = w.device.max(name_width(r));
            top_total = top_total.max(r.total_rate.unwrap_or(0.0));
            for v in r.rates.iter().flatten().flatten() {
                top_cell = top_cell.max(*v);
            }
        }
        top_total = top_total.max(total);
        top_cell = per.iter().fold(top_cell, |m, v| m.max(*v));
        w.total = w.total.max(rate(Some(top_total)).len());
        w.cpu = w.cpu.max(rate(Some(top_cell)).len());
        for c in &s.cpus {
            w.cpu = w.cpu.max(cpu_head_len(*c));
        }
        w
    }
}

fn header(
    t: &str,
    what: &str,
    second: &str,
    cpus: &[u32],
    w: Widths,
    out: &mut impl Write,
) -> std::io::Result<()> {
    line_start(out, t, what, w.label)?;
    out.write_all(b" ")?;
    left(out, second, w.device)?;
    out.write_all(b" ")?;
    right(out, "total/s", w.total)?;
    for c in cpus {
        cpu_head(*c, w.cpu, out)?;
    }
    out.write_all(b"\n")
}

/// The rows shown: `--threshold` (default: active rows only), sorted.
pub fn shown_rows<'r>(s: &'r IrqSection, opts: &TextOpts) -> Vec<&'r IrqLine> {
    let min = opts.threshold.unwrap_or(0.0);
    let mut rows: Vec<&IrqLine> = s
        .rows
        .iter()
        .filter(|l| report::above_threshold(l, min))
        .collect();
    report::sort_rows(&mut rows, opts.sort, |l| l, |l| l.total_rate);
    rows
}

fn irq_lines(
    t: &str,
    s: &IrqSection,
    opts: &TextOpts,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let (per, total) = report::rate_sum(s.cpus.len(), s.rows.iter());
    let w = Widths::of(s, &per, total);
    let (lw, dw, tw, cw) = (w.label, w.device, w.total, w.cpu);
    header(t, "IRQ", "DEVICE", &s.cpus, w, out)?;
    for r in shown_rows(s, opts) {
        line_start(out, t, &r.label, lw)?;
        out.write_all(b" ")?;
        name_cell(out, r, dw)?;
        fixed_cell(out, r.total_rate, 1, tw)?;
        for v in r.rates.iter().flatten() {
            fixed_cell(out, *v, 1, cw)?;
        }
        out.write_all(b"\n")?;
    }
    line_start(out, t, "SUM", lw)?;
    out.write_all(b" ")?;
    left(out, "all rows", dw)?;
    fixed_cell(out, Some(total), 1, tw)?;
    for v in per {
        fixed_cell(out, Some(v), 1, cw)?;
    }
    out.write_all(b"\n")
}

fn softirq_lines(t: &str, s: &report::SoftirqSection, out: &mut impl Write) -> std::io::Result<()> {
    let mut w = Widths {
        label: LABEL,
        device: DEVICE,
        total: TOTAL,
        cpu: PER_CPU,
    };
    for row in &s.rows {
        w.label = w.label.max(width(&row.name));
        w.total = w.total.max(rate(row.total_rate).len());
        for v in row.rates.iter().flatten() {
            w.cpu = w.cpu.max(rate(*v).len());
        }
    }
    for c in &s.cpus {
        w.cpu = w.cpu.max(cpu_head_len(*c));
    }
    let (lw, dw, tw, cw) = (w.label, w.device, w.total, w.cpu);
    header(t, "SOFTIRQ", "", &s.cpus, w, out)?;
    for row in &s.rows {
        line_start(out, t, &row.name, lw)?;
        pad(out, 1 + dw)?;
        fixed_cell(out, row.total_rate, 1, tw)?;
        for v in row.rates.iter().flatten() {
            fixed_cell(out, *v, 1, cw)?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// What follows the time on the `CPU` header line: `{:<12}` of `CPU`,
/// then ` {:>8}` of each column name (a test ties it to the format).
const CPU_HEAD: &[u8] =
    b"  CPU              %usr    %nice     %sys  %iowait     %irq    %soft   %steal    %idle\n";

/// What follows the time on the `THREAD` header line.
const THREAD_HEAD: &[u8] = b"  THREAD           %CPU  LASTCPU  NAME\n";

fn cpu_lines(t: &str, s: &report::StatSection, out: &mut impl Write) -> std::io::Result<()> {
    out.write_all(t.as_bytes())?;
    out.write_all(CPU_HEAD)?;
    for l in &s.cpu_pct {
        let mut id = itoa::Buffer::new();
        let cpu = match l.cpu {
            Some(c) => id.format(c),
            None => s.aggregate_label(),
        };
        line_start(out, t, cpu, 12)?;
        match &l.pct {
            Some(p) => {
                for v in p.in_print_order() {
                    fixed_cell(out, Some(v), 2, 8)?;
                }
            }
            None => fixed_cell(out, None, 2, 8)?,
        }
        out.write_all(b"\n")?;
    }
    if let Some(note) = s.aggregate_note() {
        writeln!(out, "{t}  {note}")?;
    }
    Ok(())
}

/// Write one block.
pub fn write_block(b: &Block, opts: &TextOpts, out: &mut impl Write) -> anyhow::Result<()> {
    let t = b.stamp;
    let r = b.report;
    if let Some(s) = &r.interrupts {
        irq_lines(t, s, opts, out)?;
    }
    if let Some(s) = &r.softirqs {
        softirq_lines(t, s, out)?;
    }
    if let Some(s) = &r.stat {
        cpu_lines(t, s, out)?;
    }
    if !b.threads.is_empty() {
        out.write_all(t.as_bytes())?;
        out.write_all(THREAD_HEAD)?;
        for th in b.threads {
            // as `crate::tui::format::pid_text`: `-` when not known
            let (mut pid, mut last) = (itoa::Buffer::new(), itoa::Buffer::new());
            let pid = th.pid.map_or("-", |p| pid.format(p));
            let last = th.last_cpu.map_or("-", |c| last.format(c));
            line_start(out, t, pid, 12)?;
            fixed_cell(out, Some(th.cpu_pct), 2, 8)?;
            out.write_all(b" ")?;
            right(out, last, 8)?;
            out.write_all(b"  ")?;
            out.write_all(th.name.as_bytes())?;
            out.write_all(b"\n")?;
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
    fn name_width_is_the_width_of_the_printed_name() {
        let (_, report) = block_text(&TextOpts::default());
        let mut rows = report.interrupts.unwrap().rows;
        assert!(!rows.is_empty());
        let same =
            |l: &IrqLine| assert_eq!(name_width(l), report::name_of(l).chars().count(), "{l:?}");
        rows.iter().for_each(same);
        let odd = &mut rows[0];
        odd.actions = vec!["é1".into(), String::new(), "ab".into()];
        same(odd);
        odd.actions.clear();
        odd.description = "ünï  x".into();
        same(odd);
        odd.description.clear();
        odd.label = "NMÏ".into();
        same(odd);
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
                cpu_head(c, w, &mut b).unwrap();
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
                    fixed_cell(&mut b, Some(v), dec, w).unwrap();
                    assert_eq!(String::from_utf8(b).unwrap(), format!(" {want:>w$}"));
                }
            }
            let r = rate(Some(v));
            assert_eq!(r.len(), format!("{v:.1}").len(), "{v:e}");
        }
        let mut b = Vec::new();
        fixed_cell(&mut b, None, 1, 5).unwrap();
        assert_eq!(b, b"     -");
    }

    use crate::tui::fixtures;

    fn block_text(opts: &TextOpts) -> (String, Report) {
        let report = fixtures::sample(4, 12).report;
        let b = Block {
            stamp: "12:00:00.000",
            report: &report,
            threads: &[],
            self_cost: SelfCost::default(),
            strategy: Strategy::ProcInterrupts,
        };
        let mut out = Vec::new();
        write_block(&b, opts, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), report)
    }

    /// (label, device) of the IRQ rows, up to the SUM line.
    fn rows(text: &str) -> Vec<(String, String)> {
        text.lines()
            .skip(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .take_while(|f| f[1] != "SUM")
            .map(|f| (f[1].to_string(), f[2].to_string()))
            .collect()
    }

    #[test]
    fn rows_show_the_device_after_the_number() {
        let (text, report) = block_text(&TextOpts::default());
        let sec = report.interrupts.as_ref().unwrap();
        let shown = rows(&text);
        assert!(shown.len() > 3, "{text}");
        for (label, device) in &shown {
            let line = sec.rows.iter().find(|r| &r.label == label).unwrap();
            let name = report::name_of(line);
            assert!(
                name.starts_with(device.as_str()),
                "{label}: {device} vs {name}"
            );
        }
        assert!(
            shown
                .iter()
                .any(|(l, d)| l.parse::<u32>().is_ok() && d != l),
            "numbered rows carry a device name: {text}"
        );
    }

    /// End column (in chars) of every whitespace-separated field of `l`.
    fn field_ends(l: &str) -> Vec<usize> {
        let chars: Vec<char> = l.chars().collect();
        (0..chars.len())
            .filter(|&i| {
                !chars[i].is_whitespace() && chars.get(i + 1).is_none_or(|c| c.is_whitespace())
            })
            .map(|i| i + 1)
            .collect()
    }

    #[test]
    fn long_device_names_and_big_rates_keep_the_columns_aligned() {
        let mut report = fixtures::sample(4, 12).report;
        let sec = report.interrupts.as_mut().unwrap();
        let n = sec.rows.len();
        // names of 21 to 24 characters: the columns must not shift
        for (k, r) in sec
            .rows
            .iter_mut()
            .filter(|r| r.irq.is_some())
            .take(4)
            .enumerate()
        {
            r.actions = vec![format!("virtio{k}-input.{}", "q".repeat(k + 5))];
        }
        sec.rows[n - 1].total_rate = Some(123_456_789_012.5);
        let b = Block {
            stamp: "12:00:00.000",
            report: &report,
            threads: &[],
            self_cost: SelfCost::default(),
            strategy: Strategy::ProcInterrupts,
        };
        let mut out = Vec::new();
        write_block(&b, &TextOpts::default(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .take_while(|l| !l.contains("SOFTIRQ"))
            .collect();
        let head = field_ends(lines[0]);
        assert!(lines.len() > 5, "{text}");
        assert!(text.contains("virtio3-input.qqqqqqqq"), "{text}");
        for l in &lines[1..] {
            // the device may hold spaces: compare from the right; a
            // single-value row has its total and one value
            let ends = field_ends(l);
            let h = head.len();
            let per_cpu = ends.len() >= 5 && ends[ends.len() - 5..] == head[h - 5..];
            let single = ends[ends.len() - 2..] == head[h - 5..h - 3];
            assert!(per_cpu || single, "columns moved:\n{}\n{l}", lines[0]);
        }
    }

    #[test]
    fn threads_without_a_known_pid_show_a_dash_not_0() {
        let report = fixtures::sample(2, 4).report;
        let thread = |pid| crate::threads::ThreadCpu {
            pid,
            name: "ksoftirqd/0".into(),
            kind: crate::threads::ThreadKind::Ksoftirqd { cpu: 0 },
            cpu_pct: 1.5,
            last_cpu: None,
            cpu_ns: 0,
        };
        let threads = [thread(None), thread(Some(15))];
        let b = Block {
            stamp: "12:00:00.000",
            report: &report,
            threads: &threads,
            self_cost: SelfCost::default(),
            strategy: Strategy::ProcInterrupts,
        };
        let mut out = Vec::new();
        write_block(&b, &TextOpts::default(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let pids: Vec<&str> = text
            .lines()
            .filter(|l| l.ends_with("ksoftirqd/0"))
            .map(|l| l.split_whitespace().nth(1).unwrap())
            .collect();
        assert_eq!(pids, ["-", "15"], "{text}");
    }

    #[test]
    fn sort_keys_order_the_rows() {
        let opts = |sort| TextOpts {
            sort,
            ..TextOpts::default()
        };
        let (text, report) = block_text(&opts(SortKey::Irq));
        let sec = report.interrupts.as_ref().unwrap();
        let nums: Vec<u32> = rows(&text)
            .iter()
            .filter_map(|r| r.0.parse().ok())
            .collect();
        assert!(
            nums.len() > 2 && nums.windows(2).all(|w| w[0] < w[1]),
            "{nums:?}"
        );
        let (text, _) = block_text(&opts(SortKey::Rate));
        let rate = |l: &str| sec.rows.iter().find(|r| r.label == l).unwrap().total_rate;
        let rates: Vec<f64> = rows(&text).iter().map(|r| rate(&r.0).unwrap()).collect();
        assert!(rates.windows(2).all(|w| w[0] >= w[1]), "{rates:?}");
        let (text, _) = block_text(&opts(SortKey::Total));
        let total = |l: &str| sec.rows.iter().find(|r| r.label == l).unwrap().since_boot;
        let totals: Vec<_> = rows(&text).iter().map(|r| total(&r.0)).collect();
        assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");
        let (text, _) = block_text(&opts(SortKey::Name));
        let names: Vec<String> = rows(&text)
            .iter()
            .map(|r| report::name_of(sec.rows.iter().find(|x| x.label == r.0).unwrap()))
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }

    #[test]
    fn threshold_hides_rows_below_it() {
        let all = rows(&block_text(&TextOpts::default()).0).len();
        let (text, report) = block_text(&TextOpts {
            threshold: Some(5000.0),
            ..TextOpts::default()
        });
        let sec = report.interrupts.as_ref().unwrap();
        let shown = rows(&text);
        assert!(shown.len() < all, "{text}");
        for (label, _) in shown {
            let l = sec.rows.iter().find(|r| r.label == label).unwrap();
            assert!(l.total_rate.unwrap() >= 5000.0 || l.gaps.is_some());
        }
    }

    #[test]
    fn sum_line_adds_every_kept_row_per_cpu() {
        let (text, report) = block_text(&TextOpts::default());
        let sec = report.interrupts.as_ref().unwrap();
        let sum = text.lines().find(|l| l.contains(" SUM ")).unwrap();
        let f: Vec<&str> = sum.split_whitespace().collect();
        // stamp, SUM, "all", "rows", total, CPU0 …
        let total: f64 = f[4].parse().unwrap();
        let want: f64 = sec.rows.iter().filter_map(|r| r.total_rate).sum();
        assert!((total - want).abs() < 0.1, "{total} vs {want}");
        let cpu0: f64 = f[5].parse().unwrap();
        let want0: f64 = sec
            .rows
            .iter()
            .filter(|r| r.shape == irqlab_core::Shape::PerCpu)
            .filter_map(|r| r.rates.as_ref()?.first().copied().flatten())
            .sum();
        assert!((cpu0 - want0).abs() < 0.1, "{cpu0} vs {want0}");
    }
}
