//! `irqlab top` interactive UI (ratatui + crossterm).
//!
//! `app` holds the state and its pure `update`; `view`/`panels`/`format`
//! render it without I/O; `event` runs the loop (a thread taking frames
//! from the same [`LiveSampler`] as `top --batch`, plus terminal events);
//! `terminal` enters and always restores the terminal. Nothing here reads
//! a file: the live sampler does.

pub mod app;
pub mod event;
pub(crate) mod format;
mod panels;
pub mod replay;
pub mod terminal;
pub mod view;

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod render_tests;

use crate::filter::Filter;
use crate::report::SortKey;
use crate::sampler::host_source::Resolved;
use crate::sampler::strategy::Choice;
use crate::sampler::{LivePlan, LiveSampler};
use anyhow::{anyhow, bail, Context};
use app::App;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// Shortest sampling interval accepted.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// What `irqlab top` (interactive) needs.
#[derive(Debug, Clone)]
pub struct TuiConfig {
    pub root: PathBuf,
    pub interval: Duration,
    /// Initial row filter (regex).
    pub irq: Option<String>,
    /// Rows dropped whatever the row filter (`--exclude` regex).
    pub exclude: Option<String>,
    /// Initial CPU selection (`0-3,8`).
    pub cpus: Option<String>,
    /// How the live sampler reads interrupt counts.
    pub strategy: Choice,
    pub sort: SortKey,
    pub threshold: Option<f64>,
    /// Show the sampler's explanation and cost breakdown.
    pub verbose: bool,
}

/// Colour only when the terminal has colours and NO_COLOR is unset/empty.
pub fn color_enabled() -> bool {
    color_choice(
        std::env::var_os("NO_COLOR").as_deref(),
        crossterm::style::available_color_count(),
    )
}

/// The colour decision from NO_COLOR's value and the terminal's colours.
fn color_choice(no_color: Option<&std::ffi::OsStr>, colors: u16) -> bool {
    let no_color = no_color.is_some_and(|v| !v.is_empty());
    !no_color && colors >= 8
}

/// The App with the configured filter and CPU selection (checked before
/// the screen is taken over, so a bad flag is a plain error).
pub fn initial_app(cfg: &TuiConfig, color: bool) -> anyhow::Result<App> {
    if cfg.interval < MIN_INTERVAL {
        bail!("--interval must be at least 10ms");
    }
    let mut app = App::new(cfg.interval, color);
    app.sort = cfg.sort;
    app.threshold = cfg.threshold;
    app.verbose = cfg.verbose;
    app.filter = std::mem::take(&mut app.filter).excluding(cfg.exclude.as_deref())?;
    if let Some(re) = &cfg.irq {
        app.set_filter(re).map_err(|e| anyhow!("--irq: {e}"))?;
    }
    app.filter_changed = false; // the sampler starts with it
    if let Some(c) = &cfg.cpus {
        app.set_cpus(c).map_err(|e| anyhow!("--cpus: {e}"))?;
    }
    Ok(app)
}

/// The live sampler's plan: the `--irq` and `--exclude` filter (it may
/// select IRQs to read from sysfs) but all CPUs (the `c` selection only
/// hides columns).
pub fn plan(cfg: &TuiConfig, app: &App) -> LivePlan {
    LivePlan {
        root: cfg.root.clone(),
        filter: Filter {
            cpus: None,
            ..app.filter.clone()
        },
        strategy: cfg.strategy,
    }
}

/// The warnings of the row filter flags about a first sample and the
/// rows its sampler keeps ([`crate::filter::warnings::snapshot_warnings`]
/// of the flags' text), one line each as `top --batch` says it on stderr.
pub type FilterWarnings<'a> = &'a dyn Fn(&irqlab_core::Snapshot, &Filter) -> Vec<String>;

/// What the first sample says, in the order `top --batch` says it on
/// stderr: the files not shown, the filter flags' `warnings` (as
/// [`FilterWarnings`] gives them), the files disagreeing on the CPUs.
fn opening_notes(root: &std::path::Path, live: &LiveSampler, warnings: &[String]) -> Vec<String> {
    let mut notes: Vec<String> = (live.missing().into_iter())
        .map(|m| crate::sampler::not_read_yet("shown", &m))
        .collect();
    notes.extend(warnings.iter().map(|w| on_screen(w)));
    if let Some(n) = crate::filter::warnings::snapshot_disagreement(root, live.latest()) {
        notes.push(n.strip_prefix("irqlab: note: ").unwrap_or(&n).to_string());
    }
    notes
}

