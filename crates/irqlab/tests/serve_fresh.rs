//! `irqlab serve` reads at scrape time: scrapes every second with
//! `--min-interval 1s` each see a new read of a moving tree (what `irate`
//! needs), and gzip is served to scrapers that ask for it.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{scrape, serve, synth, value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Write `proc/interrupts` with IRQ 24 at `n` on CPU0, in place and at
/// the same length (serve keeps the file open, as for /proc).
fn write_interrupts(root: &Path, n: u64) {
    let text = format!(
        "           CPU0       CPU1\n 24:  {n:>9}          0  IO-APIC   9-fasteoi   acpi\nLOC:        100        100   Local timer interrupts\n"
    );
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(root.join("proc/interrupts"))
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[test]
fn scrapes_every_second_never_see_a_repeated_value_of_a_moving_irq() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 4);
    std::fs::write(d.path().join("proc/interrupts"), "").unwrap();
    write_interrupts(d.path(), 0);
    let root = d.path().to_path_buf();
    let stop = Arc::new(AtomicBool::new(false));
    // The count moves every 100 ms: it changes within every second.
    let mover = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 7;
                write_interrupts(&root, n);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let s = serve(d.path(), &["--min-interval", "1s"]);
    let series = "irqlab_interrupts_total{cpu=\"0\",irq=\"24\",";
    let start = Instant::now();
    let mut last = None;
    let mut reads = Vec::new();
    for i in 1..=60u32 {
        // Scrapes on a 1-s grid, as Prometheus does.
        let due = start + Duration::from_secs(u64::from(i));
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let b = scrape(s.addr);
        let v = value(&b, series).unwrap();
        reads.push(value(&b, "irqlab_samples_total ").unwrap());
        if let Some(prev) = last {
            assert!(v > prev, "scrape {i}: {v} after {prev}: irate would show 0");
        }
        last = Some(v);
    }
    stop.store(true, Ordering::Relaxed);
    mover.join().unwrap();
    // One read per scrape (plus the start-up read), never more.
    assert!(reads.windows(2).all(|w| w[1] == w[0] + 1.0), "{reads:?}");
}

/// GET /metrics with `Accept-Encoding: gzip`: (gzipped, body as text).
fn scrape_gzip(addr: std::net::SocketAddr) -> (bool, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(
        b"GET /metrics HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let body = &raw[end + 4..];
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(len, body.len());
    if head.contains("Content-Encoding: gzip") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(body)
            .read_to_string(&mut text)
            .unwrap();
        (true, text)
    } else {
        (false, String::from_utf8(body.to_vec()).unwrap())
    }
}

#[test]
fn gzip_is_served_to_scrapers_that_accept_it() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 8, 32);
    let s = serve(d.path(), &["--min-interval", "50ms"]);
    let (gz, first) = scrape_gzip(s.addr);
    assert!(gz, "the first gzip scrape gets gzip, made on demand");
    std::thread::sleep(Duration::from_millis(100));
    let (gz, text) = scrape_gzip(s.addr);
    assert!(gz, "later gzip scrapes get gzip");
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(100));
        assert!(scrape_gzip(s.addr).0, "every later gzip scrape gets gzip");
    }
    let names = |b: &str| -> Vec<String> {
        b.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
            .collect()
    };
    assert_eq!(names(&text), names(&first));
    // A scraper that does not ask gets plain text.
    assert!(scrape(s.addr).contains("irqlab_samples_total "));
}
