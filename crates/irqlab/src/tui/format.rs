//! Text and style helpers for the view: fixed-width numbers, intensity
//! colours (only when the App allows colour), and the CPU column window.
//! Pure: no terminal, no I/O.

use super::app::App;
use ratatui::style::{Color, Modifier, Style};
use std::time::Duration;

/// Width of one per-CPU cell (`CPU1151` fits).
pub const CELL: u16 = 7;

/// A rate in at most 7 characters.
pub fn rate(r: f64) -> String {
    if !r.is_finite() || r < 0.05 {
        "0".to_string()
    } else if r < 10.0 {
        format!("{r:.1}")
    } else if r < 1e6 {
        format!("{r:.0}")
    } else if r < 1e9 {
        format!("{:.2}M", r / 1e6)
    } else if r < 1e12 {
        format!("{:.2}G", r / 1e9)
    } else {
        ">999G".to_string()
    }
}

/// A count in at most 11 characters.
pub fn count(c: u64) -> String {
    if c < 100_000_000_000 {
        c.to_string()
    } else {
        format!("{:.1}T", c as f64 / 1e12)
    }
}

/// A percentage in at most 6 characters.
pub fn pct(p: f64) -> String {
    format!("{p:.1}")
}

/// A thread's pid, `-` when not known (replayed from a recording that
/// kept no PIDs).
pub fn pid_text(pid: Option<u32>) -> String {
    pid.map_or_else(|| "-".to_string(), |p| p.to_string())
}

/// `s` right-aligned in `w` columns.
pub fn right(s: &str, w: u16) -> String {
    format!("{s:>w$}", w = usize::from(w))
}

/// `1s`, `200ms`, `1.5s`.
pub fn interval(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 == 0 && ms > 0 {
        format!("{}s", ms / 1000)
    } else if d.subsec_nanos() % 1_000_000 == 0 {
        format!("{ms}ms")
    } else {
        format!("{:.3}s", d.as_secs_f64())
    }
}

/// `style` when colour is on, else the plain style.
pub fn styled(app: &App, style: Style) -> Style {
    if app.color {
        style
    } else {
        Style::default()
    }
}

/// Bold (also without colour: bold is not a colour).
pub fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

/// Colour of a cell by its share of the largest visible rate.
pub fn heat(app: &App, r: Option<f64>, max: f64) -> Style {
    let s = match r {
        None => Style::default().fg(Color::DarkGray),
        Some(v) if v < 0.05 || max <= 0.0 => Style::default().fg(Color::DarkGray),
        Some(v) if v >= max * 0.5 => Style::default().fg(Color::Red),
        Some(v) if v >= max * 0.1 => Style::default().fg(Color::Yellow),
        Some(_) => Style::default().fg(Color::Green),
    };
    styled(app, s)
}

/// Which CPU columns fit: `(first, how many)` of `ncols` columns starting
/// at `offset` in `width` columns of screen (each cell plus one space).
pub fn window(ncols: usize, offset: usize, width: u16) -> (usize, usize) {
    let fit = usize::from(width / (CELL + 1));
    let start = offset.min(ncols.saturating_sub(1));
    (start, fit.min(ncols.saturating_sub(start)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_fit_their_columns() {
        for r in [0.0, 0.04, 0.5, 9.99, 12.0, 999_999.0, 1.5e6, 9.99e8, 3e12] {
            assert!(rate(r).len() <= usize::from(CELL), "{r} -> {}", rate(r));
        }
        assert_eq!(rate(f64::NAN), "0");
        assert!(count(u64::MAX).len() <= 11);
        assert_eq!(count(42), "42");
        assert_eq!(right("7", 3), "  7");
    }

    #[test]
    fn intervals_read_naturally() {
        assert_eq!(interval(Duration::from_secs(1)), "1s");
        assert_eq!(interval(Duration::from_millis(200)), "200ms");
        assert_eq!(interval(Duration::from_micros(1250)), "0.001s");
    }

    #[test]
    fn window_never_exceeds_columns_or_width() {
        assert_eq!(window(1152, 0, 80), (0, 10));
        assert_eq!(window(1152, 5000, 80), (1151, 1));
        assert_eq!(window(0, 3, 80), (0, 0));
        assert_eq!(window(4, 1, 0), (1, 0));
    }
}
