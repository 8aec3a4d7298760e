//! `irqlab serve` end to end against fake trees: the /metrics body in both
//! namings and per-CPU modes, HTTP errors, scrapes answered from the
//! latest sample (never re-reading /proc), `promtool check metrics`.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{have, promtool_check, request, scrape, serve, serve_to_end, synth, value};
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn metrics_in_irqlab_naming_with_every_family() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 8);
    let s = serve(d.path(), &["-i", "100ms"]);
    let b = scrape(s.addr);
    for fam in [
        "irqlab_interrupts_total{cpu=\"3\",irq=\"",
        "irqlab_interrupts_total{cpu=\"0\",irq=\"LOC\",chip=\"\",actions=\"\"} ",
        "irqlab_softirqs_total{cpu=\"0\",vector=\"NET_RX\"} ",
        "irqlab_cpu_irq_seconds_total{cpu=\"0\"} ",
        "irqlab_cpu_softirq_seconds_total{cpu=\"3\"} ",
        "irqlab_process_cpu_seconds_total ",
        "irqlab_sampling_cpu_seconds_total ",
        "irqlab_samples_total ",
        "# TYPE irqlab_ksoftirqd_cpu_seconds_total counter",
        "# TYPE irqlab_irq_thread_cpu_seconds_total counter",
    ] {
        assert!(b.contains(fam), "missing {fam:?} in\n{b}");
    }
    let series = value(&b, "irqlab_exposed_series ").unwrap();
    let lines = b.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(series as usize, lines);
}

#[test]
fn node_naming_and_per_cpu_sum_and_filters() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 8);
    let s = serve(d.path(), &["-i", "100ms", "--compat", "node"]);
    let b = scrape(s.addr);
    assert!(b.contains("node_interrupts_total{cpu=\"2\",type=\"LOC\",info=\"Local timer interrupts\",devices=\"\"} "), "{b}");
    assert!(b.contains("node_softirqs_functions_total{cpu=\"1\",type=\"TIMER\"} "));
    assert!(b.contains("node_softirqs_total{vector=\"timer\"} "));
    assert!(b.contains("node_uname_info{"));
    assert!(b.contains("node_cpu_seconds_total{cpu=\"0\",mode=\"softirq\"} "));
    assert!(!b.contains("irqlab_interrupts_total"));
    drop(s);
    let s = serve(
        d.path(),
        &["-i", "100ms", "--per-cpu", "sum", "--exclude", "^LOC$"],
    );
    let b = scrape(s.addr);
    let irq_lines: Vec<&str> = b
        .lines()
        .filter(|l| l.starts_with("irqlab_interrupts_total{"))
        .collect();
    assert!(!irq_lines.is_empty());
    assert!(
        irq_lines.iter().all(|l| l.contains("cpu=\"all\"")),
        "{irq_lines:?}"
    );
    assert!(!b.contains("irq=\"LOC\""));
}

#[test]
fn top_k_bounds_the_series_per_row() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 8, 4);
    let s = serve(
        d.path(),
        &["-i", "100ms", "--per-cpu", "top=2", "--irq", "^LOC$"],
    );
    let b = scrape(s.addr);
    let loc: Vec<&str> = b
        .lines()
        .filter(|l| l.starts_with("irqlab_interrupts_total{"))
        .collect();
    assert_eq!(loc.len(), 3, "two CPUs and other: {loc:?}");
    assert!(loc.iter().any(|l| l.contains("cpu=\"other\"")));
}

#[test]
fn http_errors_and_head() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "100ms"]);
    assert_eq!(request(s.addr, "GET", "/nope").unwrap().0, 404);
    assert_eq!(request(s.addr, "POST", "/metrics").unwrap().0, 405);
    let (code, body) = request(s.addr, "HEAD", "/metrics").unwrap();
    assert_eq!((code, body.as_str()), (200, ""));
    assert_eq!(request(s.addr, "GET", "/").unwrap().0, 200);
}

