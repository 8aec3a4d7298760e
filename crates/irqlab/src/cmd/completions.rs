//! `irqlab completions SHELL`: print a shell completion script generated
//! from the clap definitions (`clap_complete`), so completions never drift
//! from the flags. Writes only to stdout.

use anyhow::Context;
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

/// Write the completion script for `args.shell` to stdout (a closed
/// stdout ends the run quietly, as for every command; a full one is an
/// error).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut out = crate::export::stdout::stdout();
    write(args.shell, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// Write the completion script for `shell` to `out`: the visible
/// subcommands only ([`crate::cli::visible_command`]), in every shell.
/// The script is made in memory first: `clap_complete` panics on a failed
/// write, and a write error here is the caller's to report.
pub fn write(shell: clap_complete::Shell, out: &mut impl Write) -> anyhow::Result<()> {
    let mut cmd = crate::cli::visible_command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "irqlab", &mut script);
    out.write_all(&script)
        .and_then(|()| out.flush())
        .context("writing the completion script to stdout")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_names_the_visible_subcommands_and_no_hidden_one() {
        use clap_complete::Shell;
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::PowerShell,
        ] {
            let mut out = Vec::new();
            write(shell, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            for sub in [
                "show", "top", "bench", "compare", "probe", "synth", "restore",
            ] {
                assert!(text.contains(sub), "{shell:?} lacks {sub}");
            }
            assert!(
                !text.contains("selftest"),
                "{shell:?} offers guard-selftest"
            );
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod value_tests {
    use super::*;

    #[test]
    fn bash_offers_synth_arch_names_not_file_names() {
        let mut out = Vec::new();
        write(clap_complete::Shell::Bash, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let at = text.find("irqlab__subcmd__synth)").unwrap();
        let synth = &text[at..];
        let arch = &synth[synth.find("--arch)").unwrap()..];
        let arch = &arch[..arch.find(";;").unwrap()];
        assert!(arch.contains("x86 arm64"), "{arch}");
        assert!(!arch.contains("compgen -f"), "{arch}");
    }

    /// `bench --governor <TAB>` offers the kernel's governors, not file
    /// names, in bash (its flag's branch) and zsh (the flag's values).
    #[test]
    fn governor_completes_to_the_kernels_governors() {
        let names = "performance powersave schedutil ondemand conservative userspace";
        let mut out = Vec::new();
        write(clap_complete::Shell::Bash, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let bench = &text[text.find("irqlab__subcmd__bench)").unwrap()..];
        let gov = &bench[bench.find("--governor)").unwrap()..];
        let gov = &gov[..gov.find(";;").unwrap()];
        assert!(gov.contains(names), "{gov}");
        assert!(!gov.contains("compgen -f"), "{gov}");
        let mut out = Vec::new();
        write(clap_complete::Shell::Zsh, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let zsh = text.lines().find(|l| l.contains("'--governor=")).unwrap();
        assert!(zsh.contains(&format!("({names})")), "{zsh}");
    }
}
