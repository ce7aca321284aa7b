#!/usr/bin/env python3
"""bf16 GEMM on the GPU (issue #5): tunekit tunes kernels/gemm per shape, and
each shape's best kernel is compared with cuBLAS (torch.matmul) in the same run.

  python3 bench/kernels/gemm.py --tunekit build/bin/tunekit --out DIR [--layout nk|kn] [--kernels mma,wgmma,skinny,stream,gemv,swap]

For every shape of the suite it prints the tuned time, TFLOP/s, the fraction
of the roofline and the ratio to cuBLAS. The roofline's floor is
max(2MNK / bf16 peak, bytes / copy bandwidth), both ceilings measured in this
run: the peak as cuBLAS at 8192^3, the bandwidth as a 1 GiB device-to-device
copy (bytes read plus written). Our kernels are timed by tunekit (median, L2
flushed before each sample); cuBLAS by common.timed_us (do_bench's procedure:
median, L2 flushed, an event pair per sample), on inputs drawn the same way
(uniform in [-1, 1)). tunekit's and do_bench's medians agree within 1.1% at
100 us and 5 ms on the CUDA backend's timing kernels but not always below
10 us nor on these kernels (docs/measurement.md, "When timers disagree"), so
each shape's best config is also launched in this process and timed as
cuBLAS is ("same timer"), alternating with cuBLAS for --rounds rounds; the tables give the medians, and the same-timer ratio is the
median of the rounds' ratios. That ratio is the headline "vs cuBLAS" and the
goal's verdict: tunekit's own figure is the best of the tune's trials under
another timer, a minimum over many configs against cuBLAS's median, so it is
shown beside it, not compared with the goal.

--flush picks the L2 flush for both sides: `write` (default; do_bench's and
tunekit's `cache: cold`) or `read` (tunekit's `cache: cold-read`, which leaves
no dirty lines for the kernel to write back). Each shape also gets the time of
an ideal streaming read of its bytes under the same flush (common.stream_read_us):
the floor that no kernel reading those bytes beats by much.

Every config tunekit measures is verified against an fp32-accumulating
reference kernel; `--check` adds a sweep over ragged sizes with random
configs (fresh inputs: a new seed each run, printed).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPECS = {
    "mma": os.path.join(ROOT, "kernels", "gemm", "gemm_mma.yaml"),
    "wgmma": os.path.join(ROOT, "kernels", "gemm", "wgmma_gemm.yaml"),
    "skinny": os.path.join(ROOT, "kernels", "gemm", "gemm_skinny.yaml"),
    "stream": os.path.join(ROOT, "kernels", "gemm", "gemm_stream.yaml"),
    "gemv": os.path.join(ROOT, "kernels", "gemm", "gemm_gemv.yaml"),
    "swap": os.path.join(ROOT, "kernels", "gemm", "wgmma_swap.yaml"),
}


def spec_name(kernel):
    """The spec's `name`, which names tunekit's JSON export."""
    return common.spec_name(SPECS[kernel])


def shipped_policy(kernel):
    """The policy tunekit emitted for the kernel, kernels/gemm/tuned/<spec name>_policy.json."""
    return os.path.join(os.path.dirname(SPECS[kernel]), "tuned", spec_name(kernel) + "_policy.json")


def shipped_config(kernel, size):
    """The shipped policy's config for exactly this size, or None."""
    import json
    with open(shipped_policy(kernel)) as f:
        entries = json.load(f)["entries"]
    return next((e["config"] for e in entries if all(e["size"].get(k) == v for k, v in size.items())), None)


# (M, K, N) with the goal against cuBLAS (issue #5).
SUITE = [
    ((4, 128, 2048), 1.3), ((4, 2048, 128), 1.3), ((1, 4096, 4096), 1.3), ((16, 4096, 4096), 1.3),
    ((64, 4096, 14336), 1.3), ((4096, 4096, 4096), 0.9), ((4096, 4096, 14336), 0.9),
    ((1000, 1000, 1000), None), ((3000, 1536, 777), 2.0),
]


def run(cmd, log):
    print("$", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr)
    print(f"  exit {p.returncode} after {time.monotonic() - t0:.0f} s; log {log}", flush=True)
    if p.returncode not in (0, 3):
        print(p.stdout[-2000:], p.stderr[-2000:], file=sys.stderr)
    return p


