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
# $MCP_CONFORMANCE_CONTEXT go into the server's "oauth" block, and for the
# auth extensions' scenarios the unattended grant they test ("grant":
# "client_credentials", "jwt_bearer", "id_jag") with the keys and tokens
# the context gives, as files where a user would have files.
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
# JSON work in the driver (reading the scenario's context and toolbridge's
# listing) is python3's; what the checks test is toolbridge's.
py() { python3 -c "$@"; }
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
    # The extensions' unattended grants, configured as a user would: the
    # key and the workload's token as files (a mounted secret, a projected
    # service-account token), the ID token from the enterprise sign-on.
    case $scenario in
      auth/client-credentials-basic)
        oauth=$(py 'import json,sys; c=json.loads(sys.argv[1]); print(json.dumps({"grant": "client_credentials", "clientAuth": "client_secret_basic", "clientId": c["client_id"], "clientSecret": c["client_secret"]}))' "$context") ;;
      auth/client-credentials-jwt)
        py 'import json,sys; print(json.loads(sys.argv[1])["private_key_pem"])' "$context" >"$dir/client-key.pem"
        oauth=$(py 'import json,sys; c=json.loads(sys.argv[1]); print(json.dumps({"grant": "client_credentials", "clientAuth": "private_key_jwt", "clientId": c["client_id"], "privateKeyFile": sys.argv[2], "signingAlgorithm": c.get("signing_algorithm", "ES256")}))' "$context" "$dir/client-key.pem") ;;
      auth/wif-jwt-bearer)
        py 'import json,sys; print(json.loads(sys.argv[1])["valid_jwt"])' "$context" >"$dir/workload-token"
        oauth=$(py 'import json,sys; c=json.loads(sys.argv[1]); print(json.dumps({"grant": "jwt_bearer", "clientId": c["client_id"], "assertionFile": sys.argv[2]}))' "$context" "$dir/workload-token") ;;
      auth/enterprise-managed-authorization)
        oauth=$(py 'import json,sys; c=json.loads(sys.argv[1]); print(json.dumps({"grant": "id_jag", "clientId": c["client_id"], "clientSecret": c["client_secret"], "idp": {"issuer": c["idp_issuer"], "tokenEndpoint": c["idp_token_endpoint"], "clientId": c["idp_client_id"], "idToken": c["idp_id_token"]}}))' "$context") ;;
    esac
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
  # SEP-2322: the four tools in one provider response, which `exec` runs
  # concurrently through one pool: each call's input-required rounds must
  # keep to that call (state echoed exactly, none where none was given).
  sep-2322-client-request-state)
    py 'import json; print(json.dumps({"tool_calls": [{"id": str(i), "type": "function", "function": {"name": "mcp__conformance__" + n, "arguments": "{}"}} for i, n in enumerate(["test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"])]}))' \
      | tb --accept-defaults exec --format openai >/dev/null ;;
  # SEP-2243: the malformed tools must be left out of the list; every tool
  # toolbridge lists is called.
  http-invalid-tool-headers)
    tb tools --server conformance | py 'import json, sys; [print(t["name"]) for t in json.load(sys.stdin)]' \
      | while read -r tool; do tb call conformance "$tool" --args '{"region": "us-west1"}' >/dev/null; done ;;
  # SEP-1613/2106: the focal tool's inputSchema, as toolbridge lists it (from
  # its tool cache: the listing before wrote it), echoed back to the server.
  json-schema-2020-12-preservation)
    tb tools --server conformance >/dev/null
    tb tools --server conformance \
      | py 'import json, sys; print(json.dumps({"schema": next(t["inputSchema"] for t in json.load(sys.stdin) if t["name"] == "json_schema_2020_12_tool")}))' \
      | tb call conformance json_schema_echo --args - ;;
  auth/*) tb call conformance test-tool ;;
  # SEP-2640: listing reads no skill file.
  sep-2640-client-no-prefetch) tb skills list --server conformance ;;
  # SEP-2640: the scenario serves a SKILL.md that does not match its entry
  # (digest, size or frontmatter). Saving the skill reads every file it
  # lists; toolbridge must refuse at SKILL.md (exit 3) and read no further.
  sep-2640-client-verify-*)
    tb skills get conformance pdf-processing --save "$dir/skills" || [ $? -eq 3 ] ;;
  *)
    # A scenario that names its calls (SEP-2243's custom headers): each one,
    # as given, without listing first.
    calls=$(py 'import json, sys; [print(json.dumps(c)) for c in json.loads(sys.argv[1] or "{}").get("toolCalls", [])]' "${MCP_CONFORMANCE_CONTEXT:-}")
    if [ -n "$calls" ]; then
      while read -r call; do
        tool=$(py 'import json, sys; print(json.loads(sys.argv[1])["name"])' "$call")
        py 'import json, sys; print(json.dumps(json.loads(sys.argv[1])["arguments"]))' "$call" \
          | tb call conformance "$tool" --args - >/dev/null
      done <<<"$calls"
    else
      tb tools
    fi
    ;;
esac
