//! The bench trial loop, driven by a plain [`Plan`]: check everything
//! (plan, measured IRQs, host preparation, workloads, output directory;
//! on `--resume`, that the environment is the stored run's) before the
//! first file or host change, prepare the host through the
//! SystemGuard, set up each variant's workload, run warm-ups, then the
//! scheduled trials — one frame of the run's [`LiveSampler`] when the
//! workload opens the trial's [`Window`] (its steady state) and one when
//! it closes it, before stopping anything (the one seam: `Trial::sample`;
//! the whole `/proc/interrupts`, kept-open files, thread CPU, self cost
//! and clocks are the sampler's) — and append every finished trial at
//! once. Trials are numbered from 1 everywhere (records, progress,
//! errors). A trial disturbed by CPU hotplug is kept, marked with the gap
//! `cpu_offline`, and the run goes on. The guard restores the host, kills
//! the process groups and removes the temporary files it tracks on
//! success, error, panic and signals. SIGINT/SIGTERM caught by the
//! caller's [`Stop`] (which the workloads hold too) end the trials: the
//! one cut short is discarded, the host restored, and the summary of the
//! finished ones written (marked interrupted). A run that ends with no
//! trial recorded removes what it wrote to its output directory.
//!
//! /proc/stat's irq and softirq shares that are tick samples
//! (`irqtime`) are left out with a note, or taken from the traced time.
//!
//! Writes no terminal output itself: progress and notes go to a [`Sink`];
//! the summary is returned to the caller.

use super::irqtime::{self, IrqTime, Shares};
use super::measured::{self, Measured};
use super::metrics::{
    interrupts_counted, softirq_per_cpu, system_metrics, SystemMetrics, SELECTED_TOTAL,
    SOFTIRQ_PER_CPU, SOFTIRQ_TICKS_PER_CPU,
};
use super::plan::{
    default_selectors, headline, invalid, schedule, Plan, PlanFile, TrialSlot, Variant,
};
use super::prepare::{self, Outcome};
use super::result_files::{self as bench_results, SummaryFile};
use super::tracing::{time_shares, trace_metrics};
use super::workload::{NoWindow, Window, Workload};
use super::workloads::{self, placement::PinError};
use super::{env_json, metric_value::Direction, metric_value::Metric};
use crate::filter::Filter;
use crate::guard::{self, RunLock, Stale, SystemGuard, Tracker};
use crate::host::HostFs;
use crate::results::{self, TrialRecord, TrialWriter};
use crate::sampler::strategy::Choice;
use crate::sampler::{Frame, LivePlan, LiveSampler, Stop};
use crate::threads::{ThreadCpu, ThreadKind};
use crate::trace::interval::Interval;
use crate::trace::live_trace::LiveTrace;
use anyhow::{Context, Result};
use irqlab_core::Interrupts;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The gap of a trial whose threads lost their CPU (hotplug).
pub const CPU_OFFLINE: &str = "cpu_offline";

/// Where the loop reports what happens (the command layer draws it).
pub trait Sink {
    /// A line for the user (already starting with `irqlab:`).
    fn note(&mut self, line: &str);
    /// A timed trial finished: `done` of `total` in this invocation.
    fn trial(&mut self, done: usize, total: usize, t: &TrialRecord, headline: Option<&str>);
    /// No more trials.
    fn finish(&mut self) {}
}

/// What a finished run hands back.
#[derive(Debug)]
pub struct Finished {
    pub out: PathBuf,
    pub summary: SummaryFile,
    pub variants: usize,
    /// Each variant's label and finished trials, in plan order.
    pub trials_per_variant: Vec<(String, usize)>,
    /// The signal (number) that ended the run before its last trial.
    pub interrupted: Option<i32>,
    /// `--resume` of a run whose trials had all finished: nothing ran.
    pub nothing_to_do: bool,
}

/// `SIGINT`, `SIGTERM` or `signal N`.
pub fn signal_name(sig: i32) -> String {
    match sig {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// IRQs to measure: `--measure` (strict) or each variant's defaults (lenient).
fn resolve_measured(plan: &Plan, m: &Interrupts) -> Result<Measured> {
    if !plan.irq.is_empty() {
        return measured::resolve(&plan.irq, m).map_err(|e| invalid(format!("{e:#}")));
    }
    let mut rows = Vec::new();
    for v in &plan.variants {
        for sel in default_selectors(v.kind) {
            if let Ok(s) = measured::resolve(&[sel.to_string()], m) {
                rows.extend(
                    s.rows
                        .into_iter()
                        .filter(|r| {
                            !rows
                                .iter()
                                .any(|x: &measured::MeasuredIrq| x.label == r.label)
                        })
                        .collect::<Vec<_>>(),
                );
            }
        }
    }
    Ok(Measured { rows })
}

fn default_out(label: &str, started: &str) -> PathBuf {
    let stamp: String = started
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    PathBuf::from("irqlab-results")
        .join(results::variant_dir(label))
        .join(stamp)
}

/// `dir`, or when something is there already (a run started in the same
/// second), the first of `dir-2`, `dir-3` … that is not: a folder the
/// user did not choose never collides with an earlier run's.
fn unused(dir: PathBuf) -> PathBuf {
    if !dir.exists() {
        return dir;
    }
    (2u32..=u32::MAX)
        .map(|k| {
            let mut name = dir.as_os_str().to_os_string();
            name.push(format!("-{k}"));
            PathBuf::from(name)
        })
        .find(|d| !d.exists())
        .unwrap_or(dir)
}

/// True when `dir` holds the results of a run (a plan or any trials).
pub fn holds_results(dir: &Path) -> bool {
    if dir.join("plan.json").exists() {
        return true;
    }
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.path().join(results::TRIALS_FILE).exists())
    })
}

