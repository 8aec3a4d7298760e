//! Per-IRQ attribute files: `/sys/kernel/irq/N/*` and `/proc/irq/N/*`.
//!
//! Owns one parser per file (bytes in, value out; an empty file means
//! "absent" and yields `None` or an empty list), [`IrqAttrs`] collecting the
//! sysfs attributes of one IRQ, and [`ProcIrqAttrs`] collecting the procfs
//! affinity and node files. Must not open files or walk directories (the
//! CLI's host layer does that) and must not panic on any input.

use crate::cpulist::CpuList;
use crate::error::{ErrorKind, ParseError};
use crate::paths::shown;
use crate::scan::{lossy_token, scan_u64, token_u64, trim, Scan};
use serde::Serialize;

/// Error name of `/sys/kernel/irq/N/per_cpu_count`.
pub const PER_CPU_COUNT: &str = shown::PER_CPU_COUNT;
/// Error name of `/sys/kernel/irq/N/chip_name`.
pub const CHIP_NAME: &str = shown::CHIP_NAME;
/// Error name of `/sys/kernel/irq/N/hwirq`.
pub const HWIRQ: &str = shown::HWIRQ;
/// Error name of `/sys/kernel/irq/N/type`.
pub const TYPE: &str = shown::TYPE;
/// Error name of `/sys/kernel/irq/N/wakeup`.
pub const WAKEUP: &str = shown::WAKEUP;
/// Error name of `/sys/kernel/irq/N/name`.
pub const NAME: &str = shown::NAME;
/// Error name of `/sys/kernel/irq/N/actions`.
pub const ACTIONS: &str = shown::ACTIONS;
/// Error name of `/proc/irq/N/smp_affinity`.
pub const SMP_AFFINITY: &str = shown::SMP_AFFINITY;
/// Error name of `/proc/irq/N/smp_affinity_list`.
pub const SMP_AFFINITY_LIST: &str = shown::SMP_AFFINITY_LIST;
/// Error name of `/proc/irq/N/effective_affinity`.
pub const EFFECTIVE_AFFINITY: &str = shown::EFFECTIVE_AFFINITY;
/// Error name of `/proc/irq/N/effective_affinity_list`.
pub const EFFECTIVE_AFFINITY_LIST: &str = shown::EFFECTIVE_AFFINITY_LIST;
/// Error name of `/proc/irq/N/node`.
pub const NODE: &str = shown::NODE;

/// Trigger type from `/sys/kernel/irq/N/type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Level,
    Edge,
}

/// The one-line content of an attribute file without its newline;
/// `Ok(None)` for an empty file. Errors if the text is not UTF-8 or has
/// more than one line.
fn one_line<'a>(bytes: &'a [u8], file: &'static str) -> Result<Option<&'a str>, ParseError> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.contains(&b'\n') {
        return Err(ParseError::new(
            file,
            2,
            ErrorKind::Malformed("expected a single line"),
        ));
    }
    let text =
        std::str::from_utf8(body).map_err(|_| ParseError::new(file, 1, ErrorKind::NotText))?;
    Ok((!text.is_empty()).then_some(text))
}

/// `per_cpu_count`: counts for possible CPUs (`1,0`) into `out` (cleared
/// first; left empty for an empty file).
///
/// ```
/// let mut v = Vec::new();
/// irqlab_core::sysfs::parse_per_cpu_count(b"1,0\n", &mut v).unwrap();
/// assert_eq!(v, [1, 0]);
/// ```
pub fn parse_per_cpu_count(bytes: &[u8], out: &mut Vec<u64>) -> Result<(), ParseError> {
    out.clear();
    let body = trim(bytes);
    if body.is_empty() {
        return Ok(());
    }
    for tok in body.split(|&c| c == b',') {
        let v =
            token_u64(tok, "a per-CPU count").map_err(|k| ParseError::new(PER_CPU_COUNT, 1, k))?;
        out.push(v);
    }
    Ok(())
}

/// `chip_name`: `IO-APIC`, `PCI-MSIX-0000:00:01.0`; `None` if empty.
pub fn parse_chip_name(bytes: &[u8]) -> Result<Option<&str>, ParseError> {
    one_line(bytes, CHIP_NAME)
}

