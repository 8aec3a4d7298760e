//! Round trip `parse(render(m))` for random but realistic `/proc/interrupts`
//! models on every era × arch, plus fixed huge (1152-CPU) and synth cases.
//!
//! Generator restrictions (inputs the text format cannot represent):
//! * A numbered row with no hwirq, no flow, no trigger and no actions prints
//!   only its chip; a lone token is indistinguishable from pre-3.x lines that
//!   print only an action (`  1:  0   4020KEY`), so such rows get a hwirq.
//! * s390 prints only the first action and no hwirq/trigger/flow: s390 rows
//!   have exactly one action and none of those parts.
//! * With one CPU a single-value row (`ERR:`) and a per-CPU row without
//!   description print the same bytes; `Single` is compared as `PerCpu` then.
//! * Chip names never contain a numeric token or a double space, and action
//!   names never start with `-`, `Level` or `Edge` (the kernel does not escape
//!   them, so the split would be ambiguous); the pools below respect that.

#![allow(clippy::unwrap_used)]

use irqlab_core::desc::DescParts;
use irqlab_core::interrupts::{Interrupts, IrqRow, Shape, Width};
use irqlab_core::render::{render_interrupts, Arch, Era};
use irqlab_core::synth::{arch_row_specs, ArchRowKind, SynthSpec};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::ValueTree;

fn chips(arch: Arch) -> &'static [&'static str] {
    match arch {
        Arch::X86 => &[
            "IO-APIC",
            "IR-IO-APIC",
            "PCI-MSIX-0000:00:01.0",
            "PCI-MSI-0000:3b:00.0",
            "IR-PCI-MSI",
            "IR-PCI-MSIX-0000:5e:00.1",
            "DMAR-MSI",
            "Hyper-V PCIe MSI",
            "xen-dyn",
            "None",
            "-",
        ],
        Arch::Arm64 => &[
            "GICv3",
            "GIC-0",
            "ITS-MSI",
            "PCI-MSI",
            "ITS-PCI-MSIX-0002:01:00.0",
            "mbigen-v2",
            "None",
        ],
        Arch::Arm => &["GIC-0", "GIC", "gpio-mxc", "PCI-MSI", "-"],
        Arch::Powerpc => &["XIVE-IRQ", "XICS", "MPIC", "XIVE-PCI-MSI", "OPAL"],
        Arch::Riscv => &[
            "SiFive PLIC",
            "RISC-V INTC",
            "APLIC-MSI",
            "PCI-MSIX-0000:00:01.0",
        ],
        Arch::Loongarch => &[
            "eiointc",
            "PCH-PIC-EXT",
            "LIOINTC",
            "PCH-MSI-EXT",
            "CPUINTC",
        ],
        Arch::Mips => &["MIPS GIC", "MIPS GIC Local", "XT-PIC", "PCI-MSI"],
        Arch::S390 => &["PCI-MSI", "zPCI"],
    }
}

const ACTIONS: &[&str] = &[
    "ACPI:Ged",
    "virtio0-config",
    "virtio3-rx",
    "ahci[0000:00:17.0]",
    "mlx5_comp0@pci:0000:3b:00.0",
    "mlx5_async0@pci:0001:00:00.0",
    "PCIe PME",
    "aerdrv",
    "nvme0q12",
    "eth0-TxRx-7",
    "i8042",
    "timer",
    "xhci_hcd",
    "ehci_hcd:usb1",
    "i801_smbus",
    "arch_timer",
    "fglrx[0]@PCI:1:0:0",
    "0000:00:1f.2",
    "SGX ISR",
    "dmar0",
    "snd_hda_intel:card0",
];

const FLOWS: &[&str] = &[
    "",
    "edge",
    "fasteoi",
    "level",
    "simple",
    "percpu_devid",
    "edge_eoi",
    "event",
];

fn count() -> impl Strategy<Value = u64> {
    let max = u64::from(u32::MAX);
    prop_oneof![
        3 => Just(0u64),
        3 => 0u64..1000,
        2 => 0..=max,
        1 => (max - 10)..=max,
    ]
}

fn hwirq() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        1 => Just(None),
        3 => (0i64..64).prop_map(Some),
        2 => (0i64..2_000_000).prop_map(Some),
        1 => (0i64..=(1i64 << 40)).prop_map(Some),
        1 => (i64::from(i32::MIN)..0).prop_map(Some),
    ]
}