def evals_for(spec, kernel):
    """--max-evals 40 or --max-evals mma=60,wgmma=40: this kernel's budget, 0 for exhaustive."""
    if not spec:
        return 0
    if "=" not in spec:
        return int(spec)
    return int(dict(x.split("=") for x in spec.split(",")).get(kernel, 0))


def tune(a, kernel, layout, seed):
    """Tunes one kernel over its spec's sizes; returns {(M, K, N): best trial}."""
    out = os.path.join(a.out, f"{kernel}-{layout}")
    cmd = [a.tunekit, "tune", SPECS[kernel], "--no-progress", "-o", out, "--seed", str(seed),
           "-s", f"B_NK={1 if layout == 'nk' else 0}", "--cache", TUNEKIT_CACHE[a.flush]]
    if a.shape:
        m, k, n = a.shape
        cmd += ["-a", f"M=[{m}]", "-a", f"K=[{k}]", "-a", f"N=[{n}]"]
    for w in a.where:
        name, expr = w.split("=", 1)
        if name == kernel:
            cmd += ["--where", expr]
    budget = evals_for(a.max_evals, kernel)
    if budget:
        cmd += ["--max-evals", str(budget)]
    p = run(cmd, os.path.join(a.out, "tune.log"))
    path = os.path.join(out, spec_name(kernel) + ".json")
    if not os.path.exists(path):
        print(f"no results from {kernel}: {p.stderr[-500:]}", file=sys.stderr)
        return {}
    with open(path) as f:
        rep = json.load(f)
    best = {}
    for s in rep["sizes"]:
        z = s["size"]
        key = (z["M"], z["K"], z["N"])
        ok = [t for t in s["trials"] if t["status"] == "ok"]
        statuses = {}
        for t in s["trials"]:
            statuses[t["status"]] = statuses.get(t["status"], 0) + 1
        if ok:
            b = min(ok, key=lambda t: t["time_us"])
            best[key] = dict(kernel=kernel, us=b["time_us"], config=b["config"], max_abs_diff=b["max_abs_diff"],
                             max_rel_err=b["max_rel_err"], trials=len(s["trials"]), statuses=statuses)
        else:
            best[key] = dict(kernel=kernel, us=None, trials=len(s["trials"]), statuses=statuses)
        best[key]["rules"] = s.get("rules")  # how the rule-derived first config fared
    return best


