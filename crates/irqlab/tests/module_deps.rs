//! The command layer sits on top: no file of `crates/irqlab/src` outside
//! `cmd/`, `cli.rs` and `main.rs` imports `crate::cmd` or `crate::cli`, or
//! uses clap (flags are parsed in `cmd/` and handed down as plain values).
//! Test code (`#[cfg(test)]` modules, inline or in files of their own)
//! may use clap, but imports the command layer only where [`TEST_IMPORTS`]
//! says why. Comments are not code. Each offence is named file:line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The test code below `cmd/` that imports the command layer, as
/// (file under `src/`, the line), each with a comment saying why: none
/// today.
const TEST_IMPORTS: &[(&str, &str)] = &[];

/// May this file (relative to `src/`) use the command layer and clap?
fn is_command_layer(rel: &str) -> bool {
    rel.starts_with("cmd/") || rel == "cli.rs" || rel == "main.rs"
}

/// The module a `mod name;` in `file` (relative to `src/`) loads, in both
/// layouts (`name.rs`, `name/mod.rs`), relative to `src/`.
fn child_files(file: &str, name: &str) -> [String; 2] {
    let dir = match file.strip_suffix(".rs") {
        Some("lib" | "main") => String::new(),
        Some(stem) if stem.ends_with("/mod") => {
            format!("{}/", stem.trim_end_matches("mod").trim_end_matches('/'))
        }
        Some(stem) => format!("{stem}/"),
        None => String::new(),
    };
    [format!("{dir}{name}.rs"), format!("{dir}{name}/mod.rs")]
}

/// The name in `mod name;` (any visibility), if `line` declares a module
/// that lives in a file of its own.
fn mod_decl(line: &str) -> Option<&str> {
    let t = line.trim();
    let rest = t
        .strip_prefix("pub(crate) ")
        .or_else(|| t.strip_prefix("pub "));
    let rest = rest.unwrap_or(t).strip_prefix("mod ")?;
    rest.strip_suffix(';').map(str::trim)
}

/// Files (relative to `src/`) declared `#[cfg(test)] mod name;` by
/// `file`'s `text`: test-only modules.
fn test_only_children(file: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_cfg_test = false;
    for line in text.lines() {
        let t = line.trim();
        if t == "#[cfg(test)]" {
            after_cfg_test = true;
            continue;
        }
        if after_cfg_test && t.starts_with("#[") {
            continue;
        }
        if after_cfg_test {
            if let Some(name) = mod_decl(t) {
                out.extend(child_files(file, name));
            }
        }
        after_cfg_test = false;
    }
    out
}

/// The offending lines of one file's `text` (`rel`: its path under
/// `src/`), as `rel:line: text`. Inline `#[cfg(test)]` modules (rustfmt
/// closes them with a `}` at their own indentation) are skipped.
fn offences(rel: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut test_block: Option<String> = None;
    let mut after_cfg_test = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(close) = &test_block {
            if line == close {
                test_block = None;
            }
            continue;
        }
        if t == "#[cfg(test)]" {
            after_cfg_test = true;
            continue;
        }
        if after_cfg_test && !t.starts_with("#[") {
            after_cfg_test = false;
            if t.contains("mod ") && t.ends_with('{') {
                let indent = &line[..line.len() - line.trim_start().len()];
                test_block = Some(format!("{indent}}}"));
                continue;
            }
        }
        if t.starts_with("//") {
            continue;
        }
        let code = t.split(" //").next().unwrap_or(t);
        let bad = names_command_layer(code)
            || code.contains("clap::")
            || code.starts_with("use clap")
            || code.starts_with("#[arg(")
            || code.starts_with("#[command(")
            || code.starts_with("#[clap(");
        if bad {
            out.push(format!("{rel}:{}: {t}", i + 1));
        }
    }
    out
}

