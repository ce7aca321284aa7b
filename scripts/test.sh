#!/usr/bin/env bash
# The README's second command: install, build, run the whole test suite.
# Takes no arguments (.ci/run calls it).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  "") ;;
  -h | --help) usage; exit 0 ;;
  *) echo "test.sh: takes no arguments, got '$1' (try --help)" >&2; exit 2 ;;
esac
scripts/install-deps.sh
# A full disk shows up as a compiler's "No space left on device" (stop 37's CI);
# the log says how much there was. The build and the fuzz build take about
# 0.6 GB, the compilers' temporaries go to /tmp.
echo "scripts/test.sh: $(df -Pm . | awk 'NR == 2 {print $4}') MB free here, $(df -Pm /tmp | awk 'NR == 2 {print $4}') MB in /tmp"
scripts/build.sh ci
# The Triton kernels' interpreter test (tests/backend/triton_interpreter_test.cpp)
# needs torch and triton, from PyPI only: torch's Linux wheel with its CUDA
# libraries, run on the CPU by TRITON_INTERPRET=1. Without them that test says
# it is skipped; nothing else depends on them. They come after the build, and
# only where the disk has room for their install (about 9 GB at its peak, the
# wheels and the venv; 5.4 GB once done) and for the fuzz build that .ci/run
# does next, because a CI machine's disk can be nearly full: an optional test
# must not take the space the build needs. pip's downloads go under build/, on
# the disk measured, not to /tmp.
torch_peak_mb=9000
after_torch_mb=3000
if ! build/pyenv/bin/python -c "import torch, triton" 2>/dev/null; then
  free_mb=$(df -Pm build | awk 'NR == 2 {print $4}')
  if ((free_mb < torch_peak_mb + after_torch_mb)); then
    echo "scripts/test.sh: ${free_mb} MB free on the disk of build/, under the $((torch_peak_mb + after_torch_mb)) MB that torch's install and the fuzz build need: torch is not installed, and the Triton interpreter test will be skipped"
  else
    rm -rf build/pyenv build/pip-tmp
    mkdir -p build/pip-tmp
    { python3 -m venv build/pyenv && TMPDIR="$PWD/build/pip-tmp" build/pyenv/bin/pip install -q --no-cache-dir torch numpy; } || {
      echo "scripts/test.sh: torch and triton did not install into build/pyenv: the Triton interpreter test will be skipped"
      rm -rf build/pyenv
    }
    rm -rf build/pip-tmp
  fi
fi
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 900
