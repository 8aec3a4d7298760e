//! `irqlab synth` end to end: huge trees parse back with the expected shape,
//! arm64 E4 output, and the refused parameter sets.

#![allow(clippy::unwrap_used)]

use irqlab_core::Interrupts;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use std::path::Path;

mod common;
use common::read;

fn synth(out: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    common::irqlab()
        .arg("synth")
        .args(args)
        .arg("--out")
        .arg(out)
        .assert()
}

fn parse_interrupts(root: &Path) -> Interrupts {
    Interrupts::parse(read(root, "proc/interrupts").as_bytes()).expect("parses")
}

fn numbered(m: &Interrupts) -> Vec<u32> {
    m.rows().iter().filter_map(|r| r.irq).collect()
}

#[test]
fn server_488_cpus_nr_irqs_8360() {
    let dir = tempfile::tempdir().expect("tempdir");
    synth(
        dir.path(),
        &["--ncpus", "488", "--irqs", "1000", "--nr-irqs", "8360"],
    )
    .success()
    .stderr(contains("irqlab synth: wrote").and(contains("bytes")));
    let m = parse_interrupts(dir.path());
    assert_eq!(m.cpus, (0..488).collect::<Vec<_>>());
    let irqs = numbered(&m);
    assert_eq!(irqs.len(), 1000);
    assert!(irqs.iter().all(|&n| n < 8360));
    // prec 4 for nr_irqs 8360 (E3): 12 spaces before CPU0.
    assert!(read(dir.path(), "proc/interrupts").starts_with("            CPU0 "));
    let first = irqs[0];
    let counts = read(dir.path(), &format!("sys/kernel/irq/{first}/per_cpu_count"));
    assert_eq!(counts.trim_end().split(',').count(), 488);
    for f in ["chip_name", "hwirq", "type", "wakeup", "name", "actions"] {
        assert!(
            dir.path()
                .join(format!("sys/kernel/irq/{first}/{f}"))
                .exists(),
            "{f}"
        );
    }
    for f in [
        "smp_affinity_list",
        "effective_affinity_list",
        "node",
        "smp_affinity",
    ] {
        assert!(
            dir.path().join(format!("proc/irq/{first}/{f}")).exists(),
            "{f}"
        );
    }
    let stat = read(dir.path(), "proc/stat");
    let intr = stat
        .lines()
        .find(|l| l.starts_with("intr "))
        .expect("intr line");
    assert_eq!(intr.split(' ').count(), 2 + 8360);
    assert_eq!(stat.lines().filter(|l| l.starts_with("cpu")).count(), 489);
    let softirqs = read(dir.path(), "proc/softirqs");
    assert_eq!(softirqs.lines().count(), 11);
}

#[test]
fn huge_1152_cpus_1056_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    synth(
        dir.path(),
        &[
            "--ncpus",
            "1152",
            "--irqs",
            "1056",
            "--nr-irqs",
            "1160",
            "--seed",
            "7",
        ],
    )
    .success();
    let m = parse_interrupts(dir.path());
    assert_eq!(m.cpus.len(), 1152);
    assert_eq!(numbered(&m).len(), 1056);
    assert!(m
        .rows()
        .iter()
        .all(|r| r.irq.is_none() || r.counts.len() == 1152));
}

#[test]
fn arm64_e4_with_offline_cpus() {
    let dir = tempfile::tempdir().expect("tempdir");
    synth(
        dir.path(),
        &[
            "--ncpus",
            "16",
            "--irqs",
            "60",
            "--arch",
            "arm64",
            "--era",
            "e4",
            "--offline",
            "3,7-9",
            "--seed",
            "3",
        ],
    )
    .success();
    let m = parse_interrupts(dir.path());
    assert_eq!(m.cpus, vec![0, 1, 2, 4, 5, 6, 10, 11, 12, 13, 14, 15]);
    assert_eq!(numbered(&m).len(), 60);
    let text = read(dir.path(), "proc/interrupts");
    assert!(text.lines().any(|l| l.starts_with("IPI0: ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with(" Err:")), "{text}");
    assert!(m
        .rows()
        .iter()
        .any(|r| r.parts.chip == "GICv3" && r.parts.trigger == "Level"));
    // softirqs list possible CPUs, /proc/stat only online ones.
    assert!(read(dir.path(), "proc/softirqs").contains("CPU3 "));
    assert!(!read(dir.path(), "proc/stat").contains("\ncpu3 "));
}

#[test]
fn same_seed_same_tree() {
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    let args = [
        "--ncpus", "8", "--irqs", "30", "--arch", "s390", "--seed", "11",
    ];
    synth(a.path(), &args).success();
    synth(b.path(), &args).success();
    assert_eq!(
        read(a.path(), "proc/interrupts"),
        read(b.path(), "proc/interrupts")
    );
    assert_eq!(read(a.path(), "proc/stat"), read(b.path(), "proc/stat"));
}

/// A value no tree can have is a usage error (exit 2), like a value clap
/// refuses itself; nothing is written.
#[test]
fn refuses_bad_parameters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&[&str], &str); 11] = [
        (
            &["--ncpus", "4", "--irqs", "100", "--nr-irqs", "50"],
            "--irqs 100 is larger than --nr-irqs 50",
        ),
        (
            &["--ncpus", "4", "--irqs", "10", "--offline", "4"],
            "offline CPU 4 is outside",
        ),
        (
            &["--ncpus", "0", "--irqs", "10"],
            "expected a whole number from 1 to 8192, found \"0\"",
        ),
        (
            &["--ncpus", "99999999999", "--irqs", "1"],
            "expected a whole number from 1 to 8192",
        ),
        // negative: told the range, not taken for an unknown flag
        (
            &["--ncpus", "-1", "--irqs", "10"],
            "expected a whole number from 1 to 8192, found \"-1\"",
        ),
        (
            &["--ncpus", "2", "--irqs", "-3"],
            "expected a whole number from 0 to 1048576, found \"-3\"",
        ),
        (
            &["--ncpus", "2", "--irqs", "3", "--nr-irqs", "-424"],
            "expected a whole number from 1 to 1048576, found \"-424\"",
        ),
        (
            &["--ncpus", "2", "--irqs", "3", "--seed", "-1"],
            "expected a whole number from 0 to 18446744073709551615, found \"-1\"",
        ),
        (
            &["--ncpus", "2", "--irqs", "10", "--offline", "0-1"],
            "online",
        ),
        (&["--ncpus", "2", "--irqs", "10", "--arch", "vax"], "x86"),
        (
            &["--ncpus", "2", "--irqs", "10", "--offline", "x"],
            "--offline",
        ),
    ];
    for (args, needle) in cases {
        synth(dir.path(), args)
            .code(2)
            .stderr(contains("irqlab: error:"))
            .stderr(contains(needle));
    }
    assert!(!dir.path().join("proc/interrupts").exists());
}

