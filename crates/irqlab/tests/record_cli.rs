//! `irqlab record` / `replay` / `recover` end to end against fake trees:
//! the recording reads back to exactly the recorded snapshots, kill -9
//! loses no flushed sample, and a torn journal, a corrupt segment or
//! another schema version give a clear message or a salvage, never a panic.
#![allow(clippy::unwrap_used)]

mod common;
use irqlab::record::{layout, reader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn irqlab() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
}

fn synth(out: &Path) {
    common::synth_into(&common::spec(4, 8), out);
}

fn record(tree: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    irqlab()
        .arg("record")
        .arg("--root")
        .arg(tree)
        .args(["-o"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// `record --root TREE FLAGS -o OUT` started, its stderr to `stderr`.
fn spawn_record(tree: &Path, out: &Path, flags: &[&str], stderr: Stdio) -> std::process::Child {
    let mut c = irqlab();
    c.arg("record")
        .arg("--root")
        .arg(tree)
        .args(flags)
        .arg("-o")
        .arg(out)
        .stderr(stderr);
    hangup_at_its_default(&mut c);
    c.spawn().unwrap()
}

/// Start `c` with SIGHUP's default action, as from a terminal, whatever
/// this test process inherited: a suite run under `nohup` ignores SIGHUP,
/// and an ignored signal stays ignored across exec, so `record` would
/// keep it ignored (as it must under `nohup`) and a test's SIGHUP would
/// never end it.
fn hangup_at_its_default(c: &mut Command) {
    use nix::sys::signal::{signal, SigHandler, Signal};
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only signal(2), async-signal-safe
    unsafe {
        c.pre_exec(|| {
            signal(Signal::SIGHUP, SigHandler::SigDfl)
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
}

/// LOC's count on the first CPU of parsed `/proc/interrupts` text.
fn loc0(ints: &irqlab_core::Interrupts) -> u64 {
    ints.rows()
        .iter()
        .find(|r| r.label == "LOC")
        .unwrap()
        .counts[0]
}

/// [`loc0`] of the tree's file now.
fn live_loc(tree: &Path) -> u64 {
    let text = std::fs::read(tree.join("proc/interrupts")).unwrap();
    loc0(&irqlab_core::Interrupts::parse(&text).unwrap())
}

fn boot_dir(out: &Path) -> PathBuf {
    layout::one_boot_dir(out).unwrap()
}

/// Bump every count of `proc/interrupts` row `24:`-style lines by editing
/// the first CPU column of the LOC row (a changing counter between samples).
fn bump_loc(tree: &Path, by: u64) {
    let p = tree.join("proc/interrupts");
    let text = std::fs::read_to_string(&p).unwrap();
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if let Some(rest) = l.trim_start().strip_prefix("LOC:") {
                let mut it = rest.split_whitespace();
                let first: u64 = it.next().unwrap().parse().unwrap();
                let tail: Vec<&str> = it.collect();
                format!("LOC: {:>10} {}", first + by, tail.join(" "))
            } else {
                l.to_string()
            }
        })
        .collect();
    // In place without truncating first: a recorder reading at that
    // moment (it keeps the file open) must never see an empty file.
    let text = out.join("\n") + "\n";
    let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    f.set_len(text.len() as u64).unwrap();
}

#[test]
fn recording_reads_back_to_the_recorded_snapshots() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    // Record while the LOC counter moves.
    let child = irqlab()
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args([
            "-i",
            "100ms",
            "--duration",
            "2s",
            "--segment",
            "700ms",
            "--merge",
            "0",
            "--host",
            "h1",
            "-o",
        ])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for i in 0..10 {
        std::thread::sleep(Duration::from_millis(150));
        bump_loc(&tree, 1000 + i);
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    assert!(dir.to_string_lossy().contains("host=h1"));
    assert!(
        layout::segments(&dir).unwrap().len() >= 2,
        "segments closed every 700 ms"
    );
    // Schema 2: the shape and the environment are stored once, in the
    // first segment; later segments carry neither (same shape).
    let segs: Vec<_> = layout::segments(&dir)
        .unwrap()
        .into_iter()
        .map(|(_, _, p)| irqlab::record::segment::read(&p).unwrap())
        .collect();
    assert!(!segs[0].shapes.is_empty() && !segs[0].environment.is_empty());
    for s in &segs[1..] {
        assert!(s.shapes.is_empty() && s.environment.is_empty());
    }
    assert!(
        !dir.join("journal.jsonl").exists(),
        "journal removed at a clean exit"
    );
    let rec = reader::open(&dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    let mut rp = reader::Replayer::default();
    let mut locs = Vec::new();
    for (i, step) in rec.steps.iter().enumerate() {
        assert_eq!(step.time.seq, i as u64, "sequence without holes");
        let s = rp.apply(step).unwrap();
        let ints = s.snap.interrupts.unwrap();
        assert_eq!(ints.cpus, vec![0, 1, 2, 3]);
        locs.push(loc0(&ints));
        assert!(s.snap.softirqs.is_some() && s.snap.stat.is_some());
    }
    assert!(locs.windows(2).all(|w| w[0] <= w[1]), "{locs:?}");
    assert!(
        locs.last() > locs.first(),
        "the moving counter was recorded: {locs:?}"
    );
    // The replayed tree text at the end equals the live file's counts.
    assert_eq!(*locs.last().unwrap(), live_loc(&tree));
    // replay --batch: one line block per interval.
    let r = irqlab()
        .arg("replay")
        .arg(&out)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        String::from_utf8_lossy(&r.stdout).lines().count(),
        rec.steps.len() - 1
    );
}

#[test]
fn a_segment_also_closes_once_it_holds_segment_changes_counters() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let child = irqlab()
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args(["-i", "100ms", "--duration", "1500ms"])
        .args([
            "--segment",
            "1h",
            "--segment-changes",
            "1",
            "--merge",
            "0",
            "-o",
        ])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for i in 0..6 {
        std::thread::sleep(Duration::from_millis(200));
        bump_loc(&tree, 10 + i);
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    // a 1-h segment would hold everything: each LOC change closed one
    assert!(segs.len() >= 3, "{segs:?}");
    let rec = reader::open(&dir).unwrap();
    let seqs: Vec<u64> = rec.steps.iter().map(|s| s.time.seq).collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    // defaults: 60-s segments, one million changes
    let help = irqlab().args(["record", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("[default: 60s]") && help.contains("[default: 1000000]"),
        "{help}"
    );
}

/// `recover` (or a second `record`) of a boot directory that a running
/// `record` writes is refused: it would turn the live journal into a
/// segment that the recorder writes again (the same samples twice).
#[test]
fn a_running_recording_is_neither_recovered_nor_recorded_twice() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let child = spawn_record(
        &tree,
        &out,
        &["-i", "100ms", "--duration", "2s"],
        Stdio::piped(),
    );
    // bounded wait for the journal's first line
    common::wait_until(Duration::from_secs(3), || journal_has_line(&out));
    // a segment the run would be writing: not a leftover while it runs
    let writing = boot_dir(&out).join("part-0000000000-0000000001.parquet.tmp");
    std::fs::write(&writing, b"PAR1 being written").unwrap();
    let r = irqlab().arg("recover").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("irqlab: ") && err.contains("journal.jsonl is being written by a running"),
        "{err}"
    );
    assert!(
        writing.exists(),
        "recover left the running record's files alone"
    );
    std::fs::remove_file(&writing).unwrap();
    let again = record(&tree, &out, &["-i", "100ms", "--duration", "300ms"]);
    assert_eq!(again.status.code(), Some(1));
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    assert_eq!(segs.len(), 1, "{segs:?}");
    let rec = reader::open(&dir).unwrap();
    let seqs: Vec<u64> = rec.steps.iter().map(|s| s.time.seq).collect();
    assert!(seqs.len() >= 10, "{seqs:?}");
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
}

/// A synth tree under `dir` recorded at 50 ms into `dir/rec` (one open
/// segment: everything in the journal) for `ms`, then SIGKILLed:
/// (tree, recording).
fn killed_recording(dir: &Path, ms: u64) -> (PathBuf, PathBuf) {
    killed_recording_with(dir, ms, Segments::OneOpen)
}

/// The segments of a [`killed_recording_with`].
#[derive(Clone, Copy)]
enum Segments {
    /// One open segment (`--segment 1h`): killed after the time given.
    OneOpen,
    /// Closed every this long (`--segment`): killed after the time given
    /// and not before closed segments hold at least three samples
    /// (bounded, so that a loaded machine's slow start does not leave
    /// nothing closed).
    ClosedEvery(&'static str),
}

/// [`killed_recording`] with `segments`.
fn killed_recording_with(dir: &Path, ms: u64, segments: Segments) -> (PathBuf, PathBuf) {
    let (tree, out) = (dir.join("tree"), dir.join("rec"));
    synth(&tree);
    let segment = match segments {
        Segments::OneOpen => "1h",
        Segments::ClosedEvery(every) => every,
    };
    let mut child = spawn_record(
        &tree,
        &out,
        &["-i", "50ms", "--segment", segment],
        Stdio::null(),
    );
    std::thread::sleep(Duration::from_millis(ms));
    if let Segments::ClosedEvery(_) = segments {
        for _ in 0..2000 {
            if closed_samples(&out) >= 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // not in the instant after a segment closed (an empty journal): wait
    // for a flushed line, bounded
    common::wait_until(Duration::from_secs(5), || journal_has_line(&out));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    (tree, out)
}

/// The journal of `out`'s first boot directory (`None` while there is
/// none).
fn first_journal(out: &Path) -> Option<PathBuf> {
    let boot = layout::boot_dirs(out).ok()?.into_iter().next()?;
    Some(boot.join("journal.jsonl"))
}

/// Whether [`first_journal`] holds a flushed line.
fn journal_has_line(out: &Path) -> bool {
    first_journal(out).is_some_and(|j| std::fs::read(j).is_ok_and(|t| t.contains(&b'\n')))
}

/// The samples the closed segments of `out`'s first boot directory span
/// (0 while there is none).
fn closed_samples(out: &Path) -> u64 {
    let Some(boot) = layout::boot_dirs(out).ok().and_then(|v| v.first().cloned()) else {
        return 0;
    };
    layout::segments(&boot)
        .ok()
        .and_then(|s| Some(s.last()?.1 + 1 - s.first()?.0))
        .unwrap_or(0)
}

/// SIGINT, SIGTERM or SIGHUP (the terminal closed) ends `record` with a
/// last sample: the interval the signal cut short (here the only one:
/// `-i 24h`) is recorded, so replay has a rate, and the run still ends as
/// before (exit 0, a segment).
#[test]
fn a_signal_ends_record_with_the_interval_it_cut_short() {
    use nix::sys::signal::Signal;
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        let d = tempfile::tempdir().unwrap();
        let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
        synth(&tree);
        let child = spawn_record(&tree, &out, &["-i", "24h"], Stdio::piped());
        // the baseline journaled, then a counter moves in the cut interval
        assert!(
            common::wait_until(Duration::from_secs(60), || journal_has_line(&out)),
            "{sig}: no baseline"
        );
        bump_loc(&tree, 7);
        std::thread::sleep(Duration::from_millis(50));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{sig}: {err}");
        assert!(err.contains("irqlab: 2 samples"), "{sig}: {err}");
        let rec = reader::open(&boot_dir(&out)).unwrap();
        assert_eq!(rec.steps.len(), 2, "{sig}: {err}");
        let (code, lines, err) = replay(&out);
        assert_eq!((code, lines), (Some(0), 1), "{sig}: {err}");
    }
}

/// A `record` started under `nohup` (SIGHUP ignored) keeps it ignored:
/// a SIGHUP does not end it, the SIGTERM after it does (exit 0).
#[test]
fn a_record_under_nohup_goes_on_after_sighup() {
    use nix::sys::signal::{kill, Signal};
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    let child = Command::new("nohup")
        .arg(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args(["-i", "50ms", "-o"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    assert!(common::wait_until(Duration::from_secs(60), || {
        journal_has_line(&out)
    }));
    kill(pid, Signal::SIGHUP).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let running =
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
    kill(pid, Signal::SIGTERM).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(running, "ended by SIGHUP under nohup: {err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains(" samples, "), "{err}");
}

/// A background job of a non-interactive shell starts with SIGINT
/// ignored. `record` catches it before it reads or writes anything, so a
/// `kill -INT` while it starts ends it cleanly, as SIGTERM does: here it
/// comes while record says what it recovered from a killed run's journal
/// (held there by a full stderr), before the baseline; it was lost, and
/// the run went on until `-d`.
#[test]
fn sigint_while_a_background_record_starts_ends_it() {
    use common::stall::{wait_blocked, Stall};
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = killed_recording(d.path(), 300);
    let mut err = Stall::new();
    err.fill();
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let sh = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' record --root '{}' -o '{}' -i 50ms -d 60s >/dev/null & echo $!",
            bin.display(),
            tree.display(),
            out.display()
        ))
        .stdin(Stdio::null())
        .stderr(err.stdio())
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&sh.stdout).trim().parse().unwrap();
    struct Kill(u32);
    impl Drop for Kill {
        fn drop(&mut self) {
            let pid = nix::unistd::Pid::from_raw(self.0 as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
    let _kill = Kill(pid);
    assert!(
        wait_blocked(pid, Duration::from_secs(30)),
        "record never wrote to stderr"
    );
    let pid_t = nix::unistd::Pid::from_raw(pid as i32);
    nix::sys::signal::kill(pid_t, nix::sys::signal::Signal::SIGINT).unwrap();
    let text = err.drain();
    // not our child (the shell's): gone once its parent reaped it
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    assert!(
        common::wait_until(Duration::from_secs(10), || !alive()),
        "record still runs 10 s after SIGINT"
    );
    let text = text.join().unwrap();
    assert!(text.contains("recovered"), "{text}");
    assert!(text.contains("irqlab: 0 samples"), "{text}");
}

/// `replay --batch` catches SIGINT and SIGTERM before it reads the
/// recording: a signal while it starts (here while it says it read a
/// killed run's journal, held there by a full stderr; SIGINT ignored, as
/// in a background job of a non-interactive shell) ends it before its
/// first frame with 128 + signal and no output. Its handler came after
/// that point: SIGINT was lost (the replay went on, exit 0) and SIGTERM
/// killed it (no exit code).
#[test]
fn a_signal_while_replay_batch_starts_ends_it_with_128_plus_the_signal() {
    use common::stall::signal_at_first_stderr;
    use nix::sys::signal::Signal;
    let d = tempfile::tempdir().unwrap();
    let (_tree, out) = killed_recording(d.path(), 300);
    for (sig, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143)] {
        let stdout = tempfile::NamedTempFile::new().unwrap();
        let args = format!("replay --batch '{}'", out.display());
        let (status, text) = signal_at_first_stderr(&args, stdout.reopen().unwrap(), sig);
        let status = status.unwrap_or_else(|| panic!("{sig}: replay still runs 10 s after it"));
        assert_eq!(status.code(), Some(code), "{sig}: 128 + signal: {text}");
        assert!(text.contains("read from the journal"), "{text}");
        let replayed = std::fs::read_to_string(stdout.path()).unwrap();
        assert!(replayed.is_empty(), "{sig}: {replayed}");
    }
}

/// `--host` names the directory `host=NAME` as given: an empty one, or
/// one a directory name would change (`../../etc`), is a usage error
/// (exit 2) before anything is written.
#[test]
fn record_refuses_a_host_name_it_would_have_to_change() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    for (host, why) in [("", "empty"), ("../../etc", "only A-Z, a-z, 0-9")] {
        let out = d.path().join("rec");
        let o = record(&tree, &out, &["-d", "10ms", "--host", host]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{host:?}: {err}");
        assert!(
            err.contains("--host") && err.contains(why),
            "{host:?}: {err}"
        );
        assert!(!out.exists(), "{host:?}: nothing written");
    }
}

#[test]
fn kill_9_then_replay_has_every_flushed_sample() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = killed_recording(d.path(), 1500);
    let dir = boot_dir(&out);
    let journal = dir.join("journal.jsonl");
    let n = flushed_samples(&journal);
    assert!(n >= 3, "only {n} samples flushed");
    // replay reads the journal directly (salvage) …
    let r = irqlab()
        .arg("replay")
        .arg(&out)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(String::from_utf8_lossy(&r.stdout).lines().count(), n - 1);
    assert!(String::from_utf8_lossy(&r.stderr).contains("journal"));
    // … and recover turns it into a segment with the same samples (and
    // removes a segment write the kill interrupted).
    let partial = half_written_segment(&dir);
    let r = irqlab().arg("recover").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_recovered(&String::from_utf8_lossy(&r.stderr), n, &partial);
    assert!(!journal.exists());
    let rec = reader::open(&dir).unwrap();
    assert_eq!(rec.steps.len(), n);
    // A new record run continues the sequence after the recovered samples.
    let o = record(&tree, &out, &["-i", "50ms", "--duration", "200ms"]);
    assert!(o.status.success());
    assert_numbered_after(&dir, n);
}

/// The whole (newline-ended JSON) samples of a killed run's journal.
fn flushed_samples(journal: &Path) -> usize {
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with('}'))
        .count()
}

/// A segment write that a kill interrupted, beside the journal.
fn half_written_segment(dir: &Path) -> PathBuf {
    let partial = dir.join("part-0000000000-0000000001.parquet.tmp");
    std::fs::write(&partial, b"PAR1 half").unwrap();
    partial
}

/// What recovery says (`n` samples, the interrupted write) and did (the
/// half-written segment gone).
fn assert_recovered(err: &str, n: usize, partial: &Path) {
    assert!(err.contains(&format!("recovered {n} sample(s)")), "{err}");
    assert!(err.contains("interrupted") && !partial.exists(), "{err}");
}

/// More than `n` samples in `dir`, numbered one after another.
fn assert_numbered_after(dir: &Path, n: usize) {
    let rec = reader::open(dir).unwrap();
    assert!(rec.steps.len() > n);
    assert!(rec
        .steps
        .windows(2)
        .all(|w| w[1].time.seq == w[0].time.seq + 1));
}

/// A new `record` skips recovery only in an empty boot directory: one
/// that a killed run left (its journal, a half-written segment) is still
/// recovered first, and the new samples are numbered after the old.
#[test]
fn a_record_into_a_killed_runs_directory_recovers_it_first() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = killed_recording(d.path(), 1000);
    let dir = boot_dir(&out);
    let n = flushed_samples(&dir.join("journal.jsonl"));
    assert!(n >= 2, "only {n} samples flushed");
    let partial = half_written_segment(&dir);
    let o = record(&tree, &out, &["-i", "50ms", "--duration", "200ms"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_recovered(&err, n, &partial);
    assert_numbered_after(&dir, n);
}

#[test]
fn torn_journal_is_reported_and_salvaged() {
    let d = tempfile::tempdir().unwrap();
    let (_, out) = killed_recording(d.path(), 1000);
    let journal = boot_dir(&out).join("journal.jsonl");
    let mut bytes = std::fs::read(&journal).unwrap();
    let good = bytes.len();
    bytes.extend_from_slice(b"{\"schema\":1,\"seq\":99,\"wall_ns\":12");
    std::fs::write(&journal, &bytes).unwrap();
    let r = irqlab().arg("recover").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(
        err.contains("journal.jsonl:")
            && err.contains(": torn last record")
            && err.contains(&format!("at offset {good}")),
        "{err}"
    );
    assert!(err.contains("recovered"), "{err}");
}

#[test]
fn corrupt_segment_and_other_schema_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    assert!(record(&tree, &out, &["-i", "50ms", "--duration", "300ms"])
        .status
        .success());
    let dir = boot_dir(&out);
    let (_, _, seg) = layout::segments(&dir).unwrap().remove(0);
    let whole = std::fs::read(&seg).unwrap();
    for (what, bytes) in [
        ("truncated", whole[..whole.len() / 2].to_vec()),
        ("garbage", {
            let mut b = whole.clone();
            for x in b.iter_mut().skip(4).take(whole.len() / 2) {
                *x ^= 0x5a;
            }
            b
        }),
        ("empty", Vec::new()),
    ] {
        std::fs::write(&seg, &bytes).unwrap();
        let r = irqlab()
            .arg("replay")
            .arg(&out)
            .arg("--batch")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.starts_with("irqlab: ")
                && err.contains(&*seg.file_name().unwrap().to_string_lossy()),
            "{what}: {err}"
        );
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
    // Another schema version in the footer.
    std::fs::write(&seg, &whole).unwrap();
    let needle = b"irqlab.schema";
    let mut other = whole.clone();
    let at = other
        .windows(needle.len())
        .rposition(|w| w == needle)
        .unwrap();
    // The value follows the key in the thrift footer: find the "3" after it.
    let v = other[at + needle.len()..]
        .iter()
        .position(|&b| b == b'3')
        .unwrap()
        + at
        + needle.len();
    other[v] = b'7';
    std::fs::write(&seg, &other).unwrap();
    let r = irqlab()
        .arg("replay")
        .arg(&out)
        .arg("--batch")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(
        err.contains("recording schema 7, this irqlab reads schemas 1 to 3"),
        "{err}"
    );
}

#[test]
fn unwritable_output_names_the_directory() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let blocker = d.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let o = record(&tree, &blocker.join("rec"), &["--duration", "100ms"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("irqlab: ") && err.contains(&*blocker.to_string_lossy()),
        "{err}"
    );
}

/// tests/fixtures/recording-schema1: a schema-1 recording (raw values, the
/// sample list and shapes as plain JSON in the footer) written by irqlab
/// before schema 2, of a synth tree (2 CPUs, 3 IRQs, seed 1) at 100 ms.
#[test]
fn schema_1_recordings_are_still_read() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recording-schema1");
    let dir = boot_dir(&fixture);
    let rec = reader::open(&dir).unwrap();
    assert_eq!(rec.steps.len(), 4);
    let mut rp = reader::Replayer::default();
    for step in &rec.steps {
        let s = rp.apply(step).unwrap();
        let ints = s.snap.interrupts.unwrap();
        let loc = ints.rows().iter().find(|r| r.label == "LOC").unwrap();
        assert_eq!(loc.counts[..], [1_592_461_392, 1_848_652_868]);
    }
    assert_eq!(replay_json_lines(&fixture), 3);
}

/// tests/fixtures/recording-schema2: a schema-2 recording (`time` in
/// nanoseconds) written by irqlab before schema 3 (`40be49d`), of a synth
/// tree (2 CPUs, 3 IRQs, seed 1) at 100 ms: still read, times in ns.
#[test]
fn schema_2_recordings_are_still_read_with_nanosecond_times() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recording-schema2");
    let dir = boot_dir(&fixture);
    let rec = reader::open(&dir).unwrap();
    assert_eq!(rec.steps.len(), 4);
    assert!(
        rec.steps.iter().any(|s| s.time.wall_ns % 1_000_000 != 0),
        "nanosecond wall clocks, not milliseconds"
    );
    let mut rp = reader::Replayer::default();
    for step in &rec.steps {
        let s = rp.apply(step).unwrap();
        assert_eq!(s.snap.wall_ns, step.time.wall_ns);
        let ints = s.snap.interrupts.unwrap();
        let loc = ints.rows().iter().find(|r| r.label == "LOC").unwrap();
        assert_eq!(loc.counts[..], [1_592_461_392, 1_848_652_868]);
    }
    assert_eq!(replay_json_lines(&fixture), 3);
}

#[test]
fn bad_flags_are_usage_errors_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rec");
    for args in [
        vec!["record", "--irq", "(", "-o"],
        vec!["record", "--cpus", "x", "-o"],
        vec!["record", "-i", "0s", "-o"],
        vec!["record", "--segment", "0s", "-o"],
        vec!["record", "--duration", "0s", "-o"],
        vec!["record", "--duration", "8761h", "-o"],
        vec!["record", "--segment-changes", "0", "-o"],
        vec!["record", "--merge", "-1s", "-o"],
        vec!["record", "--merge", "abc", "-o"],
        vec!["replay", "--cpus", "x"],
        vec!["replay", "--irq", "("],
    ] {
        let o = irqlab().args(&args).arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("irqlab: "), "{args:?}: {err}");
    }
    assert!(!out.exists(), "nothing written");
}

/// `-i` outside 1ms..=24h is a usage error naming the bound, before
/// anything is written (`-i 1ns` was a busy loop, `-i 25h` one long sleep).
#[test]
fn intervals_outside_their_bounds_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rec");
    for (value, bound) in [
        ("1ns", "shortest interval (1ms)"),
        ("50us", "shortest interval (1ms)"),
        ("25h", "longest interval (24h)"),
        ("-1s", "negative"),
    ] {
        let o = record(Path::new("/nonexistent"), &out, &["-i", value, "-d", "1s"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "-i {value}: {err}");
        assert!(err.contains(bound), "-i {value}: {err}");
    }
    assert!(!out.exists(), "nothing written");
}

/// A negative count (`replay --run -1`, `record --segment-changes -1`,
/// `serve --max-connections -1`) is told the range it must be in (exit
/// 2), as a negative duration is told it is negative: not clap's
/// "unexpected argument '-1'".
#[test]
fn negative_counts_are_told_their_range() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rec");
    for (args, range) in [
        (
            vec!["replay", "rec", "--batch", "--run", "-1"],
            "1 to 18446744073709551615",
        ),
        (
            vec!["record", "-o", "rec", "--segment-changes", "-1"],
            "1 to 18446744073709551615",
        ),
        (vec!["serve", "--max-connections", "-1"], "1 to 1000000"),
    ] {
        let o = irqlab().current_dir(d.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "expected a whole number from {range}, found \"-1\""
            )),
            "{args:?}: {err}"
        );
    }
    assert!(!out.exists(), "nothing written");
}

