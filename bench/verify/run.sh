#!/usr/bin/env bash
# What verifying a trial's outputs costs: builds libtunekit (cmake --build
# BUILD --target tunekit; BUILD is configured first if needed), compiles
# bench/verify/verify_bench.cpp against it and runs it. See that file.
#
# Usage: bench/verify/run.sh [--build DIR] [-- BENCH ARGS]   (e.g. -- --n 2048)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build"
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  --build)
    [[ $# -ge 2 ]] || { echo "run.sh: --build needs a folder" >&2; exit 2; }
    build=$2
    shift 2
    ;;
esac
# The benchmark's own arguments come after --; anything else is refused
# before the build.
if [[ "${1:-}" == -- ]]; then
  shift
elif [[ $# -gt 0 ]]; then
  echo "run.sh: unknown argument '$1' (see --help; the benchmark's own go after --)" >&2
  exit 2
fi
echo "[build] libtunekit in $build" >&2
[[ -f "$build/CMakeCache.txt" ]] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target tunekit >/dev/null
${CXX:-g++} -std=c++20 -O2 -DNDEBUG -I"$root/include" -I"$root/src" "$here/verify_bench.cpp" "$build/lib/libtunekit.a" \
  -lfmt -lyaml-cpp -lsqlite3 -lz -ldl -pthread -o "$build/verify_bench"
"$build/verify_bench" "$@"
