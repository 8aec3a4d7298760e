#!/usr/bin/env bash
# The fault suite: runs every tools/faults/<area>.sh against one irqlab
# binary and sums up. Each script prints `<case>: tried N held M` lines and
# exits non-zero when a case did not hold; each cleans up after itself.
#   cargo build --release --features trace -p irqlab
#   IRQLAB=target/release/irqlab tools/fault-suite.sh          # every area
#   IRQLAB=target/release/irqlab tools/fault-suite.sh record   # one area
# Needs root for the host-changing cases (they say when they skip).
set -u
cd "$(dirname "$0")/.."
export IRQLAB=${IRQLAB:-irqlab}
command -v "$IRQLAB" >/dev/null || { echo "fault-suite: $IRQLAB not found (set IRQLAB=path/to/irqlab)"; exit 2; }
areas=("$@")
[ ${#areas[@]} -eq 0 ] && for f in tools/faults/*.sh; do a=${f##*/}; areas+=("${a%.sh}"); done
failed=()
for a in "${areas[@]}"; do
  echo "=== fault area: $a ($(date -u +%T))"
  if ! bash "tools/faults/$a.sh"; then failed+=("$a"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fault-suite: FAILED in: ${failed[*]}"
  exit 1
fi
echo "fault-suite: every case held in: ${areas[*]}"