/// A run by `-d` ends on time when samples take longer than `-i` (a big
/// tree at `-i 1ms`): the late ticks are dropped, with a note, instead of
/// being sampled back to back long after the end; the last sample is
/// taken at `-d`, not seconds after it.
#[test]
fn a_run_by_duration_ends_on_time_when_samples_fall_behind() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    common::synth_into(&common::spec(64, 200), &tree);
    let o = record(&tree, &out, &["-i", "1ms", "-d", "400ms"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let rec = reader::open(&boot_dir(&out)).unwrap();
    let (a, b) = (rec.steps.first().unwrap(), rec.steps.last().unwrap());
    let span = Duration::from_nanos(b.time.mono_ns - a.time.mono_ns);
    // a sample of 64 CPUs and 200 IRQs takes a few ms in a debug build:
    // all 400 ticks would take 1.6 s or more; the bound leaves room for a
    // loaded machine's late wake-up
    assert!(span < Duration::from_millis(1000), "{span:?}: {err}");
    assert!(span >= Duration::from_millis(390), "{span:?}: {err}");
    assert!(err.contains("sample(s) not taken"), "{err}");
}

/// After a segment closes the journal holds only changed counters; the
/// segment `recover` makes of it still starts with every counter (the rest
/// taken from the segment before), so that each segment stands alone.
#[test]
fn a_recovered_segment_after_closed_ones_starts_with_every_counter() {
    let d = tempfile::tempdir().unwrap();
    let (_tree, out) = killed_recording_with(d.path(), 1200, Segments::ClosedEvery("300ms"));
    let dir = boot_dir(&out);
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let segs = layout::segments(&dir).unwrap();
    assert!(!segs.is_empty(), "segments closed before the kill");
    let first = irqlab::record::segment::read(&segs[0].2).unwrap();
    let first_seq = first.samples[0].seq;
    let every = first.cells.iter().filter(|c| c.0 == first_seq).count();
    let first_line: serde_json::Value =
        serde_json::from_str(journal.lines().next().unwrap()).unwrap();
    assert!(
        first_line["cells"].as_array().unwrap().len() < every,
        "the journal after a segment repeats every counter"
    );
    let r = irqlab().arg("recover").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let segs = layout::segments(&dir).unwrap();
    let last = irqlab::record::segment::read(&segs.last().unwrap().2).unwrap();
    let seq = last.samples[0].seq;
    assert_eq!(
        last.cells.iter().filter(|c| c.0 == seq).count(),
        every,
        "the recovered segment's first sample holds every counter"
    );
    // and the whole recording replays as one sequence
    let rec = reader::open(&dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert!(rec
        .steps
        .windows(2)
        .all(|w| w[1].time.seq == w[0].time.seq + 1));
    let mut rp = reader::Replayer::default();
    for step in &rec.steps {
        rp.apply(step).unwrap();
    }
}

/// A `record` of `tree` into `out` for 1.5 s at 50 ms with 200-ms
/// segments and `extra` flags, stderr piped.
fn record_moving(tree: &Path, out: &Path, extra: &[&str]) -> std::process::Child {
    let mut flags = vec!["-i", "50ms", "--duration", "1500ms", "--segment", "200ms"];
    flags.extend_from_slice(extra);
    spawn_record(tree, out, &flags, Stdio::piped())
}

/// Segments close every 200 ms; by default they merge into one file that
/// holds every counter once, in its first sample, and reads back as the
/// same sample sequence; `--merge 0` keeps a file per segment, larger in
/// all.
#[test]
fn small_segments_merge_into_one_file() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let (merged, apart) = (d.path().join("merged"), d.path().join("apart"));
    let a = record_moving(&tree, &merged, &[]);
    let b = record_moving(&tree, &apart, &["--merge", "0"]);
    for i in 0..8 {
        std::thread::sleep(Duration::from_millis(150));
        bump_loc(&tree, 100 + i);
    }
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let (dir, dir_apart) = (boot_dir(&merged), boot_dir(&apart));
    let files = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let rec = reader::open(&dir).unwrap();
    let n = rec.steps.len() as u64;
    assert!(n >= 10, "{n} samples");
    assert_eq!(
        files(&dir),
        vec![
            irqlab::record::identity::file_name(0, n - 1),
            layout::segment_name(0, n - 1)
        ],
        "one file and its IRQ identity, no journal, no temporary or superseded file"
    );
    let size = std::fs::metadata(dir.join(layout::segment_name(0, n - 1)))
        .unwrap()
        .len();
    let err = String::from_utf8_lossy(&a.stderr);
    assert!(
        err.contains(&format!("1 segment(s), {size} bytes")),
        "the summary counts the merged file once: {err}"
    );
    let segs_apart = layout::segments(&dir_apart).unwrap();
    assert!(segs_apart.len() >= 3, "{segs_apart:?}");
    let bytes_apart: u64 = segs_apart
        .iter()
        .map(|s| std::fs::metadata(&s.2).unwrap().len())
        .sum();
    assert!(size < bytes_apart, "merged {size} B, apart {bytes_apart} B");
    // every counter once, in the first sample; later samples: changes only
    let seg = irqlab::record::segment::read(&dir.join(layout::segment_name(0, n - 1))).unwrap();
    let at = |seq: u64| seg.cells.iter().filter(|c| c.0 == seq).count();
    assert!((1..n).all(|seq| at(seq) < at(0)), "first sample {}", at(0));
    assert!(!seg.environment.is_empty() && !seg.shapes.is_empty());
    // the same sequence, LOC moving, ending at the live file's count
    let mut rp = reader::Replayer::default();
    let mut locs = Vec::new();
    for (i, step) in rec.steps.iter().enumerate() {
        assert_eq!(step.time.seq, i as u64);
        locs.push(loc0(&rp.apply(step).unwrap().snap.interrupts.unwrap()));
    }
    assert!(locs.windows(2).all(|w| w[0] <= w[1]) && locs.first() < locs.last());
    assert_eq!(locs.last(), Some(&live_loc(&tree)));
    assert_eq!(replay_json_lines(&merged) as u64, n - 1);
}

/// kill -9 inside a merged window, at the worst moment: the window's new
/// file is written and the one it replaces is still there. Replay skips the
/// superseded file (no sample twice) and takes the journal's samples;
/// `recover` removes it and says so.
#[test]
fn kill_9_between_a_merged_file_and_the_one_it_replaces() {
    let d = tempfile::tempdir().unwrap();
    let (_tree, out) = killed_recording_with(d.path(), 1200, Segments::ClosedEvery("200ms"));
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    assert_eq!(segs.len(), 1, "one merged window: {segs:?}");
    let (first, last, path) = segs[0].clone();
    assert!(last > first + 1, "{segs:?}");
    // the file the window had before its last segment (the same samples
    // but the last one, as far as its name says)
    let old = dir.join(layout::segment_name(first, last - 1));
    std::fs::copy(&path, &old).unwrap();
    // the journal's samples the segment lacks: killed after a segment's
    // write and before the journal restarted, it still holds that
    // segment's samples, which replay and recover take once
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let in_journal = journal
        .lines()
        .filter(|l| l.ends_with('}'))
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .filter(|s| !(first..=last).contains(s))
        .collect::<std::collections::BTreeSet<u64>>()
        .len() as u64;
    let total = last + 1 - first + in_journal;
    assert_eq!(replay_json_lines(&out) as u64, total - 1);
    let r = irqlab().arg("recover").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("its samples are in") && !old.exists(), "{err}");
    let rec = reader::open(&dir).unwrap();
    assert_eq!(rec.steps.len() as u64, total);
    assert!(rec
        .steps
        .windows(2)
        .all(|w| w[1].time.seq == w[0].time.seq + 1));
}

