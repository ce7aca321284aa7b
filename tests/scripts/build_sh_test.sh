#!/usr/bin/env bash
# scripts/build.sh in a build folder that was configured elsewhere: it must
# configure it again and build, not fail (issue #20). Builds only a target
# that compiles nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd -P)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/CMakeFiles"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=/somewhere/else\nCMAKE_GENERATOR:INTERNAL=Unix Makefiles\n' >"$dir/CMakeCache.txt"
out=$(BUILD_DIR="$dir" "$root/scripts/build.sh" ci list_install_components 2>&1) || {
  echo "build.sh failed in a build folder configured elsewhere:"
  echo "$out"
  exit 1
}
grep -q "configuring it again here" <<<"$out" || { echo "no word of the reconfiguration:"; echo "$out"; exit 1; }
grep -q "^CMAKE_HOME_DIRECTORY:INTERNAL=$root\$" "$dir/CMakeCache.txt" || { echo "not configured for $root"; exit 1; }
echo "1 passed, 0 failed"
