//! `probe --kernel`: usage errors on any build (no feature: exit 2 saying
//! how to build it; `--root` other than `/`: exit 2), and live (feature
//! `trace`, root, BTF, host changes allowed since it attaches BPF
//! programs): every read's kernel time lies within its wall time, the
//! `show_interrupts()` calls per read cover the numbered rows printed
//! (where the mechanism can count them), a compare of two runs reads the
//! kernel metric, and no BPF program is left after a normal exit, SIGINT
//! or SIGKILL + `irqlab restore` (program ids from the child's fdinfo,
//! asked of bpftool), with the mount table's tracefs/debugfs/bpf lines
//! and tracefs instances as they were. Where `show_interrupts()` is not
//! countable, the `nr_irqs` read from kernel memory is checked against
//! the boot log's `nr_irqs:` and the descriptors in /sys/kernel/irq, the
//! descriptor lookups the watchpoint counted per read against that
//! `nr_irqs` (where breakpoints are available), and kernel ≤ cpu ≤ wall
//! on the medians, all taken in the same test.
#![allow(clippy::unwrap_used)]

mod common;
use common::irqlab;
#[cfg(not(feature = "trace"))]
use predicates::str::contains;

#[cfg(not(feature = "trace"))]
#[test]
fn probe_kernel_without_the_trace_feature_is_a_usage_error_naming_the_build() {
    irqlab()
        .args(["probe", "--kernel", "--reads", "1"])
        .assert()
        .code(2)
        .stderr(contains("--features trace"))
        .stdout("");
}

#[test]
fn probe_kernel_with_a_root_tree_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let out = irqlab()
        .args(["probe", "--kernel", "--reads", "1", "--root", &root])
        .assert()
        .code(2)
        .stdout("");
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    if cfg!(feature = "trace") {
        assert!(err.contains("--root"), "{err}");
    } else {
        assert!(err.contains("--features trace"), "{err}");
    }
}

#[cfg(feature = "trace")]
mod live {
    use super::common;
    use common::trace::{prog_ids, signal, still_loaded, Needs};
    use serde_json::Value;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn skip(test: &str, bpftool: bool) -> bool {
        if !common::host_changes_allowed(test) {
            return true;
        }
        common::trace::skipped(
            test,
            common::trace::skip_reason(Needs {
                btf: true,
                bpftool,
                lock_free: true,
            }),
        )
    }

    /// How many reads of `v` took longer in the kernel than on the wall
    /// clock, checked to be what the output itself flags (a raw
    /// tracepoint's exit program can be skipped while the same program
    /// runs preempted on that CPU: the read then ends at the thread's
    /// next system call, and the probe says so).
    fn reads_above_wall(v: &Value) -> u64 {
        let mut total = 0;
        for row in v["rows"].as_array().unwrap() {
            let kernel = nums(&row["kernel"]["per_read"]["kernel_ns"]);
            let wall = nums(&row["per_read"]["wall_ns"]);
            let above = kernel.iter().zip(&wall).filter(|(k, w)| k > w).count() as u64;
            assert_eq!(row["kernel"]["reads_above_wall"], above, "{row}");
            total += above;
        }
        total
    }

    fn run_json(reads: &str) -> Value {
        let out = common::irqlab()
            .args(["probe", "--kernel", "--reads", reads, "--buffer", "4k,128"])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn nums(v: &Value) -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    }

