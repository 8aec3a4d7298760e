//! `irqlab completions SHELL`: print a shell completion script generated
//! from the clap definitions (`clap_complete`), so completions never drift
//! from the flags. Writes only to stdout.

use crate::cli::Cli;
use anyhow::Context;
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// Flags of `irqlab completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Install, e.g.:\n  \
    irqlab completions bash > ~/.local/share/bash-completion/completions/irqlab\n  \
    irqlab completions zsh > \"${fpath[1]}/_irqlab\"\n  \
    irqlab completions fish > ~/.config/fish/completions/irqlab.fish")]
pub struct Args {
    /// Shell to generate the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Write the completion script for `args.shell` to stdout.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    write(args.shell, &mut out)?;
    out.flush().context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// Write the completion script for `shell` to `out`.
pub fn write(shell: clap_complete::Shell, out: &mut impl Write) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    let hidden: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "irqlab", &mut buf);
    let text = String::from_utf8_lossy(&buf);
    let text = if shell == clap_complete::Shell::Bash {
        drop_hidden_from_bash(&text, &hidden)
    } else {
        text.into_owned()
    };
    out.write_all(text.as_bytes())
        .context("writing the completion script")
}

/// clap_complete's bash script offers hidden subcommands among the words
/// it completes (`opts="… guard-selftest …"`) and routes them: keep only
/// the visible words and drop the hidden subcommands' routes.
fn drop_hidden_from_bash(script: &str, hidden: &[String]) -> String {
    let mut out = String::with_capacity(script.len());
    let mut skip = 0;
    for line in script.lines() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        if hidden
            .iter()
            .any(|h| line.trim_end().ends_with(&format!(",{h})")))
        {
            skip = 2; // the route's `cmd=…` and `;;` lines
            continue;
        }
        let mut l = line.to_string();
        if l.trim_start().starts_with("opts=\"") {
            for h in hidden {
                l = l.replace(&format!(" {h} "), " ");
            }
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_names_the_visible_subcommands() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut out = Vec::new();
            write(shell, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            for sub in [
                "show", "top", "bench", "compare", "probe", "synth", "restore",
            ] {
                assert!(text.contains(sub), "{shell:?} lacks {sub}");
            }
        }
    }
}
