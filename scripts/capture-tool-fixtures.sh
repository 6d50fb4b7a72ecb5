#!/usr/bin/env bash
# Captures the real tool lists of pinned third-party MCP servers into
# crates/toolbridge/tests/fixtures/, for the format golden tests.
#
# server-everything is taken from .deps/ (scripts/setup-test-deps.sh; set
# TOOLBRIDGE_DEPS to use another checkout's) when the pinned version is there; anything missing is installed with npm into a
# temporary directory that is removed afterwards. After capturing, regenerate
# the expected outputs with:
#   UPDATE_GOLDEN=1 cargo test -p toolbridge --test format_golden
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/crates/toolbridge/tests/fixtures"
deps="${TOOLBRIDGE_DEPS:-$root/.deps}"
mkdir -p "$out"

EVERYTHING_VERSION="2026.8.31"
FILESYSTEM_VERSION="2026.8.31"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
log() { printf 'capture-tool-fixtures: %s\n' "$*" >&2; }

# Prints the directory of package $1 at version $2, installing it if needed.
package_dir() {
  local name="$1" version="$2" dir
  for dir in "$deps/node/node_modules/$name" "$tmp/node_modules/$name"; do
    if [ -f "$dir/package.json" ] &&
      [ "$(node -p "require('$dir/package.json').version")" = "$version" ]; then
      echo "$dir"
      return
    fi
  done
  log "installing $name@$version into a temporary directory"
  npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "$name@$version" >&2
  echo "$tmp/node_modules/$name"
}

everything="$(package_dir @modelcontextprotocol/server-everything "$EVERYTHING_VERSION")"
filesystem="$(package_dir @modelcontextprotocol/server-filesystem "$FILESYSTEM_VERSION")"

# The filesystem server needs an allowed directory; its tool list does not
# mention it, but use a fixed name anyway so captures are reproducible.
allowed="$tmp/allowed"
mkdir -p "$allowed"

log "capturing server-everything $EVERYTHING_VERSION"
node "$root/scripts/mcp-list-tools.mjs" @modelcontextprotocol/server-everything "$EVERYTHING_VERSION" \
  -- node "$everything/dist/index.js" stdio >"$out/server-everything.tools.json"

log "capturing server-filesystem $FILESYSTEM_VERSION"
node "$root/scripts/mcp-list-tools.mjs" @modelcontextprotocol/server-filesystem "$FILESYSTEM_VERSION" \
  -- node "$filesystem/dist/index.js" "$allowed" >"$out/server-filesystem.tools.json"

log "fixtures written to $out"
