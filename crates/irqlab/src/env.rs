//! The environment of a measurement: what was true of the machine when a
//! bench run or a probe run started — kernel release and version, boot id,
//! hostname, CPU model, online CPUs and their number, cpufreq governors,
//! command line of the kernel, load average, irqlab version and command —
//! and the warnings that make results noisy (governor not `performance`,
//! unknown frequency scaling, load before start).
//!
//! One collector for every consumer (bench writes it to `env.json`, probe
//! embeds it). Reads only through HostFs, so tests use fake trees; writes
//! nothing.

use crate::host::HostFs;
use irqlab_core::CpuList;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use irqlab_core::paths::{
    BOOT_ID, CPUFREQ, CPU_ONLINE as ONLINE, HOSTNAME, KERNEL_VERSION, OSRELEASE, PROC_CMDLINE,
    PROC_CPUINFO, PROC_LOADAVG,
};

/// What was true of the machine when a run started.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Environment {
    pub kernel_release: Option<String>,
    pub kernel_version: Option<String>,
    pub cmdline: Option<String>,
    pub boot_id: String,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    /// `sys/devices/system/cpu/online` as written (`0-1`).
    pub online_cpus: Option<String>,
    /// Number of online CPUs (0 when unknown).
    #[serde(default)]
    pub nr_cpus: usize,
    /// cpufreq policy -> governor (empty: no cpufreq).
    pub governors: BTreeMap<String, String>,
    pub loadavg: Option<String>,
    pub irqlab_version: String,
    /// This process's command line.
    pub command: Vec<String>,
    /// RFC 3339, supplied by the caller.
    pub started_at: String,
    pub warnings: Vec<String>,
}

/// Read the environment; `started_at` is supplied by the caller.
pub fn collect(fs: &HostFs, started_at: String) -> Environment {
    let online = fs.read_attr(ONLINE);
    let nr_cpus = online
        .as_deref()
        .and_then(|s| CpuList::parse_list(s.as_bytes(), "online").ok())
        .map_or(0, |l| l.len());
    let mut env = Environment {
        kernel_release: fs.read_attr(OSRELEASE),
        kernel_version: fs.read_attr(KERNEL_VERSION),
        cmdline: fs.read_attr(PROC_CMDLINE),
        boot_id: boot_id(fs),
        hostname: fs.read_attr(HOSTNAME),
        cpu_model: cpu_model(fs),
        online_cpus: online,
        nr_cpus,
        governors: governors(fs),
        loadavg: fs.read_attr(PROC_LOADAVG),
        irqlab_version: env!("CARGO_PKG_VERSION").to_string(),
        command: std::env::args().collect(),
        started_at,
        warnings: Vec::new(),
    };
    env.warnings = warnings(&env);
    env
}

/// The boot id, or `unknown` when the tree has none.
pub fn boot_id(fs: &HostFs) -> String {
    fs.read_attr(BOOT_ID).unwrap_or_else(|| "unknown".into())
}

/// The kernel release, if readable.
pub fn kernel_release(fs: &HostFs) -> Option<String> {
    fs.read_attr(OSRELEASE)
}

/// The model named in `/proc/cpuinfo`'s first model line. The read stops
/// there: the kernel prints the file one CPU at a time, so the rest (1.5
/// MB on 1152 CPUs) is never made.
fn cpu_model(fs: &HostFs) -> Option<String> {
    /// The line found ends the stream early, as its "error".
    enum Found {
        Model(Option<String>),
        Unreadable,
    }
    impl From<std::io::Error> for Found {
        fn from(_: std::io::Error) -> Self {
            Found::Unreadable
        }
    }
    let mut buf = Vec::new();
    let r = fs.for_each_line(PROC_CPUINFO, &mut buf, |line| {
        let l = String::from_utf8_lossy(line);
        if l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model") {
            let model = l.split_once(':').map(|(_, v)| v.trim().to_string());
            return Err(Found::Model(model));
        }
        Ok(())
    });
    match r {
        Err(Found::Model(m)) => m,
        _ => None,
    }
}

fn governors(fs: &HostFs) -> BTreeMap<String, String> {
    fs.list_dir(CPUFREQ)
        .into_iter()
        .filter(|p| p.starts_with("policy"))
        .filter_map(|p| {
            let g = fs.read_attr(&format!("{CPUFREQ}/{p}/scaling_governor"))?;
            Some((p, g))
        })
        .collect()
}

fn warnings(env: &Environment) -> Vec<String> {
    let mut w = Vec::new();
    if env.governors.is_empty() {
        w.push(
            "CPU frequency scaling unknown (no cpufreq): results may vary with frequency".into(),
        );
    }
    let slow = env
        .governors
        .values()
        .filter(|g| *g != "performance")
        .count();
    if slow > 0 {
        let s = if slow == 1 { "policy" } else { "policies" };
        w.push(format!(
            "governor is not performance on {slow} {s} (use --governor)"
        ));
    }
    let load1 = env
        .loadavg
        .as_deref()
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok());
    let ncpus = env.nr_cpus.max(1);
    if let Some(l) = load1.filter(|l| *l > 0.25 * ncpus as f64) {
        let s = if ncpus == 1 { "CPU" } else { "CPUs" };
        w.push(format!(
            "load average {l:.2} before start on {ncpus} {s}: the machine is busy"
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model is the first model line's, and the read stops there: a
    /// line past it that no read may take (longer than MAX_LINE_READ)
    /// does not spoil it, nor do later CPUs' models.
    #[test]
    fn cpu_model_is_the_first_model_line_and_the_read_stops_there() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let long = "x".repeat(crate::host::MAX_LINE_READ + 10);
        std::fs::write(
            dir.path().join(PROC_CPUINFO),
            format!(
                "processor\t: 0\nmodel name\t: First CPU\n\nprocessor\t: 1\nmodel name\t: Other\nflags\t: {long}\n"
            ),
        )
        .unwrap();
        let fs = HostFs::new(dir.path());
        assert_eq!(cpu_model(&fs).as_deref(), Some("First CPU"));
        std::fs::write(dir.path().join(PROC_CPUINFO), "processor\t: 0\n").unwrap();
        assert_eq!(cpu_model(&fs), None);
    }

    #[test]
    fn collects_and_warns_about_noise_on_a_fake_tree() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, body: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        };
        w(OSRELEASE, "6.18.44\n");
        w(BOOT_ID, "abc\n");
        w("proc/loadavg", "3.50 1.00 0.50 2/100 1234\n");
        w(
            "proc/cpuinfo",
            "processor\t: 0\nmodel name\t: Fake CPU @ 2GHz\n",
        );
        w(ONLINE, "0-1\n");
        w(
            &format!("{CPUFREQ}/policy0/scaling_governor"),
            "powersave\n",
        );
        let fs = HostFs::new(dir.path());
        let env = collect(&fs, "t".into());
        assert_eq!(env.kernel_release.as_deref(), Some("6.18.44"));
        assert_eq!(env.boot_id, "abc");
        assert_eq!(env.nr_cpus, 2);
        assert_eq!(env.cpu_model.as_deref(), Some("Fake CPU @ 2GHz"));
        assert_eq!(
            env.warnings,
            vec![
                "governor is not performance on 1 policy (use --governor)".to_string(),
                "load average 3.50 before start on 2 CPUs: the machine is busy".to_string(),
            ]
        );
    }

    #[test]
    fn empty_tree_is_unknown_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let env = collect(&HostFs::new(dir.path()), "t".into());
        assert_eq!(env.boot_id, "unknown");
        assert_eq!(env.nr_cpus, 0);
        assert!(env.warnings[0].contains("no cpufreq"));
    }
}
