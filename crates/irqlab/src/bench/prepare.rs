//! Host preparation for `irqlab bench`: cpufreq governor, thread pinning,
//! IRQ affinity and sysctls, each applied through the [`SystemGuard`] so it
//! is journaled and undone; plus the CLI syntax (`PATTERN=CPUS`,
//! `IRQ=CPUS`, `key=value`) and the flags.
//!
//! Must not write anything itself: only the guard changes the host.

mod pin_threads;

pub use pin_threads::{pin_thread, NamePattern};

use crate::guard::SystemGuard;
use crate::host::HostFs;
use anyhow::{bail, Context, Result};
use irqlab_core::paths;
use irqlab_core::{CpuList, Interrupts};
use std::fmt;
use std::str::FromStr;

/// What one preparation step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Changes made (one line each).
    Applied(Vec<String>),
    /// Everything already was as asked.
    Unchanged(String),
    /// Not possible on this machine (e.g. no cpufreq); an error with `--strict`.
    Skipped(String),
}

impl Outcome {
    fn done(changed: Vec<String>, unchanged: String) -> Self {
        if changed.is_empty() {
            Outcome::Unchanged(unchanged)
        } else {
            Outcome::Applied(changed)
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Applied(lines) => write!(f, "{}", lines.join("; ")),
            Outcome::Unchanged(why) => write!(f, "unchanged: {why}"),
            Outcome::Skipped(why) => write!(f, "skipped: {why}"),
        }
    }
}

/// Set every cpufreq policy's `scaling_governor` to `governor`, after
/// checking each policy offers it. No cpufreq: [`Outcome::Skipped`].
pub fn governor(guard: &mut SystemGuard, governor: &str) -> Result<Outcome> {
    let policies: Vec<String> = guard
        .fs()
        .list_dir(paths::CPUFREQ)
        .into_iter()
        .filter(|p| p.starts_with("policy"))
        .collect();
    if policies.is_empty() {
        return Ok(Outcome::Skipped("no cpufreq on this machine".into()));
    }
    for p in &policies {
        let rel = paths::scaling_available_governors(p);
        if let Some(avail) = guard.fs().read_attr(&rel) {
            if !avail.split_whitespace().any(|g| g == governor) {
                bail!("{p} does not offer governor {governor:?} (available: {avail}; from {rel})");
            }
        }
    }
    let mut changed = Vec::new();
    for p in &policies {
        let rel = paths::scaling_governor(p);
        if guard.set_file(&rel, governor)? {
            changed.push(format!("{p}: governor {governor}"));
        }
    }
    Ok(Outcome::done(
        changed,
        format!("governor already {governor}"),
    ))
}

/// Write `cpus` to `proc/irq/<irq>/smp_affinity_list`. An unknown IRQ is
/// an error listing the IRQ numbers and actions of `/proc/interrupts`; one
/// the kernel does not let move (a read-only file, a refused write) is
/// [`Outcome::Skipped`].
pub fn irq_affinity(guard: &mut SystemGuard, irq: u32, cpus: &CpuList) -> Result<Outcome> {
    let rel = paths::proc_irq(irq, paths::SMP_AFFINITY_LIST);
    if guard.fs().read_attr(&rel).is_none() {
        bail!(
            "IRQ {irq} has no {}; available IRQs: {}",
            guard.fs().path(&rel).display(),
            available_irqs(guard)
        );
    }
    if guard.fs().is_read_only(&rel) {
        return Ok(Outcome::Skipped(format!(
            "IRQ {irq}: {} is read-only: {}",
            guard.fs().path(&rel).display(),
            immovable(irq)
        )));
    }
    let changed = match guard.set_file(&rel, &cpus.to_string()) {
        Ok(c) => c,
        Err(e) => match refused_by_kernel(&e) {
            Some(why) => {
                return Ok(Outcome::Skipped(format!(
                    "IRQ {irq}: the kernel refuses to move it ({why}; managed or per-CPU IRQ)"
                )))
            }
            None => return Err(e),
        },
    };
    let line = format!("IRQ {irq} -> CPUs {cpus}");
    Ok(Outcome::done(
        if changed { vec![line] } else { Vec::new() },
        format!("IRQ {irq} already on CPUs {cpus}"),
    ))
}

