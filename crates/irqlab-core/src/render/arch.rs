//! Architecture summary lines of `/proc/interrupts` (docs/formats/arch-rows.md):
//! x86 (E1–E3 and the E4 table), arm64/arm/riscv/LoongArch/MIPS IPI lines,
//! single-value `ERR`/`Err`, the arm `FIQ` line, powerpc and s390 lines.
//!
//! Must not invent or reorder rows; one row in, one line out (no `\n`).

use super::counts_fmt::{leading_space, trailing_space};
use super::{num, right, spaces, Arch, Era};
use crate::interrupts::IrqRow;

/// Render one non-numbered row (without the newline).
pub(super) fn arch_row(out: &mut String, row: &IrqRow, era: Era, arch: Arch, p: usize) {
    let desc = row.description.as_str();
    if arch == Arch::S390 {
        return s390_row(out, row);
    }
    match (row.counts.as_slice(), ipi_index(&row.label)) {
        // Single global value (`ERR`, `MIS`, `Err`): `"%*s: %10u"`. With one
        // CPU a per-CPU row without description prints the same bytes.
        ([c], _) if desc.is_empty() => {
            right(out, &row.label, p);
            out.push_str(": ");
            num(out, *c, 10);
        }
        // arm `FIQ:` owner line: no counts.
        ([], _) => {
            right(out, &row.label, p);
            out.push(':');
            spaces(out, 14);
            out.push_str(desc);
        }
        (counts, Some(idx)) if arch != Arch::X86 => ipi_row(out, counts, idx, desc, era, arch, p),
        (counts, _) if arch == Arch::X86 && era == Era::E4 => {
            right(out, &row.label, p);
            out.push(':');
            leading_space(out, counts);
            out.push_str("  ");
            out.push_str(desc);
        }
        // x86 ≤7.1, powerpc and anything else: `"%*s: "` + `"%10u "` + two spaces.
        (counts, _) => {
            right(out, &row.label, p);
            out.push_str(": ");
            trailing_space(out, counts);
            out.push_str("  ");
            out.push_str(desc);
        }
    }
}

/// `IPI<n>` → `n`.
fn ipi_index(label: &str) -> Option<u64> {
    let digits = label.strip_prefix("IPI")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `"%*s%u:%s"` label ("IPI" right-aligned to prec-1, a space only when
/// prec ≥ 4; arm64 E4 always a space), then counts and description per arch.
fn ipi_row(out: &mut String, counts: &[u64], idx: u64, desc: &str, era: Era, arch: Arch, p: usize) {
    right(out, "IPI", p.saturating_sub(1));
    num(out, idx, 0);
    out.push(':');
    if p >= 4 || (arch == Arch::Arm64 && era == Era::E4) {
        out.push(' ');
    }
    match arch {
        Arch::Loongarch => {
            leading_space(out, counts);
            out.push(' ');
        }
        Arch::Arm64 if era != Era::E4 => {
            trailing_space(out, counts);
            out.push_str("      ");
        }
        _ => {
            trailing_space(out, counts);
            out.push(' ');
        }
    }
    out.push_str(desc);
}

/// s390: `"%s: "` + `"%10u "` per CPU, then `"  %s"` description if any
/// (class lines `EXT`/`I/O`/`AIO` have none and keep the trailing space).
fn s390_row(out: &mut String, row: &IrqRow) {
    out.push_str(&row.label);
    out.push_str(": ");
    trailing_space(out, &row.counts);
    if !row.description.is_empty() {
        out.push_str("  ");
        out.push_str(&row.description);
    }
}
