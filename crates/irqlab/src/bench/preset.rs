//! Named presets of `irqlab bench --preset NAME`: a small table of the
//! defaults a classic experiment is run with (docs/recipes.md). A preset
//! only fills in what the command line leaves unset: `-n`, `-d`,
//! `--governor` and `--workload-cpus` given explicitly win.

use std::time::Duration;

/// One preset: what it sets when the command line does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub help: &'static str,
    /// `--trials`.
    pub trials: u32,
    /// `--trial-length`.
    pub duration: Duration,
    /// `--governor` for every cpufreq policy.
    pub governor: Option<&'static str>,
    /// Pin the workload's threads to the last CPU irqlab may use
    /// (`--workload-cpus`; not an ipi ring or a command, which it cannot
    /// measure or place).
    pub pin_last_cpu: bool,
    /// `--measure` must name the IRQ whose rate is the headline.
    pub needs_irq: bool,
}

/// Every preset.
pub const PRESETS: [Preset; 1] = [Preset {
    name: "irq-rate",
    help: "irqs/sec of one named IRQ (--measure): 20 trials x 5 s, governor performance, \
           workload threads pinned to the last CPU (not an ipi ring or a command)",
    trials: 20,
    duration: Duration::from_secs(5),
    governor: Some("performance"),
    pin_last_cpu: true,
    needs_irq: true,
}];

/// The preset called `name`; the error lists the names.
pub fn find(name: &str) -> Result<&'static Preset, String> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        format!("unknown preset {name:?} ({})", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irq_rate_preset_is_twenty_five_second_trials_at_performance() {
        let p = find("irq-rate").unwrap();
        assert_eq!((p.trials, p.duration), (20, Duration::from_secs(5)));
        assert_eq!(p.governor, Some("performance"));
        assert!(p.pin_last_cpu && p.needs_irq);
        assert!(find("nope").unwrap_err().contains("irq-rate"));
    }
}