/// A stderr line (`irqlab: warning: …`) as the footer shows it.
fn on_screen(line: &str) -> String {
    line.strip_prefix("irqlab: ").unwrap_or(line).to_string()
}

/// Say the filter `warnings` on stderr, once the screen is left, when the
/// notice holding them was never drawn whole (a screen too small for it,
/// or another message in its place from the start).
pub(crate) fn say_unseen(app: &App, warnings: &[String]) {
    if app.unseen_notice.is_some() {
        for w in warnings {
            eprintln!("{w}");
        }
    }
}

/// Run the interactive UI until the user quits (`None`) or SIGINT/SIGTERM
/// arrives (`Some(signal)`: the command exits 128 + signal, as `bench`).
/// The footer shows the filter flags' `warnings` about the first sample.
pub fn run(cfg: TuiConfig, warnings: FilterWarnings) -> anyhow::Result<Option<i32>> {
    run_traced(cfg, false, warnings, None)
}

/// [`run`], with `top --trace`'s exact interrupt time when `trace`: the
/// session is read in the sampler thread's tick, and that thread is
/// joined at the end (after the terminal is restored) so the programs
/// detach and tracefs is unmounted before the exit. `resolved`: the
/// reader `--strategy per-cpu-count` resolved at start, for the sampler.
pub fn run_traced(
    cfg: TuiConfig,
    trace: bool,
    warnings: FilterWarnings,
    resolved: Option<Resolved>,
) -> anyhow::Result<Option<i32>> {
    use crate::trace::top as top_trace;
    if !std::io::stdout().is_terminal() {
        bail!("irqlab top needs a terminal on stdout (use --batch for scripts)");
    }
    let mut app = initial_app(&cfg, color_enabled())?;
    let plan = plan(&cfg, &app);
    let mut tracing = None;
    let mut notes = Vec::new();
    if trace {
        let (t, trace_notes) = top_trace::start(&plan.root, &plan.filter)?;
        notes.extend(trace_notes.iter().map(|n| format!("trace: {n}")));
        tracing = Some(t);
    }
    let live = LiveSampler::open_resolved(&plan, resolved).context("first sample")?;
    if let Some(t) = tracing.as_mut() {
        t.tick()?; // the traced baseline, just after the sampler's
    }
    let warned = warnings(live.latest(), live.rows_filter());
    notes.extend(opening_notes(&plan.root, &live, &warned));
    if !notes.is_empty() {
        app.update(app::Msg::Notice(notes.join("\n")));
    }
    app.update(app::Msg::Why(live.why().to_string()));
    let stop = crate::sampler::Stop::install_interactive()?;
    if trace {
        crate::guard::defer_signals(top_trace::SIGNAL_GRACE);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (ctl, sampler) = event::spawn_sampler(live, tracing, cfg.interval, tx, stop.clone());
    let mut guard = terminal::enter()?;
    let res = event::run_loop(&mut guard, &mut app, &rx, &ctl, &stop);
    stop.request();
    drop(guard);
    say_unseen(&app, &warned);
    if trace {
        // ends within one interval; drops the session (detach, unmount),
        // which waits one RCU grace period per tracepoint: ~1 s, said
        eprintln!("irqlab: detaching the tracing programs…");
        let _ = sampler.join();
    }
    res?;
    Ok(stop.caught())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::warnings::snapshot_warnings;
    use std::ffi::OsStr;

    /// A synth tree of 4 CPUs under `dir`, `/proc/stat` listing only
    /// CPUs 0 and 1 when `trim`.
    fn tree(dir: &std::path::Path, trim: bool) {
        use irqlab_core::render::{Arch, Era};
        let spec = irqlab_core::synth::SynthSpec {
            cpus: 4,
            irqs: 3,
            nr_irqs: 424,
            arch: Arch::X86,
            era: Era::E3,
            offline: vec![],
            seed: 1,
        };
        for (path, mut bytes) in spec.build().unwrap().files() {
            if trim && path == irqlab_core::paths::PROC_STAT {
                let text = String::from_utf8(bytes).unwrap();
                let keep = |l: &&str| !l.starts_with("cpu2 ") && !l.starts_with("cpu3 ");
                bytes = text
                    .lines()
                    .filter(keep)
                    .map(|l| format!("{l}\n"))
                    .collect::<String>()
                    .into();
            }
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
    }

    /// The interactive top says what `top --batch` says on stderr when
    /// the files disagree on the CPUs, and nothing on a consistent tree.
    #[test]
    fn files_that_disagree_on_the_cpus_get_a_note() {
        for trim in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            tree(dir.path(), trim);
            let cfg = TuiConfig {
                root: dir.path().into(),
                interval: Duration::from_millis(100),
                irq: None,
                exclude: None,
                cpus: None,
                strategy: Choice::ProcInterrupts,
                sort: SortKey::Rate,
                threshold: None,
                verbose: false,
            };
            let app = initial_app(&cfg, false).unwrap();
            let live = LiveSampler::open(&plan(&cfg, &app)).unwrap();
            let notes = opening_notes(dir.path(), &live, &[]);
            let want = format!(
                "the files disagree on the CPUs: {} lists 4 CPUs (0-3), {} lists 2 CPUs (0-1), {} lists 4 CPUs (0-3); each section shows its own file's",
                dir.path().join("proc/interrupts").display(),
                dir.path().join("proc/stat").display(),
                dir.path().join("proc/softirqs").display(),
            );
            let want: Vec<String> = if trim { vec![want] } else { vec![] };
            assert_eq!(notes, want);
        }
    }

    /// A filter that selects nothing gets the filter flags' warnings
    /// (`snapshot_warnings`, what `top --batch` says on stderr) about
    /// the first sample in the opening notice, which the footer shows.
    #[test]
    fn a_filter_that_selects_nothing_is_warned_about_in_the_footer() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), false);
        let cfg = TuiConfig {
            root: dir.path().into(),
            interval: Duration::from_millis(100),
            irq: Some("nomatch".into()),
            exclude: None,
            cpus: Some("9".into()),
            strategy: Choice::ProcInterrupts,
            sort: SortKey::Rate,
            threshold: None,
            verbose: false,
        };
        let mut app = initial_app(&cfg, false).unwrap();
        let live = LiveSampler::open(&plan(&cfg, &app)).unwrap();
        let (cpus, irq) = (cfg.cpus.as_deref(), cfg.irq.as_deref());
        let warned = snapshot_warnings(cpus, irq, live.latest(), live.rows_filter());
        let notes = opening_notes(dir.path(), &live, &warned);
        let want = [
            "warning: --cpus 9 selects no CPU: the sampled files list 4 CPUs (0-3)",
            "warning: --irq \"nomatch\" matches no interrupt row",
        ];
        assert_eq!(notes, want);
        app.update(app::Msg::Notice(notes.join("\n")));
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 24)).unwrap();
        t.draw(|f| view::draw(f, &app)).unwrap();
        let buf = t.backend().buffer();
        let row = |y: u16| -> String {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        };
        assert_eq!([row(22), row(23)], want);
    }

    #[test]
    fn colour_needs_colours_and_no_no_color() {
        assert!(color_choice(None, 256));
        assert!(color_choice(Some(OsStr::new("")), 8));
        assert!(!color_choice(Some(OsStr::new("1")), 256));
        assert!(!color_choice(None, 0));
    }

    #[test]
    fn bad_flags_fail_before_the_screen_is_taken() {
        let cfg = |irq: Option<&str>, cpus: Option<&str>, ms: u64| TuiConfig {
            root: "/".into(),
            interval: Duration::from_millis(ms),
            irq: irq.map(str::to_string),
            exclude: None,
            cpus: cpus.map(str::to_string),
            strategy: Choice::Auto,
            sort: SortKey::Rate,
            threshold: None,
            verbose: false,
        };
        let err = |c| format!("{:#}", initial_app(&c, false).unwrap_err());
        assert!(err(cfg(Some("("), None, 100)).starts_with("--irq: invalid regex"));
        assert!(err(cfg(None, Some("3-1"), 100)).starts_with("--cpus: invalid CPU list"));
        assert!(err(cfg(None, None, 1)).contains("at least 10ms"));
        let app = initial_app(&cfg(Some("eth"), Some("0-3"), 100), true).unwrap();
        assert_eq!(app.cpus, Some(vec![0, 1, 2, 3]));
        assert!(app.color);
    }
}
