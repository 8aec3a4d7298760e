//! Byte-exact rendering against real captures and the examples of docs/formats/.
//!
//! The softirqs/stat models are built here with a tiny test-only splitter,
//! not the crate's parsers.

#![allow(clippy::unwrap_used)]

mod common;
use irqlab_core::interrupts::Interrupts;
use irqlab_core::render::{render_interrupts, render_softirqs, render_stat, Arch, Era};
use irqlab_core::softirqs::{SoftirqRow, Softirqs};
use irqlab_core::stat::{CpuTimes, Stat};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/vm-2cpu-6.18-render"
);
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURE}/{name}")).expect("fixture readable")
}

fn rerender(text: &str, era: Era, arch: Arch, nr_irqs: u32) -> String {
    let m = Interrupts::parse(text.as_bytes()).expect("parses");
    let mut out = String::new();
    render_interrupts(&m, era, arch, nr_irqs, &mut out);
    out
}

#[test]
fn this_vm_interrupts_e3_x86_byte_exact() {
    let text = fixture("interrupts");
    assert_eq!(rerender(&text, Era::E3, Arch::X86, 424), text);
}

#[test]
fn corpus_firecracker_byte_exact() {
    let path = format!("{CORPUS}/x86_64-2cpu-firecracker-vm-6.18.interrupts");
    let Ok(text) = std::fs::read_to_string(&path) else {
        common::corpus_skipped(
            "render_exact: corpus_firecracker_byte_exact",
            "x86_64-2cpu-firecracker-vm-6.18.interrupts",
        );
        return;
    };
    assert_eq!(rerender(&text, Era::E3, Arch::X86, 424), text);
}

/// Test-only split of `/proc/softirqs` into the model.
fn softirqs_model(text: &str) -> Softirqs {
    let mut lines = text.lines();
    let cpus = lines
        .next()
        .expect("header")
        .split_whitespace()
        .map(|c| c.trim_start_matches("CPU").parse().expect("cpu id"))
        .collect();
    let rows = lines
        .map(|l| {
            let (name, counts) = l.split_once(':').expect("colon");
            SoftirqRow {
                name: name.trim().to_string(),
                counts: counts
                    .split_whitespace()
                    .map(|c| c.parse().expect("count"))
                    .collect(),
            }
        })
        .collect();
    Softirqs::new(cpus, rows)
}

#[test]
fn this_vm_softirqs_byte_exact() {
    let text = fixture("softirqs");
    let mut out = String::new();
    render_softirqs(&softirqs_model(&text), &mut out);
    assert_eq!(out, text);
}

/// Test-only split of `/proc/stat` into the model.
fn stat_model(text: &str) -> Stat {
    let mut m = Stat::default();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let key = it.next().expect("key");
        let vals: Vec<u64> = it.map(|v| v.parse().expect("number")).collect();
        let first = vals.first().copied();
        let rest = vals.get(1..).unwrap_or_default().to_vec();
        match key {
            "cpu" => {
                m.total = CpuTimes {
                    cpu: None,
                    fields: vals,
                }
            }
            "intr" => (m.intr_total, m.intr) = (first.expect("intr total"), rest),
            "softirq" => (m.softirq_total, m.softirq) = (first, rest),
            "ctxt" => m.ctxt = first,
            "btime" => m.btime = first,
            "processes" => m.processes = first,
            "procs_running" => m.procs_running = first,
            "procs_blocked" => m.procs_blocked = first,
            k => m.cpus.push(CpuTimes {
                cpu: Some(k.trim_start_matches("cpu").parse().expect("cpu id")),
                fields: vals,
            }),
        }
    }
    m
}

#[test]
fn this_vm_stat_byte_exact() {
    let text = fixture("stat");
    let m = stat_model(&text);
    assert_eq!(m.intr.len(), 424);
    let mut out = String::new();
    render_stat(&m, &mut out);
    assert_eq!(out, text);
}

/// The byte-exact examples of docs/formats/interrupts.md and
/// docs/formats/edge-cases.md, one model per block.
#[test]
fn formats_md_examples() {
    let e3 = "           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 28:          0          0 PCI-MSIX-0000:00:01.0   0-edge      virtio0-config\n";
    assert_eq!(rerender(e3, Era::E3, Arch::X86, 424), e3);
    let e1 = rerender(e3, Era::E1, Arch::X86, 424);
    assert_eq!(
        e1.lines().skip(1).collect::<Vec<_>>(),
        [
            " 24:          1          0   IO-APIC   5-edge      ACPI:Ged",
            " 28:          0          0  PCI-MSIX-0000:00:01.0   0-edge      virtio0-config"
        ]
    );
    assert_eq!(rerender(e3, Era::E2, Arch::X86, 424), e1);
    let e4 = rerender(e3, Era::E4, Arch::X86, 424);
    assert_eq!(
        e4.lines().skip(1).collect::<Vec<_>>(),
        [
            "  24:          1          0  IO-APIC                  5-edge      ACPI:Ged",
            "  28:          0          0  PCI-MSIX-0000:00:01.0    0-edge      virtio0-config"
        ]
    );
    let gic = "           CPU0       CPU1       \n 11:      12345       6789    GICv3  30 Level     arch_timer\n";
    assert_eq!(rerender(gic, Era::E3, Arch::Arm64, 424), gic);
    let wide = "           CPU0       CPU1       CPU2       CPU3       \n 16: 4000000000          7          0          0  IO-APIC  16-fasteoi   ehci_hcd:usb1, i801_smbus\n  9:          0          0          0          0     None      acpi\n";
    assert_eq!(rerender(wide, Era::E3, Arch::X86, 424), wide);
    let e1_no_action = "           CPU0       CPU1       \n 17:          5          0   IO-APIC  17-fasteoi \n 61:          0          0   PCI-MSI -2147483648-edge      nvme0q1\n";
    assert_eq!(
        rerender(e1_no_action, Era::E1, Arch::X86, 424),
        e1_no_action
    );
}

