#!/usr/bin/env bash
# The README's first command: install, build, tune the bundled CPU matmul.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci
build/bin/tunekit tune examples/matmul/matmul.yaml "$@"
