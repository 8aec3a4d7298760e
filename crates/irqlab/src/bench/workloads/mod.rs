//! Built-in workloads: interrupt generators for `irqlab bench` trials, one
//! file each, plus the user-command workload.
//!
//! [`build`] turns a [`WorkloadKind`] and [`WorkloadOptions`] into a boxed
//! [`Workload`]. Workloads pin their threads to the selected CPUs (default:
//! every CPU this process may use) and stop every thread and child before
//! `run` returns. They never read `/proc` or `/sys`: the runner measures.

mod child;
mod command;
mod disk;
mod ipi;
mod latency;
mod net;
/// CPU selection and pinning; its `PinError` marks a trial disturbed by
/// CPU hotplug (`err.downcast_ref::<placement::PinError>()`): retry it.
pub mod placement;
mod timer;
pub mod veth;
// The one unsafe module of the crate (lib.rs denies unsafe_code): the
// mmap/munmap pair and page writes of the TLB workload, each with a SAFETY note.
#[allow(unsafe_code)]
mod tlb;

#[cfg(test)]
mod live_tests;

use super::workload::Workload;
use crate::guard::Tracker;
use irqlab_core::CpuList;
use std::path::PathBuf;
use std::time::Duration;

/// Which workload a bench runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkloadKind {
    /// Cross-CPU futex ping-pong: wakeup IPIs (RES, or CAL via the wake list).
    #[default]
    Ipi,
    /// mmap/touch/munmap with the mm live on other CPUs: TLB shootdowns.
    Tlb,
    /// High-rate short sleeps per CPU: local timer interrupts.
    Timer,
    /// Loopback TCP bulk transfer: NET_RX/NET_TX softirqs.
    Net,
    /// Random 4 KiB O_DIRECT reads: block device interrupts.
    Disk,
    /// A user command (`-- CMD ARGS`) and/or `--start`/`--stop` snippets.
    Command,
}

impl WorkloadKind {
    /// Every workload with its name and help text (for `--help`).
    pub const ALL: [(WorkloadKind, &'static str, &'static str); 6] = [
        (
            WorkloadKind::Ipi,
            "ipi",
            "cross-CPU futex ping-pong: wakeup IPIs (RES, or CAL)",
        ),
        (
            WorkloadKind::Tlb,
            "tlb",
            "mmap/touch/munmap with the mm live on other CPUs: TLB shootdowns",
        ),
        (
            WorkloadKind::Timer,
            "timer",
            "high-rate short sleeps per CPU: local timer interrupts",
        ),
        (
            WorkloadKind::Net,
            "net",
            "loopback TCP bulk transfer: NET_RX/NET_TX softirqs",
        ),
        (
            WorkloadKind::Disk,
            "disk",
            "random 4 KiB O_DIRECT reads: block device interrupts",
        ),
        (
            WorkloadKind::Command,
            "command",
            "a user command (-- CMD ARGS) and/or --start/--stop",
        ),
    ];

    /// `ipi`, `tlb`, …
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _, _)| *k == self)
            .map_or("?", |(_, n, _)| n)
    }

    /// True when `--threads` sizes this workload (net and command have no
    /// worker threads of irqlab's).
    pub fn uses_threads(self) -> bool {
        !matches!(self, WorkloadKind::Net | WorkloadKind::Command)
    }

    /// True when `--workload-cpus` places this workload (every built-in
    /// one; a command runs where it is started).
    pub fn uses_cpus(self) -> bool {
        self != WorkloadKind::Command
    }
}

impl std::str::FromStr for WorkloadKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|(_, n, _)| *n == s)
            .map(|(k, _, _)| *k)
            .ok_or_else(|| format!("unknown workload {s:?} (ipi, tlb, timer, net, disk, command)"))
    }
}

