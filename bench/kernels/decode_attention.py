#!/usr/bin/env python3
"""Decode attention with per-matmul tile configs (issue #5, part 1): the PyPTO
case study (one uniform tile config for every matmul vs per-matmul configs)
reproduced with tunekit on an H200.

One decode step, bf16, four launches on one stream:
  1. scores = Q . Kc^T   gemm_mma, M=4, N=2048, K=128,  B = K cache 2048x128 ("nk", b_nk=1)
  2. P = softmax(scores / sqrt(128)) per row    kernels/decode_attention/softmax.cu
  3. attn = P . V        gemm_mma, M=4, N=128,  K=2048, B = V cache 2048x128 ("kn")
  4. y = x . W           gemm_mma, M=1, N=4096, K=4096, W 4096x4096 ("kn")

  python3 bench/kernels/decode_attention.py --tunekit build/bin/tunekit --out /tmp/da

Steps: tunekit tunes kernels/gemm/gemm_mma.yaml once per matmul shape (-a
M=[..] -a N=[..] -a K=[..] -a B_NK=[..]) and kernels/decode_attention/softmax.yaml;
the JSON exports give every config's time per shape. Four configurations of
the step are then built (CuPy RawModule, one module per distinct config):
  uniform   one config for all three matmuls: among the configs that ran
            correctly on all three shapes, the candidates with the smallest
            sum of tunekit medians (plus the best geometric mean of
            time / best time) are timed here as whole steps and the fastest
            step wins;
  large-M   per matmul, the fastest config with BM >= 64;
  small-M   per matmul, the fastest config with BM == 16;
  tuned     per matmul, tunekit's fastest config for that shape.
Each step is captured as one CUDA graph and timed with do_bench (median, L2
flushed); outputs are compared with an fp32 torch reference on fresh randn
inputs. Table and JSON (DIR/decode_attention_bench.json).
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

GEMM_SPEC = os.path.join(common.ROOT, "kernels", "gemm", "gemm_mma.yaml")
GEMM_SRC = os.path.join(common.ROOT, "kernels", "gemm", "gemm_mma.cu")
SM_SPEC = os.path.join(common.ROOT, "kernels", "decode_attention", "softmax.yaml")
SM_SRC = os.path.join(common.ROOT, "kernels", "decode_attention", "softmax.cu")

HEADS, D, L, HID = 4, 128, 2048, 4096
SCALE = 1.0 / math.sqrt(D)
MATMULS = [  # name, sizes as the gemm spec names them
    ("qk", {"M": HEADS, "N": L, "K": D, "B_NK": 1}),
    ("av", {"M": HEADS, "N": D, "K": L, "B_NK": 0}),
    ("proj", {"M": 1, "N": HID, "K": HID, "B_NK": 0}),
]
# gemm_mma.cu's header, used when the spec cannot be read.
GEMM_LAUNCH_FALLBACK = {"grid": ["ceil_div(M, BM) * ceil_div(N, BN)", "SPLIT_K"],
                        "block": ["(BM // WM) * (BN // WN) * 32"],
                        "shared_memory": "STAGES * (BM * BK + BK * BN) * 2"}


def large_m_spec(out_dir):
    """gemm_mma.yaml with BM in {64, 128} and its `BM <= max(16, M)` pruning
    dropped (that rule keeps every BM >= 32 out of the M = 1 and 4 tunes), so
    that the large-M configuration is tuned too. Written into out_dir with
    the kernel source as an absolute path; edited as text, so PyYAML is not
    needed."""
    import re
    with open(GEMM_SPEC) as f:
        text = f.read()
    text, n_src = re.subn(r"^(\s+source:\s*)gemm_mma\.cu\s*$", lambda m: m.group(1) + GEMM_SRC, text, count=1,
                          flags=re.M)
    text, n_bm = re.subn(r"^(\s+)BM:\s*\[[^\]]*\].*$", lambda m: m.group(1) + "BM: [64, 128]", text, count=1, flags=re.M)
    text = re.sub(r"BM\s*<=\s*max\(16,\s*M\)\s*and\s*", "", text)
    text = re.sub(r"^name:.*$", "name: gemm_mma_large_m", text, count=1, flags=re.M)
    if n_src != 1 or n_bm != 1:
        common.fail(f"cannot derive the large-M spec from {GEMM_SPEC} (source line found: {n_src}, BM line: {n_bm})")
    if re.search(r"BM\s*<=\s*max\(16", text):
        common.fail(f"{GEMM_SPEC}: a `BM <= max(16, ...)` rule is left in the large-M spec; edit large_m_spec()")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "gemm_mma_large_m.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def cfg_str(c):
    return ",".join(f"{k}={v}" for k, v in c.items())


class Gemm:
    """One gemm_mma launch with its own config, buffers and counters."""

    def __init__(self, launch, cfg, size, A, B, C, cache_dir):
        import numpy as np
        import torch
        if "PATH" in cfg:  # a config tuned on another shape takes this shape's load path
            cfg = dict(cfg, PATH=common.gemm_mma_path(size))
        self.cfg, self.size = cfg, size
        self.fn, self.how, self.attrs = common.compile_kernel(GEMM_SRC, "gemm_mma", cfg, cache_dir)
        names = dict(size, **cfg)
        self.grid, self.block, self.smem = common.launch_dims(launch, names)
        common.set_smem(self.fn, self.smem)
        M, N, K = size["M"], size["N"], size["K"]
        split_k = int(cfg.get("SPLIT_K", 1))
        tiles = -(-M // int(cfg["BM"])) * -(-N // int(cfg["BN"]))
        # Kept on self: the graph replays these pointers.
        self.ws = torch.zeros(max(1, split_k * M * N), device="cuda", dtype=torch.float32)
        self.cnt = torch.zeros(max(1, tiles), device="cuda", dtype=torch.int32)
        self.tensors = (A, B, C)
        self.args = (common.to_cupy(A), common.to_cupy(B), common.to_cupy(C), common.to_cupy(self.ws),
                     common.to_cupy(self.cnt), np.int32(M), np.int32(N), np.int32(K), np.int32(size["B_NK"]))

    def __call__(self):
        self.fn(self.grid, self.block, self.args, shared_mem=self.smem)


class Softmax:
    def __init__(self, cfg, x, y, cache_dir):
        import numpy as np
        self.fn, self.how, self.attrs = common.compile_kernel(SM_SRC, "softmax_rows", cfg, cache_dir)
        self.grid, self.block = (x.shape[0],), (int(cfg["THREADS"]),)
        self.tensors = (x, y)
        self.args = (common.to_cupy(x), common.to_cupy(y), np.int32(x.shape[0]), np.int32(x.shape[1]),
                     np.float32(SCALE))

    def __call__(self):
        self.fn(self.grid, self.block, self.args)


class Step:
    """The four launches of one decode step for one choice of matmul configs."""

    def __init__(self, launch, cfgs, sm_cfg, inp, cache_dir):
        import torch
        self.cfgs = cfgs
        dev = dict(device="cuda", dtype=torch.bfloat16)
        nan = float("nan")
        self.scores = torch.full((HEADS, L), nan, **dev)
        self.p = torch.full((HEADS, L), nan, **dev)
        self.attn = torch.full((HEADS, D), nan, **dev)
        self.y = torch.full((1, HID), nan, **dev)
        sz = dict(MATMULS)
        self.launches = [
            Gemm(launch, cfgs["qk"], sz["qk"], inp["q"], inp["k"], self.scores, cache_dir),
            Softmax(sm_cfg, self.scores, self.p, cache_dir),
            Gemm(launch, cfgs["av"], sz["av"], self.p, inp["v"], self.attn, cache_dir),
            Gemm(launch, cfgs["proj"], sz["proj"], inp["x"], inp["w"], self.y, cache_dir),
        ]
        self.graph = None

    def run(self):
        for f in self.launches:
            f()

    def capture(self):
        """One CUDA graph of the four launches; None (eager timing) if capture fails."""
        import torch
        try:
            g = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                with common.torch_stream():
                    self.run()  # warm-up outside the capture
            torch.cuda.current_stream().wait_stream(side)
            with torch.cuda.graph(g, capture_error_mode="thread_local"):
                with common.torch_stream():  # the capture stream
                    self.run()
            torch.cuda.synchronize()
            self.graph = g
        except Exception as e:  # noqa: BLE001
            common.log(f"  graph capture failed ({str(e).splitlines()[0][:200]}); timing eager launches")
            torch.cuda.synchronize()
            self.graph = None
        return self.graph

    def replay(self):
        if self.graph is not None:
            self.graph.replay()
        else:
            with common.torch_stream():
                self.run()

    def time_us(self, rep=200):
        return common.do_bench_us(self.replay, rep=rep)

    def check(self, ref):
        """Max abs diffs against the fp32 reference, and each relative to the
        reference's largest magnitude."""
        import torch
        torch.cuda.synchronize()
        out = {}
        for name, got in (("scores", self.scores), ("p", self.p), ("attn", self.attn), ("y", self.y)):
            r = ref[name]
            d = (got.float() - r).abs().max().item()
            out[name] = {"max_abs_diff": d, "rel_to_max": d / max(r.abs().max().item(), 1e-30)}
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tunekit", required=True, help="the tunekit binary")
    ap.add_argument("--out", required=True, help="folder for tunekit's results and the JSON summary")
    ap.add_argument("--fresh", action="store_true", help="pass --fresh to tunekit (default: resume)")
    ap.add_argument("--tune-arg", action="append", default=[],
                    help="extra argument for the gemm tunes (repeat), e.g. --tune-arg=--max-evals=200")
    ap.add_argument("--uniform-candidates", type=int, default=4,
                    help="the fastest configs of each shape's tunes timed as whole uniform steps")
    ap.add_argument("--large-m-evals", type=int, default=60,
                    help="random configs per shape in the large-M (BM 64/128) tunes (their spaces hold 575-2644)")
    ap.add_argument("--no-tune", action="store_true", help="reuse the JSON exports of an earlier run in DIR/tunekit")
    a = ap.parse_args()
    if not os.path.exists(GEMM_SPEC):
        common.fail(f"{GEMM_SPEC} does not exist yet")
    os.makedirs(a.out, exist_ok=True)
    tk_dir = os.path.join(a.out, "tunekit")
    cache_dir = os.path.join(a.out, "cubins")

    # ---- tune ----------------------------------------------------------------
    import json
    reports = {}
    for name, size in MATMULS:
        path = os.path.join(tk_dir, f"gemm_{name}.json")
        if a.no_tune:
            with open(path) as f:
                reports[name] = json.load(f)
        else:
            common.log(f"tuning gemm_mma for {name} {size}")
            reports[name] = common.tunekit_tune(a.tunekit, GEMM_SPEC, tk_dir, path, sizes=size, extra=a.tune_arg,
                                                fresh=a.fresh)
    # gemm_mma.yaml prunes BM >= 32 for M <= 16, so the large-M tiles get their
    # own (random, --large-m-evals per shape) tune of a derived spec.
    large = {}
    for name, size in MATMULS:
        path = os.path.join(tk_dir, f"gemm_large_m_{name}.json")
        if a.no_tune:
            with open(path) as f:
                large[name] = json.load(f)
        else:
            common.log(f"tuning gemm_mma with BM in (64, 128) for {name} {size}")
            large[name] = common.tunekit_tune(
                a.tunekit, large_m_spec(tk_dir), tk_dir, path, sizes=size, fresh=a.fresh,
                extra=["--strategy", "random", "--max-evals", str(a.large_m_evals)] + a.tune_arg)
    sm_path = os.path.join(tk_dir, "softmax.json")
    if a.no_tune:
        with open(sm_path) as f:
            sm_rep = json.load(f)
    else:
        common.log("tuning softmax")
        sm_rep = common.tunekit_tune(a.tunekit, SM_SPEC, tk_dir, sm_path, fresh=a.fresh)
    sm_best = common.best_trial(sm_rep["sizes"][0])
    if sm_best is None:
        common.fail("softmax: no config ran correctly in tunekit")
    sm_cfg = sm_best["config"]

    # The size report of each matmul (one size per tune).
    def size_report(rep, name, size):
        srs = [s for s in rep["sizes"] if all(s["size"].get(k) == v for k, v in size.items())]
        if not srs:
            common.fail(f"{name}: size {size} is not in the tunekit export ({[s['size'] for s in rep['sizes']]})")
        return srs[0]

    per, per_large = {}, {}
    for name, size in MATMULS:
        per[name] = size_report(reports[name], name, size)
        per_large[name] = size_report(large[name], name, size)
        ok = common.ok_trials(per[name])
        common.log(f"{name}: {len(ok)} of {len(per[name]['trials'])} configs ok; best "
                   f"{ok[0]['time_us'] if ok else float('nan'):.2f} us")
        if not ok:
            common.fail(f"{name}: no config ran correctly")

    # ---- choose the configurations ---------------------------------------------
    names = [n for n, _ in MATMULS]
    times = {n: {common.config_key(t["config"]): t["time_us"] for t in common.ok_trials(per[n])} for n in names}
    cfg_of = {common.config_key(t["config"]): t["config"] for n in names for t in common.ok_trials(per[n])}
    large_times = {n: {common.config_key(t["config"]): t["time_us"] for t in common.ok_trials(per_large[n])}
                   for n in names}
    for n in names:
        for t in common.ok_trials(per_large[n]):
            cfg_of.setdefault(common.config_key(t["config"]), t["config"])
    # The uniform config: tunekit prunes each shape's space by its size, so
    # few configs are measured on all three. gemm_mma runs any config on any
    # shape, so the candidates are the union of each shape's fastest
    # (regular and large-M tunes), each then timed here as the whole step
    # with that one config for all three matmuls.
    candidates = []
    for n in names:
        for table in (times[n], large_times[n]):
            for c in sorted(table, key=table.get)[: a.uniform_candidates]:
                if c not in candidates:
                    candidates.append(c)
    common.log(f"{len(candidates)} uniform candidates (the {a.uniform_candidates} fastest of each shape's tunes):")
    for c in candidates:
        common.log(f"  {cfg_str(cfg_of[c])}: " + ", ".join(
            f"{n} {times[n].get(c, large_times[n].get(c, float('nan'))):.2f}" for n in names))

    def best_where(n, pred):
        t = common.best_trial(per[n], pred)
        return t["config"] if t else None

    bm = lambda c: int(c["BM"])  # noqa: E731
    def best_large(n):
        t = common.best_trial(per_large[n], lambda c: bm(c) >= 64)
        return t["config"] if t else best_where(n, lambda c: bm(c) >= 64)

    choices = {
        "large-M": {n: best_large(n) for n in names},
        "small-M": {n: best_where(n, lambda c: bm(c) == 16) for n in names},
        "tuned": {n: best_where(n, None) for n in names},
    }

    # ---- build and run ---------------------------------------------------------
    import torch
    try:
        launch = common.spec_launch(GEMM_SPEC)
    except Exception as e:  # noqa: BLE001
        common.log(f"cannot read the launch from {GEMM_SPEC} ({e}); using gemm_mma.cu's header formula")
        launch = GEMM_LAUNCH_FALLBACK
    common.log(f"gemm_mma launch: grid {launch['grid']}, block {launch['block']}, smem {launch['shared_memory']}")

    torch.manual_seed(0)
    dev = dict(device="cuda", dtype=torch.bfloat16)
    inp = {"q": torch.randn(HEADS, D, **dev), "k": torch.randn(L, D, **dev), "v": torch.randn(L, D, **dev),
           "x": torch.randn(1, HID, **dev), "w": (torch.randn(HID, HID, device="cuda") / HID ** 0.5).to(torch.bfloat16)}
    f32 = {k: v.float() for k, v in inp.items()}
    ref = {"scores": f32["q"] @ f32["k"].T}
    ref["p"] = torch.softmax(ref["scores"] * SCALE, dim=-1)
    ref["attn"] = ref["p"] @ f32["v"]
    ref["y"] = f32["x"] @ f32["w"]

    results = []
    with common.torch_stream():
        def evaluate(label, cfgs):
            if any(c is None for c in cfgs.values()):
                missing = [n for n, c in cfgs.items() if c is None]
                common.log(f"{label}: no ok config for {missing}; skipped")
                return None
            step = Step(launch, cfgs, sm_cfg, inp, cache_dir)
            step.run()
            diffs = step.check(ref)
            step.run()  # again: split-K counters must have been re-armed by the first run
            diffs2 = step.check(ref)
            for k in diffs:
                for kk in diffs[k]:
                    diffs[k][kk] = max(diffs[k][kk], diffs2[k][kk])
            step.capture()
            t = step.time_us()
            # The launches one by one (eager, so each includes its launch gap).
            parts = [common.do_bench_us(f, rep=50) for f in step.launches]
            return {"label": label, "configs": cfgs, "step_us": t, "graph": step.graph is not None,
                    "launch_us": dict(zip(["qk", "softmax", "av", "proj"], parts)),
                    "tunekit_us": {n: times[n].get(common.config_key(cfgs[n]), large_times[n].get(
                        common.config_key(cfgs[n]))) for n in names},
                    "diffs": diffs, "compiled_with": sorted({f.how for f in step.launches}),
                    "registers": {n: f.attrs.get("num_regs") for n, f in zip(["qk", "softmax", "av", "proj"],
                                                                             step.launches)}}

        uniform_runs = []
        for c in candidates:
            cfg = cfg_of[c]
            r = evaluate("uniform candidate", {n: cfg for n in names})
            common.log(f"  uniform candidate {cfg_str(cfg)}: step {r['step_us']:.2f} us")
            uniform_runs.append(r)
        correct = [r for r in uniform_runs if all(r["diffs"][k]["rel_to_max"] < 2e-2 for k in r["diffs"])]
        if not correct:
            common.fail("no uniform candidate computed the step correctly")
        uni = min(correct, key=lambda r: r["step_us"])
        uni["label"] = "uniform"
        results.append(uni)
        for label in ("large-M", "small-M", "tuned"):
            r = evaluate(label, choices[label])
            if r:
                results.append(r)
                common.log(f"{label}: step {r['step_us']:.2f} us")

    base = uni["step_us"]
    summary = {"softmax_config": sm_cfg, "softmax_tunekit_us": sm_best["time_us"],
               "uniform_candidates": uniform_runs, "rows": results,
               "uniform_choice": "the smallest measured step over the union of each shape's fastest configs "
                                 "(regular and large-M tunes), one config for all three matmuls"}
    common.write_json(os.path.join(a.out, "decode_attention_bench.json"), summary)

    print()
    print(f"softmax: THREADS={sm_cfg.get('THREADS')} ({sm_best['time_us']:.2f} us in tunekit)")
    print("| configuration | qk config | av config | proj config | step us (graph) | speedup vs uniform "
          "| change | qk / softmax / av / proj us (eager) | max abs diff attn (rel) | max abs diff y (rel) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        c = r["configs"]
        lu = r["launch_us"]
        print(f"| {r['label']} | {cfg_str(c['qk'])} | {cfg_str(c['av'])} | {cfg_str(c['proj'])} | "
              f"{r['step_us']:.2f}{'' if r['graph'] else ' (eager)'} | {base / r['step_us']:.2f}x | "
              f"{100 * (r['step_us'] - base) / base:+.1f}% | "
              f"{lu['qk']:.2f} / {lu['softmax']:.2f} / {lu['av']:.2f} / {lu['proj']:.2f} | "
              f"{r['diffs']['attn']['max_abs_diff']:.3g} ({r['diffs']['attn']['rel_to_max']:.2g}) | "
              f"{r['diffs']['y']['max_abs_diff']:.3g} ({r['diffs']['y']['rel_to_max']:.2g}) |")
    tuned = [r for r in results if r["label"] == "tuned"]
    if tuned:
        print(f"tuned per-matmul vs best uniform: {base / tuned[0]['step_us']:.2f}x (goal >= 1.3x); "
              "PyPTO on Ascend: 257.12 -> 275.08 -> 237.12 us (-7.8%)")
    bad = [r["label"] for r in results if any(not (r["diffs"][k]["rel_to_max"] < 2e-2) for k in r["diffs"])]
    if bad:
        print("CHECK FAILED (an output differs from fp32 by more than 2% of its largest value):", bad)
        sys.exit(1)


if __name__ == "__main__":
    main()
