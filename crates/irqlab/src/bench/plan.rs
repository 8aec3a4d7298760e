//! The plan of a bench run — a plain value built by the command layer
//! (variants, order, durations, output, resume, host preparation), never
//! clap types — its checks, its record in `plan.json`; the trial schedule
//! (which variant runs each trial, in alternating ABAB… or seeded random
//! order per round, so that variants on the same kernel see the same
//! drift); and, per built-in workload, the default IRQ selectors and the
//! headline metric.

use super::prepare::Preparation;
use super::workloads::{WorkloadKind, WorkloadOptions};
use crate::sampler::pace::LONGEST_RUN;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Order of variants within each round of trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// A B A B … (rotating the first variant each round).
    #[default]
    Alternate,
    /// A random permutation per round (seeded by `--seed`).
    Random,
}

impl Order {
    /// Every order with its name and help text.
    pub const ALL: [(Order, &'static str, &'static str); 2] = [
        (
            Order::Alternate,
            "alternate",
            "A B A B … (rotating the first variant each round)",
        ),
        (
            Order::Random,
            "random",
            "a random permutation per round (seeded by --seed)",
        ),
    ];
}

impl std::str::FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Order::ALL
            .iter()
            .find(|(_, n, _)| *n == s)
            .map(|(o, _, _)| *o)
            .ok_or_else(|| format!("unknown order {s:?} (alternate, random)"))
    }
}

/// A plan or input that cannot run, found before the first file or host
/// change; the command layer reports it as a usage error (exit code 2).
#[derive(Debug)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

/// An [`Invalid`] error.
pub fn invalid(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Invalid(msg.into()))
}

/// One variant of a run: its label, workload and host preparation.
#[derive(Debug, Clone)]
pub struct Variant {
    pub label: String,
    pub kind: WorkloadKind,
    pub options: WorkloadOptions,
    /// Preparation applied only around this variant's trials.
    pub prepare: Option<Preparation>,
}

/// Where the results go.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Output directory (default `./irqlab-results/<labels>/<timestamp>/`).
    pub dir: Option<PathBuf>,
    /// Continue the run already in `dir` (its plan was checked to match).
    pub resume: bool,
}

/// Everything a bench run needs; see the module docs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub variants: Vec<Variant>,
    /// Timed trials per variant.
    pub trials: u32,
    /// Untimed trials per variant first.
    pub warmup: u32,
    pub duration: Duration,
    pub cooldown: Duration,
    pub order: Order,
    pub seed: u64,
    /// `--measure` selectors (empty: each workload's defaults).
    pub irq: Vec<String>,
    /// Host preparation for the whole run.
    pub prepare: Preparation,
    pub output: Output,
    /// Root of /proc and /sys (tests use fake trees).
    pub root: PathBuf,
    /// Host-change journal (default: the guard's).
    pub journal: Option<PathBuf>,
    /// Trace every trial (`--trace`, feature `trace`).
    pub trace: bool,
    /// `--target-effect`: the change (percent) the summary says how many
    /// trials would detect.
    pub target_effect_pct: Option<f64>,
    /// The command line, recorded in `plan.json` for `--resume`.
    pub argv: Vec<String>,
}

/// The shortest trial window `check` accepts (`--trial-length`).
pub const MIN_TRIAL: Duration = Duration::from_millis(10);

impl Plan {
    /// Refuse a plan that cannot run (before anything is written).
    pub fn check(&self) -> anyhow::Result<()> {
        if self.trials == 0 {
            return Err(invalid("--trials 0: a run needs at least 1 trial"));
        }
        if self.duration < MIN_TRIAL {
            return Err(invalid(format!(
                "--trial-length {}: a trial must last at least {} (a shorter \
                 window holds a handful of interrupts: its rates would be noise)",
                shown(self.duration),
                shown(MIN_TRIAL)
            )));
        }
        // a command's window opens after its settle time
        let settle = self.variants.iter().map(|v| v.options.settle).max();
        for (flag, d) in [
            ("--trial-length", self.duration),
            ("--cooldown", self.cooldown),
            ("--settle", settle.unwrap_or_default()),
        ] {
            // a trial's end (start + length) must not overflow
            if d > LONGEST_RUN {
                return Err(invalid(format!(
                    "{flag} {}: at most {} (365 days)",
                    shown(d),
                    shown(LONGEST_RUN)
                )));
            }
        }
        if self.variants.is_empty() {
            return Err(invalid("no variant to run"));
        }
        self.check_dirs()
    }

