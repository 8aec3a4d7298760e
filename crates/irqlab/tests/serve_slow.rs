//! Slow, idle and malformed clients against `irqlab serve`: a scrape from
//! a well-behaved client is answered at once whatever they do (the
//! server's head deadline is 5 s: a scrape that waited for a slow client
//! would take at least that), over-long heads get 431, garbage 400, and
//! beyond `--max-connections` the connection that waited longest for its
//! head is closed; a request body is never read as a request. Each timing is compared with a scrape of the same run
//! before the slow clients came.
#![allow(clippy::unwrap_used)]

mod common;

mod serve_support;

use serve_support::{request, serve, synth};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The server's head deadline (how long a client may take to send its
/// request head): a scrape that takes this long waited for a slow client.
const HEAD_DEADLINE: Duration = Duration::from_secs(5);

/// Time of one successful scrape.
fn timed_scrape(addr: SocketAddr) -> Duration {
    let t = Instant::now();
    let (code, body) = request(addr, "GET", "/metrics").unwrap();
    assert_eq!(code, 200);
    assert!(body.contains("irqlab_exposed_series"));
    t.elapsed()
}

/// Send `bytes`, then read the whole answer (until the server closes);
/// returns it and how long the answer took after the send.
fn exchange(addr: SocketAddr, bytes: &[u8]) -> (String, Duration) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(bytes).unwrap();
    let t = Instant::now();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    (String::from_utf8_lossy(&out).into_owned(), t.elapsed())
}

/// Connections sending `GET /metrics HTTP/1.1\r\n` then one byte every
/// `every`, until `stop`.
fn slowloris(addr: SocketAddr, n: usize, every: Duration, stop: &Arc<AtomicBool>) {
    for _ in 0..n {
        let stop = Arc::clone(stop);
        std::thread::spawn(move || {
            let Ok(mut s) = TcpStream::connect(addr) else {
                return;
            };
            let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n");
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(every);
                if s.write_all(b"X").is_err() {
                    return;
                }
            }
        });
    }
}

#[test]
fn slow_and_idle_clients_do_not_delay_a_scrape() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 16);
    let s = serve(d.path(), &["-i", "200ms"]);
    let base = (0..3).map(|_| timed_scrape(s.addr)).max().unwrap();
    // The reproduction: 4 slowloris connections (a byte every 4 s) and 8
    // silent ones, then 200 more silent ones.
    let stop = Arc::new(AtomicBool::new(false));
    slowloris(s.addr, 4, Duration::from_secs(4), &stop);
    let idle: Vec<TcpStream> = (0..208)
        .map(|_| TcpStream::connect(s.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut worst = Duration::ZERO;
    let end = Instant::now() + Duration::from_secs(8);
    let mut n = 0;
    while Instant::now() < end {
        worst = worst.max(timed_scrape(s.addr));
        n += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, Ordering::Relaxed);
    crate::visible!(
        "serve_slow: {n} scrapes beside 4 slow + 208 idle connections: worst {worst:?} (alone {base:?})"
    );
    assert!(
        worst < HEAD_DEADLINE / 2 && worst < base * 20 + Duration::from_secs(1),
        "a scrape took {worst:?} beside slow clients (alone {base:?})"
    );
    // The idle connections were closed at their head deadline.
    for mut c in idle.into_iter().take(4) {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut b = [0u8; 64];
        assert!(matches!(c.read(&mut b), Ok(0) | Err(_)), "still open");
    }
}

#[test]
fn a_slow_head_gets_408_at_its_deadline() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let t = Instant::now();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 408 "), "{out}");
    assert!(t.elapsed() < HEAD_DEADLINE * 3, "{:?}", t.elapsed());
}

