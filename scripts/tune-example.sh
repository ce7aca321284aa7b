#!/usr/bin/env bash
# The README's first command: install, build what tuning needs (the command
# line and its worker, not the tests), tune the bundled CPU matmul.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh ci tunekit-cli tunekit-worker
build/bin/tunekit tune examples/matmul/matmul.yaml "$@"
