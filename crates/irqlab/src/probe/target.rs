//! What `probe` reads: the targets (one file, or a family of per-IRQ files
//! read together as one "read") and the environment recorded with the
//! results. Everything goes through HostFs, so `--root` trees work.

use crate::env::Environment;
use crate::host::HostFs;
use irqlab_core::paths::{self, shown};
use irqlab_core::Interrupts;
use std::collections::BTreeMap;

/// One thing whose read cost is measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Metric-name prefix, e.g. `proc_interrupts`.
    pub name: &'static str,
    /// Human label, e.g. `/proc/interrupts` or `/sys/kernel/irq/*/per_cpu_count`.
    pub label: &'static str,
    /// Root-relative files read together as one read.
    pub paths: Vec<String>,
}

/// The targets present under `fs`'s root, in a fixed order, plus a note for
/// each one that is missing and each per-IRQ file left out.
pub fn discover(fs: &HostFs) -> (Vec<Target>, Vec<String>) {
    let mut missing = Vec::new();
    let candidates = [
        single(
            fs,
            "proc_interrupts",
            shown::PROC_INTERRUPTS,
            paths::PROC_INTERRUPTS,
        ),
        single(
            fs,
            "proc_softirqs",
            shown::PROC_SOFTIRQS,
            paths::PROC_SOFTIRQS,
        ),
        single(fs, "proc_stat", shown::PROC_STAT, paths::PROC_STAT),
        per_irq(
            fs,
            "sys_per_cpu_count",
            shown::EVERY_PER_CPU_COUNT,
            paths::SYS_KERNEL_IRQ,
            paths::PER_CPU_COUNT,
            &mut missing,
        ),
        per_irq(
            fs,
            "proc_smp_affinity_list",
            shown::EVERY_SMP_AFFINITY_LIST,
            paths::PROC_IRQ,
            paths::SMP_AFFINITY_LIST,
            &mut missing,
        ),
    ];
    let mut found = Vec::new();
    for t in candidates {
        match t {
            Ok(t) => found.push(t),
            Err(note) => missing.push(note),
        }
    }
    (found, missing)
}

/// The one file `rel`, or the note that says why it is skipped, naming
/// it as read (under `--root`). The file is opened, not read: whether it
/// is there and a regular file (the gateway refuses others) is all a
/// target needs; for `/proc/interrupts` the only read before the measured
/// ones is [`environment`]'s.
fn single(
    fs: &HostFs,
    name: &'static str,
    label: &'static str,
    rel: &str,
) -> Result<Target, String> {
    match fs.open(rel) {
        Ok(_) => Ok(Target {
            name,
            label,
            paths: vec![rel.to_string()],
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{} not found, skipped", fs.path(rel).display()))
        }
        // a special file: the gateway's error names it and what it is
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Err(format!("{e}, skipped")),
        Err(e) => Err(format!("{}: {e}, skipped", fs.path(rel).display())),
    }
}

/// Every IRQ's `dir/N/file`, or the note that none is there, naming the
/// family under `--root` (`label` is its form under `/`). A file of the
/// family that is there but cannot be a target (not a regular file,
/// unreadable) is left out with a note in `notes` naming it.
fn per_irq(
    fs: &HostFs,
    name: &'static str,
    label: &'static str,
    dir: &str,
    file: &str,
    notes: &mut Vec<String>,
) -> Result<Target, String> {
    let mut irqs: Vec<(u32, String)> = fs
        .list_dir(dir)
        .into_iter()
        .filter_map(|n| n.parse::<u32>().ok().map(|irq| (irq, n)))
        .collect();
    irqs.sort();
    let mut paths = Vec::new();
    for (_, n) in irqs {
        let p = format!("{dir}/{n}/{file}");
        match fs.open(&p) {
            Ok(_) => paths.push(p),
            // an IRQ without the file: nothing of the family to read there
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // a special file (a directory, FIFO …): the gateway's error
            // names it and what it is
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                notes.push(format!("{e}, skipped"));
            }
            Err(e) => notes.push(format!("{}: {e}, skipped", fs.path(&p).display())),
        }
    }
    if paths.is_empty() {
        return Err(format!("{} not found, skipped", fs.path(label).display()));
    }
    Ok(Target { name, label, paths })
}

/// The machine the numbers were measured on: the shared environment
/// (`crate::env`, as bench records it) plus what probe adds.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// Kernel, boot id, CPU model, governors … (`None` only in tests).
    pub machine: Option<Environment>,
    /// The tree read, absolute and canonical (`crate::bench::env_json::tree_root`).
    pub root: Option<String>,
    /// CPU columns in the /proc/interrupts header (online CPUs).
    pub cpus: Option<usize>,
    /// Entries of /sys/kernel/irq (allocated descriptors).
    pub irq_descriptors: usize,
    /// Numbered directories of /proc/irq (IRQs that ever had an action).
    pub proc_irq_dirs: usize,
    /// Bytes per read of each target (filled from the measurements).
    pub sizes: BTreeMap<String, u64>,
    pub pinned_cpu: Option<usize>,
    pub reads: usize,
    pub buffers: Vec<usize>,
}