#[test]
fn scrapes_are_answered_from_the_latest_sample() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 4);
    // One sample only (the next is an hour away): scrapes must not read /proc.
    let s = serve(d.path(), &["-i", "1h"]);
    let first = scrape(s.addr);
    let ints = d.path().join("proc/interrupts");
    let text = std::fs::read_to_string(&ints).unwrap();
    std::fs::write(
        &ints,
        text.replace("Local timer interrupts", "Changed timer interrupts"),
    )
    .unwrap();
    for _ in 0..20 {
        let b = scrape(s.addr);
        assert!(!b.contains("Changed"), "a scrape re-read /proc/interrupts");
        assert_eq!(value(&b, "irqlab_samples_total "), Some(1.0));
    }
    assert!(first.contains("irqlab_samples_total 1\n"));
}

/// Cached mode samples on every tick but renders only for a scrape: two
/// scrapes 1.5 s apart get two bodies, the second counting every 100-ms
/// tick between them and made from the latest sample.
#[test]
fn cached_mode_samples_every_tick_and_scrapes_get_the_latest_sample() {
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 4);
    let s = serve(d.path(), &["-i", "100ms"]);
    let first = scrape(s.addr);
    let after_first = Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    let before_second = Instant::now();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let second = scrape(s.addr);
    let after_second = Instant::now();
    assert_ne!(first, second);
    let samples = |b: &str| value(b, "irqlab_samples_total ").unwrap();
    let taken = samples(&second) - samples(&first);
    let ticks = |d: Duration| d.as_secs_f64() / 0.1;
    let least = ticks(before_second - after_first).floor() - 2.0;
    let most = ticks(after_second - after_first).ceil() + 2.0;
    assert!(
        (least..=most).contains(&taken),
        "{taken} samples between the scrapes, expected {least}..={most}"
    );
    // The second body is of a sample taken around its scrape, not the
    // one of the first body.
    let at = value(&second, "irqlab_last_sample_timestamp_seconds ").unwrap();
    assert!(at > wall - 0.6, "sampled at {at}, scraped at {wall}");
}

#[test]
fn cached_mode_serves_the_last_good_sample_when_sampling_fails() {
    use std::time::Duration;
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 4);
    let s = serve(d.path(), &["-i", "100ms"]);
    let samples = |b: &str| value(b, "irqlab_samples_total ").unwrap();
    let first = samples(&scrape(s.addr));
    // good samples nobody scrapes, then samples that fail: the kept
    // descriptor reads the rewritten file
    std::thread::sleep(Duration::from_millis(700));
    std::fs::write(d.path().join("proc/interrupts"), "not a table\n").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let after = samples(&scrape(s.addr));
    assert!(
        after >= first + 4.0,
        "the body after the failures is of sample {after}, the first scrape's of {first}"
    );
}

