#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios (`--suite
# active`) through `toolbridge serve`, in front of the suite's reference
# server as its only upstream. Counts the checks and fails on any failure or
# warning, on a suite failure, or when no check ran at all. Then the 0.2
# suite's blocks below: tasks, input-required, `--requirements 2025-11-25` in
# front of both reference servers, `--requirements 2026-07-28` (but tasks-*),
# skills; each says what it allows and why.
#
# Usage: scripts/conformance-gateway.sh
# Needs target/debug/toolbridge (or $TOOLBRIDGE) built. Takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
setup=${CONFORMANCE_SETUP:-}
for candidate in ../shared/conformance/setup.sh ../../shared/conformance/setup.sh; do
  [ -n "$setup" ] || { [ -f "$candidate" ] && setup=$candidate; } || true
done
[ -n "$setup" ] || { echo "conformance-gateway: setup.sh not found; set CONFORMANCE_SETUP" >&2; exit 2; }
eval "$(bash "$setup" .deps/conformance)"
toolbridge=${TOOLBRIDGE:-$PWD/target/debug/toolbridge}

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A free port for the reference server: bind port 0, read it back.
free_port() { "$NODE22" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_for() { # wait_for FILE PATTERN SECONDS
  local deadline=$((SECONDS + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { echo "conformance-gateway: timed out waiting for $2 in $1" >&2; cat "$1" >&2; exit 1; }
    sleep 0.1
  done
}

port=$(free_port)
# exec: the subshell becomes the server, a process group of its own.
(cd "$EVERYTHING_SERVER" && PORT=$port exec setsid "$NODE22" node_modules/.bin/tsx everything-server.ts >"$work/upstream.log" 2>&1) &
pids+=($!)
wait_for "$work/upstream.log" "$port" 60

mkdir -p "$work/home" "$work/config/toolbridge" "$work/cache"
cat >"$work/config/toolbridge/config.json" <<JSON
{ "mcpServers": { "everything": { "type": "http", "url": "http://localhost:$port/mcp" } } }
JSON
HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_CACHE_HOME="$work/cache" \
  setsid "$toolbridge" serve --listen 127.0.0.1:0 2>"$work/gateway.log" &
pids+=($!)
wait_for "$work/gateway.log" "listening on http://" 30
url=$(grep -o 'listening on http://[^ ]*' "$work/gateway.log" | head -1 | sed 's/listening on //')
# The suite's dns-rebinding scenario wants the gateway reached as localhost.
url=${url/127.0.0.1/localhost}
everything_url=$url  # the 2025-11-25 requirements block below uses it too

log="$work/suite.log"
set +e
"$NODE22" "$CONFORMANCE" server --url "$url" --suite active >"$log" 2>&1
code=$?
set -e
# The summary has one line per scenario: "✓ ping: 1 passed, 0 failed".
# Sum the checks, so a scenario that ran no check is not a pass.
read -r passed failed < <(grep -E '^[✓✗] [^:]+: [0-9]+ passed, [0-9]+ failed' "$log" \
  | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' \
  | awk '{p+=$1; f+=$2} END {print p+0, f+0}')
if [ "$code" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
  echo "conformance-gateway: FAILED ($passed passed, $failed failed; suite exit $code)" >&2
  cat "$log" >&2
  echo "--- gateway log" >&2; tail -50 "$work/gateway.log" >&2
  exit 1
fi
echo "conformance-gateway: $passed checks passed"

# count_checks RESULTS ALLOWED [SCENARIOS]: counts the checks of a suite run
# saved with `-o RESULTS` (each scenario's checks.json; the summary hides
# warnings). ALLOWED is space-separated SCENARIO/STATUS/CHECK_ID entries (a
# check that may fail or warn there, and nowhere else). SCENARIOS, when
# given, are the scenarios that must each have run a check. Prints
# "PASSED FAILED WARNINGS ALLOWED UNEXPECTED" (UNEXPECTED "-" when none).
count_checks() {
  "$NODE22" -e '
    const fs = require("fs"), path = require("path");
    const [dir, allowed, wanted] = process.argv.slice(1);
    const ok = new Set(allowed.split(" ").filter(Boolean));
    let p = 0, f = 0, w = 0, a = 0; const bad = [], ran = new Set();
    for (const run of fs.readdirSync(dir)) {
      const file = path.join(dir, run, "checks.json");
      if (!fs.existsSync(file)) continue;
      const scenario = run.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
      const checks = JSON.parse(fs.readFileSync(file, "utf8"));
      if (checks.length > 0) ran.add(scenario);
      for (const c of checks) {
        if (c.status === "SUCCESS") { p++; continue; }
        if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
        if (c.status === "FAILURE") f++; else w++;
        if (ok.has(`${scenario}/${c.status}/${c.id}`)) a++;
        else bad.push(`${scenario}/${c.status}/${c.id}`);
      }
    }
    for (const s of (wanted || "").split(" ").filter(Boolean))
      if (!ran.has(s)) bad.push(`${s}/NO-CHECKS`);
    console.log(p, f, w, a, bad.join(",") || "-");' "$1" "$2" "${3:-}"
}

# run_scenarios LABEL URL GATEWAY_LOG PREFIX ALLOWED [NO_CHECKS]: runs every
# scenario of the 0.2 suite whose name starts with PREFIX against URL and
# counts its checks. A scenario is bad when it has a failure or warning whose
# id is not in ALLOWED (space-separated), a failure the suite did not name,
# or no check at all (but the scenarios in NO_CHECKS, which the suite itself
# stubs).
# Exits when any scenario is bad or no check ran at all.
run_scenarios() {
  local label=$1 url=$2 gateway_log=$3 prefix=$4 allowed=" $5 " no_checks=" ${6:-} "
  local scenarios
  scenarios=$("$NODE22" "$CONFORMANCE_02" list | sed -nE "s/^ *- (${prefix}[a-z0-9-]*).*/\1/p")
  [ -n "$scenarios" ] || { echo "conformance-gateway $label: the suite lists no $prefix scenario" >&2; exit 1; }
  local total_passed=0 total_failed=0 bad=0 scenario
  for scenario in $scenarios; do
    local out="$work/$label-$scenario.log" clean passed total failed unexpected named id
    "$NODE22" "$CONFORMANCE_02" server --url "$url" --scenario "$scenario" >"$out" 2>&1 || true
    clean=$(sed 's/\x1b\[[0-9;]*m//g' "$out")
    read -r passed total failed < <(sed -nE 's/^Passed: ([0-9]+)\/([0-9]+), ([0-9]+) failed.*/\1 \2 \3/p' <<<"$clean" | tail -1)
    passed=${passed:-0}; total=${total:-0}; failed=${failed:-0}
    unexpected="" named=0
    for id in $(sed -nE 's/.*\[([a-z0-9-]+) *\] (FAILURE|WARNING).*/\1/p' <<<"$clean"); do
      [[ "$allowed" == *" $id "* ]] || unexpected+=" $id"
    done
    named=$(grep -cE '\[[a-z0-9-]+ *\] FAILURE' <<<"$clean" || true)
    [ "$failed" -le "$named" ] || unexpected+=" (a failure without an id)"
    echo "conformance-gateway $label: $scenario: $passed/$total passed, $failed failed${unexpected:+ (unexpected:$unexpected)}"
    total_passed=$((total_passed + passed)); total_failed=$((total_failed + failed))
    if [ -n "$unexpected" ] || { [ "$total" -eq 0 ] && [[ "$no_checks" != *" $scenario "* ]]; }; then
      bad=1; cat "$out" >&2
    fi
  done
  if [ "$bad" -ne 0 ] || [ "$total_passed" -eq 0 ]; then
    echo "conformance-gateway $label: FAILED ($total_passed passed, $total_failed failed)" >&2
    echo "--- gateway log" >&2; tail -50 "$gateway_log" >&2
    exit 1
  fi
  echo "conformance-gateway $label: $total_passed checks passed, $total_failed expected failures"
}

# ---------------------------------------------------------------------------
# Tasks block (issue 25, "Tasks through the gateway"): every `tasks-*` server
# scenario of the 0.2 suite ($CONFORMANCE_02) against the gateway's own tasks.
# Upstreams: $EVERYTHING_SERVER_02 (it has no tasks and none of the tools the
# scenarios call) and crates/toolbridge/tests/servers/tasks_fixture.py (the
# scenarios' tools, greet, slow_compute, failing_job, ..., as plain tools of a
# Python `mcp` 1.x server without tasks) and tasks_fixture_2026.py (the one
# tool that needs a 2026-07-28 server, Python `mcp` 2.x, no tasks either).
# The profile `tasks` gives the
# fixture's tools the bare names the scenarios call. Each scenario's checks are
# counted; the block fails on a failure or warning not in `expected` below, on
# a scenario that ran no check (but the one the suite itself stubs), or when
# no check ran at all.
# ---------------------------------------------------------------------------
tasks_block() {
  local python=${TASKS_FIXTURE_PYTHON:-$PWD/.deps/py1/bin/python}
  local python2=${TASKS_FIXTURE_PYTHON2:-$PWD/.deps/py2/bin/python}
  local fixture_log="$work/tasks-fixture.log" tasks_gateway_log="$work/tasks-gateway.log"
  everything_port=$(free_port)  # global: the input-required block's upstream too
  (cd "$EVERYTHING_SERVER_02" && PORT=$everything_port exec setsid "$NODE22" node_modules/.bin/tsx everything-server.ts >"$work/upstream-02.log" 2>&1) &
  pids+=($!)
  (exec setsid "$python" crates/toolbridge/tests/servers/tasks_fixture.py streamable-http >"$fixture_log" 2>&1) &
  pids+=($!)
  wait_for "$work/upstream-02.log" "$everything_port" 60
  wait_for "$fixture_log" "LISTENING" 30
  local fixture_port; fixture_port=$(sed -n 's/^LISTENING //p' "$fixture_log" | head -1)
  local renames="" tool
  for tool in greet slow_compute failing_job protocol_error_job confirm_delete multi_input; do
    renames+="${renames:+, }\"fixture__$tool\": \"$tool\""
  done
  renames+=", \"fixture26__test_tool_with_task\": \"test_tool_with_task\""
  mkdir -p "$work/tasks-home" "$work/tasks-config/toolbridge" "$work/tasks-cache"
  cat >"$work/tasks-config/toolbridge/config.json" <<JSON
{ "mcpServers": {
    "everything": { "type": "http", "url": "http://localhost:$everything_port/mcp" },
    "fixture": { "type": "http", "url": "http://127.0.0.1:$fixture_port/mcp" },
    "fixture26": { "command": "$python2", "args": ["$PWD/crates/toolbridge/tests/servers/tasks_fixture_2026.py"] } },
  "profiles": { "tasks": { "rename": { $renames } } } }
JSON
  HOME="$work/tasks-home" XDG_CONFIG_HOME="$work/tasks-config" XDG_CACHE_HOME="$work/tasks-cache" \
    XDG_DATA_HOME="$work/tasks-home/data" setsid "$toolbridge" serve --listen 127.0.0.1:0 2>"$tasks_gateway_log" &
  pids+=($!)
  wait_for "$tasks_gateway_log" "listening on http://" 30
  local tasks_url
  tasks_url=$(grep -o 'listening on http://[^ ]*' "$tasks_gateway_log" | head -1 | sed 's/listening on //; s/127.0.0.1/localhost/; s#/mcp$#/mcp/tasks#')

  # Connected before the scenarios begin: a first call that waits for its
  # upstream's connection may outlast the gateway's synchronous window and
  # come back as a task, which the scenarios' "sync" tool must not.
  curl -sf -o /dev/null "$tasks_url" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/list' --data '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
      "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},
      "io.modelcontextprotocol/clientInfo":{"name":"conformance-gateway","version":"1"}}}}' \
    || { echo "conformance-gateway tasks: the gateway did not list the profile's tools" >&2; exit 1; }

  # The check the gateway fails on purpose, with why (docs/gateway.md, "Tasks"):
  # the gateway can run a task-only tool for a client without tasks (it waits
  # for the upstream's task itself), so it never answers -32021.
  run_scenarios tasks "$tasks_url" "$tasks_gateway_log" tasks- \
    sep-2663-server-returns-missing-capability-when-required tasks-status-notifications
}
tasks_block

# ---------------------------------------------------------------------------
# Input-required block (issue 25, SEP-2322): every `input-required-*` scenario
# of the 0.2 suite, a 2026-07-28 client of the gateway in front of
# $EVERYTHING_SERVER_02 (its only upstream, so the tools keep their names),
# reached over 2026-07-28: the upstream's questions go back to the client as
# it declared it can answer them, and no further. Fails on any failure, on a
# warning but the one the reference server gets alone (it accepts malformed
# inputResponses, and the gateway passes them on as they came), on a scenario
# that ran no check, or when no check ran at all.
# ---------------------------------------------------------------------------
input_required_block() {
  local log="$work/input-required-gateway.log"
  mkdir -p "$work/ir-home" "$work/ir-config/toolbridge" "$work/ir-cache"
  cat >"$work/ir-config/toolbridge/config.json" <<JSON
{ "mcpServers": { "everything": { "type": "http", "url": "http://localhost:$everything_port/mcp" } } }
JSON
  HOME="$work/ir-home" XDG_CONFIG_HOME="$work/ir-config" XDG_CACHE_HOME="$work/ir-cache" \
    XDG_DATA_HOME="$work/ir-home/data" setsid "$toolbridge" serve --listen 127.0.0.1:0 2>"$log" &
  pids+=($!)
  wait_for "$log" "listening on http://" 30
  local url
  url=$(grep -o 'listening on http://[^ ]*' "$log" | head -1 | sed 's/listening on //; s/127.0.0.1/localhost/')
  # The warning the reference server gets alone: it accepts malformed
  # inputResponses, and the gateway passes them on as they came.
  run_scenarios input-required "$url" "$log" input-required- sep-2322-validate-input-responses
}
input_required_block

# ---------------------------------------------------------------------------
# 2025-11-25 block (issue 25): the 0.2 suite's `--requirements 2025-11-25`,
# a 2025-11-25 session client of the gateway in front of $EVERYTHING_SERVER_02
# (the tasks block's upstream, its only one here, so the tools keep their
# names). That server speaks both generations on one endpoint and asks a
# 2025-11-25 client for sampling and elicitation with requests that exist on
# 2025-11-25 only, and offers resource subscriptions there only: this block
# is what the gateway's 2025-11-25 connection beside the 2026-07-28 one is
# for (docs/gateway.md, "What it serves"). The checks are counted from the
# suite's results (`-o`: each scenario's checks.json; the summary hides
# warnings). Fails on any failure, on a warning but the one allowed below,
# on a suite failure, or when no check ran at all.
# ---------------------------------------------------------------------------
requirements_2025_block() {
  local log="$work/r2025-gateway.log" out="$work/r2025-suite.log" results="$work/r2025-results"
  mkdir -p "$work/r2025-home" "$work/r2025-config/toolbridge" "$work/r2025-cache"
  cat >"$work/r2025-config/toolbridge/config.json" <<JSON
{ "mcpServers": { "everything": { "type": "http", "url": "http://localhost:$everything_port/mcp" } } }
JSON
  HOME="$work/r2025-home" XDG_CONFIG_HOME="$work/r2025-config" XDG_CACHE_HOME="$work/r2025-cache" \
    XDG_DATA_HOME="$work/r2025-home/data" setsid "$toolbridge" serve --listen 127.0.0.1:0 2>"$log" &
  pids+=($!)
  wait_for "$log" "listening on http://" 30
  local url
  url=$(grep -o 'listening on http://[^ ]*' "$log" | head -1 | sed 's/listening on //; s/127.0.0.1/localhost/')
  local code=0
  "$NODE22" "$CONFORMANCE_02" server --url "$url" --requirements 2025-11-25 -o "$results" >"$out" 2>&1 || code=$?
  # The one warning allowed, of a scenario the release does not score
  # (server-sse-polling, pending): the gateway's own endpoint (rmcp's) does
  # not close a call's event stream mid-call for the client to resume; the
  # reference server alone does. It was so before the 2025-11-25 connection.
  local allowed="server-sse-polling/WARNING/server-sse-disconnect-resume"
  local passed failed warnings allowed_n unexpected
  read -r passed failed warnings allowed_n unexpected < <(count_checks "$results" "$allowed")
  echo "conformance-gateway 2025-11-25: $passed checks passed, $failed failed, $warnings warnings, $allowed_n allowed ($allowed)"
  if [ "$code" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$unexpected" != "-" ] || [ "$passed" -eq 0 ]; then
    echo "conformance-gateway 2025-11-25: FAILED (unexpected: $unexpected; suite exit $code)" >&2
    cat "$out" >&2
    echo "--- gateway log" >&2; tail -50 "$log" >&2
    exit 1
  fi
}
requirements_2025_block

# ---------------------------------------------------------------------------
# 2025-11-25 block, 2025-only upstream (issue 25): the 0.2 suite's
# `--requirements 2025-11-25` through the first gateway above, in front of
# $EVERYTHING_SERVER (the 0.1 reference server, 2025-11-25 sessions only).
# Fails on any failure, on a warning but the one the block above allows too
# (the server alone passes it: it closes a call's event stream mid-call for
# the client to resume; the gateway's endpoint, rmcp's, does not), on a suite
# failure, or when no check ran.
# ---------------------------------------------------------------------------
requirements_2025_only_block() {
  local out="$work/r2025-only-suite.log" results="$work/r2025-only-results" code=0
  "$NODE22" "$CONFORMANCE_02" server --url "$everything_url" --requirements 2025-11-25 -o "$results" >"$out" 2>&1 || code=$?
  local allowed="server-sse-polling/WARNING/server-sse-disconnect-resume"
  local passed failed warnings allowed_n unexpected
  read -r passed failed warnings allowed_n unexpected < <(count_checks "$results" "$allowed")
  echo "conformance-gateway 2025-11-25 (2025-only upstream): $passed checks passed, $failed failed, $warnings warnings, $allowed_n allowed ($allowed)"
  if [ "$code" -ne 0 ] || [ "$unexpected" != "-" ] || [ "$passed" -eq 0 ]; then
    echo "conformance-gateway 2025-11-25 (2025-only upstream): FAILED (unexpected: $unexpected; suite exit $code)" >&2
    cat "$out" >&2
    echo "--- gateway log" >&2; tail -50 "$work/gateway.log" >&2
    exit 1
  fi
}
requirements_2025_only_block

# ---------------------------------------------------------------------------
# 2026-07-28 block (issue 25): the scenarios of the 0.2 suite's
# `--requirements 2026-07-28` that test a server (those it scores and those
# it runs without scoring), a 2026-07-28 client of the gateway in front of
# $EVERYTHING_SERVER_02, its only upstream. The suite has no way to skip a
# scenario of a requirement set, so each runs alone as `--requirements` runs
# it (`--spec-version 2026-07-28 --force`), but the `tasks-*` ones: that
# upstream has no tasks and none of the tools they call; the tasks block above
# runs them against the fixtures. Counted from the results (`-o`); fails on a
# failure or warning not allowed below, on a scenario that ran no check, or
# when no check ran at all.
# ---------------------------------------------------------------------------
requirements_2026_block() {
  local log="$work/r2026-gateway.log" results="$work/r2026-results"
  mkdir -p "$work/r2026-home" "$work/r2026-config/toolbridge" "$work/r2026-cache"
  cat >"$work/r2026-config/toolbridge/config.json" <<JSON
{ "mcpServers": { "everything": { "type": "http", "url": "http://localhost:$everything_port/mcp" } } }
JSON
  HOME="$work/r2026-home" XDG_CONFIG_HOME="$work/r2026-config" XDG_CACHE_HOME="$work/r2026-cache" \
    XDG_DATA_HOME="$work/r2026-home/data" setsid "$toolbridge" serve --listen 127.0.0.1:0 2>"$log" &
  pids+=($!)
  wait_for "$log" "listening on http://" 30
  local url scenarios scenario
  url=$(grep -o 'listening on http://[^ ]*' "$log" | head -1 | sed 's/listening on //; s/127.0.0.1/localhost/')
  # The required server scenarios, then the server ones run but not scored.
  scenarios=$("$NODE22" "$CONFORMANCE_02" list --server --requirements 2026-07-28 \
    | sed -n '/^Server scenarios/,/^Client scenarios/p; /\[server\]$/p' \
    | sed -nE 's/^ *- ([a-z0-9-]+).*/\1/p' | grep -v '^tasks-' || true)
  [[ " $(echo $scenarios) " == *" server-stateless "* ]] \
    || { echo "conformance-gateway 2026-07-28: the suite lists no such server scenarios: $scenarios" >&2; exit 1; }
  for scenario in $scenarios; do
    "$NODE22" "$CONFORMANCE_02" server --url "$url" --scenario "$scenario" --spec-version 2026-07-28 \
      --force -o "$results" >"$work/r2026-$scenario.log" 2>&1 || true
  done
  # What fails or warns through any proxy, each checked against the reference
  # server alone (docs/gateway.md, "Conformance"):
  # - server-stateless: its `test_streaming_elicitation` and `test_logging_tool`
  #   answer with two JSON values in one `application/json` body, which is not
  #   streamable HTTP (a proxy's client reads one JSON value: -32603, so the
  #   two checks on those streams cannot run); its `test_trigger_tool_change`
  #   and `test_trigger_prompt_change` are not in its tools/list, and the
  #   gateway calls only listed tools, so the list never changes (two warnings).
  # - http-custom-header-server-validation (pending, not scored): the server
  #   has no tool with x-mcp-header annotations; alone it fails the same five.
  # - input-required-result-validate-input: it accepts malformed
  #   inputResponses, alone too, and the gateway passes them on as they came.
  local allowed="
    server-stateless/FAILURE/sep-2575-http-server-no-independent-requests-on-stream
    server-stateless/FAILURE/sep-2575-server-no-log-without-loglevel
    server-stateless/WARNING/sep-2575-server-sends-prompts-list-changed-on-subscription
    server-stateless/WARNING/sep-2575-server-sends-tools-list-changed-on-subscription
    http-custom-header-server-validation/FAILURE/sep-2243-server-no-xmcp-tool
    http-custom-header-server-validation/FAILURE/sep-2243-server-decode-base64
    http-custom-header-server-validation/FAILURE/sep-2243-server-validate-param-match
    http-custom-header-server-validation/FAILURE/sep-2243-server-reject-invalid-param-chars
    http-custom-header-server-validation/FAILURE/sep-2243-server-reject-param-mismatch
    input-required-result-validate-input/WARNING/sep-2322-validate-input-responses"
  local passed failed warnings allowed_n unexpected count
  count=$(echo $scenarios | wc -w)
  read -r passed failed warnings allowed_n unexpected < <(count_checks "$results" "$(echo $allowed)" "$(echo $scenarios)")
  echo "conformance-gateway 2026-07-28: $count scenarios (tasks-* in the tasks block): $passed checks passed, $failed failed, $warnings warnings, $allowed_n of them allowed"
  if [ "$unexpected" != "-" ] || [ "$passed" -eq 0 ]; then
    echo "conformance-gateway 2026-07-28: FAILED (unexpected: $unexpected)" >&2
    for scenario in $scenarios; do cat "$work/r2026-$scenario.log" >&2; done
    echo "--- gateway log" >&2; tail -50 "$log" >&2
    exit 1
  fi
}
requirements_2026_block

# ---------------------------------------------------------------------------
# Skills block (issue 25, SEP-2640): the suite's skills server scenarios
# against the gateway in front of `toolbridge example-server --skill` (one
# skill built into the binary: no network, no folder). Each scenario's checks
# are counted; the block fails on any failure or warning, on a scenario that
# ran no check, or when no check ran at all.
# ---------------------------------------------------------------------------
skills_block() {
  local skills_log="$work/skills-gateway.log"
  mkdir -p "$work/skills-home" "$work/skills-config/toolbridge" "$work/skills-cache"
  cat >"$work/skills-config/toolbridge/config.json" <<JSON
{ "mcpServers": { "example": { "command": "$toolbridge", "args": ["example-server", "--skill"] } } }
JSON
  HOME="$work/skills-home" XDG_CONFIG_HOME="$work/skills-config" XDG_CACHE_HOME="$work/skills-cache" \
    XDG_DATA_HOME="$work/skills-home/data" setsid "$toolbridge" serve --listen 127.0.0.1:0 2>"$skills_log" &
  pids+=($!)
  wait_for "$skills_log" "listening on http://" 30
  local skills_url
  skills_url=$(grep -o 'listening on http://[^ ]*' "$skills_log" | head -1 | sed 's/listening on //; s/127.0.0.1/localhost/')
  run_scenarios skills "$skills_url" "$skills_log" sep-2640-skills- ""
}
skills_block
