//! Live: attach, see events counted, drop, see the programs gone; the hard
//! IRQ programs as BTF tracepoint programs when given the kernel's BTF,
//! as perf event programs without it; with the kernel's BTF, no tracefs
//! needed. Needs root and a built object, tracefs (mounted, or mountable
//! with the host-changing tests opted in) for the perf event programs and
//! the kernel's BTF for the BTF cases; prints why it skips.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

use irqlab_bpf::{Counters, Error, Tracer};

/// To stderr past the test harness's capture: skips and figures show in
/// normal `cargo test` output.
macro_rules! visible {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
use std::path::Path;

const TRACEFS: &str = "/sys/kernel/tracing";
const BTF: &str = "/sys/kernel/btf/vmlinux";

/// tracefs for a test that needs it (the perf event programs' ids), one
/// such test at a time: mounted when absent if the host-changing tests
/// are opted in (`IRQLAB_TEST_HOST_CHANGES=1`, as .ci/run does), and
/// unmounted again on drop.
struct Tracefs {
    _one: std::sync::MutexGuard<'static, ()>,
    mounted_here: bool,
}

static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn mounted() -> bool {
    Path::new(TRACEFS).join("events/irq").is_dir()
}

/// The tracefs a test needs, or why it must skip.
fn tracefs() -> Result<Tracefs, String> {
    let one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    if !nix_is_root() {
        return Err("not root".into());
    }
    if mounted() {
        return Ok(Tracefs {
            _one: one,
            mounted_here: false,
        });
    }
    if std::env::var("IRQLAB_TEST_HOST_CHANGES").as_deref() != Ok("1") {
        return Err(format!(
            "tracefs not mounted at {TRACEFS}, and mounting it changes the host \
             (set IRQLAB_TEST_HOST_CHANGES=1, as .ci/run does)"
        ));
    }
    let ok = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .status()
        .is_ok_and(|s| s.success());
    if !ok || !mounted() {
        return Err(format!("tracefs could not be mounted at {TRACEFS}"));
    }
    Ok(Tracefs {
        _one: one,
        mounted_here: true,
    })
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.mounted_here {
            let _ = std::process::Command::new("umount").arg(TRACEFS).status();
        }
    }
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

fn present(group: &str, name: &str) -> bool {
    Path::new(TRACEFS)
        .join("events")
        .join(group)
        .join(name)
        .is_dir()
}

fn prog_exists(id: u32) -> bool {
    // /proc/self/fdinfo of our own fds is what holds them; after drop the
    // kernel frees the program: `bpftool prog show id N` fails.
    std::process::Command::new("bpftool")
        .args(["prog", "show", "id", &id.to_string()])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn attach_count_and_detach_on_drop_or_skip() {
    let _tracefs = match tracefs() {
        Ok(t) => t,
        Err(why) => {
            visible!("irqlab-bpf: attach_count_and_detach_on_drop_or_skip: SKIPPED: {why}");
            return;
        }
    };
    let Ok(btf) = std::fs::read(BTF) else {
        visible!("irqlab-bpf: attach_count_and_detach_on_drop_or_skip: SKIPPED: no {BTF}");
        return;
    };
    attach_count_and_detach(Some(&btf));
}

#[test]
fn hard_irq_programs_run_as_perf_events_without_btf_or_skip() {
    let _tracefs = match tracefs() {
        Ok(t) => t,
        Err(why) => {
            visible!(
            "irqlab-bpf: hard_irq_programs_run_as_perf_events_without_btf_or_skip: SKIPPED: {why}"
        );
            return;
        }
    };
    attach_count_and_detach(None);
}

#[test]
fn hard_irq_programs_fall_back_to_perf_events_with_a_btf_they_cannot_use_or_skip() {
    let _tracefs = match tracefs() {
        Ok(t) => t,
        Err(why) => {
            visible!("irqlab-bpf: hard_irq_programs_fall_back_to_perf_events_with_a_btf_they_cannot_use_or_skip: SKIPPED: {why}");
            return;
        }
    };
    // a valid BTF with no type at all: neither `struct irqaction` nor the
    // tracepoints' types are in it
    let mut empty = Vec::new();
    empty.extend_from_slice(&0xeb9f_u16.to_le_bytes());
    empty.extend_from_slice(&[1, 0]); // version, flags
    for field in [24_u32, 0, 0, 0, 1] {
        // header length, type offset and length, string offset and length
        empty.extend_from_slice(&field.to_le_bytes());
    }
    empty.push(0); // the string section: the empty string
    let tracer = match Tracer::attach(&mut present, Some(&empty)) {
        Err(Error::NotBuilt) => {
            visible!("irqlab-bpf: SKIPPED: built without clang");
            return;
        }
        r => r.unwrap(),
    };
    let a = tracer.attached();
    visible!("irqlab-bpf: with an empty BTF: {}", a.notes.join("; "));
    assert!(!a.hardirq_btf, "{a:?}");
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("perf event programs") || n.contains("perf event program")),
        "the fallback is said: {a:?}"
    );
    let fds = tracer.program_fds();
    assert_eq!(fds.len(), a.tracepoints.len(), "{fds:?}");
    assert!(fds.iter().all(|(n, _)| !n.ends_with("_btf")), "{fds:?}");
}

