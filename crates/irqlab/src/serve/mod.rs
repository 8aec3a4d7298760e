//! `irqlab serve`: a Prometheus text endpoint at `/metrics`. By default
//! values are read at scrape time: a scrape asks the sampling thread for
//! a read, concurrent scrapes share it, and reads come at most once per
//! minimum interval (so the cost does not grow with the scrape rate).
//! With a fixed interval (cached mode) the thread samples on drift-free
//! ticks instead, and every sample advances the renderer's monotonic
//! sums, but a body is rendered only when a scrape asks for one and the
//! published body is older than the latest sample: between ticks the
//! thread waits for the tick or such a scrape ([`http::Latest::wait_until`]),
//! so a sample nobody scrapes costs no render. Either way a body is
//! rendered at most once per sample and the `http` event loop hands it to
//! every scrape; slow or idle clients never hold up a scrape (see `http`).
//!
//! Owns the run loops of both modes and irqlab's own counters; naming and
//! shaping are in `exposition`/`options`, monotonic sums in `accum`.
//! Knows nothing about clap.

pub mod accum;
pub mod exposition;
pub mod failures;
pub mod gzip;
pub mod http;
pub mod openmetrics;
pub mod options;

use crate::sampler::counters::{CounterSampler, LiveSampleCounters, SampleCountersView};
use crate::sampler::{not_read_yet, End, PacedRun, Stop, Tick};
use anyhow::Context;
use exposition::{OwnStats, Renderer};
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeValLike;
pub use options::{Naming, Options, PerCpu};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6, TcpListener};
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
    pub listen: Listen,
    pub pace: Pace,
    /// Stop after this long (tests, bounded runs); `None` = until killed.
    pub duration: Option<Duration>,
    /// Open connections at most (lowered to what the descriptor limit
    /// allows).
    pub max_connections: usize,
    pub opts: Options,
}

/// Where `serve` listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// This address and port.
    Addr(SocketAddr),
    /// Every address, this port (`:PORT`), as Go's `net.Listen("tcp",
    /// ":PORT")` (node_exporter's `--web.listen-address=":9100"`): one
    /// IPv6 socket on `[::]` that takes IPv4 too (`IPV6_V6ONLY` off,
    /// whatever `net.ipv6.bindv6only` says), or `0.0.0.0` on a kernel
    /// without IPv6.
    AllAddrs(u16),
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Addr(a) => write!(f, "{a}"),
            Listen::AllAddrs(port) => write!(f, ":{port}"),
        }
    }
}

impl Listen {
    /// The listening socket.
    pub fn bind(self) -> std::io::Result<TcpListener> {
        match self {
            Listen::Addr(a) => TcpListener::bind(a),
            Listen::AllAddrs(port) => match dual_stack(port) {
                Some(bound) => bound,
                None => TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)),
            },
        }
    }
}

/// A listening socket on `[::]:port` that takes IPv4 too; `None` when the
/// kernel has no IPv6 or no IPv4-mapped addresses (Go then listens on
/// IPv4 only, as the caller does).
fn dual_stack(port: u16) -> Option<std::io::Result<TcpListener>> {
    use nix::sys::socket::{self as sock, sockopt, AddressFamily, SockFlag, SockType};
    use std::os::fd::AsRawFd;
    let fd = sock::socket(
        AddressFamily::Inet6,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .ok()?;
    sock::setsockopt(&fd, sockopt::Ipv6V6Only, &false).ok()?;
    // as std's and Go's listeners: a restart binds while old connections linger
    let bound = sock::setsockopt(&fd, sockopt::ReuseAddr, &true)
        .and_then(|()| {
            let any = SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, port, 0, 0);
            sock::bind(fd.as_raw_fd(), &sock::SockaddrIn6::from(any))
        })
        .and_then(|()| sock::listen(&fd, sock::Backlog::new(128)?));
    match bound {
        Ok(()) => Some(Ok(TcpListener::from(fd))),
        // IPv6 present but no address to bind it to (disabled)
        Err(nix::errno::Errno::EADDRNOTAVAIL | nix::errno::Errno::EAFNOSUPPORT) => None,
        Err(e) => Some(Err(e.into())),
    }
}

/// When `serve` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// When a scrape asks, at most once per this long.
    Scrape { min_interval: Duration },
    /// Every this long, whatever the scrapes (cached mode).
    Every(Duration),
}

/// Sampling state: the source and what becomes of its samples.
struct Loop {
    src: CounterSampler,
    out: Output,
}

/// The renderer and irqlab's own counters.
struct Output {
    renderer: Renderer,
    own: OwnStats,
    spare: Vec<u8>,
    /// What stderr was told about failed reads.
    failures: failures::FailureLog,
}

