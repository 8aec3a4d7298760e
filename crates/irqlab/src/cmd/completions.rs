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
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "irqlab", &mut buf);
    out.write_all(&buf).context("writing the completion script")
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
