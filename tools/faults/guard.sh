#!/usr/bin/env bash
# Fault cases of the guard (docs/safety.md): two tracefs users at once and
# staggered, trace + bench + restore interleavings, kill -9 then restore,
# a command escaping with setsid, bench SIGINT leaving no lock. Uses the
# hidden `guard-selftest --mount` (trace's mount path) on temporary
# directories; the real `trace` cases run only when the binary has the
# trace feature. Needs root (mounts). Prints `<case>: tried N held M`,
# exits 1 if a case did not hold, and leaves nothing mounted or running.
set -u
IRQLAB=${IRQLAB:-irqlab}
ROUNDS=${ROUNDS:-3}
work=$(mktemp -d)
failed=0
# bench's command in cases 5 and 6: a sleep escaping into a session of its
# own and one in the foreground, their pids appended to $1 (the checks and
# the cleanup look at those: never at another run's processes)
cat >"$work/escape.sh" <<'EOF'
setsid sleep 98764 & echo $! >>"$1"
sh -c 'echo $$ >>"$0"; exec sleep 98765' "$1"
EOF
cmd_of() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline"; }
running() { # true when a sleep escape.sh started (pids in $1) still runs
  local p
  for p in $(cat "$1" 2>/dev/null); do [[ $(cmd_of "$p") == "sleep 9876"* ]] && return 0; done
  return 1
}
stop_sleeps() { # end the sleeps escape.sh started (pids in $1)
  local p
  for p in $(cat "$1" 2>/dev/null); do [[ $(cmd_of "$p") == "sleep 9876"* ]] && kill "$p" 2>/dev/null; done
}
cleanup() {
  for m in $(grep -o " $work[^ ]*" /proc/self/mounts | sort -r); do umount -l "$m" 2>/dev/null; done
  for f in "$work"/t.*/pids; do stop_sleeps "$f"; done
  rm -rf "$work"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "guard.sh: needs root (mounts tracefs on temporary directories)"; exit 1; }

report() { # name tried held
  echo "$1: tried $2 held $3"
  [ "$2" = "$3" ] || failed=1
}
fresh() { # a fake tree with a tracefs mount point
  local d; d=$(mktemp -d "$work/t.XXXX")
  "$IRQLAB" synth --ncpus 2 --irqs 4 --out "$d" >/dev/null 2>&1
  mkdir -p "$d/sys/kernel/tracing"; echo 1 > "$d/x"; echo "$d"
}
mounted() { mountpoint -q "$1/sys/kernel/tracing"; }
selftest_mount() { # root sleep; sets $holder, waits for ready
  local out="$work/ready.$RANDOM"
  "$IRQLAB" guard-selftest --root "$1" --mount sys/kernel/tracing --sleep "$2" >"$out" 2>&1 &
  holder=$!
  for _ in $(seq 100); do grep -q ready "$out" && break; sleep 0.05; done
}

# 1. two at once: one mounts, the other gets the lock's or the mount's message
tried=0 held=0
for _ in $(seq "$ROUNDS"); do
  tried=$((tried + 1)); r=$(fresh)
  "$IRQLAB" guard-selftest --root "$r" --mount sys/kernel/tracing --sleep 2s >"$r/a" 2>&1 &
  a=$!
  "$IRQLAB" guard-selftest --root "$r" --mount sys/kernel/tracing --sleep 2s >"$r/b" 2>&1 &
  b=$!
  wait $a; ra=$?; wait $b; rb=$?
  ok=$(cat "$r/a" "$r/b" | grep -c "ready: mounted$")
  msg=$(cat "$r/a" "$r/b" | grep -c "another run is changing this host\|was mounted by another irqlab run")
  if [ "$ok" = 1 ] && [ "$msg" = 1 ] && ! grep -q unrestored "$r/a" "$r/b" && ! mounted "$r" \
     && [ ! -e "$r/.irqlab-journal.jsonl" ] && [ ! -e "$r/.irqlab-run.lock" ] && [ $((ra + rb)) = 1 ]; then
    held=$((held + 1))
  fi
done
report "two-mounts-at-once" $tried $held

# 2. staggered: the second is refused while the first holds the mount; the
#    first's exit unmounts nothing under anyone
tried=0 held=0
for _ in $(seq "$ROUNDS"); do
  tried=$((tried + 1)); r=$(fresh)
  selftest_mount "$r" 2s; a=$holder
  out=$("$IRQLAB" guard-selftest --root "$r" --mount sys/kernel/tracing 2>&1); rc=$?
  wait "$a"
  if [ $rc = 1 ] && [[ $out == *"was mounted by another irqlab run"* ]] && ! mounted "$r"; then held=$((held + 1)); fi
