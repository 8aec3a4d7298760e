//! Before attaching: is the process root, where is tracefs (mounted, or a
//! directory to mount it on), is the kernel's BTF there. Reads through
//! HostFs only, so tests point it at fake trees. Each failure is an error
//! naming what is missing and how to get it.

use crate::host::HostFs;
use anyhow::{bail, Result};
use irqlab_core::paths::{self, BTF_VMLINUX as BTF, TRACEFS, TRACEFS_DEBUG};

/// What the checks found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSupport {
    /// Root-relative tracefs directory.
    pub tracefs: String,
    /// True when nothing is mounted there yet (irqlab must mount it).
    pub needs_mount: bool,
    /// Notes for stderr (BTF absent, …).
    pub notes: Vec<String>,
}

/// Run the checks; `root_user` is the effective uid == 0.
pub fn check(fs: &HostFs, root_user: bool) -> Result<TraceSupport> {
    if !root_user {
        bail!(
            "trace needs root: loading BPF programs and attaching them to tracepoints \
             needs CAP_BPF and CAP_PERFMON (run it with sudo)"
        );
    }
    let mut notes = Vec::new();
    if !fs.path(BTF).exists() {
        // The programs read only tracepoint records (stable layout), no
        // kernel struct, so they load without the kernel's BTF.
        notes.push(format!(
            "no BTF at {} (CONFIG_DEBUG_INFO_BTF): not needed by irqlab's programs, continuing",
            fs.path(BTF).display()
        ));
    }
    for rel in [TRACEFS, TRACEFS_DEBUG] {
        if fs.path(&paths::trace_events(rel)).is_dir() {
            return Ok(TraceSupport {
                tracefs: rel.into(),
                needs_mount: false,
                notes,
            });
        }
    }
    if !fs.path(TRACEFS).is_dir() {
        bail!(
            "tracefs is not mountable: {} does not exist (kernel without CONFIG_TRACING?)",
            fs.path(TRACEFS).display()
        );
    }
    Ok(TraceSupport {
        tracefs: TRACEFS.into(),
        needs_mount: true,
        notes,
    })
}

/// Does tracefs under `tracefs` have `group/name` (e.g. `irq/softirq_raise`)?
pub fn tracepoint_present(fs: &HostFs, tracefs: &str, group: &str, name: &str) -> bool {
    fs.path(&paths::tracepoint(tracefs, group, name)).is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dirs: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for rel in dirs {
            std::fs::create_dir_all(d.path().join(rel)).unwrap();
        }
        d
    }

    #[test]
    fn not_root_is_named() {
        let d = tree(&[]);
        let e = check(&HostFs::new(d.path()), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs root") && e.contains("sudo"), "{e}");
    }

    #[test]
    fn no_tracefs_directory_is_not_mountable() {
        let d = tree(&["sys/kernel/btf"]);
        let e = check(&HostFs::new(d.path()), true).unwrap_err().to_string();
        assert!(
            e.contains("tracefs is not mountable") && e.contains("sys/kernel/tracing"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_tracing_directory_needs_a_mount_and_missing_btf_is_a_note() {
        let d = tree(&["sys/kernel/tracing"]);
        let f = check(&HostFs::new(d.path()), true).unwrap();
        assert!(f.needs_mount);
        assert!(f.notes[0].contains("no BTF"), "{:?}", f.notes);
    }

    #[test]
    fn a_mounted_tracefs_is_used_as_is() {
        let d = tree(&["sys/kernel/debug/tracing/events/irq/softirq_raise"]);
        std::fs::create_dir_all(d.path().join("sys/kernel/btf")).unwrap();
        std::fs::write(d.path().join(BTF), b"").unwrap();
        let fs = HostFs::new(d.path());
        let f = check(&fs, true).unwrap();
        assert_eq!(
            f,
            TraceSupport {
                tracefs: TRACEFS_DEBUG.into(),
                needs_mount: false,
                notes: vec![]
            }
        );
        assert!(tracepoint_present(&fs, &f.tracefs, "irq", "softirq_raise"));
        assert!(!tracepoint_present(&fs, &f.tracefs, "irq", "softirq_entry"));
    }
}
