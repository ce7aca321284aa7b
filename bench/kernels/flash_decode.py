#!/usr/bin/env python3
"""Split-KV flash decoding (issue #5, part 2): tunes
kernels/flash_decode/flash_decode.yaml with tunekit (its four shapes), then
re-times the best config of each shape through CuPy, next to torch SDPA
(enable_gqa=True) on the same tensors, and checks both against an fp32 torch
reference. Both are timed by common.timed_us (do_bench's procedure: median,
an event pair per sample) twice: after do_bench's write flush of the L2, and
after a read flush, which leaves no dirty lines for the kernel to write back
(tunekit's `cache: cold-read`). An ideal streaming read of the same bytes
under each flush (common.stream_read_us) is the floor.

  python3 bench/kernels/flash_decode.py --tunekit build/bin/tunekit --out /tmp/fd

Prints, per flush: shape, ours us, SDPA us, SDPA/ours, fraction of copy
bandwidth (K+V+q+out bytes / time / 4.25 TB/s) for both and for the ideal
read; max abs diff for both; writes DIR/flash_decode_bench.json.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SPEC = os.path.join(common.ROOT, "kernels", "flash_decode", "flash_decode.yaml")
D = 128


def reference(q, k, v):
    """fp32 attention of one query token per head, GQA without expanding K/V."""
    import torch
    B, Hq, _ = q.shape
    Hkv = k.shape[1]
    G = Hq // Hkv
    qf = q.float().view(B, Hkv, G, D)
    kf, vf = k.float(), v.float()
    s = torch.einsum("bkgd,bkld->bkgl", qf, kf) * (1.0 / D ** 0.5)
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bkgl,bkld->bkgd", p, vf).reshape(B, Hq, D)


def ragged_check(a):
    """Random configs on sizes the tuned shapes never exercise, each verified
    by tunekit against the kernel's fp32 reference on its seeded inputs; then
    the same for cluster combines of 8 to 16 blocks (12 and 16 are
    non-portable cluster sizes), which the first sweep's sizes rarely draw."""
    import collections
    sweeps = [("ragged", ["L=[77,1000,3001]"], []),
              ("ragged-cluster", ["L=[1000,3001]"], ["--where", "CLUSTER == 1 and SPLIT >= 8"])]
    for name, lengths, where in sweeps:
        out = os.path.join(a.out, name)
        axes = ["B=[1,3]", "Hkv=[1,2]", "Hq=[2,16]"] + lengths
        rep = common.tunekit_tune(a.tunekit, SPEC, out, os.path.join(out, "flash_decode.json"),
                                  extra=["--strategy", "random", "--max-evals", "4"] + where
                                  + sum((["-a", x] for x in axes), []))
        trials = [t for s in rep["sizes"] for t in s["trials"]]
        statuses = collections.Counter(t["status"] for t in trials)
        clustered = collections.Counter((t["config"]["SPLIT"], t["status"]) for t in trials
                                        if t["config"].get("CLUSTER"))
        worst = max((t["max_abs_diff"] for t in trials if t["status"] == "ok"), default=None)
        print(f"{name} sizes: {len(rep['sizes'])} sizes, trials {dict(sorted(statuses.items()))} (CLUSTER=1 by SPLIT: "
              f"{dict(sorted(clustered.items()))}), worst max|diff| of ok trials {worst}")


