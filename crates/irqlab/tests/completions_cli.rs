//! `irqlab completions` and `irqlab man` end to end: the scripts name every
//! visible subcommand and are valid shell (`bash -n`), the man pages are
//! roff with a `.TH` line per page, list every subcommand, and render with
//! `man -l` where `man` is installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use predicates::str::contains;
use std::process::Command as Std;

mod common;
use common::irqlab;

/// Visible subcommands (the hidden guard-selftest is left out).
const SUBCOMMANDS: [&str; 10] = [
    "show",
    "bench",
    "top",
    "compare",
    "synth",
    "restore",
    "probe",
    "serve",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    let out = irqlab().args(args).assert().success().get_output().clone();
    String::from_utf8(out.stdout).unwrap()
}

/// Run `prog args` if `prog` exists; None (with a visible note) if not.
fn run_tool(prog: &str, args: &[&str]) -> Option<std::process::Output> {
    match Std::new(prog).args(args).output() {
        Ok(o) => Some(o),
        Err(e) => {
            crate::visible!("SKIP: {prog} is not installed ({e}); that check did not run");
            None
        }
    }
}

#[test]
fn bash_script_is_valid_and_complete() {
    let script = stdout_of(&["completions", "bash"]);
    for sub in SUBCOMMANDS {
        assert!(script.contains(sub), "bash script lacks {sub}");
    }
    assert!(!script.contains("guard-selftest"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("irqlab.bash");
    std::fs::write(&path, &script).unwrap();
    let path = path.to_str().unwrap();
    let Some(out) = run_tool("bash", &["-n", path]) else {
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Sourcing registers the completion function.
    let Some(out) = run_tool(
        "bash",
        &["-c", &format!("source {path} && complete -p irqlab")],
    ) else {
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("irqlab"));
}

#[test]
fn zsh_and_fish_scripts() {
    let zsh = stdout_of(&["completions", "zsh"]);
    assert!(
        zsh.starts_with("#compdef irqlab"),
        "{}",
        &zsh[..40.min(zsh.len())]
    );
    let fish = stdout_of(&["completions", "fish"]);
    for sub in SUBCOMMANDS {
        assert!(zsh.contains(sub) && fish.contains(sub), "{sub}");
    }
    assert!(fish.contains("complete -c irqlab"));
}

#[test]
fn unknown_shell_is_a_usage_error() {
    irqlab()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(contains("invalid value"));
}

#[test]
fn man_page_lists_every_subcommand_and_renders() {
    let page = stdout_of(&["man"]);
    assert!(
        page.contains(".TH irqlab 1"),
        "{}",
        &page[..80.min(page.len())]
    );
    for sub in SUBCOMMANDS {
        assert!(page.contains(sub), "man page lacks {sub}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("irqlab.1");
    std::fs::write(&file, &page).unwrap();
    let Some(out) = run_tool("man", &["-l", "-P", "cat", file.to_str().unwrap()]) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("NAME") && text.contains("SUBCOMMANDS"),
        "{text}"
    );
}

#[test]
fn man_out_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    irqlab()
        .args(["man", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("irqlab-show.1"));
    for sub in SUBCOMMANDS {
        let page = std::fs::read_to_string(out.join(format!("irqlab-{sub}.1"))).unwrap();
        assert!(page.contains(&format!(".TH irqlab-{sub} 1")), "{sub}");
    }
    let show = std::fs::read_to_string(out.join("irqlab-show.1")).unwrap();
    assert!(show.contains("root"), "show page lacks its --root flag");
    assert!(std::fs::read_to_string(out.join("irqlab.1")).is_ok());
    assert!(!out.join("irqlab-guard-selftest.1").exists());
}

/// `--out DIR` with stdout full: the pages are written, then the list of
/// them fails as an error naming stdout (exit 1), not a panic (exit 101).
#[test]
fn man_out_with_stdout_full_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["man", "--out"])
        .arg(dir.path())
        .stdout(common::failing_stdio(true))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("stdout: No space left on device"), "{err}");
    assert!(dir.path().join("irqlab-show.1").exists());
}

/// `--out FILE` where FILE is a regular file: refused naming the flag and
/// saying it is not a directory (not "File exists"), exit 1, FILE kept.
#[test]
fn man_out_that_is_a_file_is_not_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("num.txt");
    std::fs::write(&file, "1\n").unwrap();
    let out = irqlab()
        .args(["man", "--out"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(contains(format!(
            "--out {}: not a directory",
            file.display()
        )))
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("File exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "1\n");
}

/// Every page is clean under `groff -ww` in a C locale (ASCII roff: no
/// raw UTF-8, `...` for the ellipsis), there is no `irqlab-help.1`, the
/// synopsis is typed as a subcommand (`irqlab top`), and examples are an
/// EXAMPLES section whose comments stay on their command's line.
#[test]
fn man_pages_are_clean_under_groff_with_examples_unfilled() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    irqlab().args(["man", "--out"]).arg(&out).assert().success();
    assert!(!out.join("irqlab-help.1").exists());
    let top = std::fs::read_to_string(out.join("irqlab-top.1")).unwrap();
    assert!(top.contains("\\fBirqlab top\\fR"), "{top}");
    let mut pages: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    assert!(pages.len() > SUBCOMMANDS.len());
    for page in &pages {
        let roff = std::fs::read(page).unwrap();
        assert!(roff.is_ascii(), "{}", page.display());
        let Some(out) = run_groff(page) else {
            return;
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && err.is_empty(),
            "{}: {err}",
            page.display()
        );
    }
    let Some(out) = run_groff(&out.join("irqlab-record.1")) else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("EXAMPLES") && !text.contains("EXTRA"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("irqlab record -o rec --duration 10m"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("# 1-s samples for 10 minutes"), "{line}");
}

/// `groff -ww -man -Tascii PAGE` in the C locale, if groff is installed.
fn run_groff(page: &std::path::Path) -> Option<std::process::Output> {
    match Std::new("groff")
        .args(["-ww", "-man", "-Tascii", "-P-cbou"])
        .arg(page)
        .env("LC_ALL", "C")
        .output()
    {
        Ok(o) => Some(o),
        Err(e) => {
            crate::visible!(
                "completions_cli: man_pages_are_clean_under_groff_with_examples_unfilled: SKIPPED groff checks: groff is not installed ({e})"
            );
            None
        }
    }
}

/// No shell offers the hidden test helper `guard-selftest`.
#[test]
fn no_shell_completes_the_hidden_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains("record"), "{shell}");
        assert!(
            !script.contains("selftest"),
            "{shell} offers guard-selftest"
        );
    }
    let bash = stdout_of(&["completions", "bash"]);
    assert!(
        bash.contains("compgen -W \"x86 arm64 arm powerpc riscv loongarch mips s390\""),
        "synth --arch values"
    );
}

/// Runs irqlab with stdout a pipe whose reading end is already closed
/// (EPIPE on the first write), or `/dev/full` (ENOSPC).
fn with_stdout(args: &[&str], full: bool) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let stdout = common::failing_stdio(full);
    Std::new(bin)
        .args(args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

/// A closed stdout ends completions, help and version quietly (exit 0, as
/// `| head` ends every command); a full one is an error naming stdout
/// (exit 1), never a panic (101) nor a silent success.
#[test]
fn completions_help_and_version_on_a_closed_or_full_stdout() {
    let mut cases: Vec<Vec<&str>> = ["bash", "zsh", "fish", "elvish", "powershell"]
        .iter()
        .map(|s| vec!["completions", s])
        .collect();
    cases.extend([vec!["--help"], vec!["--version"], vec!["show", "--help"]]);
    for args in &cases {
        let out = with_stdout(args, false);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?} closed: {err}");
        assert!(err.is_empty(), "{args:?} closed: {err}");
        if std::path::Path::new("/dev/full").exists() {
            let out = with_stdout(args, true);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?} full: {err}");
            assert!(err.contains("stdout"), "{args:?} full: {err}");
            assert!(!err.contains("panicked"), "{args:?} full: {err}");
        }
    }
}
