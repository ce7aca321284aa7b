#!/usr/bin/env bash
# Search-space construction benchmark (issue #3): tunekit against Kernel
# Tuner's Searchspace, on the five published spaces, in one run.
#
#   1. builds libtunekit (cmake --build BUILD --target tunekit; BUILD is
#      configured first if needed) and compiles bench/space/space_bench.cpp
#      against it;
#   2. tunekit: builds all five spaces in one process, single-threaded,
#      --repeat times each (parse the constraints + Space + index; every
#      valid config is then reachable by index), and checks the counts;
#   3. Kernel Tuner: times Searchspace(tune_params, restrictions, 1024) on
#      the same files (bench/space/kt_bench.py; pip install kernel_tuner);
#   4. prints, per space and in total, both times, the valid counts and the
#      ratio Kernel Tuner / tunekit "+all": tunekit's build that also writes
#      every valid config into an array, as Kernel Tuner's Searchspace holds
#      them in its list. The lazy build (the index alone, what tunekit tune
#      uses) has its own ratio column; it is not the headline, since Kernel
#      Tuner has no lazy form to set beside it. Also the load average before
#      and after, as the VM may be shared.
#
# Usage: bench/space/run.sh [options] [FILE...]
#   --build DIR       build folder (default: build)
#   --repeat N        tunekit builds per space (default 51); the median is reported
#   --kt-repeat N     Kernel Tuner builds per space (default 3)
#   --no-kt           skip Kernel Tuner
#   --venv DIR        Python with kernel_tuner for step 3 (default: python3 on PATH)
#   --out DIR         work folder (default: BUILD/bench-space)
#   -h, --help
# FILE...: space JSON files (default: ../shared/spaces/*.json next to the
# repository). CXX (default g++) compiles the harness.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

build="$root/build"
repeat=51
kt_repeat=3
kt=1
venv=""
out=""
CXX=${CXX:-g++}
files=()

die() { echo "run.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=${2:?"$1 needs a value"}; shift 2 ;;
    --repeat) repeat=${2:?"$1 needs a value"}; shift 2 ;;
    --kt-repeat) kt_repeat=${2:?"$1 needs a value"}; shift 2 ;;
    --no-kt) kt=0; shift ;;
    --venv) venv=${2:?"$1 needs a value"}; shift 2 ;;
    --out) out=${2:?"$1 needs a value"}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$1' (try --help)" ;;
    *) files+=("$1"); shift ;;
  esac
