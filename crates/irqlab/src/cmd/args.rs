//! Command-line pieces shared by the subcommands: the `--root` and row
//! filter (`--irq`, `--exclude`, `--cpus`) argument structs, the clap value
//! parsers for paths, CPU lists, durations, sampling intervals, counts and
//! regexes, and the deprecation note of a renamed flag.
//!
//! Owns how a flag's text becomes a value and what a bad value says; a
//! value parser's error becomes a clap usage error (exit 2, `error:
//! invalid value …`). Must not read files or the clock.

use crate::sampler::pace::LONGEST_RUN;
use clap::builder::TypedValueParser;
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
    #[arg(long = "root", value_name = "DIR", default_value = "/", value_parser = path())]
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

/// The row filter flags, flattened with `#[command(flatten)]` into every
/// subcommand that filters interrupt rows (show, top, replay, record,
/// serve, trace), with one meaning and one help text everywhere; a
/// subcommand that cannot filter rows does not declare them, so clap
/// rejects them there.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct FilterArgs {
    /// Keep only rows whose label, description, chip or one action
    /// matches this regex (e.g. `virtio`, `^eth0$`, `^(LOC|RES)$`).
    #[arg(long, value_name = "REGEX", value_parser = regex_arg)]
    pub irq: Option<String>,
    /// Then drop rows whose label, description, chip or one action
    /// matches this regex (e.g. `^(NMI|PMI)$`).
    #[arg(long, value_name = "REGEX", value_parser = regex_arg)]
    pub exclude: Option<String>,
    /// Keep only these CPUs (e.g. `0-3,8`).
    #[arg(long, value_name = "LIST", value_parser = cpu_list_arg)]
    pub cpus: Option<String>,
}

impl FilterArgs {
    /// The warnings about these flags selecting nothing or less than
    /// asked in a sampled snapshot (the baseline of `top` and `replay`,
    /// batch or interactive), whose interrupt rows `rows` kept: one line
    /// each, as said on stderr (`irqlab: warning: …`). The rule is
    /// [`crate::filter::warnings::snapshot_warnings`]'s.
    pub fn warnings(
        &self,
        snap: &irqlab_core::Snapshot,
        rows: &crate::filter::Filter,
    ) -> Vec<String> {
        let cpus = self.cpus.as_deref();
        let irq = self.irq.as_deref();
        crate::filter::warnings::snapshot_warnings(cpus, irq, snap, rows)
    }

    /// Print [`FilterArgs::warnings`] on stderr (`top --batch`, `replay
    /// --batch`, `serve`).
    pub fn warn_about(&self, snap: &irqlab_core::Snapshot, rows: &crate::filter::Filter) {
        for w in self.warnings(snap, rows) {
            eprintln!("{w}");
        }
    }

    /// The row filter these flags select.
    pub fn filter(&self) -> anyhow::Result<crate::filter::Filter> {
        crate::filter::Filter::from_flags(self.irq.as_deref(), self.cpus.as_deref())?
            .excluding(self.exclude.as_deref())
    }
}

/// `--compact` / `--pretty`: the layout of a command's JSON output
/// (show, bench, compare, probe), flattened with `#[command(flatten)]`.
/// One rule everywhere: indented on a terminal, one line otherwise
/// (a pipe or a file: a fifth of the bytes), unless a flag says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args)]
pub struct JsonLayout {
    /// JSON on one line (the default when the output is not a terminal);
    /// with --format json only.
    #[arg(long, conflicts_with = "pretty")]
    pub compact: bool,
    /// Indented JSON (the default on a terminal); with --format json only.
    #[arg(long)]
    pub pretty: bool,
}

impl JsonLayout {
    /// Whether JSON written to stdout is indented.
    pub fn pretty_on_stdout(self) -> bool {
        use std::io::IsTerminal;
        self.pretty_to(std::io::stdout().is_terminal())
    }

    /// Whether JSON is indented when it goes to a terminal (`terminal`)
    /// or elsewhere.
    pub fn pretty_to(self, terminal: bool) -> bool {
        self.pretty || (!self.compact && terminal)
    }

    /// Why a given flag cannot apply (a usage error): `format`, the
    /// command's `--format`, is not `json`, the value that writes JSON.
    pub fn refused_with<F: clap::ValueEnum + PartialEq>(
        self,
        format: F,
        json: F,
    ) -> Option<String> {
        let flag = match (self.compact, self.pretty) {
            (true, _) => "--compact",
            (_, true) => "--pretty",
            _ => return None,
        };
        let name = format.to_possible_value()?;
        (format != json).then(|| {
            format!(
                "the argument '{flag}' cannot be used with '--format {}': it sets the JSON layout",
                name.get_name()
            )
        })
    }
}

/// A value parser over a parse function that also offers names to shell
/// completions (synth's `--arch <TAB>`, bench's `--governor <TAB>`,
/// serve's `--per-cpu <TAB>`)
/// without refusing what else the function accepts (an alias such as
/// `x86_64`, a governor the list does not name).
#[derive(Clone)]
pub struct Named<T: 'static> {
    parse: fn(&str) -> Result<T, String>,
    names: Vec<&'static str>,
}

