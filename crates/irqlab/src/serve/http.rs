//! A minimal HTTP/1.1 server for `/metrics` that slow or idle clients
//! cannot block: one event loop (`poll(2)` over non-blocking sockets, no
//! thread per connection) accepts, reads request heads and answers them.
//! An HTTP/1.1 request without `Connection: close` keeps its connection
//! for the next request (keep-alive, one request at a time); HTTP/1.0,
//! `Connection: close`, a bad request, a request with a body (never read)
//! or pipelined bytes after a head close it after the answer. Every
//! connection has deadlines ([`Limits`]):
//! to send its whole request head (again for each kept-alive request: an
//! idle one is closed then), then to take its answer; the listener is polled with the connections,
//! so accepting is never starved. Beyond [`Limits::connections`] open
//! connections, the one that has waited longest for its head is evicted
//! (closed) to make room, else the one taking its answer longest, so a
//! well-behaved scraper always gets in. An
//! answer holds its read's body until it is sent: the bodies of older
//! reads that answers hold are kept under a byte budget
//! ([`Limits::held_times`] the latest body, at least
//! [`Limits::held_floor`]), however many clients stop reading; over it
//! the connections holding the oldest bodies are closed first, never
//! those holding the newest of them, so one slow download is never cut
//! (whatever the reads it spans). Heads
//! over [`MAX_HEAD`] bytes get 431, bytes that cannot start a request line
//! (or no complete line by the deadline) 400; after an answer the
//! connection drains briefly before it closes, so that the client reads
//! the answer rather than a reset.
//!
//! Every scrape is answered from [`Latest`], the body of the latest sample:
//! scrapes never read `/proc`. A scrape that needs a new body (scrape-time
//! mode: a read; cached mode: the render of a sample taken since the last
//! body) asks the sampling thread through a socket it polls, waits for
//! the publication, and shares it with the scrapes that asked meanwhile.
//! The `Accept` header picks Prometheus text or OpenMetrics
//! ([`super::openmetrics`]); the OpenMetrics form and the gzip forms
//! ([`super::gzip`]) are made once per published body, for the formats
//! scrapes asked for since the last one (a form nobody asked for before is made on the first scrape
//! that wants it).

use super::openmetrics::{self, Exposition};
use crate::sampler::Stop;
use anyhow::Context;
use nix::errno::Errno;
use nix::poll::{poll, ppoll, PollFd, PollFlags, PollTimeout};
use std::io::{ErrorKind, IoSlice, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Signal handlers that wake the sampling thread ([`Latest::wake_on`]),
/// removed on drop.
#[derive(Debug)]
pub struct SignalWake(Vec<signal_hook::SigId>);

impl Drop for SignalWake {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Longest request head accepted (bytes); a longer one gets 431.
pub const MAX_HEAD: usize = 8192;

/// The bodies of the latest read, shared with the server thread, and the
/// scrapes' requests for a new body: a read (scrape-time mode) or the
/// render of the latest sample (cached mode).
#[derive(Debug)]
pub struct Latest {
    state: Mutex<State>,
    /// A byte is written to `ask.0` when a scrape asks for a body; the
    /// sampling thread polls `ask.1` ([`Latest::wait_asked`],
    /// [`Latest::wait_until`]).
    ask: (UnixStream, UnixStream),
    scrapes: AtomicU64,
    /// At most one read per this long, made when a scrape asks
    /// (`None`: cached mode, samples on a fixed interval).
    min_interval: Option<Duration>,
    /// Written on each publication; the server polls `wake.1`.
    wake: (UnixStream, UnixStream),
    /// Forms scrapes asked for since the last publication ([`WANT_GZ`],
    /// [`WANT_OM`]).
    wanted: AtomicU8,
    /// Threads that gzip a body: the CPUs this process may use, found at
    /// the first gzip (not at start: reading the cgroup's CPU quota costs
    /// ten syscalls a run without a gzip scrape need not pay).
    gzip_threads: std::sync::OnceLock<usize>,
}

/// `wanted` bits: the gzip of Prometheus text, of OpenMetrics (indexed
/// by [`index`]), and the OpenMetrics body itself.
const WANT_GZ: [u8; 2] = [1, 2];
const WANT_OM: u8 = 4;

#[derive(Debug)]
struct State {
    /// The Prometheus-text body and, once asked for, its OpenMetrics form.
    bodies: Bodies,
    /// gzip of each body, made at publication when asked for before.
    gz: [Option<Arc<Vec<u8>>>; 2],
    /// A previous OpenMetrics buffer no scrape holds any more (reused).
    spare_om: Vec<u8>,
    /// Publications so far (failed reads count too).
    generation: u64,
    /// When the read of the current bodies began.
    read_at: Instant,
    /// A scrape asked for a body that is not published yet.
    pending: bool,
    /// Cached mode: a sample newer than the bodies was taken, its body
    /// not rendered yet.
    newer: bool,
}

/// What [`Latest::wait_until`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// A scrape asks for the body of the latest sample.
    Asked,
    /// The deadline came.
    Due,
    /// The stop flag caught this signal.
    Signal(i32),
}

type Bodies = (Arc<Vec<u8>>, Option<Arc<Vec<u8>>>);

impl State {
    /// A publication of a read that began at `read_at` (its bodies are
    /// the latest sample's): true when a scrape was waiting for it.
    fn renew(&mut self, read_at: Instant) -> bool {
        self.generation += 1;
        self.read_at = read_at;
        self.newer = false;
        std::mem::replace(&mut self.pending, false)
    }
}

/// Index of `format` in [`State::gz`] and [`WANT_GZ`].
fn index(format: Exposition) -> usize {
    match format {
        Exposition::Prometheus => 0,
        Exposition::OpenMetrics => 1,
    }
}

/// The OpenMetrics form of `body`, written into `buf` (a reused buffer).
fn to_openmetrics(body: &[u8], mut buf: Vec<u8>) -> Arc<Vec<u8>> {
    openmetrics::convert(body, &mut buf);
    Arc::new(buf)
}

/// What a `/metrics` scrape gets now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// The current bodies.
    Now,
    /// The bodies published after this generation.
    After(u64),
}

impl Latest {
    /// Bodies of a first read that began at `read_at`; `min_interval`
    /// `Some` reads at scrape time (see [`Latest::scrape`]).
    pub fn new(
        body: Vec<u8>,
        read_at: Instant,
        min_interval: Option<Duration>,
    ) -> std::io::Result<Latest> {
        let wake = UnixStream::pair()?;
        let ask = UnixStream::pair()?;
        for end in [&wake.0, &wake.1, &ask.0, &ask.1] {
            end.set_nonblocking(true)?;
        }
        Ok(Latest {
            state: Mutex::new(State {
                bodies: (Arc::new(body), None),
                gz: [None, None],
                spare_om: Vec::new(),
                generation: 0,
                read_at,
                pending: false,
                newer: false,
            }),
            ask,
            scrapes: AtomicU64::new(0),
            min_interval,
            wake,
            wanted: AtomicU8::new(0),
            gzip_threads: std::sync::OnceLock::new(),
        })
    }

