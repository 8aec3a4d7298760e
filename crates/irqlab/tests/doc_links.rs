//! Every path and link the project's prose points at exists in the
//! repository: markdown links (and their `#anchors`) in README.md,
//! HACKING.md, BENCHMARKS.md and docs/**; repository paths (`docs/…`,
//! `crates/…`, `tools/…`, `fuzz/…`, `*.md` at the root) named in those files
//! and in code comments of crates/, fuzz/ and tools/. Comments must not
//! cite files outside the repository: the team's shared folder or its
//! format and design notes (the exact names are in `cites_outside`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Directories never scanned (build output, data, vendored trees).
const SKIP_DIRS: [&str; 6] = [
    "target",
    ".git",
    "fixtures",
    "corpus",
    "artifacts",
    "snapshots",
];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !SKIP_DIRS.contains(&name.as_str()) {
                walk(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

fn files_with_ext(root: &Path, dirs: &[&str], exts: &[&str]) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for d in dirs {
        walk(&root.join(d), &mut all);
    }
    all.retain(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
    });
    all.sort();
    all
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["README.md", "HACKING.md", "BENCHMARKS.md"]
        .iter()
        .map(|f| root.join(f))
        .filter(|p| p.exists())
        .collect();
    v.extend(files_with_ext(root, &["docs"], &["md"]));
    v
}

/// GitHub's heading anchor: lower case, punctuation dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(md: &str) -> BTreeSet<String> {
    md.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// `[text](target)` links of a markdown text, outside code blocks.
fn md_links(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    out
}

/// Tokens that name a repository path: `docs/…`, `crates/…`, `tools/…`,
/// `fuzz/…` or a root-level `*.md`. Templates (`<sub>`, `*`, `{a,b}`, `…`)
/// are not paths and are skipped.
fn repo_paths(text: &str) -> Vec<String> {
    const PREFIXES: [&str; 4] = ["docs/", "crates/", "tools/", "fuzz/"];
    const ROOT_MD: [&str; 3] = ["README.md", "HACKING.md", "BENCHMARKS.md"];
    text.split(|c: char| c.is_whitespace() || "`()[]\"',;".contains(c))
        .map(|t| t.trim_end_matches(['.', ':', '!', '?']))
        .map(|t| t.split('#').next().unwrap_or(""))
        .filter(|t| PREFIXES.iter().any(|p| t.starts_with(p)) || ROOT_MD.contains(t))
        .filter(|t| !t.contains(['<', '*', '{', '…', '$', '|']) && !t.contains("..."))
        .map(str::to_string)
        .collect()
}

/// Comment text of a source file (`//`, `///`, `//!` in Rust; `#` in shell).
fn comments(path: &Path, text: &str) -> Vec<(usize, String)> {
    let shell = path.extension().is_some_and(|e| e == "sh");
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let l = l.trim_start();
            let c = if shell {
                l.strip_prefix('#')
            } else {
                l.strip_prefix("//")
                    .or_else(|| l.find(" // ").map(|at| &l[at + 4..]))
            };
            c.map(|c| (i + 1, c.to_string()))
        })
        .collect()
}

#[test]
fn markdown_links_resolve() {
    let root = repo();
    let mut bad = Vec::new();
    let mut checked = 0;
    for md in markdown_files(&root) {
        let text = std::fs::read_to_string(&md).unwrap();
        let dir = md.parent().unwrap();
        for link in md_links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                md.clone()
            } else {
                dir.join(file)
            };
            if !target.exists() {
                bad.push(format!("{}: link {link:?}: no such file", md.display()));
                continue;
            }
            if !anchor.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let t = std::fs::read_to_string(&target).unwrap();
                if !anchors(&t).contains(anchor) {
                    bad.push(format!("{}: link {link:?}: no such heading", md.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
    assert!(
        checked > 10,
        "only {checked} links found: is the scan broken?"
    );
}

#[test]
fn paths_named_in_docs_and_comments_exist() {
    let root = repo();
    let mut bad = Vec::new();
    let mut checked = 0;
    for md in markdown_files(&root) {
        let text = std::fs::read_to_string(&md).unwrap();
        for p in repo_paths(&text) {
            checked += 1;
            if !root.join(&p).exists() {
                bad.push(format!(
                    "{}: {p}",
                    md.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    for src in files_with_ext(&root, &["crates", "fuzz", "tools"], &["rs", "sh"]) {
        let text = std::fs::read_to_string(&src).unwrap();
        for (line, c) in comments(&src, &text) {
            for p in repo_paths(&c) {
                checked += 1;
                if !root.join(&p).exists() {
                    let rel = src.strip_prefix(&root).unwrap().display().to_string();
                    bad.push(format!("{rel}:{line}: {p}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "paths that do not exist:\n{}",
        bad.join("\n")
    );
    assert!(
        checked > 20,
        "only {checked} paths found: is the scan broken?"
    );
}

/// A citation of a document outside the repository. `../shared/corpus`
/// is not one: it is where the corpus tests read real captures when the
/// folder exists (they skip without it), not documentation to follow.
fn cites_outside(line: &str) -> bool {
    let shared = line
        .match_indices("../shared")
        .any(|(i, _)| !line[i..].starts_with("../shared/corpus"));
    // spelled in two parts so that this file does not cite them itself
    let notes = [concat!("FORMATS", ".md"), concat!("DESIGN", ".md")];
    shared || notes.iter().any(|n| line.contains(n))
}

#[test]
fn comments_cite_only_files_in_the_repository() {
    let root = repo();
    let mut bad = Vec::new();
    for src in files_with_ext(&root, &["crates", "fuzz", "tools"], &["rs", "sh"]) {
        if src.ends_with("doc_links.rs") {
            continue; // names the banned citations in its own docs
        }
        let text = std::fs::read_to_string(&src).unwrap();
        for (line, c) in comments(&src, &text) {
            if cites_outside(&c) {
                let rel = src.strip_prefix(&root).unwrap().display().to_string();
                bad.push(format!("{rel}:{line}:{c}"));
            }
        }
    }
    for md in ["README.md", "HACKING.md"] {
        let text = std::fs::read_to_string(root.join(md)).unwrap_or_default();
        if text.lines().any(cites_outside) {
            bad.push(format!("{md} cites a file outside the repository"));
        }
    }
    assert!(
        bad.is_empty(),
        "citations outside the repository:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scanner_itself() {
    assert_eq!(slug("Eras of `/proc/interrupts`"), "eras-of-procinterrupts");
    assert_eq!(
        slug(" How the file is produced"),
        "how-the-file-is-produced"
    );
    assert_eq!(md_links("see [a](b.md#c) and [d](e/)"), ["b.md#c", "e/"]);
    assert_eq!(
        repo_paths("see `docs/formats/stat.md`, crates/x/<sub>.rs and (tools/a.sh)."),
        ["docs/formats/stat.md", "tools/a.sh"]
    );
}
