#!/usr/bin/env bash
# install-python-readers.sh: installs DuckDB, pyarrow and prometheus_client
# for python3 (from the Python package registry): tests/record_readers.rs
# reads a recording back with engines that are not irqlab
# (tools/read-recording.py), tests/serve_openmetrics.rs validates the
# OpenMetrics body with prometheus_client's reference parser. Does nothing
# when all three import already. Installs python3 and pip from
# Debian's packages when there is no python3 at all.
set -euo pipefail
py=python3
if ! command -v "$py" >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends python3 python3-pip >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends python3 python3-pip >/dev/null; }
fi
mods='import duckdb, pyarrow, prometheus_client.openmetrics.parser'
if "$py" -c "$mods" 2>/dev/null; then
    exit 0
fi
"$py" -m pip --version >/dev/null 2>&1 || apt-get install -y -q --no-install-recommends python3-pip >/dev/null
# Debian's python marks itself externally managed; these are test tools.
"$py" -m pip install -q duckdb pyarrow prometheus_client 2>/dev/null ||
    "$py" -m pip install -q --break-system-packages duckdb pyarrow prometheus_client
"$py" -c "$mods"