/// The errno name when the kernel refused a write (EPERM, EIO, EINVAL:
/// managed IRQs and IRQs that cannot move), not when irqlab lacks rights.
fn refused_by_kernel(e: &anyhow::Error) -> Option<&'static str> {
    let io = e.chain().find_map(|c| c.downcast_ref::<std::io::Error>())?;
    match io.raw_os_error()? {
        nix::libc::EPERM => Some("EPERM"),
        nix::libc::EIO => Some("EIO"),
        nix::libc::EINVAL => Some("EINVAL"),
        _ => None,
    }
}

/// `24 (ACPI:Ged), 26 (ttyS0)` from `proc/interrupts`, or the `proc/irq`
/// directory names when it is unreadable; when it is refused (cut inside
/// its last line: never parsed as if complete) the directory names say so
/// and why.
fn available_irqs(guard: &SystemGuard) -> String {
    let fs = guard.fs();
    let mut buf = Vec::new();
    let read = fs.read_once_text(paths::PROC_INTERRUPTS, &mut buf);
    let refused = read
        .as_ref()
        .err()
        .filter(|e| crate::host::is_refusal(e))
        .map(|e| e.to_string());
    let parsed = read.ok().and_then(|text| Interrupts::parse(text).ok());
    let list: Vec<String> = match parsed {
        Some(m) => m
            .rows()
            .iter()
            .filter_map(|r| {
                let actions: Vec<&str> = r.parts.actions().collect();
                r.irq.map(|n| format!("{n} ({})", actions.join(",")))
            })
            .collect(),
        None => fs.list_dir(paths::PROC_IRQ),
    };
    let shown = if list.is_empty() {
        "none found".to_string()
    } else {
        list.join(", ")
    };
    match refused {
        Some(why) => format!(
            "{shown} (the directories of {}; {why})",
            fs.path(paths::PROC_IRQ).display()
        ),
        None => shown,
    }
}

/// Set sysctl `key` (`vm.stat_interval`, or with `/` separators when a
/// component contains a dot) to `value` via `proc/sys/...`.
pub fn sysctl(guard: &mut SystemGuard, key: &str, value: &str) -> Result<Outcome> {
    let rel = sysctl_path(key)?;
    if guard.fs().read_attr(&rel).is_none() {
        bail!(
            "unknown sysctl {key:?}: {} is not readable",
            guard.fs().path(&rel).display()
        );
    }
    let changed = guard.set_file(&rel, value)?;
    Ok(Outcome::done(
        if changed {
            vec![format!("sysctl {key} = {value}")]
        } else {
            Vec::new()
        },
        format!("sysctl {key} already {value}"),
    ))
}

fn sysctl_path(key: &str) -> Result<String> {
    let ok = !key.is_empty()
        && !key.starts_with(['/', '.'])
        && !key.contains("..")
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/:".contains(c));
    if !ok {
        bail!("{key:?} is not a sysctl key (like vm.stat_interval)");
    }
    let path = if key.contains('/') {
        key.to_string()
    } else {
        key.replace('.', "/")
    };
    Ok(paths::sysctl(&path))
}

fn split_spec<'a>(s: &'a str, what: &str) -> Result<(&'a str, &'a str), String> {
    s.rsplit_once('=')
        .filter(|(l, r)| !l.is_empty() && !r.is_empty())
        .ok_or_else(|| format!("expected {what}, found {s:?}"))
}

fn parse_cpus(text: &str) -> Result<CpuList, String> {
    let l = CpuList::parse_list(text.as_bytes(), "CPU list")
        .map_err(|e| format!("bad CPU list {text:?}: {}", e.kind))?;
    if l.is_empty() {
        return Err("empty CPU list".into());
    }
    Ok(l)
}

