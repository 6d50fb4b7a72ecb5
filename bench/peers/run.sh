#!/usr/bin/env bash
# Runs the same workload with toolbridge, the TypeScript SDK client and the
# Python SDK client against `toolbridge example-server`, rounds interleaved,
# and prints one side-by-side table (see docs/performance.md).
#
#   bench/peers/run.sh [--rounds N]
#
# The pinned clients are installed into bench/peers/.deps (git-ignored) on
# the first run. Needs node/npm and python3; builds toolbridge in release
# mode unless $TOOLBRIDGE points at a binary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
deps="$here/.deps"

TS_SDK="@modelcontextprotocol/sdk@1.32.2"
PY_SDK="mcp==2.3.0"

log() { printf 'peers: %s\n' "$*" >&2; }

if [ ! -f "$deps/node/.stamp" ] || [ "$(cat "$deps/node/.stamp")" != "$TS_SDK" ]; then
  log "installing $TS_SDK"
  mkdir -p "$deps/node"
  echo '{"private":true,"type":"module"}' > "$deps/node/package.json"
  npm install --prefix "$deps/node" --no-audit --no-fund --loglevel=error "$TS_SDK" >&2
  echo "$TS_SDK" > "$deps/node/.stamp"
fi
if [ ! -f "$deps/py/.stamp" ] || [ "$(cat "$deps/py/.stamp")" != "$PY_SDK" ]; then
  log "creating a venv with $PY_SDK"
  rm -rf "$deps/py"
  python3 -m venv "$deps/py"
  "$deps/py/bin/pip" install --quiet --disable-pip-version-check "$PY_SDK" >&2
  echo "$PY_SDK" > "$deps/py/.stamp"
fi
# Node resolves packages from the script's directory upwards.
cp "$here/client.mjs" "$deps/node/client.mjs"

if [ -z "${TOOLBRIDGE:-}" ]; then
  log "building toolbridge (release)"
  (cd "$root" && cargo build --release -q -p toolbridge-cli)
  TOOLBRIDGE="${CARGO_TARGET_DIR:-$root/target}/release/toolbridge"
fi

exec "$deps/py/bin/python" "$here/run.py" \
  --toolbridge "$TOOLBRIDGE" \
  --node-client "$deps/node/client.mjs" \
  --python "$deps/py/bin/python" \
  --python-client "$here/client.py" \
  "$@"
