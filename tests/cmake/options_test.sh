#!/usr/bin/env bash
# tunekit's configure in unusual setups, each in a scratch build folder
# (configure only: seconds each, nothing is compiled). A dependency that is
# missing either switches its part off with one line naming the Debian package
# or, where it is required, stops the configure with that line; never a
# compile error later. Missing packages are simulated with
# CMAKE_DISABLE_FIND_PACKAGE_<Pkg>.
#   options_test.sh SOURCE_DIR BUILD_DIR [CMAKE ARGS...]   (the generator, the compilers)
set -euo pipefail
source_dir="$1"
work="$2/test-tmp/cmake-options"
shift 2
common=("$@")
rm -rf "$work"
mkdir -p "$work"
failed=0
passed=0
fail() { echo "FAIL $1"; [ -f "$work/$1.log" ] && tail -n 15 "$work/$1.log"; failed=$((failed + 1)); }
# NAME EXPECTED_STATUS ARGS...: configures into $work/NAME, output in $work/NAME.log
configure() {
  local name=$1 want=$2 got=0
  shift 2
  cmake -S "$source_dir" -B "$work/$name" "${common[@]}" "$@" >"$work/$name.log" 2>&1 || got=$?
  if [ "$want" = ok ] && [ "$got" != 0 ]; then fail "$name"; return 1; fi
  if [ "$want" = error ] && [ "$got" = 0 ]; then echo "(configured, expected an error)"; fail "$name"; return 1; fi
}
says() {  # NAME TEXT: the configure of NAME printed TEXT (its words may be wrapped over lines)
  if tr -s ' \n' ' ' <"$work/$1.log" | grep -qF -- "$2"; then passed=$((passed + 1)); else echo "(no '$2')"; fail "$1"; fi
}

# MPI missing: distribution off, in one line that names the package.
configure mpi-missing ok -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DTUNEKIT_ENABLE_TESTS=OFF &&
  says mpi-missing "tunekit: MPI not found (Debian: libopenmpi-dev openmpi-bin); MPI distribution off"

# GoogleTest missing: tests off by default (AUTO); asked for (ON, as the
# presets do), the configure stops and says what to install.
configure gtest-auto ok -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DTUNEKIT_ENABLE_MPI=OFF &&
  says gtest-auto "(Debian: libgtest-dev libgmock-dev); tests off"
configure gtest-on error -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DTUNEKIT_ENABLE_MPI=OFF -DTUNEKIT_ENABLE_TESTS=ON &&
  says gtest-on "TUNEKIT_ENABLE_TESTS is ON, but GoogleTest or GoogleMock not found (Debian: libgtest-dev libgmock-dev)"

# A required library missing: one message with its Debian package.
configure fmt-missing error -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DTUNEKIT_ENABLE_MPI=OFF &&
  says fmt-missing "tunekit: fmt not found (Debian: libfmt-dev"