#[test]
fn bad_flags_are_usage_errors() {
    let out = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["serve", "--per-cpu", "top=0"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["serve", "--irq", "(", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a bad regex is a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("irqlab: ") && err.contains("--irq"),
        "{err}"
    );
}

/// `-i` and `--min-interval` outside 1ms..=24h are usage errors naming
/// the bound, before anything listens.
#[test]
fn intervals_outside_their_bounds_are_usage_errors() {
    for (flag, value, bound) in [
        ("-i", "25h", "longest interval (24h)"),
        ("-i", "1ns", "shortest interval (1ms)"),
        ("-i", "0", "greater than 0"),
        ("--min-interval", "50us", "shortest interval (1ms)"),
        ("--min-interval", "25h", "longest interval (24h)"),
    ] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
            .args(["serve", "--listen", "127.0.0.1:0", flag, value])
            .args(["--duration", "1s", "--root", "/nonexistent"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(err.contains(bound), "{flag} {value}: {err}");
    }
}

/// `--duration` is more than 0 and at most 8760h (as `record -d`): above,
/// a usage error naming the flag and the range, before anything listens;
/// shorter than `-i` is one interval of it (the paced runs' one rule).
#[test]
fn duration_outside_its_bounds_is_a_usage_error() {
    for (value, bound) in [
        ("8761h", "at most 8760h (365 days)"),
        ("99999999999h", "at most 8760h (365 days)"),
        ("0", "must be > 0"),
        ("-1s", "negative"),
    ] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
            .args(["serve", "--listen", "127.0.0.1:0", "--duration", value])
            .args(["--root", "/nonexistent"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--duration {value}: {err}");
        assert!(
            err.contains("--duration") && err.contains(bound),
            "--duration {value}: {err}"
        );
    }
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let out = serve_to_end(d.path(), &["-i", "1s", "--duration", "100ms"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// `promtool check metrics` on the body in both namings and two per-CPU
/// modes; skips (saying so) without promtool (tools/install-prometheus.sh).
#[test]
fn promtool_check_metrics_both_namings_or_skip() {
    if !have("promtool") {
        crate::visible!("SKIP promtool_check_metrics_both_namings_or_skip: promtool not installed (tools/install-prometheus.sh)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 16);
    for args in [
        &["--compat", "irqlab"][..],
        &["--compat", "node"],
        &["--per-cpu", "top=2"],
        &["--per-cpu", "sum", "--compat", "node"],
    ] {
        let mut all = vec!["-i", "100ms"];
        all.extend_from_slice(args);
        let s = serve(d.path(), &all);
        promtool_check(&scrape(s.addr), &format!("the body of {args:?}"));
    }
}

/// A filter pair that keeps no interrupt row gets `show`'s warning, word
/// for word: `--exclude` named when it removed every row `--irq` keeps.
#[test]
fn empty_selection_warns_as_show_does() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let warnings = |err: &[u8]| -> Vec<String> {
        let err = String::from_utf8_lossy(err);
        err.lines()
            .filter(|l| l.starts_with("irqlab: warning: "))
            .map(str::to_owned)
            .collect()
    };
    let cases: [&[&str]; 3] = [
        &["--irq", "^LOC$", "--exclude", "^LOC$"],
        &["--exclude", ""],
        &["--irq", "zzz", "--exclude", "LOC"],
    ];
    for flags in cases {
        let show = common::irqlab()
            .arg("show")
            .arg("--root")
            .arg(d.path())
            .args(flags)
            .output()
            .unwrap();
        assert!(show.status.success(), "show {flags:?}");
        let want = warnings(&show.stderr);
        assert_eq!(want.len(), 1, "show {flags:?}: {want:?}");
        let mut args = vec!["--duration", "100ms"];
        args.extend_from_slice(flags);
        let out = serve_to_end(d.path(), &args);
        assert_eq!(out.status.code(), Some(0), "serve {flags:?}");
        assert_eq!(warnings(&out.stderr), want, "serve {flags:?}");
    }
}

/// `--irq` that keeps no interrupt row warns as `show` does
/// (`crate::filter::warnings`); serve still runs.
#[test]
fn irq_filter_matching_nothing_warns() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let out = serve_to_end(d.path(), &["--duration", "1s", "--irq", "zzz"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("irqlab: warning: --irq \"zzz\" matches no interrupt row"),
        "{err}"
    );
    let out = serve_to_end(d.path(), &["--duration", "1s", "--cpus", "99"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "irqlab: warning: --cpus 99 selects no CPU: the sampled files list 2 CPUs (0-1)"
        ),
        "{err}"
    );
    let out = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["serve", "--cpus", "5-2", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad CPU list is a usage error"
    );
}

/// `--cpus` keeps only the selected CPUs' series (and sums only them).
#[test]
fn cpus_filter_selects_series() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 4);
    let s = serve(d.path(), &["-i", "100ms", "--cpus", "1,3"]);
    let body = scrape(s.addr);
    let cpus: std::collections::BTreeSet<&str> = body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split("cpu=\"").nth(1))
        .filter_map(|r| r.split('"').next())
        .collect();
    assert_eq!(cpus, ["1", "3", "all"].into(), "{body}");
    let all = serve(d.path(), &["-i", "100ms", "--per-cpu", "sum"]);
    let sub = serve(
        d.path(),
        &["-i", "100ms", "--per-cpu", "sum", "--cpus", "1,3"],
    );
    let p = "irqlab_interrupts_total{cpu=\"all\",irq=\"LOC\"";
    let (a, b) = (
        value(&scrape(all.addr), p).unwrap(),
        value(&scrape(sub.addr), p).unwrap(),
    );
    assert!(b < a, "sum over CPUs 1,3 {b} vs all {a}");
    let per = value(&body, "irqlab_interrupts_total{cpu=\"1\",irq=\"LOC\"").unwrap()
        + value(&body, "irqlab_interrupts_total{cpu=\"3\",irq=\"LOC\"").unwrap();
    assert_eq!(b, per);
}

/// Bash completions offer `--per-cpu`'s modes, not file names.
#[test]
fn per_cpu_completes_its_modes() {
    let out = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let script = String::from_utf8_lossy(&out.stdout);
    let at = script
        .find("--per-cpu)")
        .expect("no --per-cpu case in the bash script");
    let case = &script[at..at + 200.min(script.len() - at)];
    assert!(case.contains("compgen -W \"all sum top=1"), "{case}");
    assert!(!case.contains("compgen -f"), "{case}");
}

/// A background job of a non-interactive shell starts with SIGINT
/// ignored; serve installs its handler anyway and SIGINT ends it.
#[test]
fn sigint_stops_serve_started_in_the_background_by_a_script() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let err = d.path().join("err");
    let bin = assert_cmd::cargo::cargo_bin("irqlab");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' serve --root '{}' --listen 127.0.0.1:0 --duration 60s >/dev/null 2>'{}' & echo $!",
            bin.display(),
            d.path().display(),
            err.display()
        ))
        .output()
        .unwrap();
    let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let pid = nix::unistd::Pid::from_raw(pid);
    struct Kill(nix::unistd::Pid);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGKILL);
        }
    }
    let _guard = Kill(pid);
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false)
    };
    let t = std::time::Instant::now();
    while !std::fs::read_to_string(&err)
        .unwrap_or_default()
        .contains("serving http://")
    {
        assert!(t.elapsed().as_secs() < 30, "serve did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let t = std::time::Instant::now();
    while alive() {
        assert!(
            t.elapsed().as_secs() < 10,
            "serve still runs 10 s after SIGINT"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `--per-cpu sum` end to end: a CPU's LOC count set to 2^64-1, raised by
/// 2^40, or jumping 5 -> 2^32-1 between two samples never makes the
/// exported sum decrease or absorb the impossible step (the rule of the
/// delta layer, as `top` reports `impossible_rate`).
#[test]
fn per_cpu_sum_never_decreases_nor_absorbs_impossible_values() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let file = d.path().join("proc/interrupts");
    let text = std::fs::read_to_string(&file).unwrap();
    let set_loc = |cpu0: &str, cpu1: &str| {
        let out: String = text
            .lines()
            .map(|l| {
                if l.starts_with("LOC:") {
                    format!("LOC: {cpu0:>10} {cpu1:>10}   Local timer interrupts\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, out).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
    };
    set_loc("5", "100");
    let s = serve(d.path(), &["-i", "100ms", "--per-cpu", "sum"]);
    let loc = |s: &serve_support::Server| {
        value(
            &scrape(s.addr),
            "irqlab_interrupts_total{cpu=\"all\",irq=\"LOC\"",
        )
        .unwrap()
    };
    settle(&s);
    let start = loc(&s);
    assert_eq!(start, 105.0);
    let mut last = start;
    for (cpu0, cpu1, most) in [
        ("18446744073709551615", "101", 106.0),
        ("18446744073709551615", "102", 107.0),
        ("7", "103", 108.0),
        ("1099511627783", "104", 109.0),
        ("1099511628783", "105", 110.0),
        ("8", "106", 112.0),
        ("4294967295", "107", 113.0),
    ] {
        set_loc(cpu0, cpu1);
        settle(&s);
        let v = loc(&s);
        assert!(v >= last, "LOC sum went back from {last} to {v} at {cpu0}");
        assert!(v <= most, "LOC sum absorbed {cpu0}: {v} > {most}");
        last = v;
    }
}

/// `--per-cpu sum` end to end for x86's `ERR` (one 32-bit value,
/// `cpu="all"`): its wrap at 2^32 adds the modular difference and a
/// value above 2^32 - 1 adds nothing, so the exported series never
/// decreases (Prometheus would read a reset and count it all again).
#[test]
fn per_cpu_sum_keeps_a_single_value_row_monotonic_across_its_wrap() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let file = d.path().join("proc/interrupts");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\nERR:"), "{text}");
    let set_err = |v: u64| {
        let out: String = text
            .lines()
            .map(|l| match l.starts_with("ERR:") {
                true => format!("ERR: {v:>10}\n"),
                false => format!("{l}\n"),
            })
            .collect();
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, out).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
    };
    let max = u64::from(u32::MAX);
    set_err(max - 5);
    let s = serve(d.path(), &["-i", "100ms", "--per-cpu", "sum"]);
    let err = |s: &serve_support::Server| {
        value(
            &scrape(s.addr),
            "irqlab_interrupts_total{cpu=\"all\",irq=\"ERR\"",
        )
        .unwrap()
    };
    settle(&s);
    assert_eq!(err(&s), (max - 5) as f64);
    for (v, want) in [
        (5, max + 6),
        (1 << 32, max + 6),
        (9, max + 6),
        (11, max + 8),
    ] {
        set_err(v);
        settle(&s);
        assert_eq!(err(&s), want as f64, "ERR set to {v}");
    }
}

/// SIGTERM is how a service manager stops an exporter: exit 0; SIGINT
/// (Ctrl-C) exits 130 like `top` and `bench`.
#[test]
fn sigterm_is_a_clean_stop_and_sigint_exits_130() {
    use nix::sys::signal::Signal;
    for (sig, code) in [(Signal::SIGTERM, 0), (Signal::SIGINT, 130)] {
        let d = tempfile::tempdir().unwrap();
        synth(d.path(), 2, 2);
        let err = d.path().join("err");
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
            .args(common::serve_args("60s"))
            .arg(d.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        let t = std::time::Instant::now();
        while !std::fs::read_to_string(&err)
            .unwrap_or_default()
            .contains("serving http://")
        {
            assert!(t.elapsed().as_secs() < 30, "serve did not start");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, sig).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{sig:?}");
    }
}

/// Times the threads of `pid` were run so far (the second field of each
/// `/proc/PID/task/TID/schedstat` is the wait; the third the run count).
fn runs(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(2)?.parse::<u64>().ok())
        .sum()
}

#[test]
fn an_idle_scrape_time_server_sleeps_until_scraped() {
    if !std::path::Path::new("/proc/self/schedstat").exists() {
        eprintln!("SKIP an_idle_scrape_time_server_sleeps_until_scraped: no /proc/PID/schedstat");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &[]);
    let pid = s.child.id();
    // settle: the start-up's reads and the server thread's first wait
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = runs(pid);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let idle = runs(pid) - before;
    // the baseline: a scrape does run the threads (answer, read, render)
    let before = runs(pid);
    assert!(scrape(s.addr).contains("irqlab_interrupts_total"));
    let scraped = runs(pid) - before;
    assert!(scraped >= 2, "a scrape ran the threads {scraped} times");
    // no wake-up to look for signals or the end: at most a stray one
    assert!(
        idle <= 2,
        "idle for 2 s, the threads ran {idle} times (a scrape: {scraped})"
    );
}

/// powerpc prints `LOC` twice ("… for timer event device", "… for
/// others"): both rows are exported, each with its own label set, and a
/// change to the second shows in its series, in both namings.
#[test]
fn both_rows_of_a_repeated_arch_label_are_exported() {
    let d = tempfile::tempdir().unwrap();
    let st = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args([
            "synth", "--arch", "powerpc", "--ncpus", "2", "--irqs", "4", "--out",
        ])
        .arg(d.path())
        .status()
        .unwrap();
    assert!(st.success());
    let ints = d.path().join("proc/interrupts");
    let original = std::fs::read_to_string(&ints).unwrap();
    // the second LOC row with its CPU0 count raised by 1000, same width
    let bumped: String = original
        .lines()
        .map(|l| match l.split_once(':') {
            Some((label, rest)) if label.trim() == "LOC" && l.contains("others") => {
                let n: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
                let first = rest.find(|c: char| c.is_ascii_digit()).unwrap();
                let end = first + n.to_string().len();
                let width = end - 1;
                format!("{label}: {:>width$}{}\n", n + 1000, &rest[end..])
            }
            _ => format!("{l}\n"),
        })
        .collect();
    assert_ne!(bumped, original);
    for (compat, second) in [("irqlab", "irq=\"LOC#1\""), ("node", "for others")] {
        std::fs::write(&ints, &original).unwrap();
        let s = serve(d.path(), &["--compat", compat, "--min-interval", "50ms"]);
        let locs = |b: &str| -> Vec<String> {
            b.lines()
                .filter(|l| l.contains("_interrupts_total{") && l.contains("LOC"))
                .map(str::to_string)
                .collect()
        };
        let before = locs(&scrape(s.addr));
        assert_eq!(before.len(), 4, "{compat}: {before:?}");
        let keys: std::collections::BTreeSet<&str> = before
            .iter()
            .map(|l| l.rsplit_once(' ').unwrap().0)
            .collect();
        assert_eq!(keys.len(), 4, "{compat}: {before:?}");
        std::fs::write(&ints, &bumped).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let after = locs(&scrape(s.addr));
        let changed: Vec<_> = before.iter().zip(&after).filter(|(a, b)| a != b).collect();
        assert_eq!(changed.len(), 1, "{compat}: {before:?} {after:?}");
        assert!(changed[0].0.contains(second), "{compat}: {changed:?}");
        if compat == "node" {
            assert!(
                before.iter().all(|l| l.contains("type=\"LOC\",")),
                "{before:?}"
            );
        }
    }
}

/// `irqlab serve --listen LISTEN` on the tree at `root` for 200 ms.
fn serve_briefly(root: &Path, listen: &str) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["serve", "--listen", listen, "--duration", "200ms", "--root"])
        .arg(root)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `--listen localhost:PORT` listens on 127.0.0.1 (no name resolution);
/// other host names are a usage error saying so; the help says which.
#[test]
fn listen_takes_localhost_but_no_other_host_name() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let run = |listen: &str| serve_briefly(d.path(), listen);
    let out = run("localhost:0");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("serving http://127.0.0.1:"), "{err}");
    let out = run("example.invalid:9812");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("host names are not resolved"), "{err}");
    let help = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("localhost:PORT"), "{help}");
}

