"""Decode attention for Triton: split-KV flash decoding in one launch, GQA.

One decode step has one query token per sequence and head, against L cached
keys: a memory-bound pass over K and V. When B * Hkv programs cannot fill the
GPU, each (sequence, KV head) is cut into SPLITS chunks of the keys, each
handled by its own program, and the partial softmax results are combined.
Here the combine happens in the same launch: each program writes its
unnormalised partial (acc, max, sum) to a workspace, then counts itself done
on an atomic counter of its (sequence, KV head); the last of the SPLITS
programs to finish reads every partial, writes the output and resets the
counter for the next launch. With SPLITS = 1 a program writes its output
directly.

All Hq / Hkv query heads of a KV head are one [GROUP_PAD, D] tile, so each
key and value is read once per KV head and the scores are a tensor-core dot
(GROUP_PAD >= 16 rows, the extra rows masked).

Layouts: q, o [B, Hq, D]; k, v [B, Hkv, L, D]; partial [B, Hq, SPLITS, D]
f32; stats [B, Hq, SPLITS, 2] f32 (max, sum, base 2); counters [B, Hkv] i32,
zero before the first launch.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl


@triton.jit
def decode_attention_kernel(q, k, v, o, partial, stats, counters, sm_scale, L, H_Q, H_KV,
                            SPLITS: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                            GROUP_PAD: tl.constexpr):
    split = tl.program_id(0)
    kv_head = tl.program_id(1)
    seq = tl.program_id(2).to(tl.int64)
    group = H_Q // H_KV
    rows = tl.arange(0, GROUP_PAD)
    row_in = rows < group
    heads = kv_head * group + rows  # the query heads of this KV head
    dims = tl.arange(0, HEAD_DIM)
    q_tile = tl.load(q + (seq * H_Q + heads)[:, None] * HEAD_DIM + dims[None, :], mask=row_in[:, None], other=0.0)

    chunk = tl.cdiv(tl.cdiv(L, SPLITS), BLOCK_N) * BLOCK_N
    lo = split * chunk
    hi = tl.minimum(lo + chunk, L)
    kv = (seq * H_KV + kv_head) * L * HEAD_DIM
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full((GROUP_PAD,), -float("inf"), tl.float32)
    l_i = tl.zeros((GROUP_PAD,), tl.float32)
    acc = tl.zeros((GROUP_PAD, HEAD_DIM), tl.float32)
    for n0 in range(lo, hi, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        key_in = keys < hi
        kt = tl.load(k + kv + keys[None, :].to(tl.int64) * HEAD_DIM + dims[:, None], mask=key_in[None, :], other=0.0)
        s = tl.dot(q_tile, kt) * qk_scale
        s = tl.where(key_in[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        vt = tl.load(v + kv + keys[:, None].to(tl.int64) * HEAD_DIM + dims[None, :], mask=key_in[:, None], other=0.0)
        acc = tl.dot(p.to(vt.dtype), vt, acc * alpha[:, None])
        m_i = m_new

    out_ptrs = o + (seq * H_Q + heads)[:, None] * HEAD_DIM + dims[None, :]
    if SPLITS == 1:
        tl.store(out_ptrs, (acc / l_i[:, None]).to(o.dtype.element_ty), mask=row_in[:, None])
    else:
        slot = (seq * H_Q + heads) * SPLITS + split
        tl.store(partial + slot[:, None] * HEAD_DIM + dims[None, :], acc, mask=row_in[:, None])
        tl.store(stats + slot * 2, m_i, mask=row_in)
        tl.store(stats + slot * 2 + 1, l_i, mask=row_in)
        # Every thread's stores happen before the release of the count.
        tl.debug_barrier()
        counter = counters + seq * H_KV + kv_head
        done = tl.atomic_add(counter, 1, sem="acq_rel")
        if done == SPLITS - 1:
            tl.debug_barrier()
            base = (seq * H_Q + heads) * SPLITS
            m_all = tl.full((GROUP_PAD,), -float("inf"), tl.float32)
            for s in range(SPLITS):
                m_all = tl.maximum(m_all, tl.load(stats + (base + s) * 2, mask=row_in, other=-float("inf"),
                                                  cache_modifier=".cg"))
            total = tl.zeros((GROUP_PAD,), tl.float32)
            out = tl.zeros((GROUP_PAD, HEAD_DIM), tl.float32)
            for s in range(SPLITS):
                m_s = tl.load(stats + (base + s) * 2, mask=row_in, other=-float("inf"), cache_modifier=".cg")
                l_s = tl.load(stats + (base + s) * 2 + 1, mask=row_in, other=0.0, cache_modifier=".cg")
                # an empty chunk (L < SPLITS tiles) has max -inf and weighs nothing
                w = tl.where(m_s == -float("inf"), 0.0, tl.math.exp2(m_s - m_all))
                total += l_s * w
                part = tl.load(partial + (base + s)[:, None] * HEAD_DIM + dims[None, :], mask=row_in[:, None],
                               other=0.0, cache_modifier=".cg")
                out += part * w[:, None]
            tl.store(out_ptrs, (out / total[:, None]).to(o.dtype.element_ty), mask=row_in[:, None])
            tl.atomic_xchg(counter, 0)


def workspace(b, h_q, h_kv, d, splits, device):
    return (torch.empty((b, h_q, splits, d), dtype=torch.float32, device=device),
            torch.empty((b, h_q, splits, 2), dtype=torch.float32, device=device),
            torch.zeros((b, h_kv), dtype=torch.int32, device=device))


def decode_attention(q, k, v, config, scratch=None):
    """o [B, Hq, D] for q [B, Hq, D] against k, v [B, Hkv, L, D]."""
    b, h_q, d = q.shape
    h_kv, length = k.shape[1], k.shape[2]
    splits = config["SPLITS"]
    partial, stats, counters = scratch or workspace(b, h_q, h_kv, d, splits, q.device)
    o = torch.empty_like(q)
    decode_attention_kernel[(splits, h_kv, b)](q, k, v, o, partial, stats, counters, 1.0 / math.sqrt(d), length,
                                               h_q, h_kv, SPLITS=splits, BLOCK_N=config["BLOCK_N"], HEAD_DIM=d,
                                               GROUP_PAD=max(16, triton.next_power_of_2(h_q // h_kv)),
                                               num_warps=config.get("num_warps", 4),
                                               num_stages=config.get("num_stages", 2))
    return o


def decode_reference(q, k, v):
    """o in float32: one query token per head, GQA."""
    b, h_q, d = q.shape
    h_kv = k.shape[1]
    kk = k.float().repeat_interleave(h_q // h_kv, dim=1)
    vv = v.float().repeat_interleave(h_q // h_kv, dim=1)
    s = torch.einsum("bhd,bhld->bhl", q.float(), kk) / math.sqrt(d)
    return torch.einsum("bhl,bhld->bhd", torch.softmax(s, dim=-1), vv)