#[test]
fn an_over_long_head_gets_431_not_a_truncated_200() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    // Over 8 KiB without its end, the connection kept open.
    let mut head = b"GET /metrics HTTP/1.1\r\nX-Pad: ".to_vec();
    head.resize(9000, b'a');
    let (out, took) = exchange(s.addr, &head);
    assert!(out.starts_with("HTTP/1.1 431 "), "{out}");
    assert!(took < HEAD_DEADLINE, "{took:?}");
    // Complete but 20 KB long: still 431, read by the client whole.
    head.resize(20_000, b'a');
    head.extend_from_slice(b"\r\n\r\n");
    let (out, _) = exchange(s.addr, &head);
    assert!(out.starts_with("HTTP/1.1 431 "), "{out}");
    assert!(out.contains("Connection: close"), "{out}");
    // The server still answers.
    assert_eq!(request(s.addr, "GET", "/metrics").unwrap().0, 200);
}

#[test]
fn garbage_without_a_line_ending_gets_400() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    // Bytes no request line holds: answered at once.
    for garbage in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
        b"\x00\x01\x02\x03",
        b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        b"GET /metrics HTTP/1.1 extra\r\n",
    ] {
        let (out, took) = exchange(s.addr, garbage);
        assert!(out.starts_with("HTTP/1.1 400 "), "{garbage:?}: {out}");
        assert!(took < HEAD_DEADLINE, "{garbage:?}: {took:?}");
    }
    // Printable, but no line by the deadline: 400 then.
    let (out, took) = exchange(s.addr, b"hello");
    assert!(out.starts_with("HTTP/1.1 400 "), "{out}");
    assert!(took < HEAD_DEADLINE * 3, "{took:?}");
    // Garbage then end of input: 400, not silence.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(b"hello").unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 400 "), "{out}");
}

/// A whole head with a method over 16 characters or not a token, sent in
/// one write: 400 and a close at once, as when it comes byte by byte.
#[test]
fn a_complete_head_with_a_bad_method_gets_400_at_once() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    for garbage in [
        &b"ABCDEFGHIJKLMNOPQRSTUVWXYZ /metrics HTTP/1.1\r\n\r\n"[..],
        b"G(T /metrics HTTP/1.1\r\n\r\n",
    ] {
        let (out, took) = exchange(s.addr, garbage);
        assert!(out.starts_with("HTTP/1.1 400 "), "{garbage:?}: {out}");
        assert!(!out.contains("keep-alive"), "{garbage:?}: {out}");
        assert!(took < HEAD_DEADLINE, "{garbage:?}: {took:?}");
    }
}

