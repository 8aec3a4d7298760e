//! A path from a tree reaches stderr with its control characters shown
//! as `\xNN`, like the text of show and top (`export/grid.rs`): a
//! `--root` or output directory whose name holds ESC cannot drive the
//! terminal through an error, a warning or a note, nor through the
//! human-readable lines of `restore`, `guard-selftest` and `man --out` on
//! stdout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

mod common;

/// A directory whose name holds ESC, a terminal colour sequence, BEL and
/// DEL, under a fresh temporary directory.
fn hostile_dir(base: &Path) -> PathBuf {
    let d = base.join("a\x1b[31mb\x07c\x7fd");
    std::fs::create_dir(&d).unwrap();
    d
}

/// Stderr of irqlab run with `args` and the path `path` after them.
fn stderr_of(args: &[&str], path: &Path) -> (Option<i32>, String) {
    let out = common::irqlab().args(args).arg(path).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Stderr names the hostile directory escaped, and holds no raw control
/// byte but the newlines.
fn assert_escaped(what: &str, err: &str) {
    assert!(
        err.contains("a\\x1b[31mb\\x07c\\x7fd"),
        "{what}: the path is not named escaped: {err:?}"
    );
    assert!(
        !err.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: a raw control character: {err:?}"
    );
}

#[test]
fn paths_on_stderr_have_their_control_characters_escaped() {
    let base = tempfile::tempdir().unwrap();
    let dir = hostile_dir(base.path());
    let root = dir.join("tree");
    common::synth_into(&common::spec(2, 4), &root);
    // a note naming a missing file
    std::fs::remove_file(root.join("proc/softirqs")).unwrap();
    let (code, err) = stderr_of(&["show", "--root"], &root);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("irqlab: note: "), "{err}");
    assert_escaped("show's note", &err);
    // an error naming a file that does not parse
    std::fs::write(
        root.join("proc/interrupts"),
        "           CPU0       CPU1\n  1: x\n",
    )
    .unwrap();
    let (code, err) = stderr_of(&["show", "--root"], &root);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with("irqlab: error: "), "{err}");
    assert_escaped("show's parse error", &err);
    // an error naming the root itself
    let (code, err) = stderr_of(&["restore", "--root"], &dir.join("missing"));
    assert_eq!(code, Some(1), "{err}");
    assert_escaped("restore's missing root", &err);
    // a message naming an output directory (record's own writer)
    let fresh = base.path().join("fresh");
    common::synth_into(&common::spec(2, 4), &fresh);
    let out = common::irqlab()
        .args(["record", "-i", "10ms", "--duration", "30ms", "--root"])
        .arg(&fresh)
        .arg("-o")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("recording to"), "{err}");
    assert_escaped("record's announcement", &err);
}

/// `restore`'s lines on stdout (human-readable: each starts `irqlab: `)
/// name the journal's paths and the journal itself with their control
/// characters shown as `\xNN`, as stderr does. The tree is a temporary
/// directory: only its file is written back.
#[test]
fn restore_lines_on_stdout_have_their_control_characters_escaped() {
    let base = tempfile::tempdir().unwrap();
    let root = hostile_dir(base.path());
    let rel = "proc/sys/vm/x\x1b[31my";
    common::write_files(&root, [(rel, &b"7\n"[..])]);
    let entry = serde_json::json!({"kind": "file", "path": rel, "old": "1\n", "new": "7\n"});
    std::fs::write(root.join(".irqlab-journal.jsonl"), format!("{entry}\n")).unwrap();
    let out = common::irqlab()
        .args(["restore", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(common::read(&root, rel), "1\n", "the file is restored");
    assert!(
        text.contains("irqlab: restored proc/sys/vm/x\\x1b[31my = \"1\" (was set to"),
        "{text:?}"
    );
    assert!(text.contains("irqlab: removed "), "{text:?}");
    assert_escaped("restore's stdout", &text);
}

/// `man --out DIR`'s list of the pages it wrote names DIR with its
/// control characters shown as `\xNN`, as stderr does.
#[test]
fn man_out_list_on_stdout_has_its_control_characters_escaped() {
    let base = tempfile::tempdir().unwrap();
    let dir = hostile_dir(base.path()).join("man1");
    let out = common::irqlab()
        .args(["man", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(dir.join("irqlab-show.1").exists(), "the pages are written");
    assert!(text.contains("man1/irqlab-show.1"), "{text:?}");
    assert_escaped("man --out's list", &text);
}

/// `guard-selftest`'s lines on stdout (its `ready:` line naming the
/// journal, the restore report naming the files) show control characters
/// as `\xNN`. The tree is a temporary directory: only its file is changed,
/// then restored.
#[test]
fn guard_selftest_lines_on_stdout_have_their_control_characters_escaped() {
    let base = tempfile::tempdir().unwrap();
    let root = hostile_dir(base.path());
    let rel = "proc/sys/vm/x\x1b[31my";
    common::write_files(&root, [(rel, &b"1\n"[..])]);
    let out = common::irqlab()
        .args(["guard-selftest", "--set", &format!("{rel}=7"), "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    assert_eq!(common::read(&root, rel).trim(), "1", "the file is restored");
    assert!(
        text.contains("ready: 1 change(s) journaled in "),
        "{text:?}"
    );
    assert!(text.contains("x\\x1b[31my"), "{text:?}");
    assert_escaped("guard-selftest's stdout", &text);
}
