//! `irqlab bench -w net --loss/--rate`: bad values are usage errors (exit
//! 2) before any file or namespace exists; live (root, `ip`, `nft`, `tc`,
//! host changes allowed, else a visible skip), a loss-free and a lossy
//! variant interleaved show the lossy one retransmitting more, the
//! loss-free path does not retransmit from reordering, and no
//! namespace, veth, nftables table or qdisc is left after a normal exit
//! or after SIGKILL + `irqlab restore`. Counters come from a fake tree
//! (`--root`, which also keeps the run lock and journal out of the
//! host's); the transfer and its namespaces are real.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;
use std::time::Duration;

/// The tests of this file one at a time: each looks at every irqlab
/// namespace on the host.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn fake_tree() -> tempfile::TempDir {
    common::bench_tree("6.18-fake", "b", &[])
}

fn bench(root: &Path) -> Command {
    let mut c = Command::cargo_bin("irqlab").unwrap();
    c.args(["bench", "--root"]).arg(root);
    c.args(["--warmup", "0", "--measure", "LOC"]);
    c
}

/// Output of a command, empty when it cannot run.
fn out_of(cmd: &[&str]) -> String {
    std::process::Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// irqlab's namespaces (`irqlab-PID-N-tx/rx`) present now.
fn irqlab_netns() -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("irqlab-"))
        .collect()
}

/// What a run must not change in the host's namespace: veths named like
/// irqlab's, nftables tables, qdiscs, mounts under /run/netns.
fn host_net_state() -> (Vec<String>, String, String, Vec<String>) {
    let veths = out_of(&["ip", "-o", "link", "show", "type", "veth"])
        .lines()
        .filter(|l| l.contains("irqlab"))
        .map(str::to_string)
        .collect();
    (
        veths,
        out_of(&["nft", "list", "tables"]),
        out_of(&["tc", "qdisc", "show"]),
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter(|l| l.contains("/run/netns"))
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn bad_loss_and_rate_fail_before_anything_changes() {
    let _serial = serial();
    let root = fake_tree();
    let out = root.path().join("out");
    let before = irqlab_netns();
    let cases: &[(&[&str], &str)] = &[
        (&["-w", "net", "--loss", "1"], "ending in %"),
        (&["-w", "net", "--loss", "101%"], "between 0% and 100%"),
        (&["-w", "net", "--loss=-1%"], "between 0% and 100%"),
        (&["-w", "net", "--loss", "abc%"], "not a number"),
        (&["-w", "net", "--loss", "0.00001%"], "0.0001%"),
        (&["-w", "net", "--rate", "100"], "unit"),
        (&["-w", "net", "--rate", "0mbit"], "between"),
        (&["-w", "ipi", "--loss", "1%"], "apply to --workload net"),
        (
            &["-w", "net", "--variant", "a=--loss 200%", "--variant", "b="],
            "--variant a",
        ),
        (
            &[
                "--variant",
                "a=-w ipi --rate 1gbit",
                "--variant",
                "b=-w net",
            ],
            "apply to --workload net",
        ),
    ];
    for (flags, msg) in cases {
        bench(root.path())
            .arg("--out")
            .arg(&out)
            .args(*flags)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*msg));
        assert!(!out.exists(), "{flags:?} left {}", out.display());
        assert_eq!(irqlab_netns(), before, "{flags:?} made a namespace");
    }
    assert!(!root.path().join(".irqlab-journal.jsonl").exists());
}

/// Root and the tools the veth path needs; else a visible skip.
fn net_prereqs(test: &str) -> bool {
    if !nix::unistd::geteuid().is_root() {
        visible!("{test}: SKIPPED: needs root (network namespaces)");
        return false;
    }
    for tool in [["ip", "-V"], ["nft", "--version"], ["tc", "-V"]] {
        let ok = std::process::Command::new(tool[0])
            .arg(tool[1])
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            visible!("{test}: SKIPPED: `{}` is not installed", tool[0]);
            return false;
        }
    }
    true
}