/// `name`: the flow-handler name (`edge`, `fasteoi`); `None` if empty.
pub fn parse_name(bytes: &[u8]) -> Result<Option<&str>, ParseError> {
    one_line(bytes, NAME)
}

/// `hwirq`: `None` if the IRQ has no domain (empty file). Old kernels
/// printed it through an `int` (`%d`), so a negative value is mapped back
/// to its 32-bit unsigned meaning (`-2147483648` → 2147483648).
pub fn parse_hwirq(bytes: &[u8]) -> Result<Option<u64>, ParseError> {
    let Some(text) = one_line(bytes, HWIRQ)? else {
        return Ok(None);
    };
    let err = || {
        let found = lossy_token(text.as_bytes());
        ParseError::new(
            HWIRQ,
            1,
            ErrorKind::ExpectedNumber {
                what: "a hwirq number",
                found,
            },
        )
    };
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d.as_bytes()),
        None => (false, text.as_bytes()),
    };
    let v = match scan_u64(digits, 0) {
        Scan::Num(v, end) if end == digits.len() => v,
        _ => return Err(err()),
    };
    if !neg {
        return Ok(Some(v));
    }
    // `-v` as a 32-bit two's complement value, read back unsigned.
    match v {
        0 => Ok(Some(0)),
        v if v <= 1 << 31 => Ok(Some((1 << 32) - v)),
        _ => Err(err()),
    }
}

/// `type`: `level` or `edge`.
pub fn parse_type(bytes: &[u8]) -> Result<Option<Trigger>, ParseError> {
    match one_line(bytes, TYPE)? {
        None => Ok(None),
        Some("level") => Ok(Some(Trigger::Level)),
        Some("edge") => Ok(Some(Trigger::Edge)),
        Some(t) => Err(invalid(TYPE, "`level` or `edge`", t)),
    }
}

/// `wakeup`: `enabled` → true, `disabled` → false.
pub fn parse_wakeup(bytes: &[u8]) -> Result<Option<bool>, ParseError> {
    match one_line(bytes, WAKEUP)? {
        None => Ok(None),
        Some("enabled") => Ok(Some(true)),
        Some("disabled") => Ok(Some(false)),
        Some(t) => Err(invalid(WAKEUP, "`enabled` or `disabled`", t)),
    }
}

/// `actions`: action names joined by `,` without a space (names may
/// contain spaces: `aerdrv,PCIe PME`). Empty file → no names.
///
/// ```
/// let names: Vec<_> = irqlab_core::sysfs::parse_actions(b"aerdrv,PCIe PME\n").unwrap().collect();
/// assert_eq!(names, ["aerdrv", "PCIe PME"]);
/// ```
pub fn parse_actions(bytes: &[u8]) -> Result<impl Iterator<Item = &str>, ParseError> {
    let text = one_line(bytes, ACTIONS)?.unwrap_or("");
    Ok(text.split(',').filter(|s| !s.is_empty()))
}

/// `/proc/irq/N/node`: the NUMA node; `-1` (no node) and an empty file are
/// `None`.
pub fn parse_node(bytes: &[u8]) -> Result<Option<u32>, ParseError> {
    match one_line(bytes, NODE)?.map(str::trim) {
        None | Some("-1") => Ok(None),
        Some(t) => token_u64(t.as_bytes(), "a NUMA node number or -1")
            .and_then(|v| {
                u32::try_from(v).map_err(|_| ErrorKind::Invalid {
                    what: "a NUMA node below 2^32",
                    found: v.to_string(),
                })
            })
            .map(Some)
            .map_err(|k| ParseError::new(NODE, 1, k)),
    }
}

fn invalid(file: &'static str, what: &'static str, found: &str) -> ParseError {
    ParseError::new(
        file,
        1,
        ErrorKind::Invalid {
            what,
            found: lossy_token(found.as_bytes()),
        },
    )
}

/// Everything `/sys/kernel/irq/N/` says about one IRQ.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IrqAttrs {
    /// Counts for possible CPUs (empty if the file was empty or not read).
    pub per_cpu_count: Vec<u64>,
    pub chip_name: Option<String>,
    pub hwirq: Option<u64>,
    pub trigger: Option<Trigger>,
    pub wakeup: Option<bool>,
    /// Flow-handler name.
    pub name: Option<String>,
    /// Action names in registration order.
    pub actions: Vec<String>,
}