#[test]
fn formats_md_arch_lines() {
    let x86 = "           CPU0       CPU1       \nNMI:          0          0   Non-maskable interrupts\nERR:          0\nMIS:          0\n";
    assert_eq!(rerender(x86, Era::E3, Arch::X86, 424), x86);
    let x86_e4 = "            CPU0       CPU1       \n NMI:          0          0  Non-maskable interrupts\nVPMI:          0          0  Perf Guest Mediated PMI\n ERR:          0          1  PIC/APIC error interrupts\n";
    assert_eq!(rerender(x86_e4, Era::E4, Arch::X86, 424), x86_e4);
    let arm64 = "           CPU0       CPU1       \nIPI0:1234567890         12       Rescheduling interrupts\nErr:          0\n";
    assert_eq!(rerender(arm64, Era::E3, Arch::Arm64, 424), arm64);
    let arm64_p4 = "            CPU0       CPU1       \nIPI0: 1234567890         12       Rescheduling interrupts\n";
    assert_eq!(rerender(arm64_p4, Era::E3, Arch::Arm64, 1000), arm64_p4);
    let la = "           CPU0       CPU1       \nIPI0:          5         12 LoongArch  1  Rescheduling interrupts\nERR:          0\n";
    assert_eq!(rerender(la, Era::E3, Arch::Loongarch, 424), la);
    let fiq = "           CPU0       \nFIQ:              usb_fiq\nIPI0:         0  CPU wakeup interrupts\n";
    assert_eq!(rerender(fiq, Era::E3, Arch::Arm, 424), fiq);
    let ppc = "           CPU0       CPU1       \nLOC:        100        200   Local timer interrupts for timer event device\nLOC:          3          4   Local timer interrupts for others\n";
    assert_eq!(rerender(ppc, Era::E3, Arch::Powerpc, 424), ppc);
    let s390 = "           CPU0       CPU1       \nEXT:        100        200 \n 64:          7          0   PCI-MSI  mlx5_async0@pci:0001:00:00.0\nCLK:        100        200   [EXT] Clock Comparator\n";
    assert_eq!(rerender(s390, Era::E3, Arch::S390, 424), s390);
}

/// Corpus captures whose format irqlab models (older "chip-flow" kernels and
/// vendor oddities are not rendered). `exact`: byte for byte; otherwise the
/// capture had trailing spaces stripped, so lines are compared trimmed.
const CORPUS_RENDERS: &[(&str, Era, Arch, u32, bool)] = &[
    (
        "x86_64-2cpu-firecracker-vm-6.18.interrupts",
        Era::E3,
        Arch::X86,
        424,
        true,
    ),
    (
        "x86_64-8cpu-pcp-qa.interrupts",
        Era::E1,
        Arch::X86,
        424,
        true,
    ),
    (
        "x86_64-2cpu-hyperv-coreos-sosreport.interrupts",
        Era::E1,
        Arch::X86,
        424,
        true,
    ),
    (
        "s390x-16cpu-pcp-qa.interrupts",
        Era::E1,
        Arch::S390,
        424,
        true,
    ),
    (
        "x86_64-8cpu-offline-cpu6-sysstat-root4.interrupts",
        Era::E1,
        Arch::X86,
        424,
        false,
    ),
    (
        "x86_64-4cpu-kvm-datadog-fixture.interrupts",
        Era::E1,
        Arch::X86,
        424,
        false,
    ),
];

#[test]
fn corpus_renders_like_the_kernel() {
    if !std::path::Path::new(CORPUS).is_dir() {
        common::corpus_skipped("render_exact: corpus_renders_like_the_kernel", "the corpus");
        return;
    }
    for &(name, era, arch, nr, exact) in CORPUS_RENDERS {
        let Ok(text) = std::fs::read_to_string(format!("{CORPUS}/{name}")) else {
            common::corpus_skipped("render_exact: corpus_renders_like_the_kernel", name);
            continue;
        };
        let out = rerender(&text, era, arch, nr);
        if exact {
            assert_eq!(out, text, "{name}");
        } else {
            let trimmed = |s: &str| {
                s.lines()
                    .map(|l| l.trim_end().to_string())
                    .collect::<Vec<_>>()
            };
            assert_eq!(trimmed(&out), trimmed(&text), "{name}");
        }
    }
}
