#!/usr/bin/env bash
# Replays `auto` with a budget of 30 (the H200 check's) on the exhaustive
# H200 GEMM databases of h200-gemm/ and prints, per database and over all,
# the share of seeds whose best is within 0.98 of the database's best.
# A research probe: environment variables reach the library unchanged, so a
# scratch switch read there is compared by running this twice.
#
#   lab/runs/issue-23/gemm_replay.sh [SEEDS] [TUNEKIT]   (defaults: 100, build/bin/tunekit)
# STRATEGY (default auto) and OPTIONS (NAME=VALUE ..., each passed with
# --option) replay another strategy, or one with other options.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
seeds=${1:-100}
tunekit=${2:-$root/build/bin/tunekit}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in "$root"/lab/runs/issue-23/h200-gemm/exhaustive-*.db.gz; do
  zcat "$f" > "$work/$(basename "$f" .gz)"
done
cd "$root"
python3 - "$seeds" "$tunekit" "$work" <<'PY'
import glob, json, os, re, sqlite3, statistics, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
seeds, tunekit, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def best(db):
    with sqlite3.connect(db) as c:
        return c.execute("select min(median_us) from trials where status = 'ok'").fetchone()[0]

def tune(args):
    db, seed = args
    m, k, n = re.search(r'exhaustive-(\d+)x(\d+)x(\d+)', db).groups()
    out = f'{work}/{os.path.basename(db)}.{seed}'
    subprocess.run([tunekit, 'tune', 'kernels/gemm/wgmma_gemm.yaml', '-a', f'M=[{m}]', '-a', f'K=[{k}]',
                    '-a', f'N=[{n}]', '--strategy', os.environ.get('STRATEGY', 'auto'),
                    *[a for o in os.environ.get('OPTIONS', '').split() for a in ('--option', o)],
                    '--max-evals', '30', '--seed', str(seed),
                    '--replay', db, '--db', out + '.db', '--json', out + '.json', '--fresh',
                    '--out-dir', out + '.d', '--output', 'json'], check=True, capture_output=True)
    with open(out + '.json') as f:
        return json.load(f)['sizes'][0]['best']['time_us']

everything = []
with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
    for db in sorted(glob.glob(f'{work}/exhaustive-*.db')):
        b = best(db)
        fractions = [b / t for t in pool.map(tune, [(db, s) for s in range(1, seeds + 1)])]
        everything += fractions
        share = sum(f >= 0.98 for f in fractions) / len(fractions)
        print(f'{os.path.basename(db):36s} share >= 0.98: {share:.2f}  median {statistics.median(fractions):.3f}')
share = sum(f >= 0.98 for f in everything) / len(everything)
print(f'all {len(everything)} runs: share >= 0.98: {share:.3f}  mean fraction {statistics.mean(everything):.4f}')
PY
