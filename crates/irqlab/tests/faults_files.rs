//! Hostile files through the real binary: a FIFO, a socket, a
//! directory or `/dev/zero` in a `--root` tree is refused by name (never a
//! hang: every child runs under a timeout), and a 2 GiB sparse file stops
//! at the read limit with a clear error instead of eating memory; a copy
//! cut inside its last line is refused naming the file and line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn tree() -> tempfile::TempDir {
    common::stats_tree()
}

/// `irqlab ARGS --root ROOT` under a 60 s timeout: exit 1, stderr returned.
fn fails(root: &Path, args: &[&str]) -> String {
    let out = Command::cargo_bin("irqlab")
        .unwrap()
        .args(args)
        .arg("--root")
        .arg(root)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.starts_with("irqlab:"), "{err}");
    err
}

fn replace(root: &Path, rel: &str, make: impl FnOnce(&Path)) -> PathBuf {
    let p = root.join(rel);
    std::fs::remove_file(&p).unwrap();
    make(&p);
    p
}

const SHOW: &[&str] = &["show"];
const SHOW_IV: &[&str] = &["show", "--interval", "10ms"];
const TOP: &[&str] = &["top", "--batch", "-i", "10ms", "-n", "2"];

#[test]
fn fifo_in_any_stats_file_is_refused_by_show_and_top() {
    for rel in ["proc/interrupts", "proc/softirqs", "proc/stat"] {
        let dir = tree();
        let p = replace(dir.path(), rel, |p| {
            nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap()
        });
        for args in [SHOW, SHOW_IV, TOP] {
            let err = fails(dir.path(), args);
            assert!(err.contains(&p.display().to_string()), "{args:?}: {err}");
            assert!(err.contains("FIFO"), "{args:?}: {err}");
        }
    }
}

/// A file type's name in the error and how to make one.
type Kind = (&'static str, fn(&Path));

#[test]
fn socket_directory_and_dev_zero_are_refused() {
    let kinds: [Kind; 3] = [
        ("socket", |p| {
            std::os::unix::net::UnixListener::bind(p).map(drop).unwrap()
        }),
        ("directory", |p| std::fs::create_dir(p).unwrap()),
        ("character device", |p| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
    ];
    for (name, make) in kinds {
        let dir = tree();
        let p = replace(dir.path(), "proc/interrupts", make);
        for args in [SHOW, TOP] {
            let err = fails(dir.path(), args);
            assert!(err.contains(&p.display().to_string()), "{err}");
            assert!(err.contains(name), "{name}: {err}");
        }
    }
}

#[test]
fn sparse_2gib_file_stops_at_the_line_limit() {
    let dir = tree();
    let p = replace(dir.path(), "proc/interrupts", |p| {
        std::fs::File::create(p).unwrap().set_len(2 << 30).unwrap()
    });
    let err = fails(dir.path(), SHOW);
    assert!(err.contains(&p.display().to_string()), "{err}");
    assert!(err.contains("line longer than"), "{err}");
}

#[test]
fn symlink_loop_in_place_of_a_stats_file_is_refused_not_missing() {
    for rel in ["proc/interrupts", "proc/softirqs", "proc/stat"] {
        let dir = tree();
        let p = replace(dir.path(), rel, |p| {
            std::os::unix::fs::symlink(p, p).unwrap()
        });
        for args in [SHOW, SHOW_IV, TOP] {
            let err = fails(dir.path(), args);
            assert!(err.contains(&p.display().to_string()), "{args:?}: {err}");
            assert!(err.contains("symbolic links"), "{args:?}: {err}");
        }
    }
}

/// `text` cut inside the last count of the line that starts with `label`
/// (no newline after it, nothing after it), and the line's number.
fn cut_in_last_count(text: &str, label: &str) -> (String, usize) {
    let (i, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with(label))
        .unwrap();
    let start = text.lines().take(i).map(|l| l.len() + 1).sum::<usize>();
    let counts = line
        .split_whitespace()
        .skip(1)
        .take_while(|w| w.bytes().all(|b| b.is_ascii_digit()));
    let last = counts.last().unwrap();
    let at = line.find(&format!(" {last}")).unwrap() + 1 + last.len() / 2;
    (text[..start + at.max(1)].to_string(), i + 1)
}

#[test]
fn a_copy_cut_inside_its_last_line_is_refused_naming_file_and_line() {
    for (rel, label) in [
        ("proc/interrupts", "LOC:"),
        ("proc/softirqs", "RCU:"),
        ("proc/stat", "ctxt "),
    ] {
        let dir = tree();
        let p = dir.path().join(rel);
        let (cut, line) = cut_in_last_count(&std::fs::read_to_string(&p).unwrap(), label);
        assert!(cut.ends_with(|c: char| c.is_ascii_digit()), "{cut}");
        std::fs::write(&p, &cut).unwrap();
        let want = format!(
            "{}:{line}: truncated line (no newline at end of file)",
            p.display()
        );
        for args in [SHOW, SHOW_IV, TOP] {
            let err = fails(dir.path(), args);
            assert!(err.contains(&want), "{args:?}: {err}");
        }
    }
}