    fn gzip_threads(&self) -> usize {
        *self
            .gzip_threads
            .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Publish a new Prometheus-text body read from `read_at` on (the
    /// OpenMetrics and gzip forms scrapes asked for since the last
    /// publication are made here); returns the previous one's buffer when
    /// no scrape still holds it (for reuse).
    pub fn publish(&self, body: Vec<u8>, read_at: Instant) -> Option<Vec<u8>> {
        let wanted = self.wanted.swap(0, Ordering::Relaxed);
        let om = (wanted & (WANT_OM | WANT_GZ[1]) != 0).then(|| {
            let spare = std::mem::take(&mut self.lock().spare_om);
            to_openmetrics(&body, spare)
        });
        let gz = [
            (wanted & WANT_GZ[0] != 0)
                .then(|| self.gzip(&body))
                .flatten(),
            om.as_ref()
                .filter(|_| wanted & WANT_GZ[1] != 0)
                .and_then(|om| self.gzip(om)),
        ];
        let (old, waiting) = {
            let mut g = self.lock();
            g.gz = gz;
            let waiting = g.renew(read_at);
            let old = std::mem::replace(&mut g.bodies, (Arc::new(body), om));
            if let Some(buf) = old.1.and_then(|o| Arc::try_unwrap(o).ok()) {
                g.spare_om = buf;
            }
            (old.0, waiting)
        };
        self.wake_waiting(waiting);
        Arc::try_unwrap(old).ok()
    }

    fn gzip(&self, body: &[u8]) -> Option<Arc<Vec<u8>>> {
        super::gzip::gzip(body, self.gzip_threads()).map(Arc::new)
    }

    /// Cached mode: a sample was taken and its body is not rendered yet;
    /// a scrape from now on asks for it ([`Latest::scrape`]).
    pub fn sampled(&self) {
        self.lock().newer = true;
    }

    /// Wake the server for the scrapes waiting for a body: with a minimum
    /// interval after every read; in cached mode only when a scrape asked
    /// for this one (`asked`), so that a sample nobody scraped costs no
    /// wake-up (a write here, a poll and two reads in the server).
    fn wake_waiting(&self, asked: bool) {
        if self.min_interval.is_some() || asked {
            let _ = (&self.wake.0).write(&[1]);
        }
    }

    /// Where a `/metrics` scrape arriving `now` is answered from. A
    /// scrape joins a body already asked for. In cached mode it gets the
    /// current bodies unless a newer sample was taken, whose body it asks
    /// for. With a minimum interval it gets the current bodies while they
    /// are younger than half the minimum interval; else asks for a read
    /// (which begins no sooner than the minimum interval after the last
    /// one, so a scrape waits at most half of it).
    pub fn scrape(&self, now: Instant) -> Freshness {
        let mut g = self.lock();
        if g.pending {
            return Freshness::After(g.generation);
        }
        let current = match self.min_interval {
            None => !g.newer,
            Some(min) => now.saturating_duration_since(g.read_at) < min / 2,
        };
        if current {
            return Freshness::Now;
        }
        g.pending = true;
        let _ = (&self.ask.0).write(&[1]);
        Freshness::After(g.generation)
    }

    /// Publications so far.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Make each of `signals` also wake the sampling thread's waits (a
    /// byte on the asking socket, written by the signal handler after the
    /// [`Stop`] flag is set), so that a wait needs no timeout to see a
    /// stop: a signal caught just before a wait begins is then seen at
    /// once, not at its end. Undone when the returned guard drops.
    pub fn wake_on(&self, signals: &[i32]) -> std::io::Result<SignalWake> {
        let mut wake = SignalWake(Vec::new());
        for &sig in signals {
            let end = self.ask.0.try_clone()?;
            wake.0
                .push(signal_hook::low_level::pipe::register(sig, end)?);
        }
        Ok(wake)
    }

    /// Wait up to `timeout` for a scrape to ask for a read; then the
    /// earliest time it may begin (the last read + the minimum interval).
    pub fn wait_asked(&self, timeout: Duration) -> Option<Instant> {
        let min = self.min_interval?;
        if !self.lock().pending {
            self.poll_ask(timeout);
        }
        let g = self.lock();
        g.pending.then(|| g.read_at + min)
    }

    /// Cached mode: wait until `due` for a scrape to ask for the body of
    /// the latest sample; one `ppoll` on the asking socket, which a
    /// signal `stop` catches interrupts (a signal caught in the instant
    /// before the call is seen at `due`, as [`Stop::sleep_until`] does).
    pub fn wait_until(&self, due: Instant, stop: &Stop) -> Wait {
        loop {
            if let Some(sig) = stop.caught() {
                return Wait::Signal(sig);
            }
            if self.lock().pending {
                return Wait::Asked;
            }
            let now = Instant::now();
            if due <= now {
                return Wait::Due;
            }
            if !self.poll_ask(due - now) {
                // Cannot poll: sleep to the deadline.
                return match stop.sleep_until(due) {
                    Some(sig) => Wait::Signal(sig),
                    None => Wait::Due,
                };
            }
        }
    }

    /// Wait up to `timeout` for the asking socket, then discard what it
    /// holds; false when it cannot be polled. A caught signal ends the
    /// wait early.
    fn poll_ask(&self, timeout: Duration) -> bool {
        let mut fds = [PollFd::new(self.ask.1.as_fd(), PollFlags::POLLIN)];
        let left = nix::sys::time::TimeSpec::from_duration(timeout);
        match ppoll(&mut fds, Some(left), None) {
            Ok(0) | Err(Errno::EINTR) => true,
            Ok(_) => {
                let mut sink = [0u8; 64];
                while matches!((&self.ask.1).read(&mut sink), Ok(n) if n > 0) {}
                true
            }
            Err(_) => false,
        }
    }

    /// The current Prometheus-text body (shared, not copied).
    pub fn body(&self) -> Arc<Vec<u8>> {
        self.body_as(Exposition::Prometheus, false).0
    }

    /// The current body in `format` (shared, not copied), gzipped (true)
    /// when `gzip` asks for it. A form the current read does not have yet
    /// is made on this first call and kept for the scrapes after.
    pub fn body_as(&self, format: Exposition, gzip: bool) -> (Arc<Vec<u8>>, bool) {
        let (body, gzip, _) = self.body_of(format, gzip);
        (body, gzip)
    }

    /// [`Latest::body_as`], and the generation of the read it is of.
    fn body_of(&self, format: Exposition, gzip: bool) -> (Arc<Vec<u8>>, bool, u64) {
        let i = index(format);
        self.want(format, gzip);
        let (plain, text, generation) = {
            let g = self.lock();
            if gzip {
                if let Some(z) = g.gz.get(i).and_then(|z| z.as_ref()) {
                    return (Arc::clone(z), true, g.generation);
                }
            }
            let plain = match format {
                Exposition::Prometheus => Some(Arc::clone(&g.bodies.0)),
                Exposition::OpenMetrics => g.bodies.1.clone(),
            };
            (plain, Arc::clone(&g.bodies.0), g.generation)
        };
        // A form this body does not have yet (the first scrape that wants
        // it since the read): made now, outside the lock, and kept for the
        // scrapes after; a scraper that accepts gzip never gets a plain
        // body many times the size.
        let plain = match plain {
            Some(p) => p,
            None => {
                let om = to_openmetrics(&text, Vec::new());
                self.keep(&text, om, |g| &mut g.bodies.1)
            }
        };
        if !gzip {
            return (plain, false, generation);
        }
        match self.gzip(&plain) {
            Some(z) => (self.keep(&text, z, |g| &mut g.gz[i]), true, generation),
            None => (plain, false, generation),
        }
    }

    /// Keep `made` in the slot `slot` of the bodies read as `text`, unless
    /// that read was replaced meanwhile or another scrape kept one first
    /// (then that one is returned).
    fn keep(
        &self,
        text: &Arc<Vec<u8>>,
        made: Arc<Vec<u8>>,
        slot: impl FnOnce(&mut State) -> &mut Option<Arc<Vec<u8>>>,
    ) -> Arc<Vec<u8>> {
        let mut g = self.lock();
        if !Arc::ptr_eq(&g.bodies.0, text) {
            return made;
        }
        Arc::clone(slot(&mut g).get_or_insert(made))
    }

    /// Make `format` (and its gzip form, with `gzip`) at the next
    /// publication, and the ones after as long as scrapes keep asking.
    pub fn want(&self, format: Exposition, gzip: bool) {
        let mut bits = if gzip { WANT_GZ[index(format)] } else { 0 };
        if format == Exposition::OpenMetrics {
            bits |= WANT_OM;
        }
        self.wanted.fetch_or(bits, Ordering::Relaxed);
    }

    /// `/metrics` requests answered so far.
    pub fn scrapes(&self) -> u64 {
        self.scrapes.load(Ordering::Relaxed)
    }

    /// Discard the wake-up bytes.
    fn drain_wake(&self) {
        let mut sink = [0u8; 64];
        while matches!((&self.wake.1).read(&mut sink), Ok(n) if n > 0) {}
    }
}

/// Open connections at most (the default cap of [`Limits::connections`];
/// `serve` lowers it to what its descriptor limit allows).
pub const MAX_CONNECTIONS: usize = 4096;

/// Bounds of the server: every connection ends within
/// `head + write + linger`, at most `connections` are open, and the
/// answers being written hold, beside the latest read's bodies, older
/// ones of at most `held_times` × the latest body (at least `held_floor`)
/// or a single older body.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at most; a new one beyond it evicts the connection
    /// that has waited longest for its request head, else the one taking
    /// its answer longest (or is refused when every connection waits for
    /// a read).
    pub connections: usize,
    /// Time from accept to the end of the request head.
    pub head: Duration,
    /// Time the client has to take the whole answer.
    pub write: Duration,
    /// Each answer holds its read's body until it is sent, so clients
    /// that take theirs slowly (or never) would hold a body per read for
    /// up to `write` (a body per connection). The bodies of reads older
    /// than the latest that answers hold may take this many times the
    /// latest Prometheus-text body's bytes (or `held_floor`, if more);
    /// over that, the connections writing the oldest are closed, oldest
    /// body first, until the rest fit. The newest of them is always kept:
    /// a lone slow reader keeps its body whatever the reads it spans.
    pub held_times: usize,
    /// The least byte budget of older bodies (see `held_times`).
    pub held_floor: usize,
    /// After the answer, time to discard what the client still sends
    /// before closing (closing with unread input would reset the
    /// connection and could destroy the answer in flight).
    pub linger: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: MAX_CONNECTIONS,
            head: Duration::from_secs(5),
            write: Duration::from_secs(30),
            linger: Duration::from_secs(1),
            held_times: 4,
            held_floor: 4 << 20,
        }
    }
}

