//! Load: 50 concurrent scrapers on loopback for a bounded time (5 s;
//! tools/serve-load.py takes the 30 s figure of BENCHMARKS.md). No request
//! may fail, peak memory stays bounded, and the sampling CPU per sample
//! does not grow with the scrape rate (compared with an idle stretch of the
//! same run, so a busy machine shifts both alike).
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{request, scrape, serve, synth, value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SCRAPERS: usize = 50;

/// (sampling CPU s, samples, peak RSS bytes, scrapes) from one scrape.
fn own(addr: std::net::SocketAddr) -> (f64, f64, f64, f64) {
    let b = scrape(addr);
    let v = |p| value(&b, p).unwrap();
    (
        v("irqlab_sampling_cpu_seconds_total "),
        v("irqlab_samples_total "),
        v("irqlab_process_max_resident_memory_bytes "),
        v("irqlab_scrapes_total "),
    )
}

#[test]
fn fifty_scrapers_for_five_seconds() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 64, 64);
    let s = serve(d.path(), &["-i", "100ms"]);
    let addr = s.addr;
    // Idle baseline.
    let a = own(addr);
    std::thread::sleep(Duration::from_secs(3));
    let b = own(addr);
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let end = Instant::now() + Duration::from_secs(5);
    let workers: Vec<_> = (0..SCRAPERS)
        .map(|_| {
            let (stop, ok, failed) = (stop.clone(), ok.clone(), failed.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                    match request(addr, "GET", "/metrics") {
                        Ok((200, body)) if body.contains("irqlab_exposed_series") => {
                            ok.fetch_add(1, Ordering::Relaxed)
                        }
                        _ => failed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    // The body (and its scrape counter) is rendered at each sample: wait
    // for two samples after the load, however late a busy machine takes
    // them, so that the counter covers every scrape made.
    let after = own(addr).1;
    let deadline = Instant::now() + Duration::from_secs(60);
    let c = loop {
        let c = own(addr);
        if c.1 >= after + 2.0 || Instant::now() > deadline {
            break c;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    crate::visible!(
        "serve_load: {ok} scrapes in 5 s, {failed} failed; idle {a:?} -> {b:?}, loaded -> {c:?}"
    );
    assert_eq!(failed, 0, "{failed} scrapes failed ({ok} ok)");
    assert!(ok >= 100, "only {ok} scrapes in 5 s");
    // every scrape is counted (plus the few of this test's own polling)
    assert!(c.3 - b.3 >= ok as f64, "scrape counter {c:?} vs {ok}");
    let idle = (b.0 - a.0) / (b.1 - a.1).max(1.0);
    let loaded = (c.0 - b.0) / (c.1 - b.1).max(1.0);
    // Sampling CPU per sample: the same work whatever the scrape rate;
    // generous for a loaded 2-CPU machine (caches, preemption), far below
    // the ×(scrapes per sample) a re-read per scrape would cost.
    assert!(
        loaded <= idle * 3.0 + 0.002,
        "sampling CPU per sample {idle:.6} s idle -> {loaded:.6} s under load"
    );
    // Memory: bounded by workers × body, not by scrapes.
    assert!(
        c.2 <= b.2 + 64.0 * 1024.0 * 1024.0,
        "peak RSS {} -> {}",
        b.2,
        c.2
    );
    assert_eq!(request(addr, "GET", "/metrics").unwrap().0, 200);
}

#[test]
fn fifty_scrapers_share_reads_made_at_scrape_time() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 64, 64);
    // The default mode: reads at scrape time, at most one per 200 ms.
    let s = serve(d.path(), &["--min-interval", "200ms"]);
    let addr = s.addr;
    let before = own(addr).1;
    let ok = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + Duration::from_secs(5);
    let workers: Vec<_> = (0..SCRAPERS)
        .map(|_| {
            let (ok, failed) = (ok.clone(), failed.clone());
            std::thread::spawn(move || {
                while Instant::now() < end {
                    match request(addr, "GET", "/metrics") {
                        Ok((200, body)) if body.contains("irqlab_exposed_series") => {
                            ok.fetch_add(1, Ordering::Relaxed)
                        }
                        _ => failed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let elapsed = start.elapsed().as_secs_f64();
    let reads = own(addr).1 - before;
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    crate::visible!(
        "serve_load (scrape time): {ok} scrapes, {failed} failed, {reads} reads in {elapsed:.1} s"
    );
    assert_eq!(failed, 0, "{failed} scrapes failed ({ok} ok)");
    assert!(ok >= 100, "only {ok} scrapes in 5 s");
    // Reads are bounded by the minimum interval, not by the scrape rate.
    assert!(
        reads <= elapsed / 0.2 + 2.0,
        "{reads} reads in {elapsed:.1} s for {ok} scrapes"
    );
    assert!(reads >= 2.0, "scrapes never caused a read ({reads})");
}
