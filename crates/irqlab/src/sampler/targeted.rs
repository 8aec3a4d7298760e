//! Targeted sampling: the counts of a few numbered IRQs read from
//! `/sys/kernel/irq/N/per_cpu_count` through kept-open descriptors,
//! assembled into an [`Interrupts`] model that looks like the rows of
//! `/proc/interrupts` (docs/formats/irq-dirs.md, "Cost of the per-IRQ files").
//!
//! `per_cpu_count` lists POSSIBLE CPUs while `/proc/interrupts` lists
//! ONLINE CPUs: every read also reads `/sys/devices/system/cpu/online`
//! and keeps only those columns, so hotplug shows up as gaps in the delta
//! exactly as with the full file. Metadata (chip, hwirq, flow, actions,
//! affinity) is read once, in [`Targeted::open`]; callers re-open when the
//! set of IRQs changes. Owns no policy: which strategy to use is decided
//! in `strategy.rs`.

use crate::host::HostFs;
use anyhow::{anyhow, Context};
use irqlab_core::desc::split_description;
use irqlab_core::paths::{self, CPU_ONLINE, CPU_POSSIBLE};
use irqlab_core::{sysfs, CpuList, Interrupts, IrqRow, Shape};

/// Which IRQs a filter selects in one `/proc/interrupts` parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Targets {
    /// Only numbered IRQs (possibly none): targetable.
    Numbered(Vec<u32>),
    /// An arch row (`LOC`, `RES` …) matched: only the full file has it.
    NeedsFullFile(String),
}

/// Classify the rows of `m` that `keep` selects.
pub fn select(m: &Interrupts, keep: impl Fn(&IrqRow) -> bool) -> Targets {
    let mut irqs = Vec::new();
    for row in m.rows().iter().filter(|r| keep(r)) {
        match row.irq {
            Some(n) => irqs.push(n),
            None => return Targets::NeedsFullFile(row.label.to_string()),
        }
    }
    Targets::Numbered(irqs)
}

/// Metadata of one IRQ, read once from sysfs and `/proc/irq/N/`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IrqMeta {
    pub irq: u32,
    /// The row as `/proc/interrupts` would describe it (counts empty).
    pub row: IrqRow,
    /// `effective_affinity_list`, else `smp_affinity_list`, as printed.
    pub affinity: Option<String>,
}

