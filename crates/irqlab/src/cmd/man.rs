//! `irqlab man [--out DIR]`: manual pages generated from the clap
//! definitions (`clap_mangen`): `irqlab.1` on stdout, or `irqlab.1` plus
//! one `irqlab-<subcommand>.1` per visible subcommand written into DIR.
//! Reads nothing; writes only stdout or DIR.

use crate::cli::Cli;
use anyhow::Context;
use clap::CommandFactory;
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
    #[arg(long, value_name = "DIR")]
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
            for (name, _) in write_all(&dir)? {
                println!("{}", dir.join(name).display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `irqlab.1`: the top-level page (synopsis, options, subcommand list).
pub fn main_page() -> anyhow::Result<Vec<u8>> {
    render(Cli::command())
}

/// Every page as `(file name, roff)`: `irqlab.1`, then one per visible
/// subcommand (`irqlab-show.1` …).
pub fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut root = Cli::command();
    root.build();
    let mut pages = vec![("irqlab.1".to_string(), render(root.clone())?)];
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("irqlab-{}", sub.get_name());
        let page = sub.clone().name(name.clone()).bin_name(name.clone());
        pages.push((format!("{name}.1"), render(page)?));
    }
    Ok(pages)
}

/// Write [`pages`] into `dir`; returns what was written.
pub fn write_all(dir: &Path) -> anyhow::Result<Vec<(String, usize)>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, roff) in pages()? {
        let path = dir.join(&name);
        std::fs::write(&path, &roff).with_context(|| format!("writing {}", path.display()))?;
        written.push((name, roff.len()));
    }
    Ok(written)
}

fn render(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .context("rendering the man page")?;
    Ok(buf)
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
        for (name, roff) in &pages {
            let text = String::from_utf8(roff.clone()).unwrap();
            assert!(text.contains(".TH"), "{name}");
        }
    }
}
