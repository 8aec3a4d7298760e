//! Aligned text grids: the one writer of column-aligned terminal tables
//! (`show`'s table, compare's describe grids, the bench summary, probe's
//! table, `top --batch` text).
//!
//! Cells are written with `write!` into one shared buffer (no `String` per
//! cell); widths are measured in characters once all rows are in; each
//! line is written with trailing spaces trimmed. Owns layout only: callers
//! format the numbers.

use std::fmt::{Display, Write as _};
use std::io;

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

    /// Append a cell to the current row.
    pub fn cell(&mut self, v: impl Display) -> &mut Self {
        // Writing into a String cannot fail.
        let _ = write!(self.text, "{v}");
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
    fn trailing_spaces_trimmed() {
        let mut g = Grid::new().align(1, Align::Left);
        g.row(["1", "a"]).row(["22", "bbb"]);
        assert_eq!(text(&g), " 1  a\n22  bbb\n");
        assert!(Grid::default().is_empty());
        assert_eq!(text(&Grid::new()), "");
    }
}
