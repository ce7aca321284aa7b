#!/usr/bin/env bash
# Installs, from Debian's packages, whatever tunekit needs that is missing.
set -euo pipefail
packages=(g++ cmake ninja-build pkg-config
          libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev
          zlib1g-dev libeigen3-dev
          libopenmpi-dev openmpi-bin  # distribution over MPI (tests/distribute runs mpirun)
          libgtest-dev libgmock-dev libopenblas-dev python3 python3-venv
          ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
          zsh                        # tests/cli/completion_test.cpp checks scripts/completion/_tunekit
          clang libclang-rt-14-dev)  # the libFuzzer targets (scripts/fuzz.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
