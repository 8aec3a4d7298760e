//! Aligned text grids: the one writer of column-aligned terminal tables
//! (`show`'s table, compare's describe grids, the bench summary, probe's
//! table, `top --batch` text).
//!
//! Cells are written with `write!` into one shared buffer (no `String` per
//! cell); widths are measured in characters once all rows are in; each
//! line is written with trailing spaces trimmed. Owns layout only: callers
//! format the numbers.
//!
//! Text from a tree (`--root` may be a sosreport: untrusted) never
//! reaches a terminal as control bytes: every control character (C0
//! including NUL and ESC, DEL, C1 U+0080–U+009F) of a cell is written as
//! `\xNN` (its code point in hex) before widths are measured
//! ([`visible`], [`visible_width`]; also for the text blocks of `top
//! --batch`, which do not go through a grid).

use std::fmt::{Display, Write as _};
use std::io;

/// A control character: C0 (NUL, ESC …), DEL or C1.
fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}')
}

/// True when `s` has a control character (the fast test of the common
/// case, byte by byte: a C1 character is `0xC2 0x80..=0x9F` in UTF-8).
fn has_control(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().any(|(i, &x)| {
        x < 0x20
            || x == 0x7f
            || (x == 0xc2 && b.get(i + 1).is_some_and(|n| (0x80..0xa0).contains(n)))
    })
}

/// Write `s` to `out` with every control character as `\xNN`.
pub fn visible(out: &mut impl std::fmt::Write, s: &str) -> std::fmt::Result {
    if !has_control(s) {
        return out.write_str(s);
    }
    let mut rest = s;
    while let Some((i, c)) = rest.char_indices().find(|&(_, c)| is_control(c)) {
        out.write_str(rest.get(..i).unwrap_or_default())?;
        write!(out, "\\x{:02x}", u32::from(c))?;
        rest = rest.get(i + c.len_utf8()..).unwrap_or_default();
    }
    out.write_str(rest)
}

/// `s` with every control character as `\xNN` (borrowed when it has none).
pub fn visible_text(s: &str) -> std::borrow::Cow<'_, str> {
    if !has_control(s) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut t = String::with_capacity(s.len() + 8);
    let _ = visible(&mut t, s);
    std::borrow::Cow::Owned(t)
}

/// Printed width (chars) of `s` as [`visible`] writes it.
pub fn visible_width(s: &str) -> usize {
    if s.is_ascii() && !has_control(s) {
        return s.len();
    }
    s.chars().map(|c| if is_control(c) { 4 } else { 1 }).sum()
}

/// A `fmt::Write` that writes through [`visible`].
struct Visible<'a>(&'a mut String);

impl std::fmt::Write for Visible<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        visible(self.0, s)
    }
}

/// How a column's cells are padded to its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left (the default).
    Right,
}

/// A grid of text cells, built row by row, then written aligned.
#[derive(Debug, Clone)]
pub struct Grid {
    /// All cell text, back to back.
    text: String,
    /// End offset in `text` of every cell, in order.
    cell_ends: Vec<usize>,
    /// Number of cells in `cell_ends` at the end of every row.
    row_ends: Vec<usize>,
    aligns: Vec<Align>,
    sep: &'static str,
    indent: &'static str,
    /// Separator before a free (unpadded, left) last column of each row.
    free_last: Option<&'static str>,
}

impl Default for Grid {
    fn default() -> Self {
        Self::new()
    }
}

impl Grid {
    /// An empty grid: columns right-aligned, separated by two spaces.
    pub fn new() -> Self {
        Grid {
            text: String::new(),
            cell_ends: Vec::new(),
            row_ends: Vec::new(),
            aligns: Vec::new(),
            sep: "  ",
            indent: "",
            free_last: None,
        }
    }

    /// Align column `col` (0-based); columns not set are right-aligned.
    pub fn align(mut self, col: usize, a: Align) -> Self {
        if self.aligns.len() <= col {
            self.aligns.resize(col + 1, Align::Right);
        }
        if let Some(slot) = self.aligns.get_mut(col) {
            *slot = a;
        }
        self
    }

    /// Text between two columns (default two spaces).
    pub fn separator(mut self, sep: &'static str) -> Self {
        self.sep = sep;
        self
    }

    /// Text written before every line (default none).
    pub fn indent(mut self, indent: &'static str) -> Self {
        self.indent = indent;
        self
    }

    /// The last cell of each row (of two or more cells) is free text: not
    /// padded, not counted in any width, written after `sep`.
    pub fn free_last(mut self, sep: &'static str) -> Self {
        self.free_last = Some(sep);
        self
    }

    /// Append a cell to the current row (control characters as `\xNN`).
    pub fn cell(&mut self, v: impl Display) -> &mut Self {
        // Writing into a String cannot fail.
        let _ = write!(Visible(&mut self.text), "{v}");
        self.cell_ends.push(self.text.len());
        self
    }

