//! `irqlab serve`: flags -> `serve::ServeConfig`, then `serve::run`. Loopback
//! by default; another address only through `--listen`. SIGINT and SIGTERM
//! end the run (exit 130 / 0: SIGTERM is a service's normal stop), also in
//! a background job whose shell started it with SIGINT ignored.

use crate::serve::{self, Listen, Naming, Options, PerCpu};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

/// Metric naming of `--compat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// irqlab's own names (`irqlab_interrupts_total{irq,cpu,chip,actions}` …).
    Irqlab,
    /// node_exporter's names and labels (`node_interrupts_total{cpu,type,info,devices}` …).
    Node,
}

/// Flags of `irqlab serve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab serve                               # http://127.0.0.1:9812/metrics, read at scrape time\n  \
    irqlab serve --per-cpu top=4 --exclude '^(NMI|PMI)$'\n  \
    irqlab serve --compat node --listen :9812   # node_exporter names, all addresses (IPv4 and IPv6)\n\
Metrics, PromQL and the Grafana dashboard: docs/serve.md")]
pub struct Args {
    #[command(flatten)]
    pub root: super::args::RootArgs,
    /// Address to listen on: an IP address and port (`0.0.0.0:9812`,
    /// `[::1]:9812`), `localhost:PORT` (127.0.0.1) or `:PORT`: every
    /// address, IPv4 and IPv6, as node_exporter's `:9100` (one socket on
    /// `[::]` that takes IPv4 too, as Go listens; `0.0.0.0` without
    /// IPv6). No host names (irqlab resolves no names). Port 0 picks a
    /// free port. Loopback unless set.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9812", value_parser = parse_listen)]
    pub listen: Listen,
    /// Cached mode: sample every this long, whatever the scrapes; scrapes
    /// in between get the latest sample. Without it, values are read at
    /// scrape time (see --min-interval). At least 1ms, at most 24h.
    #[arg(long, short = 'i', value_parser = super::args::interval, allow_hyphen_values = true)]
    pub interval: Option<Duration>,
    /// Read at scrape time at most once per this long: concurrent scrapes
    /// share one read; a scrape within half of it after a read gets that
    /// read, a later one waits for the next. At least 1ms, at most 24h.
    #[arg(long, value_name = "DURATION", default_value = "1s", conflicts_with = "interval", value_parser = super::args::interval, allow_hyphen_values = true)]
    pub min_interval: Duration,
    /// Stop after this long (default: until interrupted): more than 0, at
    /// most 8760h (365 days); with -i, cut into -i intervals as `record -d`.
    #[arg(long, value_parser = super::args::positive_duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,
    /// Per-CPU series: all, sum (one per row, cpu="all") or top=K (the K
    /// busiest CPUs of each row plus cpu="other").
    #[arg(long, value_name = "MODE", default_value = "all", value_parser = super::args::Named::new(parse_per_cpu, &PER_CPU_MODES),
          hide_possible_values = true)]
    pub per_cpu: PerCpu,
    // Rows and CPUs exposed: `--cpus` keeps the CPUs' series in `all`
    // and `top=K`, their sum in `sum` (docs/serve.md).
    #[command(flatten)]
    pub filter: super::args::FilterArgs,
    /// Open connections at most; beyond, the connection that has waited
    /// longest for its request head is closed, else the one taking its
    /// answer longest (lowered, with a note, when the descriptor limit
    /// allows fewer).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS, allow_hyphen_values = true,
          value_parser = |s: &str| super::args::whole_number::<u32>(s, 1, 1_000_000))]
    pub max_connections: u32,
    /// Metric names and labels.
    #[arg(long, value_enum, default_value = "irqlab")]
    pub compat: Compat,
}

/// `--max-connections` by default: `serve::http::MAX_CONNECTIONS`.
const DEFAULT_MAX_CONNECTIONS: u32 = 4096;

/// `--listen`: an IP socket address, `localhost:PORT` as 127.0.0.1 (the
/// static binary resolves no names, so no other host name), or `:PORT`
/// for every address.
fn parse_listen(s: &str) -> Result<Listen, String> {
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(Listen::Addr(addr));
    }
    let port = |p: &str, after: &str| {
        p.parse::<u16>()
            .map_err(|_| format!("expected a port 0 to 65535 after {after}, found {s:?}"))
    };
    if let Some(p) = s.strip_prefix(':') {
        return port(p, "':' (:PORT: every address)").map(Listen::AllAddrs);
    }
    match s.rsplit_once(':') {
        Some((host, p)) if host.eq_ignore_ascii_case("localhost") => {
            port(p, "localhost:").map(|p| Listen::Addr(SocketAddr::from(([127, 0, 0, 1], p))))
        }
        _ => Err(format!(
            "expected an IP address and port (127.0.0.1:9812, [::1]:9812, 0.0.0.0:9812), \
             localhost:PORT or :PORT (every address), found {s:?} (host names are not resolved)"
        )),
    }
}

