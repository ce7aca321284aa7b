"""Fused mixture-of-experts for Triton: routing, alignment, grouped GEMM.

A MoE layer sends each token to `topk` of `E` experts. Done naively that is a
gather, E small matmuls and a scatter. Here, as in the serving engines:
1. routing: softmax over the gate logits, the top-k experts of each token and
   their weights (renormalised to sum to one);
2. alignment: the (token, k) pairs sorted by expert, each expert's run padded
   to a multiple of BLOCK_SIZE_M, so that every M-tile of the GEMM belongs to
   one expert (the padding slots hold an index past the last pair and are
   masked);
3. the grouped GEMM (`fused_moe_kernel`): one program per (M-tile, N-tile)
   of the sorted layout; it gathers its rows of the activations, multiplies
   by its expert's weights and scatters the rows back to (token, k) order,
   optionally scaled by the routing weight.
The whole layer (`fused_moe`) is two such GEMMs around a SiLU-and-multiply:
gate_up = x @ w1[e]^T (N = 2 * intermediate), h = silu(gate) * up,
y = sum_k weight_k * (h @ w2[e]^T).

The alignment is written with torch operations that never read a value back
on the host, so the layer can be captured in a CUDA graph.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


def moe_routing(gating: torch.Tensor, topk: int, renormalize: bool = True):
    """(weights [M, topk] f32, expert ids [M, topk] i32) of each token."""
    probs = torch.softmax(gating.float(), dim=-1)
    weights, ids = torch.topk(probs, topk, dim=-1)
    if renormalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, ids.to(torch.int32)


def max_padded_tokens(num_pairs: int, num_experts: int, block_m: int) -> int:
    """The length of the sorted layout: every expert's run padded to block_m.
    With fewer pairs than experts, at most num_pairs experts are used."""
    return min(num_pairs * block_m, num_pairs + num_experts * (block_m - 1))


def moe_align_block_size(topk_ids: torch.Tensor, block_m: int, num_experts: int):
    """(sorted_token_ids [EM] i32, expert_ids [EM / block_m] i32, num_tokens_post_padded [1] i32).

    sorted_token_ids lists the flat pair indices (token * topk + k) grouped by
    expert, each group padded to a multiple of block_m with the value
    num_pairs; expert_ids gives the expert of each block_m tile (tiles past
    the padded total repeat the last expert and are skipped by the kernel,
    which reads num_tokens_post_padded).
    """
    flat = topk_ids.flatten().to(torch.int64)
    num_pairs = flat.numel()
    em = max_padded_tokens(num_pairs, num_experts, block_m)
    device = flat.device
    counts = torch.zeros(num_experts, dtype=torch.int64, device=device)
    counts.scatter_add_(0, flat, torch.ones_like(flat))
    padded = (counts + block_m - 1) // block_m * block_m
    padded_end = torch.cumsum(padded, 0)
    padded_start = padded_end - padded
    order = torch.argsort(flat, stable=True)  # pair indices grouped by expert
    sorted_experts = flat[order]
    count_start = torch.cumsum(counts, 0) - counts
    rank = torch.arange(num_pairs, device=device) - count_start[sorted_experts]
    dest = padded_start[sorted_experts] + rank
    sorted_ids = torch.full((em,), num_pairs, dtype=torch.int32, device=device)
    sorted_ids.scatter_(0, dest, order.to(torch.int32))
    tile_starts = torch.arange(0, em, block_m, device=device)
    expert_ids = torch.searchsorted(padded_end, tile_starts, right=True).clamp_(max=num_experts - 1)
    total = padded_end[-1:].to(torch.int32)
    return sorted_ids, expert_ids.to(torch.int32), total


# EM and num_valid_tokens change with the batch size: left unspecialised, one
# binary serves every batch size of a shape.
@triton.jit(do_not_specialize=["EM", "num_valid_tokens"])
def fused_moe_kernel(
    a,  # [M, K] activations
    b,  # [E, N, K] expert weights
    c,  # [M * top_k, N] output, in (token, k) order
    topk_weights,  # [M * top_k] routing weights
    sorted_token_ids,  # [EM] pair indices grouped by expert, padded with num_valid_tokens
    expert_ids,  # [EM / BLOCK_SIZE_M] the expert of each M-tile
    num_tokens_post_padded,  # [1] the padded total
    N,
    K,
    EM,
    num_valid_tokens,
    top_k,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr = False,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(EM, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    # Tiles in groups of GROUP_SIZE_M rows, column-major inside a group, so
    # that programs running together share both operands in the L2.
    per_group = GROUP_SIZE_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_SIZE_M
    rows_here = min(tiles_m - first_m, GROUP_SIZE_M)
    tile_m = first_m + (pid % per_group) % rows_here
    tile_n = (pid % per_group) // rows_here

    if tile_m * BLOCK_SIZE_M >= tl.load(num_tokens_post_padded):
        return
    rows = tile_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    pair = tl.load(sorted_token_ids + rows)
    real = pair < num_valid_tokens
    token = (pair // top_k).to(tl.int64)
    expert = tl.load(expert_ids + tile_m).to(tl.int64)

    cols = tile_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    cols_in = cols < N
    # Columns past N read column 0 again (never stored), so the loads need
    # no column mask.
    cols_safe = tl.where(cols_in, cols, 0).to(tl.int64)
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a + token[:, None] * K + ks[None, :]
    b_ptrs = b + expert * N * K + cols_safe[None, :] * K + ks[:, None]

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        k_in = ks < K - k0
        x = tl.load(a_ptrs, mask=real[:, None] & k_in[None, :], other=0.0)
        w = tl.load(b_ptrs, mask=k_in[:, None], other=0.0)
        acc = tl.dot(x, w, acc)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K

    if MUL_ROUTED_WEIGHT:
        scale = tl.load(topk_weights + pair, mask=real, other=0.0)
        acc = acc * scale[:, None]
    c_ptrs = c + pair.to(tl.int64)[:, None] * N + cols[None, :]
    tl.store(c_ptrs, acc.to(c.dtype.element_ty), mask=real[:, None] & cols_in[None, :])


def grid_size(em: int, n: int, block_m: int, block_n: int) -> int:
    return triton.cdiv(em, block_m) * triton.cdiv(n, block_n)


def invoke_grouped_gemm(a, b, c, topk_weights, sorted_ids, expert_ids, total, top_k, config, mul_routed_weight):
    """c[pair] = a[pair // top_k] @ b[expert(pair)]^T (times the routing weight)."""
    n, k = b.shape[1], b.shape[2]
    em = sorted_ids.numel()
    meta = {name: config[name] for name in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}
    options = {name: config[name] for name in ("num_warps", "num_stages") if name in config}
    grid = (grid_size(em, n, meta["BLOCK_SIZE_M"], meta["BLOCK_SIZE_N"]),)
    fused_moe_kernel[grid](a, b, c, topk_weights, sorted_ids, expert_ids, total, n, k, em,
                           topk_weights.numel(), top_k, MUL_ROUTED_WEIGHT=mul_routed_weight, **meta, **options)


def fused_moe(x, w1, w2, gating, topk, config, config_down=None, renormalize=True):
    """The whole layer: y [M, H] for x [M, H], w1 [E, 2I, H], w2 [E, H, I].
    `config` holds BLOCK_SIZE_M/N/K, GROUP_SIZE_M, num_warps, num_stages (as
    vLLM's config files do); config_down, if given, is the second GEMM's."""
    m, hidden = x.shape
    num_experts, two_i, _ = w1.shape
    weights, ids = moe_routing(gating, topk, renormalize)
    config_down = config_down or config
    flat_weights = weights.flatten().contiguous()
    sorted_ids, expert_ids, total = moe_align_block_size(ids, config["BLOCK_SIZE_M"], num_experts)
    gate_up = torch.empty((m * topk, two_i), dtype=x.dtype, device=x.device)
    invoke_grouped_gemm(x, w1, gate_up, flat_weights, sorted_ids, expert_ids, total, topk, config, False)
    h = torch.nn.functional.silu(gate_up[:, : two_i // 2]) * gate_up[:, two_i // 2:]
    if config_down["BLOCK_SIZE_M"] != config["BLOCK_SIZE_M"]:
        sorted_ids, expert_ids, total = moe_align_block_size(ids, config_down["BLOCK_SIZE_M"], num_experts)
    down = torch.empty((m * topk, hidden), dtype=x.dtype, device=x.device)
    # The second GEMM's rows are the pairs themselves: top_k = 1.
    invoke_grouped_gemm(h, w2, down, flat_weights, sorted_ids, expert_ids, total, 1, config_down, True)
    return down.view(m, topk, hidden).sum(dim=1)


def torch_moe(x, w1, w2, gating, topk, renormalize=True):
    """The same layer with plain torch: routing, then one matmul pair per expert."""
    weights, ids = moe_routing(gating, topk, renormalize)
    m, hidden = x.shape
    out = torch.zeros((m, hidden), dtype=torch.float32, device=x.device)
    flat_ids = ids.flatten()
    flat_tokens = torch.arange(m, device=x.device).repeat_interleave(topk)
    flat_weights = weights.flatten()
    two_i = w1.shape[1]
    for e in range(w1.shape[0]):
        sel = (flat_ids == e).nonzero().flatten()
        if sel.numel() == 0:
            continue
        tok = flat_tokens[sel]
        gu = x[tok] @ w1[e].T
        h = torch.nn.functional.silu(gu[:, : two_i // 2]) * gu[:, two_i // 2:]
        out.index_add_(0, tok, (h @ w2[e].T).float() * flat_weights[sel, None])
    return out.to(x.dtype)


# ---- what tunekit's spec (fused_moe.yaml) calls -----------------------------

def moe_setup(args, meta):
    """The kernel's routing-derived arguments for one BLOCK_SIZE_M."""
    gating = args["gating"]
    top_k = int(args["top_k"])
    weights, ids = moe_routing(gating, top_k)
    sorted_ids, expert_ids, total = moe_align_block_size(ids, int(meta["BLOCK_SIZE_M"]), gating.shape[1])
    return {"topk_weights": weights.flatten().contiguous(), "sorted_token_ids": sorted_ids,
            "expert_ids": expert_ids, "num_tokens_post_padded": total}


def grouped_gemm_reference(a, b, gating, top_k):
    """c [M * top_k, N] of the grouped GEMM, one matmul per expert (float32)."""
    _, ids = moe_routing(gating, int(top_k))
    flat = ids.flatten()
    tokens = torch.arange(a.shape[0], device=a.device).repeat_interleave(int(top_k))
    c = torch.zeros((flat.numel(), b.shape[1]), dtype=torch.float32, device=a.device)
    for e in torch.unique(flat).tolist():
        sel = (flat == e).nonzero().flatten()
        c[sel] = a[tokens[sel]].float() @ b[e].float().T
    return c
