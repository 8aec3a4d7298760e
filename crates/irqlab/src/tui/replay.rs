//! Interactive `irqlab replay`: the `top` screen over a recording, with
//! time navigation. A [`Player`] owns the position (frame `k` shows the
//! rates from step `k-1` to step `k`), play/pause and the speed; it takes
//! frames from a [`LiveSampler`] over a [`RecordingSource`] (the same
//! delta code as live `top`, gaps at hotplug included) and re-opens one at
//! the new position on a jump. A thread runs the player, paced by a
//! variable-interval `PacedRun` (`sampler/pace.rs`), and feeds the
//! App the same messages as the live sampler thread, plus the position
//! as the sampler's explanation line; [`replay_key`] maps the navigation
//! keys before the App sees them.

use super::app::{App, Key, Msg};
use super::event::sample_data;
use crate::filter::Filter;
use crate::record::playback::RecordingSource;
use crate::record::reader::RecordedSample;
use crate::sampler::pace::Wake;
use crate::sampler::{End, LiveSampler, PacedRun, Stop};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the user asked the player to do.
#[derive(Debug, Clone)]
pub enum Cmd {
    /// Play or pause.
    Toggle,
    /// Step this many samples (pauses).
    Step(i64),
    /// Move by this many seconds of recorded time.
    Seconds(i64),
    /// Jump to this tenth of the recording (0 = start).
    Tenth(u32),
    /// Double or halve the speed.
    Faster,
    Slower,
    /// The App's row filter changed.
    Filter(Filter),
}

/// The navigation key's command, when `m` is one and no prompt or help
/// is open (a prompt's text goes to the App).
pub fn replay_key(app: &App, m: &Msg) -> Option<Cmd> {
    if app.input.is_some() || app.help {
        return None;
    }
    let Msg::Key(k) = m else { return None };
    Some(match k {
        Key::Char(' ') | Key::Char('p') => Cmd::Toggle,
        Key::Char('.') => Cmd::Step(1),
        Key::Char(',') => Cmd::Step(-1),
        Key::Char('>') => Cmd::Seconds(60),
        Key::Char('<') => Cmd::Seconds(-60),
        Key::Char('+') => Cmd::Faster,
        Key::Char('-') => Cmd::Slower,
        Key::Char(c @ '0'..='9') => Cmd::Tenth(c.to_digit(10).unwrap_or(0)),
        _ => return None,
    })
}

/// Key help of the replay screen: the footer's last line, under the
/// position line.
pub const HELP: &str =
    "replay keys: space play/pause  . , step  < > 1 min  0-9 jump to 0-90 %  + - speed";

/// The keys of [`replay_key`] in the `?` help, laid out as `top`'s keys
/// there (`view::help_lines`: in place of its pause line).
pub const HELP_KEYS: [&str; 5] = [
    "space, p      play / pause (at the end: play again from the start)",
    ". ,           one sample forward / back (pauses)",
    "< >           one minute of recorded time back / forward",
    "0-9           jump to 0 %, 10 % … 90 % of the recording",
    "+ -           play faster / slower (speed x2 / x0.5)",
];

/// Position, state and sampler of one replay.
pub struct Player {
    steps: Arc<[RecordedSample]>,
    name: String,
    filter: Filter,
    live: LiveSampler<RecordingSource>,
    /// Frame shown: rates from step `pos - 1` to step `pos`.
    pos: usize,
    pub playing: bool,
    pub speed: f64,
}

impl Player {
    /// A player before its first frame (needs at least two steps).
    pub fn new(
        steps: Arc<[RecordedSample]>,
        name: String,
        filter: Filter,
    ) -> anyhow::Result<Player> {
        if steps.len() < 2 {
            anyhow::bail!("{name}: a replay needs at least two samples");
        }
        let live = open_at(&steps, 0, &name, &filter)?;
        Ok(Player {
            steps,
            name,
            filter,
            live,
            pos: 0,
            playing: true,
            speed: 1.0,
        })
    }

    /// The filter flags' `warnings` about the recording's first sample
    /// (the player's baseline before its first frame, as `replay
    /// --batch` warns).
    pub fn first_warnings(&self, warnings: super::FilterWarnings) -> Vec<String> {
        warnings(self.live.latest(), self.live.rows_filter())
    }

    /// Frames in the recording.
    pub fn frames(&self) -> usize {
        self.steps.len() - 1
    }

