#!/usr/bin/env bash
# Install what `irqlab trace` needs to build and test (Debian/Ubuntu):
#   clang    compiles crates/irqlab-bpf/src/bpf/*.c (-target bpf) at build time
#   bpftool  lists loaded BPF programs in tests/trace_detach.rs
#   bpftrace the overhead comparison in tools/trace-overhead.sh and the cross-check
#            tools/trace-crosscheck.py / tests/trace_crosscheck.rs (optional: --with-bpftrace)
# aya, the loader, is pure Rust: no libbpf/libelf needed at build or run time.
# Idempotent; runs `apt-get update` only when something is missing.
set -euo pipefail

pkgs=(clang llvm bpftool)
[[ "${1:-}" == "--with-bpftrace" ]] && pkgs+=(bpftrace)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    echo "install-trace-deps: already installed: ${pkgs[*]}"
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "install-trace-deps: need root to install: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
clang --version | head -1
