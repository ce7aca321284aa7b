#!/usr/bin/env bash
# Configures and builds with the given preset (default: ci) into build/ (or
# $BUILD_DIR). Targets after the preset limit the build to them (default:
# everything). A build folder configured elsewhere (another checkout's path,
# another generator) is configured again here instead of failing.
#   scripts/build.sh ci tunekit-cli tunekit-worker
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-ci}"
shift || true
dir="${BUILD_DIR:-build}"
cache="$dir/CMakeCache.txt"
if [[ -f "$cache" ]]; then
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")
  if [[ "$home" != "$(pwd -P)" || "$generator" != Ninja ]]; then
    echo "build.sh: $dir was configured for ${home:-another checkout} (${generator:-unknown generator}); configuring it again here" >&2
    rm -rf "$cache" "$dir/CMakeFiles"
  fi
fi
if ! cmake --preset "$preset" -B "$dir" >/dev/null; then
  echo "build.sh: configuring $dir failed; starting it from scratch" >&2
  rm -rf "$dir"
  cmake --preset "$preset" -B "$dir" >/dev/null
fi
if (($#)); then
  cmake --build "$dir" -j"$(nproc)" --target "$@"
else
  cmake --build "$dir" -j"$(nproc)"
fi
