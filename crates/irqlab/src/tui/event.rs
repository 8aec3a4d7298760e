//! The event loop of `irqlab top`: a sampler thread paced by the
//! drift-free [`Ticker`] sends [`Msg::Sample`] and [`Msg::Threads`] over a
//! channel; the main thread polls crossterm for keys and resizes, feeds
//! everything to [`App::update`], checks the signal flag and redraws.

use super::app::{App, Key, Msg, SampleData, ThreadRow};
use super::terminal::TermGuard;
use super::view;
use crate::host::HostFs;
use crate::report::{self, Filter};
use crate::sampler::{Sampler, Ticker};
use crate::threads::{ThreadCpu, Threads};
use anyhow::{bail, Context};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use irqlab_core::Snapshot;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long one poll for terminal events waits.
const POLL: Duration = Duration::from_millis(100);
/// How often [`Msg::Tick`] is sent.
const TICK: Duration = Duration::from_secs(1);

/// Everything the sampler thread owns.
pub struct SamplerJob {
    pub sampler: Sampler,
    pub threads: Threads,
    /// The gateway the thread reader uses.
    pub fs: HostFs,
    /// The first snapshot (taken before the UI starts).
    pub first: Snapshot,
    pub interval: Duration,
}

/// Start sampling on a thread; it ends when `stop` is set or the receiver
/// is gone (checked after each tick, so it is not joined on quit).
pub fn spawn_sampler(job: SamplerJob, tx: Sender<Msg>, stop: Arc<AtomicBool>) {
    std::thread::spawn(move || sample_loop(job, &tx, &stop));
}

fn sample_loop(job: SamplerJob, tx: &Sender<Msg>, stop: &AtomicBool) {
    let SamplerJob {
        mut sampler,
        mut threads,
        mut fs,
        first: mut prev,
        interval,
    } = job;
    let mut cur = Snapshot::default();
    let mut ticker = Ticker::new(interval);
    loop {
        ticker.wait();
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let msgs = match sampler.sample(&mut cur) {
            Ok(()) => {
                let s = sample_data(&prev, &cur);
                let t = thread_rows(threads.sample(&mut fs, cur.mono_ns));
                std::mem::swap(&mut prev, &mut cur);
                vec![Msg::Sample(Box::new(s)), Msg::Threads(t)]
            }
            Err(e) => vec![Msg::SampleError(format!("{e:#}"))],
        };
        for m in msgs {
            if tx.send(m).is_err() {
                return;
            }
        }
    }
}

/// The TUI's rows of the interrupt threads (`crate::threads`).
pub fn thread_rows(v: Vec<ThreadCpu>) -> Vec<ThreadRow> {
    v.into_iter()
        .map(|t| ThreadRow {
            pid: t.pid,
            name: t.name,
            cpu_pct: t.cpu_pct,
        })
        .collect()
}

/// The rates report between two snapshots plus since-boot totals per row.
pub fn sample_data(old: &Snapshot, new: &Snapshot) -> SampleData {
    SampleData {
        report: report::from_delta_rates(old, new, &Filter::default()),
        totals: new
            .interrupts
            .as_ref()
            .map(|i| i.rows().iter().map(|r| r.total()).collect())
            .unwrap_or_default(),
    }
}

/// Run the UI until quit, a signal, or an error.
pub fn run_loop(
    guard: &mut TermGuard,
    app: &mut App,
    rx: &Receiver<Msg>,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let size = guard.term.size().context("cannot read the terminal size")?;
    app.update(Msg::Resize(size.width, size.height));
    let mut dirty = true;
    let mut last_tick = Instant::now();
    while !app.quit && !stop.load(Ordering::Relaxed) {
        if dirty {
            guard
                .term
                .draw(|f| view::draw(f, app))
                .context("cannot draw")?;
            dirty = false;
        }
        if event::poll(POLL).context("cannot poll the terminal")? {
            let ev = event::read().context("cannot read the terminal")?;
            if let Some(m) = to_msg(&ev) {
                app.update(m);
                dirty = true;
            }
        }
        dirty |= drain(app, rx, stop)?;
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            app.update(Msg::Tick);
            dirty = true;
        }
    }
    Ok(())
}

/// Apply every pending sampler message; true if any arrived. The sampler
/// ending is an error unless a stop (signal) was requested.
fn drain(app: &mut App, rx: &Receiver<Msg>, stop: &AtomicBool) -> anyhow::Result<bool> {
    let mut any = false;
    loop {
        match rx.try_recv() {
            Ok(m) => {
                app.update(m);
                any = true;
            }
            Err(TryRecvError::Empty) => return Ok(any),
            Err(TryRecvError::Disconnected) if stop.load(Ordering::Relaxed) => return Ok(any),
            Err(TryRecvError::Disconnected) => bail!("the sampler thread stopped"),
        }
    }
}

/// Translate a terminal event.
pub fn to_msg(ev: &Event) -> Option<Msg> {
    match ev {
        Event::Resize(w, h) => Some(Msg::Resize(*w, *h)),
        Event::Key(k) if k.kind != KeyEventKind::Release => to_key(k).map(Msg::Key),
        _ => None,
    }
}

fn to_key(k: &KeyEvent) -> Option<Key> {
    Some(match k.code {
        KeyCode::Char(c) if k.modifiers.contains(KeyModifiers::CONTROL) => Key::Ctrl(c),
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_translate_with_ctrl_and_resize() {
        let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
        assert!(matches!(to_msg(&ctrl_c), Some(Msg::Key(Key::Ctrl('c')))));
        let q = Event::Key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE));
        assert!(matches!(to_msg(&q), Some(Msg::Key(Key::Char('q')))));
        assert!(matches!(
            to_msg(&Event::Resize(90, 30)),
            Some(Msg::Resize(90, 30))
        ));
        assert!(to_msg(&Event::FocusGained).is_none());
    }
}
