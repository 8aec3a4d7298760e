//! `irqlab serve`: a Prometheus text endpoint at `/metrics` answered from
//! the latest sample. One thread samples on drift-free ticks (the interval
//! does not depend on scrapes) and renders the body once per sample;
//! `http` workers hand that body to every scrape, so concurrent scrapes
//! never re-read `/proc`.
//!
//! Owns the run loop and irqlab's own counters; naming and shaping are in
//! `render`/`options`, monotonic sums in `accum`. Knows nothing about clap.

pub mod accum;
pub mod http;
pub mod openmetrics;
pub mod options;
pub mod render;

use crate::record::source::LiveSource;
use crate::sampler::clock::CostMeter;
use crate::sampler::Ticker;
use anyhow::Context;
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeValLike;
pub use options::{Naming, Options, PerCpu};
use render::{OwnStats, Renderer};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// HTTP worker threads (scrapes served at once; more wait in the backlog).
pub const WORKERS: usize = 4;

/// A serve run.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub root: PathBuf,
    pub listen: SocketAddr,
    pub interval: Duration,
    /// Stop after this long (tests, bounded runs); `None` = until killed.
    pub duration: Option<Duration>,
    pub opts: Options,
}

/// Sampling state: the source, the renderer and irqlab's own counters.
struct Loop {
    src: LiveSource,
    renderer: Renderer,
    own: OwnStats,
    spare: Vec<u8>,
}

impl Loop {
    /// Sample and render a new body.
    fn step(&mut self, scrapes: u64) -> anyhow::Result<Vec<u8>> {
        let meter = CostMeter::start();
        let s = self.src.next_sample()?;
        self.own.samples += 1;
        self.own.scrapes = scrapes;
        let (cpu_ns, max_rss) = process_usage();
        self.own.process_cpu_ns = cpu_ns;
        self.own.max_rss_bytes = max_rss;
        let mut body = std::mem::take(&mut self.spare);
        self.renderer.render(s.view(), &self.own, &mut body);
        // The render of this body is counted in the next one.
        self.own.sampling_cpu_ns += meter.stop().cpu_ns;
        Ok(body)
    }
}

/// CPU time (ns) and peak RSS (bytes) of this process.
fn process_usage() -> (u64, u64) {
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => {
            let ns = |t: nix::sys::time::TimeVal| u64::try_from(t.num_nanoseconds()).unwrap_or(0);
            let rss = u64::try_from(u.max_rss()).unwrap_or(0).saturating_mul(1024);
            (ns(u.user_time()).saturating_add(ns(u.system_time())), rss)
        }
        Err(_) => (0, 0),
    }
}

/// Sample once, listen, then keep sampling until `duration` (or forever).
/// `ready` gets the bound address (port 0 picks a free one).
pub fn run(cfg: ServeConfig, ready: impl FnOnce(SocketAddr)) -> anyhow::Result<()> {
    let mut lp = Loop {
        src: LiveSource::open(&cfg.root)?,
        renderer: Renderer::new(cfg.opts.clone()),
        own: OwnStats::default(),
        spare: Vec::new(),
    };
    let first = lp.step(0)?;
    for m in lp.src.missing() {
        eprintln!("irqlab: not exposed (cannot read): {m}");
    }
    let listener = TcpListener::bind(cfg.listen)
        .with_context(|| format!("cannot listen on {}", cfg.listen))?;
    let addr = listener
        .local_addr()
        .context("listening socket has no address")?;
    let latest = Arc::new(http::Latest::new(first));
    http::spawn(listener, Arc::clone(&latest), WORKERS)?;
    ready(addr);
    let start = Instant::now();
    let mut ticker = Ticker::new(cfg.interval);
    loop {
        if cfg
            .duration
            .is_some_and(|d| start.elapsed() + cfg.interval > d)
        {
            if let Some(d) = cfg.duration {
                std::thread::sleep(d.saturating_sub(start.elapsed()));
            }
            return Ok(());
        }
        ticker.wait();
        match lp.step(latest.scrapes()) {
            Ok(body) => {
                if let Some(old) = latest.publish(body) {
                    lp.spare = old;
                }
            }
            // Keep serving the last good body; say why it is not renewed.
            Err(e) => eprintln!("irqlab: sample failed, serving the previous one: {e:#}"),
        }
    }
}
