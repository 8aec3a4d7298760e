//! insta snapshots of the parsed model for a representative set of
//! `/proc/interrupts` files: this project's VM capture (x86_64, 6.18, E3)
//! and hand-written files for other eras and architectures, one row per
//! line: label | irq | shape | counts | chip | hwirq | trigger | flow | actions.

#![allow(clippy::unwrap_used)]

use irqlab_core::Interrupts;
use std::fmt::Write;

fn summary(bytes: &[u8]) -> String {
    let m = Interrupts::parse(bytes).unwrap_or_else(|e| panic!("{e}"));
    let mut s = format!("cpus: {:?}\n", m.cpus);
    for r in m.rows() {
        let p = &r.parts;
        let actions: Vec<&str> = p.actions().collect();
        writeln!(
            s,
            "{} | {:?} | {:?} | {:?} | {:?} | {:?} | {:?} | {:?} | {:?} | {:?}",
            r.label,
            r.irq,
            r.shape,
            r.counts,
            p.chip,
            p.hwirq,
            p.trigger,
            p.flow,
            actions,
            r.description
        )
        .unwrap();
    }
    s
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/interrupts/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn vm_capture_x86_64_6_18() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../irqlab/tests/fixtures/vm-2cpu-6.18/proc/interrupts"
    );
    insta::assert_snapshot!(summary(&std::fs::read(p).unwrap()));
}

macro_rules! snap {
    ($fn:ident, $file:literal) => {
        #[test]
        fn $fn() {
            insta::assert_snapshot!(summary(&fixture($file)));
        }
    };
}

snap!(arm64_gicv3_e3, "arm64-4cpu-gicv3-e3-constructed");
snap!(arm_fiq, "arm-2cpu-fiq-constructed");
snap!(loongarch, "loongarch-2cpu-constructed");
snap!(
    powerpc_duplicate_loc,
    "powerpc-2cpu-duplicate-loc-constructed"
);
snap!(s390x, "s390x-2cpu-constructed");
snap!(x86_64_e4, "x86_64-3cpu-e4-constructed");
snap!(
    x86_64_e1_old_chip_flow,
    "x86_64-3of4cpu-e1-old-chip-flow-constructed"
);
