//! Best-effort split of a numbered `/proc/interrupts` row's description
//! into chip, hwirq, trigger, flow-handler name and actions.
//!
//! Owns [`DescParts`] and [`split_description`]. The split is heuristic by
//! nature (chip and action names are free text); the raw description is
//! always kept beside it, and exact metadata comes from
//! `/sys/kernel/irq/N/*` (see [`crate::sysfs`]). Never fails, never panics.

use compact_str::CompactString;
use serde::Serialize;

/// Parts of a numbered row's description. Empty strings mean "absent".
/// [`CompactString`]s: a part up to 24 bytes (most are) is held inline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DescParts {
    /// Chip name (`IO-APIC`, `PCI-MSIX-0000:00:01.0`, `Hyper-V PCIe MSI`, `GICv3`).
    pub chip: CompactString,
    /// Hardware IRQ number in the chip's domain (negative on old kernels).
    pub hwirq: Option<i64>,
    /// `Level` or `Edge` (architectures with `GENERIC_IRQ_SHOW_LEVEL`).
    pub trigger: CompactString,
    /// Flow-handler name (`edge`, `fasteoi`).
    pub flow: CompactString,
    /// Action names as printed, joined by `", "`.
    pub actions: CompactString,
}

impl DescParts {
    /// Reset every field, keeping capacity.
    pub fn clear(&mut self) {
        self.chip.clear();
        self.hwirq = None;
        self.trigger.clear();
        self.flow.clear();
        self.actions.clear();
    }

    /// The action names (split at `", "`, the kernel's unescaped separator).
    pub fn actions(&self) -> impl Iterator<Item = &str> + Clone {
        self.actions.split(", ").filter(|s| !s.is_empty())
    }

    /// Chip name, if any.
    pub fn chip(&self) -> Option<&str> {
        non_empty(&self.chip)
    }

    /// Trigger, if printed.
    pub fn trigger(&self) -> Option<&str> {
        non_empty(&self.trigger)
    }

    /// Flow-handler name, if printed.
    pub fn flow(&self) -> Option<&str> {
        non_empty(&self.flow)
    }
}

/// Append `s` to `dst`: into an empty inline string by building it whole
/// (an inline copy, cheaper than `push_str`'s growth path); into a heap
/// string by `push_str`, which keeps its capacity.
#[inline]
pub(crate) fn put(dst: &mut CompactString, s: &str) {
    if s.is_empty() {
        return;
    }
    if dst.is_empty() && !dst.is_heap_allocated() {
        *dst = CompactString::new(s);
    } else {
        dst.push_str(s);
    }
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// Flow-handler names the old `chip-flow` token (`IR-IO-APIC-edge`) may end in.
const OLD_FLOWS: &[&str] = &[
    "edge",
    "level",
    "fasteoi",
    "simple",
    "percpu",
    "percpu_devid",
    "edge_eoi",
    "level_eoi",
];

/// Split `desc` (already trimmed) into `out`, reusing its buffers.
pub fn split_description(desc: &str, out: &mut DescParts) {
    out.clear();
    match find_hwirq(desc) {
        Some((start, end, hwirq, flow)) => split_modern(desc, start, end, hwirq, flow, out),
        None => split_old(desc, out),
    }
}

/// Token spans `(start, end)` of `s`, split at ASCII whitespace.
fn tokens(s: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = s.as_bytes();
    let mut pos = 0;
    std::iter::from_fn(move || {
        while pos < b.len() && b[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos >= b.len() {
            return None;
        }
        let start = pos;
        while pos < b.len() && !b[pos].is_ascii_whitespace() {
            pos += 1;
        }
        Some((start, pos))
    })
}

/// The first token after the chip that looks like `hwirq` or `hwirq-flow`:
/// its span, its number and its flow.
fn find_hwirq(desc: &str) -> Option<(usize, usize, i64, Option<&str>)> {
    tokens(desc)
        .skip(1)
        .find_map(|(s, e)| parse_hwirq_token(&desc[s..e]).map(|(v, f)| (s, e, v, f)))
}

/// `str::trim`, with the usual case (ASCII at both ends) decided byte by
/// byte; a non-ASCII end is left to `str::trim` (Unicode white space).
fn trim(s: &str) -> &str {
    // str::trim's ASCII white space: is_ascii_whitespace plus vertical tab
    let ws = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
    let b = s.as_bytes();
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |e| e + 1);
    match (b.get(start), end.checked_sub(1).and_then(|e| b.get(e))) {
        (Some(f), Some(l)) if f.is_ascii() && l.is_ascii() => s.get(start..end).unwrap_or_default(),
        (None, _) => "",
        _ => s.trim(),
    }
}

/// `-?digits` optionally followed by `-flow` (flow starting with a letter).
fn parse_hwirq_token(tok: &str) -> Option<(i64, Option<&str>)> {
    let (neg, body) = match tok.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, tok),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 20 {
        return None;
    }
    // at most 20 digits: a value past u64 is past i64 too
    let magnitude = body.as_bytes()[..digits].iter().try_fold(0u64, |v, &d| {
        v.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })?;
    let value = if neg {
        0i64.checked_sub_unsigned(magnitude)?
    } else {
        i64::try_from(magnitude).ok()?
    };
    let rest = &body[digits..];
    if rest.is_empty() {
        return Some((value, None));
    }
    let flow = rest.strip_prefix('-')?;
    flow.bytes()
        .next()
        .filter(u8::is_ascii_alphabetic)
        .map(|_| (value, Some(flow)))
}

