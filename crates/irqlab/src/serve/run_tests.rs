//! The run loops against a synth tree whose `/proc/interrupts` breaks:
//! what a failed read renders, and when.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::sampler::End;
use std::io::Write;

/// A synth tree of 2 CPUs and 4 IRQs.
fn tree() -> tempfile::TempDir {
    crate::host::small_test_tree()
}

/// A cached-mode loop over `root`, and its first body published.
fn cached(root: &std::path::Path) -> (Loop, http::Latest) {
    let mut lp = Loop {
        src: CounterSampler::open(root).unwrap(),
        out: Output {
            renderer: Renderer::new(Options {
                per_cpu: PerCpu::All,
                filter: crate::filter::Filter::default(),
                naming: Naming::Irqlab,
                ticks_per_s: 100,
            }),
            own: OwnStats::default(),
            spare: Vec::new(),
            failures: failures::FailureLog::default(),
        },
    };
    let first = lp.step(0).unwrap();
    let latest = http::Latest::new(first, Instant::now(), None).unwrap();
    (lp, latest)
}

/// Empty `path` in place: the sampler's kept descriptor reads it empty,
/// which fails the read.
fn break_file(path: &std::path::Path) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(0).unwrap();
    f.write_all(b"").unwrap();
}

/// `ticks` ticks of 5 ms in cached mode.
fn run_ticks(lp: &mut Loop, latest: &http::Latest, ticks: u64, stop: &Stop) {
    let pace = PacedRun::new(Duration::from_millis(5), End::Count(ticks));
    assert_eq!(run_cached(lp, latest, pace, stop).unwrap(), None);
}

/// The value of the sample line `name` in `body`.
fn value(body: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let prefix = format!("{name} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

/// Failed ticks nobody scrapes render nothing (no publication); a scrape
/// after them has the last good sample's body rendered once, with every
/// failure counted and the success gauge at 0.
#[test]
fn failed_ticks_render_only_when_a_scrape_asks() {
    let d = tree();
    let stop = Stop::install().unwrap();
    let (mut lp, latest) = cached(d.path());
    break_file(&d.path().join("proc/interrupts"));
    run_ticks(&mut lp, &latest, 5, &stop);
    assert_eq!(
        latest.generation(),
        0,
        "failed ticks nobody scraped rendered"
    );
    assert_eq!(lp.out.own.sample_errors, 5);
    // A scrape now asks for the body of the latest (failed) read.
    assert_eq!(latest.scrape(Instant::now()), http::Freshness::After(0));
    run_ticks(&mut lp, &latest, 2, &stop);
    // Rendered at the first tick's wait, after its failure: one render
    // for the scrape, none for the second tick.
    assert_eq!(latest.generation(), 1, "one render for the scrape");
    assert_eq!(lp.out.own.sample_errors, 7);
    let body = latest.body();
    assert_eq!(
        value(&body, "irqlab_sample_errors_total").as_deref(),
        Some("6")
    );
    assert_eq!(
        value(&body, "irqlab_last_sample_success").as_deref(),
        Some("0")
    );
    assert_eq!(value(&body, "irqlab_samples_total").as_deref(), Some("1"));
    // The second tick's failure is not in that body: the next scrape
    // asks for one.
    assert_eq!(latest.scrape(Instant::now()), http::Freshness::After(1));
}

/// `:PORT` listens on every address as Go does: one `[::]` socket that
/// takes IPv4 connections too (whatever `net.ipv6.bindv6only`), or
/// `0.0.0.0` without IPv6.
#[test]
fn every_address_takes_ipv4_and_ipv6() {
    let l = Listen::AllAddrs(0).bind().unwrap();
    let addr = l.local_addr().unwrap();
    assert!(addr.ip().is_unspecified(), "{addr}");
    let port = addr.port();
    std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
    if addr.is_ipv6() {
        std::net::TcpStream::connect((Ipv6Addr::LOCALHOST, port)).unwrap();
    }
    // a port in use is an error, not a fallback to IPv4 alone
    let err = Listen::AllAddrs(port).bind().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse, "{err}");
}
