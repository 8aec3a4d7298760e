//! The bench trial loop: resolve IRQs and the output directory before any
//! host change, prepare the host through the SystemGuard, set up each
//! variant's workload, run warm-ups, then the scheduled trials — sampling
//! the statistics files just before and after each — and append every
//! finished trial at once. The guard restores the host on success, error,
//! panic and signals.

use super::metrics::system_metrics;
use super::plan::{default_selectors, schedule, Slot};
use super::prepare::{self, Outcome};
use super::results::{self, TrialRecord, TrialWriter};
use super::select::{self, Selection};
use super::workload::Workload;
use super::{env, metric::Direction, metric::Metric, workloads};
use crate::cmd::bench::{Args, SummaryFormat, Variant};
use crate::guard::{self, RunLock, Stale, SystemGuard};
use crate::host::HostFs;
use crate::sampler::clock::thread_cpu_ns;
use crate::sampler::{Sampler, Source};
use crate::threads::{ThreadCpu, ThreadKind, Threads};
use anyhow::{bail, Context, Result};
use irqlab_core::{Interrupts, Snapshot};
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// `plan.json`: what `--resume` needs to continue a run.
#[derive(Debug, Serialize, Deserialize)]
pub struct PlanFile {
    pub argv: Vec<String>,
    pub variants: Vec<String>,
    pub trials: u32,
    pub created_at: String,
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// IRQs to measure: `--irq` (strict) or each variant's defaults (lenient).
fn selection(a: &Args, variants: &[Variant], m: &Interrupts) -> Result<Selection> {
    if !a.irq.is_empty() {
        return select::resolve(&a.irq, m);
    }
    let mut rows = Vec::new();
    for v in variants {
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

/// Take the run lock (a refused run creates nothing), then create the
/// output directory and prove it writable, before any host change.
fn prepare_out(a: &Args, variants: &[Variant], started: &str) -> Result<(PathBuf, RunLock)> {
    let label = variants
        .iter()
        .map(|v| v.label.as_str())
        .collect::<Vec<_>>()
        .join("-vs-");
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| default_out(&label, started));
    let me = guard::Holder::me("bench", Some(&out));
    let lock = RunLock::acquire(
        &a.root,
        me,
        &journal_path(a, "")?,
        Stale::TakeIfJournalEmpty,
    )?;
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
    if a.resume.is_none() {
        let plan = PlanFile {
            argv: std::env::args().collect(),
            variants: variants.iter().map(|v| v.label.clone()).collect(),
            trials: a.trials,
            created_at: started.to_string(),
        };
        results::write_json(&out.join("plan.json"), &plan)
            .with_context(|| format!("output directory {} is not writable", out.display()))?;
    }
    Ok((out, lock))
}

fn report_outcomes(what: &str, outcomes: &[Outcome]) {
    for o in outcomes {
        eprintln!("irqlab: {what}: {o}");
    }
}

fn journal_path(a: &Args, suffix: &str) -> Result<PathBuf> {
    let base = a
        .journal
        .clone()
        .unwrap_or_else(|| guard::default_journal(&a.root));
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

struct Trial<'a> {
    sampler: &'a mut Sampler,
    threads: Threads,
    fs: HostFs,
    sel: &'a Selection,
    boot_id: &'a str,
    before: Snapshot,
    after: Snapshot,
}

impl Trial<'_> {
    /// Run one timed trial of `w` and build its record.
    fn run(
        &mut self,
        label: &str,
        n: u32,
        w: &mut dyn Workload,
        d: Duration,
    ) -> Result<TrialRecord> {
        let started_at = now_rfc3339();
        let c0 = thread_cpu_ns();
        self.sampler.sample(&mut self.before)?;
        self.threads.sample(&mut self.fs, self.before.mono_ns);
        let c1 = thread_cpu_ns();
        let wl = w
            .run(d)
            .with_context(|| format!("workload {} failed in trial {n} of {label}", w.name()))?;
        let c2 = thread_cpu_ns();
        self.sampler.sample(&mut self.after)?;
        let threads = self.threads.sample(&mut self.fs, self.after.mono_ns);
        let c3 = thread_cpu_ns();
        let secs = self.after.elapsed_since(&self.before);
        let sys = system_metrics(&self.before, &self.after, self.sel);
        let mut t = TrialRecord {
            variant: label.to_string(),
            trial: n,
            boot_id: self.boot_id.to_string(),
            started_at,
            duration_s: secs,
            metrics: Default::default(),
            notes: sys.notes,
        };
        t.add(sys.metrics);
        t.add(thread_metrics(&threads));
        t.add(wl);
        let own = (c1 - c0) + (c3 - c2);
        t.add(vec![Metric::new(
            "irqlab_sample_cpu_ns",
            own as f64,
            "ns",
            Direction::Lower,
        )]);
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

struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(total: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:30} trial {pos}/{len}  {msg}  eta {eta}",
            ) {
                b.set_style(style);
            }
            b
        });
        Progress { bar }
    }

    fn trial(&self, done: usize, total: usize, t: &TrialRecord, headline: Option<&str>) {
        let value = headline
            .and_then(|h| t.metrics.get(h).map(|v| format!("{h}={:.1}", v.value)))
            .unwrap_or_default();
        let msg = format!("{} #{} {value}", t.variant, t.trial);
        match &self.bar {
            Some(b) => {
                b.set_position(done as u64);
                b.set_message(msg);
            }
            None => eprintln!(
                "irqlab: trial {done}/{total}: {msg} ({:.2} s)",
                t.duration_s
            ),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn headline(sel: &Selection) -> Option<String> {
    sel.rows
        .first()
        .map(|s| format!("irq_{}_per_sec", super::metrics::slug(&s.label)))
}

/// Run one variant trial, applying and undoing its own preparation around it.
fn guarded_trial(
    a: &Args,
    v: &Variant,
    slot: Slot,
    w: &mut dyn Workload,
    t: &mut Trial,
) -> Result<TrialRecord> {
    let Some(p) = &v.prepare else {
        return t.run(&v.label, slot.trial, w, a.duration);
    };
    let fs = HostFs::new(&a.root);
    let mut g = SystemGuard::new(&fs, journal_path(a, ".variant")?)?;
    let outcomes =
        prepare::apply(&mut g, p).with_context(|| format!("preparing variant {}", v.label))?;
    if slot.trial == 0 {
        report_outcomes(&format!("variant {}", v.label), &outcomes);
    }
    let rec = t.run(&v.label, slot.trial, w, a.duration);
    g.restore()?;
    rec
}

fn setup_workloads(variants: &[Variant]) -> Result<Vec<Box<dyn Workload>>> {
    let mut out = Vec::new();
    for v in variants {
        let mut w =
            workloads::build(v.kind, &v.options).with_context(|| format!("variant {}", v.label))?;
        w.setup()
            .with_context(|| format!("setting up workload {} of variant {}", w.name(), v.label))?;
        out.push(w);
    }
    Ok(out)
}

fn teardown(ws: &mut [Box<dyn Workload>]) {
    for w in ws {
        if let Err(e) = w.teardown() {
            eprintln!("irqlab: tearing down workload {}: {e:#}", w.name());
        }
    }
}

fn done_counts(out: &Path, variants: &[Variant]) -> Result<Vec<u32>> {
    variants
        .iter()
        .map(|v| Ok(results::read_trials(&out.join(results::variant_dir(&v.label)))?.len() as u32))
        .collect()
}

/// The whole run; see the module docs.
pub fn run(a: &Args) -> Result<ExitCode> {
    let started = now_rfc3339();
    let fs = HostFs::new(&a.root);
    let mut sampler = Sampler::new(HostFs::new(&a.root), &Source::ALL);
    let mut first = Snapshot::default();
    sampler.sample(&mut first)?;
    let Some(irqs) = &first.interrupts else {
        bail!("bench needs {}", fs.path("proc/interrupts").display())
    };
    let kernel = fs
        .read_attr("proc/sys/kernel/osrelease")
        .unwrap_or_else(|| "run".into());
    let variants = crate::cmd::bench::variants(a, &kernel)?;
    let sel = selection(a, &variants, irqs)?;
    let (out, _lock) = prepare_out(a, &variants, &started)?;
    let environment = env::collect(&fs, &sel, started.clone());
    let env_name = if a.resume.is_some() {
        format!("env-resume-{}.json", started.replace(':', ""))
    } else {
        "env.json".into()
    };
    results::write_json(&out.join(env_name), &environment)?;
    for w in &environment.warnings {
        eprintln!("irqlab: warning: {w}");
    }
    eprintln!(
        "irqlab: results in {} (if interrupted: irqlab bench --resume {})",
        out.display(),
        out.display()
    );
    let mut guard = SystemGuard::new(&fs, journal_path(a, "")?)?;
    report_outcomes("prepare", &prepare::apply(&mut guard, &a.prepare)?);
    let mut ws = setup_workloads(&variants)?;
    let res = trials(
        a,
        &variants,
        &mut ws,
        &mut sampler,
        &sel,
        &environment.boot_id,
        &out,
    );
    teardown(&mut ws);
    guard.restore()?;
    res?;
    finish(a, &variants, &out)
}

#[allow(clippy::too_many_arguments)]
fn trials(
    a: &Args,
    variants: &[Variant],
    ws: &mut [Box<dyn Workload>],
    sampler: &mut Sampler,
    sel: &Selection,
    boot_id: &str,
    out: &Path,
) -> Result<()> {
    let mut writers: Vec<TrialWriter> = variants
        .iter()
        .map(|v| TrialWriter::open(out, &v.label))
        .collect::<Result<_>>()?;
    for (v, w) in variants.iter().zip(ws.iter_mut()) {
        for _ in 0..a.warmup {
            w.run(a.duration)
                .with_context(|| format!("warm-up of variant {}", v.label))?;
        }
    }
    let slots = schedule(
        variants.len(),
        a.trials,
        a.order,
        a.seed,
        &done_counts(out, variants)?,
    );
    let progress = Progress::new(slots.len());
    let head = headline(sel);
    let mut fs = HostFs::new(&a.root);
    let mut threads = Threads::new(&fs);
    threads.sample(&mut fs, 0);
    let mut t = Trial {
        sampler,
        threads,
        fs,
        sel,
        boot_id,
        before: Snapshot::default(),
        after: Snapshot::default(),
    };
    for (i, slot) in slots.iter().enumerate() {
        let (Some(v), Some(w), Some(wr)) = (
            variants.get(slot.variant),
            ws.get_mut(slot.variant),
            writers.get_mut(slot.variant),
        ) else {
            continue;
        };
        let rec = guarded_trial(a, v, *slot, w.as_mut(), &mut t)?;
        wr.write(&rec)?;
        progress.trial(i + 1, slots.len(), &rec, head.as_deref());
        if !a.cooldown.is_zero() {
            std::thread::sleep(a.cooldown);
        }
    }
    progress.finish();
    Ok(())
}

fn finish(a: &Args, variants: &[Variant], out: &Path) -> Result<ExitCode> {
    let mut all = Vec::new();
    for v in variants {
        all.extend(results::read_trials(
            &out.join(results::variant_dir(&v.label)),
        )?);
    }
    let summary = results::summarize(&all);
    results::write_json(&out.join("summary.json"), &summary)?;
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    match a.format {
        SummaryFormat::Json => {
            serde_json::to_writer_pretty(&mut o, &summary)?;
            std::io::Write::write_all(&mut o, b"\n")?;
        }
        SummaryFormat::Table => super::summary::write(&summary, &mut o)?,
    }
    if variants.len() > 1 {
        eprintln!(
            "irqlab: compare the variants with: irqlab compare {}",
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
