#!/usr/bin/env bash
# The README's second command: install, build, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The Triton kernels' interpreter test (tests/backend/triton_interpreter_test.cpp)
# needs torch and triton, from PyPI only: torch's Linux wheel with its CUDA
# libraries (about 5 GB, 3 minutes here), run on the CPU by TRITON_INTERPRET=1.
# Without them that test says it is skipped; nothing else depends on them.
if ! build/pyenv/bin/python -c "import torch, triton" 2>/dev/null; then
  { python3 -m venv build/pyenv && build/pyenv/bin/pip install -q torch numpy; } ||
    echo "scripts/test.sh: torch and triton did not install into build/pyenv: the Triton interpreter test will be skipped"
fi
scripts/build.sh ci
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 900