    /// Refuse two variants whose results would share one directory
    /// (`a b` and `a_b` both write `<out>/a_b/`): their trials would be
    /// one file, and each variant's summary would count both.
    fn check_dirs(&self) -> anyhow::Result<()> {
        for (i, x) in self.variants.iter().enumerate() {
            let dir = crate::results::variant_dir(&x.label);
            let Some(y) = self.variants[..i]
                .iter()
                .find(|y| crate::results::variant_dir(&y.label) == dir)
            else {
                continue;
            };
            return Err(invalid(format!(
                "variants {:?} and {:?} would both write their trials to <out>/{dir}/: \
                 name them apart (letters, digits, '-', '_' and '.' are kept as they are)",
                y.label, x.label
            )));
        }
        Ok(())
    }
}

/// `d` as a duration flag takes it, in the largest unit that holds it
/// whole (`9000h`, `1500ms`, `1ns`): a value echoed in a message reads
/// as it was given, not as `32400000s`.
pub fn shown(d: Duration) -> String {
    const UNITS: [(&str, u128); 5] = [
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ];
    let ns = d.as_nanos();
    if ns == 0 {
        return "0s".to_string();
    }
    UNITS.iter().find(|&&(_, per)| ns % per == 0).map_or_else(
        || format!("{ns}ns"),
        |&(unit, per)| format!("{}{unit}", ns / per),
    )
}

/// `plan.json`: what `--resume` needs to continue a run (the command line)
/// and, for humans and checks, the plan it stands for.
#[derive(Debug, Serialize, Deserialize)]
pub struct PlanFile {
    pub argv: Vec<String>,
    pub variants: Vec<String>,
    #[serde(default)]
    pub workloads: Vec<String>,
    pub trials: u32,
    #[serde(default)]
    pub warmup: u32,
    #[serde(default)]
    pub duration_s: f64,
    #[serde(default)]
    pub order: Order,
    #[serde(default)]
    pub seed: u64,
    pub created_at: String,
}

impl PlanFile {
    /// The record of `plan`.
    pub fn of(plan: &Plan, created_at: String) -> Self {
        PlanFile {
            argv: plan.argv.clone(),
            variants: plan.variants.iter().map(|v| v.label.clone()).collect(),
            workloads: plan
                .variants
                .iter()
                .map(|v| v.kind.name().to_string())
                .collect(),
            trials: plan.trials,
            warmup: plan.warmup,
            duration_s: plan.duration.as_secs_f64(),
            order: plan.order,
            seed: plan.seed,
            created_at,
        }
    }
}

/// One scheduled trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialSlot {
    pub variant: usize,
    pub trial: u32,
}

/// `trials` rounds over `variants` variants; `done[v]` trials of variant v
/// already exist (resume) and are skipped.
pub fn schedule(
    variants: usize,
    trials: u32,
    order: Order,
    seed: u64,
    done: &[u32],
) -> Vec<TrialSlot> {
    let mut rng = irqlab_core::rng::Rng::new(seed);
    let mut out = Vec::new();
    for round in 0..trials {
        let mut idx: Vec<usize> = (0..variants).collect();
        match order {
            Order::Alternate => idx.rotate_left(round as usize % variants.max(1)),
            Order::Random => {
                for i in (1..idx.len()).rev() {
                    let j = rng.index(i + 1);
                    idx.swap(i, j);
                }
            }
        }
        for v in idx {
            if round >= done.get(v).copied().unwrap_or(0) {
                out.push(TrialSlot {
                    variant: v,
                    trial: round,
                });
            }
        }
    }
    out
}

/// The headline metric of a workload: the stable figure shown in progress
/// lines (its own throughput; `None`: the selected IRQs' total rate).
/// Not the first selected IRQ: on a VM, ipi wakeups move between RES and
/// CAL from trial to trial, so either alone varies far more than the work.
pub fn headline(kind: WorkloadKind) -> Option<&'static str> {
    match kind {
        WorkloadKind::Ipi => Some("round_trips_per_sec"),
        WorkloadKind::Tlb => Some("unmaps_per_sec"),
        WorkloadKind::Timer => Some("wakeups_per_sec"),
        WorkloadKind::Net => Some("bytes_per_sec"),
        WorkloadKind::Disk => Some("iops"),
        WorkloadKind::Command => None,
    }
}

/// IRQ selectors used when `--measure` is not given: the counter each built-in
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
    fn durations_are_shown_in_the_largest_whole_unit() {
        let cases = [
            (Duration::from_secs(9000 * 3600), "9000h"),
            (LONGEST_RUN, "8760h"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_millis(1500), "1500ms"),
            (MIN_TRIAL, "10ms"),
            (Duration::from_micros(5), "5us"),
            (Duration::from_nanos(1), "1ns"),
            (Duration::ZERO, "0s"),
        ];
        for (d, want) in cases {
            assert_eq!(shown(d), want, "{d:?}");
        }
    }

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
                TrialSlot {
                    variant: 0,
                    trial: 3
                },
                TrialSlot {
                    variant: 0,
                    trial: 4
                }
            ]
        );
    }
}