def ceilings(torch, do_bench):
    src = torch.empty(1 << 29, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=50, rep=300, return_mode="median")
    bw = 2 * src.numel() * 2 / (ms * 1e-3)
    del src, dst
    n = 8192
    x = torch.empty(n, n, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    y = torch.empty(n, n, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    ms = do_bench(lambda: x @ y, warmup=100, rep=500, return_mode="median")
    return bw, 2 * n ** 3 / (ms * 1e-3)


TUNEKIT_CACHE = {"write": "cold", "read": "cold-read"}


def cublas_fn(torch, m, k, n, layout):
    """torch.matmul on fresh inputs of the shape, as a function to time."""
    a = torch.empty(m, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    if layout == "nk":
        b = torch.empty(n, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        return lambda: torch.matmul(a, b.t())
    b = torch.empty(k, n, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    return lambda: torch.matmul(a, b)


def same_timer_launch(a, torch, r, m, k, n, layout):
    """The tuned best launched as its spec says (common.SpecLaunch), to be timed
    as cuBLAS is (common.timed_us, the same flush, in this process): the ratio
    on one timer. The two timers differ by kernel, in both directions
    (docs/measurement.md): gemm_gemv at (1, 4096, 4096) read 15.2 us in
    tunekit's worker and 14.3 or 15.0 here; gemm_skinny's split-K cluster at
    (4, 2048, 128) 6.0 there and 6.6 here. (launch, max abs diff against
    fp32)."""
    x = torch.empty(m, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    w = torch.empty(*((n, k) if layout == "nk" else (k, n)), dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
    c = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    size = dict(M=m, K=k, N=n, B_NK=1 if layout == "nk" else 0)
    with common.torch_stream():
        launch = common.SpecLaunch(SPECS[r["kernel"]], r["config"], size, dict(A=x, B=w, C=c),
                                   os.path.join(a.out, "cubins"))
        launch()
        torch.cuda.synchronize()
        ref = x.float() @ (w.float().t() if layout == "nk" else w.float())
        return launch, (c.float() - ref).abs().max().item()


def alternate(a, cublas, ours):
    """cuBLAS and our launch (None: cuBLAS alone) timed in turn for a.rounds
    rounds, each figure common.timed_us of 300 samples: a machine that drifts
    between rounds (cuBLAS once read 18.5 and 24.5 us for one shape in one
    session) moves both sides of a round's ratio. (cuBLAS times, our times)."""
    cbs, ours_us = [], []
    with common.torch_stream():
        for _ in range(a.rounds):
            if ours:
                ours_us.append(common.timed_us(ours, a.flush, n=300))
            cbs.append(common.timed_us(cublas, a.flush, n=300))
    return cbs, ours_us


def ragged_check(a, seed):
    """Random configs of each kernel on sizes that are not multiples of 8 (or of
    any tile), each verified against the reference on fresh inputs."""
    out = os.path.join(a.out, "ragged")
    rows = []
    ragged = {"mma": ["M=[1,7,33,130]", "K=[9,100,1000]", "N=[5,77,258]", "B_NK=[0,1]"],
              "wgmma": ["M=[7,130,1000]", "K=[8,200,1000]", "N=[77,264]", "B_NK=[0,1]"],
              "skinny": ["M=[1,5,33,64]", "K=[8,200,1000]", "N=[7,300]", "B_NK=[1]"],
              "stream": ["M=[1,5,16]", "K=[8,200,4104]", "N=[7,2201]", "B_NK=[1]"],
              "gemv": ["M=[1,5,8]", "K=[8,200,4104]", "N=[7,2201]", "B_NK=[1]"],
              "swap": ["M=[1,5,16,33,64,100]", "K=[8,200,4104]", "N=[7,77,2201]", "B_NK=[1]"]}
    # Parts of a space that the random picks above rarely reach, swept on their own
    # (--where): split-K clusters of 9 to 16 blocks, a non-portable cluster size;
    # persistent wgmma blocks staging C in their own region (more tiles than SMs);
    # wgmma's split-K clusters (fewer tiles than SMs; K = 64 leaves a block no slice);
    # gemv's teams of warps that sum a row group through shared memory;
    # wgmma_swap's clusters of 8 and 16 (a non-portable size).
    narrow = {"skinny": [("CLUSTER == 1 and SPLIT_K > 8", ["M=[1,5,33]", "K=[1000,4104]", "N=[300,2201]", "B_NK=[1]"])],
              "wgmma": [("EPILOGUE == 2", ["M=[1000,2999]", "K=[200,1000]", "N=[264,1000]", "B_NK=[0,1]"]),
                        ("SPLIT_K > 1", ["M=[7,130]", "K=[64,200,1000]", "N=[77,264]", "B_NK=[0,1]"])],
              "gemv": [("WK > 1", ["M=[1,5,8]", "K=[200,4104]", "N=[7,2201]", "B_NK=[1]"])],
              "swap": [("SPLIT_K >= 8", ["M=[1,5,16,33]", "K=[1000,4104]", "N=[77,2201]", "B_NK=[1]"])]}
    sweeps = [(k, ragged[k], None) for k in a.kernels.split(",")]
    sweeps += [(k, axes, where) for k in a.kernels.split(",") for where, axes in narrow.get(k, [])]
    for n, (kernel, axes, where) in enumerate(sweeps):
        tag = kernel + (f"-where{n}" if where else "")
        cmd = [a.tunekit, "tune", SPECS[kernel], "--no-progress", "-o", os.path.join(out, tag), "--seed", str(seed),
               "--strategy", "random", "--max-evals", "3"] + sum((["-a", x] for x in axes), [])
        if where:
            cmd += ["--where", where]
        run(cmd, os.path.join(a.out, "ragged.log"))
        path = os.path.join(out, tag, spec_name(kernel) + ".json")
        kernel = f"{kernel} ({where})" if where else kernel
        if not os.path.exists(path):
            rows.append((kernel, 0, {}, None))
            continue
        with open(path) as f:
            rep = json.load(f)
        statuses, worst = {}, 0.0
        for s in rep["sizes"]:
            for t in s["trials"]:
                statuses[t["status"]] = statuses.get(t["status"], 0) + 1
                if t["max_rel_err"] is not None and t["status"] == "ok":
                    worst = max(worst, t["max_abs_diff"])
        rows.append((kernel, len(rep["sizes"]), statuses, worst))
    print("\nragged sizes (random configs, each verified against the fp32-accumulating reference):")
    for kernel, n, statuses, worst in rows:
        print(f"  {kernel}: {n} sizes, trials {statuses}, worst max|diff| of ok trials {worst}")
    return rows


# Shapes no tune saw (M, K, N): ragged, skinny, wide.
UNTUNED = [(2, 1000, 3000), (33, 4100, 770), (777, 333, 1234), (5000, 2048, 64), (1, 13, 7)]


def untuned_check(a, layout, seed, torch):
    """The shipped form of the tuning (tunekit emit: a C++ header that returns
    a tuned shape's config exactly and the nearest tuned shape's otherwise)
    asked for shapes it never saw; each chosen config then runs through
    CuPy on fresh inputs against an fp32 torch reference."""
    import re
    tuned_dir = os.path.join(a.out, f"mma-{layout}")
    header = os.path.join(a.out, "gemm_mma_policy.hpp")
    p = run([a.tunekit, "emit", SPECS["mma"], "-o", tuned_dir, "--seed", str(seed), "--header", header,
             "--json", os.path.join(a.out, "gemm_mma_policy.json")], os.path.join(a.out, "untuned.log"))
    if p.returncode != 0:
        return [dict(error="tunekit emit failed")]
    text = open(header).read()
    ns = re.search(r"^namespace (\w+) \{", text, re.M).group(1)
    m = re.search(r"constexpr (\w+)_config (\w+)_select\(([^)]*)\)", text)
    kernel, size_params = m.group(2), [x.split()[-1] for x in m.group(3).split(",")]
    fields = re.search(r"struct \w+_config \{([^}]*)\}", text).group(1).split(";")
    names = [f.split()[-1] for f in fields if f.strip()]
    probe = os.path.join(a.out, "policy_probe.cpp")
    with open(probe, "w") as f:
        f.write(f'#include "{header}"\n#include <cstdio>\nint main() {{\n')
        for (m_, k_, n_) in UNTUNED:
            size = dict(M=m_, K=k_, N=n_, B_NK=1 if layout == "nk" else 0)
            args = ", ".join(str(size[x]) for x in size_params)
            f.write(f"  {{ constexpr auto c = {ns}::{kernel}_select({args}); std::printf(\"" +
                    " ".join(f"{n}=%lld" for n in names) + "\\n\", " +
                    ", ".join(f"(long long)c.{n}" for n in names) + "); }\n")
        f.write("}\n")
    exe = os.path.join(a.out, "policy_probe")
    p = run(["g++", "-std=c++17", "-O1", probe, "-o", exe], os.path.join(a.out, "untuned.log"))
    if p.returncode != 0:
        return [dict(error="the policy header did not compile")]
    lines = subprocess.run([exe], capture_output=True, text=True).stdout.split("\n")
    rows = []
    with common.torch_stream():
        for (m_, k_, n_), line in zip(UNTUNED, lines):
            cfg = common.parse_config(line)
            size = dict(M=m_, K=k_, N=n_, B_NK=1 if layout == "nk" else 0)
            # PATH is pinned to the shape by a constraint: the header computes it
            # for an untuned shape (tunekit emit's pinned parameters), as tunekit
            # resolve does for a config that leaves it out
            pinned = {k: v for k, v in cfg.items() if k not in common.SIZE_PINNED}
            need = common.resolve(SPECS["mma"], size, pinned, ignore_constraints=True)["config"]["PATH"]
            if cfg["PATH"] != need:
                common.fail(f"the policy header chose PATH={cfg['PATH']} for {size}; the spec needs {need}")
            A = torch.empty(m_, k_, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
            B = torch.empty(*((n_, k_) if layout == "nk" else (k_, n_)), dtype=torch.bfloat16,
                            device="cuda").uniform_(-1, 1)
            C = torch.full((m_, n_), float("nan"), dtype=torch.bfloat16, device="cuda")
            common.SpecLaunch(SPECS["mma"], cfg, size, dict(A=A, B=B, C=C), os.path.join(a.out, "cubins"))()
            torch.cuda.synchronize()
            ref = A.float() @ (B.float().t() if layout == "nk" else B.float())
            diff = (C.float() - ref).abs()
            ok = bool(torch.isfinite(C.float()).all()) and bool((diff <= 0.05 + 0.015625 * ref.abs()).all())
            rows.append(dict(M=m_, K=k_, N=n_, config=cfg, max_abs_diff=diff.max().item(), ok=ok))
    print("\nshapes never tuned, config from the emitted policy header (nearest tuned shape):")
    for r in rows:
        print(f"  M={r['M']} K={r['K']} N={r['N']}: {'ok' if r['ok'] else 'WRONG'}, max|diff| {r['max_abs_diff']:.3g}, "
              + " ".join(f"{k}={v}" for k, v in r["config"].items()))
    return rows


def per_kernel_us(row, kernel):
    r = row.get("per_kernel", {}).get(kernel)
    if r is None:
        return "-"
    if r["us"] is not None:
        return f"{r['us']:.1f}"
    return "none ok" if r.get("trials") else "no valid config"  # all failed, or the constraints left none


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tunekit", default=os.path.join(ROOT, "build", "bin", "tunekit"))
    ap.add_argument("--out", default="/tmp/tunekit-bench-gemm")
    ap.add_argument("--layout", default="nk", choices=["nk", "kn"])
    ap.add_argument("--kernels", default="mma,wgmma,skinny,stream,gemv,swap")
    ap.add_argument("--max-evals", default="",
                    help="a budget per size, searched by tunekit's default strategy (auto): N, or KERNEL=N,... (default: exhaustive)")
    ap.add_argument("--check", action="store_true",
                    help="also verify random configs on ragged sizes, and the emitted policy on untuned shapes")
    ap.add_argument("--where", action="append", default=[], metavar="KERNEL=EXPR",
                    help="narrow that kernel's tune (tunekit tune --where), e.g. to a corner random search rarely "
                         "reaches; repeat for more kernels")
    ap.add_argument("--seed", type=int, default=0, help="input seed (default: a fresh one, printed)")
    ap.add_argument("--summary", help="write the figures as JSON here")
    ap.add_argument("--shape", type=lambda t: tuple(int(x) for x in t.split(",")),
                    help="M,K,N: tune and compare only this shape of the suite")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of cuBLAS and the same-timer re-time of our best, alternating (medians reported)")
    ap.add_argument("--flush", default="write", choices=["write", "read"],
                    help="L2 flush before each sample, for tunekit and cuBLAS alike (see above)")
    a = ap.parse_args()
    common.require_gpu_torch()
    common.use_tunekit(a.tunekit)
    if a.shape and a.shape not in [s for s, _ in SUITE]:
        ap.error(f"--shape {a.shape} is not in the suite: {[s for s, _ in SUITE]}")
    os.makedirs(a.out, exist_ok=True)
    seed = a.seed or random.SystemRandom().randrange(1, 1 << 31)
    print(f"input seed {seed}", flush=True)

    import torch
    from triton.testing import do_bench
    torch.manual_seed(seed)
    bw, peak = ceilings(torch, do_bench)
    print(f"ceilings: copy {bw / 1e12:.2f} TB/s, bf16 peak (cuBLAS 8192^3) {peak / 1e12:.0f} TFLOP/s", flush=True)

    per_kernel = {kernel: tune(a, kernel, a.layout, seed) for kernel in a.kernels.split(",")}
    tuned = {}  # the faster kernel per shape
    for results in per_kernel.values():
        for key, r in results.items():
            if r["us"] is not None and (key not in tuned or r["us"] < tuned[key]["us"]):
                tuned[key] = r

    rows = []
    for (m, k, n), goal in SUITE:
        if a.shape and (m, k, n) != a.shape:
            continue
        flops = 2.0 * m * n * k
        bytes_ = 2.0 * (m * k + k * n + m * n)
        floor_us = 1e6 * max(flops / peak, bytes_ / bw)
        r = tuned.get((m, k, n))
        same = same_timer_launch(a, torch, r, m, k, n, a.layout) if r and r["us"] else None
        cbs, sames = alternate(a, cublas_fn(torch, m, k, n, a.layout), same[0] if same else None)
        cb = statistics.median(cbs)
        stream_us, _ = common.stream_read_us(int(bytes_), a.flush)
        row = dict(M=m, K=k, N=n, layout=a.layout, floor_us=floor_us, cublas_us=cb, cublas_rounds_us=cbs,
                   cublas_roofline=floor_us / cb, goal=goal, stream_us=stream_us, flush=a.flush)
        if r and r["us"]:
            row.update(kernel=r["kernel"], us=r["us"], tflops=flops / r["us"] / 1e6, roofline=floor_us / r["us"],
                       vs_cublas=cb / r["us"], config=r["config"], max_abs_diff=r["max_abs_diff"],
                       max_rel_err=r["max_rel_err"])
            if same:
                # the median of the rounds' ratios, each from one round's pair
                row.update(same_timer_us=statistics.median(sames), same_timer_rounds_us=sames,
                           same_timer_vs_cublas=statistics.median(c / o for c, o in zip(cbs, sames)),
                           same_timer_max_abs_diff=same[1])
                if goal is not None:
                    row["goal_met"] = row["same_timer_vs_cublas"] >= goal
        row["per_kernel"] = {kn: res.get((m, k, n)) for kn, res in per_kernel.items()}
        rows.append(row)

    ragged = ragged_check(a, seed) if a.check else None
    untuned = untuned_check(a, a.layout, seed, torch) if a.check and "mma" in per_kernel else None
    summary = dict(seed=seed, copy_bw=bw, bf16_peak=peak, layout=a.layout, flush=a.flush, rows=rows, ragged=ragged,
                   untuned=untuned)
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump(summary, f, indent=2)
    print(f"\nbf16 GEMM, B as {'N x K' if a.layout == 'nk' else 'K x N'}; ceilings {bw / 1e12:.2f} TB/s, "
          f"{peak / 1e12:.0f} TFLOP/s; L2 flushed by {a.flush}s before each sample; 'read floor': an ideal "
          f"streaming read of the shape's bytes, and cuBLAS / that floor: the best ratio a kernel could reach")
    kernels = list(per_kernel)
    print("| M | K | N | kernel | same timer us | cuBLAS us | vs cuBLAS (same timer) | goal | TFLOP/s | roofline "
          "| cuBLAS roofline | read floor us | cuBLAS / floor | max abs diff | tunekit us (best trial, its timer) "
          "| cuBLAS / that | " + " | ".join(f"{k} us" for k in kernels) + " |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(kernels))
    for r in rows:
        floor = f"{r['stream_us']:.1f} | {r['cublas_us'] / r['stream_us']:.2f}x"
        if "us" not in r:
            print(f"| {r['M']} | {r['K']} | {r['N']} | none ok | | {r['cublas_us']:.1f} | | {r['goal'] or '-'} | | | "
                  f"{r['cublas_roofline']:.2f} | {floor} | | | |")
            continue
        if "same_timer_us" in r:
            # the same-timer figures also set TFLOP/s and roofline, so every headline column shares one timer
            st = r["same_timer_us"]
            met = "" if r["goal"] is None else (" met" if r["same_timer_vs_cublas"] >= r["goal"] else " missed")
            head = (f"{st:.1f} | {r['cublas_us']:.1f} | **{r['same_timer_vs_cublas']:.2f}x** | "
                    f"{(str(r['goal']) + 'x' + met) if r['goal'] else '-'} | {2.0 * r['M'] * r['N'] * r['K'] / st / 1e6:.1f} | "
                    f"{r['floor_us'] / st:.2f}")
        else:
            head = (f"- | {r['cublas_us']:.1f} | - | {(str(r['goal']) + 'x no same-timer figure, no verdict') if r['goal'] else '-'} "
                    "| - | -")
        print(f"| {r['M']} | {r['K']} | {r['N']} | {r['kernel']} | {head} | {r['cublas_roofline']:.2f} | {floor} | "
              f"{r['max_abs_diff']:.3g} | {r['us']:.1f} | {r['vs_cublas']:.2f}x | "
              + " | ".join(per_kernel_us(r, k) for k in kernels) + " |")
    print("\nRule-derived first configs (search.rules) against each kernel's tuned best:")
    print("| M | K | N | kernel | rule config | rule us | best us | rule / best | rank | evaluations to beat it "
          "| expected for random search |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for kn, res in r["per_kernel"].items():
            ru = (res or {}).get("rules")
            if not ru:
                continue
            cfg = " ".join(f"{k}={v}" for k, v in ru["config"].items())
            fmt = lambda x, f="{:.1f}": "-" if x is None else f.format(x)  # noqa: E731
            print(f"| {r['M']} | {r['K']} | {r['N']} | {kn} | {cfg} | {fmt(ru['time_us'])} | {fmt(ru['best_us'])} | "
                  f"{fmt(ru['ratio_to_best'], '{:.2f}')} | {fmt(ru['rank'], '{}')} of {ru['ok_trials']} | "
                  f"{fmt(ru['evaluations_to_beat'], '{}')} | {fmt(ru['expected_random_evaluations'], '{:.1f}')} |")


if __name__ == "__main__":
    main()
