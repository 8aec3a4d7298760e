//! `irqlab probe` end to end: every output format on a synthesized tree,
//! probe JSON read back by `irqlab compare`, bad flags, and a live run on
//! this machine's /proc (skipped when it is not available).
#![allow(clippy::unwrap_used)]

mod common;
use common::{irqlab, spec, synth_into};
use predicates::str::contains;
use serde_json::Value;
use std::path::Path;
use tempfile::TempDir;

/// A 4-CPU x86 tree with 12 IRQs under `dir/tree`.
fn synth(dir: &TempDir) -> String {
    let root = dir.path().join("tree");
    synth_into(&spec(4, 12), &root);
    root.display().to_string()
}

fn probe(root: &str, args: &[&str]) -> assert_cmd::assert::Assert {
    irqlab()
        .args(["probe", "--root", root, "--reads", "5"])
        .args(args)
        .assert()
}

fn json_of(root: &str, args: &[&str]) -> Value {
    let out = probe(root, &[&["--format", "json"], args].concat()).success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn table_has_a_row_per_target_method_and_buffer() {
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    let out = probe(&root, &["--buffer", "128,4k"]).success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for target in [
        "/proc/interrupts",
        "/proc/softirqs",
        "/proc/stat",
        "/sys/kernel/irq/*/per_cpu_count",
        "/proc/irq/*/smp_affinity_list",
    ] {
        assert_eq!(text.matches(target).count(), 4, "{target} in\n{text}");
    }
    assert!(text.contains("4 CPUs"), "{text}");
    assert!(text.contains(" 128 ") && text.contains(" 4k "), "{text}");
}

#[test]
fn json_is_a_probe_result_set_with_every_read() {
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    let v = json_of(&root, &["--buffer", "4k"]);
    assert_eq!(v["kind"], "probe");
    assert_eq!(v["env"]["cpus"], 4);
    assert_eq!(v["env"]["reads"], 5);
    assert!(v["env"]["irq_descriptors"].as_u64().unwrap() >= 12);
    let results = v["results"].as_array().unwrap();
    // 5 targets × 2 methods × 1 buffer × (wall, cpu): one value each.
    assert_eq!(results.len(), 20);
    let wall = results
        .iter()
        .find(|r| r["metric"] == "proc_interrupts_pread_4k_wall_ns")
        .unwrap();
    assert_eq!(wall["unit"], "ns");
    assert_eq!(wall["direction"], "lower");
    assert_eq!(wall["values"].as_array().unwrap().len(), 1);
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "proc_interrupts_pread_4k")
        .unwrap();
    assert_eq!(wall["values"][0], row["wall_ns"]["p50"]);
    assert_eq!(row["per_read"]["wall_ns"].as_array().unwrap().len(), 5);
    assert_eq!(row["target"], "/proc/interrupts");
    let size = std::fs::metadata(Path::new(&root).join("proc/interrupts"))
        .unwrap()
        .len();
    assert_eq!(row["bytes_per_read"].as_f64().unwrap(), size as f64);
    // A fake file needs a data read and the final 0-byte read.
    assert_eq!(row["syscalls_per_read"].as_f64().unwrap(), 2.0);
}

#[test]
fn csv_has_a_header_and_a_line_per_row() {
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    let out = dir.path().join("probe.csv");
    probe(&root, &["--format", "csv", "--out", out.to_str().unwrap()])
        .success()
        .stdout("");
    let text = std::fs::read_to_string(out).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("target,method,buffer,files,reads,"));
    assert_eq!(lines.count(), 5 * 2 * 2);
    assert!(
        text.contains("\n/proc/softirqs,pread,65536,1,5,2,"),
        "{text}"
    );
}

#[test]
fn compare_reads_two_probe_runs() {
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    let mut files = Vec::new();
    for name in ["before", "after"] {
        let path = dir.path().join(format!("{name}.json"));
        irqlab()
            .args(["probe", "--root", &root, "--reads", "8", "--buffer", "4k"])
            .args(["--format", "json", "--out"])
            .arg(&path)
            .assert()
            .success();
        files.push(path);
    }
    irqlab()
        .arg("compare")
        .args(&files)
        .assert()
        .success()
        .stdout(contains("proc_interrupts_pread_4k_wall_ns"))
        .stdout(contains("proc_softirqs_open_4k_cpu_ns"));
}

#[test]
fn bad_flags_and_empty_roots_are_refused() {
    let dir = TempDir::new().unwrap();
    let root = dir.path().display().to_string();
    probe(&root, &["--buffer", "4x"])
        .code(2)
        .stderr(contains("unknown size unit"));
    for big in ["2G", "16G", "4k,257M"] {
        probe(&root, &["--buffer", big])
            .code(2)
            .stderr(contains("largest buffer, 256M (268435456 bytes)"));
    }
    for (list, item) in [("4k,,8k", "item 2"), ("4k,", "item 2"), (",4k", "item 1")] {
        probe(&root, &["--buffer", list])
            .code(2)
            .stderr(contains(format!("{item} of \"{list}\" is empty")));
    }
    probe(&root, &[])
        .code(1)
        .stderr(contains("none of the probe targets exist"));
    let tree = synth(&dir);
    for reads in ["0", "-1", "1000001", "many"] {
        irqlab()
            .args(["probe", "--root", &tree, &format!("--reads={reads}")])
            .assert()
            .code(2)
            .stderr(contains("--reads"));
    }
}

