#!/usr/bin/env bash
# Configures and builds with the given preset (default: ci) into build/ (or
# $BUILD_DIR). Targets after the preset limit the build to them (default:
# everything). A build folder configured elsewhere (another checkout's path,
# another generator), or whose configuring fails, is configured again from a
# fresh cache; what else it holds (build/pyenv, the build outputs) is kept.
#   scripts/build.sh ci tunekit-cli tunekit-worker
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
preset="${1:-ci}"
shift || true
# A preset that does not exist is a typo: say so, and touch nothing.
presets=$(cmake --list-presets 2>/dev/null | sed -n 's/^  "\([^"]*\)".*/\1/p')
if ! grep -qx -- "$preset" <<<"$presets"; then
  echo "build.sh: no preset '$preset' (presets: $(echo $presets | sed 's/ /, /g'))" >&2
  exit 2
fi
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
  echo "build.sh: configuring $dir failed; configuring it again from a fresh cache" >&2
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  cmake --preset "$preset" -B "$dir" >/dev/null
fi
if (($#)); then
  cmake --build "$dir" -j"$(nproc)" --target "$@"
else
  cmake --build "$dir" -j"$(nproc)"
fi
