//! Output files (`probe --out`, `compare --plot`, `compare --html`) are
//! written as `cp` or `tee` would: through a symlink (the link stays), in
//! place into a FIFO or a device (never replaced by a regular file; a
//! write error there is exit 1 naming the file). Write errors on stdout
//! name stdout. Device nodes are made in a temporary directory (root
//! only), never the host's `/dev` ones.

#![allow(clippy::unwrap_used)]

mod common;
use common::compare::{compare, numbers, spread};
use common::{irqlab, spec, synth_into};
use std::fs;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// A 2-CPU fake tree under `dir/tree`.
fn tree(dir: &Path) -> PathBuf {
    let root = dir.join("tree");
    synth_into(&spec(2, 4), &root);
    root
}

/// `irqlab probe --out target` on the tree under `dir`.
fn probe_out(dir: &Path, target: &Path) -> std::process::Output {
    irqlab()
        .arg("probe")
        .arg("--root")
        .arg(tree(dir))
        .args(["--reads", "10", "--format", "json", "--out"])
        .arg(target)
        .output()
        .unwrap()
}

/// Two number files for `compare` in `dir`.
fn inputs(dir: &Path) {
    numbers(&dir.join("a.txt"), spread(100.0, 1.0, 30));
    numbers(&dir.join("b.txt"), spread(104.0, 1.0, 30));
}

/// `irqlab compare a.txt b.txt FLAG target` in `dir`.
fn compare_out(dir: &Path, flag: &str, target: &Path) -> std::process::Output {
    let target = target.to_str().unwrap();
    compare(dir, &["a.txt", "b.txt", flag, target])
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Reads a FIFO whole in a thread, as `cat fifo` would.
fn drain(fifo: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let fifo = fifo.to_path_buf();
    std::thread::spawn(move || {
        let mut v = Vec::new();
        fs::File::open(fifo).unwrap().read_to_end(&mut v).unwrap();
        v
    })
}

/// What the [`drain`] thread read; a FIFO that irqlab left unopened
/// (or replaced) ends the thread's wait instead of hanging the test.
fn drained(fifo: &Path, reader: std::thread::JoinHandle<Vec<u8>>) -> Vec<u8> {
    assert!(is_fifo(fifo), "the FIFO was replaced");
    use std::os::unix::fs::OpenOptionsExt;
    let _ = fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(fifo);
    reader.join().unwrap()
}

fn is_fifo(p: &Path) -> bool {
    fs::symlink_metadata(p).unwrap().file_type().is_fifo()
}

fn is_char_device(p: &Path) -> bool {
    fs::symlink_metadata(p)
        .unwrap()
        .file_type()
        .is_char_device()
}

#[test]
fn a_fifo_is_written_in_place_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    inputs(dir.path());
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let reader = drain(&fifo);
    let out = probe_out(dir.path(), &fifo);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got: serde_json::Value = serde_json::from_slice(&drained(&fifo, reader)).unwrap();
    assert_eq!(got["version"], 3, "{got}");
    assert!(is_fifo(&fifo), "probe --out replaced the FIFO");
    for (flag, start) in [("--plot", "<svg"), ("--html", "<!DOCTYPE html>")] {
        let reader = drain(&fifo);
        let out = compare_out(dir.path(), flag, &fifo);
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", stderr(&out));
        let got = String::from_utf8(drained(&fifo, reader)).unwrap();
        assert!(got.starts_with(start), "{flag}: {got:.80}");
        assert!(is_fifo(&fifo), "compare {flag} replaced the FIFO");
    }
    let mut names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["a.txt", "b.txt", "fifo", "tree"],
        "no temporary file"
    );
}

/// A FIFO whose reader takes 10 bytes and goes away, as `head -c 10 fifo`.
fn take_ten(fifo: &Path) -> std::thread::JoinHandle<()> {
    let fifo = fifo.to_path_buf();
    std::thread::spawn(move || {
        let mut got = [0u8; 10];
        fs::File::open(fifo).unwrap().read_exact(&mut got).unwrap();
    })
}

#[test]
fn a_fifo_reader_gone_early_is_exit_1_naming_the_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let reader = take_ten(&fifo);
    // 1000 reads of each target × method × buffer: far more than a pipe holds.
    let out = irqlab()
        .arg("probe")
        .arg("--root")
        .arg(tree(dir.path()))
        .args(["--reads", "1000", "--format", "json", "--out"])
        .arg(&fifo)
        .output()
        .unwrap();
    reader.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("writing {}", fifo.display())) && err.contains("broken pipe"),
        "{err}"
    );
}

