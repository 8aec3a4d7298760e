//! The trial schedule of a bench run: which variant runs each trial, in
//! alternating (ABAB…) or seeded random order per round, so that variants
//! on the same kernel see the same drift; and the default IRQ selectors of
//! each built-in workload.

use super::workloads::WorkloadKind;

/// Order of variants within each round of trials.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// A B A B … (rotating the first variant each round).
    #[default]
    Alternate,
    /// A random permutation per round (seeded by `--seed`).
    Random,
}

/// One scheduled trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub variant: usize,
    pub trial: u32,
}

/// SplitMix64: tiny, seeded, good enough for shuffling a schedule.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `trials` rounds over `variants` variants; `done[v]` trials of variant v
/// already exist (resume) and are skipped.
pub fn schedule(variants: usize, trials: u32, order: Order, seed: u64, done: &[u32]) -> Vec<Slot> {
    let mut state = seed;
    let mut out = Vec::new();
    for round in 0..trials {
        let mut idx: Vec<usize> = (0..variants).collect();
        match order {
            Order::Alternate => idx.rotate_left(round as usize % variants.max(1)),
            Order::Random => {
                for i in (1..idx.len()).rev() {
                    let j = (next(&mut state) % (i as u64 + 1)) as usize;
                    idx.swap(i, j);
                }
            }
        }
        for v in idx {
            if round >= done.get(v).copied().unwrap_or(0) {
                out.push(Slot {
                    variant: v,
                    trial: round,
                });
            }
        }
    }
    out
}

/// IRQ selectors used when `--irq` is not given: the counter each built-in
/// workload is meant to raise (selectors that match nothing are dropped).
pub fn default_selectors(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Ipi => &["Rescheduling interrupts", "Function call interrupts"],
        WorkloadKind::Tlb => &["TLB shootdowns"],
        WorkloadKind::Timer => &["Local timer interrupts"],
        WorkloadKind::Disk => &[r"virtio\d+-req|nvme\d+q|ahci|mmc"],
        WorkloadKind::Net | WorkloadKind::Command => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternates_and_rotates() {
        let s: Vec<usize> = schedule(2, 3, Order::Alternate, 0, &[])
            .iter()
            .map(|x| x.variant)
            .collect();
        assert_eq!(s, vec![0, 1, 1, 0, 0, 1]);
    }

    #[test]
    fn random_is_seeded_and_complete() {
        let a = schedule(3, 20, Order::Random, 7, &[]);
        assert_eq!(a, schedule(3, 20, Order::Random, 7, &[]));
        assert_ne!(a, schedule(3, 20, Order::Random, 8, &[]));
        for v in 0..3 {
            assert_eq!(a.iter().filter(|x| x.variant == v).count(), 20);
        }
        let firsts: Vec<usize> = a.chunks(3).map(|c| c[0].variant).collect();
        assert!(
            firsts.iter().any(|&f| f != firsts[0]),
            "never reorders: {firsts:?}"
        );
    }

    #[test]
    fn resume_skips_done_trials() {
        let s = schedule(2, 5, Order::Alternate, 0, &[3, 5]);
        assert_eq!(
            s,
            vec![
                Slot {
                    variant: 0,
                    trial: 3
                },
                Slot {
                    variant: 0,
                    trial: 4
                }
            ]
        );
    }
}