impl Loop {
    /// Sample and render a new body (`scrapes`: answered so far).
    fn step(&mut self, scrapes: u64) -> anyhow::Result<Vec<u8>> {
        let s = self.src.next_sample()?;
        self.out.sampled(&s, scrapes);
        let body = self.out.body(s.view());
        // The render of this body is counted in the next one.
        self.out.charge(&s);
        Ok(body)
    }
}

impl Output {
    /// Count a new sample and advance the renderer's sums by it: every
    /// sample, whether or not its body is rendered.
    fn sampled(&mut self, s: &LiveSampleCounters, scrapes: u64) {
        self.own.samples += 1;
        self.own.last_sample_ok = true;
        if let Some(line) = self.failures.recovered() {
            eprintln!("{line}");
        }
        self.own.scrapes = scrapes;
        self.renderer.accumulate(s.view());
    }

    /// Count a failed read (`scrapes`: answered so far): the error
    /// counted and the success gauge at 0 in the next body rendered, which
    /// carries the last good sample's values. Renders nothing.
    fn failed(&mut self, scrapes: u64, e: &anyhow::Error) {
        self.own.sample_errors += 1;
        self.own.last_sample_ok = false;
        self.own.scrapes = scrapes;
        for line in self.failures.failed(Instant::now(), format!("{e:#}")) {
            eprintln!("{line}");
        }
    }

    /// Add the sampling thread's CPU time since the last charge: the
    /// meter of sample `s` starts at the previous one's stop (the
    /// sampler's meters are chained), so reads, renders and waits are
    /// all counted, each once.
    fn charge(&mut self, s: &LiveSampleCounters) {
        self.own.sampling_cpu_ns += s.frame.meter.stop().cpu_ns;
    }

    /// The body of `s`, the sample last passed to [`Output::sampled`].
    fn body(&mut self, s: SampleCountersView) -> Vec<u8> {
        let (cpu_ns, max_rss) = process_usage();
        self.own.process_cpu_ns = cpu_ns;
        self.own.max_rss_bytes = max_rss;
        let mut body = std::mem::take(&mut self.spare);
        self.renderer.write(s, &self.own, &mut body);
        body
    }

