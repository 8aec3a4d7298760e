//! Where the kernel keeps the files irqlab reads and writes, spelled once.
//!
//! Every path here is relative to the root of a tree (`/` on a live host, a
//! fake tree in tests): callers join them onto their root (the CLI's
//! `HostFs` does). Error messages name the absolute form: [`absolute`],
//! or, for the parsers' `&'static str` file names, [`shown`]. The few
//! absolute paths at the end (irqlab's own state and lock directories) are
//! the live host's, never under a tree root.
//! The file formats behind these paths are described in `docs/formats/`.
//! Pure string building: no file system access. No other source file
//! spells a `/proc` or `/sys` path (`crates/irqlab/tests/path_literals.rs`
//! checks).

use std::fmt::Display;

/// `/proc`: one directory per process ([`pid_file`], [`task_dir`]).
pub const PROC: &str = "proc";
/// `/proc/interrupts`: per-CPU counts of every IRQ and arch interrupt.
pub const PROC_INTERRUPTS: &str = "proc/interrupts";
/// `/proc/softirqs`: per-CPU softirq counts.
pub const PROC_SOFTIRQS: &str = "proc/softirqs";
/// `/proc/stat`: CPU times, `intr` and `softirq` totals.
pub const PROC_STAT: &str = "proc/stat";
/// `/proc/cpuinfo`.
pub const PROC_CPUINFO: &str = "proc/cpuinfo";
/// `/proc/cmdline`: the kernel command line.
pub const PROC_CMDLINE: &str = "proc/cmdline";
/// `/proc/loadavg`: load averages.
pub const PROC_LOADAVG: &str = "proc/loadavg";
/// `/proc/kallsyms`: kernel symbol addresses (zero unless privileged).
pub const PROC_KALLSYMS: &str = "proc/kallsyms";
/// `/proc/config.gz`: the kernel configuration, gzipped
/// (`CONFIG_IKCONFIG_PROC`); else [`boot_config`].
pub const PROC_CONFIG_GZ: &str = "proc/config.gz";
/// `/proc/irq`: one directory per IRQ with actions (affinity files), plus
/// `default_smp_affinity`.
pub const PROC_IRQ: &str = "proc/irq";
/// `/sys/kernel/irq`: one directory per IRQ descriptor (`CONFIG_SPARSE_IRQ`).
pub const SYS_KERNEL_IRQ: &str = "sys/kernel/irq";
/// `/proc/sys/kernel/osrelease`: the kernel release (`6.13.0-1-amd64`).
pub const OSRELEASE: &str = "proc/sys/kernel/osrelease";
/// `/proc/sys/kernel/version`: the kernel build string (`#1 SMP PREEMPT …`).
pub const KERNEL_VERSION: &str = "proc/sys/kernel/version";
/// `/proc/sys/kernel/hostname`.
pub const HOSTNAME: &str = "proc/sys/kernel/hostname";
/// `/proc/sys/kernel/random/boot_id`: changes at every boot.
pub const BOOT_ID: &str = "proc/sys/kernel/random/boot_id";
/// `/sys/devices/system/cpu`: one `cpuN` directory per possible CPU.
pub const SYS_CPU: &str = "sys/devices/system/cpu";
/// `/sys/devices/system/cpu/online`: CPU list of the online CPUs.
pub const CPU_ONLINE: &str = "sys/devices/system/cpu/online";
/// `/sys/devices/system/cpu/possible`: CPU list of the possible CPUs.
pub const CPU_POSSIBLE: &str = "sys/devices/system/cpu/possible";
/// `/sys/devices/system/cpu/cpufreq`: one `policyN` directory per policy.
pub const CPUFREQ: &str = "sys/devices/system/cpu/cpufreq";
/// `/sys/kernel/tracing`: where tracefs is mounted (or is to be mounted).
pub const TRACEFS: &str = "sys/kernel/tracing";
/// `/sys/kernel/debug/tracing`: tracefs under debugfs (older setups).
pub const TRACEFS_DEBUG: &str = "sys/kernel/debug/tracing";
/// `/sys/kernel/btf/vmlinux`: the kernel's own BTF (`CONFIG_DEBUG_INFO_BTF`).
pub const BTF_VMLINUX: &str = "sys/kernel/btf/vmlinux";
/// `/sys/kernel/mm/transparent_hugepage/enabled`: the kernel's huge page
/// mode (`always [madvise] never`: the one in brackets is in force).
pub const THP_ENABLED: &str = "sys/kernel/mm/transparent_hugepage/enabled";