/// Start the server thread on `listener`; it serves until the process
/// exits.
pub fn spawn(listener: TcpListener, latest: Arc<Latest>, limits: Limits) -> anyhow::Result<()> {
    listener
        .set_nonblocking(true)
        .context("cannot make the listening socket non-blocking")?;
    let server = Server {
        listener,
        latest,
        limits,
        conns: Vec::new(),
        paused_until: None,
        budget_checked: 0,
    };
    std::thread::Builder::new()
        .name("irqlab-http".into())
        .spawn(move || server.run())?;
    Ok(())
}

/// Where a connection is.
enum Phase {
    /// Reading the request head into `buf`.
    Head,
    /// Writing `out` (status line and headers) then `body`; `sent` bytes
    /// of both so far. With `keep`, the connection then waits for the
    /// next request.
    Write {
        out: Vec<u8>,
        body: Option<Arc<Vec<u8>>>,
        sent: usize,
        keep: bool,
        /// The generation of the read whose body it is (`/metrics`).
        read: Option<u64>,
    },
    /// Answer sent and the write side shut: discarding what the client
    /// still sends until it closes or the linger ends.
    Drain,
    /// A `/metrics` request (its head in `buf`) waiting for the read
    /// published after generation `after`; `pipelined` when bytes came
    /// after the head.
    Wait { after: u64, pipelined: bool },
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// When it started waiting for its current request head: eviction
    /// picks the oldest still in `Head`.
    since: Instant,
    /// When the current phase ends.
    deadline: Instant,
    phase: Phase,
    closed: bool,
}

struct Server {
    listener: TcpListener,
    latest: Arc<Latest>,
    limits: Limits,
    conns: Vec<Conn>,
    /// Accepting is paused until then (out of descriptors, nothing to evict).
    paused_until: Option<Instant>,
    /// The generation the older bodies' budget was last checked at (they
    /// only grow when a read is published).
    budget_checked: u64,
}

/// How long the event loop may sleep: until the nearest connection
/// deadline, at most 10 ms while accepting is paused (to resume it), and
/// with no connection open and accepting, until a socket is ready (an
/// idle server makes no wake-up of its own: each would cost a sampler
/// at a 1-s pace about as much as a sample's parsing).
fn poll_timeout(conns: &[Conn], accepting: bool, now: Instant) -> PollTimeout {
    let cap = (!accepting).then_some(Duration::from_millis(10));
    let nearest = conns
        .iter()
        .map(|c| c.deadline.saturating_duration_since(now))
        .min();
    let wait = match (nearest, cap) {
        (Some(n), Some(c)) => n.min(c),
        (Some(d), None) | (None, Some(d)) => d,
        (None, None) => return PollTimeout::NONE,
    };
    // Rounded up: a timeout rounded down to 0 ms would spin until the
    // deadline.
    PollTimeout::from(u16::try_from(wait.as_millis().saturating_add(1)).unwrap_or(u16::MAX))
}

