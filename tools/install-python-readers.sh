#!/usr/bin/env bash
# install-python-readers.sh: installs DuckDB and pyarrow for python3 (from
# the Python package registry) so that tests/record_readers.rs can read a
# recording back with engines that are not irqlab (tools/read-recording.py).
# Does nothing when both import already. Installs python3 and pip from
# Debian's packages when there is no python3 at all.
set -euo pipefail
py=python3
if ! command -v "$py" >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends python3 python3-pip >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends python3 python3-pip >/dev/null; }
fi
if "$py" -c 'import duckdb, pyarrow' 2>/dev/null; then
    exit 0
fi
"$py" -m pip --version >/dev/null 2>&1 || apt-get install -y -q --no-install-recommends python3-pip >/dev/null
# Debian's python marks itself externally managed; these are test tools.
"$py" -m pip install -q duckdb pyarrow 2>/dev/null ||
    "$py" -m pip install -q --break-system-packages duckdb pyarrow
"$py" -c 'import duckdb, pyarrow'
