//! `irqlab serve`: a Prometheus text endpoint at `/metrics` answered from
//! the latest sample. One thread samples on drift-free ticks (the interval
//! does not depend on scrapes) and renders the body once per sample;
//! the `http` event loop hands that body to every scrape, so concurrent
//! scrapes never re-read `/proc`, and slow or idle clients never hold up
//! a scrape (see `http`).
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
use crate::sampler::{Stop, Ticker};
use anyhow::Context;
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeValLike;
pub use options::{Naming, Options, PerCpu};
use render::{OwnStats, Renderer};
use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Descriptors kept free beside the connections: the files sampling
/// keeps open or opens, the listener, stdio.
pub const FD_RESERVE: u64 = 256;

/// A serve run.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub root: PathBuf,
    pub listen: SocketAddr,
    pub interval: Duration,
    /// Stop after this long (tests, bounded runs); `None` = until killed.
    pub duration: Option<Duration>,
    /// Open connections at most (lowered to what the descriptor limit
    /// allows).
    pub max_connections: usize,
    pub opts: Options,
}

/// Sampling state: the source, the renderer and irqlab's own counters.
struct Loop {
    src: LiveSource,
    renderer: Renderer,
    own: OwnStats,
    spare: Vec<u8>,
    /// CPUs the first sample's files list (for the `--cpus` warning).
    present: BTreeSet<u32>,
}

impl Loop {
    /// Sample and render a new body.
    fn step(&mut self, scrapes: u64) -> anyhow::Result<Vec<u8>> {
        let meter = CostMeter::start();
        let s = self.src.next_sample()?;
        if self.own.samples == 0 {
            crate::filter_warnings::cpus_of(s.snap(), &mut self.present);
        }
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

/// Raise the soft descriptor limit to the hard one and return the
/// connection cap it allows: `want`, or fewer when the limit leaves less
/// than that beside [`FD_RESERVE`]. The second value is the (soft) limit
/// in force.
pub fn connection_cap(want: usize) -> (usize, u64) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((mut soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return (want.max(1), 0);
    };
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        soft = hard;
    }
    let room = usize::try_from(soft.saturating_sub(FD_RESERVE)).unwrap_or(usize::MAX);
    (room.min(want).max(1), soft)
}

/// Sample once, listen, then keep sampling until `duration`, SIGINT or
/// SIGTERM (or forever). `ready` gets the bound address (port 0 picks a
/// free one), the interrupt rows the filters kept in the first sample
/// (`None` without `/proc/interrupts`) and the CPUs its files list.
/// Returns the signal that ended the run, if any.
pub fn run(
    cfg: ServeConfig,
    ready: impl FnOnce(SocketAddr, Option<usize>, &BTreeSet<u32>),
) -> anyhow::Result<Option<i32>> {
    // Before anything else: a background job of a non-interactive shell
    // starts with SIGINT ignored, and this handler replaces that.
    let stop = Stop::install()?;
    let mut lp = Loop {
        src: LiveSource::open(&cfg.root)?,
        renderer: Renderer::new(cfg.opts.clone()),
        own: OwnStats::default(),
        spare: Vec::new(),
        present: BTreeSet::new(),
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
    let (connections, nofile) = connection_cap(cfg.max_connections);
    if connections < cfg.max_connections {
        eprintln!(
            "irqlab: note: at most {connections} connections at once (descriptor limit {nofile})"
        );
    }
    let limits = http::Limits {
        connections,
        ..http::Limits::default()
    };
    let latest = Arc::new(http::Latest::new(first));
    http::spawn(listener, Arc::clone(&latest), limits)?;
    ready(addr, lp.renderer.irq_rows(), &lp.present);
    let start = Instant::now();
    let mut ticker = Ticker::new(cfg.interval);
    loop {
        if cfg
            .duration
            .is_some_and(|d| start.elapsed() + cfg.interval > d)
        {
            let end = start + cfg.duration.unwrap_or_default();
            return Ok(stop.sleep_until(end));
        }
        if let Some(sig) = ticker.wait_stop(&stop) {
            return Ok(Some(sig));
        }
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