/// Knobs shared by the workloads (each uses the ones that apply).
#[derive(Debug, Clone)]
pub struct WorkloadOptions {
    /// CPUs to run on (default: all CPUs this process may use).
    pub cpus: Option<CpuList>,
    /// Threads: ipi ring size (2), tlb spinners (one per other CPU), timer
    /// sleepers (one per CPU), disk readers (1). None for net/command
    /// ([`WorkloadKind::uses_threads`]).
    pub threads: Option<usize>,
    /// Directory of the disk workload's file (default: the temp dir).
    pub tmp_dir: Option<PathBuf>,
    /// Size of the disk workload's file.
    pub disk_file_bytes: u64,
    /// Sleep period of the timer workload.
    pub timer_period: Duration,
    /// `-- CMD ARGS` of the command workload.
    pub command: Vec<String>,
    /// `--start` shell snippet, run before each trial's wait.
    pub start: Option<String>,
    /// `--stop` shell snippet, run after each trial's wait.
    pub stop: Option<String>,
    /// `--settle`: wait between the command's start and the timed window.
    pub settle: Duration,
    /// `--loss`/`--rate` of the net workload: run it over veth between
    /// two network namespaces (`veth.rs`) instead of loopback.
    pub net_path: Option<veth::NetPath>,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            cpus: None,
            threads: None,
            tmp_dir: None,
            disk_file_bytes: disk::DEFAULT_FILE_BYTES,
            timer_period: timer::DEFAULT_PERIOD,
            command: Vec::new(),
            start: None,
            stop: None,
            settle: command::DEFAULT_SETTLE,
            net_path: None,
        }
    }
}

/// Build the workload `kind` from `opts` (validates the CPU list and, for
/// `command`, that something is to be run). Nothing starts before `setup`.
/// Temporary files and child process groups are tracked by `tracker`.
pub fn build(
    kind: WorkloadKind,
    opts: &WorkloadOptions,
    tracker: &Tracker,
) -> anyhow::Result<Box<dyn Workload>> {
    check_threads(kind, opts.threads)?;
    if opts.net_path.is_some() && kind != WorkloadKind::Net {
        anyhow::bail!(
            "--loss/--rate apply to the net workload only, not --workload {}",
            kind.name()
        );
    }
    let cpus = || placement::select(opts.cpus.as_ref());
    let w: Box<dyn Workload> = match kind {
        WorkloadKind::Ipi => {
            let cpus = cpus()?;
            check_cross_cpus(IPI_ACROSS, &cpus, opts.cpus.as_ref())?;
            Box::new(ipi::Ipi::new(cpus, opts.threads))
        }
        WorkloadKind::Tlb => {
            let cpus = cpus()?;
            check_cross_cpus(TLB_ACROSS, &cpus, opts.cpus.as_ref())?;
            Box::new(tlb::Tlb::new(cpus, opts.threads))
        }
        WorkloadKind::Timer => {
            Box::new(timer::Timer::new(cpus()?, opts.threads, opts.timer_period))
        }
        WorkloadKind::Net => Box::new(net::Net::new(cpus()?, opts.net_path, tracker.clone())),
        WorkloadKind::Disk => {
            let dir = opts.tmp_dir.clone().unwrap_or_else(std::env::temp_dir);
            Box::new(disk::Disk::new(
                cpus()?,
                opts.threads,
                dir,
                opts.disk_file_bytes,
                tracker.clone(),
            ))
        }
        WorkloadKind::Command => Box::new(
            command::CommandWorkload::new(
                opts.command.clone(),
                opts.start.clone(),
                opts.stop.clone(),
                tracker.clone(),
            )?
            .with_settle(opts.settle),
        ),
    };
    Ok(w)
}

/// Refuse a `--threads` that cannot measure anything: 0 for any workload,
/// and a ring of one for `ipi` (its wakeups cross CPUs only between two
/// or more threads; one thread has no one to wake).
fn check_threads(kind: WorkloadKind, threads: Option<usize>) -> anyhow::Result<()> {
    match (kind, threads) {
        (_, Some(0)) => anyhow::bail!("--threads 0: a workload needs at least 1 thread"),
        (WorkloadKind::Ipi, Some(1)) => anyhow::bail!(
            "--threads 1: the ipi workload is a ring of threads waking each other \
             across CPUs; one thread wakes no one (it measures no IPI): give 2 or more"
        ),
        _ => Ok(()),
    }
}