# CL/cl.h found outside the compiler's own folders (a CUDA toolkit's
# include/, an SDK's): the OpenCL backend and its tests compile with it.
mkdir -p "$work/opencl-sdk/include/CL"
if configure opencl-elsewhere ok -DTUNEKIT_OPENCL_INCLUDE_DIR="$work/opencl-sdk/include" -DTUNEKIT_ENABLE_MPI=OFF \
     -DTUNEKIT_ENABLE_TESTS=AUTO; then
  for source in src/backend/opencl/cl_api.cpp tests/backend/opencl_backend_test.cpp; do
    command=$(grep "\"command\": .* -c [^ ]*/$source\"" "$work/opencl-elsewhere/compile_commands.json" || true)
    if [ -z "$command" ]; then
      [[ $source == tests/* ]] && continue  # no GoogleTest here: no tests to compile
      echo "($source is not compiled)"; fail opencl-elsewhere; continue
    fi
    if grep -qF -- "-isystem $work/opencl-sdk/include " <<<"$command"; then passed=$((passed + 1)); else
      echo "($source is compiled without -isystem $work/opencl-sdk/include)"; fail opencl-elsewhere
    fi
  done
fi

# A shared libtunekit: the installed programs find it relative to themselves
# (the install step rewrites their RPATH to $ORIGIN/...), and it is versioned.
if configure shared-lib ok -DBUILD_SHARED_LIBS=ON -DTUNEKIT_ENABLE_TESTS=OFF -DTUNEKIT_ENABLE_MPI=OFF \
     -DCMAKE_INSTALL_LIBDIR=lib; then
  install="$work/shared-lib/tools/cmake_install.cmake"
  grep -qF 'NEW_RPATH "\$ORIGIN/../lib"' "$install" && passed=$((passed + 1)) ||
    { echo "(bin/tunekit is installed without RPATH \$ORIGIN/../lib)"; fail shared-lib; }
  grep -qF 'NEW_RPATH "\$ORIGIN/../../lib"' "$install" && passed=$((passed + 1)) ||
    { echo "(libexec/tunekit/tunekit-worker is installed without RPATH \$ORIGIN/../../lib)"; fail shared-lib; }
  grep -q 'libtunekit.so.0.1' "$work/shared-lib/src/cmake_install.cmake" && passed=$((passed + 1)) ||
    { echo "(libtunekit.so has no SOVERSION)"; fail shared-lib; }
fi

# An absolute libexec folder: the package config names the worker there,
# not under the prefix it is found in.
if configure abs-libexec ok -DTUNEKIT_ENABLE_TESTS=OFF -DTUNEKIT_ENABLE_MPI=OFF \
     -DCMAKE_INSTALL_LIBEXECDIR=/opt/tk/libexec; then
  grep -qF 'TUNEKIT_PACKAGE_WORKER=\"/opt/tk/libexec/tunekit/tunekit-worker\"' "$work/abs-libexec/tunekitConfig.cmake" &&
    passed=$((passed + 1)) || { echo "(the package config misplaces an absolute libexec folder)"; fail abs-libexec; }
fi

# tunekit added to another project (add_subdirectory, FetchContent): its
# tests stay out of that project's build, the project's build type is its
# own, and its programs are told where the worker is built, which building
# them builds (a program of its own runs outside tunekit's bin/).
mkdir -p "$work/parent-src"
cat >"$work/parent-src/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.22)
project(parent CXX)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
add_subdirectory("$source_dir" tunekit)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE tunekit::tunekit)
EOF
echo 'int main() {}' >"$work/parent-src/main.cpp"
cmake -S "$work/parent-src" -B "$work/parent" "${common[@]}" -DTUNEKIT_ENABLE_MPI=OFF >"$work/parent.log" 2>&1 ||
  fail parent
says parent "tests OFF"
if grep -q '^CMAKE_BUILD_TYPE:STRING=.' "$work/parent/CMakeCache.txt"; then
  echo "(tunekit set the parent's build type)"; fail parent
else passed=$((passed + 1)); fi
app_compile=$(grep '"command": .* -c [^ ]*/parent-src/main.cpp"' "$work/parent/compile_commands.json" || true)
if grep -qF -- "-DTUNEKIT_PACKAGE_WORKER=" <<<"$app_compile" && grep -qF "tunekit/bin/tunekit-worker" <<<"$app_compile"
then passed=$((passed + 1)); else echo "(the parent's program is not told where the worker is built)"; fail parent; fi
if [ -f "$work/parent/build.ninja" ]; then  # the commands that building app runs
  app_commands=$(ninja -C "$work/parent" -t commands app)  # not piped: grep -q would cut ninja off (pipefail)
  if grep -qF -- "-o tunekit/bin/tunekit-worker " <<<"$app_commands"
  then passed=$((passed + 1)); else echo "(building the parent's program does not build the worker)"; fail parent; fi
fi

if ((failed)); then echo "$passed passed, $failed failed"; exit 1; fi
echo "$passed passed, 0 failed"