/// `--listen :PORT` (node_exporter's `--web.listen-address=":9100"`)
/// listens on every address, `[::]` taking IPv4 too as Go does (or
/// `0.0.0.0` without IPv6); a bad form is a usage error naming the flag
/// and what it expects.
#[test]
fn listen_takes_a_bare_port_as_every_address() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let run = |listen: &str| serve_briefly(d.path(), listen);
    let out = run(":0");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("serving http://[::]:") || err.contains("serving http://0.0.0.0:"),
        "{err}"
    );
    assert!(err.contains("reachable from other hosts"), "{err}");
    for (bad, says) in [
        ("", "expected an IP address and port"),
        (":", "port 0 to 65535"),
        (":65536", "port 0 to 65535"),
        (":abc", "port 0 to 65535"),
        ("garbage", "expected an IP address and port"),
    ] {
        let out = run(bad);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("--listen"), "{bad:?}: {err}");
        assert!(err.contains(says), "{bad:?}: {err}");
    }
    let help = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains(":PORT"), "{help}");
}

/// An absolute-form request target (RFC 9112 3.2.2, as a proxy sends)
/// is served by its path.
#[test]
fn absolute_form_targets_are_served_by_their_path() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    let (status, body) = request(s.addr, "GET", "http://irqlab.test/metrics").unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("irqlab_exposed_series"), "{body}");
    let (status, _) = request(s.addr, "GET", "http://irqlab.test/nothing").unwrap();
    assert_eq!(status, 404);
}