    /// The frame shown (1-based), 0 before the first.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Recorded time from the shown frame to the next (`None` at the end).
    pub fn interval(&self) -> Option<Duration> {
        let (a, b) = (self.steps.get(self.pos)?, self.steps.get(self.pos + 1)?);
        Some(Duration::from_nanos(
            b.time.mono_ns.saturating_sub(a.time.mono_ns),
        ))
    }

    /// Recorded time from the shown frame to the next, at the speed.
    pub fn wait(&self) -> Option<Duration> {
        let ns = self.interval()?.as_nanos() as f64 / self.speed;
        Some(Duration::from_nanos(ns as u64))
    }

    /// Apply `cmd`; the frame to show when the position changed.
    pub fn command(&mut self, cmd: Cmd) -> anyhow::Result<Option<Vec<Msg>>> {
        match cmd {
            Cmd::Toggle if !self.playing && self.pos >= self.frames() => {
                // at the end: play again from the start
                self.playing = true;
                self.seek(1).map(Some)
            }
            Cmd::Toggle => {
                self.playing = !self.playing;
                Ok(Some(self.said()))
            }
            Cmd::Faster | Cmd::Slower => {
                let f = if matches!(cmd, Cmd::Faster) { 2.0 } else { 0.5 };
                self.speed = (self.speed * f).clamp(1.0 / 64.0, 1024.0);
                Ok(Some(self.said()))
            }
            Cmd::Filter(f) => {
                self.filter = f.clone();
                self.live.set_filter(f)?;
                Ok(None)
            }
            Cmd::Step(n) => {
                self.playing = false;
                let to = self.pos as i64 + n;
                self.seek(to.clamp(1, self.frames() as i64) as usize)
                    .map(Some)
            }
            Cmd::Seconds(s) => {
                let at = self.steps.get(self.pos).map_or(0, |st| st.time.mono_ns) as i128;
                let target = at + i128::from(s) * 1_000_000_000;
                let to = self
                    .steps
                    .iter()
                    .position(|st| i128::from(st.time.mono_ns) >= target)
                    .unwrap_or(self.frames());
                self.seek(to.clamp(1, self.frames())).map(Some)
            }
            Cmd::Tenth(t) => {
                let to = (self.frames() * t as usize / 10).max(1);
                self.seek(to).map(Some)
            }
        }
    }

    /// The next frame while playing; at the end playback stops.
    pub fn advance(&mut self) -> anyhow::Result<Option<Vec<Msg>>> {
        if self.pos >= self.frames() {
            let was = self.playing;
            self.playing = false;
            return Ok(was.then(|| self.said()));
        }
        self.seek(self.pos + 1).map(Some)
    }

    /// Show frame `to`: the next one from the open sampler, any other
    /// through a sampler re-opened at `to - 1`.
    fn seek(&mut self, to: usize) -> anyhow::Result<Vec<Msg>> {
        if to != self.pos + 1 {
            self.live = open_at(&self.steps, to - 1, &self.name, &self.filter)?;
            self.pos = to - 1;
        }
        self.frame()
    }

    fn frame(&mut self) -> anyhow::Result<Vec<Msg>> {
        let mut frame = self.live.next_frame()?;
        let threads = frame.threads.to_vec();
        let data = sample_data(&mut frame);
        self.pos += 1;
        let mut msgs = vec![Msg::Sample(Box::new(data)), Msg::Threads(threads)];
        msgs.extend(self.said());
        Ok(msgs)
    }

    /// The state for the App's status line, then the position line.
    fn said(&self) -> Vec<Msg> {
        vec![Msg::Playback(self.state()), self.status()]
    }

    /// `PLAYING`, `PAUSED`, or `END` at the last frame.
    fn state(&self) -> &'static str {
        match (self.playing, self.pos >= self.frames()) {
            (_, true) => "END",
            (true, _) => "PLAYING",
            (false, _) => "PAUSED",
        }
    }

    /// The position line (recorded time, frame, state and speed; the
    /// recording's name last, where a narrow screen cuts it) and the key
    /// help line under it: the footer's explanation lines, below the
    /// App's status line.
    pub fn status(&self) -> Msg {
        let t = self
            .steps
            .get(self.pos.max(1))
            .map_or(0, |s| s.time.wall_ns);
        let stamp = crate::sampler::clock::rfc3339_utc(t);
        Msg::Why(format!(
            "replay │ {stamp} │ sample {}/{} │ {} x{} │ {}\n{HELP}",
            self.pos,
            self.frames(),
            self.state(),
            self.speed,
            self.name
        ))
    }
}

