//! `irqlab compare --html` in a real browser: headless
//! Chromium (installed by tools/install-chromium.sh) loads the report; the
//! DOM it renders must hold the verdict table and the plot, and its
//! screenshot must show the plot's points in both variants' colours. Skips
//! with a visible reason (`SKIP …` on stderr, `_or_skip` in the name) when
//! Chromium is not installed. Chromium runs with a temporary profile in its
//! own process group, which is killed if it hangs.
#![allow(clippy::unwrap_used)]

mod common;

use assert_cmd::Command;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const TEST: &str = "html_report_renders_in_headless_chromium_or_skip";

/// The Chromium binary on PATH, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Run headless Chromium on `page` with `args`; stdout on success. The
/// whole process group is killed after 180 s (a loaded machine is slow to
/// start a browser, a hung one must not hang the test run).
fn headless(bin: &Path, profile: &Path, page: &Path, args: &[&str]) -> String {
    let out_path = profile.join("stdout");
    let mut child = std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.join("profile").display()
        ))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let pg = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            panic!("chromium {args:?} did not finish in 180 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Helpers (zygote, GPU process) of a finished browser go with it.
    let pg = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
    assert!(status.success(), "chromium {args:?}: {status}");
    fs::read_to_string(out_path).unwrap()
}

/// RGB pixels of a PNG file, with its width and height.
fn pixels(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::io::BufReader::new(fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let step = info.color_type.samples();
    assert!(step >= 3, "{:?}", info.color_type);
    let px = buf[..info.buffer_size()]
        .chunks_exact(step)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, px)
}

fn values(centre: f64, n: usize) -> String {
    (0..n)
        .map(|i| format!("{}\n", centre + ((i * 7) % n) as f64 * 0.3))
        .collect()
}

#[test]
fn html_report_renders_in_headless_chromium_or_skip() {
    let Some(bin) = chromium() else {
        crate::visible!("SKIP {TEST}: chromium not installed (tools/install-chromium.sh)");
        return;
    };
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    fs::write(d.join("tip.txt"), values(100.0, 12)).unwrap();
    fs::write(d.join("patch.txt"), values(110.0, 12)).unwrap();
    let report = d.join("report.html");
    let out = Command::cargo_bin("irqlab")
        .unwrap()
        .current_dir(d)
        .args([
            "compare",
            "tip.txt",
            "patch.txt",
            "--metric",
            "wake_latency_ns",
        ])
        .args(["--resamples", "500", "--html", "report.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // The rendered DOM: the verdict table with its row, the plot's marks.
    let dom = headless(&bin, d, &report, &["--dump-dom"]);
    let table = dom
        .split_once("<table id=\"verdicts\">")
        .and_then(|(_, rest)| rest.split_once("</table>"))
        .map(|(t, _)| t)
        .unwrap_or_else(|| panic!("no verdict table in the rendered DOM:\n{dom}"));
    assert!(table.contains("<th>verdict</th>"), "{table}");
    let row = table
        .split("<tr>")
        .find(|r| r.contains("<td>wake_latency_ns</td>"))
        .unwrap_or_else(|| panic!("no row of the metric:\n{table}"));
    assert!(
        row.contains("<td>patch</td>") && row.contains("<td>regressed</td>"),
        "{row}"
    );
    let plots = dom.split_once("<div id=\"plots\">").unwrap().1;
    assert!(plots.trim_start().starts_with("<svg"), "{plots}");
    assert!(plots.matches("<circle").count() >= 24, "{plots}");

    // The screenshot: the plot drew both variants' points and boxes
    // (#1f77b4 blue for the baseline, #d62728 red for the other).
    let shot = d.join("shot.png");
    headless(
        &bin,
        d,
        &report,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1100,1800",
        ],
    );
    let (w, h, px) = pixels(&shot);
    assert_eq!((w, h), (1100, 1800));
    let blue = |p: &[u8; 3]| p[2] > 150 && p[2] as i32 > p[0] as i32 + 50 && p[1] > 90;
    let red = |p: &[u8; 3]| {
        p[0] > 180 && p[1] < 160 && p[2] < 160 && (p[1] as i32 - p[2] as i32).abs() < 30
    };
    let (nb, nr) = (
        px.iter().filter(|p| blue(p)).count(),
        px.iter().filter(|p| red(p)).count(),
    );
    assert!(nb >= 200 && nr >= 200, "blue {nb} red {nr} pixels");
    // Both colours span the two panels (strip/box and trial order).
    let span = |f: &dyn Fn(&[u8; 3]) -> bool| {
        let xs: Vec<usize> = (0..px.len())
            .filter(|&i| f(&px[i]))
            .map(|i| i % w as usize)
            .collect();
        xs.iter().max().unwrap() - xs.iter().min().unwrap()
    };
    assert!(
        span(&blue) > 300 && span(&red) > 300,
        "points in one panel only"
    );
    assert!(
        !d.join("profile").join("SingletonLock").exists(),
        "chromium still running"
    );
}