/// `replay --batch --format json` of `dir`: succeeds; its line count.
fn replay_json_lines(dir: &Path) -> usize {
    let r = irqlab()
        .arg("replay")
        .arg(dir)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    String::from_utf8_lossy(&r.stdout).lines().count()
}

/// `record --trace` in a build without tracing is a usage error saying how
/// to build it in (exit 2, like `top --trace`), with nothing written; with
/// tracing built in, a tree without tracefs is an error naming it.
#[test]
fn record_trace_says_how_to_get_tracing_or_what_is_missing() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let o = record(&tree, &out, &["--trace", "-d", "1s"]);
    let err = String::from_utf8_lossy(&o.stderr);
    if cfg!(feature = "trace") {
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("tracefs") || err.contains("root"), "{err}");
    } else {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--features trace"), "{err}");
        assert!(!out.exists(), "nothing written");
    }
}

/// A recording made with `record --trace` (fixture: three samples of this
/// VM, cut to a few rows) replays with `top --trace`'s traced figures in
/// any build: the JSON `trace` object and the text `TRACE` lines, whose
/// LOC count per interval is the recorded maps' difference.
#[test]
fn a_traced_recording_replays_with_its_traced_figures() {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recording-trace");
    let o = irqlab()
        .args(["replay", "--batch", "--format", "json"])
        .arg(&fx)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "three samples, two intervals");
    for v in &lines {
        let t = &v["trace"];
        let loc = t["irqs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "LOC")
            .unwrap();
        assert!(loc["count"].as_u64().unwrap() > 0, "{t}");
        let proc_loc = v["interrupts"]["rows"][0]["total"].as_u64().unwrap();
        let slack = 2 + proc_loc / 10;
        assert!(
            proc_loc.abs_diff(loc["count"].as_u64().unwrap()) <= slack,
            "{v}"
        );
        assert!(t["softirqs"][0]["name"] == "TIMER", "{t}");
    }
    let o = irqlab()
        .args(["replay", "--batch"])
        .arg(&fx)
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("TRACE IRQ") && text.contains("TRACE CPU"),
        "{text}"
    );
}

/// `recover DIR` (under a timeout: a hang is a failure): (exit, stderr).
fn recover(out: &Path) -> (Option<i32>, String) {
    let o = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("recover")
        .arg(out)
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `replay DIR --batch --format json` under a timeout: (exit, stdout
/// lines, stderr).
fn replay(out: &Path) -> (Option<i32>, usize, String) {
    let o = replay_output(out);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).lines().count(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `replay DIR --batch --format json` run to its end under a timeout.
fn replay_output(out: &Path) -> std::process::Output {
    assert_cmd::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .arg("replay")
        .arg(out)
        .args(["--batch", "--format", "json"])
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap()
}

/// Files of `dir` whose name starts with `prefix`.
fn named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    v.sort();
    v
}

/// A killed recording whose journal is cut to its first 24 complete lines
/// (one open segment, so they are the whole recording): (recording,
/// journal path, lines).
fn journal_of_24(dir: &Path) -> (PathBuf, PathBuf, Vec<String>) {
    let (_, out) = killed_recording(dir, 1600);
    let journal = boot_dir(&out).join("journal.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with('}'))
        .map(String::from)
        .collect();
    assert!(lines.len() >= 24, "{} lines", lines.len());
    let lines = lines[..24].to_vec();
    (out, journal, lines)
}

/// Each kind of corruption in one line of a 24-line journal:
/// `recover` keeps the other 23 samples, names the line, and keeps the
/// journal (renamed) because it did not convert all of it. (A lost first
/// line: `a_journal_without_its_layout_is_left_as_it_is`.)
#[test]
fn recover_keeps_every_readable_line_and_the_journal_it_did_not_fully_convert() {
    let d = tempfile::tempdir().unwrap();
    let (out0, _, good) = journal_of_24(&d.path().join("k"));
    let nest = "[".repeat(200_000);
    let cases: Vec<(&str, usize, String)> = vec![
        ("garbage line 6", 5, "garbage garbage".into()),
        (
            "truncated middle line",
            11,
            good[11][..good[11].len() / 2].into(),
        ),
        ("negative value", 7, with_cell(&good[7], "interrupts", -5)),
        ("unknown source", 9, with_cell(&good[9], "gpu", 5)),
        (
            "deep nesting",
            3,
            format!("{{\"schema\":3,\"seq\":3,\"cells\":{nest}"),
        ),
    ];
    for (what, at, bad) in cases {
        let out = d.path().join(what.replace(' ', "_"));
        copy_dir(&out0, &out);
        let dir = boot_dir(&out);
        let journal = dir.join("journal.jsonl");
        let mut lines = good.clone();
        lines[at] = bad;
        std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
        let bytes = std::fs::read(&journal).unwrap();
        let (code, err) = recover(&out);
        assert_eq!(code, Some(0), "{what}: {err}");
        assert!(
            err.contains(&format!("journal.jsonl:{}: ", at + 1)),
            "{what}: names file:line: {err}"
        );
        assert!(err.contains("recovered 23 sample(s)"), "{what}: {err}");
        assert!(!journal.exists(), "{what}");
        let kept = named(&dir, "journal.jsonl.partial-");
        assert_eq!(kept.len(), 1, "{what}: {err}");
        assert_eq!(
            std::fs::read(&kept[0]).unwrap(),
            bytes,
            "{what}: kept as is"
        );
        let rec = reader::open(&dir).unwrap();
        let seqs: Vec<u64> = rec.steps.iter().map(|s| s.time.seq).collect();
        let want: Vec<u64> = (0..24u64).filter(|&s| s != at as u64).collect();
        assert_eq!(seqs, want, "{what}");
        if at > 0 {
            let (code, n, err) = replay(&out);
            assert_eq!((code, n), (Some(0), 22), "{what}: {err}");
            assert!(
                err.contains(" missing (no file"),
                "{what}: says the gap: {err}"
            );
        }
    }
}

/// A journal none of whose lines can be read is not a recovery: exit 1,
/// "nothing recovered", and the journal kept byte for byte (renamed).
/// Before, every line was named as skipped and recover exited 0.
#[test]
fn recover_of_a_journal_with_no_readable_line_fails_and_keeps_it() {
    let d = tempfile::tempdir().unwrap();
    let (out, journal, good) = journal_of_24(&d.path().join("k"));
    let junk: Vec<String> = (0..good.len()).map(|i| format!("\u{1}junk {i}")).collect();
    std::fs::write(&journal, junk.join("\n") + "\n").unwrap();
    let bytes = std::fs::read(&journal).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("nothing recovered"), "{err}");
    let kept = named(&boot_dir(&out), "journal.jsonl.partial-");
    assert_eq!(kept.len(), 1, "{err}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), bytes, "kept as is");
}

/// A journal whose only record is torn (NUL bytes after a power loss, or
/// cut inside its first line) recovers nothing: exit 1, "nothing
/// recovered", its bytes kept; beside it, another host's journal is
/// still recovered, and the run names one recording of two as failed.
#[test]
fn recover_of_a_journal_torn_in_its_first_record_fails_and_keeps_it() {
    let d = tempfile::tempdir().unwrap();
    let (out0, _, good) = journal_of_24(&d.path().join("k"));
    let cut = good[0].as_bytes()[..good[0].len() / 2].to_vec();
    for (what, bytes) in [("zeros", vec![0u8; 4096]), ("cut first line", cut)] {
        let out = d.path().join(what.replace(' ', "_"));
        copy_dir(&out0, &out);
        std::fs::write(boot_dir(&out).join("journal.jsonl"), good.join("\n") + "\n").unwrap();
        let torn = out.join("host=torn").join("boot=x");
        std::fs::create_dir_all(&torn).unwrap();
        std::fs::write(torn.join("journal.jsonl"), &bytes).unwrap();
        let (code, err) = recover(&out);
        assert_eq!(code, Some(1), "{what}: {err}");
        assert!(err.contains("torn last record"), "{what}: {err}");
        assert!(err.contains("nothing recovered"), "{what}: {err}");
        assert!(err.contains("recovered 24 sample(s)"), "{what}: {err}");
        assert!(err.contains("1 of 2 recording(s)"), "{what}: {err}");
        let kept = named(&torn, "journal.jsonl");
        assert_eq!(kept.len(), 1, "{what}: {err}");
        assert_eq!(
            std::fs::read(&kept[0]).unwrap(),
            bytes,
            "{what}: kept as is"
        );
    }
}

/// A journal whose sample numbers are above what a segment stores
/// (Parquet's signed 64 bits) is refused by file:line, exit 1, and kept
/// byte for byte: no segment is written that would read back with other
/// numbers.
#[test]
fn recover_refuses_sample_numbers_a_segment_cannot_hold_and_keeps_the_journal() {
    let d = tempfile::tempdir().unwrap();
    let (out, journal, good) = journal_of_24(&d.path().join("k"));
    let lines: Vec<String> = good[..15]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["seq"] = serde_json::json!(u64::MAX - 14 + i as u64);
            v.to_string()
        })
        .collect();
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let bytes = std::fs::read(&journal).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("journal.jsonl:1: sample number 18446744073709551601 is above"),
        "{err}"
    );
    assert_eq!(std::fs::read(&journal).unwrap(), bytes, "kept as is: {err}");
    assert!(named(&boot_dir(&out), "part-").is_empty(), "{err}");
}

/// Whether anything was recovered is decided by what recovery did, not
/// by its message's text: a recording whose directory name holds a line
/// ending like "nothing recovered" is recovered, exit 0. Before, a
/// message line ending that way (here: the path, cut by its newline)
/// made recover exit 1.
#[test]
fn recover_exit_does_not_read_the_message_text() {
    let d = tempfile::tempdir().unwrap();
    let (out0, _, good) = journal_of_24(&d.path().join("k"));
    let out = d
        .path()
        .join("rec: nothing recovered: none of its lines could be read\nstill");
    copy_dir(&out0, &out);
    let journal = boot_dir(&out).join("journal.jsonl");
    std::fs::write(&journal, good.join("\n") + "\n").unwrap();
    let (code, err) = recover(&out);
    assert!(err.contains("recovered 24 sample(s)"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.ends_with(": nothing recovered: none of its lines could be read")),
        "the message holds such a line: {err}"
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(!journal.exists(), "{err}");
}

/// A journal whose LOC (CPU 0) is listed at lines 6 and 10 only, line 6
/// half written: after `recover`, replay shows LOC as a `missing_samples`
/// gap across the missing sample and at its next listing, never the
/// low-then-high rates of a stale value (0 across the gap, then 200
/// counts in one interval), nor a `reset` or `out_of_range` gap; between
/// the two, not listed, it did not change: its rate is 0.
#[test]
fn a_counter_after_an_unreadable_journal_line_is_a_missing_samples_gap_until_listed_again() {
    let d = tempfile::tempdir().unwrap();
    let (out, journal, good) = journal_of_24(d.path());
    let mut lines: Vec<String> = good[..20].to_vec();
    let first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let base = first["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["source"] == "interrupts" && c["key"] == "LOC" && c["cpu"] == 0)
        .unwrap()["value"]
        .as_i64()
        .unwrap();
    lines[5] = with_cell(&lines[5], "interrupts", base + 100);
    lines[9] = with_cell(&lines[9], "interrupts", base + 200);
    lines[5] = lines[5][..lines[5].len() / 2].to_string();
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("`missing_samples` gap across them"), "{err}");
    let o = irqlab()
        .arg("replay")
        .arg(&out)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("sample 5 is missing"), "{err}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    for wrong in ["\"reset\"", "\"out_of_range\""] {
        assert!(!stdout.contains(wrong), "no {wrong} gap: {stdout}");
    }
    let loc: Vec<(serde_json::Value, serde_json::Value)> = stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let rows = v["interrupts"]["rows"].as_array().unwrap();
            let loc = rows.iter().find(|r| r["label"] == "LOC").unwrap();
            (loc["rates"][0].clone(), loc["gaps"][0].clone())
        })
        .collect();
    // frames 0→1 … 3→4, 4→6 (across the missing sample), 6→7 … 7→8
    // (LOC unknown, not listed), 8→9 (LOC listed), then 9→10 …
    assert_eq!(loc.len(), 18, "{loc:?}");
    let zero = |r: &(serde_json::Value, serde_json::Value)| r.0.as_f64() == Some(0.0);
    let missing = |r: &(serde_json::Value, serde_json::Value)| {
        r.0.is_null() && r.1 == serde_json::json!("missing_samples")
    };
    assert!(loc[..4].iter().all(zero), "{loc:?}");
    assert!(missing(&loc[4]), "{loc:?}");
    assert!(loc[5..7].iter().all(zero), "{loc:?}");
    assert!(missing(&loc[7]), "{loc:?}");
    assert!(loc[8..].iter().all(zero), "{loc:?}");
}