#[test]
fn test_helper_tree_equals_cli_tree() {
    // tests/common's in-process tree is the one `irqlab synth` writes.
    let cli = tempfile::tempdir().expect("tempdir");
    synth(
        cli.path(),
        &["--ncpus", "6", "--irqs", "20", "--offline", "5"],
    )
    .success();
    let mut spec = common::spec(6, 20);
    spec.offline = vec![5];
    let helper = common::synth_tree(&spec);
    let files = spec.build().expect("valid spec").files();
    assert!(files.len() > 20);
    for (rel, _) in &files {
        assert_eq!(read(cli.path(), rel), read(helper.path(), rel), "{rel}");
    }
}

/// One CPU, one IRQ: singular nouns ("1 CPU", "1 IRQ"), and an alias of
/// an architecture name still accepted beside the completed names.
#[test]
fn summary_says_1_cpu_and_1_irq() {
    let dir = tempfile::tempdir().expect("tempdir");
    synth(
        dir.path(),
        &["--ncpus", "1", "--irqs", "1", "--arch", "x86_64"],
    )
    .success()
    .stderr(contains("(1 CPU, 1 online, 1 IRQ, nr_irqs"))
    .stderr(contains("1 CPUs").not())
    .stderr(contains("1 IRQs").not());
    synth(&dir.path().join("two"), &["--ncpus", "2", "--irqs", "3"])
        .success()
        .stderr(contains("(2 CPUs, 2 online, 3 IRQs, nr_irqs"));
}

/// `synth --cpus` (a count, unlike the `--cpus` CPU list of the row
/// filter) is now `--ncpus`; the old spelling still works for one release
/// and says so.
#[test]
fn old_cpus_spelling_still_works_and_warns() {
    let dir = tempfile::tempdir().expect("tempdir");
    synth(dir.path(), &["--cpus", "2", "--irqs", "3"])
        .success()
        .stderr(contains("--cpus is deprecated").and(contains("use --ncpus")))
        .stderr(contains("(2 CPUs, 2 online, 3 IRQs, nr_irqs"));
    synth(&dir.path().join("new"), &["--ncpus", "2", "--irqs", "3"])
        .success()
        .stderr(contains("deprecated").not());
}

/// A second tree is not written over a first one: the files only the
/// first has would stay and make a tree no machine has.
#[test]
fn a_non_empty_out_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    synth(dir.path(), &["--ncpus", "8", "--irqs", "40"]).success();
    let before = read(dir.path(), "proc/interrupts");
    synth(dir.path(), &["--ncpus", "4", "--irqs", "3"])
        .code(2)
        .stderr(contains("is not empty"));
    assert_eq!(read(dir.path(), "proc/interrupts"), before);
    // an empty directory is fine
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    synth(&empty, &["--ncpus", "4", "--irqs", "3"]).success();
}

/// An `--out` on a file system that states no size (proc) is not called
/// full: the error is the write's, naming the directory.
#[test]
fn an_out_on_a_file_system_without_a_size_is_not_called_full() {
    let out = Path::new("/proc/irqlab-synth-test-none");
    synth(out, &["--ncpus", "2", "--irqs", "4"])
        .code(1)
        .stderr(contains("/proc/irqlab-synth-test-none").and(contains("free").not()));
    assert!(!out.exists());
}