fn split_modern(
    desc: &str,
    start: usize,
    end: usize,
    hwirq: i64,
    flow: Option<&str>,
    out: &mut DescParts,
) {
    put(&mut out.chip, trim(&desc[..start]));
    out.hwirq = Some(hwirq);
    if let Some(flow) = flow {
        put(&mut out.flow, flow);
    }
    let mut rest_at = end;
    let mut toks = tokens(&desc[end..]).map(|(s, e)| (s + end, e + end));
    if let Some((s, e)) = toks.next() {
        let t = &desc[s..e];
        if t == "Level" || t == "Edge" {
            put(&mut out.trigger, t);
            rest_at = e;
            if let Some((s2, e2)) = toks.next() {
                if let Some(flow) = desc[s2..e2].strip_prefix('-').filter(|f| !f.is_empty()) {
                    put(&mut out.flow, flow);
                    rest_at = e2;
                }
            }
        }
    }
    put(&mut out.actions, trim(&desc[rest_at..]));
}

fn split_old(desc: &str, out: &mut DescParts) {
    let (first, rest) = match desc.find("  ") {
        Some(i) => (&desc[..i], desc[i..].trim()),
        None => (desc, ""),
    };
    let chip_flow = OLD_FLOWS.iter().find_map(|f| {
        first
            .strip_suffix(f)
            .and_then(|c| c.strip_suffix('-'))
            .filter(|c| !c.is_empty())
            .map(|c| (c, *f))
    });
    match (chip_flow, rest.is_empty()) {
        (Some((chip, flow)), _) => {
            put(&mut out.chip, chip);
            put(&mut out.flow, flow);
            put(&mut out.actions, rest);
        }
        (None, false) => {
            put(&mut out.chip, first);
            let rest = take_trigger_flow(rest, out);
            put(&mut out.actions, rest);
        }
        (None, true) => put(&mut out.actions, first),
    }
}