/// What a workload that works across CPUs does, and what it measures
/// none of on one CPU.
struct Across {
    does: &'static str,
    on_one: &'static str,
}

const IPI_ACROSS: Across = Across {
    does: "the ipi workload is a ring of threads waking each other across CPUs",
    on_one: "their wakeups send no IPI (it measures none)",
};

const TLB_ACROSS: Across = Across {
    does: "the tlb workload unmaps pages on one CPU while its other threads keep \
           the process's memory live on other CPUs",
    on_one: "no TLB shootdown is sent (it measures none)",
};

/// Refuse a cross-CPU workload confined to one CPU (`requested`: the
/// `--workload-cpus` list, none when it takes every CPU this process may use).
fn check_cross_cpus(w: Across, cpus: &[u32], requested: Option<&CpuList>) -> anyhow::Result<()> {
    if cpus.len() >= 2 {
        return Ok(());
    }
    let one = CpuList::from_cpus(cpus.iter().copied());
    let Across { does, on_one } = w;
    match requested {
        Some(list) => anyhow::bail!(
            "--workload-cpus {list}: {does}; on one CPU {on_one}: give 2 or more CPUs"
        ),
        None => anyhow::bail!(
            "{does}, and this process may run on CPU {one} only ({on_one}): \
             allow it 2 or more CPUs"
        ),
    }
}

/// Serializes tests that load the machine, so counter checks of one do not
/// see another's load.
#[cfg(test)]
pub(crate) fn live_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Start thread `index` (0-based) of the `wanted` threads a workload
/// runs in scope `s`. A failure (the process or user thread limit, or
/// memory for the stack) is an error naming how many threads started and
/// the limits that may have stopped it; never a panic.
pub(crate) fn spawn_scoped<'scope, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    index: usize,
    wanted: usize,
    f: impl FnOnce() -> T + Send + 'scope,
) -> anyhow::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    spawn_with(std::thread::Builder::new(), s, index, wanted, f)
}

fn spawn_with<'scope, T: Send + 'scope>(
    builder: std::thread::Builder,
    s: &'scope std::thread::Scope<'scope, '_>,
    index: usize,
    wanted: usize,
    f: impl FnOnce() -> T + Send + 'scope,
) -> anyhow::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    builder.spawn_scoped(s, f).map_err(|e| {
        anyhow::anyhow!(
            "cannot start workload thread {} of {wanted} ({index} started): {e}; \
             limits: {} (also kernel.threads-max, the cgroup's pids.max, memory \
             for the threads' stacks); use fewer --threads",
            index + 1,
            nproc_limit()
        )
    })
}

/// This user's process/thread limit (RLIMIT_NPROC), as text.
fn nproc_limit() -> String {
    use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};
    match getrlimit(Resource::RLIMIT_NPROC) {
        Ok((soft, _)) if soft == RLIM_INFINITY => "ulimit -u unlimited".into(),
        Ok((soft, _)) => format!("ulimit -u {soft}"),
        Err(e) => format!("ulimit -u unknown ({e})"),
    }
}

