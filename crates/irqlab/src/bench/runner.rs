//! The bench trial loop, driven by a plain [`Plan`]: check everything
//! (plan, IRQ selection, host preparation, workloads, output directory)
//! before the first file or host change, prepare the host through the
//! SystemGuard, set up each variant's workload, run warm-ups, then the
//! scheduled trials — one frame of the run's [`LiveSampler`] just before
//! and one just after each (the one seam: `Trial::sample`; the whole
//! `/proc/interrupts`, kept-open files, thread CPU, self cost and clocks
//! are the sampler's) — and append every finished trial at once. Trials are numbered from 1 everywhere (records, progress,
//! errors). A trial disturbed by CPU hotplug is kept, marked with the gap
//! `cpu_offline`, and the run goes on. The guard restores the host, kills
//! the process groups and removes the temporary files it tracks on
//! success, error, panic and signals.
//!
//! Writes no terminal output itself: progress and notes go to a [`Sink`];
//! the summary is returned to the caller.

use super::metrics::{system_metrics, SELECTED_TOTAL};
use super::plan::{
    default_selectors, headline, invalid, schedule, Plan, PlanFile, TrialSlot, Variant,
};
use super::prepare::{self, Outcome};
use super::results::{self as bench_results, BenchSummary};
use super::select::{self, Selection};
use super::tracing::{trace_metrics, TraceWindow};
use super::workload::Workload;
use super::workloads::{self, placement::PinError};
use super::{env, metric::Direction, metric::Metric};
use crate::guard::{self, RunLock, Stale, SystemGuard, Tracker};
use crate::host::HostFs;
use crate::report::Filter;
use crate::results::{self, TrialRecord, TrialWriter};
use crate::sampler::strategy::Choice;
use crate::sampler::{Frame, LivePlan, LiveSampler};
use crate::threads::{ThreadCpu, ThreadKind};
use anyhow::{Context, Result};
use irqlab_core::Interrupts;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    pub summary: BenchSummary,
    pub variants: usize,
}

/// IRQs to measure: `--irq` (strict) or each variant's defaults (lenient).
fn selection(plan: &Plan, m: &Interrupts) -> Result<Selection> {
    if !plan.irq.is_empty() {
        return select::resolve(&plan.irq, m).map_err(|e| invalid(format!("{e:#}")));
    }
    let mut rows = Vec::new();
    for v in &plan.variants {
        for sel in default_selectors(v.kind) {
            if let Ok(s) = select::resolve(&[sel.to_string()], m) {
                rows.extend(
                    s.rows
                        .into_iter()
                        .filter(|r| !rows.iter().any(|x: &select::Selected| x.label == r.label))
                        .collect::<Vec<_>>(),
                );
            }
        }
    }
    Ok(Selection { rows })
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

/// The output directory; an existing run's directory is refused unless
/// resuming (the command layer checked the resumed plan matches).
fn out_dir(plan: &Plan, started: &str) -> Result<PathBuf> {
    let label = plan
        .variants
        .iter()
        .map(|v| v.label.as_str())
        .collect::<Vec<_>>()
        .join("-vs-");
    let out = plan
        .output
        .dir
        .clone()
        .unwrap_or_else(|| default_out(&label, started));
    if !plan.output.resume && holds_results(&out) {
        return Err(invalid(format!(
            "--out {0}: the directory already holds the results of a run; \
             continue it with `irqlab bench --resume {0}` or choose another --out",
            out.display()
        )));
    }
    Ok(out)
}

/// Create the output directory and prove it writable (plan.json), before
/// any host change.
fn create_out(plan: &Plan, out: &Path, started: &str) -> Result<()> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
    if !plan.output.resume {
        results::write_json(&out.join("plan.json"), &PlanFile::of(plan, started.into()))
            .with_context(|| format!("output directory {} is not writable", out.display()))?;
    }
    Ok(())
}

fn report_outcomes(sink: &mut dyn Sink, what: &str, outcomes: &[Outcome]) {
    for o in outcomes {
        sink.note(&format!("irqlab: {what}: {o}"));
    }
}

