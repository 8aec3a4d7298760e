//! Realistic device rows for `synth`: legacy/platform IRQs per arch, then
//! multi-queue devices (NVMe, mlx5, ixgbe-style NICs, virtio) and
//! singletons (ahci, xhci, AER/PME, DMAR) on per-arch MSI chips.
//!
//! Names only: counts, numbers and files are decided in `synth`.

use crate::render::{Arch, Era};
use crate::rng::Rng;

/// One numbered IRQ's identity, before counts are drawn.
#[derive(Debug, Clone, Default)]
pub(crate) struct Device {
    pub chip: String,
    pub hwirq: Option<i64>,
    /// `Level`/`Edge` on SHOW_LEVEL arches, else empty.
    pub trigger: &'static str,
    pub flow: &'static str,
    /// Action names joined by `", "`.
    pub actions: String,
    /// Level-triggered (sysfs `type`).
    pub level: bool,
    /// CPUs `[lo, hi)` a managed queue is bound to; `None` = all CPUs.
    pub managed: Option<(u32, u32)>,
}

type Legacy = (&'static str, i64, bool, &'static str, &'static str);

/// `(chip, hwirq, level, flow, actions)` platform IRQs per arch.
fn legacy(arch: Arch) -> &'static [Legacy] {
    match arch {
        Arch::X86 => &[
            // Same order as `legacy_irqs`.
            ("IO-APIC", 2, false, "edge", "timer"),
            ("IO-APIC", 1, false, "edge", "i8042"),
            ("IO-APIC", 8, false, "edge", "rtc0"),
            ("IO-APIC", 9, true, "fasteoi", "acpi"),
            ("IO-APIC", 12, false, "edge", "i8042"),
            ("IO-APIC", 16, true, "fasteoi", "ehci_hcd:usb1, i801_smbus"),
            ("IO-APIC", 5, false, "edge", "ACPI:Ged"),
        ],
        Arch::Arm64 => &[
            ("GICv3", 27, true, "", "arch_timer"),
            ("GICv3", 23, true, "", "arm-pmu"),
            ("GICv3", 33, true, "", "uart-pl011"),
            ("GICv3", 48, false, "", "ACPI:Ged"),
        ],
        Arch::Arm => &[
            ("GIC-0", 29, true, "", "twd"),
            ("GIC-0", 34, true, "", "timer"),
            ("GIC-0", 54, true, "", "uart-pl011"),
            ("GIC-0", 71, true, "", "mmc0"),
        ],
        Arch::Powerpc => &[
            ("XIVE-IRQ", 16, true, "", "hvc_console"),
            ("XIVE-IRQ", 4095, false, "", "ipmi-bt"),
            ("XIVE-IRQ", 4097, true, "", "opal-elog"),
        ],
        Arch::Riscv => &[
            ("RISC-V INTC", 5, false, "", "riscv-timer"),
            ("SiFive PLIC", 10, true, "", "ttyS0"),
            ("SiFive PLIC", 8, true, "", "virtio0"),
        ],
        Arch::Loongarch => &[
            ("CPUINTC", 11, false, "", "timer"),
            ("PCH-PIC-EXT", 2, true, "", "acpi"),
            ("LIOINTC", 10, true, "", "ttyS0"),
        ],
        Arch::Mips => &[
            ("MIPS GIC Local", 1, false, "", "timer"),
            ("XT-PIC", 1, false, "", "i8042"),
            ("MIPS GIC", 24, true, "", "ttyS0"),
        ],
        Arch::S390 => &[],
    }
}

/// Chip and hwirq of queue `q` of the PCI function `bdf` (`0000:3b:00.0`).
fn msi(arch: Arch, era: Era, bdf: &str, bdf_id: i64, q: i64) -> (String, Option<i64>) {
    let modern = matches!(era, Era::E3 | Era::E4);
    match arch {
        Arch::X86 if modern => (format!("IR-PCI-MSIX-{bdf}"), Some(q)),
        Arch::X86 => ("IR-PCI-MSI".into(), Some((bdf_id << 11) + q)),
        Arch::Arm64 if era == Era::E4 => (format!("ITS-PCI-MSIX-{bdf}"), Some(q)),
        Arch::Arm64 => ("ITS-MSI".into(), Some((bdf_id << 11) + q)),
        Arch::Riscv if modern => (format!("PCI-MSIX-{bdf}"), Some(q)),
        Arch::Loongarch => ("PCH-MSI-EXT".into(), Some(64 + q)),
        Arch::Powerpc => ("XIVE-PCI-MSI".into(), Some(196_608 + (bdf_id << 4) + q)),
        Arch::S390 => ("PCI-MSI".into(), None),
        _ => ("PCI-MSI".into(), Some((bdf_id << 11) + q)),
    }
}