/// A `--root` that is a regular file is named as not a directory (as
/// `restore` says), exit 1, before anything listens.
#[test]
fn a_root_that_is_a_file_is_not_a_directory() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("file");
    std::fs::write(&file, "").unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("irqlab"))
        .args(common::serve_args("1s"))
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("--root {}: not a directory", file.display())),
        "{err}"
    );
    assert!(!err.contains("nothing readable"), "{err}");
    assert!(!err.contains("serving http"), "{err}");
}

/// The argument list of a bounded `serve` on an ephemeral port before its
/// `--root` is spelled once, `common::serve_args`: no test file repeats it.
#[test]
fn bounded_serve_arguments_are_spelled_only_in_common() {
    let spelled =
        regex::Regex::new(r#""serve","--listen","127\.0\.0\.1:0","--duration",[^,\]]*,"--root""#)
            .unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.push(dir.join("serve_support/mod.rs"));
    for f in files {
        let text: String = std::fs::read_to_string(&f)
            .unwrap()
            .split_whitespace()
            .collect();
        assert!(
            !spelled.is_match(&text),
            "{} spells serve's arguments: use common::serve_args",
            f.display()
        );
    }
}

/// Wait (bounded, 30 s) until `s` has taken three more samples, so that
/// a file changed before the call is in its latest sample.
fn settle(s: &serve_support::Server) {
    let samples = || value(&scrape(s.addr), "irqlab_samples_total ").unwrap();
    let n = samples();
    let t = std::time::Instant::now();
    while samples() < n + 3.0 && t.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
