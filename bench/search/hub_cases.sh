# Sourced by heldout.sh and unseen.sh, which set `set_name` first: reads the
# hub's path from the command line ($1, or -h/--help for the caller's
# header) and defines add(), which links a cache of the hub under a distinct
# name into build-search/$set_name and appends it to `cases` for run.sh.
# Then `run_cases "$@"` runs bench/search/run.sh on them.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
root=$(cd "$here/../.." && pwd)
script=$(basename "${BASH_SOURCE[1]}")
die() { echo "$script: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: $script HUB [run.sh options] (see its header)"
case "$1" in -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[1]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
hub=$1
[ -d "$hub/cachefiles" ] || die "$hub: no cachefiles/ folder (is it the benchmark hub?)"

dir="$root/build-search/$set_name"
mkdir -p "$dir"
cases=()
add() {  # add SOURCE NAME T1
  [ -f "$1" ] || die "missing in the hub: $1"
  [ -f "$3" ] || die "missing: $3"
  ln -sf "$1" "$dir/$2.json.gz"
  cases+=(--case "$dir/$2.json.gz" "$3")
}
run_cases() {  # run_cases "$@" (the caller's arguments, the hub first)
  shift
  exec "$here/run.sh" "${cases[@]}" --large none --out "$root/build-search/$set_name-bench" "$@"
}