/// A journal whose first line is not the sample after the last segment's
/// (sample L+1 absent, no unreadable line): `recover` says which sample
/// is missing, that the journal's first sample takes no counter from the
/// segment and that the counters its line does not list are unknown
/// until listed again, and still recovers every line and removes the
/// journal.
#[test]
fn recover_says_which_samples_are_missing_between_a_segment_and_its_journal() {
    let d = tempfile::tempdir().unwrap();
    let (out, journal, good) = journal_of_24(d.path());
    let seq = |l: &str| {
        serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
            .as_u64()
            .unwrap()
    };
    std::fs::write(&journal, good[..10].join("\n") + "\n").unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    let (missing, first) = (seq(&good[10]), seq(&good[11]));
    std::fs::write(&journal, good[11..].join("\n") + "\n").unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("recovered 13 sample(s)"), "{err}");
    let said = format!("sample {missing} is missing (no file holds it)");
    assert!(err.contains(&said), "{err}");
    assert_eq!(err.matches(" missing (no file").count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "is unknown from sample {first} until a later line lists it"
        )),
        "{err}"
    );
    assert!(err.contains("takes no counter from"), "{err}");
    assert!(!journal.exists(), "{err}");
}

/// The lines of `stderr` that say what replay says about a recording's
/// data: a file named like a segment that is not read, missing samples,
/// a wrong clock.
fn data_checks(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| {
            [
                "not a segment's name",
                " missing (no file",
                "monotonic clock",
            ]
            .iter()
            .any(|k| l.contains(k))
        })
        .map(String::from)
        .collect()
}

/// A killed run's journal with a line removed (sample 8), a clock far
/// ahead in one line (15) and one that stood still (20), beside a junk
/// `part-foo.parquet`: `recover`, and a `record` into the directory,
/// say each of these as `replay` says it afterwards, word for word; the
/// junk file is kept.
#[test]
fn recover_and_record_say_what_replay_says_about_the_same_data() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = killed_recording(d.path(), 1600);
    let journal = boot_dir(&out).join("journal.jsonl");
    let mut lines: Vec<serde_json::Value> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with('}'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 24, "{} lines", lines.len());
    lines.truncate(24);
    let mono = |l: &serde_json::Value| l["mono_ns"].as_u64().unwrap();
    lines[15]["mono_ns"] = (mono(&lines[15]) + 1_000_000 * 1_000_000_000).into();
    lines[20]["mono_ns"] = mono(&lines[19]).into();
    let seq = |l: &serde_json::Value| l["seq"].as_u64().unwrap();
    let (missing, jumped, stood) = (seq(&lines[8]), seq(&lines[15]), seq(&lines[20]));
    lines.remove(8);
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&journal, text.join("\n") + "\n").unwrap();
    let junk = boot_dir(&out).join("part-foo.parquet");
    std::fs::write(&junk, b"not parquet").unwrap();
    let resumed = d.path().join("resumed");
    copy_dir(&out, &resumed);

    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    let said = data_checks(&err);
    let (code, _, replayed) = replay(&out);
    assert_eq!(code, Some(0), "{replayed}");
    let want = data_checks(&replayed);
    assert_eq!(said, want, "recover: {err}\nreplay: {replayed}");
    let has = |k: String| want.iter().filter(|l| l.contains(&k)).count() == 1;
    assert!(
        has(format!("sample {missing} is missing (no file holds it")),
        "{want:?}"
    );
    assert!(
        has(format!("sample {jumped}'s monotonic clock")),
        "{want:?}"
    );
    assert!(has(format!("sample {stood}'s monotonic clock")), "{want:?}");
    assert!(
        has(format!("skipping {}: not a segment's name", junk.display())),
        "{want:?}"
    );
    assert_eq!(want.len(), 4, "{want:?}");
    assert!(junk.exists());

    let o = record(&tree, &resumed, &["-i", "50ms", "--duration", "200ms"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let said = data_checks(&err);
    let (code, _, replayed) = replay(&resumed);
    assert_eq!(code, Some(0), "{replayed}");
    assert_eq!(
        said,
        data_checks(&replayed),
        "record: {err}\nreplay: {replayed}"
    );
    assert_eq!(said.len(), 4, "{said:?}");
}

/// A hand-made journal whose second sample is 1 µs after its first, LOC
/// on CPU 0 up by 52 (52 M/s, within the per-CPU rate bound): no rate is
/// shown over it (every cell a gap), and replay names the journal and
/// the sample and says what was expected.
#[test]
fn an_interval_shorter_than_a_sample_takes_is_a_gap_named_with_its_file_and_sample() {
    let d = tempfile::tempdir().unwrap();
    let (_, out) = killed_recording(d.path(), 300);
    let journal = boot_dir(&out).join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let loc = first["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["source"] == "interrupts" && c["key"] == "LOC" && c["cpu"] == 0)
        .unwrap();
    let second = serde_json::json!({
        "schema": first["schema"], "seq": 1, "wall_ns": first["wall_ns"],
        "mono_ns": first["mono_ns"].as_u64().unwrap() + 1000,
        "cells": [{"source": "interrupts", "key": "LOC", "cpu": 0,
                   "value": loc["value"].as_u64().unwrap() + 52}],
    });
    std::fs::write(&journal, format!("{first}\n{second}\n")).unwrap();
    let o = replay_output(&out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "{}: sample 1's monotonic clock ({} ns) is only 1000 ns after sample 0's",
            journal.display(),
            second["mono_ns"]
        )) && err.contains("(expected at least 10000 ns)"),
        "{err}"
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "one interval");
    let rows = lines[0]["interrupts"]["rows"].as_array().unwrap();
    let loc = rows.iter().find(|r| r["label"] == "LOC").unwrap();
    assert_eq!(loc["total_rate"], serde_json::Value::Null, "{loc}");
    assert_eq!(loc["rates"][0], serde_json::Value::Null, "{loc}");
    assert_eq!(loc["gaps"][0], "missing_samples", "{loc}");
}

/// A finished recording (no journal: nothing to recover) with samples no
/// file holds (the middle one of three runs' segments removed) and a junk
/// `part-foo.parquet`: `recover` names the junk file as replay does (its
/// listing only) and says there was nothing to recover; it does not read
/// the recording back, so the missing samples replay names are not
/// said by it.
#[test]
fn recover_with_nothing_to_recover_names_junk_files_without_reading_the_recording() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    for _ in 0..3 {
        let o = record(&tree, &out, &["-i", "50ms", "--duration", "150ms"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    assert_eq!(segs.len(), 3, "{segs:?}");
    // the segment and its IRQ identity file, as a user removes a run
    let name = segs[1]
        .2
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::remove_file(&segs[1].2).unwrap();
    std::fs::remove_file(dir.join(name.replacen("part-", "irqs-", 1))).unwrap();
    let junk = dir.join("part-foo.parquet");
    std::fs::write(&junk, b"not parquet").unwrap();

    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, replayed) = replay(&out);
    assert_eq!(code, Some(0), "{replayed}");
    let junk_line = format!("skipping {}: not a segment's name", junk.display());
    assert!(replayed.contains(&junk_line), "{replayed}");
    assert!(replayed.contains(" missing (no file"), "{replayed}");
    assert!(err.contains(&junk_line), "{err}");
    assert!(!err.contains(" missing (no file"), "{err}");
    let nothing = format!("irqlab: nothing to recover under {}\n", out.display());
    assert!(err.ends_with(&nothing), "{err}");
    assert!(junk.exists());
}

/// A segment whose samples cannot be read (a run's file overwritten by
/// junk) beside the journal of a later run that was killed: `recover`
/// recovers the journal and names the unreadable segment once (not once
/// for itself and once as replay names it), saying that its samples are
/// not recovered and that replay skips it.
#[test]
fn recover_names_a_segment_it_cannot_read_once() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    let o = record(&tree, &out, &["-i", "50ms", "--duration", "150ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let first = layout::segments(&dir).unwrap()[0].2.clone();
    let (_tree, killed) = killed_recording(d.path(), 800);
    assert_eq!(killed, out);
    std::fs::write(&first, b"not parquet").unwrap();

    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("recovered "), "{err}");
    let named: Vec<&str> = err
        .lines()
        .filter(|l| l.contains(&first.display().to_string()))
        .collect();
    assert_eq!(named.len(), 1, "{err}");
    assert!(
        named[0].contains("its samples are not recovered here, and replay skips it"),
        "{err}"
    );
    let (code, _, replayed) = replay(&out);
    assert_eq!(code, Some(0), "{replayed}");
    assert!(
        replayed.contains(&format!("skipping {}", first.display())),
        "{replayed}"
    );
}

/// A dataset one of whose `host=` directories cannot be read (a symlink
/// loop: root cannot read it either): `recover` recovers the recording it
/// can read, names the other with the OS error and exits 1; `replay` of
/// the dataset is an error naming it (which recordings the dataset holds
/// is not known), while the readable recording, named, replays.
#[test]
fn recover_recovers_every_readable_directory_and_names_the_others() {
    let d = tempfile::tempdir().unwrap();
    let (_, out) = killed_recording(d.path(), 600);
    let boot = boot_dir(&out);
    let journal = boot.join("journal.jsonl");
    assert!(journal.exists());
    let bad = out.join("host=zz");
    std::os::unix::fs::symlink(&bad, &bad).unwrap();

    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    let said = format!(
        "irqlab: error: {}: cannot read the recording directory: ",
        bad.display()
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with(&said) && l.ends_with("(os error 40): not recovered")),
        "{err}"
    );
    assert!(err.contains("irqlab: recovered "), "{err}");
    assert!(err.contains("1 directory under"), "{err}");
    assert!(!journal.exists(), "{err}");
    assert!(!named(&boot, "part-").is_empty(), "{err}");

    let (code, _, err) = replay(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("{}: cannot read", bad.display())),
        "{err}"
    );
    let (code, lines, err) = replay(&boot);
    assert_eq!(code, Some(0), "{err}");
    assert!(lines > 0, "{err}");
}

/// A `host=` directory its user may not list (mode 000; as root, run as
/// nobody, since root lists it anyway): `recover` recovers the rest,
/// names it with the OS error, touches nothing in it and exits 1.
#[test]
fn recover_names_a_directory_it_may_not_list() {
    let test = "record_cli: recover_names_a_directory_it_may_not_list";
    let root = nix::unistd::geteuid().is_root();
    let runuser = Command::new("runuser").arg("--version").output();
    if root && !runuser.is_ok_and(|o| o.status.success()) {
        visible!("{test}: SKIPPED: as root it needs runuser to become nobody");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (_, out) = killed_recording(d.path(), 600);
    let boot = boot_dir(&out);
    let bad = out.join("host=zz");
    let hidden = bad.join("boot=x");
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(hidden.join("journal.jsonl"), b"{}\n").unwrap();
    let mut cmd = match root {
        true => {
            let chown = Command::new("chown")
                .args(["-R", "nobody"])
                .arg(d.path())
                .status()
                .unwrap();
            assert!(chown.success());
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"])
                .arg(assert_cmd::cargo::cargo_bin("irqlab"));
            c
        }
        false => irqlab(),
    };
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    mode(d.path(), 0o755);
    mode(&bad, 0o000);
    let o = cmd.arg("recover").arg(&out).output().unwrap();
    mode(&bad, 0o755);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "irqlab: error: {}: cannot list the recording directory: Permission denied (os error 13): not recovered",
            bad.display()
        )),
        "{err}"
    );
    assert!(err.contains("irqlab: recovered "), "{err}");
    assert!(!boot.join("journal.jsonl").exists(), "{err}");
    assert_eq!(
        std::fs::read(hidden.join("journal.jsonl")).unwrap(),
        b"{}\n"
    );
}

