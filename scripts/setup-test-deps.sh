#!/usr/bin/env bash
# Installs the pinned third-party MCP servers the tests run against into .deps/
# (ignored by git). Idempotent: each part is skipped when its pinned spec is
# already installed. Tests find everything through .deps/, never through $PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/.deps"
mkdir -p "$deps"

log() { printf 'setup-test-deps: %s\n' "$*" >&2; }

# npm packages, pinned exactly.
NPM_PACKAGES=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  # Keyless presets whose tool lists the preset tests compare (see presets.rs).
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-sequential-thinking@2026.8.31"
  # The TypeScript SDK as a client of the gateway (interop tests): the version
  # server-everything 2026.8.31 resolves to.
  "@modelcontextprotocol/sdk@1.32.2"
)
# The settings page's browser tests (tests/web/web_ui.rs): headless Chromium
# packaged for npm (no other download; it unpacks into $TMPDIR) and the
# DevTools client that drives it, and axe-core (Deque's accessibility rules
# engine, evaluated in the page by the scenarios). Their own folder, .deps/web.
WEB_NPM_PACKAGES=("@sparticuz/chromium@143.0.4" "puppeteer-core@24.43.1" "axe-core@4.14.1")
# The authorization server of the gateway's OAuth tests (tests/gateway/gateway_identity.rs):
# panva's oidc-provider, an OpenID-certified implementation. Its own folder,
# .deps/oidc.
OIDC_NPM_PACKAGES=("oidc-provider@9.13.3")
# The MCP Apps test server (tests/servers/apps_server.mjs, driven by the
# web_ui.rs mcp_app scenario): the MCP Apps SDK (SEP-1865, spec 2026-01-26),
# whose server helpers link the tool to its ui:// resource and whose App
# class, inlined into that resource, talks to the settings page's host
# bridge. 1.7.5 is the newest built on the TypeScript SDK 1.x, the SDK the
# other tests pin. Its own folder, .deps/ext-apps.
EXT_APPS_NPM_PACKAGES=("@modelcontextprotocol/ext-apps@1.7.5" "@modelcontextprotocol/sdk@1.32.2" "zod@4.6.7")
# Python environments: name and pinned requirements.
#   py2: the Python MCP SDK 2.x (protocol 2026-07-28, stdio/SSE/streamable HTTP)
#   py1: the Python MCP SDK 1.x, the last with a WebSocket server
PY2_REQS=("mcp==2.3.0")
PY1_REQS=("mcp[ws]==1.30.0")
#   presets: the keyless Python preset servers (run as `uvx` by the presets;
#   the tests start the venv's entry points directly, offline)
PRESETS_PY_REQS=("mcp-server-time==2026.10.19")
#   uv: uv and uvx, as the presets run the Python servers (the sandbox tests
#   start the time server through `uvx --offline`, from the uv cache that
#   install_uvx_cache fills once)
UV_REQS=("uv==0.13.8")
#   kube-validate: the Kubernetes API's JSON schemas, offline, and a validator
#   (tests/cli/deploy_manifests.rs checks deploy/kubernetes with it)
KUBE_VALIDATE_REQS=("kubernetes-validate==1.37.0")

#   py-tb: the toolbridge Python package's tests (scripts/test-python.sh):
#   its build backend, pytest, and what the drop-ins plug into. mcp 1.x:
#   langchain-mcp-adapters 0.3.2 requires mcp<2.
PY_TB_REQS=(
  "maturin==1.16.0" "pytest==9.2.0" "pytest-asyncio==1.5.0" "pytest-timeout==2.4.0"
  "langchain-core==1.8.1" "langchain-mcp-adapters==0.3.2" "openai-agents==0.24.0" "mcp==1.30.0"
)
#   suites: the drop-ins' third-party test suites, from their pinned sdists
#   (which hold their tests; unpacked into .deps/suites, run by
#   scripts/test-python.sh): langchain-mcp-adapters' tests/ and the OpenAI
#   Agents SDK's tests/mcp; and what they need in py-tb.
SUITE_SDISTS=("langchain-mcp-adapters==0.3.2" "openai-agents==0.24.0")
PY_TB_SUITE_REQS=("pytest-socket==0.7.0" "dirty-equals==0.11" "inline-snapshot==0.36.1")
#   py-tb-fastmcp: fastmcp 4's Client for the Python benchmark (bench/python),
#   and its skills server (SEP-2640) for the skills tests
#   (crates/toolbridge/tests/servers/skills_server.py); fastmcp 4 requires
#   mcp>=2.3, so it cannot share py-tb.
PY_TB_FASTMCP_REQS=("fastmcp==4.1.6" "mcp==2.3.0")
#   phoenix: Arize Phoenix, the OpenTelemetry collector and trace store the
#   gateway's trace test sends spans to and reads back through its REST API
#   (tests/gateway/gateway_traces.rs). The full package (no slim variant on PyPI
#   serves OTLP): about 850 MB and 5 minutes to install on 2 cores.
PHOENIX_REQS=("arize-phoenix==20.26.1")

stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

install_npm() {
  local want="${NPM_PACKAGES[*]}"
  if stamp_ok "$deps/node/.stamp" "$want"; then return; fi
  log "installing npm packages: $want"
  mkdir -p "$deps/node"
  (cd "$deps/node" && [ -f package.json ] || echo '{"private":true}' > package.json)
  npm install --prefix "$deps/node" --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}" >&2
  echo "$want" > "$deps/node/.stamp"
}

