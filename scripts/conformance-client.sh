#!/usr/bin/env bash
# The client half of the official MCP conformance suite's client scenarios:
# the suite runs this with the URL of its scenario server as the last
# argument and the scenario's name in $MCP_CONFORMANCE_SCENARIO. It drives
# the real `toolbridge` binary ($TOOLBRIDGE, default target/debug/toolbridge)
# against that URL, as a user would: a config naming the server, then the
# command the scenario exercises.
#
# OAuth scenarios (auth/*): the "browser" is curl following the
# authorization server's redirect back to toolbridge's loopback listener
# ($BROWSER, as a user would set it); pre-registered credentials from
# $MCP_CONFORMANCE_CONTEXT go into the server's "oauth" block.
set -euo pipefail
url=${!#}
bin=${TOOLBRIDGE:-$(cd "$(dirname "$0")/.." && pwd)/target/debug/toolbridge}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A private cache and sign-in store: a tool list or tokens from an earlier
# run must not answer for the server.
export XDG_CACHE_HOME=$dir/cache XDG_DATA_HOME=$dir/data
scenario=${MCP_CONFORMANCE_SCENARIO:-}
oauth='{}'
case $scenario in
  auth/*)
    cat >"$dir/browser" <<'BROWSER'
#!/bin/sh
exec curl -sfL -o /dev/null "$1"
BROWSER
    chmod +x "$dir/browser"
    export BROWSER=$dir/browser
    context=${MCP_CONFORMANCE_CONTEXT:-}
    if [ -n "$context" ]; then
      oauth=$(python3 -c 'import json,sys; c=json.loads(sys.argv[1]); print(json.dumps({k2: c[k1] for k1, k2 in (("client_id","clientId"),("client_secret","clientSecret")) if k1 in c}))' "$context")
    fi
    # The suite's CIMD scenario expects this client ID metadata document URL.
    [ "$scenario" = auth/basic-cimd ] && oauth='{"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}'
    ;;
esac
printf '{"mcpServers": {"conformance": {"type": "http", "url": "%s", "oauth": %s}}}\n' "$url" "$oauth" >"$dir/config.json"
tb() { "$bin" --config "$dir/config.json" "$@"; }
case $scenario in
  tools_call) tb call conformance add_numbers --args '{"a": 5, "b": 3}' ;;
  sse-retry) tb call conformance test_reconnection ;;
  # The server elicits with a default for each field and checks they came back.
  elicitation-sep1034-client-defaults)
    tb --accept-defaults call conformance test_client_elicitation_defaults ;;
  auth/*) tb call conformance test-tool ;;
  *) tb tools ;;
esac
