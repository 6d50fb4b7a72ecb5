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

log() { printf 'gateway bench: %s\n' "$*" >&2; }

# shellcheck source=deps.sh
. "$here/deps.sh"

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