/// File of `proc/irq/<irq>/`: the configured affinity, a CPU list.
pub const SMP_AFFINITY_LIST: &str = "smp_affinity_list";
/// File of `proc/irq/<irq>/`: the CPUs the IRQ is really delivered to.
pub const EFFECTIVE_AFFINITY_LIST: &str = "effective_affinity_list";
/// File of `sys/kernel/irq/<irq>/`: the IRQ's count on every possible CPU.
pub const PER_CPU_COUNT: &str = "per_cpu_count";
/// File of a cgroup v2 directory: its member processes.
pub const CGROUP_PROCS: &str = "cgroup.procs";
/// File of a cgroup v2 directory: writing `1` kills every member.
pub const CGROUP_KILL: &str = "cgroup.kill";

/// `proc/irq/<irq>` (the directory).
pub fn proc_irq_dir(irq: impl Display) -> String {
    format!("{PROC_IRQ}/{irq}")
}

/// `proc/irq/<irq>/<attr>`, e.g. `attr` = `smp_affinity_list`.
pub fn proc_irq(irq: impl Display, attr: &str) -> String {
    format!("{PROC_IRQ}/{irq}/{attr}")
}

/// `sys/kernel/irq/<irq>` (the directory).
pub fn sys_irq_dir(irq: impl Display) -> String {
    format!("{SYS_KERNEL_IRQ}/{irq}")
}

/// `sys/kernel/irq/<irq>/<attr>`, e.g. `attr` = `per_cpu_count`.
pub fn sys_irq(irq: impl Display, attr: &str) -> String {
    format!("{SYS_KERNEL_IRQ}/{irq}/{attr}")
}

/// `proc/<pid>/<file>`, e.g. `file` = `stat`, `schedstat`, `comm`
/// (`pid` may be `self`).
pub fn pid_file(pid: impl Display, file: &str) -> String {
    format!("{PROC}/{pid}/{file}")
}

/// `proc/self/fdinfo/<fd>`: what the kernel says of this process's
/// descriptor `fd` (for a BPF program: its `recursion_misses`).
pub fn self_fdinfo(fd: impl Display) -> String {
    format!("{PROC}/self/fdinfo/{fd}")
}

/// `proc/<pid>/task/<tid>/<file>`.
pub fn task_file(pid: impl Display, tid: impl Display, file: &str) -> String {
    format!("{PROC}/{pid}/task/{tid}/{file}")
}

/// `proc/<pid>/task`: one directory per thread of `pid`.
pub fn task_dir(pid: impl Display) -> String {
    format!("{PROC}/{pid}/task")
}

/// `proc/sys/<key>` for a sysctl key written with slashes
/// (`vm/stat_interval`).
pub fn sysctl(key: &str) -> String {
    format!("{PROC}/sys/{key}")
}

/// `sys/devices/system/cpu/cpu<cpu>/online` (absent for CPU 0 on most x86).
pub fn cpu_online(cpu: u32) -> String {
    format!("{SYS_CPU}/cpu{cpu}/online")
}

/// `sys/devices/system/cpu/cpufreq/<policy>/scaling_governor`.
pub fn scaling_governor(policy: &str) -> String {
    format!("{CPUFREQ}/{policy}/scaling_governor")
}

/// `sys/devices/system/cpu/cpufreq/<policy>/scaling_available_governors`.
pub fn scaling_available_governors(policy: &str) -> String {
    format!("{CPUFREQ}/{policy}/scaling_available_governors")
}

/// `boot/config-<release>`: the kernel configuration as distributions
/// install it, for release `release` (`osrelease`).
pub fn boot_config(release: &str) -> String {
    format!("boot/config-{release}")
}

/// `<tracefs>/events`: one directory per tracepoint group.
pub fn trace_events(tracefs: &str) -> String {
    format!("{tracefs}/events")
}

/// `<tracefs>/events/<group>/<name>`: one tracepoint
/// (`irq/softirq_raise`).
pub fn tracepoint(tracefs: &str, group: &str, name: &str) -> String {
    format!("{tracefs}/events/{group}/{name}")
}

/// The calling thread's network-namespace file (bind-mounted to keep a
/// namespace a workload made).
pub const THREAD_NETNS: &str = "/proc/thread-self/ns/net";

/// The calling thread's network namespace's SNMP counters (TCP retransmits).
pub const THREAD_NET_SNMP: &str = "/proc/thread-self/net/snmp";

/// The calling thread's network namespace's extended TCP counters
/// (`TcpExt:`: loss probes, timeouts, receive-queue drops).
pub const THREAD_NET_NETSTAT: &str = "/proc/thread-self/net/netstat";

/// The calling thread's network namespace's per-device packet counters.
pub const THREAD_NET_DEV: &str = "/proc/thread-self/net/dev";

/// A network device's receive packet steering mask (queue 0), as seen from
/// inside the device's network namespace (`ip netns exec` mounts its /sys).
pub fn netns_rps_cpus(dev: &str) -> String {
    format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus")
}

