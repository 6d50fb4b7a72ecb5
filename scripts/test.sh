#!/usr/bin/env bash
# Runs every test on a fresh machine: installs the pinned third-party MCP
# servers the tests talk to (into .deps/, git-ignored), then the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-deps.sh
cargo build --workspace --all-targets
# Benchmarks are compiled, not run: they measure, they do not test. The dev
# profile keeps this from being a second, release-sized build on CI's disk.
cargo bench --workspace --no-run --profile dev
cargo test --workspace
# The official MCP conformance suite's client scenarios, against the binary
# built above (installs the suite into .deps/conformance once).
scripts/conformance.sh
