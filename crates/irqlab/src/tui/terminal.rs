//! Terminal setup and teardown for `irqlab top`: raw mode plus the
//! alternate screen, restored on quit and on error (guard `Drop`), on panic
//! (panic hook), and on SIGTERM/SIGINT (a `signal-hook` flag that the event
//! loop checks, so the normal path restores the terminal).

use anyhow::Context;
use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::{stdout, Stdout};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once};

/// The terminal of the live UI.
pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Owns the terminal while the UI runs; restores it when dropped.
pub struct TermGuard {
    pub term: Term,
}

impl Drop for TermGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Raw mode, alternate screen, hidden cursor; a panic hook that restores.
pub fn enter() -> anyhow::Result<TermGuard> {
    install_panic_hook();
    enable_raw_mode().context("cannot switch the terminal to raw mode")?;
    if let Err(e) = execute!(stdout(), EnterAlternateScreen, Hide) {
        restore();
        return Err(e).context("cannot enter the alternate screen");
    }
    match Terminal::new(CrosstermBackend::new(stdout())) {
        Ok(term) => Ok(TermGuard { term }),
        Err(e) => {
            restore();
            Err(e).context("cannot set up the terminal")
        }
    }
}

/// Leave the alternate screen and raw mode (safe to call more than once).
pub fn restore() {
    let _ = execute!(stdout(), LeaveAlternateScreen, Show);
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            prev(info);
        }));
    });
}

/// Set by SIGTERM or SIGINT (or by the UI quitting), so the loop quits and
/// restores the terminal instead of dying in raw mode; remembers which
/// signal came. A second such signal while the flag is set exits at once
/// (128 + signal), in case the loop is stuck. SIGHUP keeps its default
/// action: the terminal is gone, nothing to restore.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    sig: Arc<AtomicUsize>,
}

impl Stop {
    /// True once a stop was requested (signal or quit).
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Ask every loop to stop.
    pub fn request(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// The signal that stopped the run, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.sig.load(Ordering::Relaxed) {
            0 => None,
            s => i32::try_from(s).ok(),
        }
    }
}

/// Install the SIGTERM/SIGINT handlers of the UI.
pub fn signal_flag() -> anyhow::Result<Stop> {
    let stop = Stop::default();
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        let code = 128 + sig;
        signal_hook::flag::register_conditional_shutdown(sig, code, Arc::clone(&stop.flag))
            .with_context(|| format!("cannot handle signal {sig}"))?;
        let n = usize::try_from(sig).unwrap_or(0);
        signal_hook::flag::register_usize(sig, Arc::clone(&stop.sig), n)
            .with_context(|| format!("cannot handle signal {sig}"))?;
        signal_hook::flag::register(sig, Arc::clone(&stop.flag))
            .with_context(|| format!("cannot handle signal {sig}"))?;
    }
    Ok(stop)
}