    /// Render the body of `s` (read from `read_at` on) and publish it.
    fn publish(&mut self, latest: &http::Latest, s: SampleCountersView, read_at: Instant) {
        let body = self.body(s);
        if let Some(old) = latest.publish(body, read_at) {
            self.spare = old;
        }
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

/// Let the kernel queue up to `connections` connections not yet
/// accepted (at most `net.core.somaxconn`): std's `bind` listens with a
/// backlog of 128, and a burst of more connects than that drops SYNs, so
/// a scraper caught in one waits for its retransmit (1 s). Listening
/// again sets the backlog; on failure std's stays.
fn widen_backlog(listener: &TcpListener, connections: usize) {
    use nix::sys::socket::{listen, Backlog};
    let most = i32::from(Backlog::MAXCONN);
    let n = i32::try_from(connections).unwrap_or(most).min(most);
    if let Ok(backlog) = Backlog::new(n) {
        let _ = listen(listener, backlog);
    }
}

/// Sample once, listen, then keep sampling until `duration`, SIGINT or
/// SIGTERM (or forever). `ready` gets the bound address (port 0 picks a
/// free one) and the first sample, every row as read (what the filter
/// warnings count in).
/// Returns the signal that ended the run, if any.
pub fn run(
    cfg: ServeConfig,
    ready: impl FnOnce(SocketAddr, &irqlab_core::Snapshot),
) -> anyhow::Result<Option<i32>> {
    // Before anything else: a background job of a non-interactive shell
    // starts with SIGINT ignored, and this handler replaces that.
    let stop = Stop::install()?;
    // Not dropped: the run ends with the process, which closes the kept
    // files and returns the memory at once (a close per file and a free
    // per row otherwise); nothing in it acts on drop.
    let mut lp = std::mem::ManuallyDrop::new(Loop {
        src: CounterSampler::open(&cfg.root)?,
        out: Output {
            renderer: Renderer::new(cfg.opts.clone()),
            own: OwnStats::default(),
            spare: Vec::new(),
            failures: failures::FailureLog::default(),
        },
    });
    let read_at = Instant::now();
    let first = lp.step(0)?;
    for m in lp.src.missing() {
        eprintln!("irqlab: note: {}", not_read_yet("exposed", &m));
    }
    let listener = cfg
        .listen
        .bind()
        .with_context(|| format!("cannot listen on {}", cfg.listen))?;
    let addr = listener
        .local_addr()
        .context("listening socket has no address")?;
    let (connections, nofile) = connection_cap(cfg.max_connections);
    widen_backlog(&listener, connections);
    if connections < cfg.max_connections {
        eprintln!(
            "irqlab: note: at most {connections} connections at once (descriptor limit {nofile})"
        );
    }
    let limits = http::Limits {
        connections,
        ..http::Limits::default()
    };
    let min_interval = match cfg.pace {
        Pace::Scrape { min_interval } => Some(min_interval),
        Pace::Every(_) => None,
    };
    let latest = Arc::new(
        http::Latest::new(first, read_at, min_interval)
            .context("cannot make the server's wake-up socket")?,
    );
    http::spawn(listener, Arc::clone(&latest), limits)?;
    // Signals wake the waits below; without that, a scrape-time wait
    // looks for them every `SIGNAL_POLL`.
    let woken = latest.wake_on(&Stop::SIGNALS).ok();
    let look = if woken.is_some() {
        LONG_WAIT
    } else {
        SIGNAL_POLL
    };
    ready(addr, lp.src.latest_view().snap);
    match cfg.pace {
        Pace::Every(interval) => {
            let pace = PacedRun::new(interval, End::of(None, cfg.duration));
            run_cached(&mut lp, &latest, pace, &stop)
        }
        Pace::Scrape { .. } => {
            let pace = PacedRun::new(Duration::ZERO, End::of(None, cfg.duration));
            run_scrape(&mut lp, &latest, pace.deadline(), &stop, look)
        }
    }
}

/// Cached mode: sample on every tick of `pace`; render the latest good
/// sample's body only when a scrape asks for it (while waiting for the
/// next tick), after a failed read as after a good one.
/// Returns the signal that ended the run, if any.
fn run_cached(
    lp: &mut Loop,
    latest: &http::Latest,
    mut pace: PacedRun,
    stop: &Stop,
) -> anyhow::Result<Option<i32>> {
    // The first sample's body is published: until the first tick no
    // scrape asks.
    let mut tick = pace.wait(stop);
    loop {
        match tick {
            Tick::Due => {}
            Tick::End => return Ok(None),
            Tick::Signal(sig) => return Ok(Some(sig)),
        }
        let read_at = Instant::now();
        match lp.src.next_sample() {
            Ok(s) => {
                lp.out.sampled(&s, latest.scrapes());
                lp.out.charge(&s);
            }
            // Keep serving the last good sample's values, with the
            // failure counted (in its body, rendered when a scrape asks
            // as for a good sample); say why they are not renewed.
            Err(e) => lp.out.failed(latest.scrapes(), &e),
        }
        latest.sampled();
        let Some(due) = pace.next_due() else {
            return Ok(None);
        };
        tick = loop {
            match latest.wait_until(due, stop) {
                http::Wait::Asked => {
                    lp.out.publish(latest, lp.src.latest_view(), read_at);
                }
                http::Wait::Due => break Tick::Due,
                http::Wait::Signal(sig) => break Tick::Signal(sig),
            }
        };
    }
}

/// The longest wait for a scrape when signals wake it
/// ([`http::Latest::wake_on`]): an idle server wakes once an hour.
const LONG_WAIT: Duration = Duration::from_secs(3600);

/// The longest wait for a scrape when signals cannot wake it: how late a
/// stop may be seen.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Scrape mode: sample and render when a scrape asks, at most once per
/// minimum interval, until `end`. Waits for a scrape at most `look` at a
/// time. Returns the signal that ended the run, if any.
fn run_scrape(
    lp: &mut Loop,
    latest: &http::Latest,
    end: Option<Instant>,
    stop: &Stop,
    look: Duration,
) -> anyhow::Result<Option<i32>> {
    loop {
        // Wait for a scrape to ask (checking for signals and the end of
        // the run between waits), then for the minimum interval.
        let due = loop {
            if let Some(sig) = stop.caught() {
                return Ok(Some(sig));
            }
            let now = Instant::now();
            if end.is_some_and(|e| now >= e) {
                return Ok(None);
            }
            let wait = end.map_or(look, |e| (e - now).min(look));
            if let Some(due) = latest.wait_asked(wait) {
                break due;
            }
        };
        if let Some(sig) = stop.sleep_until(due) {
            return Ok(Some(sig));
        }
        let read_at = Instant::now();
        match lp.step(latest.scrapes()) {
            Ok(body) => {
                if let Some(old) = latest.publish(body, read_at) {
                    lp.out.spare = old;
                }
            }
            // Keep serving the last good sample's values, with the
            // failure counted; say why they are not renewed.
            Err(e) => {
                lp.out.failed(latest.scrapes(), &e);
                lp.out.publish(latest, lp.src.latest_view(), read_at);
            }
        }
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