impl<T: Clone + Send + Sync + 'static> Named<T> {
    pub fn new(parse: fn(&str) -> Result<T, String>, names: &[&'static str]) -> Self {
        Named {
            parse,
            names: names.to_vec(),
        }
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Named<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.names
                .iter()
                .map(|n| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

/// The deprecation notes of `argv` (up to a `--`): one for each word
/// that is the old spelling of a renamed flag (`renamed`: `(old, new)`;
/// the old one stays a hidden clap alias for one release), alone or as
/// `old=value`.
pub fn deprecated_spellings<S: AsRef<str>>(argv: &[S], renamed: &[(&str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for word in argv.iter().map(AsRef::as_ref).take_while(|w| *w != "--") {
        for &(old, new) in renamed {
            let hit = word
                .strip_prefix(old)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('='));
            if hit {
                out.push(format!(
                    "{old} is deprecated and will be removed in the next release; use {new}"
                ));
            }
        }
    }
    out
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

/// Value parser for a run length (`record -d`, `record --segment`, `serve
/// --duration`): a [`duration`] above 0 and at most [`LONGEST_RUN`] (a
/// year).
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err(format!("the duration must be > 0, found {:?}", s.trim()));
    }
    if d > LONGEST_RUN {
        return Err(format!(
            "{} is longer than the longest run: more than 0 and at most 8760h (365 days)",
            s.trim()
        ));
    }
    Ok(d)
}

/// Longest sampling interval (`show`, `top`, `record`, `serve`): they
/// wait it out in one sleep, so a typo (`10000000000s`) would otherwise
/// look like a hang.
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// Shortest sampling interval of [`interval`]: reading the counter files
/// once costs from ~0.1 ms (a small machine) to several ms (1000+ CPUs),
/// so a shorter interval samples back to back, one CPU busy reading,
/// and a run by `--duration` overruns it. sar and mpstat count in whole
/// seconds; 1 ms is still far below any of them.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

/// What an interval below [`MIN_INTERVAL`] is told.
const SHORTEST: &str =
    "the shortest interval (1ms): a sample costs ~0.1 ms or more, so shorter ones would sample back to back";

/// Value parser for a sampling interval (`show`, `top`, `record`,
/// `serve`): a duration above 0, at least [`MIN_INTERVAL`] and at most
/// [`MAX_INTERVAL`].
pub fn interval(s: &str) -> Result<Duration, String> {
    if duration(s)?.is_zero() {
        return Err("the interval must be greater than 0 (e.g. 1s)".to_string());
    }
    bounded_interval(s, Some((MIN_INTERVAL, SHORTEST)))
}

/// The one sampling-interval rule: a [`duration`] above 0, at least
/// `min` when given (`(shortest, "the shortest … (10ms): why")`, e.g.
/// `trace`'s), and at most [`MAX_INTERVAL`]. A flag with a minimum uses it
/// as `value_parser = |s: &str| bounded_interval(s, Some(...))`.
pub fn bounded_interval(s: &str, min: Option<(Duration, &str)>) -> Result<Duration, String> {
    let d = duration(s)?;
    if let Some((_, shortest)) = min.filter(|&(least, _)| d < least) {
        return Err(format!("{} is shorter than {shortest}", s.trim()));
    }
    if d.is_zero() {
        return Err("the interval must be greater than 0 (e.g. 1s)".to_string());
    }
    if d > MAX_INTERVAL {
        return Err(format!(
            "{} is longer than the longest interval (24h)",
            s.trim()
        ));
    }
    Ok(d)
}

/// Value parser for a count flag (`bench --trials`, `probe --reads` …): a
/// whole number in decimal digits from `min` to `max`, as the flag's
/// type `T`; anything else (`-1`, `1e3`, `1.5`, out of range) is told
/// what is expected: `expected a whole number from 1 to 4294967295,
/// found "1e12"`. A flag uses it as `value_parser = |s: &str|
/// whole_number::<u32>(s, 1, u32::MAX.into())`, with `allow_hyphen_values
/// = true` so that a negative number reaches it.
pub fn whole_number<T: TryFrom<u64>>(s: &str, min: u64, max: u64) -> Result<T, String> {
    let t = s.trim();
    let expected = || format!("expected a whole number from {min} to {max}, found {t:?}");
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(expected());
    }
    // all digits: only too many of them fails to parse
    let n: u64 = t.parse().map_err(|_| expected())?;
    if !(min..=max).contains(&n) {
        return Err(expected());
    }
    T::try_from(n).map_err(|_| expected())
}

/// What is wrong with an empty path argument.
pub const EMPTY_PATH: &str = "the path is empty (give a file or directory; `.` is the current one)";

/// Value parser of every path argument (`--root`, `--out`, `replay`'s
/// and `recover`'s directory …): any path but the empty one, which names
/// no file (refused as `invalid value '' for '--out <OUT>': the path is
/// empty …`, naming the argument; `compare`'s inputs, several to one
/// argument, are refused with their position by `compare`). Read as an
/// `OsString`: a path that is not UTF-8 passes.
pub fn path() -> impl TypedValueParser<Value = PathBuf> {
    clap::builder::OsStringValueParser::new().try_map(|s| {
        if s.is_empty() {
            return Err(EMPTY_PATH);
        }
        Ok(PathBuf::from(s))
    })
}

/// Value parser for `--irq`: a valid regular expression (kept as text for
/// `filter::Filter`).
pub fn regex_arg(s: &str) -> Result<String, String> {
    regex::Regex::new(s)
        .map(|_| s.to_string())
        .map_err(|e| format!("not a valid regular expression: {e}"))
}

/// Value parser for `--cpus`: a CPU list such as `0-3,8` that names at
/// least one CPU ([`nonempty_cpu_list`]: an empty list is refused as
/// `0,1,`'s empty item is; kept as text for `filter::Filter`).
pub fn cpu_list_arg(s: &str) -> Result<String, String> {
    nonempty_cpu_list(s).map(|_| s.to_string())
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
        assert_eq!(positive_duration("8760h"), Ok(LONGEST_RUN));
        assert!(positive_duration("8761h")
            .unwrap_err()
            .contains("longest run: more than 0 and at most 8760h (365 days)"));
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
        assert_eq!(interval("1ms"), Ok(MIN_INTERVAL));
        for short in ["1ns", "50us", "0.9ms"] {
            assert!(
                interval(short)
                    .unwrap_err()
                    .contains("shorter than the shortest interval (1ms)"),
                "{short}"
            );
        }
        assert!(interval("25h")
            .unwrap_err()
            .contains("longest interval (24h)"));
        let min = Some((Duration::from_millis(10), "the shortest x (10ms)"));
        assert!(bounded_interval("5ms", min)
            .unwrap_err()
            .contains("5ms is shorter than the shortest x (10ms)"));
        assert!(bounded_interval("0", min)
            .unwrap_err()
            .contains("shortest x"));
        assert_eq!(bounded_interval("10ms", min), Ok(Duration::from_millis(10)));
        assert!(bounded_interval("25h", min).unwrap_err().contains("24h"));
    }

    #[test]
    fn whole_numbers_say_what_is_expected() {
        let max = u64::from(u32::MAX);
        assert_eq!(whole_number::<u32>("10", 1, max), Ok(10));
        assert_eq!(whole_number::<u32>(" 4294967295 ", 1, max), Ok(u32::MAX));
        assert_eq!(whole_number::<u64>("0", 0, u64::MAX), Ok(0));
        assert_eq!(
            whole_number::<u64>("18446744073709551615", 0, u64::MAX),
            Ok(u64::MAX)
        );
        for bad in [
            "0",
            "-1",
            "1e12",
            "1e3",
            "1.5",
            "",
            "+3",
            "x",
            "99999999999999",
            "99999999999999999999999",
        ] {
            assert_eq!(
                whole_number::<u32>(bad, 1, max),
                Err(format!(
                    "expected a whole number from 1 to 4294967295, found {:?}",
                    bad.trim()
                )),
                "{bad}"
            );
        }
        assert!(whole_number::<u8>("300", 0, 1000).is_err());
    }

    #[test]
    fn old_spellings_are_noted_up_to_a_double_dash() {
        let renamed = [("--cpus", "--workload-cpus")];
        let argv = [
            "bench", "--cpus=0", "--cpus-x", "--cpus", "1", "--", "--cpus",
        ];
        let notes = deprecated_spellings(&argv, &renamed);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("--cpus is deprecated") && notes[0].contains("--workload-cpus"));
        assert!(deprecated_spellings(&["--workload-cpus", "1"], &renamed).is_empty());
    }

    #[derive(Debug, Parser)]
    #[command(no_binary_name = true)]
    struct F {
        #[command(flatten)]
        filter: FilterArgs,
    }

    #[test]
    fn filter_args_build_the_one_row_filter() {
        let f = F::try_parse_from(["--irq", "virtio", "--exclude", "input", "--cpus", "1"])
            .unwrap()
            .filter
            .filter()
            .unwrap();
        let no = std::iter::empty();
        assert!(f.keep_fields("24", "PCI-MSI virtio0-config", "", no.clone()));
        assert!(!f.keep_fields("25", "PCI-MSI virtio1-input.0", "", no.clone()));
        assert!(!f.keep_fields("LOC", "Local timer interrupts", "", no));
        assert!(f.keep_cpu(1) && !f.keep_cpu(0));
        for bad in [["--exclude", "("], ["--irq", "("], ["--cpus", "5-2"]] {
            let e = F::try_parse_from(bad).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{bad:?}");
        }
    }

    #[test]
    fn regexes_and_cpu_lists_are_checked_as_text() {
        assert!(regex_arg("(").unwrap_err().contains("regular expression"));
        assert_eq!(regex_arg("^LOC$").as_deref(), Ok("^LOC$"));
        assert!(cpu_list_arg("5-2").is_err());
        assert_eq!(cpu_list_arg("0-1,3").as_deref(), Ok("0-1,3"));
        for empty in ["", " "] {
            assert!(
                cpu_list_arg(empty).unwrap_err().contains("empty"),
                "{empty:?}"
            );
        }
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
