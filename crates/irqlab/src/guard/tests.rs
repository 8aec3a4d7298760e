//! SystemGuard tests against fake trees (order of the protocol, restore
//! after success, error and panic, journal replay) and live round trips
//! (own threads' affinity; a sysctl when root).

use super::*;
use std::sync::Arc;

/// A fake root with `files` (relative path, content).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

fn guard(root: &Path) -> SystemGuard {
    SystemGuard::new(&HostFs::new(root), default_journal(root)).unwrap()
}

/// An observer that logs each event with the target file's content and
/// the number of journal lines at that moment.
fn logging(root: &Path, rel_of: fn(&Change) -> String) -> (Observer, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (root, out) = (root.to_path_buf(), Arc::clone(&log));
    let obs: Observer = Box::new(move |e: &Event<'_>| {
        let (what, c) = match e {
            Event::Journaled(c) => ("journal", c),
            Event::Applied(c) => ("apply", c),
            Event::Withdrawn(c) => ("withdraw", c),
            Event::Restored(c) => ("restore", c),
            Event::Gone(c) => ("gone", c),
            Event::RestoreFailed(c) => ("fail", c),
        };
        let rel = rel_of(c);
        let now = std::fs::read_to_string(root.join(&rel)).unwrap_or_default();
        let lines = std::fs::read_to_string(default_journal(&root))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        out.lock()
            .unwrap()
            .push(format!("{what} {rel}={} j{lines}", now.trim()));
    });
    (obs, log)
}

fn path_of(c: &Change) -> String {
    match c {
        Change::File { path, .. } => path.clone(),
        Change::Affinity { pid, .. } => pid.to_string(),
        Change::TempFile { path } => path.clone(),
        Change::ProcessGroup { pgid, .. } => pgid.to_string(),
        Change::Mount { path, .. } => path.clone(),
        Change::NetNamespace { name } => name.clone(),
    }
}

#[test]
fn journal_before_write_then_reverse_restore() {
    let dir = tree(&[("a", "1\n"), ("b", "x\n")]);
    let root = dir.path();
    let mut g = guard(root);
    let (obs, log) = logging(root, path_of);
    g.set_observer(obs);
    assert!(g.set_file("a", "2").unwrap());
    assert!(g.set_file("b", "y").unwrap());
    assert!(g.set_file("a", "3").unwrap());
    let journal = read(root, ".irqlab-journal.jsonl");
    assert_eq!(
        journal.lines().next().unwrap(),
        r#"{"kind":"file","path":"a","old":"1\n","new":"2"}"#
    );
    let report = g.restore().unwrap();
    assert_eq!(report.restored.len(), 3);
    // the original bytes, the newline too
    assert_eq!(
        (read(root, "a"), read(root, "b")),
        ("1\n".into(), "x\n".into())
    );
    assert!(!default_journal(root).exists());
    let expected = [
        "journal a=1 j1",
        "apply a=2 j1",
        "journal b=x j2",
        "apply b=y j2",
        "journal a=2 j3",
        "apply a=3 j3",
        "restore a=2 j3",
        "restore b=x j3",
        "restore a=1 j3",
    ];
    assert_eq!(*log.lock().unwrap(), expected);
    drop(g);
    assert_eq!(log.lock().unwrap().len(), expected.len(), "restored once");
}

#[test]
fn unchanged_value_is_not_journaled() {
    let dir = tree(&[("k", "4\t4\t1\t7\n")]);
    let mut g = guard(dir.path());
    assert!(!g.set_file("k", "4 4 1 7").unwrap());
    assert_eq!(g.pending(), 0);
    assert!(!default_journal(dir.path()).exists());
}

#[test]
fn unreadable_file_is_refused_before_journaling() {
    let dir = tree(&[]);
    let mut g = guard(dir.path());
    let err = format!("{:#}", g.set_file("proc/sys/nope", "1").unwrap_err());
    assert!(
        err.contains("proc/sys/nope") && err.contains("needed to restore"),
        "{err}"
    );
    assert!(!default_journal(dir.path()).exists());
}

#[test]
fn a_file_that_is_not_utf8_is_refused_before_journaling() {
    let dir = tree(&[]);
    std::fs::write(dir.path().join("k"), b"1\xff\n").unwrap();
    let mut g = guard(dir.path());
    let err = format!("{:#}", g.set_file("k", "2").unwrap_err());
    assert!(
        err.contains("not UTF-8") && err.contains("byte for byte"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.path().join("k")).unwrap(), b"1\xff\n");
    assert!(!default_journal(dir.path()).exists());
}

fn three_steps_then_fail(root: &Path) -> Result<()> {
    let mut g = guard(root);
    g.set_file("a", "2")?;
    g.set_file("b", "y")?;
    g.set_file("missing", "z")?;
    g.restore().map(|_| ())
}