/// A journal put back whole after `recover` made a segment with a hole
/// at its garbled line (samples L+1 and L+3, not L+2): the second
/// `recover` converts L+2 from the state at L+1, which the holed segment
/// holds though it holds L+3 too, so L+2 holds every counter as a whole
/// recovery has them, and no sample is said to be missing; it names the
/// samples the holed segment holds (L+1, L+3). Before, it took the
/// segment ending before L+2 (at L), said "sample L+1 is missing" and
/// L+2 held only the counters its line lists. Replay then takes L+2 from
/// its own segment (from the journal before the second `recover`), in
/// the holed segment's range: every interval as the whole recovery's.
#[test]
fn recover_takes_the_state_before_a_journal_from_a_segment_with_a_hole_there() {
    let d = tempfile::tempdir().unwrap();
    let (out, journal, good) = journal_of_24(&d.path().join("k"));
    let whole = d.path().join("whole");
    copy_dir(&out, &whole);
    std::fs::write(
        boot_dir(&whole).join("journal.jsonl"),
        good[..13].join("\n") + "\n",
    )
    .unwrap();
    assert_eq!(recover(&whole).0, Some(0));
    std::fs::write(&journal, good[..10].join("\n") + "\n").unwrap();
    assert_eq!(recover(&out).0, Some(0));
    let mut holed = good[10..13].to_vec();
    holed[1] = "garbage garbage".into();
    std::fs::write(&journal, holed.join("\n") + "\n").unwrap();
    let (code, err) = recover(&out);
    assert!(
        code == Some(0) && err.contains("lacks the skipped lines"),
        "{err}"
    );
    for kept in named(&boot_dir(&out), "journal.jsonl.partial-") {
        std::fs::remove_file(kept).unwrap();
    }
    let (code, lines, err) = replay(&out);
    assert_eq!((code, lines), (Some(0), 11), "one gap, at 11: {err}");
    assert!(err.contains("sample 11 is missing"), "{err}");
    let whole_values = python_values(&whole);
    // without an engine the first call says SKIP and the others are not made
    let holed_values = whole_values.as_ref().and_then(|_| python_values(&out));
    if let (Some(w), Some(holed)) = (&whole_values, holed_values) {
        // after the hole, a counter is known only where it is recorded
        // again: every value given at 12 is the whole recording's
        let (w12, h12) = (&w[&12], holed[&12].as_object().unwrap());
        let wrong: Vec<_> = h12
            .iter()
            .filter(|(k, v)| w12.get(k.as_str()) != Some(v))
            .collect();
        assert!(wrong.is_empty(), "values at 12 after the hole: {wrong:?}");
        let all = w12.as_object().unwrap().len();
        assert!(
            h12.len() < all,
            "{} of {all} counters known at 12",
            h12.len()
        );
    }
    std::fs::write(&journal, good[10..13].join("\n") + "\n").unwrap();
    let whole_lines = replayed(&whole);
    assert_eq!(whole_lines.len(), 12);
    // sample 11 from the journal before it is recovered
    let (code, lines, err) = replay(&out);
    assert_eq!((code, lines), (Some(0), 12), "{err}");
    assert!(err.contains("1 sample(s) read from the journal"), "{err}");
    assert!(
        !err.contains("skipped") && !err.contains(" missing (no file"),
        "{err}"
    );
    assert_eq!(replayed(&out), whole_lines, "{err}");
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("recovered 1 sample(s)"), "{err}");
    assert!(err.contains("(the same values)"), "{err}");
    assert!(
        err.contains("its 2 sample(s) 10, 12 are already in"),
        "{err}"
    );
    assert!(!err.contains("missing"), "nothing is missing: {err}");
    let at = |out: &Path, name: &str| cells_at(&boot_dir(out).join(name), 11);
    let got = at(&out, "part-0000000011-0000000011.parquet");
    let want = at(&whole, "part-0000000000-0000000012.parquet");
    assert!(want.len() > 1, "{want:?}");
    assert_eq!(got, want, "every counter at sample 11: {err}");
    let (code, lines, err) = replay(&out);
    assert_eq!((code, lines), (Some(0), 12), "every interval: {err}");
    assert!(!err.contains("already read"), "no sample held twice: {err}");
    assert!(!err.contains(" missing (no file"), "{err}");
    assert_eq!(replayed(&out), whole_lines, "as the whole recovery: {err}");
    if let Some(w) = whole_values {
        let got = python_values(&out).unwrap();
        assert_eq!(got, w, "read-recording.py: sample 12 over the recovered 11");
    }
}

/// `tools/read-recording.py`'s `values` per sample of the recording
/// `out`, with the first engine python3 has; `None` without one, said
/// on the real stderr (a visible skip).
fn python_values(out: &Path) -> Option<std::collections::BTreeMap<u64, serde_json::Value>> {
    use std::io::Write;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/read-recording.py");
    for engine in ["duckdb", "pyarrow"] {
        let o = Command::new("python3")
            .arg(&script)
            .arg(out)
            .args(["--engine", engine])
            .output()
            .ok()?;
        let err = String::from_utf8_lossy(&o.stderr);
        if err.contains("is not installed") {
            continue;
        }
        assert!(o.status.success(), "{err}");
        let lines = String::from_utf8_lossy(&o.stdout).into_owned();
        let by_seq = lines.lines().map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["seq"].as_u64().unwrap(), v["values"].clone())
        });
        return Some(by_seq.collect());
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIP record_cli: read-recording.py's hole check: neither duckdb nor pyarrow for python3"
    );
    None
}

/// `replay DIR --batch --format json`'s lines, each without its
/// `self_cost` (the replaying process's own cost).
fn replayed(out: &Path) -> Vec<serde_json::Value> {
    let o = replay_output(out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("self_cost");
            v
        })
        .collect()
}

/// Every counter of the segment at `path` at sample `seq`.
fn cells_at(
    path: &Path,
    seq: u64,
) -> std::collections::BTreeMap<(String, String, Option<u32>), u64> {
    let mut d = irqlab::record::segment::read(path).unwrap();
    d.cells.sort_by_key(|c| c.0);
    d.cells
        .into_iter()
        .filter(|c| c.0 <= seq)
        .map(|(_, c)| ((c.source.name().to_string(), c.key, c.cpu), c.value))
        .collect()
}

/// Journal line `line` with one more cell of `source` and `value`.
fn with_cell(line: &str, source: &str, value: i64) -> String {
    let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["cells"].as_array_mut().unwrap().push(serde_json::json!(
        {"source": source, "key": "LOC", "cpu": 0, "value": value}
    ));
    v.to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A journal a newer irqlab wrote (`"schema":99` on every line): recover
/// refuses and touches nothing (not even a leftover `.parquet.tmp`);
/// replay reads the rest and says why it skipped the journal's lines.
#[test]
fn recover_refuses_a_newer_journal_and_touches_nothing() {
    let d = tempfile::tempdir().unwrap();
    let (out, journal, good) = journal_of_24(d.path());
    let newer: Vec<String> = good
        .iter()
        .map(|l| l.replacen("\"schema\":3", "\"schema\":99", 1))
        .collect();
    let bytes = newer.join("\n") + "\n";
    std::fs::write(&journal, &bytes).unwrap();
    let dir = boot_dir(&out);
    let tmp = dir.join("part-0000000000-0000000001.parquet.tmp");
    std::fs::write(&tmp, b"PAR1").unwrap();
    let listing = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = listing(&dir);
    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("journal.jsonl:1: recording schema 99") && err.contains("left"),
        "{err}"
    );
    assert_eq!(listing(&dir), before, "nothing touched");
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), bytes);
    // replay has nothing else to show: it says why
    let (code, _, err) = replay(&out);
    assert_eq!(code, Some(1), "no sample at all: {err}");
    assert!(
        err.contains("schema 99") && err.contains("24 line(s)"),
        "{err}"
    );
}

/// A copied segment: `cp part-A-B part-C-D` with C..D reaching
/// over other segments. Nothing is superseded by its name alone: recover
/// removes nothing, and replay reads every sample once, saying what it
/// skipped.
#[test]
fn a_copy_under_a_wider_name_supersedes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let o = record(
        &tree,
        &out,
        &["-i", "100ms", "-d", "3s", "--segment", "1s", "--merge", "0"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    assert!(segs.len() >= 3, "{segs:?}");
    let n = reader::open(&dir).unwrap().steps.len();
    let (a0, b0, _) = segs[0].clone();
    let wide = dir.join(layout::segment_name(
        a0 + (b0 > a0) as u64,
        segs.last().unwrap().1 + 69,
    ));
    std::fs::copy(&segs[1].2, &wide).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("removed"), "{err}");
    for (_, _, p) in &segs {
        assert!(p.exists(), "{} kept: {err}", p.display());
    }
    let rec = reader::open(&dir).unwrap();
    assert_eq!(rec.steps.len(), n, "every sample once: {:?}", rec.warnings);
    assert!(rec
        .steps
        .windows(2)
        .all(|w| w[1].time.seq == w[0].time.seq + 1));
    let (code, lines, err) = replay(&out);
    assert_eq!((code, lines), (Some(0), n - 1), "{err}");
    assert!(err.contains("already read from"), "{err}");
}

/// A segment of another recording of the same tree copied into a boot
/// directory holds samples numbered as the recording's own (every run
/// numbers from 0) and its footer checks out: its samples are not taken
/// for the recording's (superseding its files, or skipping theirs as
/// already read), nor its intervals replayed across the two: replay
/// refuses, naming both files. So is another recording's journal.
/// Two recordings of one tree, `a` (segments every 300 ms, not merged)
/// and `b` (one file), and `b`'s segment copied into `a`'s boot
/// directory: its name's range covers `a`'s segments, its samples are
/// numbered as theirs (every recording numbers from 0) but taken at other
/// times.
struct TwoRecordings {
    tree: PathBuf,
    a: PathBuf,
    /// `a`'s own segments.
    segs: Vec<(u64, u64, PathBuf)>,
    /// `b`'s segment in `a`'s boot directory.
    copied: PathBuf,
}

