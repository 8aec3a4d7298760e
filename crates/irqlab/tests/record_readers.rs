//! A recording read back by engines that are not irqlab: DuckDB and
//! pyarrow (through `tools/read-recording.py`) must get exactly the
//! counters of the snapshots that were recorded, at the times irqlab
//! recorded them, and read a two-host dataset as one table.
//!
//! The trees are fake and change only between recordings, so the expected
//! values are known exactly: host `h1` records snapshot A, host `h2`
//! snapshot B (A with LOC and NET_RX moved). Each engine that is installed
//! (tools/install-python-readers.sh) is checked; when neither is, the test
//! says so on the real stderr and skips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use irqlab_core::interrupts::Shape;
use irqlab_core::{Interrupts, Softirqs};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP record_readers: {why}");
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/read-recording.py")
}

fn engine_available(engine: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {engine}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The engines installed for python3; none: says so on the real stderr.
fn engines() -> Vec<&'static str> {
    let found: Vec<&str> = ["duckdb", "pyarrow"]
        .into_iter()
        .filter(|e| engine_available(e))
        .collect();
    if found.is_empty() {
        skip(
            "neither duckdb nor pyarrow is installed for python3 (tools/install-python-readers.sh)",
        );
    }
    found
}

/// `source|key|cpu` → value for every cell of the files under `root`.
fn expected(root: &Path) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    let ints = Interrupts::parse(common::read(root, "proc/interrupts").as_bytes()).unwrap();
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    for r in ints.rows() {
        let n = seen.entry(r.label.as_str()).or_insert(0);
        let key = if *n == 0 {
            r.label.to_string()
        } else {
            format!("{}#{n}", r.label)
        };
        *n += 1;
        match r.shape {
            Shape::PerCpu => {
                for (cpu, c) in ints.cpus.iter().zip(&r.counts) {
                    m.insert(format!("interrupts|{key}|{cpu}"), *c);
                }
            }
            Shape::Single => {
                m.insert(format!("interrupts|{key}|-"), r.counts[0]);
            }
            _ => {}
        }
    }
    let soft = Softirqs::parse(common::read(root, "proc/softirqs").as_bytes()).unwrap();
    for r in &soft.rows {
        for (cpu, c) in soft.cpus.iter().zip(&r.counts) {
            m.insert(format!("softirqs|{}|{cpu}", r.name), *c);
        }
    }
    m
}

