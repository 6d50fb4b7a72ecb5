#!/usr/bin/env bash
# Builds the toolbridge Python package (python/) into the pinned test venv
# (.deps/py-tb, made by scripts/setup-test-deps.sh), installs it into the
# fastmcp benchmark venv too, and runs its pytest suite against real servers.
#
# The build is the dev profile unless TOOLBRIDGE_PY_PROFILE says otherwise
# (`release` for the benchmark): `pip install ./python` alone builds release.
# pytest's exit code is passed on; 5 (no tests collected) is a failure too.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/.deps"
profile="${TOOLBRIDGE_PY_PROFILE:-dev}"
py="$deps/py-tb/bin/python"
if [ ! -x "$py" ]; then
  echo "test-python: $py is missing: run scripts/setup-test-deps.sh" >&2
  exit 1
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
# Offline and pinned: the test venv holds maturin, so no build isolation.
# One wheel (abi3), installed into both venvs.
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
PATH="$deps/py-tb/bin:$PATH" "$deps/py-tb/bin/pip" wheel --quiet --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=build-args="--profile $profile" -w "$wheels" "$root/python" >&2
for venv in py-tb py-tb-fastmcp; do
  if [ -x "$deps/$venv/bin/pip" ]; then
    "$deps/$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps \
      "$wheels"/toolbridge-*.whl >&2
  fi
done
# From the tests' own folder: in python/, the checkout's toolbridge/ (the
# sources without the built extension) would shadow the installed wheel for
# pytest and for every `python -m toolbridge` server the tests start.
cd "$root/python/tests"
status=0
"$py" -P -m pytest -q -p no:cacheprovider . "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "test-python: pytest collected no tests" >&2
  exit 1
fi
[ "$status" -eq 0 ] || exit "$status"

# langchain-mcp-adapters' own suite (its 0.3.2 sdist, unpacked by
# setup-test-deps.sh), with the import of MultiServerMCPClient and
# load_mcp_tools switched to toolbridge.langchain; the venv's bin first on
# PATH, as their CI has it. TOOLBRIDGE_PY_SUITES=0 skips it.
[ "${TOOLBRIDGE_PY_SUITES:-1}" = 0 ] && exit 0
suite="$deps/suites/langchain_mcp_adapters-0.3.2"
if [ ! -d "$suite/tests" ]; then
  echo "test-python: $suite is missing: run scripts/setup-test-deps.sh" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$wheels" "$work"' EXIT
cp -r "$suite/tests" "$suite/pyproject.toml" "$work/"
sed -i -e 's/^from langchain_mcp_adapters\.client import MultiServerMCPClient$/from toolbridge.langchain import MultiServerMCPClient/' \
  -e 's/^from langchain_mcp_adapters\.tools import load_mcp_tools$/from toolbridge.langchain import load_mcp_tools/' "$work"/tests/*.py
if grep -q '^from langchain_mcp_adapters\.\(client\|tools\) import \(MultiServerMCPClient\|load_mcp_tools\)$' "$work"/tests/*.py; then
  echo "test-python: an import of langchain-mcp-adapters' suite was not switched" >&2
  exit 1
fi
echo "test-python: langchain-mcp-adapters 0.3.2's own suite against toolbridge.langchain" >&2
cd "$work"
# Deselected, and why (python/README.md says it too):
# - test_multi_server_client_threads_handle_tool_errors patches
#   langchain_mcp_adapters.client.load_mcp_tools with a mock to see how
#   their client calls it: their module's wiring, which the drop-in does not
#   go through (handle_tool_errors itself is tested by the suite's other
#   tests and by tests/test_langchain.py).
PATH="$deps/py-tb/bin:$PATH" "$py" -P -m pytest -q -p no:cacheprovider -o addopts="-ra" tests \
  --deselect tests/test_tools.py::test_multi_server_client_threads_handle_tool_errors

# The OpenAI Agents SDK's MCP tests that apply to another MCPServer (its
# 0.24.0 sdist): those that run agents (the Runner, tool filters, approvals,
# tracing) against their test double FakeMCPServer, with the double made a
# toolbridge.agents.MCPServer over a real stdio server
# (tests/third_party/agents_fake_server.py, appended to their helpers.py).
# The rest test their own classes' wiring (MCPServerStdio and friends over a
# patched mcp.ClientSession; python/README.md says which).
suite="$deps/suites/openai_agents-0.24.0"
if [ ! -d "$suite/tests/mcp" ]; then
  echo "test-python: $suite is missing: run scripts/setup-test-deps.sh" >&2
  exit 1
fi
rm -rf "$work/tests"
cp -r "$suite/tests" "$suite/pyproject.toml" "$work/"
cp "$root/python/tests/third_party/agents_conftest.py" "$work/tests/mcp/conftest.py"
printf '\n# toolbridge: their double, on toolbridge.agents.MCPServer over a real server.\nfrom agents_fake_server import FakeMCPServer  # noqa: E402,F811\n' \
  >> "$work/tests/mcp/helpers.py"
echo "test-python: the OpenAI Agents SDK 0.24.0's MCP tests against toolbridge.agents" >&2
PYTHONPATH="$root/python/tests/third_party" PATH="$deps/py-tb/bin:$PATH" \
  "$py" -P -m pytest -q -p no:cacheprovider -o addopts="-ra" \
  tests/mcp/test_runner_calls_mcp.py tests/mcp/test_tool_filtering.py tests/mcp/test_mcp_approval.py tests/mcp/test_mcp_tracing.py