    /// Append cells to the current row.
    pub fn cells<I>(&mut self, it: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: Display,
    {
        for v in it {
            self.cell(v);
        }
        self
    }

    /// End the current row (a row may be empty: it prints an empty line).
    pub fn end_row(&mut self) -> &mut Self {
        self.row_ends.push(self.cell_ends.len());
        self
    }

    /// Append a whole row.
    pub fn row<I>(&mut self, it: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: Display,
    {
        self.cells(it).end_row()
    }

    /// Number of finished rows.
    pub fn len(&self) -> usize {
        self.row_ends.len()
    }

    /// True when no row was finished.
    pub fn is_empty(&self) -> bool {
        self.row_ends.is_empty()
    }

    /// The cells of finished row `r`.
    fn row_cells(&self, r: usize) -> impl Iterator<Item = &str> + '_ {
        let first = if r == 0 {
            0
        } else {
            self.row_ends.get(r - 1).copied().unwrap_or(0)
        };
        let last = self.row_ends.get(r).copied().unwrap_or(first);
        (first..last).map(move |i| {
            let start = if i == 0 {
                0
            } else {
                self.cell_ends.get(i - 1).copied().unwrap_or(0)
            };
            let end = self.cell_ends.get(i).copied().unwrap_or(start);
            self.text.get(start..end).unwrap_or("")
        })
    }

    fn is_free(&self, col: usize, ncells: usize) -> bool {
        self.free_last.is_some() && ncells > 1 && col + 1 == ncells
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = Vec::new();
        for r in 0..self.len() {
            let n = self.row_cells(r).count();
            for (c, cell) in self.row_cells(r).enumerate() {
                if self.is_free(c, n) {
                    continue;
                }
                if w.len() <= c {
                    w.resize(c + 1, 0);
                }
                if let Some(slot) = w.get_mut(c) {
                    *slot = (*slot).max(cell.chars().count());
                }
            }
        }
        w
    }

    /// Write every finished row, one line each.
    pub fn write_to(&self, out: &mut impl io::Write) -> io::Result<()> {
        let widths = self.widths();
        let mut line = String::new();
        for r in 0..self.len() {
            self.format_row(r, &widths, &mut line);
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// The aligned lines, without newlines (for callers that decorate them).
    pub fn lines(&self) -> Vec<String> {
        let widths = self.widths();
        (0..self.len())
            .map(|r| {
                let mut line = String::new();
                self.format_row(r, &widths, &mut line);
                line
            })
            .collect()
    }

    fn format_row(&self, r: usize, widths: &[usize], line: &mut String) {
        line.clear();
        line.push_str(self.indent);
        let n = self.row_cells(r).count();
        for (c, cell) in self.row_cells(r).enumerate() {
            if self.is_free(c, n) {
                line.push_str(self.free_last.unwrap_or(""));
                line.push_str(cell);
                continue;
            }
            if c > 0 {
                line.push_str(self.sep);
            }
            let pad = widths
                .get(c)
                .copied()
                .unwrap_or(0)
                .saturating_sub(cell.chars().count());
            let align = self.aligns.get(c).copied().unwrap_or(Align::Right);
            if align == Align::Right {
                line.extend(std::iter::repeat_n(' ', pad));
            }
            line.push_str(cell);
            if align == Align::Left {
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        if n == 0 {
            line.clear();
        }
        let keep = line.trim_end().len();
        line.truncate(keep);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn text(g: &Grid) -> String {
        let mut out = Vec::new();
        g.write_to(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_right_text_left() {
        let mut g = Grid::new().align(0, Align::Left);
        g.row(["name", "n", "rate"]);
        g.cell("eth0-rx-0").cell(12).cell(3.5).end_row();
        g.row(["µ", "1234", "-"]);
        assert_eq!(
            text(&g),
            "name          n  rate\n\
             eth0-rx-0    12   3.5\n\
             µ          1234     -\n"
        );
        assert_eq!(g.len(), 3);
        assert_eq!(g.lines()[2], "µ          1234     -");
    }

    #[test]
    fn free_last_column_and_ragged_rows() {
        let mut g = Grid::new().separator(" ").free_last("  ").indent("> ");
        g.row(["IRQ", "CPU0", "DESCRIPTION"]);
        g.row(["0:", "44", "IO-APIC 2-edge timer"]);
        g.row(["LOC:", "123456", "Local timer interrupts"]);
        g.row(["x"]);
        g.end_row();
        assert_eq!(
            text(&g),
            ">  IRQ   CPU0  DESCRIPTION\n\
             >   0:     44  IO-APIC 2-edge timer\n\
             > LOC: 123456  Local timer interrupts\n\
             >    x\n\
             \n"
        );
    }

    #[test]
    fn control_characters_are_escaped_before_widths() {
        let mut g = Grid::new().separator(" ").free_last("  ");
        g.row(["7:", "a\x1b[2J\0b\x7f\u{9b}c\u{a0}", "\x1b]0;pwned\x07evil"]);
        g.row(["10:", "x", "ok"]);
        let t = text(&g);
        assert!(!t.chars().any(is_control_or_newline), "{t:?}");
        let first = " 7: a\\x1b[2J\\x00b\\x7f\\x9bc\u{a0}  \\x1b]0;pwned\\x07evil\n";
        // the escaped cell is 23 chars wide: the next row is padded to it
        assert_eq!(t, format!("{first}10: {:>23}  ok\n", "x"));
        assert_eq!(visible_width("a\x1b\u{85}é"), 10);
        assert_eq!(visible_text("plain"), "plain");
        assert_eq!(visible_text("\t\n"), "\\x09\\x0a");
    }

    fn is_control_or_newline(c: char) -> bool {
        c != '\n' && is_control(c)
    }

    #[test]
    fn trailing_spaces_trimmed() {
        let mut g = Grid::new().align(1, Align::Left);
        g.row(["1", "a"]).row(["22", "bbb"]);
        assert_eq!(text(&g), " 1  a\n22  bbb\n");
        assert!(Grid::default().is_empty());
        assert_eq!(text(&Grid::new()), "");
    }
}
