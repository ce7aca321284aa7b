#!/usr/bin/env bash
# The README's second command: install, build, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 900
