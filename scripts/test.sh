#!/usr/bin/env bash
# Runs every test on a fresh machine: installs the pinned third-party MCP
# servers the tests talk to (into .deps/, git-ignored), then the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-deps.sh
cargo build --workspace --all-targets
# Benchmarks are compiled, not run: they measure, they do not test.
cargo bench --workspace --no-run
cargo test --workspace
