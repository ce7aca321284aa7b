#!/usr/bin/env bash
# CPU GEMM benchmark: tuned vs default vs naive vs OpenBLAS sgemm.
#
# For each square size S (default: 512 1024 2048) this script
#   1. gets a tuned configuration of examples/matmul/matmul.cpp, by running
#        build/bin/tunekit tune examples/matmul/matmul.yaml \
#            --size M=S --size N=S --size K=S --json DIR/tune-S.json
#      and reading sizes[0].best.config from that JSON (or from --config /
#      --configs / --no-tune, see below);
#   2. compiles bench/cpu_gemm/gemm_bench.cpp twice: with the kernel's default
#      macros and with the tuned config's -D values;
#   3. measures, in this run on this machine: OpenBLAS sgemm (2 threads), the
#      default config, the tuned config and the naive triple loop, each in its
#      own process (warm-up, >= 5 timed calls, median), checking every result
#      against OpenBLAS;
#   4. prints a table of GFLOP/s and the ratios tuned/OpenBLAS, tuned/default
#      and tuned/naive.
#
# Usage: bench/cpu_gemm/run.sh [options]
#   --sizes "512 1024 2048"  square sizes to run
#   --config 'MC=..,KC=..'   use this config as "tuned" for every size (no tuning)
#   --configs FILE           per-size configs, lines "SIZE NAME=V,NAME=V,..."
#                            (SIZE may be '*'); no tuning
#   --no-tune                same as --configs bench/cpu_gemm/configs.txt
#                            (configs found by hand on a 2-core Zen 4)
#   --reuse                  reuse DIR/tune-S.json from an earlier run if present
#   --fresh                  tune with `tunekit tune --fresh`: measure every config
#                            again instead of resuming the store in DIR (whose
#                            trials keep a busy machine's mark, so a plain rerun
#                            after a busy tune stops again)
#   --tunekit PATH           the tunekit binary (default: build/bin/tunekit)
#   --out DIR                work folder (default: build/bench-cpu-gemm)
#   --rounds N               measure everything N times, interleaved, and report
#                            the best median of the N rounds (default 3; the
#                            machine may be shared, so use N >= 2)
#   --threads T              threads for the kernel and OpenBLAS (default 2)
#   --naive-reps N           timed calls of the naive loop at sizes > 1024
#                            (default 3; it is slow); the naive loop is
#                            measured in the first round only
#   --allow-busy             go on when a tune reports a busy machine (trials that
#                            waited for a CPU: their times, and so the tuned
#                            config, may be wrong); the table then says so.
#                            Without it such a tune stops the run (exit 1)
#   --omp-wait-policy P      set OMP_WAIT_POLICY=P (active|passive) for the
#                            kernel; default: libgomp's default (spin a while,
#                            then sleep), as when tunekit measured it. passive
#                            is much more robust when other processes compete
#                            for the cores
#   -h, --help
#
# Environment: OPENBLAS_CORETYPE is removed from the benchmark processes'
# environment (some machines set it to force a kernel); the core type that
# OpenBLAS picked is printed. OPENBLAS_NUM_THREADS and OMP_NUM_THREADS are set
# to --threads. CXX (default g++) compiles the harness.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

sizes="512 1024 2048"
config=""
configs_file=""
reuse=0
fresh=()
tunekit="$root/build/bin/tunekit"
out="$root/build/bench-cpu-gemm"
rounds=3
threads=2
naive_reps=3
wait_policy=""
allow_busy=0
CXX=${CXX:-g++}

die() { echo "run.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=${2:?"$1 needs a value"}; shift 2 ;;
    --config) config=${2:?"$1 needs a value"}; shift 2 ;;
    --configs) configs_file=${2:?"$1 needs a value"}; shift 2 ;;
    --no-tune) configs_file="$here/configs.txt"; shift ;;
    --reuse) reuse=1; shift ;;
    --fresh) fresh=(--fresh); shift ;;
    --tunekit) tunekit=${2:?"$1 needs a value"}; shift 2 ;;
    --out) out=${2:?"$1 needs a value"}; shift 2 ;;
    --rounds) rounds=${2:?"$1 needs a value"}; shift 2 ;;
    --threads) threads=${2:?"$1 needs a value"}; shift 2 ;;
    --naive-reps) naive_reps=${2:?"$1 needs a value"}; shift 2 ;;
    --allow-busy) allow_busy=1; shift ;;
    --omp-wait-policy) wait_policy=${2:?"$1 needs a value"}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (try --help)" ;;
  esac
done

# Every value is checked before anything is made: a refused run leaves no folder.
source "$here/../args.sh"
count --rounds "$rounds"
count --threads "$threads"
count --naive-reps "$naive_reps"
[ -z "$configs_file" ] || [ -f "$configs_file" ] || die "no such configs file: $configs_file"
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/tune-*.facts

