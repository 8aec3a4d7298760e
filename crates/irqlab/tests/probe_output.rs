//! `irqlab probe` output guarantees: CPU (system) time never above wall
//! time and from one stated clock, CSV without float noise, probe's own
//! `--help`; a run is one trial for `compare`, so an A/A comparison claims
//! no change; `--out` is written whole or not at all and errors name the
//! file; wording.

#![allow(clippy::unwrap_used)]

mod common;
use common::{irqlab, spec, synth_into};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A 4-CPU x86 tree with 12 IRQs under `dir/tree`.
fn synth(dir: &Path) -> String {
    let root = dir.join("tree");
    synth_into(&spec(4, 12), &root);
    root.display().to_string()
}

fn probe_json(root: &str, reads: &str) -> Value {
    let out = irqlab()
        .args([
            "probe", "--root", root, "--reads", reads, "--format", "json",
        ])
        .output()
        .unwrap();
    common::stdout_json(&out)
}

#[test]
fn cpu_time_never_exceeds_wall_time_and_names_one_clock() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path());
    let v = probe_json(&root, "50");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 20);
    for row in rows {
        assert_eq!(row["cpu_clock"], "CLOCK_THREAD_CPUTIME_ID", "{row}");
        assert!(
            row.get("sys_source").is_none(),
            "one source, no per-row choice"
        );
        let wall = row["per_read"]["wall_ns"].as_array().unwrap();
        let cpu = row["per_read"]["cpu_ns"].as_array().unwrap();
        for (w, c) in wall.iter().zip(cpu) {
            assert!(c.as_f64().unwrap() <= w.as_f64().unwrap(), "{row}");
        }
        for q in ["min", "p50", "p90", "p99", "max"] {
            let (w, c) = (
                row["wall_ns"][q].as_f64().unwrap(),
                row["cpu_ns"][q].as_f64().unwrap(),
            );
            assert!(c <= w, "{q}: cpu {c} > wall {w}");
            assert!(c > 0.0, "{q}: a read takes CPU time, never 0.0");
            assert_eq!(w, w.round(), "whole ns");
        }
        let ru = row["rusage_sys_per_read_ns"].as_f64().unwrap();
        assert!(
            ru >= 0.0 && ru <= row["wall_ns"]["max"].as_f64().unwrap() * 2.0,
            "{row}"
        );
    }
}

#[test]
fn csv_has_no_float_noise_and_states_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path());
    let out = irqlab()
        .args(["probe", "--root", &root, "--reads", "7", "--format", "csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    let clock = header.iter().position(|h| h == "cpu_clock").unwrap();
    let mut n = 0;
    for rec in rd.records() {
        let rec = rec.unwrap();
        assert_eq!(&rec[clock], "CLOCK_THREAD_CPUTIME_ID");
        for (h, cell) in header.iter().zip(rec.iter()) {
            if let Some((_, decimals)) = cell.split_once('.') {
                if cell.parse::<f64>().is_ok() {
                    assert!(decimals.len() <= 3, "{h} = {cell}");
                }
            }
            if h.ends_with("_ns") && h != "rusage_sys_per_read_ns" {
                assert!(!cell.contains('.'), "{h} = {cell}: whole ns");
            }
        }
        n += 1;
    }
    assert_eq!(n, 20);
}

#[test]
fn probe_help_is_its_own() {
    let out = irqlab().args(["probe", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("A probe run is one trial"), "{help}");
    assert!(help.contains("times in whole ns"), "{help}");
    assert!(
        !help.contains("(section, row, CPU)"),
        "show's CSV text: {help}"
    );
    assert!(!help.contains("see README for the contract"), "{help}");
}

#[test]
fn a_probe_run_is_one_trial_and_a_a_claims_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path());
    let mut files: Vec<PathBuf> = Vec::new();
    for name in ["aa1", "aa2"] {
        let path = dir.path().join(format!("{name}.json"));
        irqlab()
            .args(["probe", "--root", &root, "--reads", "30", "--buffer", "4k"])
            .args(["--format", "json", "--out"])
            .arg(&path)
            .assert()
            .success();
        let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["version"], 3);
        let trial = &v["trial"];
        assert_eq!(trial["trial"], 1);
        let wall = &trial["metrics"]["proc_interrupts_pread_4k_wall_ns"];
        assert_eq!(wall["unit"], "ns");
        assert_eq!(wall["direction"], "lower");
        for r in v["results"].as_array().unwrap() {
            assert_eq!(r["values"].as_array().unwrap().len(), 1, "{r}");
        }
        files.push(path);
    }
    let out = irqlab().arg("compare").args(&files).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("proc_interrupts_pread_4k_wall_ns"), "{text}");
    for claim in ["improved", "regressed"] {
        assert!(
            !text.contains(claim),
            "A/A must not claim a change:\n{text}"
        );
    }
}

#[test]
fn out_is_written_whole_and_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path());
    // A directory where the file belongs.
    let out_dir = dir.path().join("results");
    std::fs::create_dir(&out_dir).unwrap();
    irqlab()
        .args(["probe", "--root", &root, "--reads", "2", "--out"])
        .arg(&out_dir)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!(
            "irqlab: error: writing {}: is a directory",
            out_dir.display()
        )));
    // A parent that does not exist: named, nothing created.
    let missing = dir.path().join("no/such/x.json");
    irqlab()
        .args([
            "probe", "--root", &root, "--reads", "2", "--format", "json", "--out",
        ])
        .arg(&missing)
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!(
            "irqlab: error: writing {}",
            missing.display()
        )));
    // Success leaves exactly the file, no temporary beside it.
    let good = out_dir.join("p.csv");
    irqlab()
        .args([
            "probe", "--root", &root, "--reads", "2", "--format", "csv", "--out",
        ])
        .arg(&good)
        .assert()
        .success();
    let names: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["p.csv"]);
}

