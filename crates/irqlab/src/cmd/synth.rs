//! `irqlab synth`: write a fake `/proc` + `/sys` tree (huge or exotic
//! machines) for tests and demos.
//!
//! Owns the flags, their validation and writing the files; everything the
//! files contain comes from `irqlab_core::synth` (pure, seeded). Must not
//! touch anything outside `--out`.

use crate::cmd::args;
use crate::export::plural;
use anyhow::Context;
use irqlab_core::render::{Arch, Era};
use irqlab_core::synth::{self, SynthSpec};
use irqlab_core::CpuList;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `irqlab synth`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of possible CPUs (0..N). Formerly --cpus.
    #[arg(long, alias = "cpus", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(synth::MAX_CPUS)))]
    pub ncpus: u32,
    /// Numbered IRQ rows to create.
    #[arg(long, value_parser = clap::value_parser!(u32).range(..=i64::from(synth::MAX_NR_IRQS)))]
    pub irqs: u32,
    /// nr_irqs: IRQ numbers spread over 0..K, sets the column width and the
    /// length of the /proc/stat intr line [default: max(424, 5/4 × irqs + 32)].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(synth::MAX_NR_IRQS)))]
    pub nr_irqs: Option<u32>,
    /// Architecture: x86, arm64, arm, powerpc, riscv, loongarch, mips, s390.
    #[arg(long, default_value = "x86", value_parser = Named::new(parse_arch, &Arch::ALL.map(Arch::name)))]
    pub arch: Arch,
    /// Format era: e1 (≤6.10), e2 (6.11–6.12), e3 (6.13–7.1), e4 (7.2+).
    #[arg(long, default_value = "e3", value_parser = Named::new(parse_era, &Era::ALL.map(Era::name)))]
    pub era: Era,
    /// Offline CPUs as a CPU list, e.g. `3,7-9`.
    #[arg(long, value_parser = args::cpu_list, default_value = "")]
    pub offline: CpuList,
    /// Seed of the deterministic generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Directory to write `proc/…` and `sys/…` under: created if missing,
    /// refused if it holds anything (a tree is never mixed with old files).
    #[arg(long)]
    pub out: PathBuf,
}

/// A value parser over a parse function that also offers its names to
/// shell completions (`--arch <TAB>`) without refusing the aliases the
/// function accepts (`x86_64`, `aarch64` …).
#[derive(Clone)]
struct Named<T: 'static> {
    parse: fn(&str) -> Result<T, String>,
    names: Vec<&'static str>,
}

impl<T: Clone + Send + Sync + 'static> Named<T> {
    fn new(parse: fn(&str) -> Result<T, String>, names: &[&'static str]) -> Self {
        Named {
            parse,
            names: names.to_vec(),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Named<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.names
                .iter()
                .map(|n| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    s.parse().map_err(|_| {
        let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

fn parse_era(s: &str) -> Result<Era, String> {
    s.parse()
        .map_err(|_| "expected one of e1, e2, e3, e4".to_string())
}

/// Refuses an `--out` that exists and is not an empty directory: a tree
/// written over another would keep the other's files where this one has
/// none (more CPUs' or IRQs' files), a mixed tree that no machine has.
/// `Ok(Some(why))`: a usage error (the directory holds files); `Err`: it
/// cannot be read.
fn refuse_non_empty(out: &std::path::Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_dir(out) {
        Ok(mut entries) => Ok(entries.next().is_some().then(|| {
            format!(
                "--out {} is not empty: a tree written into it would be mixed with \
                 the files already there; remove them or name a new directory",
                out.display()
            )
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("--out {}", out.display())),
    }
}

/// Say a usage error (a flag's value no tree can have) and exit 2, as
/// clap does for a value it refuses itself.
fn usage(why: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    eprintln!("irqlab: error: {why}");
    Ok(ExitCode::from(super::top::EXIT_USAGE))
}

/// Write the tree the flags describe under `--out`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let argv: Vec<String> = std::env::args().collect();
    for w in args::deprecated_spellings(&argv, &[("--cpus", "--ncpus")]) {
        eprintln!("irqlab: warning: {w}");
    }
    let nr_irqs = args.nr_irqs.unwrap_or_else(|| default_nr_irqs(args.irqs));
    if args.irqs > nr_irqs {
        return usage(format_args!(
            "--irqs {} is larger than --nr-irqs {nr_irqs}: IRQ numbers must be below nr_irqs",
            args.irqs
        ));
    }
    let spec = SynthSpec {
        cpus: args.ncpus,
        irqs: args.irqs,
        nr_irqs,
        arch: args.arch,
        era: args.era,
        offline: args.offline.iter().collect(),
        seed: args.seed,
    };
    let tree = match spec.build() {
        Ok(tree) => tree,
        Err(e) => return usage(format_args!("invalid synth parameters: {e}")),
    };
    if let Some(why) = refuse_non_empty(&args.out)? {
        return usage(why);
    }
    let files = tree.files();
    let bytes = crate::host::write_tree(&args.out, &files)?;
    eprintln!(
        "irqlab synth: wrote {}, {} to {} ({}, {} online, {}, nr_irqs {nr_irqs}, {} {})",
        plural(files.len(), "file"),
        plural(usize::try_from(bytes).unwrap_or(usize::MAX), "byte"),
        args.out.display(),
        plural(spec.cpus as usize, "CPU"),
        tree.online.len(),
        plural(spec.irqs as usize, "IRQ"),
        spec.arch.name(),
        spec.era.name(),
    );
    Ok(ExitCode::SUCCESS)
}

fn default_nr_irqs(irqs: u32) -> u32 {
    (irqs.saturating_add(irqs / 4).saturating_add(32)).max(424)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_nr_irqs_fits() {
        assert_eq!(default_nr_irqs(10), 424);
        assert_eq!(default_nr_irqs(1000), 1282);
        assert_eq!(default_nr_irqs(u32::MAX), u32::MAX);
    }
}