#[test]
fn beyond_max_connections_the_longest_waiting_head_is_evicted() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms", "--max-connections", "8"]);
    let mut idle: Vec<TcpStream> = Vec::new();
    for _ in 0..8 {
        idle.push(TcpStream::connect(s.addr).unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    // A ninth: a scrape, answered; the oldest idle one is closed for it.
    let took = timed_scrape(s.addr);
    assert!(took < HEAD_DEADLINE / 2, "{took:?}");
    let first = &mut idle[0];
    first
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut b = [0u8; 16];
    assert!(
        matches!(first.read(&mut b), Ok(0) | Err(_)),
        "the oldest idle connection was not evicted"
    );
}

/// The kernel queues as many connections not yet accepted as
/// `--max-connections` (up to `net.core.somaxconn`): with std's backlog
/// of 128 a burst of more connects dropped SYNs, and a scraper caught in
/// it waited for its 1-s retransmit. Read from `ss` (skipped, saying so,
/// without it).
#[test]
fn the_listen_backlog_follows_max_connections() {
    if !serve_support::have("ss") {
        crate::visible!("SKIP the listen backlog: no ss (iproute2)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms", "--max-connections", "1000"]);
    let out = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{}", s.addr.port())])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // LISTEN  Recv-Q  Send-Q (the backlog)  address …
    let backlog: u32 = text
        .split_whitespace()
        .nth(2)
        .and_then(|b| b.parse().ok())
        .unwrap_or_else(|| panic!("ss: {text}"));
    let most: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(backlog, 1000.min(most), "{text}");
}

/// Read one answer with a Content-Length body from `s`: (status line, body).
fn read_answer(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut b).unwrap(), 1, "closed mid-head: {head:?}");
        head.push(b[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    (head, body)
}

/// HTTP/1.1 keep-alive (what Prometheus uses): several scrapes on one
/// connection, no new handshake per scrape; `Connection: close` and
/// HTTP/1.0 close after the answer.
#[test]
fn keep_alive_serves_several_scrapes_on_one_connection() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    for _ in 0..3 {
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let (head, body) = read_answer(&mut c);
        assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
        assert!(head.contains("Connection: keep-alive"), "{head}");
        assert!(String::from_utf8_lossy(&body).contains("irqlab_exposed_series"));
    }
    c.write_all(b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (head, _) = read_answer(&mut c);
    assert!(head.contains("Connection: close"), "{head}");
    assert_eq!(c.read(&mut [0u8; 8]).unwrap(), 0, "still open");
    let (out, _) = exchange(s.addr, b"GET /metrics HTTP/1.0\r\n\r\n");
    assert!(out.starts_with("HTTP/1.1 200 ") && out.contains("Connection: close"));
}

/// The server reads no request body: a `POST` with one gets `405` and
/// its connection closes; the body, sent after the answer, is never taken
/// for a request of its own (it was served as a scrape of /metrics).
#[test]
fn a_request_body_is_never_served_as_the_next_request() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    write!(
        c,
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    let (head, _) = read_answer(&mut c);
    assert!(head.starts_with("HTTP/1.1 405 "), "{head}");
    assert!(head.contains("Connection: close"), "{head}");
    // the body, once the answer is in: drained, never answered
    let _ = c.write_all(body);
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
}

/// docs/serve.md describes the connections as served: kept alive, and a
/// kept connection idle for the head deadline closed without an answer.
#[test]
fn a_kept_connection_idle_past_the_head_deadline_is_closed_as_documented() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/serve.md"),
    )
    .unwrap();
    assert!(!doc.contains("One request per connection"), "docs/serve.md");
    assert!(
        doc.contains("`Connection: keep-alive`")
            && doc.contains("silent for\n5 s after its last answer"),
        "docs/serve.md does not describe keep-alive"
    );
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 2, 2);
    let s = serve(d.path(), &["-i", "200ms"]);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(HEAD_DEADLINE * 3)).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (head, _) = read_answer(&mut c);
    assert!(head.contains("Connection: keep-alive"), "{head}");
    let idle = Instant::now();
    assert_eq!(c.read(&mut [0u8; 8]).unwrap(), 0, "an answer to nothing");
    let waited = idle.elapsed();
    assert!(
        waited >= HEAD_DEADLINE - Duration::from_millis(100) && waited < HEAD_DEADLINE * 2,
        "{waited:?}"
    );
}

/// A connection to `addr` whose receive buffer is 4 KiB (set before the
/// handshake, so the window stays small), that has sent a scrape: the
/// server holds the rest of the body until the client takes it.
fn small_window_scrape(addr: SocketAddr) -> TcpStream {
    use nix::sys::socket::{self as sock, sockopt, AddressFamily, SockFlag, SockType};
    let fd = sock::socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .unwrap();
    sock::setsockopt(&fd, sockopt::RcvBuf, &4096).unwrap();
    let SocketAddr::V4(v4) = addr else {
        panic!("{addr}: not IPv4")
    };
    sock::connect(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &sock::SockaddrIn::from(v4),
    )
    .unwrap();
    let mut s = TcpStream::from(fd);
    s.write_all(b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    s
}

/// A thread scraping `addr` every `every` until `stop` (each scrape asks
/// for the latest sample's body: a read published per -i); its scrapes.
fn scraping(
    addr: SocketAddr,
    every: Duration,
    stop: &Arc<AtomicBool>,
) -> std::thread::JoinHandle<u32> {
    let stop = Arc::clone(stop);
    std::thread::spawn(move || {
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            if request(addr, "GET", "/metrics").is_ok_and(|(code, _)| code == 200) {
                n += 1;
            }
            std::thread::sleep(every);
        }
        n
    })
}