/// The `irqlab bench --resume` command line that continues the run of
/// `plan` in `out`, with its `--root` and `--journal` when not the defaults.
pub fn resume_command(plan: &Plan, out: &Path) -> String {
    let mut cmd = format!("irqlab bench --resume {}", guard::shell_word(out));
    if plan.root != Path::new("/") {
        cmd.push_str(&format!(" --root {}", guard::shell_word(&plan.root)));
    }
    if let Some(j) = &plan.journal {
        cmd.push_str(&format!(" --journal {}", guard::shell_word(j)));
    }
    cmd
}

/// The output directory; an existing run's directory is refused unless
/// resuming (the command layer checked the resumed plan matches).
fn out_dir(plan: &Plan, started: &str) -> Result<PathBuf> {
    let label = plan
        .variants
        .iter()
        .map(|v| v.label.as_str())
        .collect::<Vec<_>>()
        .join("-vs-");
    let out = match &plan.output.dir {
        Some(dir) => dir.clone(),
        None => unused(default_out(&label, started)),
    };
    if !plan.output.resume && holds_results(&out) {
        return Err(invalid(format!(
            "--out {0}: the directory already holds the results of a run; \
             continue it with `irqlab bench --resume {0}` or choose another --out",
            out.display()
        )));
    }
    Ok(out)
}

/// What this invocation created in the output directory, so that a run
/// that measured nothing leaves nothing behind (a retry with the same
/// `--out` is not blocked by a half-made run).
#[derive(Debug, Default)]
struct Created {
    /// Directories made, innermost first (the output directory and the
    /// ancestors that did not exist).
    dirs: Vec<PathBuf>,
    /// Files written (plan.json, env.json or env-resume-*.json).
    files: Vec<PathBuf>,
}

impl Created {
    /// Remove what was created, when `out` holds no trial: files, then
    /// the variants' empty result files and directories, then every
    /// directory made that is empty. Never removes anything it did not
    /// create or that holds data.
    fn discard(&self, out: &Path, plan: &Plan) -> bool {
        if !done_counts(out, plan).is_ok_and(|d| d.iter().all(|&n| n == 0)) {
            return false;
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        if !plan.output.resume {
            for v in &plan.variants {
                let dir = out.join(results::variant_dir(&v.label));
                for name in [results::TRIALS_FILE, "trials.csv"] {
                    let f = dir.join(name);
                    if std::fs::metadata(&f).is_ok_and(|m| m.is_file() && m.len() == 0) {
                        let _ = std::fs::remove_file(&f);
                    }
                }
                let _ = std::fs::remove_dir(&dir);
            }
        }
        for d in &self.dirs {
            let _ = std::fs::remove_dir(d);
        }
        true
    }
}

/// Create the output directory and prove it writable (plan.json), before
/// any host change.
fn create_out(plan: &Plan, out: &Path, started: &str) -> Result<Created> {
    let mut created = Created::default();
    let mut missing = Some(out);
    while let Some(d) = missing.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        created.dirs.push(d.to_path_buf());
        missing = d.parent();
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
    if !plan.output.resume {
        let path = out.join("plan.json");
        results::write_json(&path, &PlanFile::of(plan, started.into()))
            .with_context(|| format!("output directory {} is not writable", out.display()))?;
        created.files.push(path);
    }
    Ok(created)
}

fn report_outcomes(sink: &mut dyn Sink, what: &str, outcomes: &[Outcome]) {
    for o in outcomes {
        sink.note(&format!("irqlab: {what}: {o}"));
    }
}

fn journal_path(plan: &Plan) -> Result<PathBuf> {
    let journal = plan
        .journal
        .clone()
        .unwrap_or_else(|| guard::default_journal(&plan.root));
    if let Some(dir) = journal.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(journal)
}

/// One trial's sampling state.
struct Trial<'a> {
    live: &'a mut LiveSampler,
    sel: &'a Measured,
    boot_id: &'a str,
    /// `--trace`: read around the timed window.
    trace: Option<&'a mut LiveTrace>,
    /// Whether /proc/stat's irq and softirq times are measured.
    acct: &'a IrqTime,
    /// A note for every trial when the counters are not this kernel's.
    foreign: Option<&'a str>,
    stop: &'a Stop,
}

/// True when `e` says a workload thread could not stay on its CPU.
fn is_cpu_offline(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<PinError>().is_some())
}

/// What the frames of a closed window gave (taken at once: a frame
/// borrows the sampler).
struct Closed {
    duration_s: f64,
    sys: SystemMetrics,
    threads: Vec<Metric>,
    traced: Option<Interval>,
    interrupts: u64,
    own_ns: u64,
    /// `/proc/stat` softirq share per CPU (net workload's metrics).
    softirq_per_cpu: Vec<Metric>,
}

/// The runner's side of a trial's [`Window`]: the first frame when the
/// workload opens it, the last when it closes it. `--trace` marks after
/// the first frame and ticks before the last, both closing reads (every
/// kernel file read, whatever the time; see `LiveTrace::mark`), so a run
/// no program saw is said in the trial it came in. Both reads are out of
/// the time a workload counts itself (`Workload::run_window` runs it
/// after `open` returns and closes after it) and the traced interval is
/// timed by its own reads; the frames' interval holds them, as it holds
/// the frames' own reads, and its rates divide by its measured length.
/// (A command workload counts its window from the first frame's stamp,
/// so the mark's read falls within its `duration`.)
struct TrialWindow<'t, 'a> {
    trial: &'t mut Trial<'a>,
    own0: Option<u64>,
    closed: Option<Closed>,
}

impl Window for TrialWindow<'_, '_> {
    fn open(&mut self) -> Result<Instant> {
        let (frame, own0) = self.trial.sample()?;
        let stamped = frame.cur.mono_ns;
        self.own0 = Some(own0);
        // The first frame's own time (stamped before its files are read),
        // as an Instant: the closing frame is stamped no earlier than
        // this + the trial length, so no trial is shorter than asked.
        let since = Duration::from_nanos(crate::sampler::clock::mono_ns().saturating_sub(stamped));
        let now = Instant::now();
        let at = now.checked_sub(since).unwrap_or(now);
        if let Some(tw) = self.trial.trace.as_deref_mut() {
            tw.mark().context("reading the trace maps")?;
        }
        Ok(at)
    }