/// After a chip without a domain (no hwirq), the kernel still prints the
/// trigger (`Level`/`Edge`, SHOW_LEVEL arches) and `-flow`: take them off
/// the front of `rest` and return what remains (the actions).
fn take_trigger_flow<'a>(mut rest: &'a str, out: &mut DescParts) -> &'a str {
    let first_token = |s: &'a str| {
        let end = s.find(|c: char| c.is_ascii_whitespace()).unwrap_or(s.len());
        (&s[..end], s[end..].trim_start())
    };
    let (tok, after) = first_token(rest);
    if tok == "Level" || tok == "Edge" {
        put(&mut out.trigger, tok);
        rest = after;
    }
    let (tok, after) = first_token(rest);
    if let Some(flow) = tok
        .strip_prefix('-')
        .filter(|f| f.starts_with(|c: char| c.is_ascii_alphabetic()))
    {
        put(&mut out.flow, flow);
        rest = after;
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> DescParts {
        let mut p = DescParts::default();
        split_description(s, &mut p);
        p
    }

    #[test]
    fn trim_is_str_trim() {
        for s in [
            "",
            " ",
            "a",
            " a ",
            "\x0ba\x0b",
            "\u{a0}a",
            "a\u{a0}",
            "\u{3000} a b \u{2003}",
            "é",
            " é ",
            "\t\r\n x",
            "\u{85}",
            "  IO-APIC  ",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
    }

    #[test]
    fn hwirq_at_the_ends_of_i64() {
        let v = |t: &str| parse_hwirq_token(t).map(|(v, _)| v);
        assert_eq!(v("9223372036854775807"), Some(i64::MAX));
        assert_eq!(v("9223372036854775808"), None);
        assert_eq!(v("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(v("-9223372036854775809"), None);
        assert_eq!(v("18446744073709551616"), None);
        assert_eq!(v("99999999999999999999"), None);
        assert_eq!(v("000000000000000000001"), None);
        assert_eq!(v("00000000000000000001-edge"), Some(1));
        assert_eq!(v("-0"), Some(0));
    }

    #[test]
    fn x86_modern() {
        let p = split("IO-APIC   5-edge      ACPI:Ged");
        assert_eq!(
            (p.chip.as_str(), p.hwirq, p.flow.as_str()),
            ("IO-APIC", Some(5), "edge")
        );
        assert_eq!(p.actions().collect::<Vec<_>>(), vec!["ACPI:Ged"]);
    }

    #[test]
    fn chip_with_spaces_and_shared_actions() {
        let p = split("Hyper-V PCIe MSI 524288-edge      aerdrv, PCIe PME");
        assert_eq!(p.chip, "Hyper-V PCIe MSI");
        assert_eq!(p.hwirq, Some(524288));
        assert_eq!(p.actions().collect::<Vec<_>>(), vec!["aerdrv", "PCIe PME"]);
    }

    #[test]
    fn arm_gic_trigger() {
        let p = split("GICv3  30 Level     arch_timer");
        assert_eq!(
            (p.chip.as_str(), p.hwirq, p.trigger.as_str()),
            ("GICv3", Some(30), "Level")
        );
        assert_eq!(p.flow, "");
        assert_eq!(p.actions, "arch_timer");
        let p = split("GIC-0  27 Level   -fasteoi  arch_timer");
        assert_eq!(
            (p.trigger.as_str(), p.flow.as_str(), p.actions.as_str()),
            ("Level", "fasteoi", "arch_timer")
        );
    }

    #[test]
    fn negative_hwirq_and_no_action() {
        let p = split("PCI-MSI -2147483648-edge      nvme0q1");
        assert_eq!(p.hwirq, Some(-2147483648));
        let p = split("IO-APIC  17-fasteoi");
        assert_eq!((p.flow.as_str(), p.actions.as_str()), ("fasteoi", ""));
    }

    #[test]
    fn old_formats() {
        let p = split("IR-IO-APIC-edge      timer");
        assert_eq!(
            (p.chip.as_str(), p.flow.as_str(), p.actions.as_str()),
            ("IR-IO-APIC", "edge", "timer")
        );
        let p = split("None      acpi");
        assert_eq!((p.chip.as_str(), p.actions.as_str()), ("None", "acpi"));
        let p = split("4020KEY");
        assert_eq!((p.chip.as_str(), p.actions.as_str()), ("", "4020KEY"));
        let p = split("-  debug-signal");
        assert_eq!((p.chip.as_str(), p.actions.as_str()), ("-", "debug-signal"));
        let p = split("PCI-MSI  mlx5_async0@pci:0001:00:00.0");
        assert_eq!(p.chip, "PCI-MSI");
    }

    #[test]
    fn no_domain_keeps_trigger_and_flow() {
        let p = split("xen-dyn    -event     xenbus");
        assert_eq!(
            (
                p.chip.as_str(),
                p.hwirq,
                p.flow.as_str(),
                p.actions.as_str()
            ),
            ("xen-dyn", None, "event", "xenbus")
        );
        let p = split("SiFive PLIC     Level     -fasteoi  ttyS0, PCIe PME");
        assert_eq!(
            (p.chip.as_str(), p.trigger.as_str(), p.flow.as_str()),
            ("SiFive PLIC", "Level", "fasteoi")
        );
        assert_eq!(p.actions, "ttyS0, PCIe PME");
        let p = split("None    -edge");
        assert_eq!(
            (p.chip.as_str(), p.flow.as_str(), p.actions.as_str()),
            ("None", "edge", "")
        );
        let p = split("None     Edge");
        assert_eq!(
            (p.chip.as_str(), p.trigger.as_str(), p.actions.as_str()),
            ("None", "Edge", "")
        );
        let p = split("-  debug-signal");
        assert_eq!(
            (p.chip.as_str(), p.flow.as_str(), p.actions.as_str()),
            ("-", "", "debug-signal")
        );
    }
}