/// `--pin-thread PATTERN=CPUS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinSpec {
    /// Glob or `re:REGEX` on thread names.
    pub pattern: String,
    /// Where to pin.
    pub cpus: CpuList,
}

impl FromStr for PinSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (pattern, cpus) = split_spec(s, "PATTERN=CPUS (e.g. 'irq/*-eth0=0-1')")?;
        NamePattern::parse(pattern).map_err(|e| format!("{e:#}"))?;
        Ok(PinSpec {
            pattern: pattern.into(),
            cpus: parse_cpus(cpus)?,
        })
    }
}

/// `--irq-affinity IRQ=CPUS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqSpec {
    /// IRQ number.
    pub irq: u32,
    /// Its new affinity.
    pub cpus: CpuList,
}

impl FromStr for IrqSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (irq, cpus) = split_spec(s, "IRQ=CPUS (e.g. '45=1')")?;
        let irq = irq
            .trim()
            .parse()
            .map_err(|_| format!("{irq:?} is not an IRQ number"))?;
        Ok(IrqSpec {
            irq,
            cpus: parse_cpus(cpus)?,
        })
    }
}

/// `--sysctl key=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysctlSpec {
    /// `vm.stat_interval`.
    pub key: String,
    /// Value to write.
    pub value: String,
}

impl FromStr for SysctlSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (key, value) = s
            .split_once('=')
            .filter(|(k, v)| !k.trim().is_empty() && !v.trim().is_empty())
            .ok_or_else(|| format!("expected key=value (e.g. vm.stat_interval=10), found {s:?}"))?;
        sysctl_path(key.trim()).map_err(|e| e.to_string())?;
        Ok(SysctlSpec {
            key: key.trim().into(),
            value: value.trim().into(),
        })
    }
}

/// The host preparation of a run or variant (built by the command layer
/// from `--governor`, `--pin-thread`, `--irq-affinity`, `--sysctl`,
/// `--strict`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preparation {
    /// Every cpufreq policy's governor.
    pub governor: Option<String>,
    /// Threads to pin.
    pub pin_thread: Vec<PinSpec>,
    /// IRQ affinities to set.
    pub irq_affinity: Vec<IrqSpec>,
    /// Sysctls to set.
    pub sysctl: Vec<SysctlSpec>,
    /// Fail instead of skipping a preparation this machine cannot do.
    pub strict: bool,
}

impl Preparation {
    /// True when nothing is to be prepared.
    pub fn is_empty(&self) -> bool {
        self.governor.is_none()
            && self.pin_thread.is_empty()
            && self.irq_affinity.is_empty()
            && self.sysctl.is_empty()
    }
}

/// Check, without changing anything, that every step of `p` can be
/// applied on `fs`'s host: sysctls and IRQs exist, the files written
/// (sysctls, IRQ affinities, governors) are writable, thread patterns
/// match, every policy offers the governor; under `--strict`, that nothing
/// would be skipped. Run before the first file or host change of a bench.
pub fn validate(fs: &HostFs, p: &Preparation) -> Result<()> {
    if let Some(g) = &p.governor {
        check_governor(fs, g, p.strict).with_context(|| format!("--governor {g}"))?;
    }
    for s in &p.sysctl {
        check_sysctl(fs, s)?;
    }
    for s in &p.irq_affinity {
        check_irq(fs, s, p.strict)
            .with_context(|| format!("--irq-affinity {}={}", s.irq, s.cpus))?;
    }
    for s in &p.pin_thread {
        pin_threads::check_pattern(fs, &s.pattern, p.strict)
            .and_then(|()| check_cpus_exist(fs, &s.cpus))
            .with_context(|| format!("--pin-thread {}={}", s.pattern, s.cpus))?;
    }
    Ok(())
}