# "NAME=V,NAME=V" -> "-DNAME=V -DNAME=V"; rejects anything that is not NAME=VALUE.
to_defines() {
  local cfg=$1 item defs=""
  IFS=',' read -ra items <<<"$cfg"
  for item in "${items[@]}"; do
    item=$(echo "$item" | tr -d '[:space:]')
    [ -z "$item" ] && continue
    [[ "$item" =~ ^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_.+-]+$ ]] || die "bad config entry '$item' in '$cfg'"
    defs="$defs -D$item"
  done
  echo "$defs"
}

# Config for size $1 from the configs file ('*' lines match every size; the
# last matching line wins).
config_from_file() {
  awk -v s="$1" '!/^[[:space:]]*(#|$)/ && ($1 == s || $1 == "*") { c = $2 } END { print c }' "$configs_file"
}

# Runs the tuner for size $1 and prints the best config as NAME=V,...; its
# wall time, trials and busy-machine count go to $out/tune-$1.facts for the
# report, since a tune on a busy machine can pick a config that is not the
# fastest and the table alone would not show it.
tune_size() {
  local s=$1 json="$out/tune-$1.json"
  if [ "$reuse" = 1 ] && [ -s "$json" ]; then
    echo "[tune] size $s: reusing $json" >&2
  else
    [ -x "$tunekit" ] || die "tunekit not found at $tunekit (build it, or pass --config / --configs / --no-tune)"
    echo "[tune] size $s: $tunekit tune examples/matmul/matmul.yaml --size M=$s --size N=$s --size K=$s" >&2
    # Run in $out so the tuner's own outputs (database ...) land there.
    (cd "$out" && "$tunekit" tune "$root/examples/matmul/matmul.yaml" \
        --size "M=$s" --size "N=$s" --size "K=$s" --json "$json" ${fresh[@]+"${fresh[@]}"}) >"$out/tune-$s.log" 2>&1 ||
      { tail -n 20 "$out/tune-$s.log" >&2; die "tunekit failed for size $s (log: $out/tune-$s.log)"; }
  fi
  python3 - "$json" "$out/tune-$s.facts" <<'EOF' || die "could not read sizes[0].best.config from $json"
import json, sys
doc = json.load(open(sys.argv[1]))
size = doc["sizes"][0]
cfg = size["best"]["config"]
ok = sum(1 for t in size["trials"] if t["status"] == "ok")
with open(sys.argv[2], "w") as f:
    f.write(f"wall_s={doc['wall_s']:.0f} trials={len(size['trials'])} ok={ok} "
            f"busy={len(size.get('waited_for_cpu') or [])}\n")
print(",".join(f"{k}={v}" for k, v in cfg.items()))
EOF
}

# ---- 1. tuned configs --------------------------------------------------------
declare -A tuned
for s in $sizes; do
  if [ -n "$config" ]; then
    tuned[$s]=$config
  elif [ -n "$configs_file" ]; then
    tuned[$s]=$(config_from_file "$s")
    [ -n "${tuned[$s]}" ] || die "no config for size $s in $configs_file"
  else
    tuned[$s]=$(tune_size "$s")
    read -r _ _ _ busy <"$out/tune-$s.facts"
    if [ "${busy#busy=}" != 0 ]; then
      echo "[tune] size $s: BUSY MACHINE: ${busy#busy=} trials waited for a CPU (log: $out/tune-$s.log)" >&2
      [ "$allow_busy" = 1 ] || die "the tune of size $s ran on a busy machine, so its config may not be the fastest; \
run again with --fresh on a quiet machine, or pass --allow-busy to go on with a warning"
    fi
  fi
  to_defines "${tuned[$s]}" >/dev/null
done

# ---- 2. build ----------------------------------------------------------------
cxxflags=(-std=c++20 -O3 -march=native -fopenmp)
build() {  # build NAME "DEFINES"
  local bin="$out/$1" defs=$2
  # shellcheck disable=SC2086
  "$CXX" "${cxxflags[@]}" $defs "$here/gemm_bench.cpp" -lopenblas -o "$bin" ||
    die "compiling gemm_bench.cpp with '$defs' failed"
}
echo "[build] default config" >&2
build gemm_default ""
declare -A bin_of
for s in $sizes; do
  key=$(echo "${tuned[$s]}" | md5sum | cut -c1-12)
  if [ ! -e "$out/gemm_tuned_$key.built" ]; then
    echo "[build] tuned config for $s: ${tuned[$s]}" >&2
    build "gemm_tuned_$key" "$(to_defines "${tuned[$s]}")"
    : >"$out/gemm_tuned_$key.built"
  fi
  bin_of[$s]="$out/gemm_tuned_$key"
