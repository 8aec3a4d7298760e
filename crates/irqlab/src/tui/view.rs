//! Pure rendering of the whole screen from an [`App`]: the tab header, the
//! active panel (or help), and the status/footer line. No I/O, no state
//! changes: `draw` can be called with a ratatui `TestBackend`.

use super::app::{App, InputKind, Panel};
use super::format::{self, bold, styled};
use super::panels;
use irqlab_core::delta::Gap;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

/// Draw the screen.
pub fn draw(f: &mut Frame, app: &App) {
    let foot_lines = footer_lines(app, f.area().width);
    let h = u16::try_from(foot_lines.len())
        .unwrap_or(1)
        .min(footer_room(f.area()));
    let [top, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(h),
    ])
    .areas(f.area());
    header(f, top, app);
    match app.panel {
        Panel::Irqs => panels::irqs(f, body, app),
        Panel::Softirqs => panels::softirqs(f, body, app),
        Panel::CpuTime => panels::cpu_time(f, body, app),
    }
    if app.help {
        help(f, body, app.replay);
    }
    f.render_widget(Paragraph::new(foot_lines), foot);
}

fn header(f: &mut Frame, area: Rect, app: &App) {
    let mut spans = vec![Span::styled("irqlab top ", bold())];
    for p in Panel::ALL {
        let label = format!(" {} ", p.label());
        let style = if p == app.panel {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        spans.push(Span::styled(label, style));
    }
    let right = position(app, area.width);
    let w = (right.chars().count() as u16).min(area.width);
    let [l, r] = Layout::horizontal([Constraint::Min(0), Constraint::Length(w)]).areas(area);
    f.render_widget(Paragraph::new(Line::from(spans)), l);
    f.render_widget(Paragraph::new(right), r);
}

/// Where the view is: first row shown of how many, and the first CPU
/// column the panel draws on a screen `width` wide (or that none fits).
fn position(app: &App, width: u16) -> String {
    let rows = app.row_count();
    if rows == 0 {
        return String::new();
    }
    let row = format!("row {} of {rows}", app.row_offset.saturating_add(1));
    let Some(win) = panels::cpu_window(app, width) else {
        return format!(" {row} ");
    };
    let of = win.cols.len();
    match win.shown().first() {
        Some(&(_, first)) => {
            let col = win.start.saturating_add(1);
            format!(" {row} │ col {col} of {of}: CPU{first} ←/→ ")
        }
        None if of > 0 => format!(" {row} │ 0 of {of} CPU columns fit "),
        None => format!(" {row} "),
    }
}

/// Most lines a (multi-line) error may take at the bottom.
const STATUS_MAX_LINES: usize = 8;

/// The footer: the open input line; or the status message (every line of
/// it, e.g. a regex error with its caret, wrapped at `width`); or the
/// status line and the sampler line (plus the explanation with `-v`, a
/// line per line of it: the strategy's, or replay's position and keys).
pub fn footer_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    if let Some(input) = &app.input {
        let prompt = match input.kind {
            InputKind::Filter => "filter (regex, Enter applies, Esc cancels): ",
            InputKind::Cpus => "CPUs (e.g. 0-3,8; empty = all): ",
        };
        let mut spans = vec![
            Span::styled(prompt, bold()),
            Span::raw(format!("{}_", input.text)),
        ];
        if input.text.is_empty() {
            let hint = if input.hint.is_empty() {
                "  (none set; Ctrl-U clears, Ctrl-W deletes a word)".to_string()
            } else {
                format!("  (now: {}; empty Enter clears it)", input.hint)
            };
            spans.push(Span::styled(
                hint,
                Style::default().add_modifier(Modifier::DIM),
            ));
        }
        return vec![Line::from(spans)];
    }
    if let Some((msg, _)) = &app.status {
        let style = bold().patch(styled(app, Style::default().fg(Color::Red)));
        return wrap(msg, usize::from(width))
            .into_iter()
            .take(STATUS_MAX_LINES)
            .map(|l| Line::from(Span::styled(l, style)))
            .collect();
    }
    let mut v = vec![Line::from(status_text(app)), Line::from(sampler_text(app))];
    if let Some(t) = trace_text(app) {
        v.push(Line::from(t));
    }
    if app.verbose {
        v.extend(app.why.lines().map(|l| Line::from(format!(" {l}"))));
    }
    v
}

/// Whether [`draw`] on a screen of `area` shows the status message
/// whole: no input line in its place, and its lines wrapped at the width
/// fit the footer (at most `STATUS_MAX_LINES`, under the header).
pub fn status_whole(app: &App, area: Rect) -> bool {
    let Some((msg, _)) = app.status.as_ref().filter(|_| app.input.is_none()) else {
        return false;
    };
    let room = usize::from(footer_room(area)).min(STATUS_MAX_LINES);
    area.height >= 2 && wrap(msg, usize::from(area.width)).len() <= room
}

/// Most lines the footer may take: all but the header and one body line.
fn footer_room(area: Rect) -> u16 {
    area.height.saturating_sub(2).max(1)
}

/// The lines of `text` cut to at most `w` chars each, at a space where
/// there is one (a long note, e.g. paths, is then read whole).
fn wrap(text: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some((cut, _)) = rest.char_indices().nth(w) {
            let space = rest[..cut].rfind(' ').filter(|&i| i > 0);
            let at = if rest[cut..].starts_with(' ') {
                cut
            } else {
                space.unwrap_or(cut)
            };
            out.push(rest[..at].to_string());
            rest = rest[at..].trim_start_matches(' ');
        }
        out.push(rest.to_string());
    }
    out
}

