//! `net`: a TCP bulk transfer from a writer thread to a reader thread
//! pinned to different CPUs; the traffic runs through NET_TX/NET_RX
//! softirqs. Over loopback (127.0.0.1, ephemeral port) by default; with a
//! [`NetPath`] (`--loss`, `--rate`) over a veth pair between two network
//! namespaces made in `setup` and removed in `teardown` (`veth.rs`), and
//! then it also reports the sender's TCP retransmits, those the receiver
//! reported as duplicates (spurious), retransmission timeouts and receive
//! drops. On veth, packets for each side are steered by RPS to that
//! side's CPU (`Veth::steer`): without it, data sent from the writer's
//! CPU and data sent on ACK arrival from the reader's CPU wait in two
//! per-CPU backlogs, arrive out of order and make the loss-free path
//! retransmit ~1 % spuriously. Bounded in time:
//! socket timeouts guard every blocking call, both sockets are closed
//! when `run` returns.

use super::veth::{NetPath, Veth, RX_ADDR, TX_ADDR};
use super::{placement, spawn_scoped};
use crate::bench::metric_value::{Direction, Metric};
use crate::bench::workload::{running, Workload};
use crate::guard::Tracker;
use crate::sampler::Stop;
use anyhow::{anyhow, Context};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Bytes per `write` call.
const CHUNK: usize = 256 * 1024;
/// Longest a single socket call may block (loopback).
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest a single socket call may block over a lossy or limited veth
/// (retransmission timeouts back off to seconds).
const VETH_IO_TIMEOUT: Duration = Duration::from_secs(15);

/// The bulk-transfer workload.
pub struct Net {
    cpus: Vec<u32>,
    path: Option<NetPath>,
    tracker: Tracker,
    veth: Option<Veth>,
}

impl Net {
    /// Reader on `cpus[0]`, writer on `cpus[1]` (or `cpus[0]` if alone);
    /// over veth when `path` is given (namespaces journaled by `tracker`).
    pub fn new(cpus: Vec<u32>, path: Option<NetPath>, tracker: Tracker) -> Self {
        Net {
            cpus,
            path,
            tracker,
            veth: None,
        }
    }
}

/// A connected (client, server) pair on loopback, without any thread.
fn connect_pair() -> anyhow::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1:0")?;
    let addr = listener.local_addr().context("listener address")?;
    let client = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
    let (server, _) = listener.accept().context("accepting loopback connection")?;
    set_timeouts(&client, &server, IO_TIMEOUT)?;
    Ok((client, server))
}

/// A connected (client, server) pair across `veth`: the server listens
/// in the receiver's namespace, the client connects from the sender's.
fn connect_veth(veth: &Veth) -> anyhow::Result<(TcpStream, TcpStream)> {
    let (tx, rx) = veth.names();
    let listener = Veth::in_ns(rx, || {
        TcpListener::bind((RX_ADDR, 0)).with_context(|| format!("binding {RX_ADDR}:0 in {rx}"))
    })?;
    let addr = listener.local_addr().context("listener address")?;
    let client = Veth::in_ns(tx, || {
        TcpStream::connect_timeout(&addr, VETH_IO_TIMEOUT)
            .with_context(|| format!("connecting to {addr} from {tx} ({TX_ADDR})"))
    })?;
    let (server, _) = listener.accept().context("accepting the veth connection")?;
    set_timeouts(&client, &server, VETH_IO_TIMEOUT)?;
    Ok((client, server))
}

fn set_timeouts(client: &TcpStream, server: &TcpStream, t: Duration) -> anyhow::Result<()> {
    for s in [client, server] {
        s.set_read_timeout(Some(t))?;
        s.set_write_timeout(Some(t))?;
    }
    Ok(())
}

fn writer(mut s: TcpStream, cpu: Option<u32>, dur: Duration, stop: &Stop) -> anyhow::Result<()> {
    placement::pin_opt(cpu)?;
    let buf = vec![0x5au8; CHUNK];
    let start = Instant::now();
    let res: anyhow::Result<()> = (|| {
        while running(start, dur, stop) {
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

    fn setup(&mut self) -> anyhow::Result<()> {
        if let (Some(path), None) = (self.path, &self.veth) {
            self.veth =
                Some(Veth::create(&self.tracker, path).context("net workload's veth path")?);
            let rx_cpu = placement::cpu_for(&self.cpus, 0);
            let tx_cpu = placement::cpu_for(&self.cpus, 1);
            if let (Some(v), Some(r), Some(t)) = (&self.veth, rx_cpu, tx_cpu) {
                v.steer(r, t)?;
            }
        }
        Ok(())
    }

    fn teardown(&mut self) -> anyhow::Result<()> {
        match self.veth.take() {
            Some(v) => v.remove(),
            None => Ok(()),
        }
    }

    fn run(&mut self, duration: Duration, stop: &Stop) -> anyhow::Result<Vec<Metric>> {
        if self.path.is_some() && self.veth.is_none() {
            anyhow::bail!("net workload: the veth path was not set up");
        }
        let (client, server) = match &self.veth {
            Some(v) => connect_veth(v)?,
            None => connect_pair()?,
        };
        let c0 = self.veth.as_ref().map(Veth::counters).transpose()?;
        let rx_cpu = placement::cpu_for(&self.cpus, 0);
        let tx_cpu = placement::cpu_for(&self.cpus, 1);
        let (bytes, elapsed) = std::thread::scope(|s| {
            let r = spawn_scoped(s, 0, 2, move || reader(server, rx_cpu))?;
            // a writer that cannot start drops `client`: the reader sees EOF
            let w = spawn_scoped(s, 1, 2, move || writer(client, tx_cpu, duration, stop))?;
            let wres = w.join().map_err(|_| anyhow!("writer thread panicked"));
            let rres = r.join().map_err(|_| anyhow!("reader thread panicked"));
            wres??;
            rres?
        })
        .context("net workload")?;
        let rate = bytes as f64 / elapsed.as_secs_f64().max(1e-9);
        let mut out = vec![Metric::new("bytes_per_sec", rate, "B/s", Direction::Higher)];
        if let (Some(v), Some(c0)) = (&self.veth, c0) {
            let c1 = v.counters()?;
            let d = |k: &str| {
                let at = |c: &super::veth::Counters| c.get(k).copied().unwrap_or(0);
                at(&c1).saturating_sub(at(&c0))
            };
            let (sent, re) = (d("tx.Tcp.OutSegs"), d("tx.Tcp.RetransSegs"));
            out.push(Metric::new(
                "tcp_retransmits",
                re as f64,
                "1",
                Direction::Lower,
            ));
            out.push(Metric::new(
                "tcp_spurious_retrans",
                d("tx.TcpExt.TCPDSACKRecvSegs") as f64,
                "1",
                Direction::Lower,
            ));
            out.push(Metric::new(
                "tcp_rto_timeouts",
                d("tx.TcpExt.TCPTimeouts") as f64,
                "1",
                Direction::Lower,
            ));
            out.push(Metric::new(
                "rx_drops",
                [
                    "rx.dev.rx_drop",
                    "tx.dev.tx_drop",
                    "rx.TcpExt.TCPRcvQDrop",
                    "rx.TcpExt.TCPBacklogDrop",
                ]
                .iter()
                .map(|k| d(k))
                .sum::<u64>() as f64,
                "1",
                Direction::Lower,
            ));
            if sent > 0 {
                out.push(Metric::new(
                    "tcp_retrans_pct",
                    100.0 * re as f64 / sent as f64,
                    "%",
                    Direction::Lower,
                ));
            }
        }
        Ok(out)
    }
}