fn parse_per_cpu(s: &str) -> Result<PerCpu, String> {
    s.parse()
}

/// `--per-cpu`'s modes (with a few values of K) offered by shell
/// completions rather than file names; any `top=K` is taken.
const PER_CPU_MODES: [&str; 6] = ["all", "sum", "top=1", "top=2", "top=4", "top=8"];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // the gzip bodies' deflate states share one heap block
    crate::alloc::keep_large_blocks_in_heap();
    let opts = Options {
        per_cpu: args.per_cpu,
        filter: args.filter.filter()?,
        naming: match args.compat {
            Compat::Irqlab => Naming::Irqlab,
            Compat::Node => Naming::Node,
        },
        ticks_per_s: serve::options::ticks_per_s(),
    };
    let cfg = serve::ServeConfig {
        root: args.root.dir,
        listen: args.listen,
        pace: match args.interval {
            Some(i) => serve::Pace::Every(i),
            None => serve::Pace::Scrape {
                min_interval: args.min_interval,
            },
        },
        duration: args.duration,
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        opts,
    };
    let pace = match cfg.pace {
        serve::Pace::Every(i) => format!("sampling every {}", humantime::format_duration(i)),
        serve::Pace::Scrape { min_interval } => format!(
            "reading at scrape time, at most once per {}",
            humantime::format_duration(min_interval)
        ),
    };
    let rows = cfg.opts.filter.clone();
    let signal = serve::run(cfg, |addr, first| {
        // A filter that selects nothing says so, as in `show`.
        args.filter.warn_about(first, &rows);
        if !addr.ip().is_loopback() {
            eprintln!("irqlab: warning: {addr} is reachable from other hosts");
        }
        // one write: stderr is unbuffered, and a formatted line would go
        // out piece by piece (13 system calls for this one)
        let line = format!("irqlab: serving http://{addr}/metrics ({pace})\n");
        eprint!("{line}");
    })?;
    // SIGTERM is how a service manager stops an exporter: a clean stop
    // (exit 0). SIGINT: 128 + signal, as `top` and `bench`.
    Ok(match signal {
        Some(s) if s == nix::sys::signal::Signal::SIGTERM as i32 => ExitCode::SUCCESS,
        s => s.map_or(ExitCode::SUCCESS, super::top::signal_exit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_takes_ip_addresses_and_localhost() {
        let v4 = |p| Listen::Addr(SocketAddr::from(([127, 0, 0, 1], p)));
        assert_eq!(parse_listen("127.0.0.1:9812"), Ok(v4(9812)));
        assert_eq!(parse_listen("localhost:19817"), Ok(v4(19817)));
        assert_eq!(parse_listen("LOCALHOST:0"), Ok(v4(0)));
        assert_eq!(
            parse_listen("[::1]:80"),
            Ok(Listen::Addr(SocketAddr::from((
                std::net::Ipv6Addr::LOCALHOST,
                80
            ))))
        );
        for bad in [
            "localhost",
            "localhost:",
            "localhost:70000",
            "example.com:80",
            "9812",
            "",
            ":",
            ":70000",
            ":-1",
            ":http",
            "::9812",
            ": 9812",
        ] {
            let err = parse_listen(bad).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{bad}: {err}");
            assert!(err.starts_with("expected "), "{bad}: {err}");
        }
        assert!(parse_listen(":70000")
            .unwrap_err()
            .contains("port 0 to 65535"));
    }

    /// `:PORT` is node_exporter's every-address form.
    #[test]
    fn listen_takes_a_bare_port_as_every_address() {
        assert_eq!(parse_listen(":9812"), Ok(Listen::AllAddrs(9812)));
        assert_eq!(parse_listen(":0"), Ok(Listen::AllAddrs(0)));
        assert_eq!(Listen::AllAddrs(9100).to_string(), ":9100");
    }

    #[test]
    fn default_max_connections_is_the_servers_cap() {
        assert_eq!(
            usize::try_from(DEFAULT_MAX_CONNECTIONS),
            Ok(serve::http::MAX_CONNECTIONS)
        );
    }
}