/// Raw material of one numbered row; `build_row` applies the era/arch rules.
#[derive(Debug, Clone)]
struct RawRow {
    gap: u32,
    chip: &'static str,
    hwirq: Option<i64>,
    level: bool,
    flow: &'static str,
    actions: Vec<&'static str>,
    counts: Vec<u64>,
}

fn raw_row(arch: Arch) -> impl Strategy<Value = RawRow> {
    (
        1u32..40,
        select(chips(arch)),
        hwirq(),
        any::<bool>(),
        select(FLOWS),
        prop::collection::vec(select(ACTIONS), 0..=3),
        prop::collection::vec(count(), 64),
    )
        .prop_map(|(gap, chip, hwirq, level, flow, actions, counts)| RawRow {
            gap,
            chip,
            hwirq,
            level,
            flow,
            actions,
            counts,
        })
}

fn build_row(raw: RawRow, irq: u32, ncpus: usize, era: Era, arch: Arch) -> IrqRow {
    let mut parts = DescParts {
        chip: raw.chip.into(),
        hwirq: raw.hwirq,
        trigger: Default::default(),
        flow: raw.flow.into(),
        actions: raw.actions.join(", ").into(),
    };
    // Negative hwirqs only existed with the old `%*d` cast (E1 kernels).
    if era != Era::E1 {
        parts.hwirq = parts.hwirq.map(i64::abs);
    }
    if arch.shows_level() {
        parts.trigger = if raw.level { "Level" } else { "Edge" }.into();
    }
    // E2+ only show rows with an action.
    if era != Era::E1 && parts.actions.is_empty() {
        parts.actions = "virtio0-config".into();
    }
    if arch == Arch::S390 {
        parts.hwirq = None;
        parts.flow.clear();
        parts.actions = raw
            .actions
            .first()
            .copied()
            .unwrap_or("mlx5_comp0@pci:0001:00:00.0")
            .into();
    } else if parts.hwirq.is_none()
        && parts.flow.is_empty()
        && parts.trigger.is_empty()
        && parts.actions.is_empty()
    {
        parts.hwirq = Some(0);
    }
    IrqRow {
        label: irq.to_string().into(),
        irq: Some(irq),
        shape: Shape::PerCpu,
        width: Width::U32,
        counts: raw.counts.into_iter().take(ncpus).collect(),
        description: Default::default(),
        parts,
    }
}

/// A model, its era/arch and nr_irqs.
#[derive(Debug, Clone)]
struct Case {
    era: Era,
    arch: Arch,
    nr_irqs: u32,
    model: Interrupts,
}

fn case() -> impl Strategy<Value = Case> {
    (select(Era::ALL.to_vec()), select(Arch::ALL.to_vec()))
        .prop_flat_map(|(era, arch)| case_for(era, arch))
}

fn case_for(era: Era, arch: Arch) -> impl Strategy<Value = Case> {
    let specs = arch_row_specs(arch, era);
    (
        prop::collection::btree_set(0u32..200, 1..=64),
        select(vec![
            16u32,
            424,
            999,
            1000,
            8360,
            9999,
            10_000,
            123_456,
            4_000_000_000,
        ]),
        prop::collection::vec(raw_row(arch), 0..20),
        prop::collection::vec(
            (any::<bool>(), prop::collection::vec(count(), 64)),
            specs.len(),
        ),
    )
        .prop_map(move |(cpus, nr, raws, arch_picks)| {
            let cpus: Vec<u32> = cpus.into_iter().collect();
            let n = cpus.len();
            let mut irq = if arch == Arch::S390 { 2 } else { 0 };
            let numbered: Vec<IrqRow> = raws
                .into_iter()
                .map(|raw| {
                    irq += raw.gap;
                    build_row(raw, irq, n, era, arch)
                })
                .collect();
            let mut leading = Vec::new();
            let mut trailing = Vec::new();
            for (spec, (keep, counts)) in specs.iter().zip(arch_picks) {
                if !keep {
                    continue;
                }
                let (shape, take) = match spec.kind {
                    ArchRowKind::PerCpu => (Shape::PerCpu, n),
                    ArchRowKind::Single => (Shape::Single, 1),
                    ArchRowKind::NoCounts => (Shape::NoCounts, 0),
                };
                let row = IrqRow {
                    label: spec.label.into(),
                    shape,
                    width: Width::of_label(spec.label.as_bytes()),
                    counts: counts.into_iter().take(take).collect(),
                    description: spec.desc.into(),
                    ..IrqRow::default()
                };
                if spec.leading {
                    leading.push(row);
                } else {
                    trailing.push(row);
                }
            }
            let mut rows = leading;
            rows.extend(numbered);
            rows.extend(trailing);
            Case {
                era,
                arch,
                nr_irqs: nr.max(irq + 1),
                model: Interrupts::from_parts(cpus, rows),
            }
        })
}

