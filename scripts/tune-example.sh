#!/usr/bin/env bash
# The README's first command: install, build what tuning needs (the command
# line and its worker, not the tests), tune the bundled CPU matmul.
#   scripts/tune-example.sh [TUNE FLAGS]   e.g. --max-evals 20; after the
#   build, they go to `tunekit tune examples/matmul/matmul.yaml`
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
scripts/install-deps.sh
scripts/build.sh ci tunekit-cli tunekit-worker
build/bin/tunekit tune examples/matmul/matmul.yaml "$@"
