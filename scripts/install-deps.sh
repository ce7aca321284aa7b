#!/usr/bin/env bash
# Installs, from Debian's packages, whatever tunekit needs that is missing
# (Debian 12 or newer): as root, or through sudo. Packages already
# installed are left alone, so a second run changes nothing and needs no
# network. Without apt (another distribution), or without root and sudo, it
# installs nothing, names the missing packages and exits 2.
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  "") ;;
  -h | --help) usage; exit 0 ;;
  *) echo "install-deps.sh: takes no arguments, got '$1' (try --help)" >&2; exit 2 ;;
esac
packages=(g++ cmake ninja-build pkg-config
          libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev
          zlib1g-dev libeigen3-dev
          libopenmpi-dev openmpi-bin  # distribution over MPI (tests/distribute runs mpirun)
          libgtest-dev libgmock-dev python3 python3-venv
          libopenblas-dev            # bench/cpu_gemm compares against OpenBLAS
          ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
          zsh                        # tests/cli/completion_test.cpp checks scripts/completion/_tunekit
          clang libclang-rt-dev)     # the libFuzzer targets (scripts/fuzz.sh): the default clang's runtimes
if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "install-deps.sh: no apt-get or dpkg-query here (not Debian); install the equivalents of these" \
       "Debian packages by hand: ${packages[*]}" >&2
  exit 2
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "install-deps.sh: missing ${missing[*]}; run this as root (or install sudo) to install them" >&2
    exit 2
  fi
  sudo=(sudo)
fi
echo "installing: ${missing[*]}"
"${sudo[@]}" apt-get update -qq
# env: sudo would drop DEBIAN_FRONTEND from the environment.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
