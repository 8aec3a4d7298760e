//! The three body panels of `irqlab top`: IRQ rates per CPU, softirq rates
//! per CPU, and CPU time (per-CPU irq%/softirq% and interrupt threads).
//! With `top --trace` data: a `µs/s` handler-time column on IRQ rows,
//! `µs/s` and raise -> entry `LAT99` on softirq rows, exact `tIRQ%` and
//! `tSOFT%` per CPU.
//!
//! Pure rendering from [`App`]: CPU columns are named by real CPU id, only
//! the columns that fit are drawn (from `App::cpu_offset`), so no line is
//! ever wider than the area, whatever the CPU count; [`cpu_window`] says
//! which, for the panel and for the header's position.

use super::app::{self, App};
use super::format::{self, bold, heat, right, styled, CELL};
use crate::export::grid::visible_text;
use crate::report::name_of;
use crate::report::{IrqLine, StatSection};
use crate::trace::top::{self, TopTrace};
use irqlab_core::paths::shown;
use irqlab_core::Shape;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};
use ratatui::Frame;

/// Narrowest DEVICE column kept when CPU columns compete for space.
const DEVICE_MIN: u16 = 14;
const RATE_W: u16 = 8;
const TOTAL_W: u16 = 11;
const SOFT_W: u16 = 9;
/// Traced columns (`top --trace`): µs/s, latency.
const TRACE_W: u16 = 8;

/// A row's traced handler time in µs/s: `0.0` when it did not run, `-`
/// when no tracepoint sees it (NMI, TLB …).
fn handler_time(t: &TopTrace, label: &str) -> String {
    match t.irq(label) {
        Some(x) => top::us_per_s(x.us_per_s),
        None if top::traceable(label) => "0.0".into(),
        None => "-".into(),
    }
}

fn waiting(f: &mut Frame, area: Rect, app: &App, what: &str) {
    let text = if app.sample.is_none() {
        format!(
            "waiting for the first interval ({})…",
            format::interval(app.interval)
        )
    } else {
        format!("no {what} in this sample")
    };
    f.render_widget(Paragraph::new(text), area);
}

fn header_row<'a>(cells: Vec<String>, app: &App) -> Row<'a> {
    Row::new(cells).style(bold().patch(styled(app, Style::default().fg(Color::Cyan))))
}

/// Rates of the CPU columns `shown` in a row's per-CPU rates.
fn cpu_cells<'a>(
    app: &App,
    rates: Option<&Vec<Option<f64>>>,
    shown: &[(usize, u32)],
    max: f64,
) -> Vec<Cell<'a>> {
    shown
        .iter()
        .map(|&(i, _)| match rates.map(|r| r.get(i).copied().flatten()) {
            Some(Some(v)) => {
                Cell::from(right(&format::rate(v), CELL)).style(heat(app, Some(v), max))
            }
            Some(None) => Cell::from(right("-", CELL)).style(heat(app, None, max)),
            None => Cell::from(""),
        })
        .collect()
}

fn max_rate<'a>(
    rates: impl Iterator<Item = Option<&'a Vec<Option<f64>>>>,
    shown: &[(usize, u32)],
) -> f64 {
    rates
        .flatten()
        .flat_map(|r| {
            shown
                .iter()
                .filter_map(|&(i, _)| r.get(i).copied().flatten())
        })
        .fold(0.0, f64::max)
}

fn cpu_headers(shown: &[(usize, u32)]) -> Vec<String> {
    shown
        .iter()
        .map(|&(_, c)| right(&format!("CPU{c}"), CELL))
        .collect()
}

/// Device (chip) and, when known, where the IRQ may run (`→ 0-3`);
/// control characters as `\xNN` ([`crate::export::grid::visible`]).
fn device(l: &IrqLine) -> String {
    visible_text(&device_text(l)).into_owned()
}

/// [`device`] as the tree has it (control characters not yet escaped).
fn device_text(l: &IrqLine) -> String {
    let d = match (&l.chip, l.actions.is_empty()) {
        (Some(chip), false) => format!("{} ({chip})", name_of(l)),
        (Some(chip), true) => chip.clone(),
        (None, _) => name_of(l),
    };
    match &l.affinity {
        Some(a) => format!("{d} → {a}"),
        None => d,
    }
}