fn render(m: &Interrupts, era: Era, arch: Arch, nr_irqs: u32) -> String {
    let mut out = String::new();
    render_interrupts(m, era, arch, nr_irqs, &mut out);
    out
}

/// Assert `parse(render(m))` recovers `m` and re-renders to the same bytes.
fn check(m: &Interrupts, era: Era, arch: Arch, nr_irqs: u32) {
    let text = render(m, era, arch, nr_irqs);
    let got = Interrupts::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(got.cpus, m.cpus);
    assert_eq!(got.rows().len(), m.rows().len(), "{text}");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    for ((g, w), line) in got.rows().iter().zip(m.rows()).zip(&lines) {
        let ctx = format!("{era:?}/{arch:?} line {line:?}");
        assert_eq!(g.label, w.label, "{ctx}");
        assert_eq!(g.irq, w.irq, "{ctx}");
        let want_shape = match w.shape {
            Shape::Single if m.cpus.len() == 1 => Shape::PerCpu,
            s => s,
        };
        assert_eq!(g.shape, want_shape, "{ctx}");
        assert_eq!(g.width, w.width, "{ctx}");
        assert_eq!(g.counts, w.counts, "{ctx}");
        if w.irq.is_some() {
            assert_eq!(g.parts, w.parts, "{ctx}");
        } else {
            assert_eq!(g.description, w.description, "{ctx}");
        }
    }
    assert_eq!(render(&got, era, arch, nr_irqs), text, "re-render differs");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn interrupts_round_trip(c in case()) {
        check(&c.model, c.era, c.arch, c.nr_irqs);
    }

    #[test]
    fn synth_round_trip(
        cpus in 1u32..40,
        irqs in 0u32..120,
        era in select(Era::ALL.to_vec()),
        arch in select(Arch::ALL.to_vec()),
        offline in prop::collection::vec(0u32..40, 0..4),
        seed in any::<u64>(),
    ) {
        let offline: Vec<u32> = offline.into_iter().filter(|&c| c < cpus && c != 0).collect();
        let spec = SynthSpec { cpus, irqs, nr_irqs: 1200, arch, era, offline, seed };
        let tree = spec.build().map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(&tree.interrupts, era, arch, 1200);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Parsing into a model that held another file gives what a fresh
    /// parse gives (parse_into keeps a row's split description when the
    /// text is unchanged).
    #[test]
    fn parse_into_after_another_file(a in case(), b in case()) {
        let (ta, tb) = (render(&a.model, a.era, a.arch, a.nr_irqs), render(&b.model, b.era, b.arch, b.nr_irqs));
        let mut m = Interrupts::parse(ta.as_bytes()).unwrap();
        m.parse_into(tb.as_bytes()).unwrap();
        prop_assert_eq!(&m, &Interrupts::parse(tb.as_bytes()).unwrap());
        m.parse_into(ta.as_bytes()).unwrap();
        prop_assert_eq!(&m, &Interrupts::parse(ta.as_bytes()).unwrap());
    }
}

/// Every era × arch pair, explicitly (the proptest above draws them at random).
#[test]
fn every_era_and_arch_round_trips() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for era in Era::ALL {
        for arch in Arch::ALL {
            for _ in 0..12 {
                let c = case_for(era, arch)
                    .new_tree(&mut runner)
                    .expect("tree")
                    .current();
                check(&c.model, c.era, c.arch, c.nr_irqs);
            }
        }
    }
}

#[test]
fn huge_1152_cpus_round_trip() {
    for (arch, era) in [
        (Arch::X86, Era::E3),
        (Arch::Arm64, Era::E4),
        (Arch::X86, Era::E1),
        (Arch::S390, Era::E3),
    ] {
        let spec = SynthSpec {
            cpus: 1152,
            irqs: 1056,
            nr_irqs: 1160,
            arch,
            era,
            offline: vec![5, 600, 601, 1151],
            seed: 42,
        };
        let tree = spec.build().expect("builds");
        assert_eq!(tree.interrupts.cpus.len(), 1148);
        check(&tree.interrupts, era, arch, 1160);
    }
}