/// Attach (with `btf`, the kernel's BTF, or without), see events counted,
/// drop, see the programs gone.
fn attach_count_and_detach(btf: Option<&[u8]>) {
    let tracer = match Tracer::attach(&mut present, btf) {
        Err(Error::NotBuilt) => {
            visible!("irqlab-bpf: SKIPPED: built without clang");
            return;
        }
        r => r.unwrap(),
    };
    let a = tracer.attached();
    assert_eq!(a.hardirq_btf, btf.is_some(), "{a:?}");
    assert!(a.notes.is_empty(), "{a:?}");
    assert!(a.tracepoints.len() >= 5);
    // one program per attached tracepoint: the other form of each hard IRQ
    // program is not loaded
    let fds = tracer.program_fds();
    assert_eq!(fds.len(), a.tracepoints.len(), "{fds:?}");
    let btf_progs = fds.iter().filter(|(n, _)| n.ends_with("_btf")).count();
    assert_eq!(btf_progs, if btf.is_some() { 2 } else { 0 }, "{fds:?}");
    let ids = tracer.program_ids();
    assert!(!ids.is_empty());
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut c = Counters::default();
    tracer.read(&mut c).unwrap();
    let timer: u64 = c.softirqs[1].1.iter().map(|s| s.run.count).sum();
    let loc: u64 = c.vectors[0].1.iter().map(|s| s.count).sum();
    assert!(
        timer + loc > 0,
        "no TIMER softirq nor LOC vector in 300 ms: {c:?}"
    );
    let with_bpftool = which_bpftool();
    if with_bpftool {
        assert!(ids.iter().all(|&id| prog_exists(id)));
    }
    drop(tracer);
    if with_bpftool {
        // freeing is deferred to an RCU grace period
        let gone = (0..50).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            ids.iter().all(|&id| !prog_exists(id))
        });
        assert!(gone, "programs {ids:?} still loaded after drop");
    } else {
        visible!("irqlab-bpf: bpftool absent: detach not checked here");
    }
}

fn which_bpftool() -> bool {
    std::process::Command::new("bpftool")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tracefs that must not be needed: counts the uses asked of it.
#[derive(Default)]
struct Unneeded {
    readied: usize,
}

impl irqlab_bpf::Tracefs for Unneeded {
    fn ready(&mut self) -> Result<(), String> {
        self.readied += 1;
        Err("tracefs must not be needed with the kernel's BTF".into())
    }
    fn has(&self, _group: &str, _name: &str) -> bool {
        false
    }
}

/// With the kernel's BTF, which tracepoints there are comes from its
/// `btf_trace_*` types and every program attaches without tracefs (so
/// irqlab mounts nothing); where tracefs is mounted, the tracepoints left
/// out are the ones it lacks.
#[test]
fn with_the_kernels_btf_tracefs_is_not_needed_or_skip() {
    const NAME: &str = "with_the_kernels_btf_tracefs_is_not_needed_or_skip";
    if !nix_is_root() {
        visible!("irqlab-bpf: {NAME}: SKIPPED: not root");
        return;
    }
    let Ok(btf) = std::fs::read(BTF) else {
        visible!("irqlab-bpf: {NAME}: SKIPPED: no {BTF}");
        return;
    };
    let mut unneeded = Unneeded::default();
    let tracer = match Tracer::attach(&mut unneeded, Some(&btf)) {
        Err(Error::NotBuilt) => {
            visible!("irqlab-bpf: SKIPPED: built without clang");
            return;
        }
        r => r.unwrap(),
    };
    assert_eq!(unneeded.readied, 0, "tracefs was asked for");
    let a = tracer.attached();
    assert!(a.hardirq_btf, "{a:?}");
    assert!(a.tracepoints.len() >= 5, "{a:?}");
    match tracefs() {
        Ok(_tracefs) => {
            for tp in a.absent.iter().chain(&a.tracepoints) {
                let (group, name) = tp.split_once(':').unwrap();
                assert_eq!(
                    present(group, name),
                    a.tracepoints.contains(tp),
                    "{tp}: tracefs and the BTF disagree"
                );
            }
        }
        Err(why) => visible!("irqlab-bpf: {NAME}: presence not compared with tracefs: {why}"),
    }
}