#[test]
fn a_symlink_is_followed_and_stays() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    inputs(d);
    fs::create_dir(d.join("real")).unwrap();
    fs::write(d.join("real/file"), "old").unwrap();
    // a relative link, read from the link's own directory
    fs::create_dir(d.join("links")).unwrap();
    std::os::unix::fs::symlink("../real/file", d.join("links/link")).unwrap();
    let link = d.join("links/link");
    let out = probe_out(d, &link);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = fs::read_to_string(d.join("real/file")).unwrap();
    assert!(text.contains("\"version\""), "{text}");
    for flag in ["--plot", "--html"] {
        fs::write(d.join("real/file"), "old").unwrap();
        let out = compare_out(d, flag, Path::new("links/link"));
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", stderr(&out));
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_ne!(fs::read_to_string(d.join("real/file")).unwrap(), "old");
    }
    assert_eq!(fs::read_dir(d.join("links")).unwrap().count(), 1);
    assert_eq!(fs::read_dir(d.join("real")).unwrap().count(), 1);
    // a dangling link: its target is created, as `>` would
    std::os::unix::fs::symlink("new.json", d.join("dangling")).unwrap();
    let out = probe_out(d, &d.join("dangling"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(fs::symlink_metadata(d.join("dangling"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::metadata(d.join("new.json")).unwrap().is_file());
    // a link to a directory is refused, naming the path given
    std::os::unix::fs::symlink("real", d.join("to_dir")).unwrap();
    let out = probe_out(d, &d.join("to_dir"));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let want = format!("writing {}: is a directory", d.join("to_dir").display());
    assert!(err.contains(&want), "{err}");
    // a loop is an error, not a hang
    std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
    let out = probe_out(d, &d.join("loop"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("symbolic links"), "{}", stderr(&out));
}

/// A character device made in `dir` (`major`, `minor`), or None (said on
/// stderr) when it cannot be made or opened here (not root, `nodev`).
fn device(dir: &Path, name: &str, major: u64, minor: u64) -> Option<PathBuf> {
    use nix::sys::stat::{makedev, mknod, Mode, SFlag};
    let p = dir.join(name);
    let made = mknod(
        &p,
        SFlag::S_IFCHR,
        Mode::from_bits_truncate(0o666),
        makedev(major, minor),
    );
    if let Err(e) = made {
        eprintln!("SKIPPED: mknod {} c {major} {minor}: {e}", p.display());
        return None;
    }
    if let Err(e) = fs::OpenOptions::new().write(true).open(&p) {
        eprintln!("SKIPPED: {} cannot be opened here: {e}", p.display());
        return None;
    }
    Some(p)
}

#[test]
fn a_device_is_written_in_place_and_its_errors_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    inputs(d);
    let (Some(null), Some(full)) = (device(d, "null", 1, 3), device(d, "full", 1, 7)) else {
        return;
    };
    let out = probe_out(d, &null);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(is_char_device(&null), "probe --out replaced the device");
    let out = probe_out(d, &full);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let want = format!("irqlab: error: writing {}: ", full.display());
    assert!(err.starts_with(&want), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(is_char_device(&full), "probe --out replaced the device");
    for flag in ["--plot", "--html"] {
        let out = compare_out(d, flag, Path::new("null"));
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", stderr(&out));
        let out = compare_out(d, flag, Path::new("full"));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(
            err.contains("writing full: No space left on device"),
            "{flag}: {err}"
        );
        assert!(is_char_device(&null) && is_char_device(&full), "{flag}");
    }
}

/// Runs irqlab with stdout on `/dev/full` (the host's node, only opened:
/// a redirection cannot replace it).
fn to_full(args: &[&str], dir: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .current_dir(dir)
        .args(args)
        .stdout(common::failing_stdio(true))
        .output()
        .unwrap()
}

#[test]
fn a_full_stdout_is_named() {
    if !Path::new("/dev/full").exists() || !is_char_device(Path::new("/dev/full")) {
        eprintln!("SKIPPED: no /dev/full character device");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    inputs(dir.path());
    let root = tree(dir.path());
    let root = root.to_str().unwrap();
    let want = "irqlab: error: stdout: No space left on device (os error 28)";
    for args in [
        &["show", "--root", root][..],
        &["show", "--format", "json", "--root", root],
        &["top", "--batch", "-n", "1", "-i", "10ms", "--root", root],
        &["probe", "--reads", "2", "--root", root],
        &["compare", "a.txt", "b.txt"],
    ] {
        let out = to_full(args, dir.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