impl Server {
    fn run(mut self) {
        let mut revents: Vec<PollFlags> = Vec::new();
        loop {
            let now = Instant::now();
            let accepting = self.paused_until.is_none_or(|t| now >= t);
            let timeout = poll_timeout(&self.conns, accepting, now);
            {
                let mut fds = Vec::with_capacity(self.conns.len() + 1);
                let listen = if accepting {
                    PollFlags::POLLIN
                } else {
                    PollFlags::empty()
                };
                fds.push(PollFd::new(self.listener.as_fd(), listen));
                fds.push(PollFd::new(self.latest.wake.1.as_fd(), PollFlags::POLLIN));
                fds.extend(
                    self.conns
                        .iter()
                        .map(|c| PollFd::new(c.stream.as_fd(), c.interest())),
                );
                match poll(&mut fds, timeout) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                }
                revents.clear();
                revents.extend(
                    fds.iter()
                        .map(|f| f.revents().unwrap_or(PollFlags::POLLERR)),
                );
            }
            let now = Instant::now();
            for (c, ev) in self.conns.iter_mut().zip(revents.iter().skip(2)) {
                if matches!(c.phase, Phase::Wait { .. }) {
                    // Gone while waiting for its read.
                    if ev.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
                        c.closed = true;
                    }
                } else if !ev.is_empty() {
                    c.progress(&self.latest, &self.limits, now);
                }
            }
            if revents.get(1).is_some_and(|e| !e.is_empty()) {
                self.latest.drain_wake();
                let generation = self.latest.generation();
                for c in &mut self.conns {
                    if matches!(c.phase, Phase::Wait { after, .. } if after < generation) {
                        c.finish_wait(&self.latest, &self.limits, now);
                    }
                }
            }
            for c in &mut self.conns {
                if !c.closed && now >= c.deadline {
                    c.expire(&self.latest, &self.limits, now);
                }
            }
            self.close_over_budget();
            self.conns.retain(|c| !c.closed);
            if revents.first().is_some_and(|e| !e.is_empty()) {
                self.accept(now);
            }
        }
    }

    /// Keep the bodies of older reads that answers hold under the budget
    /// ([`Limits::held_times`]): close the connections writing the oldest
    /// first, never those writing the newest of them. Checked once per
    /// publication.
    fn close_over_budget(&mut self) {
        let newest = self.latest.generation();
        if newest == self.budget_checked {
            return;
        }
        self.budget_checked = newest;
        let latest = self.latest.body().len();
        let budget = latest
            .saturating_mul(self.limits.held_times)
            .max(self.limits.held_floor);
        let cut = over_budget(
            self.conns.iter().filter_map(|c| c.older_body(newest)),
            budget,
        );
        if cut.is_empty() {
            return;
        }
        for c in &mut self.conns {
            if c.older_body(newest)
                .is_some_and(|(_, id, _)| cut.contains(&id))
            {
                c.closed = true;
            }
        }
    }

    /// Accept what is waiting (a bounded batch, so that the connections
    /// already open are served in between).
    fn accept(&mut self, now: Instant) {
        for _ in 0..256 {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if self.conns.len() >= self.limits.connections.max(1) && !self.evict() {
                        // Every connection is being answered: refuse.
                        drop(stream);
                        continue;
                    }
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let mut c = Conn {
                        stream,
                        buf: Vec::new(),
                        since: now,
                        deadline: now + self.limits.head,
                        phase: Phase::Head,
                        closed: false,
                    };
                    // Its head is usually there already.
                    c.progress(&self.latest, &self.limits, now);
                    if !c.closed {
                        self.conns.push(c);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(nix::libc::EMFILE | nix::libc::ENFILE)
                    ) =>
                {
                    // Out of descriptors: make room, or wait a moment.
                    if !self.evict() {
                        self.paused_until = Some(now + Duration::from_millis(10));
                        return;
                    }
                }
                // An aborted connection and the like: try the next one.
                Err(_) => {}
            }
        }
    }

    /// Close the connection that has waited longest for its request head,
    /// else one that is only being drained, else the one that has been
    /// taking its answer longest (a client that stops reading would hold
    /// its place until the answer deadline). False when every connection
    /// waits for a read.
    fn evict(&mut self) -> bool {
        let pick = |head: bool| {
            self.conns
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.closed && matches!(c.phase, Phase::Head) == head)
                .filter(|(_, c)| head || matches!(c.phase, Phase::Drain))
                .min_by_key(|(_, c)| c.since)
                .map(|(i, _)| i)
        };
        // every answer has the same deadline from its start
        let writing = || {
            self.conns
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.closed && matches!(c.phase, Phase::Write { .. }))
                .min_by_key(|(_, c)| c.deadline)
                .map(|(i, _)| i)
        };
        match pick(true).or_else(|| pick(false)).or_else(writing) {
            Some(i) => {
                self.conns.swap_remove(i);
                true
            }
            None => false,
        }
    }
}

impl Conn {
    /// The body it is writing when that is of a read older than
    /// generation `newest`: (its read's generation, its identity, bytes).
    fn older_body(&self, newest: u64) -> Option<(u64, usize, usize)> {
        match &self.phase {
            Phase::Write {
                read: Some(g),
                body: Some(b),
                ..
            } if *g < newest => Some((*g, Arc::as_ptr(b) as usize, b.len())),
            _ => None,
        }
    }

    fn interest(&self) -> PollFlags {
        match self.phase {
            Phase::Head | Phase::Drain => PollFlags::POLLIN,
            Phase::Write { .. } => PollFlags::POLLOUT,
            Phase::Wait { .. } => PollFlags::empty(),
        }
    }

    /// Do what the socket allows now.
    fn progress(&mut self, latest: &Latest, limits: &Limits, now: Instant) {
        if matches!(self.phase, Phase::Head) {
            self.read_head(latest, limits, now);
        }
        if matches!(self.phase, Phase::Write { .. }) && !self.closed {
            match self.write_some() {
                Ok(true) if matches!(self.phase, Phase::Write { keep: true, .. }) => {
                    // Keep-alive: wait for the next request, under the
                    // same head deadline (an idle one is closed then).
                    self.phase = Phase::Head;
                    self.since = now;
                    self.deadline = now + limits.head;
                }
                Ok(true) => {
                    // Shut the write side: the client sees the end of the
                    // answer; then drain its input before closing.
                    let _ = self.stream.shutdown(Shutdown::Write);
                    self.phase = Phase::Drain;
                    self.deadline = now + limits.linger;
                }
                Ok(false) => {}
                Err(_) => self.closed = true,
            }
        }
        if matches!(self.phase, Phase::Drain) && !self.closed {
            let mut sink = [0u8; 4096];
            loop {
                match self.stream.read(&mut sink) {
                    Ok(0) => break self.closed = true,
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => break self.closed = true,
                }
            }
        }
    }

