//! Every /sys/kernel/irq/N and /proc/irq/N attribute parser, CpuList (list
//! and hex mask, with a Display round trip) on the same bytes.
#![no_main]
use irqlab_core::cpulist::CpuList;
use irqlab_core::sysfs::{self, IrqAttrs, ProcIrqAttrs};
use libfuzzer_sys::fuzz_target;

const SYSFS: [&str; 7] = [
    "per_cpu_count",
    "chip_name",
    "hwirq",
    "type",
    "wakeup",
    "name",
    "actions",
];
const PROCFS: [&str; 5] = [
    "smp_affinity",
    "smp_affinity_list",
    "effective_affinity",
    "effective_affinity_list",
    "node",
];

fuzz_target!(|data: &[u8]| {
    let mut a = IrqAttrs::default();
    for f in SYSFS {
        let _ = a.set(f, data);
    }
    let _ = a.total();
    let mut p = ProcIrqAttrs::default();
    for f in PROCFS {
        let _ = p.set(f, data);
    }
    let mut v = Vec::new();
    let _ = sysfs::parse_per_cpu_count(data, &mut v);
    let _ = sysfs::parse_actions(data).map(|it| it.count());
    let _ = (
        sysfs::parse_hwirq(data),
        sysfs::parse_node(data),
        sysfs::parse_type(data),
    );
    for parsed in [
        CpuList::parse_list(data, "list"),
        CpuList::parse_mask(data, "mask"),
    ] {
        if let Ok(l) = parsed {
            let text = l.to_string();
            let back = CpuList::parse_list(text.as_bytes(), "list");
            assert_eq!(back.as_ref(), Ok(&l), "display round trip of {text:?}");
            assert_eq!(l.len(), l.iter().count());
            if let Some(first) = l.iter().next() {
                assert!(l.contains(first));
            }
        }
    }
});