/// The live sampler's line: strategy and what the last sample cost irqlab.
pub fn sampler_text(app: &App) -> String {
    let Some(s) = &app.sample else {
        return " strategy - │ self-cost -".to_string();
    };
    let strategy = s.strategy.map_or("-", |st| st.name());
    let c = &s.self_cost;
    let share = c.cpu_ns as f64 * 100.0 / app.interval.as_nanos().max(1) as f64;
    let mut t = format!(
        " strategy {strategy} │ self-cost {} µs CPU/sample ({share:.2}% of a CPU)",
        c.cpu_ns / 1000
    );
    if app.verbose {
        t.push_str(&format!(
            " │ user {} µs sys {} µs wall {} µs",
            c.user_ns / 1000,
            c.system_ns / 1000,
            c.wall_ns / 1000
        ));
    }
    t
}

/// `top --trace`'s line: exact irq/softirq share of all CPUs, the runs
/// the rows miss (a full map, programs the kernel skipped) when there
/// are some, and the busiest softirq vector's time and raise -> entry
/// latency.
pub fn trace_text(app: &App) -> Option<String> {
    use crate::trace::top;
    let t = app.trace()?;
    let mut s = format!(
        " traced: irq {:.2}% softirq {:.2}% of all CPUs",
        t.irq_pct, t.softirq_pct
    );
    let missed = t.dropped + t.missed.values().sum::<u64>();
    if missed > 0 {
        s.push_str(&format!(" ({missed} runs not traced)"));
    }
    if let Some(v) = t.softirqs.first() {
        s.push_str(&format!(
            " │ {} {} µs/s, latency p50 {} p99 {}",
            v.name,
            top::us_per_s(v.us_per_s),
            top::ns(v.latency_p50_ns),
            top::ns(v.latency_p99_ns)
        ));
    }
    Some(s)
}

/// The status line: interval, CPUs, sort key, filter, paused state (in
/// replay the player's).
pub fn status_text(app: &App) -> String {
    let all = app.irq_cpus().len();
    let cpus = match &app.cpus {
        None => format!("{all} CPUs"),
        Some(_) => format!(
            "CPUs {} ({} of {all})",
            app.cpus_text,
            app.selected_columns(app.irq_cpus()).len()
        ),
    };
    let filter = match app.filter_text() {
        "" => "none",
        f => f,
    };
    let state = match app.playback {
        Some(s) => s,
        None if app.paused => "PAUSED",
        None => "running",
    };
    format!(
        " every {} │ {cpus} │ sort {} │ filter {filter} │ {state} │ ?:help q:quit",
        format::interval(app.interval),
        app.sort.label()
    )
}

/// Widest the help box is, its border included.
const HELP_W: u16 = 70;

/// Key help, one line each (a key column 14 wide); [`help_lines`] adds
/// the gaps, and in replay the player's keys in place of [`PAUSE`].
const KEYS: [&str; 9] = [
    "q, Ctrl-C     quit",
    "s, r t i n    sort: cycle / by rate, total, IRQ number, name",
    "/             filter rows by regex (label, device, chip, action)",
    "c             select CPUs, e.g. 0-3,8 (empty = all)",
    "Ctrl-U Ctrl-W in a prompt: clear it / delete a word",
    PAUSE,
    "Tab, S-Tab    next / previous panel",
    "←/→ ↑/↓       scroll CPU columns / rows (Home End, PgUp PgDn too)",
    "?, h          this help (any key closes)",
];

/// Live `top`'s pause key, the player's in replay.
const PAUSE: &str = "p, space      pause / resume";

/// What the help calls a gap (`delta::Gap`), the reason a cell shows
/// `-`: every variant named, so a new one cannot be left out.
pub fn gap_words(g: Gap) -> &'static str {
    match g {
        Gap::CpuOnline => "CPU came online",
        Gap::CpuOffline => "CPU went offline",
        Gap::NewRow => "new row",
        Gap::IdentityChanged => "IRQ number reused",
        Gap::Reset => "counter reset",
        Gap::ShapeChanged => "row layout changed",
        Gap::OutOfRange => "count out of 32-bit range",
        Gap::ImpossibleRate => "impossible rate",
        Gap::MissingSamples => "samples missing (replay)",
    }
}

/// The help's lines: the keys (in `replay` the player's keys,
/// `replay::HELP_KEYS`, in place of the pause key), what RATE/s and
/// TOTAL are, then every gap a cell can show (`Gap::ALL`) wrapped to the
/// box's inside.
pub fn help_lines(replay: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for k in KEYS {
        if replay && k == PAUSE {
            lines.extend(super::replay::HELP_KEYS.map(String::from));
        } else {
            lines.push(k.to_string());
        }
    }
    lines.push("RATE/s over the interval, TOTAL since boot (all CPUs);".into());
    let gaps: Vec<&str> = Gap::ALL.iter().map(|&g| gap_words(g)).collect();
    let text = format!("'-' marks a gap: {}.", gaps.join(", "));
    lines.extend(wrap(&text, usize::from(HELP_W - 2)));
    lines
}

fn help(f: &mut Frame, body: Rect, replay: bool) {
    let text = help_lines(replay);
    let w = body.width.min(HELP_W);
    let h = body
        .height
        .min(u16::try_from(text.len() + 2).unwrap_or(u16::MAX));
    let area = Rect {
        x: body.x + (body.width - w) / 2,
        y: body.y + (body.height - h) / 2,
        width: w,
        height: h,
    };
    let lines: Vec<Line> = text.into_iter().map(Line::from).collect();
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" help ")),
        area,
    );
}
