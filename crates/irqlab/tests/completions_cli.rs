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