/// `--out NAME.json` or `NAME.csv` with another `--format` (the default
/// table included) is a usage error before anything is measured, and
/// writes no file: the format is never inferred from the name.
#[test]
fn out_extension_that_contradicts_format_is_refused() {
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    for (name, flags, says) in [
        (
            "a.json",
            &[][..],
            "the name says json but --format is table (the default)",
        ),
        (
            "b.json",
            &["--format", "csv"][..],
            "the name says json but --format is csv",
        ),
        (
            "c.CSV",
            &["--format", "json"][..],
            "the name says csv but --format is json",
        ),
        (
            "d.csv",
            &["--format", "table"][..],
            "the name says csv but --format is table",
        ),
    ] {
        let out = dir.path().join(name);
        probe(&root, &[flags, &["--out", out.to_str().unwrap()]].concat())
            .code(2)
            .stdout("")
            .stderr(contains(format!("--out {}: {says}", out.display())));
        assert!(!out.exists(), "{name}");
    }
    for (name, format) in [
        ("e.json", "json"),
        ("f.txt", "json"),
        ("g", "table"),
        ("h.csv", "csv"),
    ] {
        let out = dir.path().join(name);
        probe(&root, &["--format", format, "--out", out.to_str().unwrap()]).success();
        assert!(out.exists(), "{name}");
    }
}

/// A count that is not a whole number in range is told what is expected
/// (not "invalid digit found in string"), as `--reads -1` (a separate
/// word) is.
#[test]
fn counts_that_are_not_whole_numbers_say_what_is_expected() {
    let dir = TempDir::new().unwrap();
    let tree = synth(&dir);
    for (flag, value, range) in [
        ("--reads", "-1", "from 1 to 1000000"),
        ("--reads", "1e3", "from 1 to 1000000"),
        ("--reads", "0", "from 1 to 1000000"),
        ("--reads", "1.5", "from 1 to 1000000"),
        ("--reads", "1000001", "from 1 to 1000000"),
        ("--cpu", "-1", "from 0 to 4294967295"),
        ("--cpu", "1e3", "from 0 to 4294967295"),
    ] {
        let out = irqlab()
            .args(["probe", "--root", &tree, flag, value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(
            err.contains(&format!("invalid value '{value}' for '{flag} <"))
                && err.contains(&format!(
                    "expected a whole number {range}, found \"{value}\""
                )),
            "{flag} {value}: {err}"
        );
        assert!(!err.contains("invalid digit"), "{flag} {value}: {err}");
        assert!(out.stdout.is_empty(), "{flag} {value}");
    }
}

#[test]
fn live_proc_interrupts_costs_microseconds() {
    if std::fs::File::open("/proc/interrupts").is_err() {
        crate::visible!("skipping: /proc/interrupts is not readable on this machine");
        return;
    }
    let out = irqlab()
        .args([
            "probe", "--reads", "200", "--buffer", "4k", "--format", "json",
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "proc_interrupts_pread_4k")
        .unwrap();
    let p50 = row["wall_ns"]["p50"].as_f64().unwrap();
    assert!((5e3..5e6).contains(&p50), "p50 {p50} ns");
    // seq_file: at least one data read and the final 0-byte read.
    assert!(row["syscalls_per_read"].as_f64().unwrap() >= 2.0, "{row}");
    assert!(v["env"]["kernel"].is_string());
}

/// `--cpu N` for a CPU this process cannot run on is a usage error said
/// once, before anything is measured (was EINVAL twice, exit 1).
#[test]
fn cpu_that_is_not_online_is_a_clear_usage_error() {
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    let allowed: Vec<usize> = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map(|set| {
            (0..nix::sched::CpuSet::count())
                .filter(|&c| set.is_set(c).unwrap_or(false))
                .collect()
        })
        .unwrap();
    let absent = (0..4096).find(|c| !allowed.contains(c)).unwrap();
    let out = irqlab()
        .args(["probe", "--root", &root, "--reads", "5", "--cpu"])
        .arg(absent.to_string())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(&format!(
            "irqlab: error: --cpu {absent}: not an online CPU this process may run on"
        )),
        "{err}"
    );
    assert_eq!(err.matches("EINVAL").count(), 0, "{err}");
    assert!(out.stdout.is_empty());
    // an allowed CPU still pins and measures
    let ok = allowed[0].to_string();
    let v = json_of(&root, &["--cpu", &ok]);
    assert_eq!(v["env"]["pinned_cpu"], allowed[0], "{v}");
}

/// The inotify events (`IN_OPEN`, `IN_ACCESS`: a read that returned
/// bytes, `IN_CLOSE_NOWRITE`) on the tree's `proc/interrupts` during one
/// `probe --reads 1 --buffer <buffers>`, in order.
fn interrupts_events(root: &str, buffers: &str) -> Vec<u32> {
    use nix::libc;
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let path = std::ffi::CString::new(format!("{root}/proc/interrupts")).unwrap();
    // SAFETY: inotify_init1 takes flags only; the descriptor it returns is
    // owned by the File made from it
    #[allow(unsafe_code)]
    let mut fd = unsafe {
        let fd = libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK);
        assert!(fd >= 0, "{}", std::io::Error::last_os_error());
        std::fs::File::from_raw_fd(fd)
    };
    let mask = libc::IN_OPEN | libc::IN_ACCESS | libc::IN_CLOSE_NOWRITE;
    // SAFETY: a live descriptor and a NUL-terminated path
    #[allow(unsafe_code)]
    let wd = unsafe {
        use std::os::fd::AsRawFd;
        libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), mask)
    };
    assert!(wd >= 0, "{}", std::io::Error::last_os_error());
    irqlab()
        .args(["probe", "--root", root, "--reads", "1", "--buffer", buffers])
        .assert()
        .success();
    let mut events = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = fd.read(&mut buf) {
        // struct inotify_event: wd, mask, cookie, len (u32 each), name[len]
        let mut at = 0;
        while at + 16 <= n {
            let word = |k: usize| u32::from_ne_bytes(buf[at + k..at + k + 4].try_into().unwrap());
            events.push(word(4) & mask);
            at += 16 + word(12) as usize;
        }
    }
    events
}

