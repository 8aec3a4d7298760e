//! `irqlab top` interactive UI (ratatui + crossterm).
//!
//! `app` holds the state and its pure `update`; `view`/`panels`/`format`
//! render it without I/O; `event` runs the loop (sampler thread + terminal
//! events); `terminal` enters and always restores the terminal;
//! All file reads go through [`HostFs`].

pub mod app;
pub mod event;
mod format;
mod panels;
pub mod terminal;
pub mod view;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod render_tests;

use crate::host::HostFs;
use crate::sampler::{Sampler, Source};
use anyhow::{anyhow, bail, Context};
use app::App;
use irqlab_core::Snapshot;
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
    /// Initial CPU selection (`0-3,8`).
    pub cpus: Option<String>,
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
    if let Some(re) = &cfg.irq {
        app.set_filter(re).map_err(|e| anyhow!("--irq: {e}"))?;
    }
    if let Some(c) = &cfg.cpus {
        app.set_cpus(c).map_err(|e| anyhow!("--cpus: {e}"))?;
    }
    Ok(app)
}

/// Run the interactive UI until the user quits or a signal arrives.
pub fn run(cfg: TuiConfig) -> anyhow::Result<()> {
    if !std::io::stdout().is_terminal() {
        bail!("irqlab top needs a terminal on stdout (use --batch for scripts)");
    }
    let mut app = initial_app(&cfg, color_enabled())?;
    let mut sampler = Sampler::new(HostFs::new(&cfg.root), &Source::ALL);
    let mut first = Snapshot::default();
    sampler.sample(&mut first).context("first sample")?;
    for (src, why) in &sampler.missing {
        let path = sampler.fs().path(src.rel());
        app.update(app::Msg::Notice(format!(
            "not shown: {}: {why}",
            path.display()
        )));
    }
    let mut fs = HostFs::new(&cfg.root);
    let mut threads = crate::threads::Threads::new(&fs);
    let rows = event::thread_rows(threads.sample(&mut fs, first.mono_ns));
    app.update(app::Msg::Threads(rows));
    let stop = terminal::signal_flag()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let job = event::SamplerJob {
        sampler,
        threads,
        fs,
        first,
        interval: cfg.interval,
    };
    event::spawn_sampler(job, tx, std::sync::Arc::clone(&stop));
    let mut guard = terminal::enter()?;
    let res = event::run_loop(&mut guard, &mut app, &rx, &stop);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(guard);
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

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
            cpus: cpus.map(str::to_string),
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
