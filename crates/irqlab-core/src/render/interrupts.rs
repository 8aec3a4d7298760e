//! `/proc/interrupts` rendering: header and numbered IRQ lines per era
//! (docs/formats/interrupts.md); architecture summary lines live in `arch`.
//!
//! Must not decide which rows exist: it renders the model's rows in order.

use super::{arch, counts_fmt, cpu_cells, inum, left, num, prec, right, spaces, Arch, Era};
use crate::desc::DescParts;
use crate::interrupts::{Interrupts, IrqRow};

/// Render `m` as `/proc/interrupts` text of `era` on `arch`, appending to
/// `out`. `nr_irqs` sets the IRQ-number column width (see [`prec`]).
/// Numbered rows are printed from their `parts`; arch rows from their
/// label, counts and description.
///
/// ```
/// use irqlab_core::desc::DescParts;
/// use irqlab_core::interrupts::{Interrupts, IrqRow};
/// use irqlab_core::render::{render_interrupts, Arch, Era};
///
/// let parts = DescParts {
///     chip: "IO-APIC".into(),
///     hwirq: Some(5),
///     flow: "edge".into(),
///     actions: "ACPI:Ged".into(),
///     ..DescParts::default()
/// };
/// let row = IrqRow { label: "24".into(), irq: Some(24), counts: vec![1, 0].into(), parts, ..IrqRow::default() };
/// let m = Interrupts::from_parts(vec![0, 1], vec![row]);
/// let mut out = String::new();
/// render_interrupts(&m, Era::E3, Arch::X86, 424, &mut out);
/// assert_eq!(out, "           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n");
/// out.clear();
/// render_interrupts(&m, Era::E4, Arch::X86, 424, &mut out);
/// assert_eq!(out.lines().nth(1), Some("  24:          1          0  IO-APIC     5-edge      ACPI:Ged"));
/// ```
pub fn render_interrupts(m: &Interrupts, era: Era, arch: Arch, nr_irqs: u32, out: &mut String) {
    let p = prec(era, nr_irqs);
    spaces(out, if arch == Arch::S390 { 11 } else { p + 8 });
    cpu_cells(out, &m.cpus);
    out.push('\n');
    let chip_w = chip_width(m);
    for row in m.rows() {
        match (row.irq, arch) {
            (Some(irq), Arch::S390) => s390_numbered(out, irq, row),
            (Some(irq), _) => numbered(out, irq, row, era, arch, p, chip_w),
            (None, _) => arch::arch_row(out, row, era, arch, p),
        }
        out.push('\n');
    }
}

/// E4 chip column: max(8, longest chip name of the numbered rows).
fn chip_width(m: &Interrupts) -> usize {
    m.rows()
        .iter()
        .filter(|r| r.irq.is_some())
        .map(|r| chip_name(&r.parts).chars().count())
        .fold(8, usize::max)
}

/// The chip as printed: a chip without a name prints `-`.
fn chip_name(parts: &DescParts) -> &str {
    if parts.chip.is_empty() {
        "-"
    } else {
        &parts.chip
    }
}

fn numbered(
    out: &mut String,
    irq: u32,
    row: &IrqRow,
    era: Era,
    arch: Arch,
    p: usize,
    chip_w: usize,
) {
    let parts = &row.parts;
    let chip = chip_name(parts);
    num(out, u64::from(irq), p);
    match era {
        Era::E1 | Era::E2 => {
            out.push_str(": ");
            counts_fmt::trailing_space(out, &row.counts);
            out.push(' ');
            right(out, chip, 8);
        }
        Era::E3 => {
            out.push(':');
            counts_fmt::leading_space(out, &row.counts);
            out.push(' ');
            right(out, chip, 8);
        }
        Era::E4 => {
            out.push(':');
            counts_fmt::leading_space(out, &row.counts);
            out.push_str("  ");
            left(out, chip, chip_w);
        }
    }
    match parts.hwirq {
        Some(h) => {
            out.push(' ');
            inum(out, h, p);
        }
        // docs/formats/interrupts.md, numbered rows, part 5: E4 prints " " + num_prec+1 spaces.
        None => spaces(out, if era == Era::E4 { p + 2 } else { p + 1 }),
    }
    if arch.shows_level() {
        out.push(' ');
        let trigger = if parts.trigger.is_empty() {
            "Edge"
        } else {
            &parts.trigger
        };
        left(out, trigger, 8);
    }
    if !parts.flow.is_empty() {
        out.push('-');
        left(out, &parts.flow, 8);
    }
    if !parts.actions.is_empty() {
        out.push_str("  ");
        out.push_str(&parts.actions);
    }
}

/// s390's own numbered line: `"%3d: "`, `"%10u "` counts, `" %8s"` chip,
/// `"  %s"` first action only.
fn s390_numbered(out: &mut String, irq: u32, row: &IrqRow) {
    num(out, u64::from(irq), 3);
    out.push_str(": ");
    counts_fmt::trailing_space(out, &row.counts);
    out.push(' ');
    right(out, chip_name(&row.parts), 8);
    if let Some(first) = row.parts.actions().next() {
        out.push_str("  ");
        out.push_str(first);
    }
}