/// Read the metadata of `irq` (open/read/close; not for the hot path).
pub fn read_meta(fs: &HostFs, irq: u32) -> anyhow::Result<IrqMeta> {
    let dir = paths::sys_irq_dir(irq);
    let mut attrs = sysfs::IrqAttrs::default();
    for file in ["chip_name", "hwirq", "type", "name", "actions"] {
        let rel = format!("{dir}/{file}");
        if let Some(text) = fs.read_attr(&rel) {
            let bytes = if text.is_empty() { text } else { text + "\n" };
            attrs
                .set(file, bytes.as_bytes())
                .map_err(|e| crate::sampler::located(&fs.path(&rel), &e))?;
        }
    }
    let flow = attrs.name.clone().unwrap_or_default();
    let hw = attrs
        .hwirq
        .map(|h| {
            if flow.is_empty() {
                h.to_string()
            } else {
                format!("{h}-{flow}")
            }
        })
        .unwrap_or_default();
    let description = [
        attrs.chip_name.clone().unwrap_or_default(),
        hw,
        attrs.actions.join(", "),
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .cloned()
    .collect::<Vec<_>>()
    .join("  ");
    let mut row = IrqRow {
        label: irq.to_string().into(),
        irq: Some(irq),
        shape: Shape::PerCpu,
        description: description.into(),
        ..IrqRow::default()
    };
    split_description(&row.description, &mut row.parts);
    // the affinity shown is the sampler's (`SnapshotSource::affinity`),
    // which notes a file that is not a CPU list
    let affinity = read_affinity(fs, irq, &mut Vec::new());
    Ok(IrqMeta { irq, row, affinity })
}

/// The affinity of one IRQ as irqlab shows it: `effective_affinity_list`
/// (the CPUs the kernel really delivers it to), else the configured
/// `smp_affinity_list`; `None` (unknown) when neither is readable,
/// non-empty and a CPU list. A file whose text is not a CPU list (`zz`,
/// `0-`) is taken as unreadable, and `bad` gets its name and `Some` text;
/// a file `read` could not read (absent, a directory …) gets `None` (for
/// a note: [`bad_affinity_note`]). `read` reads one file of the IRQ's
/// `/proc/irq/N/` by name. The one reader of IRQ affinity:
/// [`read_affinity`] and [`read_affinity_at`] only say where the files
/// are.
pub fn affinity_of(
    mut read: impl FnMut(&str) -> Option<String>,
    mut bad: impl FnMut(&'static str, Option<&str>),
) -> Option<String> {
    AFFINITY_FILES.iter().find_map(|&name| {
        let Some(text) = read(name) else {
            bad(name, None);
            return None;
        };
        if text.is_empty() {
            return None;
        }
        if CpuList::is_list(text.as_bytes()) {
            return Some(text);
        }
        bad(name, Some(&text));
        None
    })
}

/// The note for affinity file `file` of IRQ `irq` under `fs` that gave no
/// CPU list ([`affinity_of`]'s `bad`): the file and what was expected,
/// with the `text` it holds (clipped, escaped), or, when it could not be
/// read (`None`), why: a directory, a FIFO, no permission. `None` (no
/// note) when it is absent: kernels before 4.13 have no
/// `effective_affinity_list`.
#[cold]
pub fn bad_affinity_note(fs: &HostFs, irq: u32, file: &str, text: Option<&str>) -> Option<String> {
    const MAX: usize = 40;
    let rel = paths::proc_irq(irq, file);
    let path = fs.path(&rel);
    let Some(text) = text else {
        return match fs.open(&rel) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Some(format!(
                "{} not shown: expected a CPU list like `0-3,8`: {e}",
                path.display()
            )),
            _ => None,
        };
    };
    let mut shown: String = text.chars().take(MAX).collect();
    if text.chars().nth(MAX).is_some() {
        shown.push('…');
    }
    Some(format!(
        "{} not shown: expected a CPU list like `0-3,8`, found {shown:?}",
        path.display()
    ))
}

/// The files of `/proc/irq/N/` that say an IRQ's affinity, best first:
/// the first non-empty CPU list is the answer ([`affinity_of`]).
pub const AFFINITY_FILES: [&str; 2] = [paths::EFFECTIVE_AFFINITY_LIST, paths::SMP_AFFINITY_LIST];

/// [`affinity_of`] IRQ `irq` under `fs`'s `/proc/irq`; a note in `notes`
/// for a file that is not a CPU list ([`bad_affinity_note`]).
pub fn read_affinity(fs: &HostFs, irq: u32, notes: &mut Vec<String>) -> Option<String> {
    affinity_of(
        |file| fs.read_attr(&paths::proc_irq(irq, file)),
        |file, text| notes.extend(bad_affinity_note(fs, irq, file, text)),
    )
}

/// [`read_affinity`] with `dir` the kept `/proc/irq` directory of `fs`
/// (many IRQs: each file opened relative to it).
pub fn read_affinity_at(
    fs: &HostFs,
    dir: &mut crate::host::AttrDir,
    irq: u32,
    notes: &mut Vec<String>,
) -> Option<String> {
    affinity_of(
        |file| dir.read(&format!("{irq}/{file}")),
        |file, text| notes.extend(bad_affinity_note(fs, irq, file, text)),
    )
}

/// A kept-open reader of a few IRQs' `per_cpu_count`.
#[derive(Debug)]
pub struct Targeted {
    metas: Vec<IrqMeta>,
    /// CPU id of each `per_cpu_count` position.
    possible: Vec<u32>,
    online: CpuList,
    scratch: Vec<u64>,
    /// IRQs whose `per_cpu_count` could not be read on the last read.
    pub vanished: Vec<u32>,
}

fn count_path(irq: u32) -> String {
    paths::sys_irq(irq, paths::PER_CPU_COUNT)
}

impl Targeted {
    /// Read the metadata of `irqs` and the possible CPU list, and check
    /// that every `per_cpu_count` and the online list are readable. An
    /// IRQ that `listing` (the `/proc/interrupts` the IRQs were selected
    /// in) has keeps that row's description, as printed there: the same
    /// text whichever way the counts are read.
    pub fn open(fs: &mut HostFs, irqs: &[u32], listing: &Interrupts) -> anyhow::Result<Targeted> {
        let possible = read_cpulist(fs, CPU_POSSIBLE)?;
        let mut metas = Vec::with_capacity(irqs.len());
        for &irq in irqs {
            let rel = count_path(irq);
            let path = fs.path(&rel);
            fs.read_text(&rel)
                .with_context(|| format!("reading {}", path.display()))?;
            let mut meta = read_meta(fs, irq)?;
            if let Some(r) = listing.rows().iter().find(|r| r.irq == Some(irq)) {
                meta.row.description.clone_from(&r.description);
                meta.row.parts.clone_from(&r.parts);
            }
            metas.push(meta);
        }
        let mut t = Targeted {
            metas,
            possible: possible.iter().collect(),
            online: CpuList::default(),
            scratch: Vec::new(),
            vanished: Vec::new(),
        };
        t.read_online(fs)?;
        Ok(t)
    }

    /// Online CPUs at the last read (the columns of every row).
    pub fn cpu_count(&self) -> usize {
        self.online.len()
    }

    /// The IRQs read, in order.
    pub fn irqs(&self) -> impl Iterator<Item = u32> + '_ {
        self.metas.iter().map(|m| m.irq)
    }

    fn read_online(&mut self, fs: &mut HostFs) -> anyhow::Result<()> {
        let path = fs.path(CPU_ONLINE);
        let bytes = fs
            .read(CPU_ONLINE)
            .with_context(|| format!("reading {}", path.display()))?;
        self.online
            .parse_list_into(bytes, paths::shown::CPU_ONLINE)
            .map_err(|e| crate::sampler::located(&path, &e))
    }

    /// Read the online CPUs and every `per_cpu_count` into `out`, reusing
    /// its buffers. An IRQ whose file cannot be read is left out and listed
    /// in [`Targeted::vanished`] (the caller should re-resolve); a file the
    /// gateway refuses (cut inside its line, not a regular file) is an
    /// error naming it, never parsed as if complete.
    pub fn read_into(&mut self, fs: &mut HostFs, out: &mut Interrupts) -> anyhow::Result<()> {
        self.read_online(fs)?;
        self.vanished.clear();
        let mut rows = out.take_rows();
        let mut cpus = std::mem::take(&mut out.cpus);
        cpus.clear();
        cpus.extend(self.online.iter());
        let mut used = 0;
        for meta in &self.metas {
            let rel = count_path(meta.irq);
            let bytes = match fs.read_text(&rel) {
                Ok(b) => b,
                Err(e) if crate::host::is_refusal(&e) => return Err(e.into()),
                Err(_) => {
                    fs.forget(&rel);
                    self.vanished.push(meta.irq);
                    continue;
                }
            };
            sysfs::parse_per_cpu_count(bytes, &mut self.scratch)
                .map_err(|e| crate::sampler::located(&fs.path(&rel), &e))?;
            if used == rows.len() {
                rows.push(IrqRow::default());
            }
            let row = rows
                .get_mut(used)
                .ok_or_else(|| anyhow!("row pool out of step"))?;
            fill_row(row, meta, &cpus, &self.possible, &self.scratch)
                .with_context(|| format!("{}", fs.path(&rel).display()))?;
            used += 1;
        }
        rows.truncate(used);
        *out = Interrupts::from_parts(cpus, rows);
        Ok(())
    }
}

