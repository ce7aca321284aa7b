#!/usr/bin/env bash
# scripts/install-deps.sh against stand-ins for dpkg-query, apt-get, id and
# sudo (nothing is installed): a second run with everything installed does
# nothing; a missing package is installed as root, or through sudo, without
# questions; without root and sudo, or without apt, it says what is missing
# and exits 2 instead of failing on a command that is not there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd -P)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin="$work/bin"
mkdir -p "$bin"
# Only these real tools: no apt-get, sudo or dpkg-query of the machine's own.
for tool in bash grep sed cat env; do ln -s "$(command -v "$tool")" "$bin/$tool"; done
stub() { printf '#!%s\n%s\n' "$(command -v bash)" "$2" >"$bin/$1"; chmod +x "$bin/$1"; }
# A package named in $MISSING is not installed.
stub dpkg-query 'for p in $MISSING; do [ "$p" = "${!#}" ] && exit 1; done; printf "install ok installed"'
stub apt-get 'echo "apt-get $* (DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-})" >>"$LOG"'
stub id 'echo "$UID_IS"'
failed=0
check() {  # NAME EXPECTED_STATUS -- what the output and the log must hold, checked by the caller
  local name=$1 want=$2 got=0
  : >"$work/log"
  out=$(env -i PATH="$bin" LOG="$work/log" MISSING="${MISSING:-}" UID_IS="${UID_IS:-0}" \
        bash "$root/scripts/install-deps.sh" 2>&1) || got=$?
  log=$(cat "$work/log")
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; echo "$out"; echo "$log"; failed=$((failed + 1)); return 1
  fi
}
expect() {  # NAME TEXT WHAT: WHAT (output or log) must contain TEXT
  grep -qF -- "$2" <<<"$3" || { echo "FAIL $1: no '$2' in:"; echo "$3"; failed=$((failed + 1)); }
}

MISSING="" UID_IS=0 check "all installed" 0 && {
  [ -z "$out$log" ] || { echo "FAIL all installed: it did something:"; echo "$out$log"; failed=$((failed + 1)); }
}
MISSING="zsh libgtest-dev" UID_IS=0 check "root" 0 && {
  expect root "installing: libgtest-dev zsh" "$out"
  expect root "apt-get update" "$log"
  expect root "apt-get install -y -qq --no-install-recommends libgtest-dev zsh (DEBIAN_FRONTEND=noninteractive)" "$log"
}
MISSING="zsh" UID_IS=1000 check "not root, no sudo" 2 && {
  expect "not root, no sudo" "missing zsh; run this as root (or install sudo)" "$out"
  [ -z "$log" ] || { echo "FAIL not root, no sudo: apt-get ran: $log"; failed=$((failed + 1)); }
}
# As sudo does by default (env_reset), the command gets a fresh environment.
stub sudo 'echo "sudo $1" >>"$LOG"; exec env -i PATH="$PATH" LOG="$LOG" "$@"'
MISSING="zsh" UID_IS=1000 check "sudo" 0 && {
  expect sudo "sudo apt-get" "$log"
  expect sudo "apt-get install -y -qq --no-install-recommends zsh (DEBIAN_FRONTEND=noninteractive)" "$log"
}
rm "$bin/dpkg-query" "$bin/apt-get"
MISSING="zsh" UID_IS=0 check "no apt" 2 && expect "no apt" "no apt-get or dpkg-query here" "$out"

if ((failed)); then echo "$failed failed"; exit 1; fi
echo "5 passed, 0 failed"