    fn read_head(&mut self, latest: &Latest, limits: &Limits, now: Instant) {
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    // The client stopped sending before the end of its head.
                    if self.buf.is_empty() {
                        self.closed = true;
                    } else {
                        self.reply(Reply::error(Status::BadRequest), limits, now);
                    }
                    return;
                }
                Ok(n) => {
                    let from = self.buf.len().saturating_sub(3);
                    let room = (MAX_HEAD + 1).saturating_sub(self.buf.len());
                    self.buf.extend_from_slice(&chunk[..n.min(room)]);
                    match head_state(&self.buf, from) {
                        HeadState::More => continue,
                        HeadState::TooLarge => {
                            self.reply(Reply::error(Status::HeadTooLarge), limits, now);
                            return;
                        }
                        HeadState::Garbage => {
                            self.reply(Reply::error(Status::BadRequest), limits, now);
                            return;
                        }
                        HeadState::Complete(end) => {
                            let pipelined = end != self.buf.len();
                            if is_scrape(&self.buf[..end]) {
                                let head = &self.buf[..end];
                                // Made by the read this scrape may wait for.
                                latest.want(openmetrics::negotiate(head), accepts_gzip(head));
                                if let Freshness::After(after) = latest.scrape(now) {
                                    self.buf.truncate(end);
                                    self.phase = Phase::Wait { after, pipelined };
                                    self.deadline = now + limits.write;
                                    return;
                                }
                            }
                            let head = &self.buf[..end];
                            let mut reply = answer(head, latest);
                            // Bytes after the head (a pipelined request) are
                            // not served: answer this one and close.
                            reply.keep &= end == self.buf.len();
                            self.reply(reply, limits, now);
                            return;
                        }
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.closed = true;
                    return;
                }
            }
        }
    }

    /// The phase's deadline passed.
    fn expire(&mut self, latest: &Latest, limits: &Limits, now: Instant) {
        match self.phase {
            // Silent since it connected: nothing to answer.
            Phase::Head if self.buf.is_empty() => self.closed = true,
            Phase::Head => {
                // A request line that is complete and valid: the rest of
                // its head came too late (408); otherwise not a request.
                let status = if request_line(&self.buf).is_some() {
                    Status::Timeout
                } else {
                    Status::BadRequest
                };
                self.reply(Reply::error(status), limits, now);
                // Answered at once if the socket takes it; else within
                // `write`.
                self.progress(latest, limits, now);
            }
            // No read came in time: the last bodies.
            Phase::Wait { .. } => self.finish_wait(latest, limits, now),
            Phase::Write { .. } | Phase::Drain => self.closed = true,
        }
    }

    /// Answer a waiting scrape from the current bodies.
    fn finish_wait(&mut self, latest: &Latest, limits: &Limits, now: Instant) {
        let Phase::Wait { pipelined, .. } = self.phase else {
            return;
        };
        let mut reply = answer(&self.buf, latest);
        reply.keep &= !pipelined;
        self.reply(reply, limits, now);
        self.progress(latest, limits, now);
    }

    fn reply(&mut self, r: Reply, limits: &Limits, now: Instant) {
        let out = r.head();
        self.buf = Vec::new();
        self.phase = Phase::Write {
            out,
            body: (!r.head_only).then_some(r.body),
            sent: 0,
            keep: r.keep,
            read: r.read.filter(|_| !r.head_only),
        };
        self.deadline = now + limits.write;
    }

    /// Write what the socket takes; true once everything is sent.
    fn write_some(&mut self) -> std::io::Result<bool> {
        let Conn { stream, phase, .. } = self;
        let Phase::Write {
            out, body, sent, ..
        } = phase
        else {
            return Ok(true);
        };
        let body: &[u8] = body.as_deref().map_or(&[], |b| b.as_slice());
        loop {
            if *sent >= out.len() + body.len() {
                return Ok(true);
            }
            let r = match out.get(*sent..) {
                Some(rest) if !rest.is_empty() => {
                    stream.write_vectored(&[IoSlice::new(rest), IoSlice::new(body)])
                }
                _ => stream.write(body.get(*sent - out.len()..).unwrap_or(&[])),
            };
            match r {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => *sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Of the older bodies `held` (generation, identity, bytes; a body once
/// per connection writing it), the ones to drop so that the rest take at
/// most `budget` bytes: oldest first, never the newest.
fn over_budget(held: impl Iterator<Item = (u64, usize, usize)>, budget: usize) -> Vec<usize> {
    let mut bodies: Vec<_> = held.collect();
    bodies.sort_unstable();
    bodies.dedup_by_key(|&mut (_, id, _)| id);
    let mut total: usize = bodies.iter().map(|&(_, _, len)| len).sum();
    let mut cut = Vec::new();
    let keep_newest = bodies.len().saturating_sub(1);
    for &(_, id, len) in bodies.iter().take(keep_newest) {
        if total <= budget {
            break;
        }
        total -= len;
        cut.push(id);
    }
    cut
}

/// Statuses the server answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    Timeout,
    HeadTooLarge,
}

impl Status {
    fn line(self) -> &'static str {
        match self {
            Status::Ok => "200 OK",
            Status::BadRequest => "400 Bad Request",
            Status::NotFound => "404 Not Found",
            Status::MethodNotAllowed => "405 Method Not Allowed",
            Status::Timeout => "408 Request Timeout",
            Status::HeadTooLarge => "431 Request Header Fields Too Large",
        }
    }
}

/// An answer: status, content type, body (shared, not copied), whether
/// only the head is sent (`HEAD`) and whether the connection stays open
/// for another request.
struct Reply {
    status: Status,
    ctype: &'static str,
    body: Arc<Vec<u8>>,
    head_only: bool,
    keep: bool,
    /// The body is gzip (`Content-Encoding: gzip`).
    gzip: bool,
    /// The generation of the read the body is of (`/metrics`).
    read: Option<u64>,
}

impl Reply {
    fn text(status: Status, body: &str) -> Reply {
        Reply {
            status,
            ctype: "text/plain",
            body: Arc::new(body.as_bytes().to_vec()),
            head_only: false,
            keep: false,
            gzip: false,
            read: None,
        }
    }

    /// The status line and headers sent before the body.
    fn head(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(160);
        let len = self.body.len();
        let _ = write!(
            out,
            "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {len}\r\nConnection: {}\r\n{}\r\n",
            self.status.line(),
            self.ctype,
            if self.keep { "keep-alive" } else { "close" },
            if self.status == Status::MethodNotAllowed {
                "Allow: GET, HEAD\r\n"
            } else if self.gzip {
                "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"
            } else {
                ""
            }
        );
        out
    }

    fn error(status: Status) -> Reply {
        let body = match status {
            Status::HeadTooLarge => "request head over 8 KiB\n",
            Status::Timeout => "request head not complete in time\n",
            _ => "bad request\n",
        };
        Reply::text(status, body)
    }
}

/// The bytes the whole of a complete request head (`head`, up to and
/// with its blank line, nothing after it) is answered with: status line,
/// headers and, unless it is a `HEAD`, the body. The server sends the
/// same bytes, in as many writes as the socket takes.
pub fn response(head: &[u8], latest: &Latest) -> Vec<u8> {
    let r = answer(head, latest);
    let mut out = r.head();
    if !r.head_only {
        out.extend_from_slice(&r.body);
    }
    out
}

/// What the bytes of a request received so far call for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadState {
    /// Not a whole head yet, and it may still become one.
    More,
    /// A whole head: its blank line ends at this offset.
    Complete(usize),
    /// Over [`MAX_HEAD`] bytes without the end of the head (431).
    TooLarge,
    /// Bytes that cannot start a request line (400).
    Garbage,
}

/// The state of `buf`, every byte of a request received so far (at most
/// [`MAX_HEAD`] + 1: the server keeps no more); the end of the head is
/// searched from `from` (the bytes before it were searched already).
pub fn head_state(buf: &[u8], from: usize) -> HeadState {
    if let Some(end) = head_end(buf, from) {
        HeadState::Complete(end)
    } else if buf.len() > MAX_HEAD {
        HeadState::TooLarge
    } else if !could_be_request(buf) {
        HeadState::Garbage
    } else {
        HeadState::More
    }
}

/// The answer to a complete request head.
fn answer(head: &[u8], latest: &Latest) -> Reply {
    let mut r = match request_line(head) {
        // a method over 16 characters or not a token (docs/serve.md,
        // "Garbage"), whether the head came in one read or in many
        Some(_) if !could_be_request(head) => Reply::error(Status::BadRequest),
        None => Reply::error(Status::BadRequest),
        Some((m, _)) if m != "GET" && m != "HEAD" => {
            Reply::text(Status::MethodNotAllowed, "only GET and HEAD\n")
        }
        Some((_, "/metrics")) => {
            latest.scrapes.fetch_add(1, Ordering::Relaxed);
            let format = openmetrics::negotiate(head);
            let (body, gzip, read) = latest.body_of(format, accepts_gzip(head));
            Reply {
                status: Status::Ok,
                ctype: format.content_type(),
                body,
                head_only: false,
                keep: false,
                gzip,
                read: Some(read),
            }
        }
        Some((_, "/")) => Reply {
            ctype: "text/plain; charset=utf-8",
            ..Reply::text(Status::Ok, "irqlab serve: metrics at /metrics\n")
        },
        Some(_) => Reply::text(Status::NotFound, "not found: try /metrics\n"),
    };
    r.head_only = head.starts_with(b"HEAD ");
    r.keep = r.status != Status::BadRequest && keep_alive(head);
    r
}

/// A GET or HEAD of `/metrics`.
fn is_scrape(head: &[u8]) -> bool {
    matches!(request_line(head), Some(("GET" | "HEAD", "/metrics")))
}

/// True when `Accept-Encoding` lists gzip (with a q-value above 0).
fn accepts_gzip(head: &[u8]) -> bool {
    openmetrics::header(head, "accept-encoding").is_some_and(|v| {
        v.split(',').any(|t| {
            let mut parts = t.split(';').map(str::trim);
            let coding = parts.next().unwrap_or("");
            let q_zero = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !q_zero
        })
    })
}

/// True when the client keeps its connection for another request:
/// HTTP/1.1 without `Connection: close` (HTTP/1.0 closes) and without a
/// body ([`has_body`]).
fn keep_alive(head: &[u8]) -> bool {
    let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let line = head.get(..line_end).unwrap_or(head).trim_ascii_end();
    line.ends_with(b" HTTP/1.1")
        && !has_body(head)
        && !openmetrics::header(head, "connection")
            .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")))
}

/// True when a request head announces a body (a `Transfer-Encoding`, or
/// a `Content-Length` other than 0), or cannot be read as text to tell:
/// the server reads no body, so its connection closes after the answer
/// rather than take the body for the next request.
fn has_body(head: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(head) else {
        return true;
    };
    text.split('\n')
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .any(|(k, v)| {
            let k = k.trim();
            k.eq_ignore_ascii_case("transfer-encoding")
                || (k.eq_ignore_ascii_case("content-length") && v.trim() != "0")
        })
}

/// End of the request head (after its blank line) in `buf`, searching
/// from `from`.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    let tail = buf.get(from..)?;
    let crlf = tail
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4);
    let lf = tail.windows(2).position(|w| w == b"\n\n").map(|p| p + 2);
    let end = match (crlf, lf) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    Some(from + end)
}