/// `--irq-affinity IRQ=CPUS` can be written: the IRQ's
/// `smp_affinity_list` is there, the CPUs exist; under `--strict`, the
/// file is writable (read-only: an IRQ the kernel never lets move, which
/// [`irq_affinity`] skips).
fn check_irq(fs: &HostFs, s: &IrqSpec, strict: bool) -> Result<()> {
    let rel = paths::proc_irq(s.irq, paths::SMP_AFFINITY_LIST);
    if fs.read_attr(&rel).is_none() {
        bail!("IRQ {} has no {}", s.irq, fs.path(&rel).display());
    }
    if strict {
        check_writable(fs, &rel, &immovable(s.irq)).context("--strict")?;
    }
    check_cpus_exist(fs, &s.cpus)
}

/// Why an IRQ whose `smp_affinity_list` is read-only is not moved.
fn immovable(irq: u32) -> String {
    format!("the kernel does not let IRQ {irq} move (a per-CPU or managed IRQ)")
}

/// `rel` has a write permission bit; the error names the file and says
/// `why` it has none.
fn check_writable(fs: &HostFs, rel: &str, why: &str) -> Result<()> {
    if fs.is_read_only(rel) {
        bail!(
            "{} is read-only, expected a writable file: {why}",
            fs.path(rel).display()
        );
    }
    Ok(())
}

/// `--sysctl KEY=VALUE` can be written, as far as can be told without
/// writing: the file exists, is readable and has a write permission bit;
/// where its current value is whole numbers, `VALUE` is whole numbers too.
fn check_sysctl(fs: &HostFs, s: &SysctlSpec) -> Result<()> {
    let rel = sysctl_path(&s.key)?;
    let flag = format!("--sysctl {}={}", s.key, s.value);
    let Some(current) = fs.read_attr(&rel) else {
        bail!(
            "{flag}: unknown sysctl: {} is not readable",
            fs.path(&rel).display()
        );
    };
    if fs.is_read_only(&rel) {
        bail!("{flag}: {} is read-only", fs.path(&rel).display());
    }
    let numbers = |v: &str| {
        let mut words = v.split_whitespace().peekable();
        words.peek().is_some() && words.all(|w| w.parse::<i64>().is_ok())
    };
    if numbers(&current) && !numbers(&s.value) {
        bail!(
            "{flag}: expected a whole number (or numbers), as {} holds ({:?})",
            fs.path(&rel).display(),
            current.trim()
        );
    }
    Ok(())
}

/// Every CPU of `cpus` exists (`sys/devices/system/cpu/possible`) and at
/// least one is online (the kernel refuses an affinity without an online
/// CPU). Unreadable lists are not judged.
fn check_cpus_exist(fs: &HostFs, cpus: &CpuList) -> Result<()> {
    let read = |rel: &str| -> Option<(String, CpuList)> {
        let text = fs.read_attr(rel)?;
        let list = CpuList::parse_list(text.as_bytes(), paths::SYS_CPU).ok()?;
        Some((text, list))
    };
    if let Some((text, possible)) = read(paths::CPU_POSSIBLE) {
        let absent: Vec<String> = cpus
            .iter()
            .filter(|c| !possible.contains(*c))
            .map(|c| c.to_string())
            .collect();
        if !absent.is_empty() {
            bail!(
                "CPU {} does not exist on this machine (CPUs {text}, from {})",
                absent.join(", "),
                fs.path(paths::CPU_POSSIBLE).display()
            );
        }
    }
    if let Some((text, online)) = read(paths::CPU_ONLINE) {
        if !cpus.iter().any(|c| online.contains(c)) {
            bail!(
                "none of CPUs {cpus} is online (online: {text}, from {})",
                fs.path(paths::CPU_ONLINE).display()
            );
        }
    }
    Ok(())
}

fn check_governor(fs: &HostFs, governor: &str, strict: bool) -> Result<()> {
    let policies: Vec<String> = fs
        .list_dir(paths::CPUFREQ)
        .into_iter()
        .filter(|p| p.starts_with("policy"))
        .collect();
    if policies.is_empty() && strict {
        bail!("--strict: no cpufreq on this machine");
    }
    for p in &policies {
        check_policy(fs, p, governor)?;
    }
    Ok(())
}

