#!/usr/bin/env bash
# The client half of the official MCP conformance suite's client scenarios:
# the suite runs this with the URL of its scenario server as the last
# argument and the scenario's name in $MCP_CONFORMANCE_SCENARIO. It drives
# the real `toolbridge` binary ($TOOLBRIDGE, default target/debug/toolbridge)
# against that URL, as a user would: a config naming the server, then the
# command the scenario exercises.
set -euo pipefail
url=${!#}
bin=${TOOLBRIDGE:-$(cd "$(dirname "$0")/.." && pwd)/target/debug/toolbridge}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A private cache: a tool list cached by an earlier run must not answer for
# the server.
export XDG_CACHE_HOME=$dir/cache
printf '{"mcpServers": {"conformance": {"type": "http", "url": "%s"}}}\n' "$url" >"$dir/config.json"
tb() { "$bin" --config "$dir/config.json" "$@"; }
case ${MCP_CONFORMANCE_SCENARIO:-} in
  tools_call) tb call conformance add_numbers --args '{"a": 5, "b": 3}' ;;
  sse-retry) tb call conformance test_reconnection ;;
  # The server elicits with a default for each field and checks they came back.
  elicitation-sep1034-client-defaults)
    tb --accept-defaults call conformance test_client_elicitation_defaults ;;
  *) tb tools ;;
esac
