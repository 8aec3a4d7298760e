//! Where the kernel keeps the files irqlab reads and writes, spelled once.
//!
//! Every path here is relative to the root of a tree (`/` on a live host, a
//! fake tree in tests): callers join them onto their root (the CLI's
//! `HostFs` does). Error messages name the absolute form: [`absolute`].
//! The file formats behind these paths are described in `docs/formats/`.
//! Pure string building: no file system access.

use std::fmt::Display;

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
    format!("proc/{pid}/{file}")
}

/// `proc/<pid>/task/<tid>/<file>`.
pub fn task_file(pid: impl Display, tid: impl Display, file: &str) -> String {
    format!("proc/{pid}/task/{tid}/{file}")
}

/// `proc/sys/<key>` for a sysctl key written with slashes
/// (`vm/stat_interval`).
pub fn sysctl(key: &str) -> String {
    format!("proc/sys/{key}")
}

/// `sys/devices/system/cpu/cpu<cpu>/online` (absent for CPU 0 on most x86).
pub fn cpu_online(cpu: u32) -> String {
    format!("{SYS_CPU}/cpu{cpu}/online")
}

/// `sys/devices/system/cpu/cpufreq/<policy>/scaling_governor`.
pub fn scaling_governor(policy: &str) -> String {
    format!("{CPUFREQ}/{policy}/scaling_governor")
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
        assert_eq!(task_file(1, 2, "comm"), "proc/1/task/2/comm");
        assert_eq!(sysctl("vm/stat_interval"), "proc/sys/vm/stat_interval");
        assert_eq!(cpu_online(1), "sys/devices/system/cpu/cpu1/online");
        assert_eq!(
            scaling_governor("policy0"),
            "sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
        );
        assert_eq!(absolute(PROC_STAT), "/proc/stat");
        assert_eq!(absolute("/proc/stat"), "/proc/stat");
    }

    #[test]
    fn no_leading_slash() {
        let all = [
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