/// False once the bytes received cannot be the start of a request line
/// `METHOD SP TARGET SP HTTP/1.x`: a control byte or non-ASCII before the
/// line ends, or a method that is not a short token.
fn could_be_request(buf: &[u8]) -> bool {
    let line_end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    let line = buf.get(..line_end).unwrap_or(buf);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().any(|&b| !(0x20..0x7f).contains(&b)) {
        return false;
    }
    let method_len = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
    let token = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
    if method_len > 16 || !line.get(..method_len).unwrap_or(&[]).iter().all(token) {
        return false;
    }
    // A complete first line must be a request line.
    line_end == buf.len() || request_line(buf).is_some()
}

/// Method and path of a request head (`GET /metrics?x HTTP/1.1` ->
/// (`GET`, `/metrics`)), or `None` when it is not a request line. An
/// absolute-form target (`GET http://host:9812/metrics HTTP/1.1`, which
/// RFC 9112 section 3.2.2 says a server must accept) gives its path.
pub fn request_line(head: &[u8]) -> Option<(&str, &str)> {
    let end = head.iter().position(|&b| b == b'\r' || b == b'\n')?;
    let line = std::str::from_utf8(head.get(..end)?).ok()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if !version.starts_with("HTTP/1.") || parts.next().is_some() {
        return None;
    }
    let path = origin_form(target);
    let path = path.split('?').next().unwrap_or(path);
    Some((method, path))
}