fn two_recordings_in_one_boot_dir(d: &Path) -> TwoRecordings {
    let tree = d.join("tree");
    synth(&tree);
    let (a, b) = (d.join("a"), d.join("b"));
    let o = record(
        &tree,
        &a,
        &[
            "-i",
            "50ms",
            "-d",
            "1s",
            "--segment",
            "300ms",
            "--merge",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = record(&tree, &b, &["-i", "50ms", "-d", "1s"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (da, db) = (boot_dir(&a), boot_dir(&b));
    assert_eq!(da.file_name(), db.file_name(), "one tree, one boot name");
    let segs = layout::segments(&da).unwrap();
    assert!(segs.len() >= 3, "{segs:?}");
    let (_, _, theirs) = layout::segments(&db).unwrap().remove(0);
    let copied = da.join(theirs.file_name().unwrap());
    std::fs::copy(&theirs, &copied).unwrap();
    TwoRecordings {
        tree,
        a,
        segs,
        copied,
    }
}

#[test]
fn a_segment_of_another_recording_is_refused_not_replayed_as_this_ones() {
    let d = tempfile::tempdir().unwrap();
    let TwoRecordings {
        a, segs, copied, ..
    } = two_recordings_in_one_boot_dir(d.path());
    let da = boot_dir(&a);
    let (code, lines, err) = replay(&a);
    assert_eq!((code, lines), (Some(1), 0), "{err}");
    assert!(err.contains("files of two recordings"), "{err}");
    assert!(err.contains(&copied.display().to_string()), "{err}");
    assert!(
        segs.iter()
            .any(|(_, _, p)| err.contains(&p.display().to_string())),
        "{err}"
    );
    // another recording's journal (a killed run's) holds samples numbered
    // as the segments' too
    std::fs::remove_file(&copied).unwrap();
    let (_, killed) = killed_recording(&d.path().join("k"), 600);
    let journal = da.join("journal.jsonl");
    std::fs::copy(boot_dir(&killed).join("journal.jsonl"), &journal).unwrap();
    let (code, lines, err) = replay(&a);
    assert_eq!((code, lines), (Some(1), 0), "{err}");
    assert!(err.contains("files of two recordings"), "{err}");
    assert!(err.contains(&journal.display().to_string()), "{err}");
}

/// A file of another recording copied into a boot directory, its name's
/// range covering the recording's own files and its footer checking out
/// (the samples numbered alike): neither `recover` nor a new `record` in
/// that directory takes the recording's files as superseded by it (their
/// samples were taken at other times) and removes them. Both refuse
/// (exit 1), naming the files and saying to move one recording out; every
/// file stays as it was, byte for byte.
#[test]
fn another_recordings_segment_supersedes_nothing_and_nothing_is_removed() {
    let d = tempfile::tempdir().unwrap();
    let two = two_recordings_in_one_boot_dir(d.path());
    let da = boot_dir(&two.a);
    let before: Vec<(PathBuf, Vec<u8>)> = named(&da, "")
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    assert!(
        before.iter().any(|(p, _)| p == &two.copied),
        "{}",
        two.copied.display()
    );
    let unchanged = |after: &str| {
        let now: Vec<PathBuf> = before.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(named(&da, ""), now, "{after}");
        for (p, bytes) in &before {
            let now = std::fs::read(p).unwrap_or_default();
            assert!(&now == bytes, "{} changed: {after}", p.display());
        }
    };
    let names_both = |err: &str| {
        assert!(err.contains(&two.copied.display().to_string()), "{err}");
        assert!(
            two.segs
                .iter()
                .any(|(_, _, p)| err.contains(&p.display().to_string())),
            "{err}"
        );
        assert!(err.contains("files of two recordings"), "{err}");
        assert!(err.contains("move one recording's files out"), "{err}");
        assert!(!err.contains("removed /"), "{err}");
    };
    let (code, err) = recover(&two.a);
    assert_eq!(code, Some(1), "{err}");
    names_both(&err);
    unchanged(&err);
    let o = record(&two.tree, &two.a, &["-i", "50ms", "-d", "200ms"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    names_both(&err);
    unchanged(&err);
}

/// A FIFO as a segment or as the journal, `/dev/zero` behind the journal's
/// name and a 2 GiB sparse journal: replay and recover finish (under a
/// timeout), refuse the file by name or read it in bounded memory, and
/// keep what else is there.
#[test]
fn fifos_devices_and_sparse_journals_in_a_recording_never_hang() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    assert!(record(&tree, &out, &["-i", "50ms", "-d", "300ms"])
        .status
        .success());
    let dir = boot_dir(&out);
    let n = reader::open(&dir).unwrap().steps.len();
    let journal = dir.join("journal.jsonl");
    let mkfifo =
        |p: &Path| nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    // a FIFO segment after the real one
    let fifo_seg = dir.join(layout::segment_name(1000, 1001));
    mkfifo(&fifo_seg);
    let (code, lines, err) = replay(&out);
    assert_eq!((code, lines), (Some(0), n - 1), "{err}");
    assert!(
        err.contains("FIFO") && err.contains("part-0000001000"),
        "{err}"
    );
    std::fs::remove_file(&fifo_seg).unwrap();
    // the journal: a FIFO, /dev/zero
    for (what, make) in [
        ("FIFO", Box::new(|p: &Path| mkfifo(p)) as Box<dyn Fn(&Path)>),
        (
            "character device",
            Box::new(|p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
        ),
    ] {
        make(&journal);
        let (code, lines, err) = replay(&out);
        assert_eq!((code, lines), (Some(0), n - 1), "{what}: {err}");
        assert!(err.contains(what), "{what}: {err}");
        let (code, err) = recover(&out);
        assert_eq!(code, Some(1), "{what}: {err}");
        assert!(
            err.contains(what) && err.contains("journal.jsonl"),
            "{what}: {err}"
        );
        assert!(journal.symlink_metadata().is_ok(), "{what}: left in place");
        std::fs::remove_file(&journal).unwrap();
    }
    // 2 GiB of zero bytes (sparse): one torn record, read in bounded memory
    let f = std::fs::File::create(&journal).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    let (code, lines, err) = replay(&out);
    assert_eq!((code, lines), (Some(0), n - 1), "{err}");
    assert!(err.contains("torn last record"), "{err}");
    // nothing in it to recover: exit 1, the journal kept aside
    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("nothing recovered"), "{err}");
    assert!(
        !journal.exists() && named(&dir, "journal.jsonl.partial-").len() == 1,
        "{err}"
    );
}

/// A symlink loop as a segment is skipped as unreadable (named, with its
/// reason), not "kept changing"; a corrupt segment among others is skipped
/// and the rest replayed.
#[test]
fn one_bad_segment_is_skipped_and_the_rest_replayed() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let o = record(
        &tree,
        &out,
        &[
            "-i",
            "50ms",
            "-d",
            "1s",
            "--segment",
            "200ms",
            "--merge",
            "0",
        ],
    );
    assert!(o.status.success());
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    assert!(segs.len() >= 3, "{segs:?}");
    let n = reader::open(&dir).unwrap().steps.len();
    let loop_seg = dir.join(layout::segment_name(5000, 5001));
    std::os::unix::fs::symlink(&loop_seg, &loop_seg).unwrap();
    let (code, lines, err) = replay(&out);
    assert_eq!((code, lines), (Some(0), n - 1), "{err}");
    assert!(!err.contains("kept changing"), "{err}");
    assert!(
        err.contains("part-0000005000") && err.contains("symbolic links"),
        "{err}"
    );
    std::fs::remove_file(&loop_seg).unwrap();
    // a corrupt middle segment: its samples are skipped, the rest kept
    let (a, b, mid) = segs[1].clone();
    let bytes = std::fs::read(&mid).unwrap();
    std::fs::write(&mid, &bytes[..bytes.len() / 2]).unwrap();
    let (code, lines, err) = replay(&out);
    let lost = (b - a + 1) as usize;
    assert_eq!((code, lines), (Some(0), n - lost - 1), "{err}");
    assert!(
        err.contains("skipping") && err.contains(&*mid.file_name().unwrap().to_string_lossy()),
        "{err}"
    );
}

/// A duplicated or backward `seq` in the journal is skipped with a
/// message naming the line: replay never shows an interval of 0 s.
#[test]
fn a_duplicated_or_backward_journal_seq_is_skipped_by_line() {
    let d = tempfile::tempdir().unwrap();
    let (out, journal, good) = journal_of_24(d.path());
    let mut lines = good.clone();
    lines.insert(10, good[9].clone());
    lines.insert(15, good[3].clone());
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let (code, n, err) = replay(&out);
    assert_eq!((code, n), (Some(0), 23), "{err}");
    assert!(
        err.contains("journal.jsonl:11: sample 9 does not follow sample 9"),
        "{err}"
    );
    assert!(
        err.contains("journal.jsonl:16: sample 3 does not follow"),
        "{err}"
    );
}

/// `record --cpus 99` / `--irq zzz` warn as `show` does
/// (`crate::filter::warnings`) and still record.
#[test]
fn record_warns_of_filters_that_select_nothing() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let o = record(
        &tree,
        &d.path().join("a"),
        &["-d", "100ms", "--cpus", "1,99"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("irqlab: warning: --cpus 1,99: 99 not online"),
        "{err}"
    );
    let (code, lines, err) = replay(&d.path().join("a"));
    assert_eq!(code, Some(0), "{err}");
    assert!(lines >= 1, "{err}");
    let o = record(&tree, &d.path().join("b"), &["-d", "100ms", "--irq", "zzz"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("irqlab: warning: --irq \"zzz\" matches no interrupt row"),
        "{err}"
    );
    let o = record(&tree, &d.path().join("c"), &["-d", "100ms", "--cpus", "0"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
}

/// A `--root` tree without `proc/sys/kernel/random/boot_id` (every synth
/// tree) records under a boot id derived from the tree, never
/// `boot=unknown`, the same at every run of the same tree and different
/// for another tree.
#[test]
fn a_root_tree_gets_a_stable_boot_id_from_the_tree_never_unknown() {
    let d = tempfile::tempdir().unwrap();
    let (t1, t2, out) = (
        d.path().join("t1"),
        d.path().join("t2"),
        d.path().join("rec"),
    );
    synth(&t1);
    synth(&t2);
    assert!(!t1.join("proc/sys/kernel/random/boot_id").exists());
    let boots = |host: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(out.join(format!("host={host}")))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    for _ in 0..2 {
        let o = record(&t1, &out, &["-i", "50ms", "-d", "100ms", "--host", "a"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = record(&t2, &out, &["-i", "50ms", "-d", "100ms", "--host", "b"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (boots("a"), boots("b"));
    assert_eq!(
        a.len(),
        1,
        "two runs of one tree: one boot directory: {a:?}"
    );
    assert!(
        a[0].starts_with("boot=tree-") && a[0].len() == "boot=tree-".len() + 16,
        "{a:?}"
    );
    assert_ne!(a[0], b[0], "another tree, another boot id");
    // a tree with a boot id keeps it
    std::fs::create_dir_all(t2.join("proc/sys/kernel/random")).unwrap();
    std::fs::write(t2.join("proc/sys/kernel/random/boot_id"), "1234-abcd\n").unwrap();
    let o = record(&t2, &out, &["-i", "50ms", "-d", "100ms", "--host", "c"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(boots("c"), vec!["boot=1234-abcd".to_string()]);
}

/// A segment renamed by hand: `recover` writes it no identity file (its
/// samples are not its name's), and keeps the identity file of the name
/// its samples have, byte for byte, saying which segment holds them;
/// renamed back, the two are a segment and its identity again.
#[test]
fn recover_keeps_the_irq_identity_of_a_segment_renamed_by_hand() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    let o = record(&tree, &out, &["-i", "50ms", "-d", "200ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let segs = named(&dir, "part-");
    let ids = named(&dir, "irqs-");
    assert_eq!((segs.len(), ids.len()), (1, 1), "{segs:?} {ids:?}");
    let bytes = std::fs::read(&ids[0]).unwrap();
    let renamed = dir.join(layout::segment_name(0, 99));
    std::fs::rename(&segs[0], &renamed).unwrap();
    for _ in 0..2 {
        let (code, err) = recover(&out);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(std::fs::read(&ids[0]).unwrap(), bytes, "{err}");
        assert!(
            err.contains(&format!(
                "irqlab: warning: {}: kept: its segment's name is not there, but {} holds samples 0–",
                ids[0].display(),
                renamed.display()
            )) && err.contains(&format!("rename that segment back to the name its samples have ({})", segs[0].file_name().unwrap().to_string_lossy())),
            "{err}"
        );
        assert_eq!(named(&dir, "irqs-"), ids, "{err}");
    }
    std::fs::rename(&renamed, &segs[0]).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert_eq!(std::fs::read(&ids[0]).unwrap(), bytes, "{err}");
}

/// Every segment has its IRQ identity file (`irqs-FIRST-LAST.parquet`):
/// `recover` writes the one a crash left missing (or a journal it
/// converts), with the segment's rows, and removes one whose segment is
/// gone; the identity names each interrupt row's chip and device.
#[test]
fn recover_writes_missing_irq_identity_files_and_removes_orphans() {
    use irqlab::record::identity;
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("t"), d.path().join("rec"));
    synth(&tree);
    // two segments at least: a stalled, busy machine may cram a short
    // run's samples into one, so the run grows until it has them
    let mut segs = Vec::new();
    for d in ["300ms", "1s", "3s"] {
        let _ = std::fs::remove_dir_all(&out);
        let args = ["-i", "50ms", "-d", d, "--segment", "100ms", "--merge", "0"];
        let o = record(&tree, &out, &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        segs = layout::segments(&boot_dir(&out)).unwrap();
        if segs.len() >= 2 {
            break;
        }
    }
    let dir = boot_dir(&out);
    assert!(segs.len() >= 2, "{segs:?}");
    let ids = named(&dir, "irqs-");
    assert_eq!(ids.len(), segs.len(), "{ids:?}");
    // the second segment's identity is lost; an orphan appears
    let lost = dir.join(identity::file_name(segs[1].0, segs[1].1));
    let kept = std::fs::read(&lost).unwrap();
    std::fs::remove_file(&lost).unwrap();
    let orphan = dir.join(identity::file_name(900, 901));
    std::fs::copy(&ids[0], &orphan).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("IRQ identity"), "{err}");
    assert!(!orphan.exists(), "{err}");
    assert_eq!(std::fs::read(&lost).unwrap().len(), kept.len(), "{err}");
    // files of identity names that do not read as identity files are
    // kept and named: an orphan, and one beside its segment
    let junk_orphan = dir.join(identity::file_name(99, 100));
    std::fs::write(&junk_orphan, "junk\n").unwrap();
    std::fs::write(&lost, "junk\n").unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    let warned = |p: &Path| {
        err.lines()
            .any(|l| l.starts_with("irqlab: warning: ") && l.contains(&*p.to_string_lossy()))
    };
    assert!(warned(&junk_orphan) && err.contains(": kept: "), "{err}");
    assert_eq!(std::fs::read(&junk_orphan).unwrap(), b"junk\n", "{err}");
    assert!(
        warned(&lost) && err.contains("not an irqlab IRQ identity file"),
        "{err}"
    );
    assert_eq!(std::fs::read(&lost).unwrap(), b"junk\n", "{err}");
    // the rows: every interrupts row of the tree, with its parts
    let seg = irqlab::record::segment::read(&segs[0].2).unwrap();
    let shape = &seg.shapes[0].shape;
    let rows = identity::rows(None, &seg.shapes, &seg.samples);
    assert_eq!(rows.len(), shape.irq_rows.len());
    assert!(rows
        .iter()
        .any(|r| r.irq.is_some() && r.chip.is_some() && r.device.is_some()));
    assert!(rows.iter().any(|r| r.label == "LOC" && r.irq.is_none()));
}

/// The PIDs `replay --batch --format json` of `rec` gives its ksoftirqd
/// threads (every frame), and the PID column of its text output.
fn replayed_pids(rec: &Path) -> (Vec<serde_json::Value>, Vec<String>) {
    let r = irqlab()
        .arg("replay")
        .arg(rec)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut pids = Vec::new();
    for l in String::from_utf8_lossy(&r.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        for t in v["threads"].as_array().unwrap() {
            pids.push(t["pid"].clone());
        }
    }
    let r = irqlab()
        .arg("replay")
        .arg(rec)
        .arg("--batch")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text: Vec<String> = String::from_utf8_lossy(&r.stdout)
        .lines()
        .filter(|l| l.ends_with("ksoftirqd/0") || l.ends_with("ksoftirqd/1"))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .collect();
    (pids, text)
}

/// `replay --batch` showed `"pid": 0` for every thread: recordings kept
/// no PID. A recording now keeps each thread's PID and replays it; one
/// made before (its layout without `thread_pids`) replays the PID as not
/// known: JSON `null`, `-` in text, never 0.
#[test]
fn replayed_threads_carry_their_recorded_pid_or_none() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    common::fake_thread(&tree, 14, "ksoftirqd/0", 1_000_000);
    common::fake_thread(&tree, 22, "ksoftirqd/1", 2_000_000);
    let mut child = spawn_record(
        &tree,
        &out,
        &["-i", "50ms", "--segment", "1h"],
        Stdio::null(),
    );
    let lines = || {
        first_journal(&out)
            .and_then(|j| std::fs::read_to_string(j).ok())
            .map_or(0, |t| t.lines().filter(|l| l.ends_with('}')).count())
    };
    assert!(common::wait_until(Duration::from_secs(20), || lines() >= 5));
    child.kill().unwrap(); // SIGKILL: the samples stay in the journal
    child.wait().unwrap();

    // the journal (read as a salvage) …
    let (pids, text) = replayed_pids(&out);
    assert!(!pids.is_empty(), "threads replayed");
    for p in &pids {
        assert!(*p == 14 || *p == 22, "a real PID, got {p}: {pids:?}");
    }
    assert!(pids.contains(&14.into()) && pids.contains(&22.into()));
    assert!(text.iter().all(|p| p == "14" || p == "22"), "{text:?}");

    // … the same recording before PIDs were recorded: no `thread_pids`
    let old = d.path().join("old");
    copy_dir(&out, &old);
    let j = boot_dir(&old).join("journal.jsonl");
    let stripped: Vec<String> = std::fs::read_to_string(&j)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with('}'))
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(shape) = v.get_mut("shape").and_then(|s| s.as_object_mut()) {
                assert!(
                    shape.remove("thread_pids").is_some()
                        || shape["threads"] == serde_json::json!([])
                );
            }
            v.to_string()
        })
        .collect();
    std::fs::write(&j, stripped.join("\n") + "\n").unwrap();
    let (pids, text) = replayed_pids(&old);
    assert!(!pids.is_empty());
    assert!(pids.iter().all(|p| p.is_null()), "{pids:?}");
    assert!(
        !text.is_empty() && text.iter().all(|p| p == "-"),
        "{text:?}"
    );

    // … and the segment recover makes of the journal keeps them
    let r = irqlab().arg("recover").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (pids, _) = replayed_pids(&out);
    assert!(
        !pids.is_empty() && pids.iter().all(|p| *p == 14 || *p == 22),
        "{pids:?}"
    );
}

/// The interrupt threads' CPU time is recorded from the first sample on,
/// so the first replayed interval has their shares (JSON and text) as
/// live `top --batch`'s first does: it had no thread at all (a recording
/// held threads from its second sample only).
#[test]
fn the_first_replayed_interval_has_the_threads_cpu_shares() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    common::fake_thread(&tree, 14, "ksoftirqd/0", 1_000_000);
    common::fake_thread(&tree, 22, "ksoftirqd/1", 2_000_000);
    let r = record(&tree, &out, &["-i", "100ms", "-d", "300ms"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = irqlab()
        .arg("replay")
        .arg(&out)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stdout = String::from_utf8_lossy(&r.stdout);
    let first: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    let names: Vec<&str> = first["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ksoftirqd/0", "ksoftirqd/1"], "{first}");
    let text = irqlab()
        .arg("replay")
        .arg(&out)
        .arg("--batch")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let first_stamp = text
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let threads = text
        .lines()
        .filter(|l| l.starts_with(first_stamp) && l.ends_with("ksoftirqd/0"))
        .count();
    assert_eq!(threads, 1, "{text}");
}

/// A `--cpus` that keeps no CPU of the tree would record samples that
/// cannot be read back: `record` refuses it as a usage error (exit 2)
/// naming the list and the CPUs there, before anything is written — not
/// the output directory, nor a recording already in it (its journal left
/// by a kill stays as it is).
#[test]
fn record_refuses_cpus_that_select_no_cpu_before_writing_anything() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("new");
    let o = record(&tree, &out, &["-d", "100ms", "--cpus", "99"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "irqlab: error: --cpus 99 selects no CPU of this machine (the sampled files list CPUs 0-3): nothing recorded"
    );
    assert!(!out.exists(), "nothing written");
    // a killed run's directory: untouched
    let (tree, rec) = killed_recording(&d.path().join("k"), 300);
    let before = listing(&rec);
    let o = record(&tree, &rec, &["-d", "100ms", "--cpus", "7-9"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(listing(&rec), before);
}

/// `-o DIR` creates DIR, not a missing parent: a mistyped path is refused
/// (exit 1, as record's other I/O errors) naming the missing parent,
/// before anything is sampled or written; DIR itself, when its parent
/// exists, is created with its boot directory inside.
#[test]
fn record_creates_its_directory_but_never_a_missing_parent() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("typo/x/y");
    let o = record(&tree, &out, &["-d", "100ms", "-i", "50ms"]);
    refused_for_missing_parent(&o, &out, &d.path().join("typo/x"));
    assert!(!d.path().join("typo").exists(), "no parent made");
    // the parent exists: DIR is made, its recording inside
    let out = d.path().join("rec");
    let o = record(&tree, &out, &["-d", "100ms", "-i", "50ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(boot_dir(&out).starts_with(&out));
    assert!(!reader::open(&boot_dir(&out)).unwrap().steps.is_empty());
}

/// `record --trace -o` with a missing parent is refused as the plain
/// run's is (exit 1, naming the parent), before anything is attached or
/// mounted: no root and no BPF needed to see it. A build without tracing
/// says so first (usage, exit 2). Nothing is made either way.
#[test]
fn record_trace_never_makes_a_missing_parent_and_refuses_before_attaching() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("typo/x/y");
    let o = record(&tree, &out, &["--trace", "-d", "100ms", "-i", "50ms"]);
    if cfg!(feature = "trace") {
        refused_for_missing_parent(&o, &out, &d.path().join("typo/x"));
    } else {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--features trace"), "{err}");
    }
    assert!(!d.path().join("typo").exists(), "no parent made");
}

/// `record -o out` ended with exit 1 and only the error naming `out`'s
/// missing `parent`.
fn refused_for_missing_parent(o: &std::process::Output, out: &Path, parent: &Path) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "irqlab: error: cannot create {}: parent directory {} does not exist",
            out.display(),
            parent.display()
        )
    );
}

/// Every file under `dir` with its size, sorted.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut v = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let n = std::fs::metadata(&p).unwrap().len();
                v.push((p, n));
            }
        }
    }
    v.sort();
    v
}

/// The `interval_s` of every JSON line `replay --batch` writes of `out`,
/// and its stderr.
fn replay_intervals(out: &Path, extra: &[&str]) -> (Vec<f64>, String) {
    let r = irqlab()
        .arg("replay")
        .arg(out)
        .args(["--batch", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr).into_owned();
    assert!(r.status.success(), "{err}");
    let v = String::from_utf8_lossy(&r.stdout)
        .lines()
        .map(|l| {
            let j: serde_json::Value = serde_json::from_str(l).unwrap();
            j["interval_s"].as_f64().unwrap()
        })
        .collect();
    (v, err)
}

/// Two `record` runs into one directory are two runs of one boot
/// directory (the second numbers after the first): replay never makes an
/// interval across them, nor an `Average:` over both, and says where each
/// starts and with which filter it was recorded. The interactive view
/// needs `--run`.
#[test]
fn two_record_runs_in_one_directory_replay_as_separate_runs() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let o = record(&tree, &out, &["-i", "50ms", "-d", "150ms", "--irq", "LOC"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::thread::sleep(Duration::from_millis(500));
    let o = record(
        &tree,
        &out,
        &["-i", "50ms", "-d", "150ms", "--irq", "RES", "--cpus", "1"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let rec = reader::open(&dir).unwrap();
    let runs = reader::runs(&rec.steps);
    assert_eq!(runs.len(), 2, "{runs:?}");
    let n = rec.steps.len();
    let (iv, err) = replay_intervals(&out, &[]);
    assert_eq!(iv.len(), n - 2, "one baseline per run: {err}");
    assert!(
        iv.iter().all(|&s| s < 0.4),
        "no interval across runs: {iv:?}"
    );
    assert!(
        err.contains("irqlab: run 1 of 2: samples 0–")
            && err.contains(
                ", recorded with --irq LOC; replayed on its own (no interval across runs)"
            )
            && err.contains("irqlab: run 2 of 2: samples ")
            && err.contains(", recorded with --irq RES --cpus 1; replayed on its own"),
        "{err}"
    );
    // one run alone
    let (one, err) = replay_intervals(&out, &["--run", "2"]);
    assert_eq!(one.len(), runs[1].len() - 1, "{err}");
    // text: each run ends with its own Average:, over its own CPUs
    let r = irqlab()
        .arg("replay")
        .arg(&out)
        .arg("--batch")
        .output()
        .unwrap();
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    let averages: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("Average:  IRQ "))
        .map(|l| l.split_whitespace().skip(4).collect())
        .collect();
    assert_eq!(
        averages,
        vec![vec!["CPU0", "CPU1", "CPU2", "CPU3"], vec!["CPU1"]]
    );
    // the interactive view of one of several runs: name it
    let r = irqlab().arg("replay").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(
        err.contains("holds 2 record runs, replayed one at a time: name one with --run N")
            && err.contains("--run 2: samples "),
        "{err}"
    );
    let r = irqlab()
        .arg("replay")
        .arg(&out)
        .args(["--batch", "--run", "3"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--run 3: "));
}

/// A second run killed before its first segment closed, then recovered:
/// its segment holds only its own counters (none of the first run's,
/// which another filter kept), and replay still keeps the runs apart.
#[test]
fn a_killed_second_run_recovers_into_a_run_of_its_own() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let o = record(&tree, &out, &["-i", "50ms", "-d", "150ms", "--irq", "LOC"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut child = spawn_record(
        &tree,
        &out,
        &["-i", "50ms", "--segment", "1h", "--irq", "RES"],
        Stdio::null(),
    );
    let dir = boot_dir(&out);
    let journal = dir.join("journal.jsonl");
    for _ in 0..500 {
        if flushed_samples_or_0(&journal) >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let n = flushed_samples(&journal);
    assert!(n >= 2, "only {n} samples flushed");
    // replay reads the journal as the second run …
    let (iv, err) = replay_intervals(&out, &[]);
    assert!(err.contains("run 2 of 2"), "{err}");
    let steps = reader::open(&dir).unwrap().steps.len();
    assert_eq!(iv.len(), steps - 2, "one baseline per run: {err}");
    // … and so after recovery
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(&format!("recovered {n} sample(s)")), "{err}");
    let (again, err) = replay_intervals(&out, &[]);
    assert_eq!(again.len(), iv.len(), "{err}");
    let segs = layout::segments(&dir).unwrap();
    assert_eq!(segs.len(), 2, "{segs:?}");
    let cells = irqlab::record::segment::read(&segs[1].2).unwrap().cells;
    assert!(
        cells.iter().all(
            |(_, c)| !(c.source == irqlab::record::schema::SourceKind::Interrupts
                && c.key == "LOC")
        ),
        "no counter of the first run in the second's segment"
    );
    assert!(cells.iter().any(|(_, c)| c.key == "RES"));
}

/// [`flushed_samples`], 0 while the journal is not there.
fn flushed_samples_or_0(journal: &Path) -> usize {
    match journal.exists() {
        true => flushed_samples(journal),
        false => 0,
    }
}

/// A sample that cannot be taken (a statistics file emptied mid-run) ends
/// the run with exit 1 and an error saying where the samples before it
/// are: closed into a segment, which replay reads, no journal left over.
#[test]
fn a_failed_sample_ends_the_run_with_its_samples_in_a_segment() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    let child = spawn_record(&tree, &out, &["-i", "50ms", "-d", "60s"], Stdio::piped());
    let journal_lines = || first_journal(&out).map_or(0, |j| flushed_samples_or_0(&j));
    for _ in 0..500 {
        if journal_lines() >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // emptied in place: the recorder keeps the file open
    let softirqs = tree.join("proc/softirqs");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&softirqs)
        .unwrap()
        .set_len(0)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("recording stopped; its "), "{err}");
    assert!(err.contains("proc/softirqs: file is empty"), "{err}");
    let dir = boot_dir(&out);
    assert!(!dir.join("journal.jsonl").exists(), "{err}");
    let rec = reader::open(&dir).unwrap();
    assert!(
        rec.steps.len() >= 3,
        "{} samples kept; {err}",
        rec.steps.len()
    );
}

/// LOC's (CPU 0) rate and gap of every interval `replay --batch` writes
/// of `out`.
fn loc_series(out: &Path) -> Vec<(serde_json::Value, serde_json::Value)> {
    let o = irqlab()
        .arg("replay")
        .arg(out)
        .args(["--batch", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let rows = v["interrupts"]["rows"].as_array().unwrap();
            let loc = rows.iter().find(|r| r["label"] == "LOC").unwrap();
            (loc["rates"][0].clone(), loc["gaps"][0].clone())
        })
        .collect()
}

/// A second run whose journal lost its first line (the run's first
/// sample, every counter): `recover` borrows no counter from the first
/// run's segment. Replay shows the same intervals after `recover` as
/// before it: LOC's jump between the runs is a `missing_samples` gap,
/// never a rate of a million counts over one interval.
#[test]
fn a_run_whose_first_journal_line_is_lost_borrows_no_counter_from_the_run_before() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    let o = record(&tree, &out, &["-i", "50ms", "--duration", "200ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    bump_loc(&tree, 1_000_000);
    let mut child = spawn_record(
        &tree,
        &out,
        &["-i", "50ms", "--segment", "1h"],
        Stdio::null(),
    );
    let journal = boot_dir(&out).join("journal.jsonl");
    let lines = || std::fs::read_to_string(&journal).map_or(0, |j| flushed_samples_of(&j));
    for _ in 0..500 {
        if lines() >= 4 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    bump_loc(&tree, 100);
    let now = lines();
    for _ in 0..500 {
        if lines() >= now + 4 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&journal).unwrap();
    let (_, rest) = text.split_once('\n').unwrap();
    std::fs::write(&journal, format!("{{\"torn\n{rest}")).unwrap();
    let before = loc_series(&out);
    assert!(
        before
            .iter()
            .any(|r| r.1 == serde_json::json!("missing_samples")),
        "{before:?}"
    );
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("recovered"), "{err}");
    let after = loc_series(&out);
    assert_eq!(after, before, "{err}");
    assert!(
        after.iter().all(|r| r.0.as_f64().is_none_or(|v| v < 1e5)),
        "{after:?}"
    );
}

/// The whole (newline-ended JSON) lines of journal text.
fn flushed_samples_of(text: &str) -> usize {
    text.lines().filter(|l| l.ends_with('}')).count()
}

/// A journal whose first line (the layout and every counter) is lost,
/// with no segment before it: `recover` exits 1 naming the line and why,
/// writes no segment and leaves the journal byte for byte; so does a
/// `record` into that directory (it would otherwise start a new journal
/// over it).
#[test]
fn a_journal_without_its_layout_is_left_as_it_is() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out, journal, good) = {
        let (tree, out) = killed_recording(d.path(), 800);
        let journal = boot_dir(&out).join("journal.jsonl");
        let text = std::fs::read_to_string(&journal).unwrap();
        (tree, out, journal, text)
    };
    let (_, rest) = good.split_once('\n').unwrap();
    let bytes = format!("{{\"torn\n{rest}");
    std::fs::write(&journal, &bytes).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("journal.jsonl:1: "), "{err}");
    assert!(err.contains("have no layout"), "{err}");
    assert!(err.contains("left the journal as it is"), "{err}");
    assert_every_line_prefixed(&err);
    let dir = boot_dir(&out);
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), bytes);
    assert!(named(&dir, "part-").is_empty(), "no segment written");
    let o = record(&tree, &out, &["-i", "50ms", "--duration", "100ms"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("have no layout"), "{err}");
    assert!(err.lines().count() >= 2, "the skipped line and why: {err}");
    assert!(err.starts_with("irqlab: error: "), "{err}");
    assert_every_line_prefixed(&err);
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), bytes);
}

/// Every line of `stderr` carries irqlab's `irqlab: ` prefix (a message
/// of several lines too).
fn assert_every_line_prefixed(stderr: &str) {
    for l in stderr.lines() {
        assert!(l.starts_with("irqlab: "), "line {l:?} of:\n{stderr}");
    }
}

/// A journal whose samples a segment already holds (put back after
/// `recover`): `recover` says so and that it removed it; a journal whose
/// lines differ from the segment's values for the same samples is kept
/// (renamed) and the difference named.
#[test]
fn a_journal_already_in_a_segment_is_removed_with_a_word_and_kept_when_it_differs() {
    let d = tempfile::tempdir().unwrap();
    let (_, out) = killed_recording(d.path(), 800);
    let dir = boot_dir(&out);
    let journal = dir.join("journal.jsonl");
    // its whole lines (a torn last one would keep it as partial)
    let text: String = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with('}'))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&journal, &text).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    std::fs::write(&journal, &text).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("are already in"), "{err}");
    assert!(err.contains("(the same values)"), "{err}");
    assert!(
        err.contains(&format!("removed {}", journal.display())),
        "{err}"
    );
    assert!(!err.contains("nothing to recover"), "{err}");
    assert!(!journal.exists());
    // one value changed: kept, named
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[1] = with_cell(&lines[1], "interrupts", 5);
    let bad = lines.join("\n") + "\n";
    std::fs::write(&journal, &bad).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("line(s) differ from it"), "{err}");
    assert!(err.contains("\"LOC\" CPU 0 is 5 in the journal"), "{err}");
    assert!(!journal.exists());
    let kept = named(&dir, "journal.jsonl.partial-");
    assert_eq!(kept.len(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&kept[0]).unwrap(), bad);
}

