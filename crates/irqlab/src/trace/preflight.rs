//! Before attaching: is the process root, where is tracefs (mounted, or a
//! directory to mount it on), is the kernel's BTF there (and its bytes,
//! for the loader). Reads through
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
    if !fs.exists(BTF) {
        notes.push(no_btf(fs, "absent (CONFIG_DEBUG_INFO_BTF)"));
    }
    for rel in [TRACEFS, TRACEFS_DEBUG] {
        if fs.is_dir(&paths::trace_events(rel)) {
            return Ok(TraceSupport {
                tracefs: rel.into(),
                needs_mount: false,
                notes,
            });
        }
    }
    if !fs.is_dir(TRACEFS) {
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

/// The kernel's BTF, for the loader: `Err` is a note saying why there is
/// none and what that costs (the note of an absent file is [`check`]'s).
pub fn kernel_btf(fs: &HostFs) -> Result<Vec<u8>, Option<String>> {
    if !fs.exists(BTF) {
        return Err(None);
    }
    fs.read_binary(BTF, MAX_BTF)
        .map_err(|e| Some(no_btf(fs, &format!("unreadable ({e})"))))
}

/// Most bytes of kernel BTF read: a distribution kernel's is 5-7 MB.
const MAX_BTF: usize = 256 << 20;

/// The note of a kernel BTF that cannot be had: the hard IRQ programs
/// then run as perf event programs (docs/trace.md).
fn no_btf(fs: &HostFs, why: &str) -> String {
    format!(
        "the kernel's BTF at {} is {why}: the hard IRQ programs run as perf event programs, \
         which the kernel skips {} (MISSED says how many)",
        fs.path(BTF).display(),
        super::missed::WHILE
    )
}

/// Does tracefs under `tracefs` have `group/name` (e.g. `irq/softirq_raise`)?
pub fn tracepoint_present(fs: &HostFs, tracefs: &str, group: &str, name: &str) -> bool {
    fs.is_dir(&paths::tracepoint(tracefs, group, name))
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
        assert!(
            f.notes[0].contains("BTF") && f.notes[0].contains("absent"),
            "{:?}",
            f.notes
        );
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

    #[test]
    fn the_kernel_btf_is_read_through_the_root_and_its_absence_noted_once() {
        let d = tree(&["sys/kernel/btf"]);
        let fs = HostFs::new(d.path());
        // absent: check() has said so already
        assert_eq!(kernel_btf(&fs), Err(None));
        std::fs::write(d.path().join(BTF), b"\x9f\xeb\x01\x00bytes").unwrap();
        assert_eq!(kernel_btf(&fs).unwrap(), b"\x9f\xeb\x01\x00bytes");
        // a directory where the file should be: unreadable, said
        std::fs::remove_file(d.path().join(BTF)).unwrap();
        std::fs::create_dir(d.path().join(BTF)).unwrap();
        let note = kernel_btf(&fs).unwrap_err().unwrap();
        assert!(
            note.contains("unreadable") && note.contains("perf event"),
            "{note}"
        );
    }
}
