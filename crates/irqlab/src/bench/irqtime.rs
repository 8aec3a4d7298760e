//! Whether `/proc/stat`'s irq and softirq times are measured or tick
//! samples. Without `CONFIG_IRQ_TIME_ACCOUNTING` the kernel charges a
//! whole tick to irq or softirq only when the timer tick happens to land
//! in one, so `irq_cpu_pct` and `softirq_cpu_pct` read 0 (or a random
//! tick) however much time interrupts take. Known from the kernel's
//! configuration (`/proc/config.gz`, else `/boot/config-<release>`, read
//! through HostFs); when neither is readable, from the data of each trial
//! (no irq and no softirq tick while interrupts flowed). The trial loop
//! then leaves the two metrics out with a note, or takes them from the
//! traced time (`bench --trace`). Pure apart from [`detect`].

use crate::host::HostFs;
use irqlab_core::paths;
use std::io::Read;

/// The two `/proc/stat` shares this module judges.
pub const STAT_SHARES: [&str; 2] = ["irq_cpu_pct", "softirq_cpu_pct"];

/// What is known of the kernel's IRQ time accounting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IrqTime {
    /// `CONFIG_IRQ_TIME_ACCOUNTING=y` (`from`: the file that says so).
    Accounted { from: String },
    /// Not configured: irq and softirq times are tick samples.
    TickSampled { from: String },
    /// No readable configuration: judged per trial from the data.
    Unknown,
}

/// Longest kernel configuration read (uncompressed), bytes.
const MAX_CONFIG: u64 = 8 << 20;

/// The accounting of the kernel behind `fs` (`release`: its
/// `osrelease`, for `/boot/config-<release>`).
pub fn detect(fs: &HostFs, release: Option<&str>) -> IrqTime {
    let mut buf = Vec::new();
    if let Ok((n, _)) = fs.read_once(paths::PROC_CONFIG_GZ, &mut buf) {
        let mut text = String::new();
        let gz = flate2::read::GzDecoder::new(buf.get(..n).unwrap_or_default());
        if gz.take(MAX_CONFIG).read_to_string(&mut text).is_ok() {
            if let Some(t) =
                from_config(&text, &fs.path(paths::PROC_CONFIG_GZ).display().to_string())
            {
                return t;
            }
        }
    }
    if let Some(rel) = release.map(paths::boot_config) {
        buf.clear();
        if let Ok((n, _)) = fs.read_once(&rel, &mut buf) {
            let text = String::from_utf8_lossy(buf.get(..n).unwrap_or_default());
            if let Some(t) = from_config(&text, &fs.path(&rel).display().to_string()) {
                return t;
            }
        }
    }
    IrqTime::Unknown
}

/// The accounting a kernel configuration text states (`None` when the
/// text is no kernel configuration).
pub fn from_config(text: &str, from: &str) -> Option<IrqTime> {
    let from = from.to_string();
    let mut is_config = false;
    for line in text.lines() {
        match line.trim() {
            "CONFIG_IRQ_TIME_ACCOUNTING=y" => return Some(IrqTime::Accounted { from }),
            "# CONFIG_IRQ_TIME_ACCOUNTING is not set" => {
                return Some(IrqTime::TickSampled { from })
            }
            l if l.starts_with("CONFIG_") => is_config = true,
            _ => {}
        }
    }
    // A configuration without the option at all (an architecture without
    // it) has no IRQ time accounting either.
    is_config.then_some(IrqTime::TickSampled { from })
}

impl IrqTime {
    /// One line for `env.json` and the run's notes.
    pub fn describe(&self) -> String {
        match self {
            IrqTime::Accounted { from } => {
                format!("on (CONFIG_IRQ_TIME_ACCOUNTING=y in {from})")
            }
            IrqTime::TickSampled { from } => format!(
                "off (CONFIG_IRQ_TIME_ACCOUNTING is not set in {from}): /proc/stat's irq and \
                 softirq times are tick samples"
            ),
            IrqTime::Unknown => {
                "unknown (no readable kernel configuration): judged per trial".to_string()
            }
        }
    }
}

/// What to do with a trial's `/proc/stat` irq and softirq shares.
#[derive(Debug, Clone, PartialEq)]
pub enum Shares {
    /// Measured: keep them.
    Keep,
    /// Not measured: leave them out, with this note.
    Drop(String),
    /// Replaced by the traced time: (irq %, softirq %) and the note.
    Traced(f64, f64, String),
}