/// The CPU columns a panel draws: its section's selected columns, and
/// which of them fit from the scroll offset.
#[derive(Debug)]
pub struct CpuWindow {
    /// `(column index, CPU id)` of the selected CPUs.
    pub cols: Vec<(usize, u32)>,
    /// Index in `cols` of the first column drawn.
    pub start: usize,
    /// How many columns are drawn.
    pub n: usize,
}

impl CpuWindow {
    fn new(app: &App, cpus: &[u32], room: u16) -> CpuWindow {
        let cols = app.selected_columns(cpus);
        let (start, n) = format::window(cols.len(), app.cpu_offset, room);
        CpuWindow { cols, start, n }
    }

    /// The columns drawn.
    pub fn shown(&self) -> &[(usize, u32)] {
        self.cols
            .get(self.start..self.start + self.n)
            .unwrap_or_default()
    }
}

/// The CPU columns the active panel draws on a screen `width` wide
/// (`None`: a panel without CPU columns, or no sample yet).
pub fn cpu_window(app: &App, width: u16) -> Option<CpuWindow> {
    match app.panel {
        app::Panel::Irqs => irq_window(app, width),
        app::Panel::Softirqs => softirq_window(app, width),
        app::Panel::CpuTime => None,
    }
}

/// Width of the IRQ column: the longest label shown, 3 to 10.
fn label_width(app: &App) -> u16 {
    let longest = app.irq_lines().map(|l| l.label.len()).max();
    longest.unwrap_or(3).clamp(3, 10) as u16
}

/// The IRQ panel's columns before the CPUs' (IRQ, RATE/s, TOTAL, µs/s).
fn irq_fixed(app: &App) -> u16 {
    let trace_w = if app.trace().is_some() {
        TRACE_W + 1
    } else {
        0
    };
    label_width(app) + RATE_W + TOTAL_W + 3 + trace_w
}

fn irq_window(app: &App, width: u16) -> Option<CpuWindow> {
    let sec = app.report()?.interrupts.as_ref()?;
    let room = width.saturating_sub(irq_fixed(app) + DEVICE_MIN);
    Some(CpuWindow::new(app, &sec.cpus, room))
}

/// The softirq panel's columns before the CPUs' (SOFTIRQ, RATE/s, traced).
fn softirq_fixed(app: &App) -> u16 {
    let trace_w = if app.trace().is_some() {
        2 * (TRACE_W + 1)
    } else {
        0
    };
    SOFT_W + RATE_W + 2 + trace_w
}

fn softirq_window(app: &App, width: u16) -> Option<CpuWindow> {
    let sec = app.report()?.softirqs.as_ref()?;
    let room = width.saturating_sub(softirq_fixed(app));
    Some(CpuWindow::new(app, &sec.cpus, room))
}

/// The IRQ panel: one row per interrupts line.
pub fn irqs(f: &mut Frame, area: Rect, app: &App) {
    let Some(win) = irq_window(app, area.width) else {
        return waiting(f, area, app, shown::PROC_INTERRUPTS);
    };
    let rows = app.irq_rows();
    let label_w = label_width(app);
    let traced = app.trace();
    let shown = win.shown();
    let height = usize::from(area.height.saturating_sub(1));
    let visible: Vec<_> = rows.iter().skip(app.row_offset).take(height).collect();
    let max = max_rate(visible.iter().map(|r| r.0.rates.as_ref()), shown);
    let mut head = vec![
        "IRQ".to_string(),
        right("RATE/s", RATE_W),
        right("TOTAL", TOTAL_W),
    ];
    if traced.is_some() {
        head.push(right("µs/s", TRACE_W));
    }
    head.extend(cpu_headers(shown));
    head.push("DEVICE → AFFINITY".to_string());
    let body = visible.iter().map(|(l, total)| {
        let per_cpu = (l.shape == Shape::PerCpu)
            .then_some(l.rates.as_ref())
            .flatten();
        let mut cells = vec![
            Cell::from(visible_text(&l.label).into_owned()).style(bold()),
            Cell::from(right(
                &app.row_rate(l).map_or("-".to_string(), format::rate),
                RATE_W,
            )),
            Cell::from(right(
                &total.map_or("-".to_string(), format::count),
                TOTAL_W,
            )),
        ];
        if let Some(t) = traced {
            cells.push(Cell::from(right(&handler_time(t, &l.label), TRACE_W)));
        }
        cells.extend(cpu_cells(app, per_cpu, shown, max));
        cells.push(Cell::from(device(l)));
        Row::new(cells)
    });
    let mut widths = vec![
        Constraint::Length(label_w),
        Constraint::Length(RATE_W),
        Constraint::Length(TOTAL_W),
    ];
    if traced.is_some() {
        widths.push(Constraint::Length(TRACE_W));
    }
    widths.extend(shown.iter().map(|_| Constraint::Length(CELL)));
    widths.push(Constraint::Min(0));
    f.render_widget(Table::new(body, widths).header(header_row(head, app)), area);
}

