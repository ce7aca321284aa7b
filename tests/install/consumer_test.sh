#!/usr/bin/env bash
# Installs tunekit into a scratch prefix and moves it, then builds and runs a
# consumer that finds it with find_package(tunekit) and nothing else.
set -euo pipefail
build_dir="$1"
source_dir="$(cd "$(dirname "$0")" && pwd)"
work="$build_dir/test-tmp/install-consumer"
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/staged" >/dev/null
# The prefix is relocatable: moved after the install (as a package's files
# unpacked elsewhere), it is used from where it is now.
mv "$work/staged" "$work/prefix"
# The version is exported and checked: the same minor version is accepted,
# the next one is not.
version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$(find "$work/prefix" -name tunekitConfigVersion.cmake)")
[[ $version =~ ^([0-9]+)\.([0-9]+)\. ]] || { echo "no version in tunekitConfigVersion.cmake: '$version'"; exit 1; }
newer="${BASH_REMATCH[1]}.$((BASH_REMATCH[2] + 1))"
if cmake -S "$source_dir/consumer" -B "$work/build-newer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
     -DTUNEKIT_WANT_VERSION="$newer" >"$work/newer.log" 2>&1; then
  echo "find_package(tunekit $newer) accepted version $version"; exit 1
fi
grep -q "compatible with requested version \"$newer\"" "$work/newer.log" || { cat "$work/newer.log"; exit 1; }
cmake -S "$source_dir/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DTUNEKIT_WANT_VERSION="$version" >/dev/null
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/consumer"
# The installed command line, with the program's own strategy registered.
plugins=$("$work/build/consumer_cli" plugins)
grep -q '^  backwards: ' <<<"$plugins"
# A program of one's own, built outside the prefix, runs the package's worker
# (its config tells the program where that is), not the build tree's.
grep -qF "(their worker process: $work/prefix/libexec/tunekit/tunekit-worker)" <<<"$plugins" ||
  { grep worker <<<"$plugins"; exit 1; }
test -x "$work/prefix/bin/tunekit"
test -x "$work/prefix/libexec/tunekit/tunekit-worker"
# The installed tunekit tunes with the installed worker: the prefix here is
# not the configured one, so only the install layout leads to it (the build
# tree's worker is there too, and must not be taken).
"$work/prefix/bin/tunekit" plugins | grep -qF "(their worker process: $work/prefix/libexec/tunekit/tunekit-worker)" ||
  { "$work/prefix/bin/tunekit" plugins | grep worker; exit 1; }
cp -r "$source_dir/../../examples/matmul" "$work/matmul"
# --early-stop off: on a busy machine a preempted worker can take 100x as
# long for the few samples the early stop judges, and cut a config short.
(cd "$work/matmul" && "$work/prefix/bin/tunekit" tune matmul.yaml -s M=256 -s N=256 -s K=64 --max-evals 2 \
  --early-stop off --no-progress -o "$work/tuned" >"$work/tune.log" 2>&1) || { cat "$work/tune.log"; exit 1; }
grep -q 'trials: 2 ok' "$work/tune.log" || { cat "$work/tune.log"; exit 1; }
