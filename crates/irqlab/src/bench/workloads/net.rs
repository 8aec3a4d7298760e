//! `net`: a loopback TCP bulk transfer (127.0.0.1, ephemeral port) from a
//! writer thread to a reader thread pinned to different CPUs; the traffic
//! runs through NET_TX/NET_RX softirqs. Bounded in time: socket timeouts
//! guard every blocking call, both sockets are closed when `run` returns.

use super::placement;
use crate::bench::metric_value::{Direction, Metric};
use crate::bench::workload::Workload;
use anyhow::{anyhow, Context};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Bytes per `write` call.
const CHUNK: usize = 256 * 1024;
/// Longest a single socket call may block.
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// The loopback bulk-transfer workload.
pub struct Net {
    cpus: Vec<u32>,
}

impl Net {
    /// Reader on `cpus[0]`, writer on `cpus[1]` (or `cpus[0]` if alone).
    pub fn new(cpus: Vec<u32>) -> Self {
        Net { cpus }
    }
}

/// A connected (client, server) pair on loopback, without any thread.
fn connect_pair() -> anyhow::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1:0")?;
    let addr = listener.local_addr().context("listener address")?;
    let client = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
    let (server, _) = listener.accept().context("accepting loopback connection")?;
    for s in [&client, &server] {
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        s.set_write_timeout(Some(IO_TIMEOUT))?;
    }
    Ok((client, server))
}

fn writer(mut s: TcpStream, cpu: Option<u32>, dur: Duration) -> anyhow::Result<()> {
    placement::pin_opt(cpu)?;
    let buf = vec![0x5au8; CHUNK];
    let start = Instant::now();
    let res: anyhow::Result<()> = (|| {
        while start.elapsed() < dur {
            s.write_all(&buf).context("loopback write")?;
        }
        Ok(())
    })();
    // Let the reader see EOF even when a write failed.
    let _ = s.shutdown(Shutdown::Write);
    res?;
    placement::still_pinned(cpu)
}

fn reader(mut s: TcpStream, cpu: Option<u32>) -> anyhow::Result<(u64, Duration)> {
    let pinned = placement::pin_opt(cpu);
    let mut buf = vec![0u8; CHUNK];
    let start = Instant::now();
    let mut total = 0u64;
    loop {
        let n = s.read(&mut buf).context("loopback read")?;
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    let elapsed = start.elapsed();
    pinned?;
    placement::still_pinned(cpu)?;
    Ok((total, elapsed))
}

impl Workload for Net {
    fn name(&self) -> &str {
        "net"
    }

    fn run(&mut self, duration: Duration) -> anyhow::Result<Vec<Metric>> {
        let (client, server) = connect_pair()?;
        let rx_cpu = placement::cpu_for(&self.cpus, 0);
        let tx_cpu = placement::cpu_for(&self.cpus, 1);
        let (bytes, elapsed) = std::thread::scope(|s| {
            let r = s.spawn(move || reader(server, rx_cpu));
            let w = s.spawn(move || writer(client, tx_cpu, duration));
            let wres = w.join().map_err(|_| anyhow!("writer thread panicked"));
            let rres = r.join().map_err(|_| anyhow!("reader thread panicked"));
            wres??;
            rres?
        })
        .context("net workload")?;
        let rate = bytes as f64 / elapsed.as_secs_f64().max(1e-9);
        Ok(vec![Metric::new(
            "bytes_per_sec",
            rate,
            "B/s",
            Direction::Higher,
        )])
    }
}
