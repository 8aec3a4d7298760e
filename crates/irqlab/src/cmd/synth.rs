//! `irqlab synth`: write a fake `/proc` + `/sys` tree (huge or exotic
//! machines) for tests and demos.
//!
//! Owns the flags, their validation and writing the files; everything the
//! files contain comes from `irqlab_core::synth` (pure, seeded). Must not
//! touch anything outside `--out`. Before generating, estimates the tree's
//! size from the flags: says it when large, refuses it when the file
//! system of `--out` has less free space.

use crate::cmd::args;
use crate::export::plural;
use anyhow::Context;
use irqlab_core::render::{Arch, Era};
use irqlab_core::synth::{self, SizeEstimate, SynthSpec};
use irqlab_core::CpuList;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `irqlab synth`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab synth --ncpus 488 --irqs 1000 --nr-irqs 8360 --out /tmp/big   # a 488-CPU server\n  \
    irqlab synth --ncpus 1152 --irqs 1056 --out /tmp/huge && irqlab show --root /tmp/huge\n  \
    irqlab synth --ncpus 16 --irqs 40 --arch arm64 --era e4 --offline 3,7-9 --out /tmp/arm")]
pub struct Args {
    /// Number of possible CPUs (0..N). Formerly --cpus.
    #[arg(long, alias = "cpus", value_name = "N", allow_hyphen_values = true,
          value_parser = |s: &str| args::whole_number::<u32>(s, 1, synth::MAX_CPUS.into()))]
    pub ncpus: u32,
    /// Numbered IRQ rows to create.
    #[arg(long, allow_hyphen_values = true,
          value_parser = |s: &str| args::whole_number::<u32>(s, 0, synth::MAX_NR_IRQS.into()))]
    pub irqs: u32,
    /// nr_irqs: IRQ numbers spread over 0..K, sets the column width and the
    /// length of the /proc/stat intr line [default: max(424, 5/4 × irqs + 32)].
    #[arg(long, allow_hyphen_values = true,
          value_parser = |s: &str| args::whole_number::<u32>(s, 1, synth::MAX_NR_IRQS.into()))]
    pub nr_irqs: Option<u32>,
    /// Architecture: x86, arm64, arm, powerpc, riscv, loongarch, mips, s390.
    #[arg(long, default_value = "x86", value_parser = args::Named::new(parse_arch, &Arch::ALL.map(Arch::name)))]
    pub arch: Arch,
    /// Format era: e1 (≤6.10), e2 (6.11–6.12), e3 (6.13–7.1), e4 (7.2+).
    #[arg(long, default_value = "e3", value_parser = args::Named::new(parse_era, &Era::ALL.map(Era::name)))]
    pub era: Era,
    /// Offline CPUs as a CPU list, e.g. `3,7-9`.
    #[arg(long, value_parser = args::cpu_list, default_value = "")]
    pub offline: CpuList,
    /// Seed of the deterministic generator.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true,
          value_parser = |s: &str| args::whole_number::<u64>(s, 0, u64::MAX))]
    pub seed: u64,
    /// Directory to write `proc/…` and `sys/…` under: created if missing,
    /// refused if it holds anything (a tree is never mixed with old files)
    /// or if its file system has less free space than the tree needs
    /// (estimated before writing; a tree over 100 MiB is announced).
    #[arg(long, value_parser = super::args::path())]
    pub out: PathBuf,
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
    let estimate = match spec.estimate() {
        Ok(e) => e,
        Err(e) => return usage(format_args!("invalid synth parameters: {e}")),
    };
    if let Some(why) = refuse_non_empty(&args.out)? {
        return usage(why);
    }
    let space = free_space(&args.out)?;
    if let Some(note) = check_space(&estimate, &args.out, space)? {
        eprintln!("{note}");
    }
    let tree = match spec.build() {
        Ok(tree) => tree,
        Err(e) => return usage(format_args!("invalid synth parameters: {e}")),
    };
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

/// A tree larger than this is announced before it is written.
const LARGE_TREE: u64 = 100 << 20;

/// Free space of a file system: bytes available to this user, and the
/// size its files are rounded up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Space {
    available: u64,
    block: u64,
}

/// The free space of the file system `out` will be written to: that of
/// its nearest existing ancestor (`out` itself when it exists).
fn free_space(out: &Path) -> anyhow::Result<Space> {
    let abs = std::path::absolute(out).with_context(|| format!("--out {}", out.display()))?;
    let existing = abs
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or_else(|| Path::new("/"));
    let st = nix::sys::statvfs::statvfs(existing).with_context(|| {
        format!(
            "--out {}: cannot read the free space of {}",
            out.display(),
            existing.display()
        )
    })?;
    // c_ulong and fsblkcnt_t are 32 bits wide on some targets
    #[allow(clippy::useless_conversion)]
    let (block, blocks) = (
        u64::from(st.fragment_size()),
        u64::from(st.blocks_available()),
    );
    let block = block.max(1);
    // proc, sysfs and other file systems without storage state no size at
    // all: their 0 free blocks are no measure (what fails there is the
    // write, which says why)
    let available = if st.blocks() == 0 {
        u64::MAX
    } else {
        blocks.saturating_mul(block)
    };
    Ok(Space { available, block })
}

