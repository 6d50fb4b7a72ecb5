#!/usr/bin/env bash
# The clients benchmark (issue 31): four clients (the TypeScript SDK, the
# Python `mcp` SDK, a plain keep-alive HTTP/1.1 client, `toolbridge bench`)
# against each gateway in front of the same `toolbridge example-server`:
# `toolbridge serve`, mcp-proxy 0.13, supergateway 4.0 (--stateful),
# agentgateway when $AGENTGATEWAY points at its binary, and the floor (one
# HTTP hop into floor_relay.rs, a minimal relay to the server over a pipe);
# and each client straight to the server over stdio. Sequential and 64 in
# flight, rounds interleaved; prints one table per client and RATIO lines
# (docs/performance.md, "Every client").
#
#   bench/peers/clients.sh [--quick] [--rounds N] [--scale X]
#
# --quick: one round of few calls (about a minute); the default (3 rounds)
# takes about ten minutes on 2 cores. The peers go into bench/peers/.deps
# (git-ignored) on the first run; the TypeScript SDK is the one
# scripts/setup-test-deps.sh pins in .deps/node, the Python SDK its .deps/py2
# venv. Builds toolbridge in release mode unless $TOOLBRIDGE points at a
# binary. agentgateway is not built here (27 min of compile): see
# ../shared/peers/agentgateway/README.md, then AGENTGATEWAY=PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
deps="$here/.deps"

log() { printf 'clients bench: %s\n' "$*" >&2; }

# shellcheck source=deps.sh
. "$here/deps.sh"

node_modules="$root/.deps/node/node_modules"
if [ ! -d "$node_modules/@modelcontextprotocol/sdk" ]; then
  log "installing $TS_SDK"
  mkdir -p "$deps/node"
  echo '{"private":true,"type":"module"}' > "$deps/node/package.json"
  npm install --prefix "$deps/node" --no-audit --no-fund --loglevel=error "$TS_SDK" >&2
  node_modules="$deps/node/node_modules"
fi
python_sdk="$root/.deps/py2/bin/python"
[ -x "$python_sdk" ] || { log "no Python mcp SDK venv at $python_sdk: run scripts/setup-test-deps.sh"; exit 2; }
# Node resolves packages from the script's directory upwards.
mkdir -p "$deps/node-client"
ln -sfn "$node_modules" "$deps/node-client/node_modules"
echo '{"private":true,"type":"module"}' > "$deps/node-client/package.json"
cp "$here/sdk_client.mjs" "$deps/node-client/sdk_client.mjs"
rustc -O --edition 2021 "$here/floor_relay.rs" -o "$deps/floor-relay"

if [ -z "${TOOLBRIDGE:-}" ]; then
  log "building toolbridge (release)"
  (cd "$root" && cargo build --release -q -p toolbridge-cli)
  TOOLBRIDGE="${CARGO_TARGET_DIR:-$root/target}/release/toolbridge"
fi

exec python3 "$here/clients.py" \
  --toolbridge "$TOOLBRIDGE" \
  --mcp-proxy "$deps/mcp-proxy/bin/mcp-proxy" \
  --supergateway "$deps/supergateway/node_modules/supergateway/dist/index.js" \
  --agentgateway "${AGENTGATEWAY:-}" \
  --floor "$deps/floor-relay" \
  --node-client "$deps/node-client/sdk_client.mjs" \
  --python-sdk "$python_sdk" \
  --here "$here" \
  "$@"
