//! The architecture summary rows each arch prints (docs/formats/arch-rows.md): label,
//! description, line kind, and whether a typical machine shows it.
//!
//! Data only; used by `synth` and by the round-trip tests. Must not format.

use crate::render::{Arch, Era};

/// How an arch row's counts are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchRowKind {
    /// One count per online CPU.
    PerCpu,
    /// One global value, no description (`ERR`, `Err`).
    Single,
    /// No counts (arm `FIQ:` owner line).
    NoCounts,
}

/// One arch row an architecture may print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchRowSpec {
    pub label: &'static str,
    /// Description as printed (trimmed), empty for single values/s390 classes.
    pub desc: &'static str,
    pub kind: ArchRowKind,
    /// Shown on a typical machine (synth prints only these).
    pub common: bool,
    /// Printed before the numbered rows (s390 `EXT`/`I/O`/`AIO`).
    pub leading: bool,
    /// Typical magnitude: 0 rare, 1 moderate, 2 hot (timer-like).
    pub heat: u8,
}

const fn row(label: &'static str, desc: &'static str, common: bool, heat: u8) -> ArchRowSpec {
    ArchRowSpec {
        label,
        desc,
        kind: ArchRowKind::PerCpu,
        common,
        leading: false,
        heat,
    }
}

const fn single(label: &'static str) -> ArchRowSpec {
    ArchRowSpec {
        label,
        desc: "",
        kind: ArchRowKind::Single,
        common: true,
        leading: false,
        heat: 0,
    }
}

const X86_HEAD: [ArchRowSpec; 18] = [
    row("NMI", "Non-maskable interrupts", true, 0),
    row("LOC", "Local timer interrupts", true, 2),
    row("SPU", "Spurious interrupts", true, 0),
    row("PMI", "Performance monitoring interrupts", true, 0),
    row("IWI", "IRQ work interrupts", true, 1),
    row("RTR", "APIC ICR read retries", true, 0),
    row("PLT", "Platform interrupts", false, 0),
    row("RES", "Rescheduling interrupts", true, 1),
    row("CAL", "Function call interrupts", true, 1),
    row("TLB", "TLB shootdowns", true, 1),
    row("TRM", "Thermal event interrupts", true, 0),
    row("THR", "Threshold APIC interrupts", true, 0),
    row("DFR", "Deferred Error APIC interrupts", false, 0),
    row("MCE", "Machine check exceptions", true, 0),
    row("MCP", "Machine check polls", true, 0),
    row("HYP", "Hypervisor callback interrupts", false, 0),
    row("HRE", "Hyper-V reenlightenment interrupts", false, 0),
    row("HVS", "Hyper-V stimer0 interrupts", false, 0),
];

const X86_KVM: [ArchRowSpec; 3] = [
    row("PIN", "Posted-interrupt notification event", true, 0),
    row("NPI", "Nested posted-interrupt event", true, 0),
    row("PIW", "Posted-interrupt wakeup event", true, 0),
];

const ARM64_IPIS: [&str; 8] = [
    "Rescheduling interrupts",
    "Function call interrupts",
    "CPU stop interrupts",
    "CPU stop NMIs",
    "Timer broadcast interrupts",
    "IRQ work interrupts",
    "CPU backtrace interrupts",
    "KGDB roundup interrupts",
];

const ARM_IPIS: [&str; 7] = [
    "CPU wakeup interrupts",
    "Timer broadcast interrupts",
    "Rescheduling interrupts",
    "Function call interrupts",
    "CPU stop interrupts",
    "IRQ work interrupts",
    "completion interrupts",
];

const RISCV_IPIS: [&str; 8] = [
    "Rescheduling interrupts",
    "Function call interrupts",
    "CPU stop interrupts",
    "CPU stop (for crash dump) interrupts",
    "IRQ work interrupts",
    "Timer broadcast interrupts",
    "CPU backtrace interrupts",
    "KGDB roundup interrupts",
];

const LOONGARCH_IPIS: [&str; 4] = [
    "LoongArch  1  Rescheduling interrupts",
    "LoongArch  2  Function call interrupts",
    "LoongArch  3  IRQ work interrupts",
    "LoongArch  4  Clear vector interrupts",
];

const IPI_LABELS: [&str; 8] = [
    "IPI0", "IPI1", "IPI2", "IPI3", "IPI4", "IPI5", "IPI6", "IPI7",
];

