//! No `/proc` or `/sys` path is spelled by hand: every string literal
//! starting `"proc/`, `"/proc/`, `"sys/` or `"/sys/` in the source of
//! crates/*/src (and build scripts) lives in crates/irqlab-core/src/paths.rs,
//! the one path table. Exempt, because they build fake trees on purpose:
//! test code — `#[cfg(test)]` items (inline test modules) and the files of
//! `#[cfg(test)] mod x;` declarations — and the directories tests/, benches/
//! and fuzz/, which are not scanned. Comment lines are not code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A literal opening with one of these spells a kernel path.
const PATTERNS: [&str; 4] = ["\"proc/", "\"/proc/", "\"sys/", "\"/sys/"];

/// The one file allowed to spell them, relative to the repository.
const TABLE: &str = "crates/irqlab-core/src/paths.rs";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `crates/*/src/**.rs` and `crates/*/build.rs`, sorted.
fn source_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for c in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        walk(&c.path().join("src"), &mut out);
        let build = c.path().join("build.rs");
        if build.is_file() {
            out.push(build);
        }
    }
    out.sort();
    out
}

/// Indentation of `line` in bytes.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// What follows a `#[cfg(test)]` at line `at`: the index of the item's
/// first line and the `#[path = "…"]` given on the way, if any.
fn item_after(lines: &[&str], at: usize) -> (usize, Option<String>) {
    let mut i = at + 1;
    let mut path = None;
    while let Some(l) = lines.get(i) {
        let t = l.trim();
        if let Some(p) = t.strip_prefix("#[path = \"") {
            path = p.strip_suffix("\"]").map(str::to_string);
        } else if !t.starts_with("#[") && !t.starts_with("//") {
            break;
        }
        i += 1;
    }
    (i, path)
}

/// The module name of `mod name;` (with any visibility), if `line` is one.
fn mod_decl(line: &str) -> Option<&str> {
    let t = line.trim();
    let rest = t.strip_suffix(';')?;
    let after_mod = rest.split_once("mod ")?;
    let vis = after_mod.0.trim();
    (vis.is_empty() || vis.starts_with("pub")).then_some(after_mod.1.trim())
}

/// Files of `#[cfg(test)] mod x;` declarations in `file` (its text `text`).
fn test_module_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let lines: Vec<&str> = text.lines().collect();
    let dir = file.parent().unwrap();
    let name = file.file_name().unwrap().to_string_lossy();
    let base = if ["mod.rs", "lib.rs", "main.rs", "build.rs"].contains(&name.as_ref()) {
        dir.to_path_buf()
    } else {
        dir.join(file.file_stem().unwrap())
    };
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim() != "#[cfg(test)]" {
            continue;
        }
        let (item, path) = item_after(&lines, i);
        let Some(m) = lines.get(item).and_then(|l| mod_decl(l)) else {
            continue;
        };
        match path {
            Some(p) => out.push(dir.join(p)),
            None => {
                out.push(base.join(format!("{m}.rs")));
                out.push(base.join(m).join("mod.rs"));
            }
        }
    }
    out
}

/// `(line number, line)` of every code line of `text` outside
/// `#[cfg(test)]` items that holds a kernel path literal.
fn offending_lines(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().any(|l| l.trim() == "#![cfg(test)]") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(l) = lines.get(i) {
        let t = l.trim();
        if t == "#[cfg(test)]" {
            let (item, _) = item_after(&lines, i);
            let Some(first) = lines.get(item) else {
                break;
            };
            i = item;
            if !first.trim_end().ends_with(';') {
                // skip to the item's closing brace, at its indentation
                let depth = indent(first);
                i += 1;
                while let Some(l) = lines.get(i) {
                    if indent(l) == depth && l.trim_start().starts_with('}') {
                        break;
                    }
                    i += 1;
                }
            }
        } else if !t.starts_with("//") && PATTERNS.iter().any(|p| l.contains(p)) {
            out.push((i + 1, t.to_string()));
        }
        i += 1;
    }
    out
}

#[test]
fn kernel_paths_are_spelled_only_in_the_path_table() {
    let root = repo();
    let files = source_files(&root);
    let texts: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| (f.clone(), std::fs::read_to_string(f).unwrap()))
        .collect();
    let test_only: BTreeSet<PathBuf> = texts
        .iter()
        .flat_map(|(f, t)| test_module_files(f, t))
        .collect();
    assert!(
        texts.iter().any(|(f, _)| f.ends_with(TABLE)),
        "{TABLE} not found among the scanned files"
    );
    let mut bad = Vec::new();
    for (f, text) in &texts {
        let rel = f.strip_prefix(&root).unwrap();
        if rel == Path::new(TABLE) || test_only.contains(f) {
            continue;
        }
        for (n, line) in offending_lines(text) {
            bad.push(format!("{}:{n}: {line}", rel.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "kernel paths spelled outside {TABLE} (add them there and use the constant or \
         helper):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_path_literal_check_flags_code_and_skips_tests_and_comments() {
    let text = r#"//! Reads `"/proc/stat"` (a comment).
use x;
const A: &str = "proc/interrupts";
fn f() { g("/sys/kernel/irq"); h("/proc/x"); }
// "sys/y" in a comment
fn ok() { g("not/proc/here"); }
#[cfg(test)]
fn helper() {
    w("proc/1/stat");
}
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    fn t() {
        w("sys/devices/system/cpu/online");
    }
}
fn after() { g("sys/after"); }
"#;
    let found: Vec<usize> = offending_lines(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, [3, 4, 18]);
    let decl = "#[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod tests;\n#[cfg(test)]\npub(crate) mod fixtures;\n";
    let files = test_module_files(Path::new("/r/src/a/b.rs"), decl);
    assert!(files.contains(&PathBuf::from("/r/src/a/x_tests.rs")));
    assert!(files.contains(&PathBuf::from("/r/src/a/b/fixtures.rs")));
    let in_mod = test_module_files(
        Path::new("/r/src/a/mod.rs"),
        "#[cfg(test)]\nmod live_tests;\n",
    );
    assert!(in_mod.contains(&PathBuf::from("/r/src/a/live_tests.rs")));
}