fn metric_values(dir: &Path, name: &str) -> Vec<f64> {
    std::fs::read_to_string(dir.join("trials.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|t| t["metrics"][name]["value"].as_f64())
        .collect()
}

#[test]
fn lossy_variant_retransmits_more_and_leaves_nothing() {
    let _serial = serial();
    if !common::host_changes_allowed("bench_net: lossy_variant_retransmits_more_and_leaves_nothing")
    {
        return;
    }
    if !net_prereqs("lossy_variant_retransmits_more_and_leaves_nothing") {
        return;
    }
    let (root, out) = clean_against_lossy("10%");
    let clean = metric_values(&out.join("clean"), "tcp_retrans_pct");
    let lossy = metric_values(&out.join("lossy"), "tcp_retrans_pct");
    assert_eq!((clean.len(), lossy.len()), (3, 3), "{clean:?} {lossy:?}");
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(
        mean(&lossy) > mean(&clean),
        "10% loss must retransmit more than none: clean {clean:?} lossy {lossy:?}"
    );
    assert!(!root.path().join(".irqlab-journal.jsonl").exists());
}

/// A 3-trial bench of a loss-free variant `clean` against `lossy` (the
/// given `--loss`), in a fake tree; the bench must succeed and leave the
/// host's network state as it found it. The tree (with the results under
/// `out`) and the results directory.
fn clean_against_lossy(loss: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let root = fake_tree();
    let out = root.path().join("out");
    let host0 = host_net_state();
    bench(root.path())
        .arg("--out")
        .arg(&out)
        .args(["-w", "net", "--trials", "3", "--trial-length", "2s"])
        .arg("--variant")
        .arg("clean=--loss 0%")
        .arg("--variant")
        .arg(format!("lossy=--loss {loss}"))
        .timeout(Duration::from_secs(180))
        .assert()
        .success();
    assert_eq!(irqlab_netns(), Vec::<String>::new());
    assert_eq!(host_net_state(), host0, "the host's network state changed");
    (root, out)
}

/// Without RPS steering, the loss-free veth path retransmitted ~1 % of
/// its segments, every one reported back as a duplicate: data sent from
/// the writer's CPU and from the reader's (on ACK arrival) went through
/// two per-CPU backlogs and arrived out of order. Against a 1 % loss in
/// the same run, the loss-free variant must retransmit far less, and
/// (almost) nothing spuriously.
#[test]
fn loss_free_veth_path_does_not_retransmit_from_reordering() {
    let _serial = serial();
    let test = "loss_free_veth_path_does_not_retransmit_from_reordering";
    if !common::host_changes_allowed(&format!("bench_net: {test}")) {
        return;
    }
    if !net_prereqs(test) {
        return;
    }
    let (_root, out) = clean_against_lossy("1%");
    let sum = |v: &str, m: &str| metric_values(&out.join(v), m).iter().sum::<f64>();
    let (clean, lossy) = (
        sum("clean", "tcp_retrans_pct"),
        sum("lossy", "tcp_retrans_pct"),
    );
    assert!(
        clean * 4.0 < lossy,
        "the loss-free path retransmits {clean} % (3 trials summed), 1 % loss {lossy} %"
    );
    let (spurious, sent) = (
        sum("clean", "tcp_spurious_retrans"),
        sum("lossy", "tcp_retransmits"),
    );
    assert!(
        spurious * 20.0 < sent,
        "loss-free spurious retransmits {spurious} against {sent} retransmits at 1 % loss"
    );
}

#[test]
fn namespaces_removed_by_restore_after_sigkill() {
    let _serial = serial();
    if !common::host_changes_allowed("bench_net: namespaces_removed_by_restore_after_sigkill") {
        return;
    }
    if !net_prereqs("namespaces_removed_by_restore_after_sigkill") {
        return;
    }
    let root = fake_tree();
    let host0 = host_net_state();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["bench", "--root"])
        .arg(root.path())
        .arg("--out")
        .arg(root.path().join("out"))
        .args(["--warmup", "0", "--measure", "LOC", "-w", "net"])
        .args(["--loss", "1%", "--rate", "100mbit"])
        .args(["--trials", "5", "--trial-length", "60s"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("irqlab-{}-", child.id());
    let mine = || {
        irqlab_netns()
            .into_iter()
            .filter(|n| n.starts_with(&prefix))
            .count()
    };
    assert!(
        common::wait_until(Duration::from_secs(60), || mine() == 2),
        "the net workload never created its two namespaces"
    );
    // Past setup: the rule and the qdisc are in place once a trial runs.
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    assert_eq!(mine(), 2, "SIGKILL leaves the namespaces to restore");
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["restore", "--root"])
        .arg(root.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("network namespace"));
    assert_eq!(mine(), 0, "restore removed them");
    assert_eq!(host_net_state(), host0, "the host's network state changed");
}
