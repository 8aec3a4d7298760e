#!/usr/bin/env bash
# install-prometheus.sh: installs Prometheus and promtool from Debian's
# packages for tests/serve_prometheus.rs (real Prometheus scraping
# `irqlab serve`) and the `promtool check metrics` tests. Does nothing when
# both are already there. The packaged service is not left running: the
# tests start their own Prometheus on a free loopback port.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends prometheus >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends prometheus >/dev/null; }
# The package starts a system service on :9090 where an init system runs;
# stop it so that it neither holds the port nor scrapes anything.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    systemctl stop prometheus || true
fi
command -v prometheus >/dev/null && command -v promtool >/dev/null
