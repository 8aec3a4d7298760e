//! A minimal HTTP/1.1 server on `std::net` for `/metrics`: a fixed pool of
//! worker threads accepting on one listener, one request per connection
//! (`Connection: close`), bounded request heads and socket timeouts, so
//! memory and threads stay bounded whatever the scrape rate. Every scrape
//! is answered from [`Latest`], the body rendered at the last sample:
//! scrapes never read `/proc`. The `Accept` header picks Prometheus text
//! or OpenMetrics ([`super::openmetrics`]); both bodies are made once per
//! sample, at publication.

use super::openmetrics::{self, Format};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Longest request head accepted.
const MAX_HEAD: usize = 8192;

/// The bodies of the latest sample, shared with the workers.
#[derive(Debug)]
pub struct Latest {
    /// (Prometheus text, OpenMetrics) of one sample.
    bodies: Mutex<Bodies>,
    scrapes: AtomicU64,
}

type Bodies = (Arc<Vec<u8>>, Arc<Vec<u8>>);

fn both(body: Vec<u8>) -> Bodies {
    let mut om = Vec::new();
    openmetrics::convert(&body, &mut om);
    (Arc::new(body), Arc::new(om))
}

impl Latest {
    pub fn new(body: Vec<u8>) -> Latest {
        Latest {
            bodies: Mutex::new(both(body)),
            scrapes: AtomicU64::new(0),
        }
    }

    /// Publish a new Prometheus-text body (its OpenMetrics form is made
    /// here); returns the previous one's buffer when no scrape still holds
    /// it (for reuse).
    pub fn publish(&self, body: Vec<u8>) -> Option<Vec<u8>> {
        let new = both(body);
        let old = match self.bodies.lock() {
            Ok(mut g) => std::mem::replace(&mut *g, new),
            Err(p) => std::mem::replace(&mut *p.into_inner(), new),
        };
        Arc::try_unwrap(old.0).ok()
    }

    /// The current Prometheus-text body (shared, not copied).
    pub fn body(&self) -> Arc<Vec<u8>> {
        self.body_as(Format::Prometheus)
    }

    /// The current body in `format` (shared, not copied).
    pub fn body_as(&self, format: Format) -> Arc<Vec<u8>> {
        let pick = |b: &Bodies| match format {
            Format::Prometheus => Arc::clone(&b.0),
            Format::OpenMetrics => Arc::clone(&b.1),
        };
        match self.bodies.lock() {
            Ok(g) => pick(&g),
            Err(p) => pick(&p.into_inner()),
        }
    }

    /// `/metrics` requests answered so far.
    pub fn scrapes(&self) -> u64 {
        self.scrapes.load(Ordering::Relaxed)
    }
}

/// Start `workers` threads serving `listener` until the process exits.
pub fn spawn(listener: TcpListener, latest: Arc<Latest>, workers: usize) -> anyhow::Result<()> {
    let listener = Arc::new(listener);
    for i in 0..workers.max(1) {
        let (l, latest) = (Arc::clone(&listener), Arc::clone(&latest));
        std::thread::Builder::new()
            .name(format!("irqlab-http-{i}"))
            .spawn(move || accept_loop(&l, &latest))?;
    }
    Ok(())
}

fn accept_loop(listener: &TcpListener, latest: &Latest) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                // A client that goes away mid-request is its own problem.
                let _ = handle(stream, latest);
            }
            // Out of descriptors or an aborted connection: back off briefly.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Method and path of a request head (`GET /metrics?x HTTP/1.1` ->
/// (`GET`, `/metrics`)), or `None` when it is not a request line.
pub fn request_line(head: &[u8]) -> Option<(&str, &str)> {
    let end = head.iter().position(|&b| b == b'\r' || b == b'\n')?;
    let line = std::str::from_utf8(head.get(..end)?).ok()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if !version.starts_with("HTTP/1.") || parts.next().is_some() {
        return None;
    }
    let path = target.split('?').next().unwrap_or(target);
    Some((method, path))
}

fn read_head(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; MAX_HEAD];
    let mut n = 0;
    while n < buf.len() {
        let r = s.read(&mut buf[n..])?;
        if r == 0 {
            break;
        }
        n += r;
        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n")
            || buf[..n].windows(2).any(|w| w == b"\n\n")
        {
            break;
        }
    }
    buf.truncate(n);
    Ok(buf)
}

fn handle(mut s: TcpStream, latest: &Latest) -> std::io::Result<()> {
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.set_write_timeout(Some(Duration::from_secs(30)))?;
    let head = read_head(&mut s)?;
    let (status, ctype, body): (&str, &str, Arc<Vec<u8>>) = match request_line(&head) {
        None => (
            "400 Bad Request",
            "text/plain",
            Arc::new(b"bad request\n".to_vec()),
        ),
        Some((m, _)) if m != "GET" && m != "HEAD" => (
            "405 Method Not Allowed",
            "text/plain",
            Arc::new(b"only GET and HEAD\n".to_vec()),
        ),
        Some((_, "/metrics")) => {
            latest.scrapes.fetch_add(1, Ordering::Relaxed);
            let format = openmetrics::negotiate(&head);
            ("200 OK", format.content_type(), latest.body_as(format))
        }
        Some((_, "/")) => (
            "200 OK",
            "text/plain; charset=utf-8",
            Arc::new(b"irqlab serve: metrics at /metrics\n".to_vec()),
        ),
        Some(_) => (
            "404 Not Found",
            "text/plain",
            Arc::new(b"not found: try /metrics\n".to_vec()),
        ),
    };
    let head_only = head.starts_with(b"HEAD ");
    let mut out = std::io::BufWriter::with_capacity(16 * 1024, s);
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n{}\r\n",
        body.len(),
        if status.starts_with("405") { "Allow: GET, HEAD\r\n" } else { "" }
    )?;
    if !head_only {
        out.write_all(&body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(request_line(b"\xff\xfe"), None);
        assert_eq!(request_line(b""), None);
    }

    #[test]
    fn publish_returns_the_unshared_old_buffer() {
        let l = Latest::new(b"a".to_vec());
        let held = l.body();
        assert!(
            l.publish(b"b".to_vec()).is_none(),
            "a scrape still holds it"
        );
        drop(held);
        assert_eq!(l.publish(b"c".to_vec()), Some(b"b".to_vec()));
        assert_eq!(&**l.body(), b"c");
        assert_eq!(&**l.body_as(Format::OpenMetrics), b"c\n# EOF\n");
    }
}
