#!/usr/bin/env bash
# The gateway benchmark: `toolbridge serve` against `mcp-proxy` and
# `supergateway` in front of the same `toolbridge example-server`, with
# `toolbridge bench` as the client for all, rounds interleaved; then the
# gateway's memory with 100 client sessions open. Prints one table (see
# docs/performance.md, "Gateway").
#
#   bench/peers/gateway.sh [--rounds N] [--sessions N]
#
# The pinned peers are installed into bench/peers/.deps (git-ignored) on the
# first run. Needs node/npm and python3; builds toolbridge in release mode
# unless $TOOLBRIDGE points at a binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
deps="$here/.deps"

MCP_PROXY="mcp-proxy==0.13.0"
SUPERGATEWAY="supergateway@4.0.0"

log() { printf 'gateway bench: %s\n' "$*" >&2; }

if [ ! -f "$deps/mcp-proxy/.stamp" ] || [ "$(cat "$deps/mcp-proxy/.stamp")" != "$MCP_PROXY" ]; then
  log "creating a venv with $MCP_PROXY"
  rm -rf "$deps/mcp-proxy"
  python3 -m venv "$deps/mcp-proxy"
  "$deps/mcp-proxy/bin/pip" install --quiet --disable-pip-version-check "$MCP_PROXY" >&2
  echo "$MCP_PROXY" > "$deps/mcp-proxy/.stamp"
fi
if [ ! -f "$deps/supergateway/.stamp" ] || [ "$(cat "$deps/supergateway/.stamp")" != "$SUPERGATEWAY" ]; then
  log "installing $SUPERGATEWAY"
  mkdir -p "$deps/supergateway"
  echo '{"private":true}' > "$deps/supergateway/package.json"
  npm install --prefix "$deps/supergateway" --no-audit --no-fund --loglevel=error "$SUPERGATEWAY" >&2
  echo "$SUPERGATEWAY" > "$deps/supergateway/.stamp"
fi

if [ -z "${TOOLBRIDGE:-}" ]; then
  log "building toolbridge (release)"
  (cd "$root" && cargo build --release -q -p toolbridge-cli)
  TOOLBRIDGE="${CARGO_TARGET_DIR:-$root/target}/release/toolbridge"
fi

exec python3 "$here/gateway.py" \
  --toolbridge "$TOOLBRIDGE" \
  --mcp-proxy "$deps/mcp-proxy/bin/mcp-proxy" \
  --supergateway "$deps/supergateway/node_modules/supergateway/dist/index.js" \
  "$@"
