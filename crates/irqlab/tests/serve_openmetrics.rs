//! `/metrics` content negotiation: Prometheus's own `Accept` header gets
//! OpenMetrics 1.0.0 (validated by the reference parser of the Python
//! `prometheus_client` package, in both naming modes), no header or
//! `text/plain` gets the 0.0.4 text format, and both carry the same
//! samples. The parser check skips, saying why, when `prometheus_client`
//! is not installed (tools/install-python-readers.sh installs it).
#![allow(clippy::unwrap_used)]

mod serve_support;

use serve_support::{scrape_as, serve, synth};
use std::io::Write;
use std::process::{Command, Stdio};

const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

fn samples(body: &str) -> Vec<&str> {
    body.lines().filter(|l| !l.starts_with('#')).collect()
}

/// Parse `body` with prometheus_client's strict OpenMetrics parser;
/// `None` when the package is missing.
fn python_parse(body: &str) -> Option<Result<String, String>> {
    let probe = Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return None;
    }
    let code = "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\nfams = list(p(sys.stdin.read()))\nprint(len(fams), sum(len(f.samples) for f in fams))";
    let mut child = Command::new("python3")
        .args(["-c", code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    Some(if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    })
}

#[test]
fn prometheus_accept_gets_valid_openmetrics_with_the_same_samples() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 8);
    for compat in ["irqlab", "node"] {
        // a long interval: both scrapes see the same sample
        let s = serve(d.path(), &["-i", "60s", "--compat", compat]);
        let (om_type, om) = scrape_as(s.addr, Some(PROMETHEUS_ACCEPT));
        let (text_type, text) = scrape_as(s.addr, None);
        let (plain_type, _) = scrape_as(s.addr, Some("text/plain;version=0.0.4"));
        assert!(
            om_type.starts_with("application/openmetrics-text; version=1.0.0"),
            "{om_type}"
        );
        assert!(
            text_type.starts_with("text/plain; version=0.0.4"),
            "{text_type}"
        );
        assert_eq!(plain_type, text_type);
        assert!(om.ends_with("\n# EOF\n"), "{compat}: no # EOF");
        assert!(!text.contains("# EOF"), "{compat}");
        // the same samples; only metadata differs (and scrape counters)
        let strip = |b: &str| -> Vec<String> {
            samples(b)
                .into_iter()
                .filter(|l| !l.starts_with("irqlab_scrapes_total"))
                .map(String::from)
                .collect()
        };
        assert_eq!(strip(&om), strip(&text), "{compat}");
        assert!(
            samples(&om).len() > 50,
            "{compat}: {} samples",
            samples(&om).len()
        );
        if compat == "irqlab" {
            assert!(om.contains("# TYPE irqlab_interrupts counter\n"), "{om}");
        } else {
            assert!(om.contains("# TYPE node_interrupts counter\n"), "{om}");
        }
        match python_parse(&om) {
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIP serve_openmetrics parser check: python3 prometheus_client not installed (tools/install-python-readers.sh)"
                );
            }
            Some(Err(e)) => panic!("{compat}: OpenMetrics parser refused the body: {e}"),
            Some(Ok(counts)) => {
                let n: usize = counts.split(' ').nth(1).unwrap().parse().unwrap();
                assert_eq!(n, samples(&om).len(), "{compat}: {counts}");
            }
        }
    }
}