#[cfg(test)]
mod tests {
    /// A thread that cannot start (here: a stack no mmap can hold) is an
    /// error naming the thread and the count, not a panic.
    #[test]
    fn a_thread_that_cannot_start_is_an_error_naming_the_count() {
        let err = std::thread::scope(|s| {
            let huge = std::thread::Builder::new().stack_size(1 << 62);
            spawn_with(huge, s, 7, 20, || ()).map(|_| ())
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("thread 8 of 20 (7 started)") && err.contains("ulimit -u"),
            "{err}"
        );
    }

    use super::*;

    #[test]
    fn kinds_parse_and_build() {
        let one_cpu = placement::allowed_cpus().unwrap().len() < 2;
        for name in ["ipi", "tlb", "timer", "net", "disk"] {
            let kind: WorkloadKind = name.parse().unwrap();
            assert_eq!(kind.name(), name);
            let w = build(kind, &WorkloadOptions::default(), &Tracker::none());
            if one_cpu && kind == WorkloadKind::Ipi {
                assert!(w.is_err(), "an ipi ring on one CPU");
                continue;
            }
            let w = w.unwrap();
            assert_eq!(w.name(), name);
        }
        assert_eq!(WorkloadKind::default(), WorkloadKind::Ipi);
    }

    /// The runner's stop (here asked for without a signal) reaches every
    /// workload's threads: an hour-long trial ends at once.
    #[test]
    fn every_workload_ends_its_trial_on_the_runners_stop() {
        let _live = live_lock();
        let one_cpu = placement::allowed_cpus().unwrap().len() < 2;
        let dir = tempfile::tempdir().unwrap();
        for name in ["ipi", "tlb", "timer", "net", "disk", "command"] {
            let kind: WorkloadKind = name.parse().unwrap();
            if one_cpu && kind == WorkloadKind::Ipi {
                continue;
            }
            let opts = WorkloadOptions {
                tmp_dir: Some(dir.path().to_path_buf()),
                disk_file_bytes: 1 << 20,
                command: vec!["sleep".into(), "600".into()],
                ..WorkloadOptions::default()
            };
            let mut w = build(kind, &opts, &Tracker::none()).unwrap();
            w.setup().unwrap();
            let stop = crate::sampler::Stop::unhooked();
            let t0 = std::time::Instant::now();
            let ran = std::thread::scope(|s| {
                s.spawn(|| {
                    std::thread::sleep(Duration::from_millis(200));
                    stop.request();
                });
                w.run(Duration::from_secs(3600), &stop)
            });
            let took = t0.elapsed();
            w.teardown().unwrap();
            if let Err(e) = &ran {
                let hotplug = e
                    .chain()
                    .any(|c| c.downcast_ref::<placement::PinError>().is_some());
                assert!(hotplug, "{name}: {e:#}");
            }
            // a busy machine may add seconds, never the hour
            assert!(took < Duration::from_secs(30), "{name}: {took:?}");
        }
    }

    #[test]
    fn threads_that_measure_nothing_are_refused() {
        let build_with = |kind: WorkloadKind, n: usize| {
            let opts = WorkloadOptions {
                threads: Some(n),
                command: vec!["true".into()],
                ..WorkloadOptions::default()
            };
            build(kind, &opts, &Tracker::none()).map(|_| ())
        };
        for kind in [WorkloadKind::Ipi, WorkloadKind::Tlb, WorkloadKind::Timer] {
            let e = build_with(kind, 0).unwrap_err().to_string();
            assert!(e.contains("--threads 0"), "{e}");
        }
        let e = build_with(WorkloadKind::Ipi, 1).unwrap_err().to_string();
        assert!(e.contains("one thread wakes no one"), "{e}");
        build_with(WorkloadKind::Ipi, 2).unwrap();
        build_with(WorkloadKind::Timer, 1).unwrap();
    }

    #[test]
    fn ipi_ring_on_one_cpu_is_refused() {
        let first = placement::allowed_cpus().unwrap()[0];
        let opts = WorkloadOptions {
            cpus: Some(CpuList::from_cpus([first])),
            threads: Some(4),
            ..WorkloadOptions::default()
        };
        let e = build(WorkloadKind::Ipi, &opts, &Tracker::none())
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("--workload-cpus {first}:")), "{e}");
        assert!(e.contains("send no IPI"), "{e}");
        build(WorkloadKind::Timer, &opts, &Tracker::none()).unwrap();
        let e = check_cross_cpus(IPI_ACROSS, &[first], None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("CPU {first} only")), "{e}");
        check_cross_cpus(IPI_ACROSS, &[first, first + 1], None).unwrap();
        let e = build(WorkloadKind::Tlb, &opts, &Tracker::none())
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no TLB shootdown"), "{e}");
    }

    #[test]
    fn command_needs_something_to_run() {
        let err = build(
            WorkloadKind::Command,
            &WorkloadOptions::default(),
            &Tracker::none(),
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("-- CMD"), "{err}");
        let opts = WorkloadOptions {
            start: Some("true".into()),
            ..WorkloadOptions::default()
        };
        assert_eq!(
            build(WorkloadKind::Command, &opts, &Tracker::none())
                .unwrap()
                .name(),
            "command"
        );
    }
}