impl Env {
    /// The kernel release, when known.
    pub fn kernel(&self) -> Option<&str> {
        self.machine.as_ref()?.kernel_release.as_deref()
    }

    /// The boot id, when known.
    pub fn boot_id(&self) -> Option<&str> {
        self.machine.as_ref().map(|m| m.boot_id.as_str())
    }
}

/// `/proc/interrupts` under `fs` parsed, for the facts probe records
/// beside its measurements (CPU columns, numbered rows), or why they are
/// unknown: unreadable, cut inside its last line (never parsed as if
/// complete), or not parseable; the reason names the file.
pub fn interrupts(fs: &HostFs) -> Result<Interrupts, String> {
    let rel = paths::PROC_INTERRUPTS;
    let mut buf = Vec::new();
    let text = fs.read_once_text(rel, &mut buf).map_err(|e| {
        if crate::host::is_refusal(&e) {
            e.to_string()
        } else {
            format!("{}: {e}", fs.path(rel).display())
        }
    })?;
    Interrupts::parse(text).map_err(|e| crate::sampler::located(&fs.path(rel), &e).to_string())
}

/// Collect what can be known about the machine under `fs`'s root; `note`
/// gets the reason of a fact left unknown. Reads and parses
/// `/proc/interrupts` once, for its CPU columns: its only read before the
/// measured ones (crates/irqlab/tests/probe_cli.rs counts them).
pub fn environment(fs: &HostFs, started_at: String, note: &mut impl FnMut(&str)) -> Env {
    let numbered = |dir: &str| {
        fs.list_dir(dir)
            .iter()
            .filter(|n| n.parse::<u32>().is_ok())
            .count()
    };
    let cpus = interrupts(fs)
        .map(|i| i.cpus.len())
        .map_err(|why| note(&format!("CPU count unknown: {why}")))
        .ok();
    Env {
        machine: Some(crate::env::collect(fs, started_at)),
        root: Some(crate::bench::env_json::tree_root(fs.root())),
        cpus,
        irq_descriptors: numbered(paths::SYS_KERNEL_IRQ),
        proc_irq_dirs: numbered(paths::PROC_IRQ),
        ..Env::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_present_targets_in_irq_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "proc/irq/10",
            "proc/irq/9",
            "sys/kernel/irq/9",
            "proc/sys/kernel",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(
            root.join("proc/interrupts"),
            "  CPU0 CPU1\n 9: 1 2 IO-APIC 9-fasteoi acpi\n",
        )
        .unwrap();
        std::fs::write(root.join("proc/irq/10/smp_affinity_list"), "0-1\n").unwrap();
        std::fs::write(root.join("proc/irq/9/smp_affinity_list"), "0\n").unwrap();
        std::fs::write(root.join("proc/irq/default_smp_affinity"), "3\n").unwrap();
        std::fs::write(root.join("sys/kernel/irq/9/per_cpu_count"), "1,2\n").unwrap();
        std::fs::write(root.join("proc/sys/kernel/osrelease"), "6.18.0\n").unwrap();
        let fs = HostFs::new(root);
        let (found, missing) = discover(&fs);
        let names: Vec<&str> = found.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "proc_interrupts",
                "sys_per_cpu_count",
                "proc_smp_affinity_list"
            ]
        );
        assert_eq!(
            found[2].paths,
            [
                "proc/irq/9/smp_affinity_list",
                "proc/irq/10/smp_affinity_list"
            ]
        );
        // the notes name the files as read, under the root
        let under = |rel: &str| format!("{} not found, skipped", root.join(rel).display());
        assert_eq!(missing, [under("proc/softirqs"), under("proc/stat")]);
        let env = environment(&fs, "2026-11-30T12:00:00Z".to_string(), &mut |n| {
            panic!("{n}")
        });
        assert_eq!(env.kernel(), Some("6.18.0"));
        assert_eq!(env.boot_id(), Some("unknown"));
        assert_eq!(
            (env.cpus, env.irq_descriptors, env.proc_irq_dirs),
            (Some(2), 1, 2)
        );
    }

    #[test]
    fn a_truncated_proc_interrupts_leaves_the_cpu_count_unknown_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(
            root.join("proc/interrupts"),
            "  CPU0 CPU1\n 9: 1 2 IO-APIC 9-fasteoi acpi\n10: 3 4 IO-APIC 10-edge tt",
        )
        .unwrap();
        let mut notes = Vec::new();
        let env = environment(&HostFs::new(root), String::new(), &mut |n| {
            notes.push(n.to_string())
        });
        assert_eq!(env.cpus, None);
        let want = format!(
            "CPU count unknown: {}:3: truncated line (no newline at end of file)",
            root.join("proc/interrupts").display()
        );
        assert_eq!(notes, [want]);
    }
}
