//! Renderers: model → kernel text, byte for byte as the kernel prints it.
//!
//! Owns [`Era`], [`Arch`] and the three renderers ([`render_interrupts`],
//! [`render_softirqs`], [`render_stat`]). The format rules are those of
//! docs/formats/ (interrupts, arch rows, softirqs, stat); which rows exist
//! (visibility, arch rows, order) is the caller's business: rows are
//! rendered in model order, each with the line format its kind takes on the
//! given era and architecture. Numbered rows are regenerated from
//! [`crate::desc::DescParts`], never from their `description`. Used by
//! `synth` and by the round-trip tests. Renderers append to a `String`,
//! never fail and never panic.

mod arch;
mod interrupts;
mod softirqs;
mod stat;

pub use interrupts::render_interrupts;
pub use softirqs::render_softirqs;
pub use stat::render_stat;

use std::fmt;
use std::str::FromStr;

/// Format era of `/proc/interrupts` (see docs/formats/README.md, "Eras").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// ≤ 6.10: `"%*d: "` + `"%10u "`, chip `" %8s"`.
    E1,
    /// 6.11–6.12: same bytes as E1 (only visibility differs).
    E2,
    /// 6.13–7.1: `"%*d:"` + `" %10u"`, one space, chip `"%8s"`.
    E3,
    /// 7.2+: precision ≥ 4, left-aligned runtime-sized chip column.
    E4,
}

impl Era {
    /// Every era, oldest first.
    pub const ALL: [Era; 4] = [Era::E1, Era::E2, Era::E3, Era::E4];

    /// Lower-case name (`e1` … `e4`).
    pub fn name(self) -> &'static str {
        match self {
            Era::E1 => "e1",
            Era::E2 => "e2",
            Era::E3 => "e3",
            Era::E4 => "e4",
        }
    }
}

/// Architecture whose `/proc/interrupts` conventions to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    X86,
    Arm64,
    Arm,
    Powerpc,
    Riscv,
    Loongarch,
    Mips,
    S390,
}

impl Arch {
    /// Every architecture.
    pub const ALL: [Arch; 8] = [
        Arch::X86,
        Arch::Arm64,
        Arch::Arm,
        Arch::Powerpc,
        Arch::Riscv,
        Arch::Loongarch,
        Arch::Mips,
        Arch::S390,
    ];

    /// Lower-case name as used on the command line (`x86`, `arm64`, …).
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86 => "x86",
            Arch::Arm64 => "arm64",
            Arch::Arm => "arm",
            Arch::Powerpc => "powerpc",
            Arch::Riscv => "riscv",
            Arch::Loongarch => "loongarch",
            Arch::Mips => "mips",
            Arch::S390 => "s390",
        }
    }

    /// True on `CONFIG_GENERIC_IRQ_SHOW_LEVEL` architectures, which print a
    /// `Level`/`Edge` column on numbered rows.
    pub fn shows_level(self) -> bool {
        matches!(self, Arch::Arm | Arch::Arm64 | Arch::Powerpc | Arch::Riscv)
    }
}

/// Error of [`Era::from_str`] / [`Arch::from_str`]: the rejected name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName(pub String);

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown name {:?}", self.0)
    }
}

impl std::error::Error for UnknownName {}

impl FromStr for Era {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Era::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownName(s.to_string()))
    }
}

impl FromStr for Arch {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = match s.to_ascii_lowercase().as_str() {
            "x86_64" | "amd64" | "i686" => "x86".to_string(),
            "aarch64" => "arm64".to_string(),
            "s390x" => "s390".to_string(),
            "ppc64" | "ppc64le" => "powerpc".to_string(),
            other => other.to_string(),
        };
        Arch::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or(UnknownName(s))
    }
}