#[test]
fn error_path_restores_via_drop() {
    let dir = tree(&[("a", "1"), ("b", "x")]);
    assert!(three_steps_then_fail(dir.path()).is_err());
    assert_eq!(
        (read(dir.path(), "a"), read(dir.path(), "b")),
        ("1".into(), "x".into())
    );
    assert!(!default_journal(dir.path()).exists());
}

#[test]
fn panic_restores_via_drop() {
    let dir = tree(&[("a", "1")]);
    let root = dir.path().to_path_buf();
    let r = std::panic::catch_unwind(|| {
        let mut g = guard(&root);
        g.set_file("a", "2").unwrap();
        panic!("boom with the guard held");
    });
    assert!(r.is_err());
    assert_eq!(read(dir.path(), "a"), "1");
    assert!(!default_journal(dir.path()).exists());
}

#[test]
fn panic_hook_restores_a_guard_that_never_drops() {
    let dir = tree(&[("a", "1")]);
    let root = dir.path().to_path_buf();
    let r = std::thread::spawn(move || {
        let g: &'static mut SystemGuard = Box::leak(Box::new(guard(&root)));
        g.set_file("a", "2").unwrap();
        panic!("boom with a leaked guard");
    })
    .join();
    assert!(r.is_err());
    assert_eq!(read(dir.path(), "a"), "1");
    assert!(!default_journal(dir.path()).exists());
}

/// The panic hook undoes a thread's guards newest first, as Drop does:
/// the second guard's change (which may rest on the first's) goes first.
#[test]
fn panic_hook_restores_the_newest_guard_first() {
    let dir = tree(&[("a", "1"), ("b", "x")]);
    let root = dir.path().to_path_buf();
    let log = Arc::new(Mutex::new(Vec::new()));
    let out = Arc::clone(&log);
    let r = std::thread::spawn(move || {
        let journals = [
            default_journal(&root),
            variant_journal(&default_journal(&root)),
        ];
        for (j, (rel, value)) in journals.into_iter().zip([("a", "2"), ("b", "y")]) {
            let g = SystemGuard::new(&HostFs::new(&root), j).unwrap();
            let g: &'static mut SystemGuard = Box::leak(Box::new(g));
            let out = Arc::clone(&out);
            g.set_observer(Box::new(move |e: &Event<'_>| {
                if let Event::Restored(c) = e {
                    out.lock().unwrap().push(path_of(c));
                }
            }));
            g.set_file(rel, value).unwrap();
        }
        panic!("boom with two leaked guards");
    })
    .join();
    assert!(r.is_err());
    assert_eq!(*log.lock().unwrap(), ["b", "a"]);
    assert_eq!(
        (read(dir.path(), "a"), read(dir.path(), "b")),
        ("1".into(), "x".into())
    );
}

#[test]
fn leftover_journal_blocks_new_guard_until_replayed() {
    let dir = tree(&[("a", "1"), ("b", "x")]);
    let root = dir.path();
    let mut g = guard(root);
    g.set_file("a", "2").unwrap();
    g.set_file("b", "y").unwrap();
    hooks::lock(&g.shared).closed = Some("a simulated SIGKILL");
    std::mem::forget(g); // like SIGKILL: no restore
    assert_eq!(read(root, "a"), "2");
    let err = SystemGuard::new(&HostFs::new(root), default_journal(root))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("2 unrestored") && err.contains("irqlab restore"),
        "{err}"
    );
    let report = replay_journal(&HostFs::new(root), &default_journal(root)).unwrap();
    assert_eq!(report.restored.len(), 2);
    assert!(report
        .to_string()
        .starts_with("restored b = \"x\" (was set to \"y\")"));
    assert_eq!((read(root, "a"), read(root, "b")), ("1".into(), "x".into()));
    assert!(!default_journal(root).exists());
    drop(guard(root));
}

#[test]
fn failed_undo_is_reported_and_kept_in_the_journal() {
    let dir = tree(&[("a", "1"), ("sub/b", "x")]);
    let root = dir.path();
    let mut g = guard(root);
    g.set_file("a", "2").unwrap();
    g.set_file("sub/b", "y").unwrap();
    std::fs::remove_dir_all(root.join("sub")).unwrap();
    let err = format!("{:#}", g.restore().unwrap_err());
    assert!(
        err.contains("restored a") && err.contains("FAILED sub/b"),
        "{err}"
    );
    let hint = format!("then run `irqlab restore --root {}`", root.display());
    assert!(err.contains(&hint), "{err}");
    assert_eq!(read(root, "a"), "1");
    let left = journal::load(&default_journal(root)).unwrap().entries;
    assert_eq!(left.len(), 1);
    assert!(matches!(left.first(), Some(Change::File { path, .. }) if path == "sub/b"));
}

