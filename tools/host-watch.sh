#!/usr/bin/env bash
# Watches what a test run must not change on a contributor's machine while
# COMMAND runs: the online CPU list (polled every 20 ms) and whether tracefs
# is mounted (before and after). Prints what it saw; exits non-zero when
# either changed, or with COMMAND's own status when that failed.
#   tools/host-watch.sh cargo test --workspace
set -u
online=/sys/devices/system/cpu/online
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sample() { cat "$online" 2>/dev/null || echo none; }
traced() { grep -c ' tracefs ' /proc/mounts; }
before_cpus=$(sample)
before_mounts=$(traced)
( while [ ! -e "$dir/stop" ]; do sample; sleep 0.02; done ) >"$dir/log" &
watcher=$!
"$@"
status=$?
touch "$dir/stop"
wait "$watcher" 2>/dev/null
sample >>"$dir/log"
seen=$(sort -u "$dir/log" | paste -sd' ')
after_mounts=$(traced)
echo "host-watch: online CPUs before: $before_cpus; seen while running: $seen; tracefs mounts before/after: $before_mounts/$after_mounts"
if [ "$seen" != "$before_cpus" ] || [ "$before_mounts" != "$after_mounts" ]; then
  echo "host-watch: FAILED: the run changed the host without being asked to"
  [ "$status" -eq 0 ] && status=1
else
  echo "host-watch: every CPU stayed online and no tracefs mount changed"
fi
exit "$status"