    #[test]
    fn probe_kernel_time_is_within_wall_and_show_calls_cover_the_rows() {
        let test = "probe_kernel: probe_kernel_time_is_within_wall_and_show_calls_cover_the_rows";
        if skip(test, false) {
            return;
        }
        let _one = common::trace::one_at_a_time();
        // a flagged read is the tracer's artifact, not the probe's error:
        // up to three runs for one without; else the last, whose flagged
        // reads must stay rare (at most one in a hundred)
        let mut v = run_json("50");
        let mut flagged = reads_above_wall(&v);
        for _ in 0..2 {
            if flagged == 0 {
                break;
            }
            crate::visible!(
                "{test}: {flagged} read(s) flagged above wall (a missed sys_exit under load): \
                 run again"
            );
            v = run_json("50");
            flagged = reads_above_wall(&v);
        }
        let reads: usize = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| nums(&r["per_read"]["wall_ns"]).len())
            .sum();
        assert!(
            flagged as usize * 100 <= reads,
            "{flagged} of {reads} reads above wall in three runs"
        );
        let k = &v["kernel"];
        let mechanism = k["mechanism"].as_str().unwrap();
        let irq_rows = k["irq_rows"].as_u64().unwrap();
        assert!(irq_rows > 0, "{k}");
        let mut interrupts_rows = 0;
        let mut uncounted = false;
        let mut lookups = 0;
        for row in v["rows"].as_array().unwrap() {
            let kr = &row["kernel"];
            let kernel = nums(&kr["per_read"]["kernel_ns"]);
            let wall = nums(&row["per_read"]["wall_ns"]);
            assert_eq!(kernel.len(), wall.len(), "{}", row["metric"]);
            // every read of a seq_file was seen by the hooks
            assert!(kr["kernel_ns"]["min"].as_f64().unwrap() > 0.0, "{row}");
            assert!(kr["seq_read_iter_calls_per_read"].as_f64().unwrap() >= 1.0);
            if row["target"] != "/proc/interrupts" {
                continue;
            }
            interrupts_rows += 1;
            match kr["show_interrupts_calls"]["min"].as_f64() {
                Some(min) => {
                    assert!(min >= irq_rows as f64, "{min} < {irq_rows} rows: {row}");
                    let nr = k["nr_irqs"].as_i64().unwrap();
                    assert!(nr as u64 >= irq_rows, "{k}");
                    assert!(
                        min >= (nr + 1) as f64,
                        "a read walks 0..=nr_irqs: {min} {nr}"
                    );
                }
                None => uncounted = true,
            }
            if let Some(l) = kr["descriptor_lookups"]["min"].as_f64() {
                // a lookup per IRQ number below nr_irqs, on every read
                let nr = k["nr_irqs_from_kernel_memory"].as_f64();
                assert_eq!(Some(l), nr, "lookups per read vs nr_irqs: {row}");
                assert_eq!(kr["descriptor_lookups"]["max"].as_f64(), nr, "{row}");
                assert_eq!(k["descriptor_lookups_per_walk"].as_f64(), nr, "{k}");
                lookups += 1;
            }
        }
        if uncounted {
            crate::visible!(
                "{test}: show_interrupts() not countable here ({mechanism}); \
                 kernel time and the nr_irqs read from kernel memory checked"
            );
            check_nr_irqs_read(test, k);
            if lookups == 0 {
                crate::visible!(
                    "{test}: descriptor lookups not counted either (no hardware watchpoint): \
                     {mechanism}"
                );
            }
        }
        check_medians(&v);
        assert_eq!(interrupts_rows, 4, "2 methods × 2 buffers: {v}");
        // compare reads the added metric like the others
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        std::fs::write(&a, serde_json::to_vec(&v).unwrap()).unwrap();
        std::fs::write(&b, serde_json::to_vec(&run_json("20")).unwrap()).unwrap();
        let out = common::irqlab()
            .arg("compare")
            .args([&a, &b])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("proc_interrupts_pread_4k_kernel_ns"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `nr_irqs` read from kernel memory (fallback mechanism) against this
    /// test's own baselines: every allocated descriptor below it, and the
    /// boot log's `nr_irqs: N` where the ring buffer still has it.
    fn check_nr_irqs_read(test: &str, k: &Value) {
        let Some(read) = k["nr_irqs_from_kernel_memory"].as_i64() else {
            crate::visible!("{test}: nr_irqs not readable from kernel memory here: {k}");
            return;
        };
        let bound = std::fs::read_dir("/sys/kernel/irq")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i64>().ok())
            .max()
            .map_or(0, |m| m + 1);
        assert!(read >= bound, "nr_irqs {read} < descriptor bound {bound}");
        let log = Command::new("dmesg").output().map(|o| o.stdout);
        let boot = log.ok().and_then(|out| {
            let text = String::from_utf8_lossy(&out).to_string();
            let at = text.find("nr_irqs: ")? + "nr_irqs: ".len();
            let digits: String = text[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<i64>().ok()
        });
        match boot {
            Some(b) => assert_eq!(read, b, "nr_irqs from kernel memory vs the boot log"),
            None => crate::visible!("{test}: no `nr_irqs:` in dmesg; checked against {bound}"),
        }
    }

    /// kernel ≤ cpu ≤ wall on every row's medians (a read's kernel span
    /// lies inside its wall window; the thread's CPU time covers it unless
    /// preempted inside, which a median does not see).
    fn check_medians(v: &Value) {
        for row in v["rows"].as_array().unwrap() {
            let p50 = |x: &Value| x["p50"].as_f64().unwrap();
            let (k, c, w) = (
                p50(&row["kernel"]["kernel_ns"]),
                p50(&row["cpu_ns"]),
                p50(&row["wall_ns"]),
            );
            assert!(k <= c && c <= w, "{}: {k} {c} {w}", row["metric"]);
        }
    }

    /// The mount table's lines for the filesystems a tracer could touch,
    /// and tracefs instances named irqlab-* where tracefs is mounted.
    fn tracing_state() -> (Vec<String>, Vec<String>) {
        let mounts: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter(|l| {
                let fs = l.split(" - ").nth(1).and_then(|t| t.split(' ').next());
                matches!(fs, Some("tracefs" | "debugfs" | "bpf"))
            })
            .map(str::to_string)
            .collect();
        let mut instances = Vec::new();
        for dir in [
            "/sys/kernel/tracing/instances",
            "/sys/kernel/debug/tracing/instances",
        ] {
            if let Ok(rd) = std::fs::read_dir(dir) {
                instances.extend(
                    rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .filter(|n| n.starts_with("irqlab")),
                );
            }
        }
        (mounts, instances)
    }

    /// `irqlab restore` after a SIGKILL: probe journals no host change,
    /// so there is nothing to undo (a live run of another test holding
    /// the lock is said, not failed on).
    fn restore_after_kill(test: &str) {
        let out = common::irqlab().arg("restore").output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            crate::visible!("{test}: irqlab restore refused (another run?): {text}");
            return;
        }
        assert!(
            !text.contains("probe"),
            "restore undid a probe change: {text}"
        );
    }