    fn close(&mut self) -> Result<()> {
        let Some(own0) = self.own0.take() else {
            anyhow::bail!("the trial's window was closed before it was opened");
        };
        let traced = match self.trial.trace.as_deref_mut() {
            Some(tw) => Some(tw.closing_tick().context("reading the trace maps")?),
            None => None,
        };
        let sel = self.trial.sel;
        let (frame, own1) = self.trial.sample()?;
        self.closed = Some(Closed {
            duration_s: frame.interval_s(),
            sys: system_metrics(frame.prev, frame.cur, sel),
            threads: thread_metrics(frame.threads),
            traced,
            interrupts: interrupts_counted(frame.prev, frame.cur),
            own_ns: own0.saturating_add(own1),
            softirq_per_cpu: softirq_per_cpu(frame.prev, frame.cur),
        });
        Ok(())
    }
}

/// `sys` with /proc/stat's irq and softirq shares judged (kept, left out
/// with a note, or replaced by the traced time).
fn judge_shares(acct: &IrqTime, c: &Closed, sys: &mut SystemMetrics) {
    let get = |n: &str| sys.metrics.iter().find(|m| m.name == n).map(|m| m.value);
    let stat = get(irqtime::STAT_SHARES[0]).zip(get(irqtime::STAT_SHARES[1]));
    let traced = c.traced.as_ref().map(time_shares);
    let (replace, note) = match irqtime::judge(acct, stat, c.interrupts, traced) {
        Shares::Keep => return,
        Shares::Drop(note) => (None, note),
        Shares::Traced(irq, soft, note) => (Some((irq, soft)), note),
    };
    sys.metrics
        .retain(|m| !irqtime::STAT_SHARES.contains(&m.name.as_str()));
    if let Some((irq, soft)) = replace {
        sys.metrics
            .push(Metric::new("irq_cpu_pct", irq, "%", Direction::Lower));
        sys.metrics
            .push(Metric::new("softirq_cpu_pct", soft, "%", Direction::Lower));
    }
    sys.notes.push(note);
}

/// The net workload's softirq split: softirq share per CPU and the share
/// of softirq time ksoftirqd ran, with a note saying how each is measured.
/// From /proc/stat (named `softirq_cpu_pct_cpuN` when the kernel accounts
/// IRQ time, `softirq_tick_pct_cpuN` when it is a tick sample, with
/// `ksoftirqd_softirq_share_pct` from the ksoftirqd threads' CPU, named
/// `ksoftirqd_softirq_share_tick_pct` over tick samples), and
/// exact from the softirq tracepoints when the trial was traced.
fn softirq_split(
    acct: &IrqTime,
    per_cpu: Vec<Metric>,
    threads: &[Metric],
    traced: Option<&Interval>,
) -> (Vec<Metric>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    if !per_cpu.is_empty() {
        let (tick, how) = match acct {
            IrqTime::Accounted { from } => (false, format!("measured (IRQ time accounting, {from})")),
            IrqTime::TickSampled { from } => (
                true,
                format!("tick samples (no IRQ time accounting, {from}): the share of timer ticks that landed in softirq"),
            ),
            IrqTime::Unknown => (
                true,
                "tick samples unless the kernel accounts IRQ time (its configuration is unreadable)"
                    .to_string(),
            ),
        };
        let share = super::metrics::ksoftirqd_share(&per_cpu, threads);
        out.extend(per_cpu.into_iter().map(|mut m| {
            if tick {
                m.name = m.name.replace(SOFTIRQ_PER_CPU, SOFTIRQ_TICKS_PER_CPU);
            }
            m
        }));
        let prefix = if tick {
            SOFTIRQ_TICKS_PER_CPU
        } else {
            SOFTIRQ_PER_CPU
        };
        notes.push(format!("{prefix}N: /proc/stat softirq time per CPU, {how}"));
        if let Some(mut s) = share {
            if tick {
                s.name = "ksoftirqd_softirq_share_tick_pct".into();
                notes.push(
                    "ksoftirqd_softirq_share_tick_pct: the ksoftirqd threads' run time \
                     (/proc/PID/stat, exact, including their time outside softirq handlers) over \
                     /proc/stat's tick-sampled softirq time summed over CPUs (which misses the \
                     softirqs run on the tick's own irq exit): an estimate biased upwards, not \
                     the share; `bench --trace` measures it (trace_ksoftirqd_softirq_share_pct)"
                        .to_string(),
                );
            } else {
                notes.push(
                    "ksoftirqd_softirq_share_pct: the ksoftirqd threads' utime+stime \
                     (/proc/PID/stat) over /proc/stat's softirq time summed over CPUs (both as above)"
                        .to_string(),
                );
            }
            out.push(s);
        }
    }
    if let Some(iv) = traced {
        for c in &iv.cpus {
            out.push(Metric::new(
                format!("trace_softirq_pct_cpu{}", c.cpu),
                c.softirq_pct,
                "%",
                Direction::Lower,
            ));
        }
        let total: u64 = iv.softirqs.iter().map(|s| s.total_ns).sum();
        let ksoft: u64 = iv.softirqs.iter().map(|s| s.ksoftirqd_ns).sum();
        if total > 0 {
            out.push(Metric::new(
                "trace_ksoftirqd_softirq_share_pct",
                100.0 * ksoft as f64 / total as f64,
                "%",
                Direction::None,
            ));
        }
        notes.push(
            "trace_softirq_pct_cpuN, trace_ksoftirqd_softirq_share_pct: exact, from the softirq \
             tracepoints (time in softirq per CPU; the part run by ksoftirqd, by the running task)"
                .to_string(),
        );
    }
    (out, notes)
}