/// The softirq panel: one row per vector.
pub fn softirqs(f: &mut Frame, area: Rect, app: &App) {
    let (Some(sec), Some(win)) = (
        app.report().and_then(|r| r.softirqs.as_ref()),
        softirq_window(app, area.width),
    ) else {
        return waiting(f, area, app, shown::PROC_SOFTIRQS);
    };
    let cols = &win.cols;
    let traced = app.trace();
    let shown = win.shown();
    let height = usize::from(area.height.saturating_sub(1));
    let visible: Vec<_> = sec.rows.iter().skip(app.row_offset).take(height).collect();
    let max = max_rate(visible.iter().map(|r| r.rates.as_ref()), shown);
    let mut head = vec!["SOFTIRQ".to_string(), right("RATE/s", RATE_W)];
    if traced.is_some() {
        head.push(right("µs/s", TRACE_W));
        head.push(right("LAT99", TRACE_W));
    }
    head.extend(cpu_headers(shown));
    let body = visible.iter().map(|r| {
        let total = match (&app.cpus, &r.rates) {
            (Some(_), Some(v)) => app::rate_over(v, cols),
            _ => r.total_rate,
        };
        let mut cells = vec![
            Cell::from(r.name.clone()).style(bold()),
            Cell::from(right(&total.map_or("-".to_string(), format::rate), RATE_W)),
        ];
        if let Some(t) = traced {
            let s = t.softirq(&r.name);
            let time = s.map_or("0.0".into(), |s| top::us_per_s(s.us_per_s));
            let lat = top::ns(s.and_then(|s| s.latency_p99_ns));
            cells.push(Cell::from(right(&time, TRACE_W)));
            cells.push(Cell::from(right(&lat, TRACE_W)));
        }
        cells.extend(cpu_cells(app, r.rates.as_ref(), shown, max));
        Row::new(cells)
    });
    let mut widths = vec![Constraint::Length(SOFT_W), Constraint::Length(RATE_W)];
    if traced.is_some() {
        widths.extend([Constraint::Length(TRACE_W); 2]);
    }
    widths.extend(shown.iter().map(|_| Constraint::Length(CELL)));
    f.render_widget(Table::new(body, widths).header(header_row(head, app)), area);
}

/// The CPU-time panel: per-CPU shares on the left, threads on the right;
/// below the shares when the terminal is too narrow for both side by side.
pub fn cpu_time(f: &mut Frame, area: Rect, app: &App) {
    // a CPU selection: its CPUs summed first (`sel`), not the whole machine
    let selected = app.selected_cpu_time();
    let stat = selected
        .as_ref()
        .or_else(|| app.report().and_then(|r| r.stat.as_ref()));
    let shares_w = if app.trace().is_some() { 69 } else { 55 };
    if area.width >= shares_w + 32 {
        let [left, right_area] =
            Layout::horizontal([Constraint::Length(shares_w), Constraint::Min(0)]).areas(area);
        cpu_shares(f, left, app, stat);
        threads(f, right_area, app);
        return;
    }
    // title + header + the lines + one blank, at most two thirds
    let lines = stat.map_or(0, |s| s.cpu_pct.len());
    let want = u16::try_from(lines).unwrap_or(u16::MAX).saturating_add(3);
    let top = want.min(area.height.saturating_sub(area.height / 3));
    let [upper, lower] =
        Layout::vertical([Constraint::Length(top), Constraint::Min(0)]).areas(area);
    cpu_shares(f, upper, app, stat);
    threads(f, lower, app);
}