def launch(cfg, q, k, v, out, cubin_dir):
    """One config of flash_decode.cu bound to the torch tensors q [B, Hq, D],
    k and v [B, Hkv, L, D] and out, with its own zeroed workspace and counters
    (the kernel re-arms them), launched as `tunekit resolve` works the spec out
    (CLUSTER=1 configs in their cluster)."""
    B, Hq, _ = q.shape
    Hkv, L = k.shape[1], k.shape[2]
    return common.SpecLaunch(SPEC, cfg, dict(B=B, Hq=Hq, Hkv=Hkv, L=L), dict(q=q, k=k, v=v, out=out), cubin_dir)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tunekit", required=True, help="the tunekit binary")
    ap.add_argument("--out", required=True, help="folder for tunekit's results and the JSON summary")
    ap.add_argument("--fresh", action="store_true", help="pass --fresh to tunekit (default: resume)")
    ap.add_argument("--tune-arg", action="append", default=[],
                    help="extra argument for `tunekit tune` (repeat), e.g. --tune-arg=--max-evals=40")
    ap.add_argument("--no-tune", action="store_true", help="reuse DIR/tunekit/flash_decode.json from an earlier run")
    ap.add_argument("--check-only", action="store_true",
                    help="only verify random configs on ragged sizes (L not a multiple of any chunk, GQA groups "
                         "of 1 to 8) against the fp32 reference, then stop")
    a = ap.parse_args()
    common.require_gpu_torch()
    common.use_tunekit(a.tunekit)
    os.makedirs(a.out, exist_ok=True)
    if a.check_only:
        ragged_check(a)
        return
    tk_dir = os.path.join(a.out, "tunekit")
    tk_json = os.path.join(tk_dir, "flash_decode.json")
    if a.no_tune:
        import json
        with open(tk_json) as f:
            rep = json.load(f)
    else:
        rep = common.tunekit_tune(a.tunekit, SPEC, tk_dir, tk_json, extra=a.tune_arg, fresh=a.fresh)

    import cupy as cp
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    rows = []
    with common.torch_stream():
        for s in rep["sizes"]:
            size = s["size"]
            B, Hq, Hkv, L = size["B"], size["Hq"], size["Hkv"], size["L"]
            best = common.best_trial(s)
            if best is None:
                common.log(f"shape {size}: no config ran correctly in tunekit; skipped")
                rows.append({"size": size, "error": "no valid config"})
                continue
            cfg = best["config"]

            # Fresh inputs (not tunekit's uniform ones): randn, as a model's would be.
            q = torch.randn(B, Hq, D, device="cuda", dtype=torch.bfloat16)
            k = torch.randn(B, Hkv, L, D, device="cuda", dtype=torch.bfloat16)
            v = torch.randn(B, Hkv, L, D, device="cuda", dtype=torch.bfloat16)
            out = torch.full((B, Hq, D), float("nan"), device="cuda", dtype=torch.bfloat16)
            ours = launch(cfg, q, k, v, out, os.path.join(a.out, "cubins"))
            ours()
            torch.cuda.synchronize()
            ref = reference(q, k, v)
            diff = (out.float() - ref).abs().max().item()
            ours()  # a second launch: the counters must have been reset by the first
            torch.cuda.synchronize()
            diff2 = (out.float() - ref).abs().max().item()
            counters_zero = bool((ours.scratch["counters"] == 0).all().item())

            q4 = q.view(B, Hq, 1, D)

            def sdpa():
                return F.scaled_dot_product_attention(q4, k, v, enable_gqa=True)

            sd = sdpa()
            torch.cuda.synchronize()
            sdpa_diff = (sd.view(B, Hq, D).float() - ref).abs().max().item()
            del ref

            nbytes = 2 * B * Hkv * L * D * 2 + 2 * B * Hq * D * 2
            frac = lambda us: nbytes / (us * 1e-6) / common.COPY_BW  # noqa: E731
            row = {"size": size, "config": cfg, "compiled_with": ours.how, "registers": ours.attrs.get("num_regs"),
                   "grid": ours.grid, "block": ours.block, "cluster": ours.cluster, "smem": ours.smem,
                   "tunekit_us": best["time_us"],
                   "max_abs_diff": max(diff, diff2), "sdpa_max_abs_diff": sdpa_diff,
                   "counters_reset": counters_zero, "bytes": nbytes}
            for fl in common.FLUSHES:
                t_ours, t_sdpa = common.timed_us(ours, fl), common.timed_us(sdpa, fl)
                t_read, _ = common.stream_read_us(nbytes, fl)
                row[fl] = {"ours_us": t_ours, "sdpa_us": t_sdpa, "sdpa_over_ours": t_sdpa / t_ours,
                           "ours_bw_frac": frac(t_ours), "sdpa_bw_frac": frac(t_sdpa), "read_us": t_read,
                           "read_bw_frac": frac(t_read)}
                common.log(f"B={B} Hq={Hq} Hkv={Hkv} L={L}, {fl} flush: {cfg} -> ours {t_ours:.2f} us (tunekit "
                           f"{best['time_us']:.2f}), SDPA {t_sdpa:.2f} us, ideal read {t_read:.2f} us")
            rows.append(row)
            common.log(f"  diff {max(diff, diff2):.3g}, counters reset {counters_zero}")
            del q, k, v, out, ours
            torch.cuda.empty_cache()
            cp.get_default_memory_pool().free_all_blocks()

    common.write_json(os.path.join(a.out, "flash_decode_bench.json"), rows)
    print()
    print("| B | Hq | Hkv | L | best config | flush | ours us | SDPA us | SDPA/ours | ours BW frac | SDPA BW frac "
          "| ideal read us | ideal read BW frac | max abs diff ours | max abs diff SDPA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        z = r["size"]
        if "error" in r:
            print(f"| {z['B']} | {z['Hq']} | {z['Hkv']} | {z['L']} | {r['error']} | | | | | | | | | | |")
            continue
        c = r["config"]
        cs = " ".join(f"{k}={c[k]}" for k in c)
        for fl in common.FLUSHES:
            f = r[fl]
            print(f"| {z['B']} | {z['Hq']} | {z['Hkv']} | {z['L']} | {cs} | {fl} | {f['ours_us']:.2f} | "
                  f"{f['sdpa_us']:.2f} | {f['sdpa_over_ours']:.2f}x | {f['ours_bw_frac']:.3f} | {f['sdpa_bw_frac']:.3f} | "
                  f"{f['read_us']:.2f} | {f['read_bw_frac']:.3f} | {r['max_abs_diff']:.3g} | {r['sdpa_max_abs_diff']:.3g} |")
    print("goals: BW frac >= 0.95 on the three large shapes; B=1 at least 2x SDPA")
    bad = [r for r in rows if "error" not in r and (not r["counters_reset"] or not r["max_abs_diff"] < 0.02)]
    if bad:
        print("CHECK FAILED for:", [r["size"] for r in bad])
        sys.exit(1)


if __name__ == "__main__":
    main()