/// Cpufreq policy `p` offers `governor` (its `scaling_available_governors`
/// names it) and its `scaling_governor` is there and writable.
fn check_policy(fs: &HostFs, p: &str, governor: &str) -> Result<()> {
    let avail_rel = paths::scaling_available_governors(p);
    let avail_path = fs.path(&avail_rel);
    let Some(avail) = fs.read_attr(&avail_rel) else {
        bail!(
            "{} is not readable, expected the governors {p} offers (to check it offers {governor:?})",
            avail_path.display()
        );
    };
    if !avail.split_whitespace().any(|g| g == governor) {
        bail!(
            "{p} does not offer governor {governor:?} (available: {avail}; from {})",
            avail_path.display()
        );
    }
    let rel = paths::scaling_governor(p);
    if fs.read_attr(&rel).is_none() {
        bail!(
            "{} is not readable, expected {p}'s current governor (the file the governor is written to)",
            fs.path(&rel).display()
        );
    }
    check_writable(fs, &rel, &format!("{p}'s governor is set there"))
}

/// Apply every requested preparation in this order: governor, sysctls,
/// IRQ affinity, thread pinning. A skipped step is an error with
/// `--strict` (before any later step). On any error the guard undoes at
/// once every change it holds, and the error says which were undone (or
/// which could not be), so that the user knows the machine's state.
pub fn apply(guard: &mut SystemGuard, args: &Preparation) -> Result<Vec<Outcome>> {
    apply_steps(guard, args).map_err(|e| undone_before(guard, e))
}

/// `e`, a step's failure, followed by what undoing the guard's earlier
/// changes did (a usage error stays one).
fn undone_before(guard: &mut SystemGuard, e: anyhow::Error) -> anyhow::Error {
    let r = guard.restore_report();
    let note = if r.is_empty() {
        "no host change had been made before it".to_string()
    } else if r.is_ok() {
        format!("the host changes made before it were undone:\n{r}")
    } else {
        format!("undoing the host changes made before it did not complete:\n{r}")
    };
    let text = format!("{e:#}\n{}", note.trim_end());
    if e.downcast_ref::<crate::bench::plan::Invalid>().is_some() {
        crate::bench::plan::invalid(text)
    } else {
        anyhow::anyhow!(text)
    }
}

fn apply_steps(guard: &mut SystemGuard, args: &Preparation) -> Result<Vec<Outcome>> {
    let mut out = Steps {
        list: Vec::new(),
        strict: args.strict,
    };
    if let Some(g) = &args.governor {
        out.push(governor(guard, g).with_context(|| format!("--governor {g}"))?)?;
    }
    for s in &args.sysctl {
        let o = sysctl(guard, &s.key, &s.value).with_context(|| format!("--sysctl {}", s.key))?;
        out.push(o)?;
    }
    for s in &args.irq_affinity {
        let o = irq_affinity(guard, s.irq, &s.cpus)
            .with_context(|| format!("--irq-affinity {}={}", s.irq, s.cpus))?;
        out.push(o)?;
    }
    for s in &args.pin_thread {
        let outcomes = pin_thread(guard, &s.pattern, &s.cpus)
            .with_context(|| format!("--pin-thread {}={}", s.pattern, s.cpus))?;
        for o in outcomes {
            out.push(o)?;
        }
    }
    Ok(out.list)
}

/// Outcomes so far; refuses a skip under `--strict`.
struct Steps {
    list: Vec<Outcome>,
    strict: bool,
}

impl Steps {
    fn push(&mut self, o: Outcome) -> Result<()> {
        if let (true, Outcome::Skipped(why)) = (self.strict, &o) {
            // a usage error (exit 2) like every --strict refusal found earlier
            return Err(crate::bench::plan::invalid(format!(
                "--strict: cannot prepare the host: {why}"
            )));
        }
        self.list.push(o);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