impl Trial<'_> {
    /// The seam where a trial takes its samples: the next frame of the
    /// live sampler (the one way irqlab samples a machine) and what taking
    /// it cost this thread, ns.
    fn sample(&mut self) -> Result<(Frame<'_>, u64)> {
        let frame = self.live.next_frame()?;
        let own = frame.self_cost().cpu_ns;
        Ok((frame, own))
    }

    /// Run trial `n` (from 1) of `w` and build its record: a frame when
    /// the workload opens its window (its own interval is discarded) and
    /// one when it closes it, whose interval is the trial.
    fn run(
        &mut self,
        label: &str,
        n: u32,
        w: &mut dyn Workload,
        d: Duration,
    ) -> Result<TrialRecord> {
        let mut t = TrialRecord::new(label, n, self.boot_id, crate::timestamp::now_seconds());
        let stop = self.stop;
        let mut win = TrialWindow {
            trial: self,
            own0: None,
            closed: None,
        };
        let wl = w.run_window(d, &mut win, stop);
        let closed = win.closed;
        let mut c = match (closed, wl) {
            (Some(c), wl) => (c, wl),
            (None, Err(e)) => {
                return Err(e).with_context(|| {
                    format!("workload {} failed in trial {n} of {label}", w.name())
                })
            }
            (None, Ok(_)) => anyhow::bail!(
                "workload {} ended trial {n} of {label} without its timed window",
                w.name()
            ),
        };
        let (c, wl) = (&mut c.0, c.1);
        t.duration_s = c.duration_s;
        let mut sys = std::mem::take(&mut c.sys);
        judge_shares(self.acct, c, &mut sys);
        let (split, split_notes) = if w.name() == "net" {
            let per_cpu = std::mem::take(&mut c.softirq_per_cpu);
            softirq_split(self.acct, per_cpu, &c.threads, c.traced.as_ref())
        } else {
            (Vec::new(), Vec::new())
        };
        sys.notes.extend(split_notes);
        sys.metrics.extend(split);
        t.notes = sys.notes;
        if let Some(f) = self.foreign {
            t.notes.push(f.to_string());
        }
        bench_results::add(&mut t, sys.metrics);
        bench_results::add(&mut t, std::mem::take(&mut c.threads));
        if let Some(iv) = &c.traced {
            bench_results::add(&mut t, trace_metrics(iv));
        }
        match wl {
            Ok(m) => bench_results::add(&mut t, m),
            Err(e) if is_cpu_offline(&e) => {
                t.gap = Some(CPU_OFFLINE.into());
                t.notes.push(format!("{CPU_OFFLINE}: {e:#}"));
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("workload {} failed in trial {n} of {label}", w.name())
                })
            }
        }
        bench_results::add(
            &mut t,
            vec![Metric::new(
                "irqlab_sample_cpu_ns",
                c.own_ns as f64,
                "ns",
                Direction::Lower,
            )],
        );
        Ok(t)
    }
}

/// CPU % of ksoftirqd and irq threads over the trial (sum over threads,
/// in percent of one CPU).
fn thread_metrics(threads: &[ThreadCpu]) -> Vec<Metric> {
    let sum = |f: fn(&ThreadKind) -> bool| {
        threads
            .iter()
            .filter(|t| f(&t.kind))
            .map(|t| t.cpu_pct)
            .sum::<f64>()
            + 0.0 // an empty sum is -0.0; never record -0
    };
    vec![
        Metric::new(
            "ksoftirqd_cpu_pct",
            sum(|k| matches!(k, ThreadKind::Ksoftirqd { .. })),
            "%",
            Direction::Lower,
        ),
        Metric::new(
            "irq_threads_cpu_pct",
            sum(|k| matches!(k, ThreadKind::IrqThread { .. })),
            "%",
            Direction::Lower,
        ),
    ]
}

/// The headline metric of `v`: its workload's own, else the selected IRQs.
fn headline_of(v: &Variant, sel: &Measured) -> Option<String> {
    if let Some(h) = headline(v.kind) {
        return Some(h.to_string());
    }
    match sel.rows.as_slice() {
        [] => None,
        [one] => Some(format!("irq_{}_per_sec", super::metrics::slug(&one.label))),
        _ => Some(SELECTED_TOTAL.to_string()),
    }
}

/// Everything one run needs while trials go on.
struct Ctx<'a> {
    plan: &'a Plan,
    sel: &'a Measured,
    tracker: Tracker,
    sink: &'a mut dyn Sink,
    stop: &'a Stop,
    /// Variants whose host changes this process has reported (once each,
    /// at the first trial it runs, which a resumed run does not start at).
    reported: BTreeSet<String>,
}

/// Run one variant trial, applying and undoing its own preparation around it.
fn guarded_trial(
    cx: &mut Ctx,
    v: &Variant,
    slot: TrialSlot,
    w: &mut dyn Workload,
    t: &mut Trial,
) -> Result<TrialRecord> {
    let n = slot.trial + 1;
    prepared(cx, v, |cx| t.run(&v.label, n, w, cx.plan.duration))
}

/// Run `f` (a trial or a warm-up of variant `v`) with `v`'s own host
/// preparation applied, undone after it; a variant without one runs on
/// the host as the run prepared it.
fn prepared<T>(cx: &mut Ctx, v: &Variant, f: impl FnOnce(&mut Ctx) -> Result<T>) -> Result<T> {
    let Some(p) = &v.prepare else {
        return f(cx);
    };
    let fs = HostFs::new(&cx.plan.root);
    let mut g = SystemGuard::new(&fs, guard::variant_journal(&journal_path(cx.plan)?))?;
    let outcomes =
        prepare::apply(&mut g, p).with_context(|| format!("preparing variant {}", v.label))?;
    if cx.reported.insert(v.label.clone()) {
        report_outcomes(cx.sink, &format!("variant {}", v.label), &outcomes);
    }
    let out = f(cx);
    g.restore()?;
    out
}

/// Warm-up `i` of variant `v` (untimed), with its host preparation as
/// its trials have it; a signal or an offline CPU ends it without an error.
fn warm_up(cx: &mut Ctx, v: &Variant, w: &mut dyn Workload, i: u32) -> Result<()> {
    let duration = cx.plan.duration;
    let ran = prepared(cx, v, |cx| {
        Ok(w.run_window(duration, &mut NoWindow, cx.stop))
    })?;
    match ran {
        Err(e) if cx.stop.caught().is_none() && !is_cpu_offline(&e) => {
            Err(e).with_context(|| format!("warm-up {i} of variant {}", v.label))
        }
        _ => Ok(()),
    }
}

