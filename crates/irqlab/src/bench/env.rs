//! The environment recorded with every bench run (`env.json`): kernel,
//! boot, CPUs, frequency governors, affinity of the selected IRQs, load
//! before start, irqlab version and command line — and the warnings that
//! make a run noisy (governor not `performance`, unknown frequency scaling,
//! load before start). Everything is read through HostFs.

use super::select::Selection;
use crate::host::HostFs;
use serde::Serialize;
use std::collections::BTreeMap;

/// Affinity of one selected IRQ.
#[derive(Debug, Serialize)]
pub struct IrqAffinity {
    pub label: String,
    pub what: String,
    pub smp_affinity_list: Option<String>,
    pub effective_affinity_list: Option<String>,
}

/// What was true of the machine when the run started.
#[derive(Debug, Serialize)]
pub struct Environment {
    pub kernel_release: Option<String>,
    pub kernel_version: Option<String>,
    pub cmdline: Option<String>,
    pub boot_id: String,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub online_cpus: Option<String>,
    /// cpufreq policy -> governor (empty: no cpufreq).
    pub governors: BTreeMap<String, String>,
    pub irqs: Vec<IrqAffinity>,
    pub loadavg: Option<String>,
    pub irqlab_version: String,
    pub command: Vec<String>,
    pub started_at: String,
    pub warnings: Vec<String>,
}

fn cpu_model(fs: &HostFs) -> Option<String> {
    let text = fs.read_attr("proc/cpuinfo")?;
    text.lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn governors(fs: &HostFs) -> BTreeMap<String, String> {
    let dir = "sys/devices/system/cpu/cpufreq";
    fs.list_dir(dir)
        .into_iter()
        .filter(|p| p.starts_with("policy"))
        .filter_map(|p| {
            let g = fs.read_attr(&format!("{dir}/{p}/scaling_governor"))?;
            Some((p, g))
        })
        .collect()
}

fn warnings(env: &Environment, ncpus: usize) -> Vec<String> {
    let mut w = Vec::new();
    if env.governors.is_empty() {
        w.push(
            "CPU frequency scaling unknown (no cpufreq): results may vary with frequency".into(),
        );
    }
    let slow: Vec<&String> = env
        .governors
        .iter()
        .filter(|(_, g)| *g != "performance")
        .map(|(p, _)| p)
        .collect();
    if !slow.is_empty() {
        w.push(format!(
            "governor is not performance on {} policies (use --governor)",
            slow.len()
        ));
    }
    let load1 = env
        .loadavg
        .as_deref()
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok());
    if let Some(l) = load1.filter(|l| *l > 0.25 * ncpus.max(1) as f64) {
        w.push(format!(
            "load average {l:.2} before start on {ncpus} CPUs: the machine is busy"
        ));
    }
    w
}

/// Read the environment; `started_at` is supplied by the caller.
pub fn collect(fs: &HostFs, sel: &Selection, started_at: String) -> Environment {
    let ncpus = fs
        .read_attr("sys/devices/system/cpu/online")
        .and_then(|s| irqlab_core::CpuList::parse_list(s.as_bytes(), "online").ok())
        .map_or(0, |l| l.len());
    let irqs = sel
        .rows
        .iter()
        .map(|s| IrqAffinity {
            label: s.label.clone(),
            what: s.what.clone(),
            smp_affinity_list: fs.read_attr(&format!("proc/irq/{}/smp_affinity_list", s.label)),
            effective_affinity_list: fs
                .read_attr(&format!("proc/irq/{}/effective_affinity_list", s.label)),
        })
        .collect();
    let mut env = Environment {
        kernel_release: fs.read_attr("proc/sys/kernel/osrelease"),
        kernel_version: fs.read_attr("proc/sys/kernel/version"),
        cmdline: fs.read_attr("proc/cmdline"),
        boot_id: boot_id(fs),
        hostname: fs.read_attr("proc/sys/kernel/hostname"),
        cpu_model: cpu_model(fs),
        online_cpus: fs.read_attr("sys/devices/system/cpu/online"),
        governors: governors(fs),
        irqs,
        loadavg: fs.read_attr("proc/loadavg"),
        irqlab_version: env!("CARGO_PKG_VERSION").to_string(),
        command: std::env::args().collect(),
        started_at,
        warnings: Vec::new(),
    };
    env.warnings = warnings(&env, ncpus);
    env
}

/// The boot id, or `unknown` when the tree has none.
pub fn boot_id(fs: &HostFs) -> String {
    fs.read_attr("proc/sys/kernel/random/boot_id")
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_about_noise_on_a_fake_tree() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, body: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        };
        w("proc/sys/kernel/osrelease", "6.18.44\n");
        w("proc/sys/kernel/random/boot_id", "abc\n");
        w("proc/loadavg", "3.50 1.00 0.50 2/100 1234\n");
        w("sys/devices/system/cpu/online", "0-1\n");
        w(
            "sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "powersave\n",
        );
        w("proc/irq/36/smp_affinity_list", "0-1\n");
        let fs = HostFs::new(dir.path());
        let sel = Selection {
            rows: vec![super::super::select::Selected {
                label: "36".into(),
                what: "virtio".into(),
            }],
        };
        let env = collect(&fs, &sel, "t".into());
        assert_eq!(env.kernel_release.as_deref(), Some("6.18.44"));
        assert_eq!(env.boot_id, "abc");
        assert_eq!(env.irqs[0].smp_affinity_list.as_deref(), Some("0-1"));
        assert!(
            env.warnings.iter().any(|w| w.contains("not performance")),
            "{:?}",
            env.warnings
        );
        assert!(
            env.warnings.iter().any(|w| w.contains("load average 3.50")),
            "{:?}",
            env.warnings
        );
    }
}