/// Before its measured reads, probe reads `/proc/interrupts` once (the
/// CPU count of the environment): the discovery before it only opens the
/// file (is it there, a regular file). The start-up's opens are what is
/// left of a run once the measured reads of one buffer size are taken
/// away (each `--buffer` adds the same ones).
#[test]
fn proc_interrupts_is_read_once_before_the_measured_reads() {
    use nix::libc::{IN_ACCESS, IN_CLOSE_NOWRITE, IN_OPEN};
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    let one = interrupts_events(&root, "4k");
    let two = interrupts_events(&root, "4k,64k");
    let opens = |e: &[u32]| e.iter().filter(|&&m| m == IN_OPEN).count();
    let start = (2 * opens(&one)).checked_sub(opens(&two));
    assert_eq!(start, Some(2), "one buffer {one:x?}, two {two:x?}");
    assert_eq!(
        one[..5],
        [
            IN_OPEN,
            IN_CLOSE_NOWRITE,
            IN_OPEN,
            IN_ACCESS,
            IN_CLOSE_NOWRITE
        ],
        "found (no read), then read once: {one:x?}"
    );
}

/// A per-IRQ file that is not a regular file (a directory where IRQ 0's
/// per_cpu_count belongs) is left out of its family with a note naming
/// it; the others are still read.
#[test]
fn a_per_irq_file_that_is_not_regular_is_skipped_with_a_note() {
    let dir = TempDir::new().unwrap();
    let root = synth(&dir);
    let file = Path::new(&root).join("sys/kernel/irq/0/per_cpu_count");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let out = probe(&root, &["--buffer", "4k"]).success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let note = err
        .lines()
        .find(|l| l.contains(&*file.display().to_string()))
        .unwrap_or_else(|| panic!("no note naming {}: {err}", file.display()));
    assert!(
        note.starts_with("irqlab: note: ") && note.ends_with(", skipped"),
        "{note}"
    );
    let v = json_of(&root, &["--buffer", "4k"]);
    let text = v.to_string();
    assert!(text.contains("per_cpu_count"), "{text}");
}

/// JSON follows show's layout rule: one line on a pipe and in an `--out`
/// file, indented with `--pretty` (the same document); `--compact` or
/// `--pretty` with another format is a usage error.
#[test]
fn json_is_one_line_unless_pretty_and_layout_flags_need_json() {
    let tmp = TempDir::new().unwrap();
    let root = synth(&tmp);
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    let piped = probe(&root, &["--format", "json"]).success();
    let piped = piped.get_output().stdout.clone();
    assert_eq!(lines(&piped), 1);
    let pretty = probe(&root, &["--format", "json", "--pretty"]).success();
    let pretty = pretty.get_output().stdout.clone();
    assert!(lines(&pretty) > 10);
    let shape = |b: &[u8]| {
        let mut v: Value = serde_json::from_slice(b).unwrap();
        v["results"] = Value::Null;
        v["env"] = Value::Null;
        v.as_object().unwrap().keys().cloned().collect::<Vec<_>>()
    };
    assert_eq!(shape(&piped), shape(&pretty));
    let file = tmp.path().join("run.json");
    let f = file.to_str().unwrap();
    probe(&root, &["--format", "json", "--out", f]).success();
    assert_eq!(lines(&std::fs::read(&file).unwrap()), 1);
    probe(&root, &["--format", "json", "--out", f, "--pretty"]).success();
    assert!(lines(&std::fs::read(&file).unwrap()) > 10);
    for flag in ["--compact", "--pretty"] {
        probe(&root, &[flag]).code(2).stderr(contains(format!(
            "'{flag}' cannot be used with '--format table'"
        )));
    }
}