/// Fixed Linux IRQ numbers of the x86 legacy rows (the IO-APIC pins map
/// 1:1 below 16); other arches allocate their platform IRQs dynamically.
pub(crate) fn legacy_irqs(arch: Arch) -> &'static [u32] {
    match arch {
        Arch::X86 => &[0, 1, 8, 9, 12, 16, 24],
        _ => &[],
    }
}

/// Build `n` devices for `cpus` possible CPUs.
pub(crate) fn plan(arch: Arch, era: Era, n: usize, cpus: u32, rng: &mut Rng) -> Vec<Device> {
    let mut out: Vec<Device> = Vec::with_capacity(n);
    for &(chip, hw, level, flow, actions) in legacy(arch).iter().take(n) {
        out.push(Device {
            chip: chip.into(),
            hwirq: Some(hw),
            trigger: trigger(arch, level),
            flow,
            actions: actions.into(),
            level,
            managed: None,
        });
    }
    let mut bus: i64 = 0x3a;
    let mut ordinal = [0u32; 4];
    while out.len() < n {
        bus = bus.wrapping_add(1 + rng.below(0x23) as i64) & 0xff;
        let bdf = format!(
            "{:04x}:{bus:02x}:00.0",
            if arch == Arch::S390 { 1 } else { 0 }
        );
        // s390 prints only the first action: keep one action per vector.
        let kind = if arch == Arch::S390 { 3 } else { rng.below(10) };
        let names = queue_names(kind, &mut ordinal, &bdf, cpus, rng);
        let nq = names.len() as u32;
        for (q, (action, managed)) in names.into_iter().enumerate() {
            if out.len() >= n {
                break;
            }
            let (chip, hwirq) = msi(arch, era, &bdf, bus << 8, q as i64);
            let managed = managed.then(|| spread(q as u32, nq, cpus));
            out.push(Device {
                chip,
                hwirq,
                trigger: trigger(arch, false),
                flow: if arch == Arch::X86 || arch == Arch::Loongarch {
                    "edge"
                } else {
                    ""
                },
                actions: action,
                level: false,
                managed,
            });
        }
    }
    out
}

fn trigger(arch: Arch, level: bool) -> &'static str {
    match (arch.shows_level(), level) {
        (false, _) => "",
        (true, true) => "Level",
        (true, false) => "Edge",
    }
}

/// CPU range of managed queue `q` (0 = admin/async, not managed) of `nq`.
fn spread(q: u32, nq: u32, cpus: u32) -> (u32, u32) {
    let io = nq.saturating_sub(1).max(1);
    let i = q.saturating_sub(1);
    let lo = (u64::from(i) * u64::from(cpus) / u64::from(io)) as u32;
    let hi = (u64::from(i + 1) * u64::from(cpus) / u64::from(io)) as u32;
    (lo.min(cpus.saturating_sub(1)), hi.max(lo + 1).min(cpus))
}

/// Action names of one device's vectors, with "managed" flags.
fn queue_names(
    kind: u64,
    ord: &mut [u32; 4],
    bdf: &str,
    cpus: u32,
    rng: &mut Rng,
) -> Vec<(String, bool)> {
    let queues = cpus.clamp(1, 64);
    match kind {
        0..=2 => {
            let d = bump(&mut ord[0]);
            (0..=queues)
                .map(|q| (format!("nvme{d}q{q}"), q > 0))
                .collect()
        }
        3 | 4 => {
            let first = std::iter::once((format!("mlx5_async0@pci:{bdf}"), false));
            let comp = (0..queues.min(63)).map(|q| (format!("mlx5_comp{q}@pci:{bdf}"), true));
            first.chain(comp).collect()
        }
        5 | 6 => {
            let e = bump(&mut ord[1]);
            let mut v: Vec<_> = (0..queues.min(32))
                .map(|q| (format!("eth{e}-TxRx-{q}"), true))
                .collect();
            v.push((format!("eth{e}"), false));
            v
        }
        7 => {
            let v = bump(&mut ord[2]);
            let mut names = vec![(format!("virtio{v}-config"), false)];
            for q in 0..queues.min(8) {
                names.push((format!("virtio{v}-input.{q}"), true));
                names.push((format!("virtio{v}-output.{q}"), true));
            }
            names
        }
        _ => {
            let singles = [
                format!("ahci[{bdf}]"),
                "xhci_hcd".to_string(),
                "aerdrv, PCIe PME".to_string(),
                format!("dmar{}", bump(&mut ord[3])),
                "i915".to_string(),
                format!("snd_hda_intel:card{}", rng.below(3)),
            ];
            let pick = rng.pick(&singles).cloned().unwrap_or_default();
            vec![(pick, false)]
        }
    }
}

fn bump(n: &mut u32) -> u32 {
    let v = *n;
    *n = n.saturating_add(1);
    v
}