fn journal_path(plan: &Plan, suffix: &str) -> Result<PathBuf> {
    let base = plan
        .journal
        .clone()
        .unwrap_or_else(|| guard::default_journal(&plan.root));
    if let Some(dir) = base.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut name = base
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    Ok(base.with_file_name(name))
}

/// One trial's sampling state.
struct Trial<'a> {
    live: &'a mut LiveSampler,
    sel: &'a Selection,
    boot_id: &'a str,
    /// `--trace`: read around the timed window.
    trace: Option<&'a mut (dyn TraceWindow + 'static)>,
}

/// True when `e` says a workload thread could not stay on its CPU.
fn is_cpu_offline(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<PinError>().is_some())
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

    /// Run trial `n` (from 1) of `w` and build its record: a frame just
    /// before the timed window (its own interval is discarded) and one just
    /// after it, whose interval is the trial.
    fn run(
        &mut self,
        label: &str,
        n: u32,
        w: &mut dyn Workload,
        d: Duration,
    ) -> Result<TrialRecord> {
        let mut t = TrialRecord::new(label, n, self.boot_id, crate::timestamp::now_seconds());
        let (_, own0) = self.sample()?;
        if let Some(tw) = self.trace.as_deref_mut() {
            tw.mark().context("reading the trace maps")?;
        }
        let wl = w.run(d);
        let traced = match self.trace.as_deref_mut() {
            Some(tw) => Some(tw.interval().context("reading the trace maps")?),
            None => None,
        };
        let sel = self.sel;
        let (frame, own1) = self.sample()?;
        t.duration_s = frame.interval_s();
        let sys = system_metrics(frame.prev, frame.cur, sel);
        t.notes = sys.notes;
        bench_results::add(&mut t, sys.metrics);
        bench_results::add(&mut t, thread_metrics(frame.threads));
        if let Some(iv) = &traced {
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
                own0.saturating_add(own1) as f64,
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
fn headline_of(v: &Variant, sel: &Selection) -> Option<String> {
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
    sel: &'a Selection,
    tracker: Tracker,
    sink: &'a mut dyn Sink,
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
    let Some(p) = &v.prepare else {
        return t.run(&v.label, n, w, cx.plan.duration);
    };
    let fs = HostFs::new(&cx.plan.root);
    let mut g = SystemGuard::new(&fs, journal_path(cx.plan, ".variant")?)?;
    let outcomes =
        prepare::apply(&mut g, p).with_context(|| format!("preparing variant {}", v.label))?;
    if slot.trial == 0 {
        report_outcomes(cx.sink, &format!("variant {}", v.label), &outcomes);
    }
    let rec = t.run(&v.label, n, w, cx.plan.duration);
    g.restore()?;
    rec
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
    sel: Selection,
    out: PathBuf,
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

fn preflight(plan: &Plan, started: &str) -> Result<Checked> {
    plan.check()?;
    let fs = HostFs::new(&plan.root);
    let live = LiveSampler::open(&live_plan(plan))?;
    let Some(irqs) = &live.latest().interrupts else {
        anyhow::bail!("bench needs {}", fs.path("proc/interrupts").display())
    };
    let sel = selection(plan, irqs)?;
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
    Ok(Checked { live, sel, out })
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
    flags.sort_unstable();
    flags.dedup();
    flags
}

/// The whole run; see the module docs.
pub fn run(plan: &Plan, sink: &mut dyn Sink) -> Result<Finished> {
    let started = crate::timestamp::now_seconds();
    let Checked { mut live, sel, out } = preflight(plan, &started)?;
    // one run that changes the host at a time; a refused run creates nothing
    let me = guard::Holder::me("bench", Some(&out));
    let journal = journal_path(plan, "")?;
    let _lock = RunLock::acquire(&plan.root, me, &journal, Stale::TakeIfJournalEmpty)?;
    create_out(plan, &out, &started)?;
    let fs = HostFs::new(&plan.root);
    let environment = env::collect(&fs, &sel, started.clone());
    let env_name = if plan.output.resume {
        format!("env-resume-{}.json", started.replace(':', ""))
    } else {
        "env.json".into()
    };
    results::write_json(&out.join(env_name), &environment)?;
    for w in &environment.env.warnings {
        sink.note(&format!("irqlab: warning: {w}"));
    }
    sink.note(&format!(
        "irqlab: results in {0} (if interrupted: irqlab bench --resume {0})",
        out.display()
    ));
    let mut guard = SystemGuard::new(&fs, journal_path(plan, "")?)?;
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
    };
    let res = match setup_workloads(&mut ws, plan) {
        Ok(()) => trials(
            &mut cx,
            &mut ws,
            &mut live,
            tracing.as_deref_mut(),
            &boot_id,
            &out,
        ),
        Err(e) => Err(e),
    };
    teardown(&mut ws, cx.sink);
    drop(ws);
    drop(tracing); // detach before the guard unmounts tracefs
    drop(cx.tracker);
    guard.restore()?;
    res?;
    finish(plan, &out)
}

fn trials<'a>(
    cx: &mut Ctx,
    ws: &mut [Box<dyn Workload>],
    live: &'a mut LiveSampler,
    trace: Option<&'a mut (dyn TraceWindow + 'static)>,
    boot_id: &str,
    out: &Path,
) -> Result<()> {
    let plan = cx.plan;
    let mut writers: Vec<TrialWriter> = plan
        .variants
        .iter()
        .map(|v| TrialWriter::open(out, &v.label))
        .collect::<Result<_>>()?;
    for (v, w) in plan.variants.iter().zip(ws.iter_mut()) {
        for i in 1..=plan.warmup {
            if let Err(e) = w.run(plan.duration) {
                if !is_cpu_offline(&e) {
                    return Err(e).with_context(|| format!("warm-up {i} of variant {}", v.label));
                }
            }
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
    let mut t = Trial {
        live,
        sel: cx.sel,
        boot_id,
        trace,
    };
    for (i, slot) in slots.iter().enumerate() {
        let (Some(v), Some(w), Some(wr)) = (
            plan.variants.get(slot.variant),
            ws.get_mut(slot.variant),
            writers.get_mut(slot.variant),
        ) else {
            continue;
        };
        let rec = guarded_trial(cx, v, *slot, w.as_mut(), &mut t)?;
        wr.write(&rec)?;
        let head = heads.get(slot.variant).and_then(|h| h.as_deref());
        cx.sink.trial(i + 1, slots.len(), &rec, head);
        if !plan.cooldown.is_zero() {
            std::thread::sleep(plan.cooldown);
        }
    }
    cx.sink.finish();
    Ok(())
}

fn finish(plan: &Plan, out: &Path) -> Result<Finished> {
    let mut all = Vec::new();
    for v in &plan.variants {
        all.extend(results::read_trials_dir(
            &out.join(results::variant_dir(&v.label)),
        )?);
    }
    let summary = bench_results::summarize(&all);
    results::write_json(&out.join("summary.json"), &summary)?;
    Ok(Finished {
        out: out.to_path_buf(),
        summary,
        variants: plan.variants.len(),
    })
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
) -> Result<Option<Box<dyn TraceWindow>>> {
    if !plan.trace {
        return Ok(None);
    }
    let (w, notes) = crate::trace::window::SessionWindow::start(fs, guard)
        .context("--trace: attaching the tracing programs")?;
    for n in notes {
        sink.note(&format!("irqlab: trace: {n}"));
    }
    Ok(Some(Box::new(w)))
}

#[cfg(not(feature = "trace"))]
fn start_tracing(
    plan: &Plan,
    _: &HostFs,
    _: &mut SystemGuard,
    _: &mut dyn Sink,
) -> Result<Option<Box<dyn TraceWindow>>> {
    if plan.trace {
        anyhow::bail!("--trace: {}", crate::trace::NOT_BUILT);
    }
    Ok(None)
}