done
report "staggered-mounts" $tried $held

# 3. bench and restore during a mount holder: both refused with the lock's
#    message, the mount and journal stay
tried=0 held=0
for _ in $(seq "$ROUNDS"); do
  tried=$((tried + 1)); r=$(fresh)
  selftest_mount "$r" 3s; a=$holder
  ob=$("$IRQLAB" bench --root "$r" --trials 1 --trial-length 200ms --warmup 0 --measure LOC --out "$r/out" 2>&1); rb=$?
  orr=$("$IRQLAB" restore --root "$r" 2>&1); rr=$?
  still=0; mounted "$r" && [ -s "$r/.irqlab-journal.jsonl" ] && still=1
  wait "$a"
  if [ $rb = 1 ] && [ $rr = 1 ] && [ $still = 1 ] && [[ $ob == *"another run is changing this host"* ]] \
     && [[ $orr == *"another run is changing this host"* ]] && [ ! -e "$r/out" ] && ! mounted "$r"; then
    held=$((held + 1))
  fi
done
report "bench-restore-during-mount" $tried $held

# 4. kill -9 of the holder, then restore unmounts and removes lock and journal
tried=0 held=0
for _ in $(seq "$ROUNDS"); do
  tried=$((tried + 1)); r=$(fresh)
  selftest_mount "$r" 30s; a=$holder
  kill -9 "$a"; wait "$a" 2>/dev/null
  was=0; mounted "$r" && was=1
  "$IRQLAB" restore --root "$r" >/dev/null 2>&1; rr=$?
  if [ $was = 1 ] && [ $rr = 0 ] && ! mounted "$r" && [ ! -e "$r/.irqlab-journal.jsonl" ] \
     && [ ! -e "$r/.irqlab-run.lock" ]; then held=$((held + 1)); fi
done
report "kill9-then-restore" $tried $held

# 5. a bench command that calls setsid leaves nothing running
tried=0 held=0
for _ in $(seq "$ROUNDS"); do
  tried=$((tried + 1)); r=$(fresh)
  "$IRQLAB" bench --root "$r" --trials 1 --trial-length 500ms --warmup 0 --measure LOC --out "$r/out" \
    -- sh "$work/escape.sh" "$r/pids" >/dev/null 2>&1
  sleep 0.2
  if [ -s "$r/pids" ] && ! running "$r/pids"; then held=$((held + 1)); fi
  stop_sleeps "$r/pids"
done
report "setsid-escape" $tried $held

# 6. bench SIGINT / SIGTERM leave no lock and nothing running
tried=0 held=0
for sig in INT TERM INT TERM; do
  tried=$((tried + 1)); r=$(fresh)
  "$IRQLAB" bench --root "$r" --trials 3 --trial-length 5s --warmup 0 --measure LOC --out "$r/out" \
    -- sh "$work/escape.sh" "$r/pids" >/dev/null 2>&1 &
  p=$!
  sleep 1.5; kill -"$sig" $p; wait $p 2>/dev/null
  sleep 0.2
  if [ ! -e "$r/.irqlab-run.lock" ] && [ ! -e "$r/.irqlab-journal.jsonl" ] && [ -s "$r/pids" ] && ! running "$r/pids"; then
    held=$((held + 1))
  fi
  stop_sleeps "$r/pids"
done
report "bench-signal-no-lock" $tried $held

# 7. the real trace (feature `trace` only): two at once, tracefs left unmounted
if "$IRQLAB" trace --root "$work/none" -d 1s 2>&1 | grep -q "features trace\|--features"; then
  echo "real-trace: skipped (binary built without the trace feature)"
elif mountpoint -q /sys/kernel/tracing; then
  echo "real-trace: skipped (tracefs is mounted already: nothing to race for)"
else
  tried=1 held=0
  "$IRQLAB" trace -d 2s >"$work/ta" 2>&1 & a=$!
  "$IRQLAB" trace -d 2s >"$work/tb" 2>&1 & b=$!
  wait $a; wait $b
  if ! grep -q unrestored "$work/ta" "$work/tb" && ! mountpoint -q /sys/kernel/tracing \
     && [ ! -e /var/lib/irqlab/journal.jsonl ] && [ ! -e /var/lib/irqlab/run.lock ]; then held=1; fi
  mountpoint -q /sys/kernel/tracing && umount /sys/kernel/tracing
  report "real-trace-two-at-once" $tried $held
fi
exit $failed