done
rm -f "$out"/*.built

# ---- 3. measure --------------------------------------------------------------
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
  echo "[env] OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE is set here; it is unset for the benchmark processes" >&2
fi
runenv=(env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads")
[ -z "$wait_policy" ] || runenv+=(OMP_WAIT_POLICY="$wait_policy")
results="$out/results.txt"
: >"$results"
status=0
measure() {  # measure BIN ARGS...
  local line rc=0
  line=$("${runenv[@]}" "$@" --threads "$threads") || rc=$?
  [ -n "$line" ] || die "no result from $*"
  echo "$line" >>"$results"
  if [ "$rc" -ne 0 ]; then
    echo "[check] FAILED: $line" >&2
    status=1
  fi
}
for r in $(seq "$rounds"); do
  for s in $sizes; do
    echo "[run] round $r/$rounds, size $s" >&2
    measure "$out/gemm_default" --impl openblas --size "$s" --label openblas
    measure "$out/gemm_default" --impl kernel --size "$s" --label default
    measure "${bin_of[$s]}" --impl kernel --size "$s" --label tuned
    if [ "$r" = 1 ]; then
      if [ "$s" -gt 1024 ]; then
        measure "$out/gemm_default" --impl naive --size "$s" --label naive \
          --warmup 1 --reps "$naive_reps" --max-reps "$naive_reps" --min-time 0
      else
        measure "$out/gemm_default" --impl naive --size "$s" --label naive
      fi
    fi
  done
done

# ---- 4. report ---------------------------------------------------------------
python3 - "$results" "$rounds" "$threads" "$naive_reps" "$sizes" "${wait_policy:-default}" "$out" <<'EOF'
import os, sys
results, rounds, threads, naive_reps, sizes, policy, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5].split(), sys.argv[6], sys.argv[7]
best, cfg, core, bad = {}, {}, set(), []
for line in open(results):
    kv = dict(f.split("=", 1) for f in line.split())
    key = (int(kv["M"]), kv["label"])
    g = float(kv["gflops"])
    best[key] = max(best.get(key, 0.0), g)
    if kv["label"] == "tuned":
        cfg[int(kv["M"])] = kv["config"]
    if kv["label"] == "openblas":
        core.add(kv["openblas_core"])
    if kv["ok"] != "1":
        bad.append(line.strip())
print()
print(f"CPU GEMM, single precision, C = A*B row-major; GFLOP/s = 2*S^3/median time "
      f"(best of {rounds} round(s)); {threads} threads; OMP_WAIT_POLICY {policy}; OpenBLAS core: {', '.join(sorted(core))}")
hdr = f"{'size':>6} {'naive':>8} {'default':>8} {'tuned':>8} {'OpenBLAS':>9} {'tuned/OpenBLAS':>15} {'tuned/default':>14} {'tuned/naive':>12}"
print(hdr)
print("-" * len(hdr))
for s in map(int, sizes):
    g = {l: best.get((s, l)) for l in ("naive", "default", "tuned", "openblas")}
    f = lambda x: f"{x:8.1f}" if x else f"{'-':>8}"
    r = lambda a, b: f"{a / b:.2f}x" if a and b else "-"
    print(f"{s:>6} {f(g['naive'])} {f(g['default'])} {f(g['tuned'])} {g['openblas'] or 0:9.1f} "
          f"{r(g['tuned'], g['openblas']):>15} {r(g['tuned'], g['default']):>14} {r(g['tuned'], g['naive']):>12}")
print()
print("tuned configs:")
for s in map(int, sizes):
    print(f"  {s}: {cfg.get(s, '?')}")
busy = []
for s in map(int, sizes):
    path = os.path.join(out, f"tune-{s}.facts")
    if not os.path.exists(path):
        continue  # no tune in this run (--config, --configs, --no-tune)
    f = dict(kv.split("=") for kv in open(path).read().split())
    print(f"  {s}: tune {f['wall_s']} s, {f['trials']} trials ({f['ok']} ok)"
          + (f", BUSY MACHINE: {f['busy']} trials waited for a CPU" if f["busy"] != "0" else ""))
    if f["busy"] != "0":
        busy.append(s)
print(f"naive: i-k-j triple loop with a double row accumulator, 1 thread, measured in round 1 only"
      f" ({naive_reps} timed calls at sizes > 1024).")
print(f"raw results: {results}")
if busy:
    print(f"WARNING: BUSY MACHINE: the tunes of size {', '.join(map(str, busy))} waited for a CPU; their "
          "configs, and so the tuned columns, may not be the fastest (--allow-busy went on anyway)")
if bad:
    print("VERIFICATION FAILURES (error vs OpenBLAS above tolerance):")
    for b in bad:
        print("  " + b)
EOF
exit $status