impl IrqAttrs {
    /// Store the content of the attribute file called `file` (its base
    /// name, e.g. `"chip_name"`). Unknown names are ignored, so a caller
    /// can feed every file of the directory.
    ///
    /// ```
    /// let mut a = irqlab_core::sysfs::IrqAttrs::default();
    /// a.set("chip_name", b"IO-APIC\n").unwrap();
    /// a.set("actions", b"aerdrv,PCIe PME\n").unwrap();
    /// a.set("hwirq", b"").unwrap();
    /// assert_eq!(a.chip_name.as_deref(), Some("IO-APIC"));
    /// assert_eq!(a.actions, ["aerdrv", "PCIe PME"]);
    /// assert_eq!(a.hwirq, None);
    /// ```
    pub fn set(&mut self, file: &str, bytes: &[u8]) -> Result<(), ParseError> {
        match file {
            "per_cpu_count" => parse_per_cpu_count(bytes, &mut self.per_cpu_count)?,
            "chip_name" => set_string(&mut self.chip_name, parse_chip_name(bytes)?),
            "hwirq" => self.hwirq = parse_hwirq(bytes)?,
            "type" => self.trigger = parse_type(bytes)?,
            "wakeup" => self.wakeup = parse_wakeup(bytes)?,
            "name" => set_string(&mut self.name, parse_name(bytes)?),
            "actions" => {
                self.actions.clear();
                self.actions
                    .extend(parse_actions(bytes)?.map(str::to_owned));
            }
            _ => {}
        }
        Ok(())
    }

    /// Sum of the per-CPU counts.
    pub fn total(&self) -> u64 {
        self.per_cpu_count
            .iter()
            .fold(0u64, |a, &c| a.wrapping_add(c))
    }
}

/// Replace `slot` with `value`, reusing the existing allocation.
fn set_string(slot: &mut Option<String>, value: Option<&str>) {
    match (slot.as_mut(), value) {
        (Some(s), Some(v)) => {
            s.clear();
            s.push_str(v);
        }
        (_, v) => *slot = v.map(str::to_owned),
    }
}

/// The affinity and node files of `/proc/irq/N/`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcIrqAttrs {
    /// CPUs the IRQ may be routed to.
    pub smp_affinity: Option<CpuList>,
    /// CPUs it is actually routed to (`CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK`).
    pub effective_affinity: Option<CpuList>,
    /// NUMA node (`None` for `-1`).
    pub node: Option<u32>,
}