#[test]
fn notes_and_wording_are_prefixed_and_singular() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path());
    std::fs::remove_file(Path::new(&root).join("proc/stat")).unwrap();
    std::fs::remove_file(Path::new(&root).join("proc/softirqs")).unwrap();
    std::fs::create_dir(Path::new(&root).join("proc/softirqs")).unwrap();
    let out = irqlab()
        .args(["probe", "--root", &root, "--reads", "1", "--buffer", "4k"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    // the notes name the files under --root, as read
    let stat = Path::new(&root).join("proc/stat");
    assert!(
        err.contains(&format!(
            "irqlab: note: {} not found, skipped",
            stat.display()
        )),
        "{err}"
    );
    let softirqs = Path::new(&root).join("proc/softirqs");
    assert!(
        err.contains(&format!(
            "irqlab: note: {} is a directory, expected a regular file",
            softirqs.display()
        )),
        "{err}"
    );
    for line in err.lines() {
        assert!(line.starts_with("irqlab: "), "{line}");
    }
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("over 1 read per row"), "{table}");
    assert!(table.contains("4 CPUs"), "{table}");
}

/// `compare` of probe runs: `<metric>_p99` holds each run's real p99 (from
/// the results' `summary`, and from `rows[]` in a version 2 file), never
/// the 0.99 quantile of the run's single median.
#[test]
fn compare_of_probe_runs_carries_each_runs_real_p99() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path());
    let mut specs = Vec::new();
    let mut want_p99 = Vec::new();
    let mut want_p50 = Vec::new();
    for (i, label) in ["old", "old", "new", "new"].iter().enumerate() {
        let path = dir.path().join(format!("r{i}.json"));
        irqlab()
            .args(["probe", "--root", &root, "--reads", "40", "--buffer", "4k"])
            .args(["--format", "json", "--out"])
            .arg(&path)
            .assert()
            .success();
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let r = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == "proc_interrupts_open_4k_wall_ns")
            .unwrap()
            .clone();
        // Make the p99 unmistakable from the median.
        let p99 = r["summary"]["p50"].as_f64().unwrap() * 10.0 + i as f64;
        if i == 3 {
            // A version 2 file: no summary; its p99 is in rows[].
            v["version"] = 2.into();
            for r in v["results"].as_array_mut().unwrap() {
                r.as_object_mut().unwrap().remove("summary");
            }
            for row in v["rows"].as_array_mut().unwrap() {
                if row["metric"] == "proc_interrupts_open_4k" {
                    row["wall_ns"]["p99"] = p99.into();
                }
            }
        } else {
            for r in v["results"].as_array_mut().unwrap() {
                if r["metric"] == "proc_interrupts_open_4k_wall_ns" {
                    r["summary"]["p99"] = p99.into();
                }
            }
        }
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
        want_p99.push(p99);
        want_p50.push(r["values"][0].as_f64().unwrap());
        specs.push(format!("{label}={}", path.display()));
    }
    let out = irqlab()
        .arg("compare")
        .args(&specs)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v = common::stdout_json(&out);
    let metric = |name: &str| {
        v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {v}"))
            .clone()
    };
    let p99 = metric("proc_interrupts_open_4k_wall_ns_p99");
    let got: Vec<f64> = ["old", "new"]
        .iter()
        .flat_map(|l| p99["values"][l].as_array().unwrap().clone())
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(got, want_p99, "{p99}");
    let p50 = metric("proc_interrupts_open_4k_wall_ns");
    let got: Vec<f64> = ["old", "new"]
        .iter()
        .flat_map(|l| p50["values"][l].as_array().unwrap().clone())
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(got, want_p50, "{p50}");
}

/// An `--out` that cannot be written (a directory, a missing directory,
/// a file where its directory belongs) is refused before the probe reads
/// anything: the error alone on stderr, not after a whole measurement
/// (the notes of the targets it reads come first then), and no file.
#[test]
fn an_out_that_cannot_be_written_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let root = synth(dir.path());
    // probe notes this when it looks for its targets
    std::fs::remove_file(Path::new(&root).join("proc/stat")).unwrap();
    let out_dir = dir.path().join("results");
    std::fs::create_dir(&out_dir).unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    for (out, says) in [
        (
            out_dir.clone(),
            "is a directory, expected a file".to_string(),
        ),
        (
            dir.path().join("no/such/x.json"),
            format!(
                "cannot create a file in {}",
                dir.path().join("no/such").display()
            ),
        ),
        (file.join("x.json"), "Not a directory".to_string()),
    ] {
        let got = irqlab()
            .args([
                "probe", "--root", &root, "--reads", "2", "--format", "json", "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8(got.stderr).unwrap();
        assert_eq!(got.status.code(), Some(1), "{err}");
        assert!(got.stdout.is_empty());
        assert!(
            err.starts_with(&format!("irqlab: error: writing {}: {says}", out.display())),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0);
}
