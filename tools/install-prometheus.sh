#!/usr/bin/env bash
# install-prometheus.sh: installs Prometheus, promtool and node_exporter
# from Debian's packages for tests/serve_prometheus.rs (real Prometheus
# scraping `irqlab serve`), the `promtool check metrics` tests and
# tests/serve_node_compat.rs (`--compat node` against node_exporter's own
# series). Does nothing when all three are already there. The packaged
# services are not left running: the tests start their own on free
# loopback ports.
set -euo pipefail
have() {
    command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 &&
        command -v prometheus-node-exporter >/dev/null 2>&1
}
have && exit 0
export DEBIAN_FRONTEND=noninteractive
pkgs=(prometheus prometheus-node-exporter)
apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null; }
# The packages start system services (:9090, :9100) where an init system
# runs; stop them so that they neither hold the ports nor scrape anything.
for unit in prometheus prometheus-node-exporter; do
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$unit" 2>/dev/null; then
        systemctl stop "$unit" || true
    fi
done
have