/// Wait `cooldown` between trials, or until a stop is asked for (the next
/// trial's check then ends the run with its summary).
fn cool_down(cooldown: Duration, stop: &Stop) {
    let until = Instant::now() + cooldown;
    while stop.caught().is_none() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

fn build_workloads(plan: &Plan, tracker: &Tracker) -> Result<Vec<Box<dyn Workload>>> {
    plan.variants
        .iter()
        .map(|v| {
            workloads::build(v.kind, &v.options, tracker)
                .map_err(|e| invalid(format!("variant {}: {e:#}", v.label)))
        })
        .collect()
}

fn setup_workloads(ws: &mut [Box<dyn Workload>], plan: &Plan) -> Result<()> {
    for (w, v) in ws.iter_mut().zip(&plan.variants) {
        w.setup()
            .with_context(|| format!("setting up workload {} of variant {}", w.name(), v.label))?;
    }
    Ok(())
}

fn teardown(ws: &mut [Box<dyn Workload>], sink: &mut dyn Sink) {
    for w in ws {
        if let Err(e) = w.teardown() {
            sink.note(&format!(
                "irqlab: tearing down workload {}: {e:#}",
                w.name()
            ));
        }
    }
}

fn done_counts(out: &Path, plan: &Plan) -> Result<Vec<u32>> {
    plan.variants
        .iter()
        .map(|v| {
            let dir = out.join(results::variant_dir(&v.label));
            Ok(results::read_trials_dir(&dir)?.len() as u32)
        })
        .collect()
}

/// Everything checked before the first file or host change.
struct Checked {
    live: LiveSampler,
    sel: Measured,
    out: PathBuf,
    /// Whether /proc/stat's irq and softirq times are measured.
    acct: IrqTime,
    /// The note of a `--root` that is not the running kernel.
    foreign: Option<String>,
    /// The environment at the start (`env.json`, `env-resume-*.json`).
    environment: env_json::BenchEnvironment,
}

/// The live sampler of a bench run: every row of the whole
/// `/proc/interrupts` (the metrics need totals and any selected row), so no
/// per-IRQ strategy and nothing to re-resolve between the two samples.
fn live_plan(plan: &Plan) -> LivePlan {
    LivePlan {
        root: plan.root.clone(),
        filter: Filter::default(),
        strategy: Choice::ProcInterrupts,
    }
}

/// What `--root TREE` means for a bench: host preparation, the journal,
/// the IRQ selection and every counter come from TREE, while the workload
/// runs on this machine. When TREE is this running kernel's view (the
/// same boot id, e.g. the host's `/proc` mounted in a container) the
/// figures are the workload's; otherwise (a fake or captured tree) they
/// are TREE's, and this note says so in every trial, `env.json` and the
/// summary.
fn foreign_root(plan: &Plan) -> Option<String> {
    if plan.root == Path::new("/") {
        return None;
    }
    let tree = HostFs::new(&plan.root).read_attr(irqlab_core::paths::BOOT_ID);
    let here = HostFs::new("/").read_attr(irqlab_core::paths::BOOT_ID);
    if tree.is_some() && tree == here {
        return None;
    }
    let show = |b: Option<String>| b.unwrap_or_else(|| "unreadable".into());
    Some(format!(
        "--root {}: the counters come from that tree (boot id {}), the workload runs on this \
         kernel (boot id {}): every interrupt, softirq, thread and CPU figure is the tree's, \
         not the workload's (only the workload's own figures and irqlab_sample_cpu_ns are \
         measured here); --root with a live workload is for testing irqlab",
        plan.root.display(),
        show(tree),
        show(here)
    ))
}

fn preflight(plan: &Plan, started: &str) -> Result<Checked> {
    plan.check()?;
    let fs = HostFs::new(&plan.root);
    let live = LiveSampler::open(&live_plan(plan))?;
    let Some(irqs) = &live.latest().interrupts else {
        anyhow::bail!(
            "bench needs {}",
            fs.path(irqlab_core::paths::PROC_INTERRUPTS).display()
        )
    };
    let sel = resolve_measured(plan, irqs)?;
    guard::require_root_for(&plan.root, &root_flags(plan))
        .map_err(|e| invalid(format!("{e:#}")))?;
    prepare::validate(&fs, &plan.prepare).map_err(|e| invalid(format!("{e:#}")))?;
    for v in &plan.variants {
        if let Some(p) = &v.prepare {
            prepare::validate(&fs, p)
                .map_err(|e| invalid(format!("variant {}: {e:#}", v.label)))?;
        }
    }
    build_workloads(plan, &Tracker::none())?;
    if plan.trace {
        check_tracing(&fs)?;
    }
    let out = out_dir(plan, started)?;
    let environment = env_json::collect(&fs, &sel, started.to_string());
    if plan.output.resume {
        let has_trials = done_counts(&out, plan)?.iter().any(|&n| n > 0);
        env_json::check_resume(&out, &environment, &plan.argv, has_trials)?;
    }
    let release = crate::env::kernel_release(&fs);
    let acct = irqtime::detect(&fs, release.as_deref());
    Ok(Checked {
        live,
        sel,
        out,
        acct,
        foreign: foreign_root(plan),
        environment,
    })
}

/// The flags of `plan` that need root (host changes).
fn root_flags(plan: &Plan) -> Vec<&'static str> {
    let preps = std::iter::once(&plan.prepare)
        .chain(plan.variants.iter().filter_map(|v| v.prepare.as_ref()));
    let mut flags = Vec::new();
    for p in preps {
        let asked = [
            ("--governor", p.governor.is_some()),
            ("--pin-thread", !p.pin_thread.is_empty()),
            ("--irq-affinity", !p.irq_affinity.is_empty()),
            ("--sysctl", !p.sysctl.is_empty()),
        ];
        flags.extend(asked.iter().filter(|(_, on)| *on).map(|(f, _)| *f));
    }
    if plan.trace {
        flags.push("--trace");
    }
    for v in plan.variants.iter().filter_map(|v| v.options.net_path) {
        flags.extend(v.loss.map(|_| "--loss"));
        flags.extend(v.rate.map(|_| "--rate"));
    }
    flags.sort_unstable();
    flags.dedup();
    flags
}