const POWERPC: [ArchRowSpec; 10] = [
    row(
        "LOC",
        "Local timer interrupts for timer event device",
        true,
        2,
    ),
    row(
        "BCT",
        "Broadcast timer interrupts for timer event device",
        true,
        0,
    ),
    row("LOC", "Local timer interrupts for others", true, 1),
    row("SPU", "Spurious interrupts", true, 0),
    row("PMI", "Performance monitoring interrupts", true, 0),
    row("MCE", "Machine check exceptions", true, 0),
    row("HMI", "Hypervisor Maintenance Interrupts", false, 0),
    row("NMI", "System Reset interrupts", true, 0),
    row("WDG", "Watchdog soft-NMI interrupts", true, 0),
    row("DBL", "Doorbell interrupts", true, 1),
];

const S390_SUB: [(&str, &str, bool); 20] = [
    ("CLK", "[EXT] Clock Comparator", true),
    ("EXC", "[EXT] External Call", true),
    ("EMS", "[EXT] Emergency Signal", true),
    ("TMR", "[EXT] CPU Timer", true),
    ("TAL", "[EXT] Timing Alert", false),
    ("PFL", "[EXT] Pseudo Page Fault", true),
    ("DSD", "[EXT] DASD Diag", false),
    ("VRT", "[EXT] Virtio", false),
    ("SCP", "[EXT] Service Call", true),
    ("IUC", "[EXT] IUCV", true),
    ("CMS", "[EXT] CPU-Measurement: Sampling", true),
    ("CMC", "[EXT] CPU-Measurement: Counter", true),
    ("CIO", "[I/O] Common I/O Layer Interrupt", true),
    ("DAS", "[I/O] DASD", true),
    ("C15", "[I/O] 3215", true),
    ("QAI", "[AIO] QDIO Adapter Interrupt", true),
    ("PCF", "[AIO] PCI Floating Interrupt", true),
    ("PCD", "[AIO] PCI Directed Interrupt", true),
    ("MSI", "[AIO] MSI Interrupt", true),
    ("NMI", "[NMI] Machine Check", true),
];

fn ipis<'a>(descs: &'a [&'static str], hot: usize) -> impl Iterator<Item = ArchRowSpec> + 'a {
    IPI_LABELS
        .iter()
        .zip(descs)
        .enumerate()
        .map(move |(i, (l, d))| row(l, d, true, u8::from(i < hot)))
}

/// Every arch row `arch` may print in `era`, in kernel order.
pub fn arch_row_specs(arch: Arch, era: Era) -> Vec<ArchRowSpec> {
    let mut v = Vec::new();
    match arch {
        Arch::X86 if era == Era::E4 => {
            v.extend(X86_HEAD);
            v.extend(X86_KVM);
            v.push(row("VPMI", "Perf Guest Mediated PMI", false, 0));
            v.push(row("PMN", "Posted MSI notification event", false, 0));
            v.push(row("ERR", "PIC/APIC error interrupts", true, 0));
            v.push(row("MIS", "Misrouted IO/APIC interrupts", true, 0));
        }
        Arch::X86 => {
            v.extend(X86_HEAD);
            v.push(single("ERR"));
            v.push(single("MIS"));
            v.extend(X86_KVM);
            v.push(row("PMN", "Posted MSI notification event", false, 0));
        }
        Arch::Arm64 => {
            v.extend(ipis(&ARM64_IPIS, 2));
            v.push(single("Err"));
        }
        Arch::Arm => {
            v.push(ArchRowSpec {
                label: "FIQ",
                desc: "usb_fiq",
                kind: ArchRowKind::NoCounts,
                common: false,
                leading: false,
                heat: 0,
            });
            v.extend(ipis(&ARM_IPIS, 4));
            v.push(single("Err"));
        }
        Arch::Powerpc => v.extend(POWERPC),
        Arch::Riscv => v.extend(ipis(&RISCV_IPIS, 2)),
        Arch::Loongarch => {
            v.extend(ipis(&LOONGARCH_IPIS, 2));
            v.push(single("ERR"));
        }
        Arch::Mips => v.push(single("ERR")),
        Arch::S390 => {
            for label in ["EXT", "I/O", "AIO"] {
                v.push(ArchRowSpec {
                    leading: true,
                    ..row(label, "", true, 1)
                });
            }
            v.extend(S390_SUB.iter().map(|&(l, d, c)| row(l, d, c, 0)));
        }
    }
    v
}