install_web() {
  local want="${WEB_NPM_PACKAGES[*]}"
  if stamp_ok "$deps/web/.stamp" "$want"; then return; fi
  log "installing the browser test packages: $want"
  mkdir -p "$deps/web"
  [ -f "$deps/web/package.json" ] || echo '{"private":true}' > "$deps/web/package.json"
  npm install --prefix "$deps/web" --no-audit --no-fund --loglevel=error "${WEB_NPM_PACKAGES[@]}" >&2
  echo "$want" > "$deps/web/.stamp"
}

install_oidc() {
  local want="${OIDC_NPM_PACKAGES[*]}"
  if stamp_ok "$deps/oidc/.stamp" "$want"; then return; fi
  log "installing the authorization server for the OAuth tests: $want"
  mkdir -p "$deps/oidc"
  [ -f "$deps/oidc/package.json" ] || echo '{"private":true}' > "$deps/oidc/package.json"
  npm install --prefix "$deps/oidc" --no-audit --no-fund --loglevel=error "${OIDC_NPM_PACKAGES[@]}" >&2
  echo "$want" > "$deps/oidc/.stamp"
}

install_ext_apps() {
  local want="${EXT_APPS_NPM_PACKAGES[*]}"
  if stamp_ok "$deps/ext-apps/.stamp" "$want"; then return; fi
  log "installing the MCP Apps SDK for the MCP Apps test server: $want"
  mkdir -p "$deps/ext-apps"
  [ -f "$deps/ext-apps/package.json" ] || echo '{"private":true}' > "$deps/ext-apps/package.json"
  npm install --prefix "$deps/ext-apps" --no-audit --no-fund --loglevel=error "${EXT_APPS_NPM_PACKAGES[@]}" >&2
  echo "$want" > "$deps/ext-apps/.stamp"
}

install_venv() {
  local name="$1"; shift
  local want="$*"
  if stamp_ok "$deps/$name/.stamp" "$want"; then return; fi
  log "creating Python venv $name: $want"
  rm -rf "$deps/$name"
  python3 -m venv "$deps/$name"
  "$deps/$name/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
  echo "$want" > "$deps/$name/.stamp"
}

# The third-party suites: their stamp is in py-tb, so a new py-tb gets them
# again.
install_suites() {
  local want="${SUITE_SDISTS[*]} ${PY_TB_SUITE_REQS[*]}"
  if stamp_ok "$deps/py-tb/.stamp-suites" "$want" && [ -d "$deps/suites" ]; then return; fi
  log "installing the third-party suites: $want"
  "$deps/py-tb/bin/pip" install --quiet --disable-pip-version-check "${PY_TB_SUITE_REQS[@]}" >&2
  rm -rf "$deps/suites"
  mkdir -p "$deps/suites"
  "$deps/py-tb/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    -d "$deps/suites" "${SUITE_SDISTS[@]}" >&2
  local sdist
  for sdist in "$deps/suites"/*.tar.gz; do tar -xzf "$sdist" -C "$deps/suites"; done
  echo "$want" > "$deps/py-tb/.stamp-suites"
}

# The user's uv cache holds the time server at its pinned version, so that
# `uvx --offline` (tests/pool/test_sandbox.rs) starts it without the network, as
# uvx does once it has run a server.
install_uvx_cache() {
  local want="${PRESETS_PY_REQS[0]}"
  if stamp_ok "$deps/uv/.uvx-cache" "$want"; then return; fi
  log "caching $want for uvx"
  # As a server's minimal environment has it: the cache in ~/.cache/uv.
  env -u UV_CACHE_DIR -u XDG_CACHE_HOME "$deps/uv/bin/uvx" --quiet --from "$want" mcp-server-time --help >/dev/null
  echo "$want" > "$deps/uv/.uvx-cache"
}

# HAProxy (Debian's package) in front of gateway replicas (gateway_replicas.rs):
# installed with apt-get when missing and possible, else its .deb unpacked
# into .deps/haproxy without root.
install_haproxy() {
  if command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || [ -x "$deps/haproxy/usr/sbin/haproxy" ]; then
    return
  fi
  if [ "$(id -u)" = 0 ]; then
    log "installing haproxy with apt-get"
    apt-get install -y -qq haproxy >&2 || { apt-get update -qq >&2 && apt-get install -y -qq haproxy >&2; }
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    log "installing haproxy with sudo apt-get"
    sudo -n apt-get install -y -qq haproxy >&2
  else
    log "unpacking haproxy's .deb into $deps/haproxy"
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && apt-get download haproxy >&2)
    dpkg -x "$tmp"/haproxy_*.deb "$deps/haproxy"
    rm -rf "$tmp"
  fi
}

install_haproxy
install_npm &
npm_pid=$!
install_venv py2 "${PY2_REQS[@]}"
install_venv py1 "${PY1_REQS[@]}"
install_venv presets-py "${PRESETS_PY_REQS[@]}"
install_venv uv "${UV_REQS[@]}"
install_uvx_cache
install_venv kube-validate "${KUBE_VALIDATE_REQS[@]}"
install_venv py-tb "${PY_TB_REQS[@]}"
install_suites
install_venv py-tb-fastmcp "${PY_TB_FASTMCP_REQS[@]}"
install_venv phoenix "${PHOENIX_REQS[@]}"
wait "$npm_pid"
install_web
install_oidc
install_ext_apps
# The conformance suite and its reference server (the resource, prompt and
# completion tests start it); its installer lives in the shared folder beside
# the checkout ($CONFORMANCE_SETUP overrides), and installs once.
for setup in "${CONFORMANCE_SETUP:-}" "$root/../shared/conformance/setup.sh" "$root/../../shared/conformance/setup.sh"; do
  if [ -n "$setup" ] && [ -f "$setup" ]; then bash "$setup" "$deps/conformance" >/dev/null; break; fi
done
log "all test dependencies are in $deps"