/// Only the interrupts and softirqs cells of a reader's state.
fn counters(state: &Value) -> BTreeMap<String, u64> {
    state["values"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("interrupts|") || k.starts_with("softirqs|"))
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

/// 300 ms at 50 ms with 100-ms segments, `extra` flags.
fn record(tree: &Path, out: &Path, host: &str, extra: &[&str]) {
    let o = common::irqlab()
        .arg("record")
        .arg("--root")
        .arg(tree)
        .args(["-i", "50ms", "--duration", "300ms", "--segment", "100ms"])
        .args(extra)
        .args(["--host", host, "-o"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Move LOC on the first CPU and NET_RX on the last: snapshot B.
fn change(tree: &Path) {
    for (file, prefix) in [("proc/interrupts", "LOC:"), ("proc/softirqs", "NET_RX:")] {
        let text = common::read(tree, file);
        let out: Vec<String> = text
            .lines()
            .map(|l| match l.trim_start().strip_prefix(prefix) {
                Some(rest) => {
                    let mut w: Vec<String> = rest.split_whitespace().map(String::from).collect();
                    let i = if prefix == "LOC:" { 0 } else { w.len() - 1 };
                    let v: u64 = w[i].parse().unwrap();
                    w[i] = (v + 12345).to_string();
                    format!("{prefix} {}", w.join(" "))
                }
                None => l.to_string(),
            })
            .collect();
        std::fs::write(tree.join(file), out.join("\n") + "\n").unwrap();
    }
}

/// `mono_ns` of every line `irqlab replay --batch --format json` prints
/// for one host's boot directory (rates start at the second sample).
fn replay_monos(out: &Path, host: &str) -> Vec<u64> {
    let host_dir = out.join(format!("host={host}"));
    let boot = std::fs::read_dir(&host_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let o = common::replay_batch(&boot, &["--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["mono_ns"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

fn read_back(out: &Path, engine: &str) -> Vec<Value> {
    let o = Command::new("python3")
        .arg(script())
        .arg(out)
        .args(["--engine", engine])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{engine}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn duckdb_and_pyarrow_read_back_exactly_what_was_recorded() {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let tree = common::synth_tree(&common::spec(4, 8));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("dataset");
    let a = expected(tree.path());
    // h1: a file per segment; h2: its segments merged into one file, plus
    // the file that one replaced, as a crash between the two leaves it
    record(tree.path(), &out, "h1", &["--merge", "0"]);
    change(tree.path());
    let b = expected(tree.path());
    assert_ne!(a, b, "the change must move counters");
    record(tree.path(), &out, "h2", &[]);
    let h2 = irqlab::record::layout::one_boot_dir(&out.join("host=h2")).unwrap();
    let segs = irqlab::record::layout::segments(&h2).unwrap();
    assert_eq!(segs.len(), 1, "merged: {segs:?}");
    let (first, last, merged) = &segs[0];
    let old = h2.join(irqlab::record::layout::segment_name(*first, last - 1));
    std::fs::copy(merged, old).unwrap();
    let h1 = irqlab::record::layout::one_boot_dir(&out.join("host=h1")).unwrap();
    assert!(irqlab::record::layout::segments(&h1).unwrap().len() >= 2);

    let mut results = Vec::new();
    for engine in &engines {
        let states = read_back(&out, engine);
        for host in ["h1", "h2"] {
            let want = if host == "h1" { &a } else { &b };
            let mine: Vec<&Value> = states.iter().filter(|s| s["host"] == host).collect();
            assert!(mine.len() >= 3, "{engine}: {host}: {} samples", mine.len());
            for s in &mine {
                assert_eq!(&counters(s), want, "{engine}: {host} seq {}", s["seq"]);
            }
            let seqs: Vec<u64> = mine.iter().map(|s| s["seq"].as_u64().unwrap()).collect();
            assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
            let monos: Vec<u64> = mine
                .iter()
                .map(|s| s["mono_ns"].as_u64().unwrap())
                .collect();
            assert!(monos.windows(2).all(|w| w[0] < w[1]), "{monos:?}");
            assert_eq!(
                replay_monos(&out, host),
                monos[1..],
                "{engine}: {host}: the times replay uses"
            );
        }
        results.push(states);
    }
    if let [x, y] = results.as_slice() {
        assert_eq!(x, y, "duckdb and pyarrow disagree");
    }
    // Schema-1 and schema-2 recordings (tests/fixtures/recording-schema1,
    // -schema2: nanosecond times) still read.
    for fixture in ["recording-schema1", "recording-schema2"] {
        let old = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fixture);
        for engine in &engines {
            let states = read_back(&old, engine);
            assert_eq!(states.len(), 4, "{engine} {fixture}");
            for s in &states {
                assert_eq!(
                    s["values"]["interrupts|LOC|1"], 1_848_652_868u64,
                    "{engine} {fixture}"
                );
            }
        }
    }
}

/// The reader outside irqlab keeps to irqlab's rule for superseded files:
/// a copy of a segment under a wider name (the `cp part-…12-23
/// part-…05-99` of the fault report) supersedes nothing, and every sample
/// is read once; a counter at or above 2^63 reads back exactly.
#[test]
fn python_reader_supersedes_nothing_by_name_alone() {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let tree = common::synth_tree(&common::spec(2, 4));
    // ctxt far above 2^63 (a broken or hostile tree)
    let stat = tree.path().join("proc/stat");
    let text = std::fs::read_to_string(&stat).unwrap();
    let text: String = text
        .lines()
        .map(|l| match l.starts_with("ctxt ") {
            true => "ctxt 18446744073709551610\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&stat, text).unwrap();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("dataset");
    let o = common::irqlab()
        .arg("record")
        .arg("--root")
        .arg(tree.path())
        .args([
            "-i",
            "50ms",
            "-d",
            "700ms",
            "--segment",
            "100ms",
            "--merge",
            "0",
        ])
        .args(["--host", "h", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = irqlab::record::layout::one_boot_dir(&out).unwrap();
    let segs = irqlab::record::layout::segments(&dir).unwrap();
    assert!(segs.len() >= 3, "{segs:?}");
    let n = irqlab::record::reader::open(&dir).unwrap().steps.len();
    let wide = dir.join(irqlab::record::layout::segment_name(
        segs[0].0 + 1,
        segs.last().unwrap().1 + 69,
    ));
    std::fs::copy(&segs[1].2, wide).unwrap();
    for engine in &engines {
        let states = read_back(&out, engine);
        let seqs: Vec<u64> = states.iter().map(|s| s["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, (0..n as u64).collect::<Vec<_>>(), "{engine}");
        for s in &states {
            assert_eq!(
                s["values"]["stat|ctxt|-"].as_u64(),
                Some(18446744073709551610),
                "{engine}"
            );
        }
    }
}

/// `tools/read-recording.py DIR --engine ENGINE` and `extra` flags: its
/// exit code, stdout and stderr.
fn run_reader(out: &Path, engine: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new("python3")
        .arg(script())
        .arg(out)
        .args(["--engine", engine])
        .args(extra)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The `rows` of `--summary`'s last line: the rows the reader read.
fn rows_read(summary: &str) -> u64 {
    let last: Value = serde_json::from_str(summary.lines().last().unwrap()).unwrap();
    last["rows"].as_u64().unwrap()
}

/// A segment of another recording of the same boot copied into a
/// recording's boot directory holds samples numbered as the recording's
/// (every recording numbers from 0) but taken at other times. The reader
/// outside irqlab does not take it for one of the recording's files:
/// named inside the recording's file's range, whose footer lists its
/// samples, it is not superseded by footers alone; under a name outside
/// every range, its samples are not printed once as if they were the
/// recording's. Both ways it exits 1 naming both files and the sample, as
/// `irqlab replay` refuses the directory, with either engine.
#[test]
fn python_reader_refuses_a_segment_of_another_recording_naming_both_files() {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let tree = common::synth_tree(&common::spec(2, 4));
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    // a: one merged file; b: a file per segment, of the same tree (so of
    // the same boot directory name), recorded later
    record(tree.path(), &a, "h", &[]);
    record(tree.path(), &b, "h", &["--merge", "0"]);
    let da = irqlab::record::layout::one_boot_dir(&a).unwrap();
    let db = irqlab::record::layout::one_boot_dir(&b).unwrap();
    assert_eq!(da.strip_prefix(&a).unwrap(), db.strip_prefix(&b).unwrap());
    let ours = irqlab::record::layout::segments(&da).unwrap();
    assert_eq!(ours.len(), 1, "merged: {ours:?}");
    let (first, last, ours) = ours[0].clone();
    let theirs = irqlab::record::layout::segments(&db).unwrap();
    assert!(theirs.len() >= 2, "{theirs:?}");
    let (tf, tl, theirs) = theirs[0].clone();
    assert!(first <= tf && tl < last, "{tf}-{tl} inside {first}-{last}");
    let names_both = |err: &str, copied: &Path, engine: &str| {
        for p in [copied, ours.as_path()] {
            assert!(
                err.contains(&p.display().to_string()),
                "{engine}: {} not named: {err}",
                p.display()
            );
        }
        assert!(err.contains(&format!("sample {tf} ")), "{engine}: {err}");
        assert!(err.contains("two recordings"), "{engine}: {err}");
    };
    for name in [
        irqlab::record::layout::segment_name(tf, tl),
        irqlab::record::layout::segment_name(last + 100, last + 100 + tl - tf),
    ] {
        let copied = da.join(&name);
        std::fs::copy(&theirs, &copied).unwrap();
        for engine in &engines {
            let (code, out, err) = run_reader(&a, engine, &[]);
            assert_eq!(code, Some(1), "{engine} {name}: {err}");
            assert!(out.is_empty(), "{engine} {name}: {out}");
            names_both(&err, &copied, engine);
        }
        std::fs::remove_file(&copied).unwrap();
    }
}

/// A window's file left beside the merged file that replaced it (a crash
/// between the two: the same samples, so the same clock readings) is
/// still skipped by the reader outside irqlab without a word, as irqlab
/// skips it: the output is the recording's without it, and the rows
/// read are the merged file's alone, with either engine.
#[test]
fn python_reader_drops_a_superseded_segment_with_the_same_clocks_silently() {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let tree = common::synth_tree(&common::spec(2, 4));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("dataset");
    record(tree.path(), &out, "h", &[]);
    let dir = irqlab::record::layout::one_boot_dir(&out).unwrap();
    let segs = irqlab::record::layout::segments(&dir).unwrap();
    assert_eq!(segs.len(), 1, "merged: {segs:?}");
    let (first, last, merged) = segs[0].clone();
    assert!(last >= first + 2, "{first}-{last}");
    let alone: Vec<(String, String)> = engines
        .iter()
        .map(|e| {
            let (code, states, err) = run_reader(&out, e, &[]);
            assert_eq!(code, Some(0), "{e}: {err}");
            let (code, summary, err) = run_reader(&out, e, &["--summary"]);
            assert_eq!(code, Some(0), "{e}: {err}");
            (states, summary)
        })
        .collect();
    // the window's file as it was before its last samples were merged in:
    // the merged file's first samples, cells and shapes
    let mut data = irqlab::record::segment::read(&merged).unwrap();
    let keep = first + 1;
    data.samples.retain(|t| t.seq <= keep);
    data.cells.retain(|(seq, _)| *seq <= keep);
    data.shapes.retain(|s| s.seq <= keep);
    let old = dir.join(irqlab::record::layout::segment_name(first, keep));
    irqlab::record::segment::write(&old, &mut data.into()).unwrap();
    let listing = irqlab::record::layout::list(&dir).unwrap();
    assert_eq!(listing.superseded.len(), 1, "irqlab: {listing:?}");
    assert_eq!(listing.superseded[0].0, old);
    for (engine, (states, summary)) in engines.iter().zip(&alone) {
        let (code, now, err) = run_reader(&out, engine, &[]);
        assert_eq!(code, Some(0), "{engine}: {err}");
        assert!(err.is_empty(), "{engine}: {err}");
        assert_eq!(&now, states, "{engine}");
        assert!(now.lines().count() as u64 > keep - first, "{engine}: {now}");
        let (code, now, err) = run_reader(&out, engine, &["--summary"]);
        assert_eq!((code, err.as_str()), (Some(0), ""), "{engine}");
        assert_eq!(rows_read(&now), rows_read(summary), "{engine}: {now}");
    }
}

/// A stdout closed before anything is read (`| head`) ends the reader
/// quietly, exit 0, no traceback, with each engine.
#[test]
fn python_reader_ends_quietly_on_a_closed_stdout() {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let tree = common::synth_tree(&common::spec(2, 4));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("dataset");
    record(tree.path(), &out, "h", &[]);
    for engine in engines {
        let mut child = Command::new("python3")
            .arg(script())
            .arg(&out)
            .args(["--engine", engine])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{engine}: {err}");
        assert!(err.is_empty(), "{engine}: {err}");
    }
}

/// Two `record` runs in one boot directory read back as runs 1 and 2,
/// the samples `irqlab replay` gives each run (its stderr names their
/// seqs), so that a reader outside irqlab does not take the time between
/// the runs for an interval; the schema-1 fixture, made before runs were
/// marked, reads as run 1 throughout.
#[test]
fn python_reader_numbers_the_record_runs_as_replay_does() {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let tree = common::synth_tree(&common::spec(2, 4));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("dataset");
    record(tree.path(), &out, "h", &[]);
    record(tree.path(), &out, "h", &["--irq", "LOC"]);
    let dir = irqlab::record::layout::one_boot_dir(&out.join("host=h")).unwrap();
    let steps = irqlab::record::reader::open(&dir).unwrap().steps;
    let want: Vec<(u64, u64)> = irqlab::record::reader::runs(&steps)
        .into_iter()
        .enumerate()
        .flat_map(|(i, r)| r.map(move |_| i as u64 + 1))
        .zip(steps.iter().map(|s| s.time.seq))
        .map(|(run, seq)| (seq, run))
        .collect();
    assert_eq!(want.last().map(|w| w.1), Some(2), "{want:?}");
    for engine in &engines {
        let got: Vec<(u64, u64)> = read_back(&out, engine)
            .iter()
            .map(|s| (s["seq"].as_u64().unwrap(), s["run"].as_u64().unwrap()))
            .collect();
        assert_eq!(got, want, "{engine}");
    }
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recording-schema1");
    for engine in &engines {
        assert!(
            read_back(&old, engine).iter().all(|s| s["run"] == 1),
            "{engine}"
        );
    }
}

/// `tools/fleet-dataset.py` makes a small fleet (hosts of 2 to 24 CPUs,
/// their own IRQ numbering, 2 synthetic hours each) and runs the fleet
/// queries of docs/recording-schema.md with DuckDB, as written there:
/// "top 10 devices by interrupt rate per host" (joined by device name
/// through the IRQ identity table) and "hosts where NET_RX doubled
/// between two hours" must give what the generator put in.
#[test]
fn fleet_queries_from_the_docs_answer_what_the_generator_put_in() {
    if !engine_available("duckdb") {
        skip("duckdb is not installed (tools/install-python-readers.sh)");
        return;
    }
    let mut d = tempfile::tempdir().unwrap();
    let mut text = fleet_dataset(d.path());
    if !text.contains("0 wrong") {
        // the generator's movers are Python threads keeping real time (a
        // synthetic hour is a second): starved on a loaded machine, they
        // put in less than the truth says
        crate::visible!(
            "record_readers: one fleet run disagreed with its truth, run again:\n{text}"
        );
        d = tempfile::tempdir().unwrap();
        text = fleet_dataset(d.path());
    }
    assert!(text.contains("4 hosts checked, 0 wrong"), "{text}");
    // the identity table is plain Parquet beside the counters
    let boots: Vec<PathBuf> = std::fs::read_dir(d.path().join("fleet/host=host001"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(boots.len(), 1);
    let name = boots[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("boot=tree-"), "{name}");
}

/// `tools/fleet-dataset.py` (4 hosts, 2 synthetic hours a second each,
/// `--check`) into `dir/fleet`: its output, after it exited 0.
fn fleet_dataset(dir: &Path) -> String {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/fleet-dataset.py");
    let o = Command::new("python3")
        .arg(tool)
        .arg(dir.join("fleet"))
        .args([
            "--hosts",
            "4",
            "--hours",
            "2",
            "--scale",
            "3600",
            "--interval",
            "30s",
        ])
        .args(["--cpus", "2,24,4,8", "--check", "--irqlab"])
        .arg(assert_cmd::cargo::cargo_bin("irqlab"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // a wrong answer exits 1 (told by the text); anything else must not fail
    assert!(o.status.success() || text.contains(" wrong"), "{text}");
    text
}