/// The state directory of root runs on the live host (run lock, journal).
pub const STATE_DIR: &str = "/var/lib/irqlab";
/// Where other users' state directories live ([`user_state_dir`]).
pub const USER_STATE_PARENT: &str = "/tmp";
/// Name prefix of a user's state directory under [`USER_STATE_PARENT`].
pub const USER_STATE_PREFIX: &str = "irqlab-";
/// Name of the run lock in a state directory.
pub const RUN_LOCK: &str = "run.lock";
/// Name of the run lock at the top of a tree other than `/`.
pub const TREE_RUN_LOCK: &str = ".irqlab-run.lock";
/// Name of the host-change journal in a state directory.
pub const JOURNAL: &str = "journal.jsonl";
/// Name of the host-change journal at the top of a tree other than `/`.
pub const TREE_JOURNAL: &str = ".irqlab-journal.jsonl";

/// `/tmp/irqlab-<uid>`: the state directory of a user other than root
/// (who cannot write [`STATE_DIR`]).
pub fn user_state_dir(uid: u32) -> String {
    format!("{USER_STATE_PARENT}/{USER_STATE_PREFIX}{uid}")
}

/// Absolute names of the parsed files as parse errors and labels show
/// them: `<N>` stands for an IRQ number, `<pid>` for a process id, `*`
/// for every IRQ. Each is [`absolute`] of the root-relative path above
/// (the tests below check).
pub mod shown {
    /// `/proc/interrupts`.
    pub const PROC_INTERRUPTS: &str = "/proc/interrupts";
    /// `/proc/softirqs`.
    pub const PROC_SOFTIRQS: &str = "/proc/softirqs";
    /// `/proc/stat`.
    pub const PROC_STAT: &str = "/proc/stat";
    /// `/proc/irq`.
    pub const PROC_IRQ: &str = "/proc/irq";
    /// `/sys/kernel/irq`.
    pub const SYS_KERNEL_IRQ: &str = "/sys/kernel/irq";
    /// `/sys/devices/system/cpu/online`.
    pub const CPU_ONLINE: &str = "/sys/devices/system/cpu/online";
    /// `/proc/<pid>/stat`.
    pub const PID_STAT: &str = "/proc/<pid>/stat";
    /// `/proc/<pid>/schedstat`.
    pub const PID_SCHEDSTAT: &str = "/proc/<pid>/schedstat";
    /// `/sys/kernel/irq/<N>/per_cpu_count`.
    pub const PER_CPU_COUNT: &str = "/sys/kernel/irq/<N>/per_cpu_count";
    /// `/sys/kernel/irq/<N>/chip_name`.
    pub const CHIP_NAME: &str = "/sys/kernel/irq/<N>/chip_name";
    /// `/sys/kernel/irq/<N>/hwirq`.
    pub const HWIRQ: &str = "/sys/kernel/irq/<N>/hwirq";
    /// `/sys/kernel/irq/<N>/type`.
    pub const TYPE: &str = "/sys/kernel/irq/<N>/type";
    /// `/sys/kernel/irq/<N>/wakeup`.
    pub const WAKEUP: &str = "/sys/kernel/irq/<N>/wakeup";
    /// `/sys/kernel/irq/<N>/name`.
    pub const NAME: &str = "/sys/kernel/irq/<N>/name";
    /// `/sys/kernel/irq/<N>/actions`.
    pub const ACTIONS: &str = "/sys/kernel/irq/<N>/actions";
    /// `/proc/irq/<N>/smp_affinity`.
    pub const SMP_AFFINITY: &str = "/proc/irq/<N>/smp_affinity";
    /// `/proc/irq/<N>/smp_affinity_list`.
    pub const SMP_AFFINITY_LIST: &str = "/proc/irq/<N>/smp_affinity_list";
    /// `/proc/irq/<N>/effective_affinity`.
    pub const EFFECTIVE_AFFINITY: &str = "/proc/irq/<N>/effective_affinity";
    /// `/proc/irq/<N>/effective_affinity_list`.
    pub const EFFECTIVE_AFFINITY_LIST: &str = "/proc/irq/<N>/effective_affinity_list";
    /// `/proc/irq/<N>/node`.
    pub const NODE: &str = "/proc/irq/<N>/node";
    /// `/sys/kernel/irq/*/per_cpu_count`: the file of every IRQ.
    pub const EVERY_PER_CPU_COUNT: &str = "/sys/kernel/irq/*/per_cpu_count";
    /// `/proc/irq/*/smp_affinity_list`: the file of every IRQ.
    pub const EVERY_SMP_AFFINITY_LIST: &str = "/proc/irq/*/smp_affinity_list";
}