/// Copy `meta` into `row` and pick the counts of the `online` CPUs from
/// `counts` (aligned with `possible`).
fn fill_row(
    row: &mut IrqRow,
    meta: &IrqMeta,
    online: &[u32],
    possible: &[u32],
    counts: &[u64],
) -> anyhow::Result<()> {
    row.label.clone_from(&meta.row.label);
    row.irq = meta.row.irq;
    row.shape = Shape::PerCpu;
    row.description.clone_from(&meta.row.description);
    row.parts.clone_from(&meta.row.parts);
    row.counts.clear();
    for &cpu in online {
        let pos = possible
            .binary_search(&cpu)
            .map_err(|_| anyhow!("online CPU {cpu} is not a possible CPU"))?;
        let c = counts.get(pos).ok_or_else(|| {
            anyhow!(
                "{} values for {} possible CPUs",
                counts.len(),
                possible.len()
            )
        })?;
        row.counts.push(*c);
    }
    Ok(())
}

/// Read a CPU list file through a kept descriptor.
pub fn read_cpulist(fs: &mut HostFs, rel: &str) -> anyhow::Result<CpuList> {
    let path = fs.path(rel);
    let bytes = fs
        .read(rel)
        .with_context(|| format!("reading {}", path.display()))?;
    CpuList::parse_list(bytes, "cpu list").map_err(|e| crate::sampler::located(&path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let w = |rel: &str, s: &str| {
            let p = d.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        w(CPU_ONLINE, "0,2-3\n");
        w(CPU_POSSIBLE, "0-3\n");
        w("sys/kernel/irq/24/per_cpu_count", "1,2,3,4\n");
        w("sys/kernel/irq/24/chip_name", "IO-APIC\n");
        w("sys/kernel/irq/24/hwirq", "5\n");
        w("sys/kernel/irq/24/type", "edge\n");
        w("sys/kernel/irq/24/name", "edge\n");
        w("sys/kernel/irq/24/actions", "ACPI:Ged,other\n");
        w("proc/irq/24/smp_affinity_list", "0-3\n");
        d
    }

    #[test]
    fn builds_rows_for_online_cpus_with_metadata() {
        let d = tree();
        let mut fs = HostFs::new(d.path());
        let mut t = Targeted::open(&mut fs, &[24], &Interrupts::default()).unwrap();
        let mut m = Interrupts::default();
        t.read_into(&mut fs, &mut m).unwrap();
        assert_eq!(m.cpus, vec![0, 2, 3]);
        let r = &m.rows()[0];
        assert_eq!((r.irq, r.counts.to_vec()), (Some(24), vec![1, 3, 4]));
        assert_eq!(r.parts.chip, "IO-APIC");
        assert_eq!(r.parts.hwirq, Some(5));
        assert_eq!(r.parts.actions().collect::<Vec<_>>(), ["ACPI:Ged", "other"]);
        assert_eq!(t.irqs().collect::<Vec<_>>(), [24]);
        assert_eq!(
            read_affinity(&fs, 24, &mut Vec::new()).as_deref(),
            Some("0-3")
        );
    }

    #[test]
    fn the_listing_row_gives_the_description_as_printed() {
        let d = tree();
        let mut fs = HostFs::new(d.path());
        let listing = Interrupts::parse(
            b"           CPU0       CPU1\n 24:          1          2   IO-APIC   5-edge      ACPI:Ged, other\n",
        )
        .unwrap();
        let mut t = Targeted::open(&mut fs, &[24], &listing).unwrap();
        let mut m = Interrupts::default();
        t.read_into(&mut fs, &mut m).unwrap();
        let r = &m.rows()[0];
        assert_eq!(r.description, "IO-APIC   5-edge      ACPI:Ged, other");
        assert_eq!(r.parts.chip, "IO-APIC");
    }

    #[test]
    fn hotplug_changes_columns_and_vanished_irq_is_reported() {
        let d = tree();
        let mut fs = HostFs::new(d.path());
        let mut t = Targeted::open(&mut fs, &[24], &Interrupts::default()).unwrap();
        let mut m = Interrupts::default();
        std::fs::write(d.path().join(CPU_ONLINE), "0-3\n").unwrap();
        t.read_into(&mut fs, &mut m).unwrap();
        assert_eq!(m.rows()[0].counts[..], [1, 2, 3, 4]);
        std::fs::remove_dir_all(d.path().join("sys/kernel/irq/24")).unwrap();
        fs.forget("sys/kernel/irq/24/per_cpu_count");
        t.read_into(&mut fs, &mut m).unwrap();
        assert!(m.rows().is_empty());
        assert_eq!(t.vanished, vec![24]);
    }

    #[test]
    fn a_truncated_per_cpu_count_is_refused_with_its_path_and_line() {
        let d = tree();
        let rel = "sys/kernel/irq/24/per_cpu_count";
        let want = format!(
            "{}:1: truncated line (no newline at end of file)",
            d.path().join(rel).display()
        );
        let mut fs = HostFs::new(d.path());
        let mut t = Targeted::open(&mut fs, &[24], &Interrupts::default()).unwrap();
        std::fs::write(d.path().join(rel), "1,2,3,4").unwrap();
        let mut m = Interrupts::default();
        let e = t.read_into(&mut fs, &mut m).unwrap_err();
        assert_eq!(format!("{e:#}"), want);
        assert!(t.vanished.is_empty());
        let mut fs = HostFs::new(d.path());
        let e = Targeted::open(&mut fs, &[24], &Interrupts::default()).unwrap_err();
        assert!(format!("{e:#}").ends_with(&want), "{e:#}");
    }

    #[test]
    fn arch_rows_need_the_full_file() {
        let m = Interrupts::parse(
            b"      CPU0\n 24:  1  IO-APIC 5-edge ACPI:Ged\nLOC:  9  Local timer interrupts\n",
        )
        .unwrap();
        assert_eq!(
            select(&m, |r| r.irq == Some(24)),
            Targets::Numbered(vec![24])
        );
        assert_eq!(select(&m, |_| true), Targets::NeedsFullFile("LOC".into()));
    }

    #[test]
    fn one_affinity_rule_for_paths_and_open_dirs() {
        let d = tree();
        let noted = |irq: u32| {
            let fs = HostFs::new(d.path());
            let mut notes = Vec::new();
            let by_path = read_affinity(&fs, irq, &mut notes);
            let mut dir = fs.attr_dir(irqlab_core::paths::PROC_IRQ).unwrap();
            let mut at_notes = Vec::new();
            let at = read_affinity_at(&fs, &mut dir, irq, &mut at_notes);
            assert_eq!(
                (at, at_notes),
                (by_path.clone(), notes.clone()),
                "IRQ {irq}"
            );
            (by_path, notes)
        };
        let both = |irq: u32| {
            let (aff, notes) = noted(irq);
            assert_eq!(notes, Vec::<String>::new(), "IRQ {irq}");
            aff
        };
        // only the configured list: it is shown
        assert_eq!(both(24).as_deref(), Some("0-3"));
        // an empty effective list falls back to the configured one
        let eff = d.path().join("proc/irq/24/effective_affinity_list");
        std::fs::write(&eff, "").unwrap();
        assert_eq!(both(24).as_deref(), Some("0-3"));
        // the effective list wins when present
        std::fs::write(&eff, "2\n").unwrap();
        assert_eq!(both(24).as_deref(), Some("2"));
        // no files: no affinity
        std::fs::create_dir_all(d.path().join("proc/irq/9")).unwrap();
        assert_eq!(both(9), None);
        // text that is not a CPU list is unreadable, with a note naming
        // the file, the text and what was expected
        let conf = d.path().join("proc/irq/24/smp_affinity_list");
        for bad in ["zz", "0-", "3-1", "0-3,", "1:2/4", "\u{1b}[2J"] {
            std::fs::write(&eff, format!("{bad}\n")).unwrap();
            let (aff, notes) = noted(24);
            assert_eq!(aff.as_deref(), Some("0-3"), "{bad:?}: the configured list");
            assert_eq!(
                notes,
                [format!(
                    "{} not shown: expected a CPU list like `0-3,8`, found {bad:?}",
                    eff.display()
                )]
            );
            std::fs::write(&conf, "x\n").unwrap();
            let (aff, notes) = noted(24);
            assert_eq!(aff, None, "{bad:?}: neither file: unknown");
            assert_eq!(notes.len(), 2, "{notes:?}");
            assert!(notes[1].starts_with(&format!("{} not shown", conf.display())));
            std::fs::write(&conf, "0-3\n").unwrap();
        }
        std::fs::write(&eff, "7".repeat(100)).unwrap();
        let (_, notes) = noted(24);
        assert!(
            notes[0].ends_with(&format!("found \"{}…\"", "7".repeat(40))),
            "{notes:?}"
        );
        // a file that is there but cannot be read: noted with why
        std::fs::remove_file(&eff).unwrap();
        std::fs::create_dir(&eff).unwrap();
        let (aff, notes) = noted(24);
        assert_eq!(aff.as_deref(), Some("0-3"), "the configured list");
        let want = format!(
            "{} not shown: expected a CPU list like `0-3,8`: ",
            eff.display()
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with(&want), "{notes:?}");
    }
}
