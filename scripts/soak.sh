#!/bin/sh
# Soak test (issue 16): 50 stdio servers that randomly crash (leaving a
# setsid daemon behind), hang, print garbage or answer slowly
# (crates/toolbridge/tests/servers/chaos.py), each driven by its own
# `toolbridge bench --duration` for MINUTES (default 10). Checks, and exits
# non-zero if one fails:
#   - every call ended with an answer or an error (each bench's ok + errors
#     = calls, and every bench ended within its duration + call timeout);
#   - no process is left: nothing carrying this run's marker survives the
#     benches (server children, and the daemons that crashed servers left in
#     sessions of their own);
#   - memory is flat: the benches' summed RSS, sampled every 5 s, is no
#     more than 1.3x higher in the last quarter of the run than in the first.
# Not part of CI's default run. Usage: [TOOLBRIDGE_BIN=path] scripts/soak.sh [MINUTES]
set -eu

minutes=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
python=${SOAK_PYTHON:-$root/.deps/py2/bin/python}
[ -x "$python" ] || python=python3
servers=50
timeout_s=5
seconds=$(awk "BEGIN { printf \"%d\", $minutes * 60 }")

# TOOLBRIDGE_BIN: a binary already built (else the release build is made).
tb=${TOOLBRIDGE_BIN:-}
if [ -z "$tb" ]; then
  echo "building the release binary..." >&2
  cargo build --release -q -p toolbridge-cli --manifest-path "$root/Cargo.toml"
  tb=$root/target/release/toolbridge
fi

work=$(mktemp -d)
marker="soak-marker-$$-$(date +%s)"
cleanup() {
  # Only processes this run started: the benches (by pid), and anything
  # still carrying this run's unique marker (by pid).
  for pid in $bench_pids; do kill "$pid" 2>/dev/null || true; done
  for pid in $(leaked); do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
leaked() {
  for f in /proc/[0-9]*/cmdline; do
    { tr '\0' ' ' < "$f"; } 2>/dev/null | grep -q -- "$marker" && { p=${f#/proc/}; echo "${p%/cmdline}"; }
  done
  true
}
bench_pids=''
trap cleanup EXIT INT TERM

mkdir -p "$work/home" "$work/cache" "$work/config"
for i in $(seq 1 $servers); do
  printf '{"mcpServers":{"chaos":{"command":"%s","args":["%s"],"timeout":%s,"env":{"SOAK_MARKER":"%s"}}}}\n' \
    "$python" "$root/crates/toolbridge/tests/servers/chaos.py" "$timeout_s" "$marker" > "$work/config$i.json"
done

echo "soak: $servers servers for $minutes min, call timeout ${timeout_s}s" >&2
for i in $(seq 1 $servers); do
  HOME=$work/home XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config \
    "$tb" -q --config "$work/config$i.json" bench chaos work \
      --calls 100000000 --concurrency 4 --duration "$seconds" --json \
      > "$work/report$i.json" 2> "$work/stderr$i.txt" &
  bench_pids="$bench_pids $!"
done

# Sample the benches' summed RSS (KiB) every 5 s while any runs.
: > "$work/rss"
end=$(( $(date +%s) + seconds + timeout_s * 4 + 30 ))
while :; do
  files=''
  for pid in $bench_pids; do [ -r "/proc/$pid/status" ] && files="$files /proc/$pid/status"; done
  set -- $files
  running=$#
  total=0
  [ "$running" -gt 0 ] && total=$(awk '/^VmRSS:/ { s += $2 } END { print s + 0 }' "$@" 2>/dev/null || echo 0)
  [ "$running" -eq 0 ] && break
  [ "$running" -eq "$servers" ] && echo "$total" >> "$work/rss"
  if [ "$(date +%s)" -gt "$end" ]; then
    echo "FAIL: $running benches still running long after their duration (a call without an answer?)" >&2
    exit 1
  fi
  sleep 5
done
status=0

# Every call ended with an answer or an error.
calls=0; ok=0; errors=0
for i in $(seq 1 $servers); do
  r=$("$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["calls"], d["ok"], d["errors"])' "$work/report$i.json" 2>/dev/null) || {
    echo "FAIL: bench $i printed no report:" >&2; tail -3 "$work/stderr$i.txt" >&2; status=1; continue; }
  set -- $r
  [ $(($2 + $3)) -eq "$1" ] || { echo "FAIL: bench $i: $2 ok + $3 errors != $1 calls" >&2; status=1; }
  calls=$((calls + $1)); ok=$((ok + $2)); errors=$((errors + $3))
done
echo "calls: $calls ($ok ok, $errors errors: timeouts, crashes, restarts)"

# No process left (give the reapers their half second).
left=''
for _ in 1 2 3 4 5 6 7 8 9 10; do
  left=$(leaked)
  [ -z "$left" ] && break
  sleep 1
done
if [ -n "$left" ]; then
  echo "FAIL: $(echo $left | wc -w) processes left:" >&2
  for p in $left; do { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null | head -c 300 >&2; echo >&2; done
  status=1
else
  echo "processes left: 0"
fi

# Memory flat: first quarter against last quarter of the samples.
awk -v out=/dev/stderr '
  { v[NR] = $1 }
  END {
    n = NR; q = int(n / 4); if (q < 1) { print "too few memory samples (" n ")"; exit 0 }
    for (i = 1; i <= q; i++) a += v[i]; for (i = n - q + 1; i <= n; i++) b += v[i]
    a /= q; b /= q
    printf "memory (50 benches, summed RSS): first quarter %.1f MiB, last quarter %.1f MiB, ratio %.2f, %d samples\n", a / 1024, b / 1024, b / a, n
    if (b > a * 1.3) { print "FAIL: memory grew" > out; exit 1 }
  }' "$work/rss" || status=1

[ "$status" -eq 0 ] && echo "soak: ok" || echo "soak: FAILED" >&2
exit "$status"