/// The absolute form of a root-relative path, for messages on a live host
/// (`proc/stat` -> `/proc/stat`).
pub fn absolute(rel: &str) -> String {
    format!("/{}", rel.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_like_the_kernel() {
        assert_eq!(
            proc_irq(24, "smp_affinity_list"),
            "proc/irq/24/smp_affinity_list"
        );
        assert_eq!(
            sys_irq("9", "per_cpu_count"),
            "sys/kernel/irq/9/per_cpu_count"
        );
        assert_eq!(proc_irq_dir(3), "proc/irq/3");
        assert_eq!(sys_irq_dir(3), "sys/kernel/irq/3");
        assert_eq!(pid_file("self", "stat"), "proc/self/stat");
        assert_eq!(self_fdinfo(7), "proc/self/fdinfo/7");
        assert_eq!(task_file(1, 2, "comm"), "proc/1/task/2/comm");
        assert_eq!(sysctl("vm/stat_interval"), "proc/sys/vm/stat_interval");
        assert_eq!(cpu_online(1), "sys/devices/system/cpu/cpu1/online");
        assert_eq!(
            scaling_governor("policy0"),
            "sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
        );
        assert_eq!(task_dir(7), "proc/7/task");
        assert_eq!(
            scaling_available_governors("policy1"),
            "sys/devices/system/cpu/cpufreq/policy1/scaling_available_governors"
        );
        assert_eq!(boot_config("6.18.0"), "boot/config-6.18.0");
        assert_eq!(
            tracepoint(TRACEFS, "irq", "softirq_raise"),
            "sys/kernel/tracing/events/irq/softirq_raise"
        );
        assert_eq!(
            trace_events(TRACEFS_DEBUG),
            "sys/kernel/debug/tracing/events"
        );
        assert_eq!(user_state_dir(1000), "/tmp/irqlab-1000");
        assert_eq!(absolute(PROC_STAT), "/proc/stat");
        assert_eq!(absolute("/proc/stat"), "/proc/stat");
    }

    #[test]
    fn shown_names_are_the_absolute_paths() {
        let n = "<N>";
        let pairs = [
            (shown::PROC_INTERRUPTS, PROC_INTERRUPTS.to_string()),
            (shown::PROC_SOFTIRQS, PROC_SOFTIRQS.to_string()),
            (shown::PROC_STAT, PROC_STAT.to_string()),
            (shown::PROC_IRQ, PROC_IRQ.to_string()),
            (shown::SYS_KERNEL_IRQ, SYS_KERNEL_IRQ.to_string()),
            (shown::CPU_ONLINE, CPU_ONLINE.to_string()),
            (shown::PID_STAT, pid_file("<pid>", "stat")),
            (shown::PID_SCHEDSTAT, pid_file("<pid>", "schedstat")),
            (shown::PER_CPU_COUNT, sys_irq(n, PER_CPU_COUNT)),
            (shown::CHIP_NAME, sys_irq(n, "chip_name")),
            (shown::HWIRQ, sys_irq(n, "hwirq")),
            (shown::TYPE, sys_irq(n, "type")),
            (shown::WAKEUP, sys_irq(n, "wakeup")),
            (shown::NAME, sys_irq(n, "name")),
            (shown::ACTIONS, sys_irq(n, "actions")),
            (shown::SMP_AFFINITY, proc_irq(n, "smp_affinity")),
            (shown::SMP_AFFINITY_LIST, proc_irq(n, SMP_AFFINITY_LIST)),
            (shown::EFFECTIVE_AFFINITY, proc_irq(n, "effective_affinity")),
            (
                shown::EFFECTIVE_AFFINITY_LIST,
                proc_irq(n, EFFECTIVE_AFFINITY_LIST),
            ),
            (shown::NODE, proc_irq(n, "node")),
            (shown::EVERY_PER_CPU_COUNT, sys_irq("*", PER_CPU_COUNT)),
            (
                shown::EVERY_SMP_AFFINITY_LIST,
                proc_irq("*", SMP_AFFINITY_LIST),
            ),
        ];
        for (shown, rel) in pairs {
            assert_eq!(shown, absolute(&rel));
        }
    }

    #[test]
    fn no_leading_slash() {
        let all = [
            PROC,
            PROC_LOADAVG,
            PROC_CONFIG_GZ,
            TRACEFS,
            TRACEFS_DEBUG,
            BTF_VMLINUX,
            PROC_INTERRUPTS,
            PROC_SOFTIRQS,
            PROC_STAT,
            PROC_CPUINFO,
            PROC_CMDLINE,
            PROC_IRQ,
            SYS_KERNEL_IRQ,
            OSRELEASE,
            KERNEL_VERSION,
            HOSTNAME,
            BOOT_ID,
            SYS_CPU,
            CPU_ONLINE,
            CPU_POSSIBLE,
            CPUFREQ,
        ];
        assert!(all.iter().all(|p| !p.starts_with('/') && !p.ends_with('/')));
    }
}
