//! IRQ selectors of `bench --measure`: an IRQ number (`45`), an arch
//! label (`LOC`, `RES`, `IPI0`), or a regular expression matched against
//! the label, chip and actions (`virtio1-req`, `nvme0q.*`). Resolved once,
//! before any host change, against the first snapshot; an unknown selector
//! lists what is available. They choose the counters whose rate is a
//! trial's metric, not rows to show: each selector must match, and a
//! number names one IRQ exactly (so this is not `crate::filter::Filter`).

use anyhow::{bail, Context};
use irqlab_core::{Interrupts, IrqRow};
use regex::Regex;

/// The IRQs a trial measures (`--measure`, resolved): the labels of the chosen rows, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured {
    pub rows: Vec<MeasuredIrq>,
}

/// One chosen row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasuredIrq {
    /// `/proc/interrupts` label (`36`, `LOC`).
    pub label: String,
    /// Actions or description, for humans and the environment record.
    pub what: String,
}

fn describe_row(r: &IrqRow) -> String {
    if r.irq.is_some() {
        r.parts.actions.to_string()
    } else {
        r.description.to_string()
    }
}

fn matches(sel: &str, re: &Regex, r: &IrqRow) -> bool {
    if r.label == sel {
        return true;
    }
    if sel.parse::<u32>().is_ok() {
        return false;
    }
    re.is_match(&r.label)
        || re.is_match(&r.parts.actions)
        || (r.irq.is_none() && re.is_match(&r.description))
}

/// The available rows, one per line, for error messages.
pub fn available(m: &Interrupts) -> String {
    m.rows()
        .iter()
        .map(|r| format!("  {:>5}  {}", r.label, describe_row(r)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Resolve `selectors` against `m`. Each selector must match at least one row.
pub fn resolve(selectors: &[String], m: &Interrupts) -> anyhow::Result<Measured> {
    let mut rows: Vec<MeasuredIrq> = Vec::new();
    for sel in selectors {
        let re = Regex::new(sel)
            .with_context(|| format!("--measure {sel:?} is not a number, label or valid regex"))?;
        let found: Vec<&IrqRow> = m.rows().iter().filter(|r| matches(sel, &re, r)).collect();
        if found.is_empty() {
            bail!(
                "--measure {sel:?} matches no interrupt; available:\n{}",
                available(m)
            );
        }
        for r in found {
            if !rows.iter().any(|x| x.label == r.label) {
                rows.push(MeasuredIrq {
                    label: r.label.to_string(),
                    what: describe_row(r),
                });
            }
        }
    }
    Ok(Measured { rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "           CPU0       CPU1       \n 36:          0       4685  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n 41:       1291          0  PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx\n 42:          0       2305  PCI-MSIX-0000:00:04.0   2-edge      virtio3-tx\nLOC:       5901       6390   Local timer interrupts\nRES:       4110       2754   Rescheduling interrupts\n";

    fn m() -> Interrupts {
        Interrupts::parse(TEXT.as_bytes()).unwrap()
    }

    fn labels(sel: &[&str]) -> Vec<String> {
        let s: Vec<String> = sel.iter().map(|s| s.to_string()).collect();
        resolve(&s, &m())
            .unwrap()
            .rows
            .into_iter()
            .map(|r| r.label)
            .collect()
    }

    #[test]
    fn by_number_label_and_regex() {
        assert_eq!(labels(&["36"]), vec!["36"]);
        assert_eq!(labels(&["RES"]), vec!["RES"]);
        assert_eq!(labels(&["virtio3-.x"]), vec!["41", "42"]);
        assert_eq!(labels(&["Local timer"]), vec!["LOC"]);
        assert_eq!(labels(&["42", "virtio3"]), vec!["42", "41"]);
    }

    #[test]
    fn unknown_selector_lists_available() {
        let e = resolve(&["99".to_string()], &m()).unwrap_err().to_string();
        assert!(e.contains("matches no interrupt"), "{e}");
        assert!(e.contains("virtio1-req.0") && e.contains("LOC"), "{e}");
        assert!(resolve(&["(".to_string()], &m()).is_err());
    }
}
