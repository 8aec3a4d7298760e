//! Shared helpers of the CLI integration tests: the binary, fake trees
//! (from `irqlab_core::synth` in-process, from `tests/fixtures/`, or from
//! a list of files), reading files back, a file replaced as `sed -i`
//! does, a `top --batch` started on a tree, and whether a live test may
//! take the host's run lock (`host_lock_held`: another irqlab run holds
//! it; a visible skip, or a failure under CI); `stall`: a child held at a
//! chosen write, to signal it there.
//!
//! Include with `mod common;` in a `tests/*.rs` file. Every tree lives in
//! a `TempDir` removed on drop, so tests leave nothing behind.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

/// `eprintln!` that `cargo test` shows for passing tests too: libtest
/// captures what the `eprintln!` macro prints, not writes to the stderr
/// handle, and a skip must be visible in normal test output.
#[macro_export]
macro_rules! visible {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod compare;
pub mod stall;
pub mod tmux;
pub mod trace;

use irqlab_core::render::{Arch, Era};
use irqlab_core::synth::SynthSpec;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The `irqlab` binary under test.
pub fn irqlab() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("irqlab").expect("the irqlab binary is built")
}

/// `tests/fixtures/<name>` (e.g. `vm-2cpu-6.18`, a real 2-CPU VM capture).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fresh temporary tree holding `files` (`(path relative to the root,
/// contents)`); parent directories are created.
pub fn tree_with<B: AsRef<[u8]>>(files: &[(&str, B)]) -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_files(dir.path(), files.iter().map(|(r, b)| (*r, b.as_ref())));
    dir
}

/// Write `(rel, contents)` pairs under `root`, creating directories.
pub fn write_files<'a>(root: &Path, files: impl IntoIterator<Item = (&'a str, &'a [u8])>) {
    for (rel, body) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("a path with a parent")).expect("mkdir");
        std::fs::write(&p, body).unwrap_or_else(|e| panic!("writing {}: {e}", p.display()));
    }
}

/// A temporary copy of fixture `name` (files that tests may change).
pub fn fixture_copy(name: &str) -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let e = e.expect("dir entry");
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        }
    }
}

/// A synthetic machine spec with the `irqlab synth` defaults (x86, era E3,
/// seed 1, nr_irqs as the CLI picks it); change fields before [`synth_tree`].
pub fn spec(cpus: u32, irqs: u32) -> SynthSpec {
    SynthSpec {
        cpus,
        irqs,
        nr_irqs: (irqs.saturating_add(irqs / 4).saturating_add(32)).max(424),
        arch: Arch::X86,
        era: Era::E3,
        offline: Vec::new(),
        seed: 1,
    }
}

/// A temporary fake `/proc` + `/sys` tree built in-process from `spec`
/// (the same files `irqlab synth` writes, without spawning it).
pub fn synth_tree(spec: &SynthSpec) -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    synth_into(spec, dir.path());
    dir
}

/// Write the tree of `spec` under `root`.
pub fn synth_into(spec: &SynthSpec, root: &Path) {
    let tree = spec.build().unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    let files = tree.files();
    write_files(root, files.iter().map(|(r, b)| (r.as_str(), b.as_slice())));
}

/// A file of a tree as text (panics naming the file).
pub fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A tree of only the three statistics files (`proc/interrupts`,
/// `proc/softirqs`, `proc/stat`) of the `vm-2cpu-6.18` fixture.
pub fn stats_tree() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fx = fixture("vm-2cpu-6.18").join("proc");
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    for f in ["interrupts", "softirqs", "stat"] {
        std::fs::copy(fx.join(f), dir.path().join("proc").join(f)).unwrap();
    }
    dir
}

/// A tree `irqlab bench --root` accepts: [`stats_tree`], `osrelease`, a
/// boot id, and `extra` files (sysctls the test changes), each written as
/// given.
pub fn bench_tree(osrelease: &str, boot_id: &str, extra: &[(&str, &str)]) -> TempDir {
    let dir = stats_tree();
    std::fs::create_dir_all(dir.path().join("proc/sys/kernel/random")).unwrap();
    let os = format!("{osrelease}\n");
    let boot = format!("{boot_id}\n");
    let fixed = [
        ("proc/sys/kernel/osrelease", os.as_str()),
        ("proc/sys/kernel/random/boot_id", boot.as_str()),
    ];
    for (rel, v) in fixed.iter().chain(extra) {
        std::fs::write(dir.path().join(rel), v).unwrap();
    }
    dir
}

