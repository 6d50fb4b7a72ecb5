#!/usr/bin/env bash
# Captures the real tool lists of pinned third-party MCP servers into
# crates/toolbridge/tests/fixtures/, for the format golden tests, and into
# crates/toolbridge/tests/fixtures/search/ the tool lists the tool-search
# benchmark ranks (`cargo bench -p toolbridge --bench search`): 21 servers
# that list their tools without an account (a placeholder token where a
# server insists on one before it lists; no API is called).
#
# server-everything is taken from .deps/ (scripts/setup-test-deps.sh; set
# TOOLBRIDGE_DEPS to use another checkout's) when the pinned version is there; anything missing is installed with npm into a
# temporary directory that is removed afterwards. After capturing, regenerate
# the expected outputs with:
#   UPDATE_GOLDEN=1 cargo test -p toolbridge --test formats format_golden::
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
  for dir in "$deps/node/node_modules/$name" "$deps/bench-servers/node_modules/$name" \
    "$tmp/node_modules/$name"; do
    if [ -f "$dir/package.json" ] &&
      [ "$(node -p "require('$dir/package.json').version")" = "$version" ]; then
      echo "$dir"
      return
    fi
  done
  log "installing $name@$version into a temporary directory"
  # No install scripts: browser automation servers would download browsers,
  # and listing tools never needs one.
  npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "$name@$version" >&2
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

# The tool-search benchmark's servers.
search="$out/search"
mkdir -p "$search"

# npm_tools FILE PACKAGE VERSION [ARGS...]: runs the package's first `bin`.
npm_tools() {
  local file="$1" name="$2" version="$3" dir bin
  shift 3
  dir="$(package_dir "$name" "$version")"
  bin="$(node -p "const b = require('$dir/package.json').bin; typeof b === 'string' ? b : Object.values(b)[0]")"
  log "capturing $name $version"
  node "$root/scripts/mcp-list-tools.mjs" "$name" "$version" -- node "$dir/$bin" "$@" >"$search/$file.tools.json"
}

# py_tools FILE PACKAGE VERSION [ARGS...]: runs the package's program of the
# same name from a virtualenv (.deps/bench-py when it has the version).
py_tools() {
  local file="$1" name="$2" version="$3" venv="$deps/bench-py"
  shift 3
  if ! "$venv/bin/pip" show "$name" 2>/dev/null | grep -qx "Version: $version"; then
    venv="$tmp/venv-$name"
    log "installing $name==$version into a temporary virtualenv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "$name==$version" >&2
  fi
  log "capturing $name $version"
  node "$root/scripts/mcp-list-tools.mjs" "$name" "$version" -- "$venv/bin/$name" "$@" >"$search/$file.tools.json"
}

cp "$out/server-everything.tools.json" "$out/server-filesystem.tools.json" "$search/"
npm_tools server-memory @modelcontextprotocol/server-memory 2026.8.31
npm_tools server-sequential-thinking @modelcontextprotocol/server-sequential-thinking 2026.8.31
npm_tools playwright @playwright/mcp 0.0.83
npm_tools chrome-devtools chrome-devtools-mcp 1.11.0
npm_tools puppeteer @modelcontextprotocol/server-puppeteer 2025.5.12
npm_tools playwright-executeautomation @executeautomation/playwright-mcp-server 1.0.12
npm_tools notion @notionhq/notion-mcp-server 2.5.2
GITHUB_PERSONAL_ACCESS_TOKEN=placeholder npm_tools github @modelcontextprotocol/server-github 2025.4.8
GITLAB_PERSONAL_ACCESS_TOKEN=placeholder npm_tools gitlab @modelcontextprotocol/server-gitlab 2025.4.25
SLACK_BOT_TOKEN=placeholder SLACK_TEAM_ID=placeholder npm_tools slack @modelcontextprotocol/server-slack 2025.4.25
GOOGLE_MAPS_API_KEY=placeholder npm_tools google-maps @modelcontextprotocol/server-google-maps 0.6.2
npm_tools kubernetes mcp-server-kubernetes 4.1.7
npm_tools desktop-commander @wonderwhy-er/desktop-commander 0.2.52
npm_tools mongodb mongodb-mcp-server 3.0.4
CIRCLECI_TOKEN=placeholder npm_tools circleci @circleci/mcp-server-circleci 0.20.0
npm_tools context7 @upstash/context7-mcp 4.1.1
py_tools git mcp-server-git 2026.10.19
py_tools fetch mcp-server-fetch 2026.10.24
py_tools time mcp-server-time 2026.10.19

log "fixtures written to $out"