/// Body bytes of one scrape of `addr`.
fn body_len(addr: SocketAddr) -> usize {
    let (code, body) = request(addr, "GET", "/metrics").unwrap();
    assert_eq!(code, 200);
    body.len()
}

/// Bodies larger than a loopback connection's send buffer (4 MB: the
/// kernel takes a smaller body whole and the server holds nothing): 64
/// CPUs and 800 IRQs, about 5.4 MB.
fn big_tree(dir: &std::path::Path) {
    synth(dir, 64, 800);
}

/// A lone slow download keeps its body however many reads are published
/// meanwhile: a client taking a ~5 MB body 64 KiB per 20 ms while another
/// scrapes every 50 ms (-i 50ms: about a read per scrape) gets all of
/// it. Closing a connection two reads behind the latest cut it.
#[test]
fn a_slow_download_across_many_reads_gets_its_whole_body() {
    let d = tempfile::tempdir().unwrap();
    big_tree(d.path());
    let s = serve(d.path(), &["-i", "50ms"]);
    let len = body_len(s.addr);
    let stop = Arc::new(AtomicBool::new(false));
    let scraper = scraping(s.addr, Duration::from_millis(50), &stop);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let t = Instant::now();
    let mut got = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    let scrapes = scraper.join().unwrap();
    let text = String::from_utf8_lossy(&got);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let want: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap_or_else(|| panic!("no answer head: {head:?}"))
        .trim()
        .parse()
        .unwrap();
    visible!(
        "slow download: {} of {want} body bytes in {took:?}, {scrapes} scrapes meanwhile",
        body.len()
    );
    assert!(want > len / 2, "{want} vs {len}");
    assert!(
        took > Duration::from_millis(150),
        "taken in {took:?}: less than 3 intervals"
    );
    assert!(scrapes >= 3, "{scrapes} scrapes in {took:?}");
    assert_eq!(body.len(), want, "cut after {took:?}, {scrapes} scrapes");
}

/// Peak resident memory of process `pid` (VmHWM, bytes).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// 60 clients that send a scrape and never read, one every 40 ms while
/// reads are published every 50 ms, each holding the ~5 MB body of its
/// own read (about 20 reads): the older bodies kept stay under the budget
/// (4 × the latest body), so the server's peak RSS grows by a few
/// bodies, not one per read.
#[test]
fn stalled_readers_hold_a_bounded_memory() {
    let d = tempfile::tempdir().unwrap();
    big_tree(d.path());
    let s = serve(d.path(), &["-i", "50ms"]);
    let pid = s.child.id();
    let len = body_len(s.addr);
    let stop = Arc::new(AtomicBool::new(false));
    let scraper = scraping(s.addr, Duration::from_millis(50), &stop);
    std::thread::sleep(Duration::from_millis(300));
    let before = peak_rss(pid);
    let mut stalled = Vec::new();
    for _ in 0..60 {
        stalled.push(small_window_scrape(s.addr));
        std::thread::sleep(Duration::from_millis(40));
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = peak_rss(pid);
    stop.store(true, Ordering::Relaxed);
    let scrapes = scraper.join().unwrap();
    let mb = |b: u64| b as f64 / 1e6;
    visible!(
        "60 stalled readers of a {:.2} MB body ({scrapes} scrapes meanwhile): peak RSS {:.1} -> {:.1} MB",
        mb(len as u64),
        mb(before),
        mb(after)
    );
    // the budget (4 bodies or 4 MiB), the newest older body, the latest
    // body and its render buffer, and room for the allocator
    let bound = 8 * len as u64 + (12 << 20);
    assert!(
        after.saturating_sub(before) < bound,
        "peak RSS {:.1} -> {:.1} MB (bound {:.1} MB more)",
        mb(before),
        mb(after),
        mb(bound)
    );
    drop(stalled);
}