/// The path (and query) of a request target: an absolute-form target
/// (`scheme://authority/path?query`) without its scheme and authority
/// (`/` when it has no path); any other form as it is.
fn origin_form(target: &str) -> &str {
    let Some((scheme, rest)) = target.split_once("://") else {
        return target;
    };
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !is_scheme {
        return target;
    }
    match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => &rest[i..],
        _ => "/",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_server_sleeps_until_a_socket_is_ready() {
        let now = Instant::now();
        assert_eq!(poll_timeout(&[], true, now), PollTimeout::NONE);
        // paused accepting is looked at again within about 10 ms
        assert_eq!(poll_timeout(&[], false, now), PollTimeout::from(11u16));
    }

    #[test]
    fn request_lines() {
        assert_eq!(
            request_line(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some(("GET", "/metrics"))
        );
        assert_eq!(
            request_line(b"HEAD /metrics?a=b HTTP/1.0\r\n\r\n"),
            Some(("HEAD", "/metrics"))
        );
        assert_eq!(request_line(b"GET /metrics\r\n\r\n"), None);
        // absolute-form (RFC 9112 3.2.2): the path part
        for (line, path) in [
            (&b"GET http://h/metrics HTTP/1.1\r\n\r\n"[..], "/metrics"),
            (
                b"GET HTTP://h:9812/metrics?x=1 HTTP/1.1\r\n\r\n",
                "/metrics",
            ),
            (b"HEAD https://[::1]:9812/ HTTP/1.1\r\n\r\n", "/"),
            (b"GET http://h HTTP/1.1\r\n\r\n", "/"),
            (b"GET http://h?metrics HTTP/1.1\r\n\r\n", "/"),
        ] {
            let method = if line.starts_with(b"HEAD") {
                "HEAD"
            } else {
                "GET"
            };
            assert_eq!(request_line(line), Some((method, path)), "{line:?}");
        }
        assert!(is_scrape(b"GET http://h/metrics HTTP/1.1\r\n\r\n"));
        assert_eq!(request_line(b"\xff\xfe"), None);
        assert_eq!(request_line(b""), None);
    }

    #[test]
    fn heads_end_at_the_blank_line_and_garbage_is_seen_early() {
        let h = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nrest";
        assert_eq!(head_end(h, 0), Some(h.len() - 4));
        assert_eq!(head_end(h, 20), Some(h.len() - 4));
        assert_eq!(head_end(b"GET / HTTP/1.0\n\n", 0), Some(16));
        assert_eq!(head_end(b"GET /metrics HTTP/1.1\r\n", 0), None);
        // still possibly a request
        for ok in [
            &b"G"[..],
            b"GET /met",
            b"GET /metrics HTTP/1.1\r\nHo",
            b"hello",
        ] {
            assert!(could_be_request(ok), "{ok:?}");
        }
        // never a request
        for bad in [
            &b"\x16\x03\x01"[..],
            b"\x00",
            b"GET /\xff",
            b"AAAAAAAAAAAAAAAAAAAAAAAAAA",
            b"GET /metrics HTTP/1.1 extra\r\n",
            b"GET /metrics\r\n",
            b"(GET) / HTTP/1.1",
        ] {
            assert!(!could_be_request(bad), "{bad:?}");
        }
    }

    /// A whole head in one read with a method that cannot be one got 405
    /// and a kept connection: only a head still incomplete was tested.
    #[test]
    fn a_complete_head_with_a_bad_method_gets_400_and_no_keep_alive() {
        let l = Latest::new(b"a".to_vec(), Instant::now(), None).unwrap();
        for bad in [
            &b"ABCDEFGHIJKLMNOPQRSTUVWXYZ /metrics HTTP/1.1\r\n\r\n"[..],
            b"G(T /metrics HTTP/1.1\r\n\r\n",
            b"GET\x7f /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        ] {
            let r = answer(bad, &l);
            assert!(r.status == Status::BadRequest, "{bad:?}");
            assert!(!r.keep, "{bad:?}");
        }
        let r = answer(b"POST /metrics HTTP/1.1\r\n\r\n", &l);
        assert!(r.status == Status::MethodNotAllowed && r.keep);
        let r = answer(b"ABCDEFGHIJKLMNOP /metrics HTTP/1.1\r\n\r\n", &l);
        assert!(
            r.status == Status::MethodNotAllowed,
            "16 characters is a method"
        );
    }

    #[test]
    fn keep_alive_only_for_http_1_1_without_close() {
        assert!(keep_alive(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(!keep_alive(
            b"GET /metrics HTTP/1.1\r\nConnection: Close\r\n\r\n"
        ));
        assert!(!keep_alive(
            b"GET /metrics HTTP/1.1\r\nconnection: te, close\r\n\r\n"
        ));
        assert!(!keep_alive(b"GET /metrics HTTP/1.0\r\n\r\n"));
    }

    /// The server reads no request body: a request that announces one
    /// closes its connection after the answer (its body is never taken
    /// for the next request); an empty one keeps it.
    #[test]
    fn a_request_with_a_body_is_not_kept_alive() {
        for head in [
            "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
            "GET /metrics HTTP/1.1\r\ncontent-length: 0\r\nContent-Length: 9\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert!(!keep_alive(head.as_bytes()), "{head:?}");
        }
        assert!(!keep_alive(b"GET /metrics HTTP/1.1\r\nX: \xff\r\n\r\n"));
        assert!(keep_alive(
            b"GET /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
        ));
    }

    #[test]
    fn publish_returns_the_unshared_old_buffer() {
        let t = Instant::now();
        let l = Latest::new(b"a".to_vec(), t, None).unwrap();
        let held = l.body();
        assert!(
            l.publish(b"b".to_vec(), t).is_none(),
            "a scrape still holds it"
        );
        drop(held);
        assert_eq!(l.publish(b"c".to_vec(), t), Some(b"b".to_vec()));
        assert_eq!(&**l.body(), b"c");
        assert_eq!(&*l.body_as(Exposition::OpenMetrics, false).0, b"c\n# EOF\n");
    }

    #[test]
    fn scrapes_share_one_read_at_most_once_per_min_interval() {
        let t = Instant::now();
        let min = Duration::from_secs(1);
        let l = Latest::new(b"a".to_vec(), t, Some(min)).unwrap();
        // Young bodies are served as they are.
        assert_eq!(l.scrape(t + min / 4), Freshness::Now);
        // Older than half the interval: a read is asked for, which cannot
        // begin before the interval since the last one.
        assert_eq!(l.scrape(t + min * 3 / 4), Freshness::After(0));
        assert_eq!(l.wait_asked(Duration::ZERO), Some(t + min));
        // A concurrent scrape joins that read, even a young-looking one.
        assert_eq!(l.scrape(t + min / 4), Freshness::After(0));
        l.publish(b"b".to_vec(), t + min);
        assert_eq!(l.generation(), 1);
        assert_eq!(l.scrape(t + min * 5 / 4), Freshness::Now);
        assert_eq!(l.wait_asked(Duration::ZERO), None);
        // Cached mode never waits.
        let c = Latest::new(b"a".to_vec(), t, None).unwrap();
        assert_eq!(c.scrape(t + min * 100), Freshness::Now);
    }

    /// Cached mode: once a sample newer than the bodies is taken, a
    /// scrape asks for its body (and the scrapes meanwhile join it); the
    /// sampling thread's wait returns at once, and the publication wakes
    /// the server. With no newer sample, scrapes get the bodies as they
    /// are and the wait lasts to its deadline.
    #[test]
    fn cached_scrapes_ask_for_the_body_of_a_newer_sample() {
        let t = Instant::now();
        let stop = crate::sampler::Stop::install().unwrap();
        let l = Latest::new(b"a".to_vec(), t, None).unwrap();
        let soon = Instant::now() + Duration::from_millis(30);
        assert_eq!(l.wait_until(soon, &stop), Wait::Due);
        assert!(Instant::now() >= soon);
        l.sampled();
        assert_eq!(l.scrape(t), Freshness::After(0));
        assert_eq!(l.scrape(t), Freshness::After(0));
        let later = Instant::now() + Duration::from_secs(60);
        assert_eq!(l.wait_until(later, &stop), Wait::Asked);
        l.publish(b"b".to_vec(), t);
        let mut b = [0u8; 8];
        assert!(matches!((&l.wake.1).read(&mut b), Ok(n) if n > 0));
        assert_eq!(l.generation(), 1);
        assert_eq!(l.scrape(t), Freshness::Now);
        assert_eq!(&**l.body(), b"b");
        // the ask's byte left behind does not end the next wait early
        let soon = Instant::now() + Duration::from_millis(30);
        assert_eq!(l.wait_until(soon, &stop), Wait::Due);
        // a failed sample's body (the last good values, the failure
        // counted) releases the scrapes waiting for it
        l.sampled();
        assert_eq!(l.scrape(t), Freshness::After(1));
        l.publish(b"b, failed".to_vec(), t);
        assert_eq!(l.scrape(t), Freshness::Now);
    }

    /// In cached mode (no minimum interval) no scrape waits, so a
    /// publication wakes no one: nothing is written to the wake-up socket.
    /// With a minimum interval each publication wakes the server.
    #[test]
    fn publications_wake_the_server_only_when_scrapes_can_wait() {
        let t = Instant::now();
        let pending = |l: &Latest| {
            let mut b = [0u8; 8];
            matches!((&l.wake.1).read(&mut b), Ok(n) if n > 0)
        };
        let cached = Latest::new(b"a".to_vec(), t, None).unwrap();
        cached.publish(b"b".to_vec(), t);
        assert!(!pending(&cached));
        let asked = Latest::new(b"a".to_vec(), t, Some(Duration::from_secs(1))).unwrap();
        asked.publish(b"b".to_vec(), t);
        assert!(pending(&asked));
    }

    #[test]
    fn start_leaves_the_gzip_thread_count_to_the_first_gzip() {
        let t = Instant::now();
        let l = Latest::new(b"x 1\n".repeat(1000), t, None).unwrap();
        l.publish(b"x 2\n".repeat(1000), t);
        assert!(l.body_as(Exposition::Prometheus, false).0.len() > 100);
        assert_eq!(l.gzip_threads.get(), None, "found before any gzip");
        assert!(l.body_as(Exposition::Prometheus, true).1);
        assert!(l.gzip_threads.get().is_some_and(|&n| n >= 1));
    }

    #[test]
    fn gzip_is_made_at_publication_once_asked_for() {
        let t = Instant::now();
        let l = Latest::new(b"x 1\n".repeat(1000), t, None).unwrap();
        // The first gzip request gets it made on demand, and asks for it
        // to be made at the next publication.
        let (b, gz) = l.body_as(Exposition::Prometheus, true);
        assert!(gz && b.len() < 100, "{} bytes", b.len());
        l.publish(b"x 2\n".repeat(1000), t);
        let (z, gz) = l.body_as(Exposition::Prometheus, true);
        assert!(gz && z.len() < 100, "{} bytes", z.len());
        let mut out = String::new();
        flate2::read::GzDecoder::new(z.as_slice())
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "x 2\n".repeat(1000));
        // The same body is reused by every scrape of that read.
        assert!(Arc::ptr_eq(&z, &l.body_as(Exposition::Prometheus, true).0));
        // And the next read is gzipped too, as scrapes keep asking.
        l.publish(b"x 3\n".repeat(1000), t);
        assert!(l.body_as(Exposition::Prometheus, true).1);
        // A form nobody asked for before is made on demand too.
        assert!(l.body_as(Exposition::OpenMetrics, true).1);
    }

    #[test]
    fn openmetrics_is_made_only_once_a_scrape_wants_it() {
        let t = Instant::now();
        let l = Latest::new(b"# TYPE a_total counter\na_total 1\n".to_vec(), t, None).unwrap();
        l.publish(b"# TYPE a_total counter\na_total 2\n".to_vec(), t);
        assert!(l.lock().bodies.1.is_none(), "no OpenMetrics scrape yet");
        // The first OpenMetrics scrape converts; the ones after share it.
        let om = l.body_as(Exposition::OpenMetrics, false).0;
        assert_eq!(&*om, b"# TYPE a counter\na_total 2\n# EOF\n");
        assert!(Arc::ptr_eq(
            &om,
            &l.body_as(Exposition::OpenMetrics, false).0
        ));
        // Asked for, so the next read makes it at publication, with its
        // gzip once a scrape asks for that.
        l.want(Exposition::OpenMetrics, true);
        l.publish(b"# TYPE a_total counter\na_total 3\n".to_vec(), t);
        assert!(l.lock().bodies.1.is_some());
        let (z, gz) = l.body_as(Exposition::OpenMetrics, true);
        assert!(gz);
        let mut out = String::new();
        flate2::read::GzDecoder::new(z.as_slice())
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "# TYPE a counter\na_total 3\n# EOF\n");
        // Text-only scrapes after that: the next read makes no OpenMetrics.
        l.publish(b"a_total 4\n".to_vec(), t);
        l.body_as(Exposition::Prometheus, true);
        l.publish(b"a_total 5\n".to_vec(), t);
        assert!(l.lock().bodies.1.is_none());
        assert!(l.body_as(Exposition::Prometheus, true).1);
    }

    /// A server on a loopback port, not started, with default limits and
    /// read `0` published at the instant returned.
    fn loopback_server() -> (Server, Arc<Latest>, Instant) {
        let t = Instant::now();
        let latest = Arc::new(Latest::new(b"0".to_vec(), t, None).unwrap());
        let server = Server {
            listener: TcpListener::bind("127.0.0.1:0").unwrap(),
            latest: Arc::clone(&latest),
            limits: Limits::default(),
            conns: Vec::new(),
            paused_until: None,
            budget_checked: 0,
        };
        (server, latest, t)
    }

    /// Older bodies over the budget go oldest first; the newest of them
    /// is kept whatever its size; a body shared by connections counts once.
    #[test]
    fn older_bodies_over_the_budget_go_oldest_first() {
        // (generation, identity, bytes)
        let held = [(1, 10, 100), (2, 20, 100), (2, 20, 100), (3, 30, 100)];
        assert!(over_budget(held.into_iter(), 300).is_empty());
        assert_eq!(over_budget(held.into_iter(), 250), [10]);
        assert_eq!(over_budget(held.into_iter(), 150), [10, 20]);
        assert_eq!(over_budget(held.into_iter(), 0), [10, 20]);
        assert!(over_budget([(1, 10, 1 << 30)].into_iter(), 0).is_empty());
    }

    /// An answer being written holds its read's body. A lone connection
    /// writing an old body keeps it however many reads are published
    /// (a slow download is not cut); once the older bodies held pass the
    /// budget, the connections writing the oldest are closed; one writing
    /// the latest read's body, or an answer that is no read's, is not.
    #[test]
    fn older_bodies_past_the_budget_close_their_oldest_connections() {
        let (mut server, latest, t) = loopback_server();
        server.limits.held_times = 2;
        server.limits.held_floor = 0;
        let (limits, addr) = (server.limits, server.listener.local_addr().unwrap());
        let mut clients = Vec::new();
        let mut answered = |server: &mut Server, head: &[u8]| {
            clients.push(TcpStream::connect(addr).unwrap());
            let (stream, _) = server.listener.accept().unwrap();
            let mut c = Conn {
                stream,
                buf: Vec::new(),
                since: t,
                deadline: t + limits.write,
                phase: Phase::Head,
                closed: false,
            };
            c.reply(answer(head, &server.latest), &limits, t);
            server.conns.push(c);
        };
        let body = |g: u8| vec![b'0' + g; 100];
        let closed = |s: &Server| s.conns.iter().map(|c| c.closed).collect::<Vec<_>>();
        // a 404, then a lone slow scrape of read 1 across five reads
        latest.publish(body(1), t);
        answered(&mut server, b"GET /other HTTP/1.1\r\n\r\n");
        answered(&mut server, b"GET /metrics HTTP/1.1\r\n\r\n");
        for g in 2..7 {
            latest.publish(body(g), t);
            server.close_over_budget();
        }
        assert_eq!(closed(&server), [false, false]);
        // scrapes of reads 7, 8 and 9 (two of 9): at 9, the older bodies
        // of reads 1, 7 and 8 pass 2 × 100 bytes: read 1's goes
        for g in 7..10 {
            latest.publish(body(g), t);
            answered(&mut server, b"GET /metrics HTTP/1.1\r\n\r\n");
        }
        answered(&mut server, b"GET /metrics HTTP/1.1\r\n\r\n");
        server.close_over_budget();
        assert_eq!(closed(&server), [false, true, false, false, false, false]);
        // at 10, those of 7, 8 and 9 (one body for two connections): 7's
        latest.publish(body(10), t);
        answered(&mut server, b"GET /metrics HTTP/1.1\r\n\r\n");
        server.close_over_budget();
        assert_eq!(
            closed(&server),
            [false, true, true, false, false, false, false]
        );
    }

    /// At the connection cap with every connection taking its answer (or
    /// never taking it: clients that stopped reading), a new connection
    /// evicts the one that has been taking its answer longest; one that
    /// waits for a read is never evicted.
    #[test]
    fn at_the_cap_the_longest_answer_is_evicted_for_a_new_connection() {
        let (mut server, latest, t) = loopback_server();
        let (limits, addr) = (server.limits, server.listener.local_addr().unwrap());
        let mut clients = Vec::new();
        for (i, waits) in [false, true, false, false].into_iter().enumerate() {
            clients.push(TcpStream::connect(addr).unwrap());
            let (stream, _) = server.listener.accept().unwrap();
            let at = t + Duration::from_millis(10 * i as u64);
            let mut c = Conn {
                stream,
                buf: Vec::new(),
                since: at,
                deadline: at + limits.head,
                phase: Phase::Wait {
                    after: 0,
                    pipelined: false,
                },
                closed: false,
            };
            if !waits {
                c.reply(
                    answer(b"GET /metrics HTTP/1.1\r\n\r\n", &latest),
                    &limits,
                    at,
                );
            }
            server.conns.push(c);
        }
        let first = server.conns[0].stream.peer_addr().unwrap();
        assert!(server.evict());
        assert_eq!(server.conns.len(), 3);
        assert!(server
            .conns
            .iter()
            .all(|c| c.stream.peer_addr().unwrap() != first));
        assert!(server.evict() && server.evict());
        assert!(matches!(
            server.conns[..],
            [Conn {
                phase: Phase::Wait { .. },
                ..
            }]
        ));
        assert!(!server.evict(), "a connection waiting for a read");
    }

    #[test]
    fn accept_encoding_gzip_is_recognised() {
        let h = |v: &str| format!("GET /metrics HTTP/1.1\r\nAccept-Encoding: {v}\r\n\r\n");
        assert!(accepts_gzip(h("gzip").as_bytes()));
        assert!(accepts_gzip(h("deflate, GZIP;q=0.5").as_bytes()));
        assert!(!accepts_gzip(h("gzip;q=0").as_bytes()));
        assert!(!accepts_gzip(h("identity").as_bytes()));
        assert!(!accepts_gzip(b"GET /metrics HTTP/1.1\r\n\r\n"));
    }
}