/// Width of the IRQ-number column for `nr_irqs` (docs/formats/interrupts.md, "Header"): E1–E3
/// start at 3, E4 at 4; one more per power of ten from 1000 up that is
/// `<= nr_irqs`; capped at 10.
///
/// ```
/// use irqlab_core::render::{prec, Era};
/// assert_eq!(prec(Era::E3, 424), 3);
/// assert_eq!(prec(Era::E3, 8360), 4);
/// assert_eq!(prec(Era::E4, 8360), 4);
/// assert_eq!(prec(Era::E4, 10_000), 5);
/// ```
pub fn prec(era: Era, nr_irqs: u32) -> usize {
    let mut p = 3;
    let mut x: u64 = 1000;
    while x <= u64::from(nr_irqs) && p < 10 {
        p += 1;
        x *= 10;
    }
    match era {
        Era::E4 => p.max(4),
        _ => p,
    }
}

/// Append `n` spaces.
pub(crate) fn spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// Append `v` right-aligned in `width` characters (`%*u`).
pub(crate) fn num(out: &mut String, v: u64, width: usize) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    let digits = buf.len() - i;
    spaces(out, width.saturating_sub(digits));
    out.extend(buf[i..].iter().map(|&b| char::from(b)));
}

/// Append signed `v` right-aligned in `width` characters (`%*d`).
pub(crate) fn inum(out: &mut String, v: i64, width: usize) {
    if v >= 0 {
        num(out, v.unsigned_abs(), width);
    } else {
        let digits = decimal_len(v.unsigned_abs()) + 1;
        spaces(out, width.saturating_sub(digits));
        out.push('-');
        num(out, v.unsigned_abs(), 0);
    }
}

fn decimal_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// Append `s` right-aligned in `width` characters (`%*s`).
pub(crate) fn right(out: &mut String, s: &str, width: usize) {
    spaces(out, width.saturating_sub(s.chars().count()));
    out.push_str(s);
}

/// Append `s` left-aligned in `width` characters (`%-*s`).
pub(crate) fn left(out: &mut String, s: &str, width: usize) {
    out.push_str(s);
    spaces(out, width.saturating_sub(s.chars().count()));
}

/// Count columns in the two kernel spellings.
pub(crate) mod counts_fmt {
    use super::num;

    /// `" %10u"` per count (E3+, softirqs, LoongArch IPIs).
    pub(crate) fn leading_space(out: &mut String, counts: &[u64]) {
        for &c in counts {
            out.push(' ');
            num(out, c, 10);
        }
    }

    /// `"%10u "` per count (E1/E2, most arch lines, s390).
    pub(crate) fn trailing_space(out: &mut String, counts: &[u64]) {
        for &c in counts {
            num(out, c, 10);
            out.push(' ');
        }
    }
}

/// Append a `CPU%-8d` header cell per id.
pub(crate) fn cpu_cells(out: &mut String, cpus: &[u32]) {
    for &c in cpus {
        out.push_str("CPU");
        let start = out.len();
        num(out, u64::from(c), 0);
        let len = out.len() - start;
        spaces(out, 8usize.saturating_sub(len));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        let mut s = String::new();
        num(&mut s, 0, 10);
        num(&mut s, u64::MAX, 3);
        inum(&mut s, -2147483648, 12);
        inum(&mut s, 7, 2);
        assert_eq!(s, "         018446744073709551615 -2147483648 7");
    }

    #[test]
    fn precision() {
        assert_eq!(prec(Era::E1, 0), 3);
        assert_eq!(prec(Era::E1, 999), 3);
        assert_eq!(prec(Era::E1, 1000), 4);
        assert_eq!(prec(Era::E2, 1_000_000), 7);
        assert_eq!(prec(Era::E3, u32::MAX), 10);
        assert_eq!(prec(Era::E4, 0), 4);
    }

    #[test]
    fn names_round_trip() {
        for a in Arch::ALL {
            assert_eq!(a.name().parse::<Arch>(), Ok(a));
        }
        for e in Era::ALL {
            assert_eq!(e.name().parse::<Era>(), Ok(e));
        }
        assert_eq!("aarch64".parse::<Arch>(), Ok(Arch::Arm64));
        assert!("vax".parse::<Arch>().is_err());
    }

    #[test]
    fn header_cells() {
        let mut s = String::new();
        cpu_cells(&mut s, &[0, 12, 123456789]);
        assert_eq!(s, "CPU0       CPU12      CPU123456789");
    }
}
