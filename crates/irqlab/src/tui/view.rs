//! Pure rendering of the whole screen from an [`App`]: the tab header, the
//! active panel (or help), and the status/footer line. No I/O, no state
//! changes: `draw` can be called with a ratatui `TestBackend`.

use super::app::{App, InputKind, Panel};
use super::format::{self, bold, styled};
use super::panels;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

/// Draw the screen.
pub fn draw(f: &mut Frame, app: &App) {
    let [top, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(f.area());
    header(f, top, app);
    match app.panel {
        Panel::Irqs => panels::irqs(f, body, app),
        Panel::Softirqs => panels::softirqs(f, body, app),
        Panel::CpuTime => panels::cpu_time(f, body, app),
    }
    if app.help {
        help(f, body);
    }
    footer(f, foot, app);
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
    let right = position(app);
    let w = (right.chars().count() as u16).min(area.width);
    let [l, r] = Layout::horizontal([Constraint::Min(0), Constraint::Length(w)]).areas(area);
    f.render_widget(Paragraph::new(Line::from(spans)), l);
    f.render_widget(Paragraph::new(right), r);
}

/// Where the view is: first row shown of how many, first CPU column.
fn position(app: &App) -> String {
    let rows = app.row_count();
    if rows == 0 {
        return String::new();
    }
    let row = format!("row {} of {rows}", app.row_offset.saturating_add(1));
    let cols = app.selected_columns(app.irq_cpus());
    match cols.get(app.cpu_offset) {
        Some(&(_, first)) if app.panel != Panel::CpuTime => {
            let col = app.cpu_offset.saturating_add(1);
            format!(" {row} │ col {col} of {}: CPU{first} ←/→ ", cols.len())
        }
        _ => format!(" {row} "),
    }
}

fn footer(f: &mut Frame, area: Rect, app: &App) {
    let line = if let Some(input) = &app.input {
        let prompt = match input.kind {
            InputKind::Filter => "filter (regex, Enter applies, Esc cancels): ",
            InputKind::Cpus => "CPUs (e.g. 0-3,8; empty = all): ",
        };
        Line::from(vec![
            Span::styled(prompt, bold()),
            Span::raw(format!("{}_", input.text)),
        ])
    } else if let Some((msg, _)) = &app.status {
        Line::from(Span::styled(
            msg.clone(),
            bold().patch(styled(app, Style::default().fg(Color::Red))),
        ))
    } else {
        Line::from(status_text(app))
    };
    f.render_widget(Paragraph::new(line), area);
}

/// The status line: interval, CPUs, sort key, filter, paused state.
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
    let filter = app.filter.as_ref().map_or("none", |r| r.as_str());
    let state = if app.paused { "PAUSED" } else { "running" };
    format!(
        " every {} │ {cpus} │ sort {} │ filter {filter} │ {state} │ ?:help q:quit",
        format::interval(app.interval),
        app.sort.label()
    )
}

/// Key help, one line each.
pub const HELP: [&str; 13] = [
    "q, Ctrl-C     quit",
    "s             cycle sort: rate, total, irq, name",
    "r t i n       sort by rate / total / IRQ number / name",
    "/             filter rows by regex (Enter applies, Esc cancels)",
    "c             select CPUs, e.g. 0-3,8 (empty = all)",
    "p, space      pause / resume",
    "Tab, S-Tab    next / previous panel",
    "←/→ Home End  scroll CPU columns",
    "↑/↓ PgUp PgDn scroll rows",
    "?, h          this help (any key closes)",
    "",
    "RATE/s over the interval, TOTAL since boot (all CPUs);",
    "'-' marks a gap (CPU hotplug, new or reused IRQ, reset).",
];

fn help(f: &mut Frame, body: Rect) {
    let w = body.width.min(70);
    let h = body.height.min(HELP.len() as u16 + 2);
    let area = Rect {
        x: body.x + (body.width - w) / 2,
        y: body.y + (body.height - h) / 2,
        width: w,
        height: h,
    };
    let lines: Vec<Line> = HELP.iter().map(|l| Line::from(*l)).collect();
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" help ")),
        area,
    );
}