/// `--resume` of a run whose every trial finished: nothing to run.
/// Writes `summary.json` again only when it is missing or says the run
/// was interrupted, keeping the notes the earlier summary holds.
fn finished_already(plan: &Plan) -> Result<Option<Finished>> {
    let Some(out) = plan.output.dir.as_deref().filter(|_| plan.output.resume) else {
        return Ok(None);
    };
    if !done_counts(out, plan)?.iter().all(|&n| n >= plan.trials) {
        return Ok(None);
    }
    let summary = out.join("summary.json");
    // unreadable or not JSON: written again; a key twice: refused
    let old = crate::compare::input_json::read_record(&summary)?;
    let stale = old
        .as_ref()
        .is_none_or(|v| v["complete"] != serde_json::Value::Bool(true));
    let notes = old.as_ref().map(earlier_notes).unwrap_or_default();
    let mut f = summarize_run(plan, out, None, notes)?;
    if stale {
        results::write_json(&summary, &f.summary)?;
    }
    f.nothing_to_do = true;
    Ok(Some(f))
}

/// How every `--target-effect` note begins (`target_effect_notes`).
const TARGET_EFFECT_PREFIX: &str = "target effect ";

/// The notes an earlier `summary.json` holds (IRQ time accounting, other
/// tracers), without the target-effect notes `summarize_run` adds again.
fn earlier_notes(summary: &serde_json::Value) -> Vec<String> {
    let again = TARGET_EFFECT_PREFIX;
    summary["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .filter(|n| !n.starts_with(again) && !n.ends_with(GAP_NOTE_END))
        .map(str::to_string)
        .collect()
}

/// The whole run; see the module docs. `stop` (its caught signal) says
/// whether SIGINT or SIGTERM came: the workloads end the trial under way
/// (they hold the same flag), which is discarded, the host restored, and
/// the summary of the finished trials written (marked interrupted).
pub fn run(plan: &Plan, sink: &mut dyn Sink, stop: &Stop) -> Result<Finished> {
    if let Some(f) = finished_already(plan)? {
        return Ok(f);
    }
    let started = crate::timestamp::now_seconds();
    let checked = preflight(plan, &started)?;
    // one run that changes the host at a time; a refused run creates nothing
    let me = guard::Holder::me("bench", Some(&checked.out));
    let journal = journal_path(plan)?;
    let _lock = RunLock::acquire(&plan.root, me, &journal, Stale::TakeIfJournalEmpty)?;
    let out = checked.out.clone();
    let mut created = create_out(plan, &out, &started)?;
    let res = run_created(plan, sink, stop, checked, &started, &mut created);
    let nothing = match &res {
        Err(_) => true,
        Ok(f) => f.summary.finished_trials == 0 && f.interrupted.is_some(),
    };
    if nothing && created.discard(&out, plan) && !created.files.is_empty() {
        sink.note(&format!(
            "irqlab: nothing was measured: removed what this run wrote to {}",
            out.display()
        ));
    }
    res
}

/// The run once its output directory exists.
fn run_created(
    plan: &Plan,
    sink: &mut dyn Sink,
    stop: &Stop,
    checked: Checked,
    started: &str,
    created: &mut Created,
) -> Result<Finished> {
    let Checked {
        mut live,
        sel,
        out,
        acct,
        foreign,
        mut environment,
    } = checked;
    let fs = HostFs::new(&plan.root);
    environment.irq_time_accounting = acct.describe();
    if let Some(f) = &foreign {
        environment.env.warnings.push(f.clone());
    }
    let env_name = if plan.output.resume {
        format!("env-resume-{}.json", started.replace(':', ""))
    } else {
        "env.json".into()
    };
    let env_path = out.join(env_name);
    created.files.push(env_path.clone());
    results::write_json(&env_path, &environment)?;
    for w in &environment.env.warnings {
        sink.note(&format!("irqlab: warning: {w}"));
    }
    sink.note(&format!(
        "irqlab: results in {} (if interrupted: {})",
        out.display(),
        resume_command(plan, &out)
    ));
    let mut guard = SystemGuard::new(&fs, journal_path(plan)?)?;
    let outcomes = prepare::apply(&mut guard, &plan.prepare)?;
    report_outcomes(sink, "prepare", &outcomes);
    let mut tracing = start_tracing(plan, &fs, &mut guard, sink)?;
    let tracker = guard.tracker();
    let mut ws = build_workloads(plan, &tracker)?;
    let boot_id = environment.env.boot_id.clone();
    let mut cx = Ctx {
        plan,
        sel: &sel,
        tracker,
        sink,
        stop,
        reported: BTreeSet::new(),
    };
    let res = match setup_workloads(&mut ws, plan) {
        Ok(()) => trials(
            &mut cx,
            &mut ws,
            Trial {
                live: &mut live,
                sel: &sel,
                boot_id: &boot_id,
                trace: tracing.as_mut(),
                acct: &acct,
                foreign: foreign.as_deref(),
                stop,
            },
            &out,
        ),
        Err(e) => Err(e),
    };
    teardown(&mut ws, cx.sink);
    drop(ws);
    drop(tracing); // detach before the guard unmounts tracefs
    drop(cx.tracker);
    guard.restore()?;
    // the signal thread waits for every guard to be gone (guard::defer_signals)
    drop(guard);
    let signal = res?;
    let mut notes = Vec::new();
    if !matches!(acct, IrqTime::Accounted { .. }) {
        let what = if plan.trace {
            "taken from the traced time"
        } else {
            "left out when they are tick samples (bench --trace measures them)"
        };
        notes.push(format!(
            "irq_cpu_pct, softirq_cpu_pct: {what}; IRQ time accounting {}",
            acct.describe()
        ));
    }
    notes.extend(foreign);
    let f = summarize_run(plan, &out, signal, notes)?;
    if f.summary.finished_trials > 0 || signal.is_none() {
        results::write_json(&out.join("summary.json"), &f.summary)?;
    }
    Ok(f)
}

/// The trials; returns the signal that ended them early, if any.
fn trials(
    cx: &mut Ctx,
    ws: &mut [Box<dyn Workload>],
    mut t: Trial,
    out: &Path,
) -> Result<Option<i32>> {
    let plan = cx.plan;
    let mut writers: Vec<TrialWriter> = plan
        .variants
        .iter()
        .map(|v| TrialWriter::open(out, &v.label))
        .collect::<Result<_>>()?;
    for (v, w) in plan.variants.iter().zip(ws.iter_mut()) {
        for i in 1..=plan.warmup {
            if let Some(sig) = cx.stop.caught() {
                cx.sink.finish();
                return Ok(Some(sig));
            }
            warm_up(cx, v, w.as_mut(), i)?;
        }
    }
    let slots = schedule(
        plan.variants.len(),
        plan.trials,
        plan.order,
        plan.seed,
        &done_counts(out, plan)?,
    );
    let heads: Vec<Option<String>> = plan
        .variants
        .iter()
        .map(|v| headline_of(v, cx.sel))
        .collect();
    for (i, slot) in slots.iter().enumerate() {
        let (Some(v), Some(w), Some(wr)) = (
            plan.variants.get(slot.variant),
            ws.get_mut(slot.variant),
            writers.get_mut(slot.variant),
        ) else {
            continue;
        };
        if let Some(sig) = cx.stop.caught() {
            cx.sink.finish();
            return Ok(Some(sig));
        }
        let rec = guarded_trial(cx, v, *slot, w.as_mut(), &mut t);
        if let Some(sig) = cx.stop.caught() {
            // cut short by the signal: not a measurement
            cx.sink.finish();
            cx.sink.note(&format!(
                "irqlab: {}: trial {} of {} discarded (cut short)",
                signal_name(sig),
                slot.trial + 1,
                v.label
            ));
            return Ok(Some(sig));
        }
        let mut rec = rec?;
        let head = heads.get(slot.variant).and_then(|h| h.as_deref());
        // compare leads its summary with the workload's headline metric
        if let Some(h) = head {
            rec.mark_headline(h);
        }
        wr.write(&rec)?;
        cx.sink.trial(i + 1, slots.len(), &rec, head);
        // between trials: after the last one nothing is measured
        if i + 1 < slots.len() {
            cool_down(plan.cooldown, cx.stop);
        }
    }
    cx.sink.finish();
    Ok(None)
}

/// The summary of what `out` holds: per variant and metric, the run's
/// state (`signal`: it ended early), `notes` and data-quality warnings.
fn summarize_run(
    plan: &Plan,
    out: &Path,
    signal: Option<i32>,
    notes: Vec<String>,
) -> Result<Finished> {
    let mut all = Vec::new();
    let mut trials_per_variant = Vec::with_capacity(plan.variants.len());
    for v in &plan.variants {
        let done = results::read_trials_dir(&out.join(results::variant_dir(&v.label)))?;
        trials_per_variant.push((v.label.clone(), done.len()));
        all.extend(done);
    }
    let heads: Vec<String> = plan
        .variants
        .iter()
        .filter_map(|v| headline(v.kind).map(str::to_string))
        .collect();
    let variants = bench_results::summarize(&all);
    let judged = |name: &str, v: &results::Value| {
        heads.iter().any(|h| h == name)
            || (v.direction != Direction::None
                && variants
                    .values()
                    .any(|m| m.get(name).is_some_and(|s| super::summary::shown(name, s))))
    };
    let warnings = bench_results::warnings(&all, judged);
    let mut notes = notes;
    notes.extend(gap_notes(&all));
    if let Some(effect) = plan.target_effect_pct {
        notes.extend(target_effect_notes(&all, &variants, effect));
    }
    let planned = plan.variants.len() * plan.trials as usize;
    let finished = all.len();
    let summary = SummaryFile {
        schema: bench_results::SUMMARY_SCHEMA,
        complete: finished >= planned,
        interrupted: signal.map(signal_name),
        finished_trials: finished,
        planned_trials: planned,
        notes,
        warnings,
        variants,
    };
    Ok(Finished {
        out: out.to_path_buf(),
        summary,
        variants: plan.variants.len(),
        trials_per_variant,
        interrupted: signal,
        nothing_to_do: false,
    })
}

/// How every [`gap_notes`] note ends (they are made again from the
/// trials, not kept from an earlier summary).
const GAP_NOTE_END: &str = "(a gap: CPU hotplug, IRQ reuse or a counter that went backwards; \
     each trial's notes say which)";

/// A note per variant and metric that some trials recorded no value for
/// (a gap: CPU hotplug, IRQ reuse, a counter that went backwards; the
/// trial's note `<metric>: no value (…)` says which): the summary lists
/// such a metric with fewer trials, or, when every trial had the gap, not
/// at all, which without this note would be said nowhere but in the
/// trials.
fn gap_notes(all: &[TrialRecord]) -> Vec<String> {
    let mut counts: Vec<(&str, &str, usize)> = Vec::new();
    let mut totals: Vec<(&str, usize)> = Vec::new();
    for t in all {
        match totals.iter_mut().find(|(v, _)| *v == t.variant) {
            Some((_, n)) => *n += 1,
            None => totals.push((&t.variant, 1)),
        }
        for n in &t.notes {
            let Some(metric) = super::metrics::gap_note_metric(n) else {
                continue;
            };
            match counts
                .iter_mut()
                .find(|(v, m, _)| *v == t.variant && *m == metric)
            {
                Some((_, _, k)) => *k += 1,
                None => counts.push((&t.variant, metric, 1)),
            }
        }
    }
    counts
        .into_iter()
        .map(|(v, m, k)| {
            let n = totals.iter().find(|(x, _)| *x == v).map_or(k, |(_, n)| *n);
            format!("{v} {m}: no value in {k} of {n} trials {GAP_NOTE_END}")
        })
        .collect()
}

/// The `--target-effect` note of each variant's headline metric (the one
/// its trials mark).
fn target_effect_notes(
    all: &[TrialRecord],
    variants: &bench_results::BenchSummary,
    effect: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    for (variant, metrics) in variants {
        let head = all.iter().filter(|t| &t.variant == variant).find_map(|t| {
            t.metrics
                .iter()
                .find(|(_, v)| v.headline)
                .map(|(n, _)| n.clone())
        });
        let Some(name) = head else {
            out.push(format!(
                "target effect {effect} %: {variant} has no headline metric to plan for"
            ));
            continue;
        };
        let n = all.iter().filter(|t| &t.variant == variant).count();
        let cv = metrics.get(&name).and_then(|s| s.cv_pct);
        out.push(bench_results::target_effect_note(
            variant, &name, cv, n, effect,
        ));
    }
    out
}

/// `--trace` before anything is written: the feature is built in, and
/// root, tracefs and BTF are there (`trace::preflight`).
fn check_tracing(fs: &HostFs) -> Result<()> {
    if !cfg!(feature = "trace") {
        return Err(invalid(format!("--trace: {}", crate::trace::NOT_BUILT)));
    }
    crate::trace::preflight::check(fs, nix::unistd::geteuid().is_root())
        .map(|_| ())
        .map_err(|e| invalid(format!("--trace: {e:#}")))
}

/// Attach the tracing programs for the whole run (`--trace`), inside the
/// run's guard.
#[cfg(feature = "trace")]
fn start_tracing(
    plan: &Plan,
    fs: &HostFs,
    guard: &mut SystemGuard,
    sink: &mut dyn Sink,
) -> Result<Option<LiveTrace>> {
    if !plan.trace {
        return Ok(None);
    }
    let (w, notes) =
        LiveTrace::start_in(fs, guard).context("--trace: attaching the tracing programs")?;
    for n in notes {
        sink.note(&format!("irqlab: trace: {n}"));
    }
    Ok(Some(w))
}

#[cfg(not(feature = "trace"))]
fn start_tracing(
    plan: &Plan,
    _: &HostFs,
    _: &mut SystemGuard,
    _: &mut dyn Sink,
) -> Result<Option<LiveTrace>> {
    if plan.trace {
        anyhow::bail!("--trace: {}", crate::trace::NOT_BUILT);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trials_with_no_value_for_a_metric_are_counted_in_a_note() {
        let trial = |v: &str, n: u32, notes: &[&str]| {
            let mut t = TrialRecord::new(v, n, "b", String::new());
            t.notes = notes.iter().map(|s| s.to_string()).collect();
            t
        };
        let gap = "irq_loc_per_sec: no value (Reset, Reset)";
        let all = [
            trial("tip", 1, &[gap, "other note"]),
            trial("tip", 2, &[gap]),
            trial("patch", 1, &[]),
            trial("patch", 2, &[gap]),
            trial("patch", 3, &[]),
        ];
        assert_eq!(
            gap_notes(&all),
            [
                "tip irq_loc_per_sec: no value in 2 of 2 trials (a gap: CPU hotplug, IRQ \
                 reuse or a counter that went backwards; each trial's notes say which)",
                "patch irq_loc_per_sec: no value in 1 of 3 trials (a gap: CPU hotplug, IRQ \
                 reuse or a counter that went backwards; each trial's notes say which)"
            ]
        );
        assert!(gap_notes(&all[2..3]).is_empty());
        // made again from the trials, not kept from an earlier summary
        let earlier = serde_json::json!({"notes": gap_notes(&all).into_iter()
            .chain(["IRQ time accounting on".to_string()]).collect::<Vec<_>>()});
        assert_eq!(earlier_notes(&earlier), ["IRQ time accounting on"]);
    }

    /// Runs started in the same second get `…Z`, `…Z-2`, `…Z-3`.
    #[test]
    fn a_default_folder_that_is_taken_gets_a_suffix() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("20261205T224837Z");
        assert_eq!(unused(base.clone()), base);
        std::fs::create_dir(&base).unwrap();
        let second = unused(base.clone());
        assert_eq!(second, tmp.path().join("20261205T224837Z-2"));
        std::fs::create_dir(&second).unwrap();
        assert_eq!(unused(base), tmp.path().join("20261205T224837Z-3"));
    }

    /// `--trace`'s reads around a trial's window are both closing: a run
    /// no program saw is said in the trial it came in.
    #[test]
    fn a_trials_trace_mark_and_tick_are_closing() {
        use crate::trace::interval::IntervalView;
        use crate::trace::live_trace::tests::Closing;
        let d = crate::host::small_test_tree();
        let mut live = LiveSampler::open(&LivePlan {
            root: d.path().to_path_buf(),
            filter: Filter::default(),
            strategy: Choice::default(),
        })
        .unwrap();
        let log = Closing::default();
        let mut tw = LiveTrace::new(Box::new(log.clone()), IntervalView::default()).unwrap();
        let stop = Stop::unhooked();
        let mut trial = Trial {
            live: &mut live,
            sel: &Measured { rows: Vec::new() },
            boot_id: "b",
            trace: Some(&mut tw),
            acct: &IrqTime::Unknown,
            foreign: None,
            stop: &stop,
        };
        for _ in 0..2 {
            let mut win = TrialWindow {
                trial: &mut trial,
                own0: None,
                closed: None,
            };
            win.open().unwrap();
            win.close().unwrap();
            assert!(win.closed.is_some_and(|c| c.traced.is_some()));
        }
        assert_eq!(
            log.reads(),
            [false, true, true, true, true],
            "baseline, 2 trials"
        );
    }
}