/// Does this line of code name `crate::cmd` or `crate::cli`?
fn names_command_layer(code: &str) -> bool {
    ["crate::cmd", "crate::cli"].iter().any(|p| {
        code.match_indices(p).any(|(at, _)| {
            !code[at + p.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    })
}

/// The lines of `text` (test code included; comments are not code) that
/// name the command layer, as `rel:line: text`, but those [`TEST_IMPORTS`]
/// lists for `rel`.
fn command_layer_lines(rel: &str, text: &str) -> Vec<String> {
    command_layer_lines_but(rel, text, TEST_IMPORTS)
}

/// [`command_layer_lines`] with `allowed` for the list of allowed imports.
fn command_layer_lines_but(rel: &str, text: &str, allowed: &[(&str, &str)]) -> Vec<String> {
    let known = |t: &str| allowed.iter().any(|&(f, l)| f == rel && l == t);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("//") || known(t) {
            continue;
        }
        if names_command_layer(t.split(" //").next().unwrap_or(t)) {
            out.push(format!("{rel}:{}: {t}", i + 1));
        }
    }
    out
}

#[test]
fn no_module_below_the_command_layer_imports_it_or_uses_clap() {
    let root = src();
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let test_only: BTreeSet<String> = texts
        .iter()
        .flat_map(|(rel, text)| test_only_children(rel, text))
        .collect();
    let bad: Vec<String> = texts
        .iter()
        .filter(|(rel, _)| !is_command_layer(rel) && !test_only.contains(rel))
        .flat_map(|(rel, text)| offences(rel, text))
        .collect();
    assert!(
        bad.is_empty(),
        "only cmd/, cli.rs and main.rs may import crate::cmd / crate::cli or use clap \
         (move the code into cmd/, or hand plain values down):\n{}",
        bad.join("\n")
    );
    let below = || texts.iter().filter(|(rel, _)| !is_command_layer(rel));
    let in_tests: Vec<String> = below()
        .flat_map(|(rel, text)| command_layer_lines(rel, text))
        .collect();
    assert!(
        in_tests.is_empty(),
        "test code below cmd/ imports crate::cmd / crate::cli (use the module below, \
         or move the test into cmd/):\n{}",
        in_tests.join("\n")
    );
    for (file, line) in TEST_IMPORTS {
        let used =
            below().any(|(rel, text)| rel == file && text.lines().any(|l| l.trim() == *line));
        assert!(
            used,
            "TEST_IMPORTS lists a line no longer in {file}: {line}"
        );
    }
}

#[test]
fn the_check_sees_imports_and_clap_but_not_tests_or_comments() {
    let text = "\
//! Knows nothing about clap:: or crate::cmd.
use crate::cmd::top::trace::Tracing;
use crate::cmdline::Ok;
#[derive(clap::ValueEnum)]
enum F { A }
    let x = 1; // crate::cli is not code here

#[cfg(test)]
mod tests {
    use crate::cmd::synth::write_tree;
}
fn after() { crate::cli::Cli::parse(); }
";
    let got = offences("x/y.rs", text);
    assert_eq!(
        got,
        [
            "x/y.rs:2: use crate::cmd::top::trace::Tracing;",
            "x/y.rs:4: #[derive(clap::ValueEnum)]",
            "x/y.rs:12: fn after() { crate::cli::Cli::parse(); }",
        ]
    );
    assert_eq!(
        command_layer_lines("x/y.rs", text),
        [
            "x/y.rs:2: use crate::cmd::top::trace::Tracing;",
            "x/y.rs:10: use crate::cmd::synth::write_tree;",
            "x/y.rs:12: fn after() { crate::cli::Cli::parse(); }",
        ]
    );
    let allowed = [("report/z.rs", "use crate::cmd::top::z::Z;")];
    let (file, line) = allowed[0];
    assert!(command_layer_lines_but(file, line, &allowed).is_empty());
    assert_eq!(command_layer_lines_but("x/y.rs", line, &allowed).len(), 1);
    assert_eq!(command_layer_lines(file, line).len(), 1);
    let parent = "#[cfg(test)]\nmod fixtures;\n#[cfg(test)]\n#[path = \"t.rs\"]\npub(crate) mod more;\nmod kept;\n";
    assert_eq!(
        test_only_children("tui/mod.rs", parent),
        [
            "tui/fixtures.rs",
            "tui/fixtures/mod.rs",
            "tui/more.rs",
            "tui/more/mod.rs"
        ]
    );
    assert_eq!(
        child_files("record/writer.rs", "tests"),
        ["record/writer/tests.rs", "record/writer/tests/mod.rs"]
    );
    assert_eq!(child_files("lib.rs", "tui"), ["tui.rs", "tui/mod.rs"]);
    assert!(is_command_layer("cmd/top/trace.rs") && !is_command_layer("tui/event.rs"));
}
