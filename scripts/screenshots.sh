#!/usr/bin/env bash
# Screenshots of the settings page, `<name>-<lang>-<width>.png` in en, zh
# and ja, into docs/screenshots/: every view (Home, Servers, Tools with an
# image result, Activity, Logs, Presets, Profiles and its editor, Doctor's
# findings) at 1280 and 390 px; the add-server form, the Import dialog, a
# remote server's card offering Sign in and an MCP App in the Tools view
# at 1280 px; the menu at 390 px. Not run by CI: run it after changing
# the page.
#
# Needs what the browser tests need (scripts/setup-test-deps.sh: .deps/web,
# .deps/node, .deps/ext-apps) and a CJK font: without root, Debian's
# fonts-wqy-microhei .deb is unpacked into .deps/fonts and Chromium's
# fontconfig pointed at it (FONTCONFIG_PATH). Set FONTCONFIG_PATH yourself
# to use another (e.g. /etc/fonts with fonts-noto-cjk installed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
deps="$root/.deps"
out="$root/docs/screenshots"
log() { printf 'screenshots: %s\n' "$*" >&2; }

[ -d "$deps/web/node_modules/puppeteer-core" ] && [ -d "$deps/ext-apps/node_modules" ] || scripts/setup-test-deps.sh

if [ -z "${FONTCONFIG_PATH:-}" ]; then
  fonts="$deps/fonts"
  if ! ls "$fonts"/usr/share/fonts/truetype/wqy/*.tt? >/dev/null 2>&1; then
    log "unpacking fonts-wqy-microhei into $fonts"
    tmp="$(mktemp -d)"
    (cd "$tmp" && apt-get download fonts-wqy-microhei >&2)
    mkdir -p "$fonts"
    dpkg -x "$tmp"/fonts-wqy-microhei_*.deb "$fonts"
    rm -rf "$tmp"
  fi
  # The Chromium package unpacks its own Latin font into $TMPDIR/fonts.
  cat > "$fonts/fonts.conf" <<EOF
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>$fonts/usr/share/fonts</dir>
  <dir>${TMPDIR:-/tmp}/fonts</dir>
  <cachedir>$fonts/cache</cachedir>
</fontconfig>
EOF
  export FONTCONFIG_PATH="$fonts"
fi

cargo build -q -p toolbridge-cli
bin="$root/target/debug/toolbridge"
home="$(mktemp -d "${TMPDIR:-/tmp}/toolbridge-demo.XXXX")"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$home"
}
trap cleanup EXIT
cat > "$home/config.json" <<EOF
{
  "mcpServers": {
    "example": { "command": "toolbridge", "args": ["example-server"] },
    "time": { "command": "uvx", "args": ["mcp-server-time"], "env": { "TZ": "UTC" }, "disabled": true }
  },
  "profiles": {
    "demo": {
      "servers": ["example"],
      "tools": ["example__echo", "example__tiny_*", "!example__tiny_audio"],
      "rename": { "example__echo": "say" },
      "descriptions": { "example__tiny_image": "A very small picture." }
    },
    "agent": { "discovery": "search" }
  }
}
EOF
# The log exists before the gateway starts: the wait below reads it at once
# (with pipefail, a read of a file the background job has not opened yet
# failed the script on a loaded machine).
: > "$home/serve.log"
env -u TOOLBRIDGE_GATEWAY_TOKEN -u TOOLBRIDGE_CONFIG PATH="$(dirname "$bin"):$PATH" \
  HOME="$home" XDG_CONFIG_HOME="$home/config" \
  XDG_CACHE_HOME="$home/cache" XDG_DATA_HOME="$home/data" \
  "$bin" --config "$home/config.json" serve --listen 127.0.0.1:0 2> "$home/serve.log" &
server=$!
base=""
for _ in $(seq 1 300); do
  base="$(sed -n 's|.*listening on \(http://[^ ]*/\)mcp.*|\1|p' "$home/serve.log" | head -1)"
  [ -n "$base" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$home/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$base" ] || { log "the gateway did not start"; cat "$home/serve.log" >&2; exit 1; }

mkdir -p "$out"
# Every shot is taken anew: a shot renamed or dropped leaves no old file.
rm -f "$out"/*.png
BASE_URL="$base" WEB_DEPS="$deps/web" NODE_DEPS="$deps/node" \
  APPS_SERVER="$root/crates/toolbridge/tests/servers/apps_server.mjs" EXT_APPS_DEPS="$deps/ext-apps" node crates/toolbridge-cli/tests/web/screenshots.cjs "$out"
du -ch "$out"/*.png | tail -1 >&2
