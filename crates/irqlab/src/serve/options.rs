//! What `serve` exposes: per-CPU mode, row filter and naming. Plain data
//! built by `cmd/serve.rs` from the flags; parsed and validated here. The
//! row filter is every command's (`crate::filter::Filter`).

use crate::filter::Filter;

/// How per-CPU counters become series (`--per-cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerCpu {
    /// One series per CPU (`cpu="0"` …).
    All,
    /// One series per row, `cpu="all"`: the sum over CPUs, kept monotonic
    /// across CPU hotplug and counter resets.
    Sum,
    /// Per row, the K CPUs with the highest counts as their own series plus
    /// `cpu="other"`: the increments of every other CPU (monotonic).
    Top(usize),
}

impl std::str::FromStr for PerCpu {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(PerCpu::All),
            "sum" => Ok(PerCpu::Sum),
            _ => {
                let k = s
                    .strip_prefix("top=")
                    .and_then(|k| k.parse::<usize>().ok())
                    .filter(|&k| k > 0);
                k.map(PerCpu::Top)
                    .ok_or_else(|| format!("expected all, sum or top=K with K ≥ 1, found {s:?}"))
            }
        }
    }
}

/// Metric names and labels (`--compat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Naming {
    /// `irqlab_interrupts_total{irq,cpu,chip,actions}` …
    #[default]
    Irqlab,
    /// node_exporter 1.5.0's interrupt, stat (softirq), cpu and uname
    /// families, plus the per-CPU `node_softirqs_functions_total` of 1.6.0
    /// (docs/serve.md lists them and where irqlab differs).
    Node,
}

/// Everything that shapes the `/metrics` body.
#[derive(Debug, Clone)]
pub struct Options {
    pub per_cpu: PerCpu,
    /// Interrupt rows (`--irq`, `--exclude`: label, description, chip or
    /// an action, as every command) and CPUs (`--cpus`) exposed;
    /// `irq/N-name` threads are tested as a row labelled N described by
    /// the thread's name.
    pub filter: Filter,
    pub naming: Naming,
    /// Clock ticks per second of `/proc/stat` CPU times (USER_HZ).
    pub ticks_per_s: u64,
}

impl Options {
    /// True when the `irq/N-name` thread of IRQ `irq` named `name` is
    /// exposed.
    pub fn keep_thread(&self, irq: &str, name: &str) -> bool {
        self.filter.keep_fields(irq, name, "", std::iter::empty())
    }

    /// True when CPU `cpu` is exposed (`--cpus`).
    pub fn keep_cpu(&self, cpu: u32) -> bool {
        self.filter.keep_cpu(cpu)
    }

    /// True when `--cpus` selects CPUs.
    pub fn picks_cpus(&self) -> bool {
        self.filter.cpus.is_some()
    }
}

/// `sysconf(_SC_CLK_TCK)`, 100 when unknown.
pub fn ticks_per_s() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn per_cpu_parses_and_rejects() {
        assert_eq!("all".parse::<PerCpu>(), Ok(PerCpu::All));
        assert_eq!("sum".parse::<PerCpu>(), Ok(PerCpu::Sum));
        assert_eq!("top=3".parse::<PerCpu>(), Ok(PerCpu::Top(3)));
        assert!("top=0".parse::<PerCpu>().is_err());
        assert!("some".parse::<PerCpu>().is_err());
    }

    #[test]
    fn filters_include_then_exclude() {
        let o = Options {
            per_cpu: PerCpu::All,
            filter: Filter::from_flags(Some("virtio"), None)
                .unwrap()
                .excluding(Some("input"))
                .unwrap(),
            naming: Naming::Irqlab,
            ticks_per_s: 100,
        };
        assert!(o.keep_thread("24", "irq/24-virtio0-config"));
        assert!(!o.keep_thread("25", "irq/25-virtio1-input.0"));
        assert!(!o.keep_thread("LOC", "Local timer interrupts"));
    }
}
