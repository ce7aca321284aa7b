#!/usr/bin/env bash
# Transfer across sizes (issue #23, item 5): how many evaluations a size's
# search takes to reach 98% of that size's best, with and without the
# configs transferred from the nearest sizes tuned before it.
#
# The sizes are replayed (tunekit tune --replay) from a database of
# exhaustive tunes of examples/matmul at seven square sizes, 256 to 768, on a CPU
# (small enough that --record takes minutes on two cores),
# bench/search/data/matmul_sizes.db.gz, unpacked into --out for each run so
# that a read-only checkout serves (--record makes a new one on this machine,
# in --out; gzip it over the .gz to keep it). Each seed runs the multi-size
# tune twice, with the default search.transfer and with --no-transfer, under
# auto with a budget of --budget evaluations per size (a quarter to a third of
# a size's space); per size after the first, it counts the evaluations
# (seeds, the default config and the search alike, in order) until the best
# time so far is within 98% of the size's best recorded time, or the budget
# plus one when the tune never got there.
#
# Usage: bench/search/transfer.sh [--build DIR] [--seeds N] [--budget N] [--record] [--out DIR]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build"
out="$root/build-search/transfer"
db_gz="$here/data/matmul_sizes.db.gz"
seeds=20
budget=20
record=0
spec="$root/examples/matmul/matmul.yaml"

die() { echo "transfer.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=${2:?"$1 needs a value"}; shift 2 ;;
    --seeds) seeds=${2:?"$1 needs a value"}; shift 2 ;;
    --budget) budget=${2:?"$1 needs a value"}; shift 2 ;;
    --record) record=1; shift ;;
    --out) out=${2:?"$1 needs a value"}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (try --help)" ;;
  esac
done
source "$here/../args.sh"
count --seeds "$seeds"
count --budget "$budget"
tunekit="$build/bin/tunekit"
[ -x "$tunekit" ] || die "no tunekit at $tunekit (build tunekit-cli and tunekit-worker first)"
mkdir -p "$out"
db="$out/matmul_sizes.db"

# The seven sizes as one spec: a copy of the example's with `sizes` replaced.
grep -q "^sizes:" "$spec" || die "$spec has no sizes: line to replace"
cp "$root/examples/matmul/matmul.cpp" "$out/"
python3 - "$spec" "$out/matmul_sizes.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
sizes = "sizes:\n" + "".join(f"  - {{M: {m}, N: {m}, K: {m}}}\n" for m in (256, 320, 384, 448, 512, 640, 768))
text = re.sub(r"^sizes:\n(  - .*\n)+", sizes, text, flags=re.M)
open(sys.argv[2], "w").write(text)
PY
spec="$out/matmul_sizes.yaml"

if [ "$record" = 1 ]; then
  echo "[record] exhaustive tunes of $spec on this machine into $db (minutes)" >&2
  rm -f "$db" "$db-wal" "$db-shm"
  "$tunekit" tune "$spec" --strategy exhaustive --no-transfer --db "$db" -o "$out/record" --no-progress --output console >"$out/record.log"
fi
if [ "$record" = 1 ]; then
  echo "[record] done; to keep it: gzip -c $db >$db_gz" >&2
else
  # The repository keeps the recording gzipped (git ignores *.db).
  [ -f "$db_gz" ] || die "no recording at $db_gz (run with --record)"
  rm -f "$db" "$db-wal" "$db-shm"
  gunzip -c "$db_gz" >"$db" || die "cannot unpack $db_gz into $out"
fi

rows="$out/runs.jsonl"
: >"$rows"
for ((s = 1; s <= seeds; s++)); do
  for mode in transfer none; do
    flags=()
    [ "$mode" = none ] && flags+=(--no-transfer)
    rm -f "$out/run.db" "$out/run.db-wal" "$out/run.db-shm"
    "$tunekit" tune "$spec" --replay "$db" --seed "$s" --max-evals "$budget" "${flags[@]}" \
      --db "$out/run.db" -o "$out/work" --fresh --no-progress --output json --json "$out/run.json" >/dev/null
    python3 - "$out/run.json" "$mode" "$s" >>"$rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"mode": sys.argv[2], "seed": int(sys.argv[3]), "sizes": [
    {"size": s["size"], "trials": [[t["time_us"], t["origin"]] for t in s["trials"]]} for s in d["sizes"]]}))
PY
  done
done
python3 "$here/transfer_report.py" "$rows" "$db"