/// Poll `f` every 20 ms until it holds (true) or `limit` passes (false).
pub fn wait_until(limit: std::time::Duration, mut f: impl FnMut() -> bool) -> bool {
    let t0 = std::time::Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// Put `text` at `path` as a new file (another inode), as `sed -i` does.
pub fn replace(path: &Path, text: &str) {
    let new = path.with_extension("new");
    std::fs::write(&new, text).unwrap();
    std::fs::rename(&new, path).unwrap();
}

/// `top --batch --format json -i 300ms -n N` on `root` (stdout and
/// stderr piped), once its first line is read: the child and its lines,
/// that first one included. Change the tree's files after this returns
/// and the next lines rate the change.
pub fn top_batch_started(
    root: &Path,
    n: u32,
) -> (std::process::Child, impl Iterator<Item = String>) {
    top_batch_started_as(root, "json", "300ms", n)
}

/// [`top_batch_started`] in `format` (`json` or `text`) every `interval`:
/// its first frame is read before this returns (a JSON line, or the text
/// lines through the frame's SUM line; each frame is written whole).
pub fn top_batch_started_as(
    root: &Path,
    format: &str,
    interval: &str,
    n: u32,
) -> (std::process::Child, impl Iterator<Item = String>) {
    use std::io::BufRead as _;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_irqlab"))
        .args(["top", "--batch", "--format", format, "-i", interval, "-n"])
        .arg(n.to_string())
        .arg("--root")
        .arg(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(Result::unwrap);
    let mut first = Vec::new();
    loop {
        let line = lines.next().expect("a first sample");
        let end = format == "json" || line.contains(" SUM ");
        first.push(line);
        if end {
            break;
        }
    }
    if format == "json" {
        assert!(first[0].starts_with('{'), "{}", first[0]);
    }
    (child, first.into_iter().chain(lines))
}

/// `irqlab replay REC --batch FLAGS…` (e.g. `["--format", "json"]`), run
/// to its end: its exit status, stdout and stderr.
pub fn replay_batch(rec: &Path, flags: &[&str]) -> std::process::Output {
    irqlab()
        .arg("replay")
        .arg(rec)
        .arg("--batch")
        .args(flags)
        .output()
        .expect("irqlab runs")
}

/// The JSON document a successful run printed (the stderr in the panic
/// message otherwise).
pub fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// A usage refusal: exit 2, `needle` on stderr, nothing on stdout.
pub fn refused(out: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "{needle:?} not in: {err}");
    assert!(out.stdout.is_empty());
}

/// `irqlab show --root ROOT ARGS…`: exit code, stdout, stderr.
#[allow(dead_code)]
pub fn show(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = irqlab()
        .args(["show", "--root"])
        .arg(root)
        .args(args)
        .output()
        .expect("irqlab runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    )
}

/// `serve` on an ephemeral local port for `duration`, up to its `--root`
/// flag: the tree's path comes next (`.args(serve_args("1s")).arg(root)`).
pub fn serve_args(duration: &str) -> [&str; 6] {
    [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--duration",
        duration,
        "--root",
    ]
}

/// The environment variable that lets tests change the host (CPU hotplug,
/// sysctls, IRQ affinity, tracefs mounts). `.ci/run` sets it; a plain
/// `cargo test`, even as root, leaves the machine alone.
pub const HOST_CHANGES_ENV: &str = "IRQLAB_TEST_HOST_CHANGES";

/// Whether `test` (`file: test name`) may change the host; says visibly
/// that it skips when it may not.
pub fn host_changes_allowed(test: &str) -> bool {
    if std::env::var_os(HOST_CHANGES_ENV).is_some_and(|v| v == "1") {
        return true;
    }
    visible!("{test}: SKIPPED: changes the host (set {HOST_CHANGES_ENV}=1, as .ci/run does)");
    false
}

/// The variable CI systems set (`.ci/run` sets `CI=true`): there nothing
/// else may hold the host, so a held run lock fails a test, never skips it.
pub const CI_ENV: &str = "CI";

/// Whether `test` (`file: test name`), whose runs take the live host's
/// run lock (`bench`, `trace` mounting tracefs), must skip because another
/// irqlab run holds it; says so visibly, naming the holder. Under CI
/// ([`CI_ENV`] set) the test fails instead.
pub fn host_lock_held(test: &str) -> bool {
    match host_lock_skip_reason() {
        Some(why) => {
            visible!("{test}: SKIPPED: {why}");
            true
        }
        None => false,
    }
}

/// [`run_lock_taken`] of the live host's locks: why a test that takes the
/// run lock cannot run here, if it cannot; panics under CI ([`CI_ENV`]
/// set and not empty).
pub fn host_lock_skip_reason() -> Option<String> {
    let ci = std::env::var_os(CI_ENV).is_some_and(|v| !v.is_empty());
    run_lock_taken(&irqlab::guard::live_host_locks(), ci).unwrap_or_else(|e| panic!("{e}"))
}

/// The first of `locks` that a live run other than this test process (or
/// a process it started: a sibling test's run) holds, as its lock file
/// names the holder: `Ok(Some(why))` to skip, or `Err` when `ci`, where
/// the test must fail.
pub fn run_lock_taken(locks: &[PathBuf], ci: bool) -> Result<Option<String>, String> {
    let Some((path, h)) = locks.iter().find_map(|p| foreign_holder(p)) else {
        return Ok(None);
    };
    let why = format!(
        "another irqlab run holds the host: {h} (lock {})",
        path.display()
    );
    match ci {
        true => Err(format!(
            "{why}; {CI_ENV} is set, where nothing else may hold it: failing, not skipping"
        )),
        false => Ok(Some(why)),
    }
}

/// The live holder of the lock at `path` when it is not this process or
/// one of its descendants (an unreadable lock is the run's to report).
fn foreign_holder(path: &Path) -> Option<(PathBuf, irqlab::guard::Holder)> {
    let h = irqlab::guard::read_holder(path).ok().flatten()?;
    (h.is_live() && !started_here(h.pid)).then(|| (path.to_path_buf(), h))
}

/// Is `pid` this process or a process it started (its parents' chain
/// reaches this process)?
fn started_here(pid: u32) -> bool {
    let me = std::process::id();
    let mut p = pid;
    // a bounded walk: a pid reused while we read ends it
    for _ in 0..64 {
        if p == me {
            return true;
        }
        let parent = std::fs::read(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|t| irqlab_core::PidStat::parse(&t).ok())
            .and_then(|s| s.ppid);
        match parent {
            Some(pp) if pp > 1 => p = pp,
            _ => return false,
        }
    }
    false
}

/// A standard stream that fails every write: `/dev/full` (ENOSPC) when
/// `full`, else a pipe whose reading end is already closed (EPIPE).
pub fn failing_stdio(full: bool) -> std::process::Stdio {
    if full {
        std::process::Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
    } else {
        let (read, write) = nix::unistd::pipe().unwrap();
        drop(read);
        std::process::Stdio::from(write)
    }
}

/// `proc/PID/{comm,stat,schedstat}` of a kernel thread `comm` in `tree`,
/// `cpu_ns` its CPU time so far (schedstat's first field).
pub fn fake_thread(tree: &Path, pid: u32, comm: &str, cpu_ns: u64) {
    let dir = tree.join(format!("proc/{pid}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut f: Vec<String> = (3..=41).map(|_| "0".to_string()).collect();
    f[0] = "S".into();
    std::fs::write(dir.join("comm"), format!("{comm}\n")).unwrap();
    std::fs::write(
        dir.join("stat"),
        format!("{pid} ({comm}) {}\n", f.join(" ")),
    )
    .unwrap();
    std::fs::write(dir.join("schedstat"), format!("{cpu_ns} 0 1\n")).unwrap();
}
