# Installs the pinned peers into bench/peers/.deps (git-ignored) when they
# are missing: sourced by gateway.sh and clients.sh, with $deps and log()
# set. Needs node/npm and python3.
MCP_PROXY="mcp-proxy==0.13.0"
SUPERGATEWAY="supergateway@4.0.0"
TS_SDK="@modelcontextprotocol/sdk@1.32.2"

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