#[test]
fn restore_command_names_the_root_and_journal_that_are_not_the_defaults() {
    let live = Path::new("/");
    assert_eq!(
        restore_command(live, &default_journal(live)),
        "irqlab restore"
    );
    assert_eq!(
        restore_command(live, Path::new("/x/j")),
        "irqlab restore --journal /x/j"
    );
    let tree = Path::new("/tmp/t");
    assert_eq!(
        restore_command(tree, &default_journal(tree)),
        "irqlab restore --root /tmp/t"
    );
    assert_eq!(
        restore_command(Path::new("/a b"), Path::new("/a b/j")),
        "irqlab restore --root '/a b' --journal '/a b/j'"
    );
}

#[test]
fn default_journal_paths() {
    assert_eq!(
        default_journal(Path::new("/")),
        Path::new("/var/lib/irqlab/journal.jsonl")
    );
    assert_eq!(
        default_journal(Path::new("/tmp/t")),
        Path::new("/tmp/t/.irqlab-journal.jsonl")
    );
}

/// A thread parked until the returned sender is dropped; yields its TID.
fn parked_thread() -> (
    i32,
    std::sync::mpsc::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let h = std::thread::spawn(move || {
        tid_tx.send(nix::unistd::gettid().as_raw()).unwrap();
        let _ = stop_rx.recv();
    });
    (tid_rx.recv().unwrap(), stop_tx, h)
}

#[test]
fn live_thread_affinity_round_trip_and_gone_thread() {
    let dir = tree(&[]);
    let (tid, stop, h) = parked_thread();
    let before = affinity::get(tid).unwrap();
    if before.len() < 2 {
        eprintln!("skipping: thread may run on only {before} CPU(s)");
        return;
    }
    let first = CpuList::from_cpus(before.iter().take(1));
    let mut g = guard(dir.path());
    assert!(g.set_thread_affinity(tid, &first).unwrap());
    assert_eq!(affinity::get(tid).unwrap(), first);
    assert!(!g.set_thread_affinity(tid, &first).unwrap());
    g.restore().unwrap();
    assert_eq!(affinity::get(tid).unwrap(), before);

    assert!(g.set_thread_affinity(tid, &first).unwrap());
    drop(stop);
    h.join().unwrap();
    let report = g.restore().unwrap();
    assert_eq!(report.gone.len(), 1, "{report}");
    assert!(report.to_string().contains("has exited"));
}

/// A journaled affinity of another boot names a thread id of that boot:
/// replaying it must not move this boot's thread of the same id.
#[test]
fn affinity_of_another_boot_is_not_replayed() {
    let dir = tree(&[]);
    let (tid, stop, h) = parked_thread();
    let before = affinity::get(tid).unwrap();
    let other = if before.contains(0) && before.len() > 1 {
        "1"
    } else {
        "0"
    };
    let j = dir.path().join("j.jsonl");
    let line = format!(
        r#"{{"kind":"affinity","pid":{tid},"old":"{other}","new":"0","boot_id":"not-this-boot"}}"#
    );
    std::fs::write(&j, line + "\n").unwrap();
    let report = replay_journal(&HostFs::new(dir.path()), &j).unwrap();
    assert_eq!(report.gone.len(), 1, "{report}");
    assert!(
        report.to_string().contains("another boot (not-this-boot"),
        "{report}"
    );
    assert_eq!(affinity::get(tid).unwrap(), before);
    assert!(!j.exists());
    drop(stop);
    h.join().unwrap();
}

#[test]
fn refused_affinity_is_withdrawn_from_the_journal() {
    let dir = tree(&[]);
    let (tid, stop, h) = parked_thread();
    let mut g = guard(dir.path());
    let (obs, log) = logging(dir.path(), path_of);
    g.set_observer(obs);
    let err = g
        .set_thread_affinity(tid, &CpuList::from_cpus([1000]))
        .unwrap_err();
    assert!(err.to_string().contains("1000"), "{err}");
    assert_eq!(g.pending(), 0);
    assert!(!default_journal(dir.path()).exists());
    let log = log.lock().unwrap();
    let steps: Vec<&str> = log.iter().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(steps, ["journal", "withdraw"]);
    drop(stop);
    h.join().unwrap();
}

#[test]
fn live_sysctl_round_trip_when_root() {
    if !host_changes_allowed("guard: live_sysctl_round_trip_when_root") {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipping: not root, cannot write /proc/sys/vm/stat_interval");
        return;
    }
    let live = HostFs::new("/");
    let rel = "proc/sys/vm/stat_interval";
    let Some(before) = live.read_attr(rel) else {
        eprintln!("skipping: {rel} not readable");
        return;
    };
    let dir = tree(&[]);
    let journal = dir.path().join("j.jsonl");
    let mut g = SystemGuard::new(&live, journal.clone()).unwrap();
    let new = if before == "2" { "3" } else { "2" };
    assert!(g.set_file(rel, new).unwrap());
    assert_eq!(live.read_attr(rel).as_deref(), Some(new));
    assert!(journal.exists());
    g.restore().unwrap();
    assert_eq!(live.read_attr(rel), Some(before));
    assert!(!journal.exists());
}
