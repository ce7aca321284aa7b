#!/usr/bin/env bash
# Installs tunekit into a scratch prefix, then builds and runs a consumer that
# finds it with find_package(tunekit).
set -euo pipefail
build_dir="$1"
source_dir="$(cd "$(dirname "$0")" && pwd)"
work="$build_dir/test-tmp/install-consumer"
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
# The installed command line, with the program's own strategy registered.
plugins=$("$work/build/consumer_cli" plugins)
grep -q '^  backwards: ' <<<"$plugins"
test -x "$work/prefix/bin/tunekit"
test -x "$work/prefix/libexec/tunekit/tunekit-worker"
