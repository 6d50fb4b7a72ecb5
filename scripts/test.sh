#!/usr/bin/env bash
# Runs every test on a fresh machine: installs the pinned third-party MCP
# servers the tests talk to (into .deps/, git-ignored), then the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-deps.sh
# --all-targets compiles the benchmarks too (in the dev profile): they
# measure, they do not test, so they are built here but not run.
cargo build --workspace --all-targets
cargo test --workspace
