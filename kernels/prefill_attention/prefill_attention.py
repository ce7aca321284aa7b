"""Prefix-prefill (context) attention for Triton, FlashAttention style.

A prefill step computes attention for Lq new query tokens per sequence
against Lk = P + Lq keys: a prefix of P tokens already in the KV cache (a
chunked prefill's earlier chunks, a shared system prompt) followed by the new
tokens themselves. With CAUSAL, query i (absolute position P + i) sees keys
0 .. P + i. Heads are grouped (GQA): query head h reads KV head h // (Hq / Hkv).

Layouts: q and o are [B, Hq, Lq, D]; a contiguous cache is [B, Hkv, Lk, D];
a paged cache (PAGED) is [pages, Hkv, PAGE_SIZE, D] with block_table [B,
max_pages] giving each sequence's pages in order, as vLLM's cache does.

One program per (BLOCK_M queries, query head, sequence) streams its keys in
BLOCK_N tiles with the online softmax in base 2. Key tiles wholly below every
query's diagonal run without a mask; only the tiles on the diagonal and the
last, partial one pay for it. Under CAUSAL the query tiles are taken last
first, so the longest programs start first.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attend(acc, l_i, m_i, q, k_base, v_base, block_table_row, kv_head_offset, n_lo, n_hi, query_pos, Lk,
            qk_scale, kv_row, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr,
            CAUSAL: tl.constexpr, PAGED: tl.constexpr, PAGE_SIZE: tl.constexpr):
    dims = tl.arange(0, HEAD_DIM)
    for n0 in range(n_lo, n_hi, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        if PAGED:
            page = tl.load(block_table_row + keys // PAGE_SIZE, mask=keys < Lk, other=0).to(tl.int64)
            rows = page * kv_row + kv_head_offset + (keys % PAGE_SIZE) * HEAD_DIM
        else:
            rows = keys.to(tl.int64) * HEAD_DIM
        if MASKED:
            k = tl.load(k_base + rows[None, :] + dims[:, None], mask=(keys < Lk)[None, :], other=0.0)
        else:
            k = tl.load(k_base + rows[None, :] + dims[:, None])
        s = tl.dot(q, k) * qk_scale
        if MASKED:
            visible = keys[None, :] < Lk
            if CAUSAL:
                visible = visible & (keys[None, :] <= query_pos[:, None])
            s = tl.where(visible, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if MASKED:
            v = tl.load(v_base + rows[:, None] + dims[None, :], mask=(keys < Lk)[:, None], other=0.0)
        else:
            v = tl.load(v_base + rows[:, None] + dims[None, :])
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def prefill_attention_kernel(q, k, v, o, block_table, sm_scale, Lq, Lk, H_Q, H_KV, max_pages,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                             CAUSAL: tl.constexpr, PAGED: tl.constexpr = False, PAGE_SIZE: tl.constexpr = 16):
    tiles_m = tl.cdiv(Lq, BLOCK_M)
    tile_m = tl.program_id(0)
    if CAUSAL:
        tile_m = tiles_m - 1 - tile_m
    head = tl.program_id(1)
    seq = tl.program_id(2).to(tl.int64)
    kv_head = head // (H_Q // H_KV)
    prefix = Lk - Lq

    queries = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_base = q + (seq * H_Q + head) * Lq * HEAD_DIM
    q_tile = tl.load(q_base + queries[:, None] * HEAD_DIM + dims[None, :], mask=(queries < Lq)[:, None], other=0.0)

    if PAGED:
        k_base = k
        v_base = v
        table_row = block_table + seq * max_pages
        kv_head_offset = kv_head.to(tl.int64) * PAGE_SIZE * HEAD_DIM
    else:
        k_base = k + (seq * H_KV + kv_head) * Lk * HEAD_DIM
        v_base = v + (seq * H_KV + kv_head) * Lk * HEAD_DIM
        table_row = block_table
        kv_head_offset = 0

    kv_row = H_KV.to(tl.int64) * PAGE_SIZE * HEAD_DIM  # one page of every KV head
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 instead of exp
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    query_pos = prefix + queries

    # keys below `clear` are visible to every query of the tile
    if CAUSAL:
        clear = prefix + tile_m * BLOCK_M
        end = tl.minimum(prefix + tile_m * BLOCK_M + BLOCK_M, Lk)
    else:
        clear = Lk
        end = Lk
    clear = clear // BLOCK_N * BLOCK_N
    acc, l_i, m_i = _attend(acc, l_i, m_i, q_tile, k_base, v_base, table_row, kv_head_offset, 0, clear, query_pos,
                            Lk, qk_scale, kv_row, BLOCK_N, HEAD_DIM, False, CAUSAL, PAGED, PAGE_SIZE)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q_tile, k_base, v_base, table_row, kv_head_offset, clear, end, query_pos,
                            Lk, qk_scale, kv_row, BLOCK_N, HEAD_DIM, True, CAUSAL, PAGED, PAGE_SIZE)
    out = acc / l_i[:, None]
    o_base = o + (seq * H_Q + head) * Lq * HEAD_DIM
    tl.store(o_base + queries[:, None] * HEAD_DIM + dims[None, :], out.to(o.dtype.element_ty),
             mask=(queries < Lq)[:, None])


def prefill_attention(q, k, v, causal, config, block_table=None, page_size=16, lk=None, sm_scale=None):
    """o [B, Hq, Lq, D]. k, v: [B, Hkv, Lk, D], or pages [P, Hkv, page_size, D] with block_table (then give lk)."""
    b, h_q, lq, d = q.shape
    paged = block_table is not None
    h_kv = k.shape[1]
    lk = lk if lk is not None else k.shape[2]
    o = torch.empty_like(q)
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(d)
    grid = (triton.cdiv(lq, config["BLOCK_M"]), h_q, b)
    table = block_table if paged else q  # an unused pointer when contiguous
    prefill_attention_kernel[grid](q, k, v, o, table, scale, lq, lk, h_q, h_kv,
                                   block_table.shape[1] if paged else 0,
                                   BLOCK_M=config["BLOCK_M"], BLOCK_N=config["BLOCK_N"], HEAD_DIM=d, CAUSAL=causal,
                                   PAGED=paged, PAGE_SIZE=page_size, num_warps=config.get("num_warps", 4),
                                   num_stages=config.get("num_stages", 2))
    return o


# ---- what tunekit's spec (prefill_attention.yaml) calls ---------------------

def attention_reference(q, k, v, CAUSAL_REF=None, causal=None, **_):
    """o in float32: softmax(q k^T / sqrt(D)) v, causal with the prefix offset."""
    causal = bool(causal if causal is not None else CAUSAL_REF)
    b, h_q, lq, d = q.shape
    h_kv, lk = k.shape[1], k.shape[2]
    kk = k.float().repeat_interleave(h_q // h_kv, dim=1)
    vv = v.float().repeat_interleave(h_q // h_kv, dim=1)
    s = (q.float() @ kk.transpose(-1, -2)) / math.sqrt(d)
    if causal:
        pos_q = torch.arange(lq, device=q.device)[:, None] + (lk - lq)
        pos_k = torch.arange(lk, device=q.device)[None, :]
        s = s.masked_fill(pos_k > pos_q, float("-inf"))
    return torch.softmax(s, dim=-1) @ vv


def paged_setup(args, meta):
    """A paged copy of the contiguous cache: pages in a shuffled order."""
    k, v = args["k"], args["v"]
    b, h_kv, lk, d = k.shape
    page = int(meta.get("PAGE_SIZE", 16))
    pages_per_seq = triton.cdiv(lk, page)
    g = torch.Generator(device="cpu").manual_seed(7)
    perm = torch.randperm(b * pages_per_seq, generator=g).to(k.device)
    table = perm.view(b, pages_per_seq).to(torch.int32)
    pad = pages_per_seq * page - lk

    def pages(x):
        x = torch.nn.functional.pad(x, (0, 0, 0, pad)).view(b, h_kv, pages_per_seq, page, d)
        x = x.permute(0, 2, 1, 3, 4).reshape(b * pages_per_seq, h_kv, page, d)
        out = torch.empty_like(x)
        out[perm] = x
        return out

    return {"k_pages": pages(k), "v_pages": pages(v), "block_table": table}
