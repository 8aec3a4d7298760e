//! docs/recipes.md cannot drift from the tool: every `irqlab` command
//! after a `# recipe: NAME` line of its `sh` blocks is run here,
//! shortened (fewer reads, trials and seconds; bench counters from a fake
//! tree with `--root`): `irq-rate` against a fake tree, `lossy-tcp` live
//! (root, `ip`, `nft`, `tc`, host changes allowed; else a visible skip),
//! `probe-kernel` live (a visible skip without root or without the
//! `trace` feature, whose message the recipe documents).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use std::path::Path;
use std::time::Duration;

/// (name, words of the command) of every recipe, in page order.
fn recipes() -> Vec<(String, Vec<String>)> {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/recipes.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(name) = l.strip_prefix("# recipe: ") {
            let cmd = lines.get(i + 1).copied().unwrap_or_default();
            assert!(cmd.starts_with("irqlab "), "recipe {name}: {cmd:?}");
            out.push((name.trim().to_string(), shlex::split(cmd).unwrap()));
        }
    }
    out
}

fn recipe(name: &str) -> Vec<String> {
    recipes()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("docs/recipes.md has no recipe {name}"))
        .1
}

/// `words` without the leading `irqlab`, each flag of `set` given the new
/// value (added when the recipe leaves it to a preset).
fn shortened(words: &[String], set: &[(&str, &str)]) -> Vec<String> {
    let mut w: Vec<String> = words[1..].to_vec();
    for (flag, value) in set {
        match w.iter().position(|x| x == flag) {
            Some(i) => w[i + 1] = value.to_string(),
            None => w.extend([flag.to_string(), value.to_string()]),
        }
    }
    w
}

#[test]
fn the_page_has_the_three_recipes() {
    let names: Vec<String> = recipes().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["probe-kernel", "lossy-tcp", "irq-rate"]);
}

#[test]
fn irq_rate_recipe_runs_against_a_fake_tree() {
    let root = common::bench_tree("6.18-fake", "b", &[]);
    let out = root.path().join("irq-rate");
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out_s = out.display().to_string();
    let args = shortened(
        &recipe("irq-rate"),
        &[("-n", "2"), ("-d", "100ms"), ("-o", &out_s)],
    );
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(&args)
        .arg("--root")
        .arg(root.path())
        .args(["--warmup", "0", "--tmp-dir"])
        .arg(tmp.path())
        .timeout(Duration::from_secs(120))
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "--preset irq-rate: --governor performance --workload-cpus",
        ));
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"irq_36_per_sec\""), "{summary}");
    let plan = std::fs::read_to_string(out.join("plan.json")).unwrap();
    assert!(plan.contains("irq-rate"), "{plan}");
    // The compare line of the recipe reads the run (the other variant: a
    // copy of it; the same directory twice is refused).
    let again = tmp.path().join("again");
    std::fs::create_dir_all(&again).unwrap();
    std::fs::copy(out.join("tip/trials.jsonl"), again.join("trials.jsonl")).unwrap();
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["compare"])
        .arg(format!("tip={}", out.join("tip").display()))
        .arg(format!("again={}", again.display()))
        .args(["--format", "markdown"])
        .assert()
        .success();
}

#[test]
fn lossy_tcp_recipe_runs_live() {
    let test = "recipes_cli: lossy_tcp_recipe_runs_live";
    if !common::host_changes_allowed(test) {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        visible!("{test}: SKIPPED: needs root (network namespaces)");
        return;
    }
    for tool in [["ip", "-V"], ["nft", "--version"], ["tc", "-V"]] {
        let ok = std::process::Command::new(tool[0])
            .arg(tool[1])
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            visible!("{test}: SKIPPED: `{}` is not installed", tool[0]);
            return;
        }
    }
    let root = common::bench_tree("6.18-fake", "b", &[]);
    let out = root.path().join("lossy-tcp");
    let out_s = out.display().to_string();
    let args = shortened(
        &recipe("lossy-tcp"),
        &[("-n", "1"), ("-d", "500ms"), ("-o", &out_s)],
    );
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(&args)
        .arg("--root")
        .arg(root.path())
        .args(["--warmup", "0", "--measure", "LOC"])
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    for v in ["lossfree", "loss0.01", "loss2"] {
        let t = std::fs::read_to_string(out.join(v).join("trials.jsonl")).unwrap();
        assert!(t.contains("tcp_retransmits"), "{v}: {t}");
    }
    Command::cargo_bin("irqlab")
        .unwrap()
        .args(["compare"])
        .arg(&out)
        .args(["--baseline", "lossfree", "--format", "markdown"])
        .assert()
        .success();
}

#[test]
fn probe_kernel_recipe_runs_or_says_what_is_missing() {
    let test = "recipes_cli: probe_kernel_recipe_runs_or_says_what_is_missing";
    let args = shortened(&recipe("probe-kernel"), &[("--reads", "20")]);
    let out = Command::cargo_bin("irqlab")
        .unwrap()
        .args(&args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("show_interrupts"), "{text}");
        }
        Some(2) if err.contains("built without eBPF tracing") => {
            visible!(
                "{test}: SKIPPED: built without --features trace ({})",
                err.trim()
            );
        }
        Some(1) if !nix::unistd::geteuid().is_root() => {
            visible!("{test}: SKIPPED: needs root ({})", err.trim());
        }
        c => panic!("probe --kernel: exit {c:?}: {err}"),
    }
}

#[test]
fn preset_needs_a_known_name_and_an_irq() {
    let root = common::bench_tree("6.18-fake", "b", &[]);
    let out = root.path().join("out");
    let cases: &[(&[&str], &str)] = &[
        (&["--preset", "nope"], "unknown preset \"nope\" (irq-rate)"),
        (
            &["--preset", "irq-rate", "-w", "disk"],
            "name the IRQ with --measure",
        ),
    ];
    for (flags, msg) in cases {
        Command::cargo_bin("irqlab")
            .unwrap()
            .arg("bench")
            .arg("--root")
            .arg(root.path())
            .arg("--out")
            .arg(&out)
            .args(*flags)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(*msg));
        assert!(!out.exists(), "{flags:?} left {}", out.display());
    }
}
