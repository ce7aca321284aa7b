#!/usr/bin/env bash
# The user's build script: compiles main.cpp with one variant of the kernel.
#   build.sh VARIANT_SOURCE OUTPUT
# tunekit runs it as an argv (no shell in between) from this folder.
set -euo pipefail
source_file=$1
output=$2
"${CXX:-c++}" -std=c++17 -O3 -march=native -I"$(dirname "$source_file")" -o "$output" main.cpp
