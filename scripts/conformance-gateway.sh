#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios (`--suite
# active`) through `toolbridge serve`, in front of the suite's reference
# server as its only upstream. Counts the checks and fails on any failure or
# warning, on a suite failure, or when no check ran at all.
#
# Usage: scripts/conformance-gateway.sh
# Needs target/debug/toolbridge (or $TOOLBRIDGE) built. Takes about 15 s.
set -euo pipefail
cd "$(dirname "$0")/.."
setup=${CONFORMANCE_SETUP:-}
for candidate in ../shared/conformance/setup.sh ../../shared/conformance/setup.sh; do
  [ -n "$setup" ] || { [ -f "$candidate" ] && setup=$candidate; } || true
done
[ -n "$setup" ] || { echo "conformance-gateway: setup.sh not found; set CONFORMANCE_SETUP" >&2; exit 2; }
eval "$(bash "$setup" .deps/conformance)"
toolbridge=${TOOLBRIDGE:-$PWD/target/debug/toolbridge}

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A free port for the reference server: bind port 0, read it back.
free_port() { "$NODE22" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_for() { # wait_for FILE PATTERN SECONDS
  local deadline=$((SECONDS + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { echo "conformance-gateway: timed out waiting for $2 in $1" >&2; cat "$1" >&2; exit 1; }
    sleep 0.1
  done
}

port=$(free_port)
# exec: the subshell becomes the server, a process group of its own.
(cd "$EVERYTHING_SERVER" && PORT=$port exec setsid "$NODE22" node_modules/.bin/tsx everything-server.ts >"$work/upstream.log" 2>&1) &
pids+=($!)
wait_for "$work/upstream.log" "$port" 60

mkdir -p "$work/home" "$work/config/toolbridge" "$work/cache"
cat >"$work/config/toolbridge/config.json" <<JSON
{ "mcpServers": { "everything": { "type": "http", "url": "http://localhost:$port/mcp" } } }
JSON
HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_CACHE_HOME="$work/cache" \
  setsid "$toolbridge" serve --listen 127.0.0.1:0 2>"$work/gateway.log" &
pids+=($!)
wait_for "$work/gateway.log" "listening on http://" 30
url=$(grep -o 'listening on http://[^ ]*' "$work/gateway.log" | head -1 | sed 's/listening on //')
# The suite's dns-rebinding scenario wants the gateway reached as localhost.
url=${url/127.0.0.1/localhost}

log="$work/suite.log"
set +e
"$NODE22" "$CONFORMANCE" server --url "$url" --suite active >"$log" 2>&1
code=$?
set -e
# The summary has one line per scenario: "✓ ping: 1 passed, 0 failed".
# Sum the checks, so a scenario that ran no check is not a pass.
read -r passed failed < <(grep -E '^[✓✗] [^:]+: [0-9]+ passed, [0-9]+ failed' "$log" \
  | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' \
  | awk '{p+=$1; f+=$2} END {print p+0, f+0}')
if [ "$code" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
  echo "conformance-gateway: FAILED ($passed passed, $failed failed; suite exit $code)" >&2
  cat "$log" >&2
  echo "--- gateway log" >&2; tail -50 "$work/gateway.log" >&2
  exit 1
fi
echo "conformance-gateway: $passed checks passed"
