//! `irqlab man [--out DIR]`: manual pages generated from the clap
//! definitions (`clap_mangen`): `irqlab.1` on stdout, or `irqlab.1` plus
//! one `irqlab-<subcommand>.1` per visible subcommand written into DIR
//! (none for `help`). After-help examples become an EXAMPLES section
//! with unfilled command lines; the roff is ASCII only. The list of
//! written pages shows control characters in their paths as `\xNN` (as
//! stderr does). Reads nothing; writes only stdout or DIR.

use crate::export::stderr::visible_lines;
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `irqlab man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Install, e.g.:\n  \
    irqlab man --out ~/.local/share/man/man1 && man irqlab-show")]
pub struct Args {
    /// Write `irqlab.1` and `irqlab-<subcommand>.1` into DIR (created if
    /// missing) instead of printing irqlab.1 to stdout.
    #[arg(long, value_name = "DIR", value_parser = super::args::path())]
    pub out: Option<PathBuf>,
}

/// Print or write the pages.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.out {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&main_page()?).context("writing to stdout")?;
            out.flush().context("writing to stdout")?;
        }
        Some(dir) => {
            // the written pages' paths, their control characters shown
            // as on stderr (`export::stderr`); a failed write is an error
            // naming stdout (`export::stdout`), never a panic
            let mut out = crate::export::stdout::stdout();
            for (name, _) in write_all(&dir)? {
                let path = dir.join(name).display().to_string();
                writeln!(out, "{}", visible_lines(&path))?;
            }
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `irqlab.1`: the top-level page (synopsis, options, subcommand list).
pub fn main_page() -> anyhow::Result<Vec<u8>> {
    render(root())
}

/// The visible command tree ([`crate::cli::visible_command`]) without
/// clap's `help` subcommand: no page for it, and none listed.
fn root() -> clap::Command {
    let mut root = crate::cli::visible_command().disable_help_subcommand(true);
    root.build();
    root
}

/// Every page as `(file name, roff)`: `irqlab.1`, then one per visible
/// subcommand (`irqlab-show.1` …, titled so, with the synopsis as typed:
/// `irqlab show …`).
pub fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let root = root();
    let mut pages = vec![("irqlab.1".to_string(), render(root.clone())?)];
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        let file = format!("irqlab-{name}");
        let page = sub
            .clone()
            .display_name(file.clone())
            .bin_name(format!("irqlab {name}"));
        pages.push((format!("{file}.1"), render(page)?));
    }
    Ok(pages)
}

/// Write [`pages`] into `dir`; returns what was written.
pub fn write_all(dir: &Path) -> anyhow::Result<Vec<(String, usize)>> {
    out_dir(dir)?;
    let mut written = Vec::new();
    for (name, roff) in pages()? {
        let path = dir.join(&name);
        std::fs::write(&path, &roff).with_context(|| format!("writing {}", path.display()))?;
        written.push((name, roff.len()));
    }
    Ok(written)
}

/// `--out DIR` as a directory: kept if it is one, made (with its parents)
/// if missing; anything else that exists there is refused by the flag's
/// name, not by the `EEXIST` of making it.
fn out_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => anyhow::bail!(
            "--out {}: not a directory (--out takes the directory the pages are \
             written into, made if missing)",
            dir.display()
        ),
        Err(_) => std::fs::create_dir_all(dir)
            .with_context(|| format!("--out {}: making the directory", dir.display())),
    }
}

/// clap_mangen's sections, with the after-help text as an EXAMPLES
/// section (command lines unfilled, so that comments stay beside their
/// command) instead of a filled "EXTRA", and only ASCII in the roff.
fn render(mut cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    cmd.build();
    let examples = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(|s| s.to_string());
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subs = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_version = cmd.get_version().is_some() || cmd.get_long_version().is_some();
    let man = clap_mangen::Man::new(cmd).source(concat!("irqlab ", env!("CARGO_PKG_VERSION")));
    let mut buf = Vec::new();
    let err = |e| anyhow::Error::new(e).context("rendering the man page");
    man.render_title(&mut buf).map_err(err)?;
    man.render_name_section(&mut buf).map_err(err)?;
    man.render_synopsis_section(&mut buf).map_err(err)?;
    man.render_description_section(&mut buf).map_err(err)?;
    if has_args {
        man.render_options_section(&mut buf).map_err(err)?;
    }
    if has_subs {
        man.render_subcommands_section(&mut buf).map_err(err)?;
    }
    if let Some(text) = examples {
        buf.extend_from_slice(examples_section(&text).as_bytes());
    }
    if has_version {
        man.render_version_section(&mut buf).map_err(err)?;
    }
    // every section rendered alone repeats clap_mangen's preamble: keep one
    let text = String::from_utf8_lossy(&buf);
    let mut out = String::with_capacity(text.len());
    let (mut ie, mut el) = (false, false);
    for line in text.lines() {
        let seen = if line.starts_with(".ie \\n(.g .ds Aq") {
            std::mem::replace(&mut ie, true)
        } else if line.starts_with(".el .ds Aq") {
            std::mem::replace(&mut el, true)
        } else {
            false
        };
        if seen {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(ascii(&out).into_bytes())
}

/// `.SH EXAMPLES` from after-help text: indented lines are command lines,
/// kept as written (`.nf`, indented); other lines are paragraphs (a bare
/// `Examples:` heading is the section's title already).
fn examples_section(text: &str) -> String {
    let mut out = String::from(".SH EXAMPLES\n");
    let mut unfilled = false;
    for line in text.lines() {
        let code = line.starts_with(' ') && !line.trim().is_empty();
        if code && !unfilled {
            out.push_str(".PP\n.RS 2\n.nf\n");
            unfilled = true;
        } else if !code && unfilled {
            out.push_str(".fi\n.RE\n");
            unfilled = false;
        }
        if code {
            out.push_str(&escape(line.trim_start(), true));
        } else if line.trim().is_empty() || line.trim() == "Examples:" {
            continue;
        } else {
            out.push_str(".PP\n");
            out.push_str(&escape(line.trim(), false));
        }
        out.push('\n');
    }
    if unfilled {
        out.push_str(".fi\n.RE\n");
    }
    out
}

/// `line` as roff text: backslashes escaped, a leading `.` or `'` not
/// read as a request, and in command lines `-` as the minus sign `\-`
/// (so that a copied option is typed right).
fn escape(line: &str, command: bool) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    if line.starts_with(['.', '\'']) {
        out.push_str("\\&");
    }
    for c in line.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' if command => out.push_str("\\-"),
            c => out.push(c),
        }
    }
    out
}

