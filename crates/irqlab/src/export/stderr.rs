//! Messages on stderr as every command writes them (errors, warnings,
//! notes): each in one write, every control character but the newline
//! shown as `\xNN` (`grid::visible`), so that a path or name from a tree
//! (`--root` may be untrusted: a directory or file name holding ESC)
//! cannot drive the terminal; a write that fails (a closed pipe,
//! `2>/dev/full`) is dropped, never a panic. The crate's `eprintln!` and
//! `eprint!` (lib.rs) write through [`write()`]. Human-readable lines
//! written elsewhere (the stdout lines of `restore`, `guard-selftest` and
//! `man --out`, the bench progress bar's message) show their text through
//! [`visible_lines`] too.

use super::grid::{visible, visible_text};
use std::borrow::Cow;
use std::io::Write as _;

/// `text` with every control character except `\n` as `\xNN`
/// (borrowed when it has none).
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    if text
        .split('\n')
        .all(|l| matches!(visible_text(l), Cow::Borrowed(_)))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = visible(&mut out, line);
    }
    Cow::Owned(out)
}

/// `message` (and a newline when `newline`) on stderr in one write,
/// through [`visible_lines`]; a failed write is dropped.
pub fn write(message: std::fmt::Arguments<'_>, newline: bool) {
    let formatted;
    let raw = match message.as_str() {
        Some(s) => s,
        None => {
            formatted = message.to_string();
            &formatted
        }
    };
    let mut text = visible_lines(raw).into_owned();
    if newline {
        text.push('\n');
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_but_newlines_are_shown_as_hex() {
        assert_eq!(visible_lines("a\nb"), "a\nb");
        assert!(matches!(visible_lines("a\nb"), Cow::Borrowed(_)));
        assert_eq!(
            visible_lines("irqlab: error: /t/\x1b[31mx/proc\nirqlab: \t\r\u{9b}"),
            "irqlab: error: /t/\\x1b[31mx/proc\nirqlab: \\x09\\x0d\\x9b"
        );
        assert_eq!(visible_lines("\n\x07\n"), "\n\\x07\n");
    }
}
