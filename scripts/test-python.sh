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
exit "$status"
