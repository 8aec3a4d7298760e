//! HACKING.md is a map of the code, checked against the tree: every path it
//! names exists, in every form it uses (layout entries indented under their
//! directory, `a.rs, b/` lists, `a.rs + b.rs`, `{x,y}.rs`, `<name>` and `*`
//! templates, paths relative to the entry or the crate, backticked
//! `dir/file.rs` in the prose), every `module::item` it names is defined,
//! and the layout lists every source directory it opens in full: a
//! directory of which the layout names one member must name them all (test
//! modules aside). A failure names the HACKING.md line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The column where the layout's descriptions start: a line indented this
/// far continues the entry above it.
const DESC_COL: usize = 29;

/// Extensions that make a token a file name.
const EXTS: [&str; 10] = ["rs", "sh", "c", "h", "md", "py", "toml", "bt", "in", "lock"];

/// Top-level directories: a token starting with one of these is a path
/// whatever its extension.
const ROOT_DIRS: [&str; 5] = [".ci/", "crates/", "docs/", "tools/", "fuzz/"];

/// The crates whose `src/` and root are tried for a path named in prose.
const CRATES: [&str; 3] = ["crates/irqlab", "crates/irqlab-core", "crates/irqlab-bpf"];

/// Every file and directory of the repository, relative, `/`-separated
/// (directories end with `/`).
fn tree(root: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name == "target" || name == ".git" {
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(format!("{rel}/"));
                walk(root, &p, out);
            } else {
                out.insert(rel);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// Splits prose into tokens at whitespace and punctuation, keeping `{a,b}`
/// groups whole.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            c if depth == 0 && (c.is_whitespace() || "`()[]\"',;|+=".contains(c)) => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|t| t.trim_end_matches(['.', ':', '!', '?', ',']).to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether a token names a repository path (rather than a word, a kernel
/// path, a Rust path or an output file).
fn is_path(t: &str) -> bool {
    if t.starts_with('/') || t.starts_with("..") || t.contains("::") || t.contains("://") {
        return false;
    }
    if t.contains(['…', '$', '=', '#', '@']) || t.contains("...") {
        return false;
    }
    if ROOT_DIRS.iter().any(|d| t.starts_with(d)) {
        return true;
    }
    let ok_chars = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./{},*<>".contains(c))
    };
    if !ok_chars(t) {
        return false;
    }
    if let Some(dir) = t.strip_suffix('/') {
        return dir.len() > 1 && dir.chars().any(|c| c.is_ascii_lowercase());
    }
    let last = t.rsplit('/').next().unwrap_or(t);
    let Some((stem, ext)) = last.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty() && EXTS.contains(&ext.trim_end_matches('}'))
        || last.ends_with('}') && last.contains(".{")
}

/// `a/{x,y}.rs` -> `a/x.rs`, `a/y.rs` (one group at a time, recursively).
fn expand(t: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (t.find('{'), t.find('}')) else {
        return vec![t.to_string()];
    };
    if close < open {
        return vec![t.to_string()];
    }
    t[open + 1..close]
        .split(',')
        .flat_map(|alt| expand(&format!("{}{}{}", &t[..open], alt.trim(), &t[close + 1..])))
        .collect()
}

/// `a/./b/../c` -> `a/c`, `/`-separated, keeping a trailing `/`.
fn normal(p: &str) -> String {
    let dir = p.ends_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for s in p.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = parts.join("/");
    if dir && !out.is_empty() {
        out.push('/');
    }
    out
}

fn join(base: &str, t: &str) -> String {
    if base.is_empty() {
        normal(t)
    } else {
        normal(&format!("{base}/{t}"))
    }
}

/// The repository entries a (possibly templated) relative path matches.
fn matches(tree: &BTreeSet<String>, p: &str) -> Vec<String> {
    if !p.contains(['*', '<']) {
        let hit = if p.ends_with('/') {
            tree.contains(p)
        } else {
            tree.contains(p) || tree.contains(&format!("{p}/"))
        };
        return if hit { vec![p.to_string()] } else { Vec::new() };
    }
    let template = Regex::new(r"<[^>/]*>").unwrap();
    let glob = template.replace_all(p, "*");
    let re = format!("^{}/?$", regex::escape(&glob).replace(r"\*", "[^/]*"));
    let re = Regex::new(&re).unwrap();
    tree.iter().filter(|e| re.is_match(e)).cloned().collect()
}

/// The directory a found entry gives later bare names in the same entry.
fn dir_of(entry: &str) -> String {
    if let Some(d) = entry.strip_suffix('/') {
        d.to_string()
    } else {
        entry
            .rsplit_once('/')
            .map(|(d, _)| d.to_string())
            .unwrap_or_default()
    }
}

/// A path named somewhere in HACKING.md, resolved.
struct Checker<'a> {
    tree: &'a BTreeSet<String>,
    bad: Vec<String>,
    /// Entries named explicitly (not through a template).
    named: BTreeSet<String>,
    checked: usize,
}

