//! Terminal setup and teardown for `irqlab top`: raw mode plus the
//! alternate screen, restored on quit and on error (guard `Drop`), on panic
//! (panic hook), and on SIGTERM/SIGINT (the run's `sampler::Stop` flag,
//! installed with `Stop::install_interactive`, which the event loop
//! checks, so the normal path restores the terminal).

use anyhow::Context;
use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::{stdout, Stdout};
use std::sync::Once;

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