/// The decision for one trial: `stat` are its `/proc/stat` (irq %,
/// softirq %) if read, `interrupts` the interrupts counted over it,
/// `traced` the exact (irq %, softirq %) of `bench --trace`.
pub fn judge(
    acct: &IrqTime,
    stat: Option<(f64, f64)>,
    interrupts: u64,
    traced: Option<(f64, f64)>,
) -> Shares {
    let why = match acct {
        IrqTime::Accounted { .. } => return Shares::Keep,
        IrqTime::TickSampled { .. } => "tick samples: this kernel has no IRQ time accounting \
             (CONFIG_IRQ_TIME_ACCOUNTING is not set)"
            .to_string(),
        IrqTime::Unknown => match stat {
            Some((irq, soft)) if irq == 0.0 && soft == 0.0 && interrupts > 0 => format!(
                "0 irq and 0 softirq ticks in /proc/stat while {interrupts} interrupts came: \
                 tick samples (IRQ time accounting is off or unknown), not a measurement"
            ),
            _ => return Shares::Keep,
        },
    };
    let names = STAT_SHARES.join(", ");
    match traced {
        Some((irq, soft)) => Shares::Traced(
            irq,
            soft,
            format!("{names}: from the traced time (/proc/stat's are {why})"),
        ),
        None => Shares::Drop(format!(
            "{names}: not measured: /proc/stat's are {why}; bench --trace measures them"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_config_says_whether_irq_time_is_accounted() {
        let off = "CONFIG_TICK_CPU_ACCOUNTING=y\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\n";
        assert!(matches!(
            from_config(off, "c"),
            Some(IrqTime::TickSampled { .. })
        ));
        let on = "CONFIG_IRQ_TIME_ACCOUNTING=y\n";
        assert!(matches!(
            from_config(on, "c"),
            Some(IrqTime::Accounted { .. })
        ));
        assert!(matches!(
            from_config("CONFIG_X86=y\n", "c"),
            Some(IrqTime::TickSampled { .. })
        ));
        assert_eq!(from_config("not a config\n", "c"), None);
    }

    #[test]
    fn config_gz_of_a_tree_is_read_through_hostfs() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(b"# CONFIG_IRQ_TIME_ACCOUNTING is not set\n")
            .unwrap();
        std::fs::write(dir.path().join("proc/config.gz"), z.finish().unwrap()).unwrap();
        let fs = HostFs::new(dir.path());
        assert!(matches!(
            detect(&fs, Some("6.18")),
            IrqTime::TickSampled { .. }
        ));
        std::fs::remove_file(dir.path().join("proc/config.gz")).unwrap();
        assert_eq!(detect(&fs, Some("6.18")), IrqTime::Unknown);
        std::fs::create_dir_all(dir.path().join("boot")).unwrap();
        std::fs::write(
            dir.path().join("boot/config-6.18"),
            "CONFIG_IRQ_TIME_ACCOUNTING=y\n",
        )
        .unwrap();
        assert!(matches!(
            detect(&fs, Some("6.18")),
            IrqTime::Accounted { .. }
        ));
    }

    #[test]
    fn tick_sampled_zero_is_never_a_measurement() {
        let off = IrqTime::TickSampled { from: "c".into() };
        // the default bench's figures: 0 and 0 while interrupts flowed
        assert!(matches!(
            judge(&off, Some((0.0, 0.0)), 120_000, None),
            Shares::Drop(n) if n.contains("tick samples") && n.contains("irq_cpu_pct")
        ));
        assert!(matches!(
            judge(&off, Some((0.0, 0.0)), 120_000, Some((1.5, 3.0))),
            Shares::Traced(i, s, _) if i == 1.5 && s == 3.0
        ));
        let unknown = IrqTime::Unknown;
        assert!(matches!(
            judge(&unknown, Some((0.0, 0.0)), 10, None),
            Shares::Drop(_)
        ));
        assert_eq!(
            judge(&unknown, Some((0.5, 0.0)), 10, None),
            Shares::Keep,
            "a tick seen: cannot tell, kept"
        );
        assert_eq!(judge(&unknown, Some((0.0, 0.0)), 0, None), Shares::Keep);
        let on = IrqTime::Accounted { from: "c".into() };
        assert_eq!(judge(&on, Some((0.0, 0.0)), 99, None), Shares::Keep);
    }
}
