#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against the real
# `toolbridge` binary (through scripts/conformance-client.sh), with both
# releases of the suite:
#
# - 0.1.16 ($CONFORMANCE): the CI set of scenarios one by one. A scenario
#   fails on a failed check or a warning, when the suite itself reports
#   failure, or when it produced no checks at all: a client that never
#   connects shows "0 passed, 0 failed", which is not a pass.
# - 0.2.0-alpha.12 ($CONFORMANCE_02): each spec revision's frozen requirement
#   set (`--requirements 2025-11-25`, `--requirements 2026-07-28`; the suite
#   runs a set's scenarios in parallel), and the extension scenarios outside
#   them (skills). A run fails on any failed check or warning of a scored
#   scenario, on a scenario or a run with no checks, and on the suite's own
#   failure. The scenarios a set runs but does not score (extensions, ones
#   added after the release) are counted; those in `must_pass` below fail
#   the run like scored ones: a scenario goes there once it passes.
#
# Usage: scripts/conformance.sh [SCENARIO...]   (0.1.16 scenarios only; default:
# everything above). Needs target/debug/toolbridge (or $TOOLBRIDGE) built.
# Takes about a minute (the 0.2 runs go beside the 0.1.16 ones).
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
# Not scored by the 0.2 requirement sets, yet required here: they pass.
# The auth extensions (client credentials with a secret or private_key_jwt,
# enterprise-managed ID-JAG, workload identity, DPoP with and without server
# nonces) run in both sets.
# The skills extension's (SEP-2640) client scenarios, one check each: no
# skill file read on listing (`skills list`), and a SKILL.md that does not
# match its entry (digest, size, frontmatter) refused before any other file
# of the skill is read (`skills get --save`).
skills_02=(sep-2640-client-no-prefetch sep-2640-client-verify-digest
  sep-2640-client-verify-size sep-2640-client-verify-frontmatter)
must_pass=(json-schema-2020-12-preservation auth/client-credentials-basic
  auth/client-credentials-jwt auth/enterprise-managed-authorization auth/wif-jwt-bearer
  auth/dpop auth/dpop-nonce "${skills_02[@]}")
# 0.2's extension scenarios no requirement set runs: run and counted (the
# skills ones must pass, above).
extra_02=("${skills_02[@]}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One 0.1.16 scenario; its verdict on stdout, the log on stderr when it failed.
run_016() {
  local scenario=$1 log code line passed total failed warnings
  log=$(mktemp -p "$work")
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
    return 1
  fi
  echo "conformance $scenario: $passed/$total checks passed"
}

# One 0.2 run (`--requirements REV` or `--scenario NAME`), judged by
# scripts/conformance-verdict.py.
run_02() {
  local kind=$1 name=$2 dir
  dir=$(mktemp -d -p "$work")
  set +e
  "$NODE22" "$CONFORMANCE_02" client --command "$PWD/scripts/conformance-client.sh" \
    "--$kind" "$name" --timeout 30000 -o "$dir/results" >"$dir/log" 2>&1
  local code=$?
  set -e
  python3 scripts/conformance-verdict.py --kind "$kind" --name "$name" --exit-code "$code" \
    --log "$dir/log" --results "$dir/results" --must-pass "${must_pass[*]}"
}

status=0
if [ ${#scenarios[@]} -gt 0 ]; then
  for scenario in "${scenarios[@]}"; do run_016 "$scenario" || status=1; done
  exit $status
fi
default_016=(initialize tools_call sse-retry elicitation-sep1034-client-defaults "${auth_scenarios[@]}")
# The 0.2 runs beside the 0.1.16 ones (one scenario at a time there, so the
# two together stay within what a 2-core machine runs without timing out).
(
  s=0
  for revision in 2025-11-25 2026-07-28; do run_02 requirements "$revision" || s=1; done
  for scenario in "${extra_02[@]}"; do run_02 scenario "$scenario" || s=1; done
  exit $s
) >"$work/02.out" 2>&1 &
runs_02=$!
for scenario in "${default_016[@]}"; do run_016 "$scenario" || status=1; done
wait "$runs_02" || status=1
cat "$work/02.out"
exit $status