impl Checker<'_> {
    /// Resolves `token` against `bases` (first hit wins); records a failure
    /// naming `line` when none holds. Returns the entries found.
    fn resolve(&mut self, line: usize, token: &str, bases: &[String]) -> Vec<String> {
        let mut found = Vec::new();
        for t in expand(token) {
            self.checked += 1;
            let hit = bases.iter().find_map(|b| {
                let m = matches(self.tree, &join(b, &t));
                (!m.is_empty()).then_some(m)
            });
            match hit {
                Some(m) => {
                    if !t.contains(['*', '<']) {
                        self.named.extend(m.iter().cloned());
                    }
                    found.extend(m);
                }
                None => self.bad.push(format!(
                    "HACKING.md:{line}: `{t}` (from `{token}`) does not exist (tried under: {})",
                    bases
                        .iter()
                        .map(|b| if b.is_empty() { "." } else { b.as_str() })
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        found
    }
}

/// The bases tried for a name in prose: the directory of the last path of
/// the same paragraph, each crate's `src/` and root, the repository root.
fn prose_bases(last: &Option<String>) -> Vec<String> {
    let mut b: Vec<String> = last.iter().cloned().collect();
    for c in CRATES {
        b.push(format!("{c}/src"));
    }
    for c in CRATES {
        b.push(c.to_string());
    }
    b.push(String::new());
    b
}

/// Checks the paths of HACKING.md; returns the checker with what it found.
fn check_paths<'a>(hacking: &str, tree: &'a BTreeSet<String>) -> Checker<'a> {
    let mut ck = Checker {
        tree,
        bad: Vec::new(),
        named: BTreeSet::new(),
        checked: 0,
    };
    let mut section = String::new();
    let mut in_code = false;
    // layout state: (indent, directory children resolve against)
    let mut stack: Vec<(usize, String)> = Vec::new();
    // bases of the current layout entry's description
    let mut entry_bases: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    let paren = Regex::new(r"\([^)]*\)").unwrap();
    for (i, line) in hacking.lines().enumerate() {
        let n = i + 1;
        if line.starts_with("## ") {
            section = line.to_string();
        }
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            stack.clear();
            last = None;
            continue;
        }
        let layout = in_code && section == "## Layout";
        if in_code && !layout {
            continue;
        }
        if !layout {
            if line.trim().is_empty() || line.starts_with("- ") || line.starts_with('#') {
                last = None;
            }
            for t in tokens(line).iter().filter(|t| is_path(t)) {
                let found = ck.resolve(n, t, &prose_bases(&last));
                if let Some(f) = found.first() {
                    last = Some(dir_of(f));
                }
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let desc = if indent >= DESC_COL {
            line.trim()
        } else {
            let rest = &line[indent..];
            let (name, desc) = match rest.find("  ") {
                Some(at) => (&rest[..at], rest[at..].trim()),
                None => (rest, ""),
            };
            while stack.last().is_some_and(|(ind, _)| *ind >= indent) {
                stack.pop();
            }
            let parent = stack.last().map(|(_, d)| d.clone()).unwrap_or_default();
            let crate_dir = stack.first().map(|(_, d)| d.clone());
            let name = paren.replace_all(name, "");
            let mut dirs = Vec::new();
            let mut child = None;
            // `src/a.rs, a/`: a later name sits beside the one before it
            let mut beside: Option<String> = None;
            for t in tokens(&name) {
                let mut bases: Vec<String> = beside.iter().cloned().collect();
                bases.push(parent.clone());
                for f in ck.resolve(n, &t, &bases) {
                    beside = Some(
                        f.trim_end_matches('/')
                            .rsplit_once('/')
                            .map(|(d, _)| d.to_string())
                            .unwrap_or_default(),
                    );
                    if f.ends_with('/') {
                        child = Some(dir_of(&f));
                    }
                    dirs.push(dir_of(&f));
                }
            }
            let child = child.unwrap_or_else(|| parent.clone());
            entry_bases = dirs;
            entry_bases.push(child.clone());
            if let Some(c) = crate_dir.or_else(|| (indent == 0).then(|| child.clone())) {
                entry_bases.push(format!("{c}/src"));
                entry_bases.push(c);
            }
            entry_bases.push(String::new());
            stack.push((indent, child));
            last = None;
            desc
        };
        for t in tokens(desc).iter().filter(|t| is_path(t)) {
            let mut bases: Vec<String> = last.iter().cloned().collect();
            bases.extend(entry_bases.iter().cloned());
            let found = ck.resolve(n, t, &bases);
            if let Some(f) = found.first() {
                last = Some(dir_of(f));
            }
        }
    }
    ck
}

/// Module files (`x.rs`, `x/mod.rs`, `lib.rs`) under each crate's `src/`
/// that a Rust path's first segment may name.
fn module_roots(tree: &BTreeSet<String>, first: &str) -> Vec<String> {
    match first {
        "irqlab" => return vec!["crates/irqlab/src/lib.rs".into()],
        "irqlab_core" => return vec!["crates/irqlab-core/src/lib.rs".into()],
        "irqlab_bpf" => return vec!["crates/irqlab-bpf/src/lib.rs".into()],
        _ => {}
    }
    let a = format!("/{first}.rs");
    let b = format!("/{first}/mod.rs");
    tree.iter()
        .filter(|e| e.starts_with("crates/") && (e.contains("/src/") || e.contains("/tests/")))
        .filter(|e| e.ends_with(&a) || e.ends_with(&b))
        .cloned()
        .collect()
}

/// The directory holding a module's submodules.
fn module_dir(file: &str) -> String {
    if file.ends_with("/mod.rs") || file.ends_with("/lib.rs") {
        dir_of(file)
    } else {
        file.trim_end_matches(".rs").to_string()
    }
}

/// The text of a module: its file and every file below its directory.
fn module_text(root: &Path, tree: &BTreeSet<String>, file: &str) -> String {
    let dir = format!("{}/", module_dir(file));
    let mut text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
    for e in tree
        .iter()
        .filter(|e| e.starts_with(&dir) && e.ends_with(".rs"))
    {
        text.push_str(&std::fs::read_to_string(root.join(e)).unwrap_or_default());
    }
    text
}

fn defines(text: &str, name: &str) -> bool {
    let re = Regex::new(&format!(
        r"\b(fn|struct|enum|trait|type|const|static|mod|macro_rules!)\s+{0}\b|\bpub(\([a-z]+\))?\s+use\s[^;]*\b{0}\b",
        regex::escape(name)
    ))
    .unwrap();
    re.is_match(text)
}

/// Whether `a::b::c` names a module path and item that exist.
fn rust_path_exists(root: &Path, tree: &BTreeSet<String>, path: &str) -> bool {
    let segs: Vec<&str> = path.split("::").filter(|s| *s != "*").collect();
    let Some((first, rest)) = segs.split_first() else {
        return true;
    };
    let roots = module_roots(tree, first);
    if roots.is_empty() {
        // a type first (`HostFs::for_each_line`): the type is defined and
        // every following name appears in the file that defines it
        let def = Regex::new(&format!(
            r"\b(struct|enum|trait|type)\s+{}\b",
            regex::escape(first)
        ))
        .unwrap();
        return tree
            .iter()
            .filter(|e| e.starts_with("crates/") && e.contains("/src/") && e.ends_with(".rs"))
            .filter_map(|e| std::fs::read_to_string(root.join(e)).ok())
            .filter(|t| def.is_match(t))
            .any(|t| {
                rest.iter().all(|s| {
                    Regex::new(&format!(r"\b{}\b", regex::escape(s)))
                        .unwrap()
                        .is_match(&t)
                })
            });
    }
    roots.iter().any(|file| {
        let mut file = file.clone();
        let mut items = rest;
        while let Some((s, more)) = items.split_first() {
            let dir = module_dir(&file);
            let sub = [format!("{dir}/{s}.rs"), format!("{dir}/{s}/mod.rs")]
                .into_iter()
                .find(|f| tree.contains(f));
            match sub {
                Some(f) => {
                    file = f;
                    items = more;
                }
                None => break,
            }
        }
        // `a::b::Item`: a lower-case name with more after it is a module,
        // and it was not found
        if items.len() > 1 && items[0].starts_with(|c: char| c.is_ascii_lowercase()) {
            return false;
        }
        let text = module_text(root, tree, &file);
        items.iter().all(|s| defines(&text, s))
    })
}

/// Rust paths (`report::from_delta`, `irqlab_core::synth::SynthSpec`,
/// `HostFs::for_each_line`) named in HACKING.md, with their line.
fn rust_paths(hacking: &str) -> Vec<(usize, String)> {
    let re = Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*(::([A-Za-z_][A-Za-z0-9_]*|\*))+").unwrap();
    let mut out = Vec::new();
    let mut in_code = false;
    for (i, line) in hacking.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        for m in re.find_iter(line) {
            out.push((i + 1, m.as_str().to_string()));
        }
    }
    out
}

/// Whether a source file is a test module (not required in the layout).
fn is_test_module(p: &str) -> bool {
    let name = p.trim_end_matches('/').rsplit('/').next().unwrap_or(p);
    let stem = name.trim_end_matches(".rs");
    stem == "tests" || stem.ends_with("_tests")
}

/// Directories under a crate's `src/` whose members the layout names in
/// part: each unnamed member (file or directory; `mod.rs` and test modules
/// aside), with the directory. A crate's `src/` itself must be listed in
/// full: every top-level module and directory.
fn unlisted(tree: &BTreeSet<String>, named: &BTreeSet<String>) -> Vec<String> {
    let members = |dir: &str| -> Vec<String> {
        tree.iter()
            .filter(|e| {
                e.strip_prefix(dir)
                    .is_some_and(|r| !r.is_empty() && !r.trim_end_matches('/').contains('/'))
            })
            .cloned()
            .collect()
    };
    let mut dirs: BTreeSet<String> = CRATES.iter().map(|c| format!("{c}/src/")).collect();
    dirs.extend(
        tree.iter()
            .filter(|e| e.ends_with('/') && !e.ends_with("/snapshots/"))
            .filter(|e| CRATES.iter().any(|c| e.starts_with(&format!("{c}/src/"))))
            .cloned(),
    );
    let mut out = Vec::new();
    for dir in dirs {
        let m: Vec<String> = members(&dir)
            .into_iter()
            .filter(|e| {
                !e.ends_with("/mod.rs") && !e.ends_with("/lib.rs") && !e.ends_with("/main.rs")
            })
            .filter(|e| !is_test_module(e) && !e.ends_with("/snapshots/"))
            // a directory of test modules only (`replay/tests.rs`)
            .filter(|e| {
                !e.ends_with('/')
                    || tree.iter().any(|f| {
                        f.starts_with(e.as_str()) && !f.ends_with('/') && !is_test_module(f)
                    })
            })
            .collect();
        // a member is named when it, or anything below it, is
        let is_named = |e: &String| named.iter().any(|n| n.starts_with(e.as_str()));
        let top = dir.ends_with("/src/") && dir.matches('/').count() == 3;
        if !top && !m.iter().any(is_named) {
            continue;
        }
        for e in m.iter().filter(|e| !is_named(e)) {
            out.push(format!("{e} (the layout lists {dir} in part)"));
        }
    }
    out
}

fn hacking() -> (PathBuf, String, BTreeSet<String>) {
    let root = repo();
    let text = std::fs::read_to_string(root.join("HACKING.md")).unwrap();
    let tree = tree(&root);
    (root, text, tree)
}

#[test]
fn every_path_hacking_names_exists() {
    let (_, text, tree) = hacking();
    let ck = check_paths(&text, &tree);
    assert!(
        ck.bad.is_empty(),
        "HACKING.md names paths that do not exist:\n{}",
        ck.bad.join("\n")
    );
    assert!(
        ck.checked > 150,
        "only {} paths found in HACKING.md: is the scan broken?",
        ck.checked
    );
}

#[test]
fn every_rust_path_hacking_names_exists() {
    let (root, text, tree) = hacking();
    let paths = rust_paths(&text);
    let bad: Vec<String> = paths
        .iter()
        .filter(|(_, p)| !rust_path_exists(&root, &tree, p))
        .map(|(n, p)| format!("HACKING.md:{n}: `{p}` is not defined"))
        .collect();
    assert!(
        bad.is_empty(),
        "HACKING.md names Rust items that do not exist:\n{}",
        bad.join("\n")
    );
    assert!(paths.len() > 30, "only {} Rust paths found", paths.len());
}

#[test]
fn the_layout_lists_every_source_file_of_a_directory_it_opens() {
    let (_, text, tree) = hacking();
    let ck = check_paths(&text, &tree);
    let missing = unlisted(&tree, &ck.named);
    assert!(
        missing.is_empty(),
        "source files HACKING.md's layout does not name:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_checker_itself() {
    assert_eq!(
        tokens("see `cmd/{record,replay}.rs`, a.rs + b.rs (c/)."),
        ["see", "cmd/{record,replay}.rs", "a.rs", "b.rs", "c/"]
    );
    assert_eq!(
        expand("cmd/{record,replay}.rs"),
        ["cmd/record.rs", "cmd/replay.rs"]
    );
    assert!(is_path("scan/counts.rs") && is_path("top/") && is_path(".ci/run"));
    assert!(is_path("install-*.sh") && is_path("faults/<area>.sh"));
    assert!(!is_path("/proc/interrupts") && !is_path("irq/softirq") && !is_path("report::Report"));
    assert!(!is_path("proc/irq/N/…") && !is_path("plan.json") && !is_path("E1..E4"));
    assert_eq!(normal("a/./b/../c/"), "a/c/");

    let tree: BTreeSet<String> = [
        "crates/",
        "crates/irqlab/",
        "crates/irqlab/src/",
        "crates/irqlab/src/a.rs",
        "crates/irqlab/src/cmd/",
        "crates/irqlab/src/cmd/show.rs",
        "crates/irqlab/src/cmd/top.rs",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let md = "## Layout\n\n```\ncrates/irqlab/   the crate\n  src/cmd/     show.rs, top.rs\n    \
              show.rs    x\n    trace.rs   y\n  src/a.rs     cmd/gone.rs\n```\n\n- `cmd/{show,top}.rs`, `cmd/nope.rs`\n";
    let ck = check_paths(md, &tree);
    assert_eq!(ck.bad.len(), 3, "{:?}", ck.bad);
    assert!(
        ck.bad[0].starts_with("HACKING.md:7: `trace.rs`"),
        "{:?}",
        ck.bad
    );
    assert!(
        ck.bad[1].starts_with("HACKING.md:8: `cmd/gone.rs`"),
        "{:?}",
        ck.bad
    );
    assert!(
        ck.bad[2].starts_with("HACKING.md:11: `cmd/nope.rs`"),
        "{:?}",
        ck.bad
    );
    assert!(ck.named.contains("crates/irqlab/src/cmd/top.rs"));
}