/// The tree of `estimate` against the free `space` of `out`'s file
/// system: an error when it does not fit, saying what it needs and what
/// is free; else the line that announces a large tree (`None` for a
/// small one).
fn check_space(
    estimate: &SizeEstimate,
    out: &Path,
    space: Space,
) -> anyhow::Result<Option<String>> {
    let bytes = estimate.bytes();
    let disk = estimate.disk_bytes(space.block);
    let files = plural(
        usize::try_from(estimate.files()).unwrap_or(usize::MAX),
        "file",
    );
    if disk > space.available {
        anyhow::bail!(
            "--out {}: the tree needs about {} on disk ({files}), and its file \
             system has {} free; write fewer CPUs or IRQs, or elsewhere",
            out.display(),
            exact(disk),
            exact(space.available),
        );
    }
    Ok((bytes > LARGE_TREE).then(|| {
        format!(
            "irqlab synth: writing about {} ({files}, {} on disk) to {}",
            binary(bytes),
            binary(disk),
            out.display()
        )
    }))
}

/// `n` bytes in binary units: `5.0 GiB`, `1023 bytes`.
fn binary(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = None;
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = Some(u);
    }
    match unit {
        Some(u) => format!("{v:.1} {u}"),
        None => plural(usize::try_from(n).unwrap_or(usize::MAX), "byte"),
    }
}

/// `n` bytes in binary units and exactly: `5.0 GiB (5368709120 bytes)`.
fn exact(n: u64) -> String {
    if n < 1024 {
        binary(n)
    } else {
        format!("{} ({n} bytes)", binary(n))
    }
}

fn default_nr_irqs(irqs: u32) -> u32 {
    (irqs.saturating_add(irqs / 4).saturating_add(32)).max(424)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(cpus: u32, irqs: u32) -> SizeEstimate {
        SynthSpec {
            cpus,
            irqs,
            nr_irqs: default_nr_irqs(irqs),
            arch: Arch::X86,
            era: Era::E3,
            offline: Vec::new(),
            seed: 1,
        }
        .estimate()
        .unwrap()
    }

    const GIB: u64 = 1 << 30;

    /// A tree larger than the free space is refused, the error naming
    /// the destination, what it needs and what is free; one that fits is
    /// announced when over 100 MiB, and written silently below.
    #[test]
    fn trees_are_refused_when_larger_than_the_free_space() {
        let out = Path::new("/data/tree");
        let big = estimate(4096, 8000);
        let block = 4096;
        let need = big.disk_bytes(block);
        assert!(need > GIB / 2, "{need}");
        let space = |available| Space { available, block };
        let err = check_space(&big, out, space(need - 1))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--out /data/tree: the tree needs about "),
            "{err}"
        );
        assert!(
            err.contains(&format!(" MiB ({need} bytes) on disk (88005 files)")),
            "{err}"
        );
        assert!(
            err.contains(&format!(" MiB ({} bytes) free", need - 1)),
            "{err}"
        );
        let note = check_space(&big, out, space(need)).unwrap().unwrap();
        assert!(note.starts_with("irqlab synth: writing about "), "{note}");
        assert!(note.ends_with(" to /data/tree"), "{note}");
        assert!(note.contains(" MiB (88005 files, "), "{note}");
        let small = estimate(4, 8);
        assert_eq!(check_space(&small, out, space(100 * GIB)).unwrap(), None);
        assert!(check_space(&small, out, space(1000)).is_err());
    }

    /// The free space of a path that does not exist yet is that of its
    /// nearest existing ancestor.
    #[test]
    fn free_space_of_a_new_directory_is_its_ancestors() {
        let d = tempfile::tempdir().unwrap();
        let deep = d.path().join("a/b/c");
        let new = free_space(&deep).unwrap();
        let there = free_space(d.path()).unwrap();
        assert_eq!(new.block, there.block);
        assert!(new.block >= 512);
        assert!(!deep.exists());
    }

    #[test]
    fn a_file_system_that_states_no_size_is_not_full() {
        let proc_fs = free_space(Path::new("/proc/irqlab-synth-none")).unwrap();
        assert_eq!(proc_fs.available, u64::MAX);
        let e = check_space(
            &estimate(8, 40),
            Path::new("/proc/irqlab-synth-none"),
            proc_fs,
        );
        assert!(matches!(e, Ok(None)), "{e:?}");
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(binary(1), "1 byte");
        assert_eq!(binary(1023), "1023 bytes");
        assert_eq!(binary(150 << 20), "150.0 MiB");
        assert_eq!(exact(1000), "1000 bytes");
        assert_eq!(exact(5 * GIB), "5.0 GiB (5368709120 bytes)");
    }

    #[test]
    fn default_nr_irqs_fits() {
        assert_eq!(default_nr_irqs(10), 424);
        assert_eq!(default_nr_irqs(1000), 1282);
        assert_eq!(default_nr_irqs(u32::MAX), u32::MAX);
    }
}
