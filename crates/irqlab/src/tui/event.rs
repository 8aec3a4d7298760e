//! The event loop of `irqlab top`: a thread takes frames from the
//! [`LiveSampler`] (the same type `top --batch` uses) paced by a
//! [`PacedRun`] (drift-free ticks), turns each into [`Msg::Sample`] and
//! [`Msg::Threads`] and sends them over a channel; the main thread polls
//! crossterm for keys and resizes, feeds everything to [`App::update`],
//! hands filter changes back to the sampler thread, checks the stop flag
//! and redraws.

use super::app::{App, FrameView, Key, Msg};
use super::terminal::TermGuard;
use super::view;
use crate::filter::Filter;
use crate::report;
use crate::sampler::{End, Frame, LiveSampler, PacedRun, Stop};
use crate::trace::top::TopTrace;
use crate::trace::top::Tracing;
use anyhow::{bail, Context};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

/// How long one poll for terminal events waits.
const POLL: Duration = Duration::from_millis(100);
/// How often [`Msg::Tick`] is sent.
const TICK: Duration = Duration::from_secs(1);

/// Start sampling on a thread; it ends when `stop` is requested or the
/// receiver is gone (checked after each tick, so it need not be joined on
/// quit — except with tracing, whose session must detach and unmount:
/// join the handle then). Returns the channel for filter changes.
pub fn spawn_sampler(
    live: LiveSampler,
    tracing: Option<Tracing>,
    interval: Duration,
    tx: Sender<Msg>,
    stop: Stop,
) -> (Sender<Filter>, std::thread::JoinHandle<()>) {
    let (ctl_tx, ctl_rx) = std::sync::mpsc::channel();
    let h =
        std::thread::spawn(move || sampler_thread(live, tracing, interval, &tx, &ctl_rx, &stop));
    (ctl_tx, h)
}

/// The sampler thread: a frame per tick of an endless [`PacedRun`] (the
/// stop flag is the UI's, checked after each tick).
fn sampler_thread(
    mut live: LiveSampler,
    mut tracing: Option<Tracing>,
    interval: Duration,
    tx: &Sender<Msg>,
    ctl: &Receiver<Filter>,
    stop: &Stop,
) {
    let mut pace = PacedRun::new(interval, End::Never);
    let mut why = live.why().to_string();
    while pace.wait_plain() {
        if stop.requested() {
            return;
        }
        let mut msgs = Vec::new();
        if let Some(f) = ctl.try_iter().last() {
            if let Err(e) = live.set_filter(f) {
                msgs.push(Msg::SampleError(format!("{e:#}")));
            }
        }
        match live.next_frame() {
            Ok(mut frame) => {
                let t = frame.threads.to_vec();
                let mut s = sample_data(&mut frame);
                if let Some(tr) = tracing.as_mut() {
                    // the App filters rows itself: keep every label
                    match tr.tick() {
                        Ok(iv) => s.trace = Some(TopTrace::new(&iv, |_| true)),
                        Err(e) => msgs.push(Msg::SampleError(format!("trace: {e:#}"))),
                    }
                }
                msgs.push(Msg::Sample(Box::new(s)));
                msgs.push(Msg::Threads(t));
            }
            Err(e) => msgs.push(Msg::SampleError(format!("{e:#}"))),
        }
        if live.why() != why {
            why = live.why().to_string();
            msgs.push(Msg::Why(why.clone()));
        }
        for m in msgs {
            if tx.send(m).is_err() {
                return;
            }
        }
    }
}

/// One frame as the App shows it: every row the sampler read (the App
/// filters and selects CPUs itself, at once on a key), with affinity,
/// strategy and irqlab's cost for the frame.
pub fn sample_data(frame: &mut Frame) -> FrameView {
    let rows = frame.filter().cpus_only();
    let mut report = report::rates(frame.prev, frame.cur, &rows, report::RateOpts::default());
    report::annotate_affinity(&mut report, frame);
    let stat = match (&frame.prev.stat, &frame.cur.stat) {
        (Some(a), Some(b)) => Some(Box::new((a.clone(), b.clone()))),
        _ => None,
    };
    FrameView {
        report,
        strategy: Some(frame.strategy),
        self_cost: frame.self_cost(),
        trace: None,
        stat,
    }
}

/// Run the UI until quit, a signal, or an error.
pub fn run_loop(
    guard: &mut TermGuard,
    app: &mut App,
    rx: &Receiver<Msg>,
    ctl: &Sender<Filter>,
    stop: &Stop,
) -> anyhow::Result<()> {
    run_loop_with(guard, app, rx, ctl, stop, &mut |_, _| false)
}

/// [`run_loop`] where `keys` sees every terminal message first and takes
/// it (returns true) before the App does (replay's time navigation).
pub fn run_loop_with(
    guard: &mut TermGuard,
    app: &mut App,
    rx: &Receiver<Msg>,
    ctl: &Sender<Filter>,
    stop: &Stop,
    keys: &mut dyn FnMut(&App, &Msg) -> bool,
) -> anyhow::Result<()> {
    let size = guard.term.size().context("cannot read the terminal size")?;
    app.update(Msg::Resize(size.width, size.height));
    let mut dirty = true;
    let mut last_tick = Instant::now();
    while !app.quit && !stop.requested() {
        if dirty {
            let mut status_whole = false;
            guard
                .term
                .draw(|f| {
                    view::draw(f, app);
                    status_whole = view::status_whole(app, f.area());
                })
                .context("cannot draw")?;
            app.update(Msg::Drawn { status_whole });
            dirty = false;
        }
        if event::poll(POLL).context("cannot poll the terminal")? {
            let ev = event::read().context("cannot read the terminal")?;
            if let Some(m) = to_msg(&ev) {
                if !keys(app, &m) {
                    app.update(m);
                }
                dirty = true;
            }
        }
        if let Some(f) = app.take_filter_change() {
            let _ = ctl.send(f); // a gone sampler is reported by drain
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
fn drain(app: &mut App, rx: &Receiver<Msg>, stop: &Stop) -> anyhow::Result<bool> {
    let mut any = false;
    loop {
        match rx.try_recv() {
            Ok(m) => {
                app.update(m);
                any = true;
            }
            Err(TryRecvError::Empty) => return Ok(any),
            Err(TryRecvError::Disconnected) if stop.requested() => return Ok(any),
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