/// The CPU-time lines of `stat` (the report's, or a CPU selection's).
fn cpu_shares(f: &mut Frame, area: Rect, app: &App, stat: Option<&StatSection>) {
    let Some(stat) = stat else {
        return waiting(f, area, app, shown::PROC_STAT);
    };
    let traced = app.trace();
    // every /proc/stat share, so that a line adds up to 100 % (as
    // `top --batch`'s), in mpstat's order
    let mut names = vec!["CPU"];
    names.extend(crate::report::CPU_PCT_HEADINGS);
    if traced.is_some() {
        // exact: sums of traced durations (the /proc columns are 0 or ticks)
        names.extend(["tIRQ%", "tSOFT%"]);
    }
    let head = names
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if i == 0 {
                h.to_string()
            } else {
                right(h, width(h))
            }
        })
        .collect();
    let height = usize::from(area.height.saturating_sub(2));
    let body = stat
        .cpu_pct
        .iter()
        .filter(|l| l.cpu.is_none_or(|c| app.cpu_selected(c)))
        .skip(app.row_offset)
        .take(height)
        .map(|l| {
            let name = l
                .cpu
                .map_or(stat.aggregate_label().to_string(), |c| c.to_string());
            let vals = match &l.pct {
                Some(p) => p.in_print_order().map(|v| right(&format::pct(v), 5)),
                None => std::array::from_fn(|_| right("-", 5)),
            };
            let mut cells = vec![Cell::from(name).style(bold())];
            cells.extend(vals.into_iter().map(Cell::from));
            if let Some(t) = traced {
                let exact = match l.cpu {
                    None => Some((t.irq_pct, t.softirq_pct)),
                    Some(c) => t.cpu(c).map(|x| (x.irq_pct, x.softirq_pct)),
                };
                let (i, s) = exact.map_or(("-".into(), "-".into()), |(i, s)| {
                    (format::pct(i), format::pct(s))
                });
                cells.push(Cell::from(right(&i, width("tIRQ%"))));
                cells.push(Cell::from(right(&s, width("tSOFT%"))));
            }
            Row::new(cells)
        });
    let widths = names.iter().map(|h| Constraint::Length(width(h)));
    let title = match stat.aggregate_cpus.as_ref().filter(|c| !c.is_empty()) {
        Some(c) => format!(
            "CPU time over the interval (sel = {} {} together)",
            if c.len() == 1 { "CPU" } else { "CPUs" },
            irqlab_core::CpuList::from_cpus(c.iter().copied())
        ),
        None => "CPU time over the interval".to_string(),
    };
    let table = Table::new(body, widths)
        .header(header_row(head, app))
        .block(Block::new().title(Line::from(title).style(bold())));
    f.render_widget(table, area);
}

/// Width of a CPU panel column: its heading (`tSOFT%`: 6), at least 5
/// (`100.0`).
fn width(heading: &str) -> u16 {
    u16::try_from(heading.len()).unwrap_or(6).max(5)
}

fn threads(f: &mut Frame, area: Rect, app: &App) {
    let block = Block::new().title(Line::from("interrupt threads").style(bold()));
    if app.threads.is_empty() {
        let p = Paragraph::new("no ksoftirqd/ or irq/ threads found").block(block);
        return f.render_widget(p, area);
    }
    let mut list: Vec<_> = app.threads.iter().collect();
    list.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.name.cmp(&b.name)));
    let head = vec![right("PID", 7), right("CPU%", 6), "THREAD".to_string()];
    let height = usize::from(area.height.saturating_sub(2));
    let body = list.into_iter().take(height).map(|t| {
        Row::new(vec![
            Cell::from(right(&format::pid_text(t.pid), 7)),
            Cell::from(right(&format::pct(t.cpu_pct), 6)),
            Cell::from(t.name.clone()),
        ])
    });
    let widths = [
        Constraint::Length(7),
        Constraint::Length(6),
        Constraint::Min(0),
    ];
    let table = Table::new(body, widths)
        .header(header_row(head, app))
        .block(block);
    f.render_widget(table, area);
}
