//! Command-line pieces shared by the subcommands: the `--root` argument
//! struct and the clap value parsers for CPU lists, durations, sampling
//! intervals and `--irq` regexes.
//!
//! Owns how a flag's text becomes a value and what a bad value says; a
//! value parser's error becomes a clap usage error (exit 2, `error:
//! invalid value …`). Must not read files or the clock.

use irqlab_core::CpuList;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `--root DIR`: the tree `/proc` and `/sys` are read from (and, for the
/// commands that change the host, written to). Flatten it into every
/// subcommand's `Args` with `#[command(flatten)]`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct RootArgs {
    /// Use DIR/proc and DIR/sys instead of /proc and /sys (a captured tree
    /// such as a sosreport, or `irqlab synth` output).
    #[arg(long = "root", value_name = "DIR", default_value = "/")]
    pub dir: PathBuf,
}

impl RootArgs {
    /// The root directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// True when the root is the live host's `/`.
    pub fn is_host(&self) -> bool {
        self.dir == Path::new("/")
    }

    /// A [`crate::host::HostFs`] over this root.
    pub fn host_fs(&self) -> crate::host::HostFs {
        crate::host::HostFs::new(&self.dir)
    }
}

impl Default for RootArgs {
    fn default() -> Self {
        RootArgs {
            dir: PathBuf::from("/"),
        }
    }
}

/// Value parser for a CPU list flag (`0-3,8`): the core's CPU-list parser,
/// so flags accept exactly what `/proc/irq/N/smp_affinity_list` holds.
/// Empty text is the empty list; `5-2` is an error.
pub fn cpu_list(s: &str) -> Result<CpuList, String> {
    CpuList::parse_list(s.trim().as_bytes(), "CPU list")
        .map_err(|e| format!("{} in {s:?} (expected a CPU list such as 0-3,8)", e.kind))
}

/// Value parser for a CPU list flag that must name at least one CPU.
pub fn nonempty_cpu_list(s: &str) -> Result<CpuList, String> {
    let l = cpu_list(s)?;
    if l.is_empty() {
        return Err("the CPU list is empty (expected e.g. 0-3,8)".to_string());
    }
    Ok(l)
}

/// Value parser for a duration such as `1s`, `250ms`, `2m`, `1.5s` or
/// `100us` (no unit = seconds). Zero is allowed; negative is not (give
/// the flag `allow_hyphen_values = true` so that `--interval -1s` reaches
/// this parser and says "the duration is negative" instead of clap's
/// "unexpected argument").
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("the duration is negative: {t:?}"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected a duration like 1s or 250ms, found {t:?}"))?;
    let secs = match unit.trim() {
        "" | "s" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "ns" => v / 1e9,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        u => {
            return Err(format!(
                "unknown duration unit {u:?} in {t:?} (use ns, us, ms, s, m, h)"
            ))
        }
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("duration out of range: {t:?}"))
}

/// Value parser for a duration that must be longer than zero (sampling
/// intervals, trial lengths).
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err(format!("the duration must be > 0, found {:?}", s.trim()));
    }
    Ok(d)
}

/// Longest sampling interval (`show -i`, `top -i`): both wait it out in
/// one sleep, so a typo (`10000000000s`) would otherwise look like a hang.
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// Value parser for a sampling interval: a duration above 0
/// ([`positive_duration`]) and at most [`MAX_INTERVAL`].
pub fn interval(s: &str) -> Result<Duration, String> {
    let d = positive_duration(s).map_err(|e| {
        if duration(s).is_ok_and(|d| d.is_zero()) {
            "the interval must be greater than 0 (e.g. 1s)".to_string()
        } else {
            e
        }
    })?;
    if d > MAX_INTERVAL {
        return Err(format!(
            "{} is longer than the longest interval (24h)",
            s.trim()
        ));
    }
    Ok(d)
}

/// Value parser for `--irq`: a valid regular expression (kept as text for
/// `filter::Filter`).
pub fn regex_arg(s: &str) -> Result<String, String> {
    regex::Regex::new(s)
        .map(|_| s.to_string())
        .map_err(|e| format!("not a valid regular expression: {e}"))
}

/// Value parser for `--cpus`: a CPU list such as `0-3,8` ([`cpu_list`];
/// kept as text for `filter::Filter`).
pub fn cpu_list_arg(s: &str) -> Result<String, String> {
    cpu_list(s).map(|_| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    #[command(no_binary_name = true)]
    struct T {
        #[command(flatten)]
        root: RootArgs,
        #[arg(long, value_parser = cpu_list)]
        cpus: Option<CpuList>,
        #[arg(long, value_parser = positive_duration, allow_hyphen_values = true)]
        every: Option<Duration>,
    }

    #[test]
    fn cpu_lists() {
        let l = cpu_list("3,7-9").unwrap();
        assert_eq!(l.iter().collect::<Vec<_>>(), [3, 7, 8, 9]);
        assert!(cpu_list("").unwrap().is_empty());
        assert_eq!(cpu_list("2,1-2").unwrap().to_string(), "1-2");
        let e = cpu_list("5-2").unwrap_err();
        assert!(e.contains("\"5-2\""), "{e}");
        assert!(cpu_list("x").is_err());
        assert!(nonempty_cpu_list(" ").is_err());
        assert!(nonempty_cpu_list("0").is_ok());
    }

    #[test]
    fn durations() {
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("100us"), Ok(Duration::from_micros(100)));
        assert_eq!(duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(duration("0s"), Ok(Duration::ZERO));
        assert!(duration("-1s").unwrap_err().contains("negative"));
        assert!(duration("1e400s").is_err());
        assert!(duration("99999999999999999999999h").is_err());
        assert!(duration("1 fortnight").unwrap_err().contains("unit"));
        assert!(duration("s").is_err());
        assert!(positive_duration("0ms").unwrap_err().contains("> 0"));
        assert!(positive_duration("-2s").unwrap_err().contains("negative"));
        assert_eq!(positive_duration("1s"), Ok(Duration::from_secs(1)));
    }

    #[test]
    fn intervals_are_above_zero_and_at_most_a_day() {
        assert_eq!(interval("250ms"), Ok(Duration::from_millis(250)));
        assert!(interval("0").unwrap_err().contains("greater than 0"));
        assert!(interval("-1s").unwrap_err().contains("negative"));
        assert!(interval("10000000000s")
            .unwrap_err()
            .contains("longest interval (24h)"));
        assert_eq!(interval("24h"), Ok(MAX_INTERVAL));
    }

    #[test]
    fn regexes_and_cpu_lists_are_checked_as_text() {
        assert!(regex_arg("(").unwrap_err().contains("regular expression"));
        assert_eq!(regex_arg("^LOC$").as_deref(), Ok("^LOC$"));
        assert!(cpu_list_arg("5-2").is_err());
        assert_eq!(cpu_list_arg("0-1,3").as_deref(), Ok("0-1,3"));
    }

    #[test]
    fn flattened_into_clap() {
        let t = T::try_parse_from(["--cpus", "0-1", "--every", "1s"]).unwrap();
        assert!(t.root.is_host());
        assert_eq!(t.cpus.unwrap().to_string(), "0-1");
        let t = T::try_parse_from(["--root", "/tmp/x"]).unwrap();
        assert_eq!(t.root.path(), Path::new("/tmp/x"));
        for bad in [["--cpus", "5-2"], ["--every", "0s"], ["--every", "-1s"]] {
            let e = T::try_parse_from(bad).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{bad:?}");
            assert_eq!(e.exit_code(), 2);
        }
        let e = T::try_parse_from(["--every", "-1s"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("the duration is negative"), "{e}");
    }
}
