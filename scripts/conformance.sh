#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against the real
# `toolbridge` binary (through scripts/conformance-client.sh). Fails when a
# scenario has a failed check or a warning, when the suite itself reports
# failure, or when a scenario produced no checks at all: a client that never
# connects shows "0 passed, 0 failed", which is not a pass.
#
# Usage: scripts/conformance.sh [SCENARIO...]   (default: the CI set)
# Needs target/debug/toolbridge (or $TOOLBRIDGE) built. Takes about 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
# The suite's installer lives in the shared folder beside the checkout
# ($CONFORMANCE_SETUP overrides); it installs into .deps/conformance once.
setup=${CONFORMANCE_SETUP:-}
for candidate in ../shared/conformance/setup.sh ../../shared/conformance/setup.sh; do
  [ -n "$setup" ] || { [ -f "$candidate" ] && setup=$candidate; } || true
done
[ -n "$setup" ] || { echo "conformance: setup.sh not found; set CONFORMANCE_SETUP" >&2; exit 2; }
# Run with bash: the shared folder may be laid out without execute bits.
eval "$(bash "$setup" .deps/conformance)"
scenarios=("$@")
# The OAuth set: the suite's 14 `--suite auth` scenarios (0.1.16) and the
# two 2025-03-26 back-compatibility ones.
auth_scenarios=(
  auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
  auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/pre-registration
  auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback
)
[ ${#scenarios[@]} -gt 0 ] || scenarios=(initialize tools_call sse-retry elicitation-sep1034-client-defaults "${auth_scenarios[@]}")
status=0
for scenario in "${scenarios[@]}"; do
  log=$(mktemp)
  set +e
  "$NODE22" "$CONFORMANCE" client --command "$PWD/scripts/conformance-client.sh" \
    --scenario "$scenario" --timeout 30000 >"$log" 2>&1
  code=$?
  set -e
  # "Passed: 3/3, 0 failed, 0 warnings"
  line=$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' "$log" | tail -1 || true)
  read -r passed total failed warnings < <(sed -E 's#^Passed: ([0-9]+)/([0-9]+), ([0-9]+) failed, ([0-9]+) warnings.*#\1 \2 \3 \4#' <<<"${line:-Passed: 0/0, 0 failed, 0 warnings}")
  if [ "$code" -ne 0 ] || [ -z "$line" ] || [ "$total" -eq 0 ] || [ "$failed" -ne 0 ] \
    || [ "$warnings" -ne 0 ] || [ "$passed" -ne "$total" ]; then
    echo "conformance $scenario: FAILED (${line:-no result line}; suite exit $code)" >&2
    cat "$log" >&2
    status=1
  else
    echo "conformance $scenario: $passed/$total checks passed"
  fi
  rm -f "$log"
done
exit $status