/// Another recording's journal copied into a boot directory (its first
/// samples numbered as the segments' own, taken at other times): replay
/// refuses the directory as files of two recordings, and `recover` leaves
/// it as it is (exit 1, naming the journal, the segment and both clock
/// readings). Before, it turned the journal's later samples into a
/// segment of this recording: replay then read the two as one, with
/// intervals across them, exit 0.
#[test]
fn recover_refuses_another_recordings_journal() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = (d.path().join("tree"), d.path().join("rec"));
    synth(&tree);
    let o = record(&tree, &out, &["-i", "50ms", "--duration", "150ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let seg = layout::segments(&dir).unwrap()[0].2.clone();
    let other = tempfile::tempdir().unwrap();
    let (_, other_out) = killed_recording(other.path(), 600);
    let journal = dir.join("journal.jsonl");
    std::fs::copy(boot_dir(&other_out).join("journal.jsonl"), &journal).unwrap();
    let text = std::fs::read(&journal).unwrap();
    let before = listing(&dir);

    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("{}: sample 0 was taken at ", journal.display()))
            && err.contains(&format!("but {} holds a sample 0 taken at", seg.display()))
            && err.contains("the journal is another recording's")
            && err.contains("nothing removed, nothing recovered"),
        "{err}"
    );
    assert_eq!(listing(&dir), before, "{err}");
    assert_eq!(std::fs::read(&journal).unwrap(), text);
    let (code, _, err) = replay(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("files of two recordings"), "{err}");
}

/// `replay FILE` and `recover FILE` on a regular file say it is not a
/// directory (not that no such directory exists), and exit 1.
#[test]
fn a_file_given_as_the_recording_is_not_a_directory() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("afile");
    std::fs::write(&file, "x\n").unwrap();
    for (code, err) in [replay(&file), {
        let (c, e) = recover(&file);
        (c, 0, e)
    }]
    .map(|(c, _, e)| (c, e))
    {
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(
                "afile: not a directory (a recording is a directory written by `irqlab record`)"
            ),
            "{err}"
        );
    }
}