/// Roff in ASCII: `...` for `…`, `u` for `µ`, groff's named glyphs for
/// the other characters the help texts use (`\(mu` ×, `\(->` → …),
/// `\[uXXXX]` for anything else, so that `groff -ww` is quiet and a C locale loses
/// nothing.
fn ascii(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for c in roff.chars() {
        match c {
            c if c.is_ascii() => out.push(c),
            '…' => out.push_str("..."),
            '×' => out.push_str("\\(mu"),
            '→' => out.push_str("\\(->"),
            '←' => out.push_str("\\(<-"),
            '≤' => out.push_str("\\(<="),
            '≥' => out.push_str("\\(>="),
            '≈' => out.push_str("\\(~~"),
            '±' => out.push_str("\\(+-"),
            // `us`, as in ASCII units (groff -Tascii has no micro sign)
            'µ' | 'μ' => out.push('u'),
            '—' => out.push_str("\\(em"),
            '–' => out.push_str("\\(en"),
            '‘' | '’' => out.push('\''),
            '“' | '”' => out.push('"'),
            c => out.push_str(&format!("\\[u{:04X}]", u32::from(c))),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn one_page_per_visible_subcommand() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.first(), Some(&"irqlab.1"));
        assert!(names.contains(&"irqlab-show.1"), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("selftest")), "{names:?}");
        assert!(!names.contains(&"irqlab-help.1"), "{names:?}");
        for (name, roff) in &pages {
            let text = String::from_utf8(roff.clone()).unwrap();
            assert!(text.contains(".TH"), "{name}");
        }
    }

    #[test]
    fn synopsis_is_typed_as_a_subcommand_and_examples_are_unfilled() {
        let pages = pages().unwrap();
        let page = |n: &str| {
            let (_, roff) = pages.iter().find(|(name, _)| name == n).unwrap();
            String::from_utf8(roff.clone()).unwrap()
        };
        let top = page("irqlab-top.1");
        assert!(top.contains("\n.TH irqlab-top 1"), "{top}");
        assert_eq!(top.matches(".ds Aq").count(), 2, "one preamble: {top}");
        let synopsis = &top[top.find(".SH SYNOPSIS").unwrap()..];
        assert!(synopsis.contains("\\fBirqlab top\\fR"), "{synopsis}");
        let record = page("irqlab-record.1");
        assert!(!record.contains("EXTRA"), "{record}");
        let ex = &record[record.find(".SH EXAMPLES").unwrap()..];
        assert!(ex.contains(".nf\n"), "{ex}");
        // the comment stays on its command's line
        assert!(
            ex.contains("irqlab record \\-o rec \\-\\-duration 10m        # 1\\-s samples"),
            "{ex}"
        );
        assert!(ex.contains(".fi\n"), "{ex}");
        assert!(!page("irqlab.1").contains("irqlab-help"));
        for (name, roff) in &pages {
            assert!(roff.is_ascii(), "{name} has non-ASCII bytes");
        }
    }

    #[test]
    fn roff_is_ascii_with_dots_for_the_ellipsis() {
        assert_eq!(ascii("a … b × c"), "a ... b \\(mu c");
        assert_eq!(ascii("\u{2603}"), "\\[u2603]");
        assert_eq!(escape(".x -y \\z", true), "\\&.x \\-y \\ez");
    }
}