done
source "$here/../args.sh"
count --repeat "$repeat"
count --kt-repeat "$kt_repeat"
for f in "${files[@]}"; do [ -f "$f" ] || die "no such file: $f"; done
if [ ${#files[@]} -eq 0 ]; then
  shared="$root/../shared/spaces"
  [ -d "$shared" ] || die "no space files given and $shared not found"
  for f in dedispersion expdist gemm hotspot microhh; do files+=("$shared/$f.json"); done
fi
[ -n "$out" ] || out="$build/bench-space"
mkdir -p "$out"

# ---- 1. build ----------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "[build] configuring $build (Release)" >&2
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" 2>&1 ||
    { tail -n 20 "$out/cmake.log" >&2; die "cmake configure failed"; }
fi
echo "[build] libtunekit in $build" >&2
cmake --build "$build" --target tunekit -j "$(nproc)" >"$out/build.log" 2>&1 ||
  { tail -n 30 "$out/build.log" >&2; die "building libtunekit failed (log: $out/build.log)"; }
echo "[build] space_bench" >&2
"$CXX" -std=c++20 -O2 -DNDEBUG -I"$root/include" "$here/space_bench.cpp" "$build/lib/libtunekit.a" \
  -lfmt -lyaml-cpp -lsqlite3 -lz -ldl -pthread -o "$out/space_bench" || die "compiling space_bench.cpp failed"

# ---- 2. tunekit --------------------------------------------------------------
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "[run] tunekit: ${#files[@]} spaces, $repeat builds each" >&2
status=0
"$out/space_bench" --json --repeat "$repeat" "${files[@]}" >"$out/tunekit.jsonl" || status=$?

# ---- 3. Kernel Tuner ---------------------------------------------------------
: >"$out/kt.jsonl"
if [ "$kt" = 1 ]; then
  echo "[run] Kernel Tuner Searchspace: $kt_repeat builds each" >&2
  python="python3"; [ -n "$venv" ] && python="$venv/bin/python"
  "$python" "$here/kt_bench.py" --repeat "$kt_repeat" "${files[@]}" >"$out/kt.jsonl" || status=$?
fi

# ---- 4. report ---------------------------------------------------------------
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$out/tunekit.jsonl" "$out/kt.jsonl" "$load_before" "$load_after" "$(nproc)" <<'PY' || status=$?
import json, platform, subprocess, sys
tk = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kt = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
if kt and "error" in kt[0]:
    print("Kernel Tuner:", kt[0]["error"]); kt = []
ktd = {r["space"]: r for r in kt}
tot = next(r for r in tk if r["space"] == "total")
rows = [r for r in tk if r["space"] != "total"]
cpu = "?"
try:
    cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except Exception:
    pass
print()
ktnote = f", Kernel Tuner {kt[0]['kernel_tuner']} median of {kt[0]['repeat']}" if kt else ""
print(f"Search-space construction, single thread; {cpu} ({sys.argv[5]} cores), load average {sys.argv[3]} "
      f"before, {sys.argv[4]} after; tunekit median of {tot['repeat']} builds{ktnote}")
hdr = (f"{'space':<13} {'Cartesian':>11} {'valid':>8} {'+all ms':>9} {'KT ms':>10} {'KT/+all':>9} "
       f"{'lazy ms':>9} {'(first)':>9} {'KT/lazy':>9} {'index B':>9} {'B/config':>9} {'KT valid':>9}")
print(hdr); print("-" * len(hdr))
bad = False
sum_kt = 0.0
def ratio(num, den):
    return f"{num / den:,.0f}x" if num and den else "-"
for r in rows:
    k = ktd.get(r["space"])
    ok = r["expected_valid"] in (-1, r["valid"]) and (k is None or k["valid"] == r["valid"])
    bad |= not ok
    kms = k["median_s"] * 1e3 if k else None
    if kms: sum_kt += kms
    kvalid = str(k["valid"]) if k else "-"
    kms_s = f"{kms:.1f}" if kms else "-"
    note = "" if ok else "  COUNT MISMATCH"
    print(f"{r['space']:<13} {r['cartesian']:>11,} {r['valid']:>8,} {r['materialise_ms']:>9.3f} {kms_s:>10} "
          f"{ratio(kms, r['materialise_ms']):>9} {r['median_ms']:>9.3f} {r['first_ms']:>9.3f} "
          f"{ratio(kms, r['median_ms']):>9} {r['bytes']:>9,} {r['bytes_per_config']:>9.3f} {kvalid:>9}{note}")
print("-" * len(hdr))
tkt = f"{sum_kt:.1f}" if kt else "-"
print(f"{'total':<13} {'':>11} {tot['valid']:>8,} {tot['materialise_ms']:>9.3f} {tkt:>10} "
      f"{ratio(sum_kt, tot['materialise_ms']):>9} {tot['median_ms']:>9.3f} {tot['first_ms']:>9.3f} "
      f"{ratio(sum_kt, tot['median_ms']):>9} {tot['bytes']:>9,} {tot['bytes'] / max(1, tot['valid']):>9.3f}")
print(f"target: all five in under 20 ms in total (lazy build) -> {'met' if tot['median_ms'] < 20 else 'NOT met'} "
      f"(median {tot['median_ms']:.2f} ms, first builds {tot['first_ms']:.2f} ms, min {tot['min_ms']:.2f} ms)")
print("+all ms: parse the constraints + Space + index, then write every valid config into a flat array, as\n"
      "Kernel Tuner's Searchspace holds its list (KT/+all: the like-for-like ratio); lazy ms: the same without\n"
      "the array (every valid config reachable by index, what tunekit tune builds); (first): the first lazy\n"
      "build in the process; index B: the index's bytes, B/config per valid config.")
if bad:
    print("COUNT MISMATCH: see above"); sys.exit(1)
PY
echo "raw results: $out/tunekit.jsonl $out/kt.jsonl" >&2
exit $status
