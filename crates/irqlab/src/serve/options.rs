//! What `serve` exposes: per-CPU mode, row filters and naming. Plain data
//! built by `cmd/serve.rs` from the flags; parsed and validated here.

use irqlab_core::CpuList;
use regex::Regex;

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
    /// Keep interrupt rows (and `irq/N-name` threads) whose label or
    /// description matches.
    pub irq: Option<Regex>,
    /// Drop interrupt rows (and threads) whose label or description matches.
    pub exclude: Option<Regex>,
    pub naming: Naming,
    /// Expose only these CPUs (`--cpus`); `None` = every CPU.
    pub cpus: Option<CpuList>,
    /// Clock ticks per second of `/proc/stat` CPU times (USER_HZ).
    pub ticks_per_s: u64,
}

impl Options {
    /// True when a row with this label and description is exposed.
    pub fn keep(&self, label: &str, description: &str) -> bool {
        let m = |re: &Regex| re.is_match(label) || re.is_match(description);
        self.irq.as_ref().is_none_or(m) && !self.exclude.as_ref().is_some_and(m)
    }

    /// True when CPU `cpu` is exposed (`--cpus`).
    pub fn keep_cpu(&self, cpu: u32) -> bool {
        self.cpus.as_ref().is_none_or(|l| l.contains(cpu))
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
            irq: Regex::new("virtio").ok(),
            exclude: Regex::new("input").ok(),
            naming: Naming::Irqlab,
            cpus: None,
            ticks_per_s: 100,
        };
        assert!(o.keep("24", "PCI-MSI 1-edge virtio0-config"));
        assert!(!o.keep("25", "PCI-MSI 2-edge virtio1-input.0"));
        assert!(!o.keep("LOC", "Local timer interrupts"));
    }
}