    /// Spawn a long probe, wait until its programs are in its fdinfo.
    fn spawn_attached(reads: &str) -> (common::trace::Reap, Vec<u32>) {
        let child = Command::new(env!("CARGO_BIN_EXE_irqlab"))
            .args(["probe", "--kernel", "--reads", reads, "--buffer", "4k"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let child = common::trace::Reap(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ids = prog_ids(child.0.id());
            if ids.len() >= 2 {
                return (child, ids);
            }
            assert!(Instant::now() < deadline, "no BPF program seen in fdinfo");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The child's exit status once `sig` ended it; a child still running
    /// after `limit` is killed and the test fails (never a hang).
    fn wait_at_most(
        c: &mut common::trace::Reap,
        limit: Duration,
        sig: nix::sys::signal::Signal,
    ) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = c.0.try_wait().unwrap() {
                return status;
            }
            if Instant::now() >= deadline {
                c.0.kill().unwrap();
                c.0.wait().unwrap();
                panic!("probe --kernel still running {limit:?} after {sig}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn probe_kernel_leaves_no_program_after_exit_sigint_or_sigkill() {
        let test = "probe_kernel: probe_kernel_leaves_no_program_after_exit_sigint_or_sigkill";
        if skip(test, true) {
            return;
        }
        let _one = common::trace::one_at_a_time();
        use nix::sys::signal::Signal;
        let before = tracing_state();
        // normal exit
        let (mut c, ids) = spawn_attached("300");
        let status = c.0.wait().unwrap();
        assert!(status.success(), "{status}");
        assert_eq!(still_loaded(&ids), Vec::<u32>::new(), "normal exit");
        assert_eq!(tracing_state(), before, "normal exit");
        for sig in [Signal::SIGINT, Signal::SIGKILL] {
            let (mut c, ids) = spawn_attached("1000000");
            signal(c.0.id(), sig);
            let status = wait_at_most(&mut c, Duration::from_secs(30), sig);
            assert!(!status.success(), "{sig}: {status}");
            if sig == Signal::SIGKILL {
                restore_after_kill(test);
            }
            assert_eq!(still_loaded(&ids), Vec::<u32>::new(), "{sig}");
            assert_eq!(tracing_state(), before, "{sig}");
        }
    }
}