/// A sampler whose baseline is step `base` (its next frame is `base + 1`).
fn open_at(
    steps: &Arc<[RecordedSample]>,
    base: usize,
    name: &str,
    filter: &Filter,
) -> anyhow::Result<LiveSampler<RecordingSource>> {
    let src = RecordingSource::at(Arc::clone(steps), base, format!("replaying {name}"));
    LiveSampler::with_source(src, filter.clone())
}

/// Run `player` on a thread until `stop` or the receiver is gone: the
/// first frame at once, then one per recorded interval (at the speed)
/// while playing, paced by a variable [`PacedRun`] (drift-free: frame k
/// is due at the anchor plus the recorded time since it, over the speed),
/// and whatever the commands ask for. Every command but a filter change
/// re-anchors the pace at the frame it shows (or at the moment of a pause,
/// a resume or a new speed).
pub fn spawn(mut player: Player, tx: Sender<Msg>, cmds: Receiver<Cmd>, stop: Stop) {
    std::thread::spawn(move || {
        let mut pending = player.advance();
        let mut pace = PacedRun::variable(End::Never);
        pace.anchor(Instant::now(), player.speed);
        loop {
            match pending {
                Ok(Some(msgs)) => {
                    for m in msgs {
                        if tx.send(m).is_err() {
                            return;
                        }
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    if tx.send(Msg::SampleError(format!("{e:#}"))).is_err() {
                        return;
                    }
                }
            }
            // the recorded interval (the pace divides it by the speed); at
            // the last frame: due at once, and advance says END
            let next = player.playing.then(|| {
                let longest =
                    Duration::try_from_secs_f64(LONGEST_WAIT.as_secs_f64() * player.speed);
                let longest = longest.unwrap_or(LONGEST_WAIT);
                player.interval().unwrap_or_default().min(longest)
            });
            pending = match pace.wait_or_recv(next, &cmds, &stop) {
                Wake::Due => player.advance(),
                Wake::Msg(c) => {
                    let re_anchor = !matches!(c, Cmd::Filter(_));
                    let r = player.command(c);
                    if re_anchor {
                        pace.anchor(Instant::now(), player.speed);
                    }
                    r
                }
                Wake::End | Wake::Stop => return,
            };
        }
    });
}

/// The longest wait for a frame, whatever the speed (a recording with a
/// long gap still moves on).
const LONGEST_WAIT: Duration = Duration::from_secs(3600);

/// Run the replay screen until the user quits (`None`) or SIGINT/SIGTERM
/// arrives (`Some(signal)`), as [`super::run`] does for live `top`; the
/// footer shows the filter flags' `warnings` about the first sample.
pub fn run(
    mut app: App,
    player: Player,
    warnings: super::FilterWarnings,
) -> anyhow::Result<Option<i32>> {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!("irqlab replay needs a terminal on stdout (use --batch for scripts)");
    }
    app.replay = true;
    let warned = player.first_warnings(warnings);
    if !warned.is_empty() {
        let lines: Vec<String> = warned.iter().map(|w| super::on_screen(w)).collect();
        app.update(Msg::Notice(lines.join("\n")));
    }
    let stop = Stop::install_interactive()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let (cmd_tx, cmd_rx) = std::sync::mpsc::channel();
    spawn(player, tx, cmd_rx, stop.clone());
    // the App's filter changes reach the player as commands
    let (ctl, ctl_rx) = std::sync::mpsc::channel::<Filter>();
    let forward = cmd_tx.clone();
    std::thread::spawn(move || {
        for f in ctl_rx {
            if forward.send(Cmd::Filter(f)).is_err() {
                return;
            }
        }
    });
    let mut guard = super::terminal::enter()?;
    let mut keys = |app: &App, m: &Msg| match replay_key(app, m) {
        Some(c) => {
            let _ = cmd_tx.send(c); // a gone player is reported by drain
            true
        }
        None => false,
    };
    let res = super::event::run_loop_with(&mut guard, &mut app, &rx, &ctl, &stop, &mut keys);
    stop.request();
    drop(guard);
    super::say_unseen(&app, &warned);
    res?;
    Ok(stop.caught())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