impl ProcIrqAttrs {
    /// Store the content of the file called `file` (base name). The list
    /// forms and the hex forms fill the same field; unknown names are
    /// ignored.
    ///
    /// ```
    /// let mut p = irqlab_core::sysfs::ProcIrqAttrs::default();
    /// p.set("smp_affinity", b"3\n").unwrap();
    /// p.set("node", b"-1\n").unwrap();
    /// assert_eq!(p.smp_affinity.unwrap().to_string(), "0-1");
    /// assert_eq!(p.node, None);
    /// ```
    pub fn set(&mut self, file: &str, bytes: &[u8]) -> Result<(), ParseError> {
        match file {
            "smp_affinity_list" => {
                self.smp_affinity = Some(CpuList::parse_list(bytes, SMP_AFFINITY_LIST)?)
            }
            "smp_affinity" => self.smp_affinity = Some(CpuList::parse_mask(bytes, SMP_AFFINITY)?),
            "effective_affinity_list" => {
                self.effective_affinity =
                    Some(CpuList::parse_list(bytes, EFFECTIVE_AFFINITY_LIST)?);
            }
            "effective_affinity" => {
                self.effective_affinity = Some(CpuList::parse_mask(bytes, EFFECTIVE_AFFINITY)?);
            }
            "node" => self.node = parse_node(bytes)?,
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/vm-2cpu-6.18/");

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{DIR}{name}")).unwrap()
    }

    #[test]
    fn vm_capture_irq24() {
        let mut a = IrqAttrs::default();
        for f in [
            "per_cpu_count",
            "chip_name",
            "hwirq",
            "type",
            "wakeup",
            "name",
            "actions",
        ] {
            a.set(f, &fixture(&format!("sys_kernel_irq_24_{f}")))
                .unwrap();
        }
        assert_eq!(a.per_cpu_count, [1, 0]);
        assert_eq!(a.total(), 1);
        assert_eq!(a.chip_name.as_deref(), Some("IO-APIC"));
        assert_eq!(a.hwirq, Some(5));
        assert_eq!(a.trigger, Some(Trigger::Edge));
        assert_eq!(a.wakeup, Some(false));
        assert_eq!(a.name.as_deref(), Some("edge"));
        assert_eq!(a.actions, ["ACPI:Ged"]);

        let mut p = ProcIrqAttrs::default();
        for f in [
            "smp_affinity_list",
            "effective_affinity",
            "node",
            "spurious",
        ] {
            p.set(f, &fixture(&format!("proc_irq_24_{f}"))).unwrap();
        }
        assert_eq!(
            p.smp_affinity.as_ref().map(ToString::to_string).as_deref(),
            Some("0-1")
        );
        assert_eq!(
            p.effective_affinity
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some("0")
        );
        assert_eq!(p.node, None);
    }

    #[test]
    fn empty_files_are_absent() {
        // docs/formats/edge-cases.md, case 25.
        let mut a = IrqAttrs {
            chip_name: Some("x".into()),
            hwirq: Some(1),
            ..Default::default()
        };
        for f in [
            "per_cpu_count",
            "chip_name",
            "hwirq",
            "type",
            "wakeup",
            "name",
            "actions",
        ] {
            a.set(f, b"").unwrap();
        }
        assert_eq!(a, IrqAttrs::default());
        assert_eq!(parse_node(b"").unwrap(), None);
        assert_eq!(parse_node(b"1\n").unwrap(), Some(1));
    }

    #[test]
    fn actions_split_without_space() {
        let v: Vec<_> = parse_actions(b"aerdrv,PCIe PME\n").unwrap().collect();
        assert_eq!(v, ["aerdrv", "PCIe PME"]);
        let mut a = IrqAttrs::default();
        a.set("actions", b"ahci[0000:00:17.0]\n").unwrap();
        assert_eq!(a.actions, ["ahci[0000:00:17.0]"]);
    }

    #[test]
    fn hwirq_forms() {
        assert_eq!(parse_hwirq(b"524288\n").unwrap(), Some(524288));
        assert_eq!(parse_hwirq(b"-2147483648\n").unwrap(), Some(2147483648));
        assert_eq!(parse_hwirq(b"-1\n").unwrap(), Some(u64::from(u32::MAX)));
        assert!(parse_hwirq(b"-2147483649\n").is_err());
        assert!(parse_hwirq(b"x\n").is_err());
        assert!(parse_hwirq(b"-\n").is_err());
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let mut v = vec![7];
        assert_eq!(
            parse_per_cpu_count(b"1,,2\n", &mut v).unwrap_err().file,
            PER_CPU_COUNT
        );
        assert!(parse_per_cpu_count(b"1, 2\n", &mut v).is_err());
        assert!(parse_per_cpu_count(b"1,2,\n", &mut v).is_err());
        assert!(parse_type(b"both\n").is_err());
        assert!(parse_wakeup(b"maybe\n").is_err());
        assert_eq!(
            parse_chip_name(b"\xff\xfe\n").unwrap_err().kind,
            ErrorKind::NotText
        );
        assert_eq!(parse_name(b"a\nb\n").unwrap_err().line, 2);
        assert!(parse_node(b"-2\n").is_err());
        assert!(parse_node(b"99999999999\n").is_err());
        let mut p = ProcIrqAttrs::default();
        assert_eq!(
            p.set("smp_affinity_list", b"3-1\n").unwrap_err().file,
            SMP_AFFINITY_LIST
        );
        assert_eq!(
            p.set("effective_affinity", b"zz\n").unwrap_err().file,
            EFFECTIVE_AFFINITY
        );
        let long = vec![b'1'; 10 << 20];
        assert!(parse_per_cpu_count(&long, &mut v).is_err());
    }

    #[test]
    fn per_cpu_count_reuses_buffer() {
        let mut v = Vec::with_capacity(4);
        let p = v.as_ptr();
        parse_per_cpu_count(b"1,2,3,4\n", &mut v).unwrap();
        assert_eq!((v.as_slice(), v.as_ptr()), (&[1, 2, 3, 4][..], p));
    }
}