/// `replay DIR --batch --format json --run` … as (exit, stdout lines, stderr).
fn replay_with(out: &Path, extra: &[&str]) -> (Option<i32>, usize, String) {
    let o = irqlab()
        .arg("replay")
        .arg(out)
        .args(["--batch", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).lines().count(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A run whose first segment (its first sample: the layout and every
/// counter) is lost, then a second run: the first is skipped, named with
/// its segment and why; the second is replayed and keeps its number 2.
/// (`recover` refuses to make such a segment from a journal that lost its
/// first line; a segment removed by hand leaves the same hole.)
#[test]
fn a_run_without_its_first_sample_is_skipped_and_named_and_the_rest_replayed() {
    let d = tempfile::tempdir().unwrap();
    let (tree, out) = killed_recording_with(d.path(), 600, Segments::ClosedEvery("100ms"));
    let (code, err) = recover(&out);
    assert_eq!(code, Some(0), "{err}");
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    assert!(segs.len() >= 2, "{segs:?}");
    std::fs::remove_file(&segs[0].2).unwrap();
    let kept = segs[1]
        .2
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let o = record(&tree, &out, &["-i", "50ms", "-d", "150ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, lines, err) = replay_with(&out, &[]);
    assert_eq!((code, lines), (Some(0), 3), "{err}");
    assert!(
        err.contains("run 1 of 2: sample")
            && err.contains(&kept)
            && err.contains("skipped: sample ")
            && err.contains("has no layout")
            && err.contains("run 2 of 2: "),
        "{err}"
    );
    let (code, lines, err) = replay_with(&out, &["--run", "2"]);
    assert_eq!((code, lines), (Some(0), 3), "{err}");
    let (code, _, err) = replay_with(&out, &["--run", "1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot be replayed: sample "), "{err}");
}

/// Two runs, the first one's only segment garbage: it keeps its number
/// (skipped, named with why), the second is replayed as run 2.
#[test]
fn an_unreadable_run_keeps_its_number() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    for _ in 0..2 {
        let o = record(&tree, &out, &["-i", "50ms", "-d", "150ms"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let dir = boot_dir(&out);
    let segs = layout::segments(&dir).unwrap();
    assert_eq!(segs.len(), 2, "{segs:?}");
    std::fs::write(&segs[0].2, "garbage\n").unwrap();
    let name = segs[0]
        .2
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let (code, lines, err) = replay_with(&out, &[]);
    assert_eq!((code, lines), (Some(0), 3), "{err}");
    assert!(
        err.contains("run 1 of 2: sample")
            && err.contains(&format!(
                "skipped: its segment cannot be read: {}",
                segs[0].2.display()
            ))
            && err.contains(&name),
        "{err}"
    );
    let (code, lines, err) = replay_with(&out, &["--run", "2"]);
    assert_eq!((code, lines), (Some(0), 3), "{err}");
    assert!(err.contains("run 2 of 2"), "{err}");
}

/// A statistics file the tree lacks is named once, at the start, as
/// `show`, `top` and `serve` name it, saying that it is not recorded
/// until a sample can read it: the run records the others, tries it at
/// every sample, and records it from the first sample that reads it (a
/// new layout listing it, its counters in that sample).
#[test]
fn a_statistics_file_missing_at_the_start_is_recorded_once_a_sample_reads_it() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let softirqs = tree.join("proc/softirqs");
    let text = std::fs::read(&softirqs).unwrap();
    std::fs::remove_file(&softirqs).unwrap();
    let out = d.path().join("rec");
    let child = spawn_record(&tree, &out, &["-i", "50ms", "-d", "2s"], Stdio::piped());
    assert!(common::wait_until(Duration::from_secs(20), || {
        journal_has_line(&out)
    }));
    // whole or absent to the recorder
    let part = d.path().join("softirqs.part");
    std::fs::write(&part, &text).unwrap();
    std::fs::rename(&part, &softirqs).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("not recorded")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    let said = "irqlab: note: not recorded until a sample can read it: ";
    assert!(
        notes[0].starts_with(said) && notes[0].contains("proc/softirqs"),
        "{err}"
    );
    let rec = reader::open(&boot_dir(&out)).unwrap();
    let laid_out = |s: &reader::RecordedSample| s.shape.as_ref().map(|sh| sh.soft_cpus.is_some());
    assert_eq!(laid_out(&rec.steps[0]), Some(false));
    let first = rec
        .steps
        .iter()
        .position(|s| laid_out(s) == Some(true))
        .expect("a layout listing proc/softirqs");
    let cells = |s: &reader::RecordedSample| {
        s.cells
            .iter()
            .filter(|c| c.source == irqlab::record::schema::SourceKind::Softirqs)
            .count()
    };
    assert!(first > 0 && cells(&rec.steps[first]) > 0, "{first}");
    assert!(rec.steps[..first].iter().all(|s| cells(s) == 0));
}

/// A file `recover` removes that cannot be removed (here a directory
/// named as an interrupted segment write) is named as still there and
/// makes `recover` exit 1: the recording is not as it leaves it. It is
/// left as it is. Before, `recover` warned and exited 0.
#[test]
fn recover_fails_when_a_file_it_removes_cannot_be_removed() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    assert!(record(&tree, &out, &["-i", "50ms", "-d", "200ms"])
        .status
        .success());
    let stuck = boot_dir(&out).join(format!("{}.tmp", layout::segment_name(1000, 1001)));
    std::fs::create_dir(&stuck).unwrap();
    let (code, err) = recover(&out);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "irqlab: cannot remove {} (a segment whose write was interrupted): ",
            stuck.display()
        )) && err.contains(": it is still there; remove it by hand\n"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "irqlab: 1 file(s) under {} that recovery removes could not be removed (above)",
            out.display()
        )),
        "{err}"
    );
    assert!(stuck.is_dir());
}

/// `record -o DIR` where `DIR/host=NAME` or its `boot=` directory is a
/// dangling symbolic link, or `host=NAME` a regular file: exit 1 naming
/// the path, what it is and that a directory was expected (before: a
/// bare "File exists" or "Not a directory"); it is left as it is.
#[test]
fn record_into_a_host_or_boot_path_that_is_no_directory_names_it() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    // the boot directory's name, from a recording of the tree
    let first = d.path().join("first");
    assert!(record(&tree, &first, &["-d", "10ms", "--host", "h1"])
        .status
        .success());
    let boot = boot_dir(&first).file_name().unwrap().to_owned();
    let nowhere = d.path().join("nowhere");
    for what in ["host link", "host file", "boot link"] {
        let out = d.path().join(what.replace(' ', "_"));
        let host = out.join("host=h1");
        let (bad, want) = match what {
            "host link" => {
                std::fs::create_dir(&out).unwrap();
                std::os::unix::fs::symlink(&nowhere, &host).unwrap();
                let want = format!(
                    "{} is a dangling symbolic link (to {}), expected a directory",
                    host.display(),
                    nowhere.display()
                );
                (host.clone(), want)
            }
            "host file" => {
                std::fs::create_dir(&out).unwrap();
                std::fs::write(&host, b"x").unwrap();
                let want = format!("{} is a regular file, expected a directory", host.display());
                (host.clone(), want)
            }
            _ => {
                std::fs::create_dir_all(&host).unwrap();
                let b = host.join(&boot);
                std::os::unix::fs::symlink(&nowhere, &b).unwrap();
                let want = format!(
                    "{} is a dangling symbolic link (to {}), expected a directory",
                    b.display(),
                    nowhere.display()
                );
                (b, want)
            }
        };
        let o = record(&tree, &out, &["-d", "10ms", "--host", "h1"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.starts_with("irqlab: error: cannot create ") && err.contains(&want),
            "{what}: {err}"
        );
        assert!(!err.contains("os error"), "{what}: {err}");
        assert!(
            bad.symlink_metadata().is_ok() && !nowhere.exists(),
            "{what}"
        );
    }
}

/// A recording's directory reached by `.` (a shell inside it) or by a
/// symlink (`latest`) is the directory it is: `replay` and `recover` read
/// it, and `record -o .` inside a `host=` directory is refused before
/// anything is written (a partition inside a partition, which `replay`
/// and `recover` of the dataset never read).
#[test]
fn a_recording_directory_reached_by_dot_or_a_symlink_is_that_directory() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let o = record(&tree, &out, &["-i", "10ms", "-d", "30ms", "--host", "h1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let boot = boot_dir(&out);
    std::os::unix::fs::symlink(&boot, d.path().join("latest")).unwrap();
    for (cwd, dir) in [(boot.as_path(), "."), (d.path(), "latest")] {
        let replay = irqlab()
            .current_dir(cwd)
            .args(["replay", dir, "--batch", "--format", "json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&replay.stderr);
        assert!(replay.status.success(), "replay {dir}: {err}");
        assert_eq!(replay.stdout.split(|&b| b == b'\n').count(), 4, "{err}");
        let recover = irqlab()
            .current_dir(cwd)
            .args(["recover", dir])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&recover.stderr);
        assert!(recover.status.success(), "recover {dir}: {err}");
        assert!(err.contains("nothing to recover"), "{err}");
    }
    let host = boot.parent().unwrap();
    let o = irqlab()
        .current_dir(host)
        .arg("record")
        .arg("--root")
        .arg(&tree)
        .args(["-d", "10ms", "-o", "."])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is a recording's own host=…/boot=… directory"),
        "{err}"
    );
    assert!(!host.join("host=h1").exists(), "nothing written");
}

/// The calls of an `strace -f -e trace=openat,fsync,fdatasync,rename,unlink,ftruncate`
/// log that would lose samples to a power loss: a `*.parquet.tmp` renamed
/// into place before its data was synced, or a file removed or the
/// journal truncated after such a rename before its directory was synced
/// (the segment, empty after the crash, and its samples nowhere else).
fn unsynced_steps(log: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let (mut tmp_open, mut tmp_synced, mut dir_pending) = (false, false, false);
    for l in log.lines() {
        let call = l.split_whitespace().nth(1).unwrap_or("");
        let tmp = l.contains(".parquet.tmp\"");
        if call.starts_with("openat(") && tmp && !l.contains("= -1") {
            (tmp_open, tmp_synced) = (true, false);
        } else if call.starts_with("fdatasync(") || call.starts_with("fsync(") {
            match tmp_open {
                true => tmp_synced = true,
                false => dir_pending = false,
            }
        } else if call.starts_with("rename") && tmp {
            if !tmp_synced {
                bad.push(format!("renamed before its data was synced: {l}"));
            }
            (tmp_open, dir_pending) = (false, true);
        } else if (call.starts_with("unlink") || call.starts_with("ftruncate(")) && dir_pending {
            bad.push(format!(
                "before the directory of a renamed segment was synced: {l}"
            ));
        }
    }
    bad
}

/// `irqlab ARGS` under strace (the calls [`unsynced_steps`] reads): its
/// log, or `None` when strace cannot trace here.
fn straced(dir: &Path, name: &str, args: &[&std::ffi::OsStr]) -> Option<String> {
    let log = dir.join(format!("{name}.strace"));
    let st = Command::new("strace")
        .args([
            "-f",
            "-e",
            "trace=openat,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,ftruncate",
            "-o",
        ])
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(args)
        .stderr(Stdio::null())
        .status()
        .ok()?;
    assert!(st.success(), "irqlab {args:?} under strace: {st}");
    std::fs::read_to_string(&log).ok()
}

/// A segment is durable before what it replaces goes: its data synced
/// before it is renamed into place, its directory after, before the
/// journal is truncated, a merged window's older file removed or (in
/// `recover`) the recovered journal removed. Otherwise a power loss or a
/// kernel panic soon after a segment closes can leave it empty with its
/// samples in no other file.
#[test]
fn segments_are_synced_before_the_journal_or_an_older_file_goes() {
    let d = tempfile::tempdir().unwrap();
    let usable = Command::new("strace")
        .args(["-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        visible!("segments_are_synced_before_the_journal_or_an_older_file_goes: SKIPPED: no usable strace");
        return;
    }
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let args: Vec<&std::ffi::OsStr> = vec![
        "record".as_ref(),
        "--root".as_ref(),
        tree.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "-i".as_ref(),
        "50ms".as_ref(),
        "-d".as_ref(),
        "500ms".as_ref(),
        "--segment".as_ref(),
        "100ms".as_ref(),
    ];
    let log = straced(d.path(), "record", &args).unwrap();
    assert!(
        log.lines()
            .filter(|l| l.contains(".parquet.tmp\", "))
            .count()
            >= 4,
        "segments merged and replaced:\n{log}"
    );
    let bad = unsynced_steps(&log);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let k = tempfile::tempdir().unwrap();
    let (_, killed) = killed_recording(k.path(), 300);
    let log = straced(
        d.path(),
        "recover",
        &["recover".as_ref(), killed.as_os_str()],
    )
    .unwrap();
    assert!(
        log.contains("journal.jsonl\""),
        "the journal removed:\n{log}"
    );
    let bad = unsynced_steps(&log);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A segment whose cells do not match its layout is refused naming the
/// file, never replayed with a counter read as 0: a cell of a source the
/// layout has not (a softirqs row read back as `stat`, as one flipped
/// bit in the `source` column's dictionary indices does), or a laid-out
/// cell that its first sample lacks. So is a journal line lacking one.
#[test]
fn cells_that_do_not_match_their_layout_are_refused_naming_the_file() {
    use irqlab::record::schema::SourceKind;
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    synth(&tree);
    let out = d.path().join("rec");
    let o = record(&tree, &out, &["-i", "10ms", "-d", "30ms"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = boot_dir(&out);
    let seg = layout::segments(&dir).unwrap().remove(0).2;
    let good = irqlab::record::segment::read(&seg).unwrap();
    let soft = |c: &irqlab::record::schema::CellValue| c.source == SourceKind::Softirqs;
    let renamed = {
        let mut data = good.clone();
        let cell = data.cells.iter_mut().find(|(_, c)| soft(c)).unwrap();
        cell.1.source = SourceKind::Stat;
        data
    };
    let dropped = {
        let mut data = good.clone();
        let i = data.cells.iter().position(|(_, c)| soft(c)).unwrap();
        data.cells.remove(i);
        data
    };
    for (data, says) in [
        (renamed, "which its layout has not"),
        (dropped, "but no sample lists its value"),
    ] {
        irqlab::record::segment::write(&seg, &mut data.into()).unwrap();
        let batch = common::replay_batch(&out, &["--format", "json"]);
        // the interactive view reads its first frame before the terminal
        let screen = irqlab().arg("replay").arg(&out).output().unwrap();
        for o in [batch, screen] {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(
                err.contains(&format!("{}: sample 0", seg.display())) && err.contains(says),
                "{err}"
            );
        }
    }
    // the journal of a killed run, its first line lacking a softirqs cell
    let k = tempfile::tempdir().unwrap();
    let (_, killed) = killed_recording(k.path(), 200);
    let journal = first_journal(&killed).unwrap();
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let cells = first["cells"].as_array_mut().unwrap();
    let i = cells
        .iter()
        .position(|c| c["source"] == "softirqs")
        .unwrap();
    cells.remove(i);
    lines[0] = first.to_string();
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let o = common::replay_batch(&killed, &["--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{}: sample 0", journal.display()))
            && err.contains("but no sample lists its value"),
        "{err}"
    );
}
