// Split-KV flash decoding for one query token per (batch, query head), bf16,
// D = 128, GQA with G = Hq / Hkv <= 8 query heads per KV head.
//
//   q [B, Hq, D], k and v [B, Hkv, L, D] (torch SDPA's layout), out [B, Hq, D]
//   workspace: B*Hq*SPLIT*(D+2) floats, counters: B*Hkv uint32 (zero before the
//   first launch; the kernel leaves them zero again).
//
// Grid (SPLIT, Hkv, B), block WARPS*32 threads, dynamic shared memory
// fd_smem_bytes() below (the spec and bench/kernels/flash_decode.py repeat the
// formula). One block owns one (b, kv head, chunk of L): all G query heads of
// the KV head go through the same K/V bytes, so K and V are read once.
//
// Why tensor cores: at G = 8 a CUDA-core version needs 2*G*D FMAs per key,
// about half of the H200's fp32 rate at full memory bandwidth; with
// mma.sync m16n8k16 the math is a few percent of the time. S = Q.K^T has the
// query heads as M (rows G..15 are zero padding) and 8 keys as N; O^T = V^T.P^T
// has d as M, the 8 heads as N and 16 keys as K, so its accumulators carry no
// padding and the score fragments are already P^T's B fragments.
//
// Fragments straight from memory: the sum over d in Q.K^T does not care about
// the order of d, so each lane loads 16 contiguous bytes of a K row and the Q
// fragment uses the same permutation of d; likewise the M rows of V^T.P^T are
// a permutation of d, undone when the output is written. Every 16-byte load of
// a warp covers whole 32-byte sectors and no shared-memory transpose is
// needed (two key rows become one bf16x2 register with a byte permute).
// SMEM=1 stages the same bytes through shared memory with cp.async (STAGES
// deep, per warp, so no block barrier in the loop) instead of registers.
//
// Tunables (-D): SPLIT (chunks of L per (b, kv head)), WARPS (per block), KPW
// (keys per warp per iteration: 16 or 32; all of its loads are in flight
// together), SMEM (0: global -> registers, 1: cp.async staging), STAGES (SMEM=1).
// SCHED (0: grid (SPLIT, Hkv, B); 1: persistent grid of min(items, BPS*sm_count)
// blocks taking (b, kv head, chunk) items from a queue in counters[B*Hkv],
// counters[B*Hkv+1]; counters then hold B*Hkv+2 words), COMBINE (0: split
// weights then weighted sum, two L2 passes; 1: one online pass), PREFETCH
// (the loads' L2 prefetch hint: 0, 128 or 256 bytes), CLUSTER (1: the SPLIT
// blocks of a (b, kv head) form one thread-block cluster and combine through
// distributed shared memory; no workspace, no counter; SCHED=0, SPLIT 2..16).
//
// CLUSTER=1. The split-KV combine otherwise costs a round trip through L2:
// each block stores its partial, fences, counts on an atomic, and the last
// block reads every partial back, three dependent L2 latencies after the
// keys are done; at B=1 that is a large part of a 9 us step. In a cluster
// (grid.x = SPLIT = the cluster, so rank = split) each block instead stores
// its partial straight into the shared memory of the blocks that combine it:
// float4 column u of the G x D output belongs to rank u % SPLIT, and every
// block gets every split's (m, l). One cluster barrier later each rank
// combines its columns. Every block arrives on the cluster barrier when it
// starts and waits before its first remote store, so no store reaches a
// block that has not started; no remote access follows the second barrier,
// so blocks may exit in any order.
#include <cuda_bf16.h>

// No other headers: NVRTC (tunekit, CuPy) has no libc headers by default.
typedef unsigned int uint32_t;
#define FD_NEG_INF __int_as_float(0xff800000u)

#ifndef SPLIT
#define SPLIT 16
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef KPW
#define KPW 16
#endif
#ifndef SMEM
#define SMEM 0
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef SCHED
#define SCHED 0  // 0: grid (SPLIT, Hkv, B), a block per chunk; 1: persistent blocks, work queue
#endif
#ifndef FD_MAXNREG
#define FD_MAXNREG 184
#endif
#ifndef COMBINE
#define COMBINE 0  // 0: split weights, then the weighted sum (two L2 passes); 1: one online pass
#endif
#ifndef PREFETCH
#define PREFETCH 256  // L2 prefetch size hint on the K/V loads: 0 (none), 128 or 256 bytes
#endif
#ifndef CLUSTER
#define CLUSTER 0  // 1: a (b, kv head)'s SPLIT blocks combine in their cluster's shared memory
#endif
// The hint is a qualifier in the load's PTX. Under ncu at B=64 the 256-byte
// hint left 23% of L2 requests hitting (the prefetched halves) and DRAM at
// 84% of peak, against cuDNN's 1% and 88%; a tunable, so the tuner decides.
#if PREFETCH == 256
#define FD_L2PF ".L2::256B"
#elif PREFETCH == 128
#define FD_L2PF ".L2::128B"
#elif PREFETCH == 0
#define FD_L2PF ""
#else
#error "PREFETCH must be 0, 128 or 256"
#endif

#define FD_D 128
#define FD_THREADS (WARPS * 32)
#define FD_NT (KPW / 8)   // Q.K^T n-tiles (8 keys each) per iteration
#define FD_NS (KPW / 16)  // P.V k-steps (16 keys each) per iteration

static_assert(KPW == 16 || KPW == 32 || KPW == 64, "KPW must be 16, 32 or 64");
static_assert(WARPS >= 1 && WARPS <= 16, "WARPS must be 1..16");
static_assert(SPLIT >= 1, "SPLIT must be >= 1");
static_assert(SMEM == 0 || (STAGES >= 2 && STAGES <= 4), "STAGES must be 2..4");
static_assert(SCHED == 0 || SCHED == 1, "SCHED must be 0 or 1");
static_assert(COMBINE == 0 || COMBINE == 1, "COMBINE must be 0 or 1");
static_assert(CLUSTER == 0 || (SCHED == 0 && SPLIT >= 2 && SPLIT <= 16),
              "CLUSTER needs SCHED=0 and SPLIT 2..16 (the largest cluster)");

// Dynamic shared memory, bytes. Region 0 is the cp.async ring during the key
// loop and the per-warp partial outputs after it (hence the max); then the
// per-warp (m, l), the split weights of the final combine and its float4
// scratch; with CLUSTER, the partials the cluster pushes here: SPLIT x
// ceil_div(G*32, SPLIT) float4 columns and SPLIT x G (m, l) pairs.
//   max(SMEM*WARPS*STAGES*KPW*512, WARPS*G*512) + WARPS*128 + ceil_div(G*SPLIT, 4)*16 + WARPS*512
//   + CLUSTER * (SPLIT*ceil_div(G*32, SPLIT)*16 + SPLIT*G*8)
__host__ __device__ constexpr unsigned fd_region0(int G) {
  return SMEM * WARPS * STAGES * KPW * 512 > WARPS * G * 512 ? SMEM * WARPS * STAGES * KPW * 512 : WARPS * G * 512;
}
__host__ __device__ constexpr unsigned fd_cluster_off(int G) {
  return fd_region0(G) + WARPS * 128u + (G * SPLIT + 3) / 4 * 16u + WARPS * 512u;
}
__host__ __device__ constexpr unsigned fd_cols_per_rank(int G) { return (G * 32 + SPLIT - 1) / SPLIT; }
__host__ __device__ constexpr unsigned fd_smem_bytes(int G) {
  return fd_cluster_off(G) + CLUSTER * (SPLIT * fd_cols_per_rank(G) * 16u + SPLIT * G * 8u);
}

// Distributed shared memory: the address of `p` (this block's shared memory)
// in cluster block `rank`, and stores there.
__device__ __forceinline__ unsigned fd_remote(const void* p, unsigned rank) {
  unsigned a;
  asm("mapa.shared::cluster.u32 %0, %1, %2;"
      : "=r"(a)
      : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))), "r"(rank));
  return a;
}
__device__ __forceinline__ void st_remote(unsigned a, float4 v) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(a), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}
__device__ __forceinline__ void st_remote(unsigned a, float2 v) {
  asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(v.x), "f"(v.y) : "memory");
}
__device__ __forceinline__ unsigned fd_cluster_rank() {
  unsigned r;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ void store_out4(__nv_bfloat16* dst, float4 v, float scale) {
  __nv_bfloat162 lo = __floats2bfloat162_rn(v.x * scale, v.y * scale);
  __nv_bfloat162 hi = __floats2bfloat162_rn(v.z * scale, v.w * scale);
  uint2 pk;
  pk.x = *reinterpret_cast<uint32_t*>(&lo);
  pk.y = *reinterpret_cast<uint32_t*>(&hi);
  *reinterpret_cast<uint2*>(dst) = pk;
}

__device__ __forceinline__ uint4 ld_stream(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate" FD_L2PF ".v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

__device__ __forceinline__ uint4 lds128(const uint4* p) { return *p; }

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  // src-size 0 writes 16 zero bytes and reads nothing: keys past the chunk.
  asm volatile("cp.async.cg.shared.global" FD_L2PF " [%0], [%1], 16, %2;" ::"r"(s), "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int n>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(n)); }

__device__ __forceinline__ void mma_bf16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x (low 16 bits) = lo
  return *reinterpret_cast<uint32_t*>(&h);
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// XOR swizzle of the 16-byte chunk index (0..15) of a staged 256-byte row,
// so that both fragment read patterns below hit 8 distinct bank groups per
// quarter warp (see the key-row and value-row reads).
__device__ __forceinline__ int swz(int row) { return (row & 6) ^ ((row & 1) << 2); }

// One work item: chunk `split` of L for KV head kvh of batch b, from the
// streaming to the partial (or, SPLIT=1, the output), and the combine when it
// is the last chunk of its (b, kv head) to finish. SCHED=1: thread 0 takes the
// next item from the queue (*work) once this item's keys are streamed, into
// `next` (read by the caller after this returns).
__device__ __forceinline__ void fd_item(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                        const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ out,
                                        float* __restrict__ workspace, unsigned* __restrict__ counters, int B, int Hq,
                                        int Hkv, int L, const int split, const int kvh, const int b,
                                        unsigned char* smem, int& s_is_last, unsigned* work, unsigned& next) {
  const int G = Hq / Hkv;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int r = lane >> 2, t = lane & 3;  // mma groupID, thread-in-group

  float* sm_o = reinterpret_cast<float*>(smem);                        // [WARPS][G][D] after the loop
  float* sm_ml = reinterpret_cast<float*>(smem + fd_region0(G));      // [WARPS][16][2]
  float* sm_w = sm_ml + WARPS * 32;                                   // [G][SPLIT]
  // [FD_THREADS]; sm_w's size is rounded up to 16 bytes so float4s stay aligned
  float4* sm_red = reinterpret_cast<float4*>(sm_w + (G * SPLIT + 3) / 4 * 4);

  // Keys [c0, c1) of this block; chunks are multiples of 16 keys.
  const int chunk = ((L + SPLIT - 1) / SPLIT + 15) & ~15;
  const int c0 = min(L, split * chunk), c1 = min(L, c0 + chunk);

  const size_t head = static_cast<size_t>(b) * Hkv + kvh;
  const __nv_bfloat16* kh = k + head * L * FD_D;
  const __nv_bfloat16* vh = v + head * L * FD_D;
  const int hq0 = kvh * G;  // first query head of this KV head

  // Q fragment, rows r < G (rows r+8 are the zero padding of the m16 tile):
  // qa[i] holds d = 32*i + 8*t .. +7 of head hq0 + r, matching the K loads.
  uint4 qa[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    qa[i] = make_uint4(0, 0, 0, 0);
    if (r < G) qa[i] = *reinterpret_cast<const uint4*>(q + (static_cast<size_t>(b) * Hq + hq0 + r) * FD_D + 32 * i + 8 * t);
  }

  // 1/sqrt(D) and log2(e): scores live in the exp2 domain.
  const float sl2 = 0.08838834764831845f * 1.4426950408889634f;
  float m_run = FD_NEG_INF, l_run = 0.f;  // row r: running max (quad-uniform), this lane's part of the sum
  // O^T accumulators: o[mi] = heads {2t, 2t+1} x d {8r + mi} (c0, c1) and
  // d {64 + 8r + mi} (c2, c3).
  float o[8][4];
#pragma unroll
  for (int mi = 0; mi < 8; ++mi) o[mi][0] = o[mi][1] = o[mi][2] = o[mi][3] = 0.f;

  const int span = c1 - c0;
  const int n_it = span > warp * KPW ? (span - warp * KPW + WARPS * KPW - 1) / (WARPS * KPW) : 0;

#if SMEM
  // This warp's ring: STAGES x (K tile, V tile), KPW rows of 16 chunks each.
  uint4* ring = reinterpret_cast<uint4*>(smem) + warp * STAGES * KPW * 32;
  auto issue = [&](int it) {
    if (it < n_it) {
      const int kb = c0 + (it * WARPS + warp) * KPW;
      uint4* sk = ring + (it % STAGES) * KPW * 32;
      uint4* sv = sk + KPW * 16;
#pragma unroll
      for (int x = 0; x < KPW / 2; ++x) {  // KPW*16 chunks per tile, 32 lanes
        const int idx = lane + 32 * x, row = idx >> 4, c = idx & 15;
        const bool ok = kb + row < c1;
        const size_t g = static_cast<size_t>(ok ? kb + row : c0) * FD_D + 8 * c;
        cp_async16(sk + row * 16 + (c ^ swz(row)), kh + g, ok);
        cp_async16(sv + row * 16 + (c ^ swz(row)), vh + g, ok);
      }
    }
    cp_async_commit();  // an empty group keeps the wait count uniform
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
#endif

  for (int it = 0; it < n_it; ++it) {
    const int kb = c0 + (it * WARPS + warp) * KPW;
    // kf[j][i]: K row kb + 8j + r, d = 32i + 8t.. ; vf[s][x][hh]: V row
    // kb + 16s + {2t, 2t+1, 2t+8, 2t+9}[x], d = 64hh + 8r..
    uint4 kf[FD_NT][4], vf[FD_NS][4][2];
#if SMEM
    issue(it + STAGES - 1);
    cp_async_wait<STAGES - 1>();
    __syncwarp();
    {
      const uint4* sk = ring + (it % STAGES) * KPW * 32;
      const uint4* sv = sk + KPW * 16;
#pragma unroll
      for (int j = 0; j < FD_NT; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = 8 * j + r;
          kf[j][i] = lds128(sk + row * 16 + ((4 * i + t) ^ swz(row)));
        }
#pragma unroll
      for (int s = 0; s < FD_NS; ++s)
#pragma unroll
        for (int x = 0; x < 4; ++x)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int row = 16 * s + 2 * t + (x & 1) + 8 * (x >> 1);
            vf[s][x][hh] = lds128(sv + row * 16 + ((8 * hh + r) ^ swz(row)));
          }
    }
    __syncwarp();  // every lane has read this stage before it is refilled
#else
#pragma unroll
    for (int j = 0; j < FD_NT; ++j) {
      const int key = kb + 8 * j + r;
#pragma unroll
      for (int i = 0; i < 4; ++i)
        kf[j][i] = key < c1 ? ld_stream(kh + static_cast<size_t>(key) * FD_D + 32 * i + 8 * t) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int s = 0; s < FD_NS; ++s)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int key = kb + 16 * s + 2 * t + (x & 1) + 8 * (x >> 1);
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          vf[s][x][hh] =
              key < c1 ? ld_stream(vh + static_cast<size_t>(key) * FD_D + 64 * hh + 8 * r) : make_uint4(0, 0, 0, 0);
      }
#endif

    // S = Q.K^T: sc[j][0..1] = rows r, keys kb + 8j + 2t + {0,1} (c2, c3 are
    // the padding rows).
    float sc[FD_NT][4];
#pragma unroll
    for (int j = 0; j < FD_NT; ++j) {
      sc[j][0] = sc[j][1] = sc[j][2] = sc[j][3] = 0.f;
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        const int i = s >> 1, h = s & 1;
        mma_bf16(sc[j], word(qa[i], 2 * h), 0u, word(qa[i], 2 * h + 1), 0u, word(kf[j][i], 2 * h),
                 word(kf[j][i], 2 * h + 1));
      }
    }

    // Online softmax over this iteration's keys, row r.
    float mx = FD_NEG_INF;
#pragma unroll
    for (int j = 0; j < FD_NT; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int key = kb + 8 * j + 2 * t + c;
        sc[j][c] = key < c1 ? sc[j][c] * sl2 : FD_NEG_INF;
        mx = fmaxf(mx, sc[j][c]);
      }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m_run, mx);
    // Until a row has seen a real key its max is -inf; exp2(-inf - -inf)
    // would be NaN, so subtract 0 then (every p and alpha is 0 anyway).
    const float m_use = m_new == FD_NEG_INF ? 0.f : m_new;
    const float alpha = exp2f(m_run - m_use);
    m_run = m_new;
    float psum = 0.f;
#pragma unroll
    for (int j = 0; j < FD_NT; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        sc[j][c] = exp2f(sc[j][c] - m_use);
        psum += sc[j][c];
      }
    l_run = l_run * alpha + psum;
    // This lane's output columns are heads 2t and 2t+1, whose alphas live in
    // the quads of groupIDs 2t and 2t+1.
    const float alpha0 = __shfl_sync(0xffffffffu, alpha, 8 * t);
    const float alpha1 = __shfl_sync(0xffffffffu, alpha, 8 * t + 4);
#pragma unroll
    for (int mi = 0; mi < 8; ++mi) {
      o[mi][0] *= alpha0;
      o[mi][1] *= alpha1;
      o[mi][2] *= alpha0;
      o[mi][3] *= alpha1;
    }

    // O^T += V^T.P^T, 16 keys per k-step: M = d (8 m-tiles), N = the 8 heads,
    // K = keys (logical k = key - (kb + 16s)). A row r of m-tile mi is
    // d = 8r + mi, row r+8 is d = 64 + 8r + mi (element mi of the lane's two
    // 16-byte V loads); its k columns 2t, 2t+1 come from vf[s][0], vf[s][1]
    // and 2t+8, 2t+9 from vf[s][2], vf[s][3]. B = P^T: column n = head r,
    // k rows 2t, 2t+1 = the score tile 2s, 2t+8, 2t+9 = tile 2s+1.
#pragma unroll
    for (int s = 0; s < FD_NS; ++s) {
      const uint32_t b0 = pack_bf16(sc[2 * s][0], sc[2 * s][1]);
      const uint32_t b1 = pack_bf16(sc[2 * s + 1][0], sc[2 * s + 1][1]);
#pragma unroll
      for (int mi = 0; mi < 8; ++mi) {
        const int w = mi >> 1;
        const unsigned sel = (mi & 1) ? 0x7632u : 0x5410u;  // high or low bf16 of each word; lower k in the low half
        const uint32_t a0 = __byte_perm(word(vf[s][0][0], w), word(vf[s][1][0], w), sel);
        const uint32_t a1 = __byte_perm(word(vf[s][0][1], w), word(vf[s][1][1], w), sel);
        const uint32_t a2 = __byte_perm(word(vf[s][2][0], w), word(vf[s][3][0], w), sel);
        const uint32_t a3 = __byte_perm(word(vf[s][2][1], w), word(vf[s][3][1], w), sel);
        mma_bf16(o[mi], a0, a1, a2, a3, b0, b1);
      }
    }
  }
#if SMEM
  cp_async_wait<0>();  // no copy may land in region 0 once it holds partial outputs
#endif
#if SCHED
  // Claim the next item now: its latency overlaps the merge and partial write.
  if (threadIdx.x == 0) next = atomicAdd(work, 1u);
#else
  (void)work;
  (void)next;
#endif

  // The quad's sum of l for row r.
  l_run += __shfl_xor_sync(0xffffffffu, l_run, 1);
  l_run += __shfl_xor_sync(0xffffffffu, l_run, 2);

  __syncthreads();  // region 0 is free (SMEM: every warp is past its ring)
  if (r < G && t == 0) {
    sm_ml[(warp * 16 + r) * 2 + 0] = m_run;
    sm_ml[(warp * 16 + r) * 2 + 1] = l_run;
  }
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    const int h = 2 * t + c;
    if (h < G) {
      float* dst = sm_o + (warp * G + h) * FD_D;
#pragma unroll
      for (int mi = 0; mi < 8; ++mi) {
        dst[8 * r + mi] = o[mi][c];
        dst[64 + 8 * r + mi] = o[mi][2 + c];
      }
    }
  }
  __syncthreads();

  // Merge the warps: row g, columns d4*4..+3 per work item.
  const size_t ws_o = (static_cast<size_t>(b) * Hq + hq0) * SPLIT;  // first (head, split) of this block's heads
  float* ws_ml = workspace + static_cast<size_t>(B) * Hq * SPLIT * FD_D;
#if CLUSTER
  // [SPLIT][cols] float4 columns, then [SPLIT][G] (m, l): what the cluster pushes here
  float4* cl_o = reinterpret_cast<float4*>(smem + fd_cluster_off(G));
  float2* cl_ml = reinterpret_cast<float2*>(cl_o + SPLIT * fd_cols_per_rank(G));
  // Every block of the cluster has started (see the kernel's first lines).
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
  for (int idx = threadIdx.x; idx < G * (FD_D / 4); idx += FD_THREADS) {
    const int g = idx / (FD_D / 4), d4 = idx % (FD_D / 4);
    float mw = FD_NEG_INF;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) mw = fmaxf(mw, sm_ml[(w * 16 + g) * 2]);
    const float mu = mw == FD_NEG_INF ? 0.f : mw;
    float lw = 0.f;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      const float e = exp2f(sm_ml[(w * 16 + g) * 2] - mu);
      lw += e * sm_ml[(w * 16 + g) * 2 + 1];
      const float4 x = *reinterpret_cast<const float4*>(sm_o + (w * G + g) * FD_D + 4 * d4);
      acc.x += e * x.x;
      acc.y += e * x.y;
      acc.z += e * x.z;
      acc.w += e * x.w;
    }
    if (SPLIT == 1) {
      // L >= 1, so the row has a real key and lw > 0.
      store_out4(out + (static_cast<size_t>(b) * Hq + hq0 + g) * FD_D + 4 * d4, acc, 1.f / lw);
    } else if (CLUSTER) {
#if CLUSTER
      st_remote(fd_remote(cl_o + split * fd_cols_per_rank(G) + idx / SPLIT, idx % SPLIT), acc);
      if (d4 == 0)
        for (int rk = 0; rk < SPLIT; ++rk) st_remote(fd_remote(cl_ml + split * G + g, rk), make_float2(mw, lw));
#endif
    } else {
      const size_t slot = ws_o + static_cast<size_t>(g) * SPLIT + split;
      __stcg(reinterpret_cast<float4*>(workspace + slot * FD_D + 4 * d4), acc);
      if (d4 == 0) __stcg(reinterpret_cast<float2*>(ws_ml + slot * 2), make_float2(mw, lw));
    }
  }
  if (SPLIT == 1) return;
#if CLUSTER
  // Every partial has landed where it is combined (release / acquire).
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  // This rank's columns u = i * SPLIT + split: out = sum_s 2^(m_s-M) O_s / sum_s 2^(m_s-M) l_s.
  for (int i = threadIdx.x; i < static_cast<int>(fd_cols_per_rank(G)); i += FD_THREADS) {
    const int u = i * SPLIT + split;
    if (u >= G * (FD_D / 4)) break;
    const int g = u / (FD_D / 4), d4 = u % (FD_D / 4);
    float mx = FD_NEG_INF;
#pragma unroll
    for (int sp = 0; sp < SPLIT; ++sp) mx = fmaxf(mx, cl_ml[sp * G + g].x);
    const float mu = mx == FD_NEG_INF ? 0.f : mx;
    float l = 0.f;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int sp = 0; sp < SPLIT; ++sp) {
      const float2 ml = cl_ml[sp * G + g];
      const float e = exp2f(ml.x - mu);  // a split without keys: m = -inf, e = 0
      const float4 x = cl_o[sp * fd_cols_per_rank(G) + i];
      l += e * ml.y;
      acc.x += e * x.x;
      acc.y += e * x.y;
      acc.z += e * x.z;
      acc.w += e * x.w;
    }
    store_out4(out + (static_cast<size_t>(b) * Hq + hq0 + g) * FD_D + 4 * d4, acc, 1.f / l);  // L >= 1: l > 0
  }
  return;
#endif

  // The last block of this (b, kv head) to finish merges the SPLIT partials.
  __threadfence();  // this block's partial is visible device-wide before it is counted
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned prev = atomicAdd(&counters[head], 1u);
    s_is_last = prev == SPLIT - 1;
    if (s_is_last) counters[head] = 0;  // all SPLIT blocks have counted: ready for the next launch
  }
  __syncthreads();
  if (!s_is_last) return;
  __threadfence();  // pairs with the writers' fences: read their partials after their counts

#if COMBINE
  // One pass: each thread merges its splits of one float4 column online
  // (m, l, acc), loading every split's (m, l) and O together, so the weights
  // cost no extra L2 round trip; `subs` threads sharing a column meet in
  // sm_red / sm_mlr. O_s are unnormalised w.r.t. m_s: out = sum_s 2^(m_s-M) O_s
  // / sum_s 2^(m_s-M) l_s.
  {
    // Region 0 is free: the warp merge above finished reading it before the
    // counter's __syncthreads.
    float2* sm_mlr = reinterpret_cast<float2*>(smem);  // [FD_THREADS]
    const int units = G * (FD_D / 4);
    const int subs = FD_THREADS / units > 1 ? FD_THREADS / units : 1;
    for (int idx = threadIdx.x; idx < units * subs; idx += FD_THREADS) {
      const int u = idx % units, sub = idx / units;
      const int g = u / (FD_D / 4), d4 = u % (FD_D / 4);
      const size_t base = ws_o + static_cast<size_t>(g) * SPLIT;
      const float* src = workspace + base * FD_D + 4 * d4;
      float m = FD_NEG_INF, l = 0.f;
      float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 8  // independent L2 loads in flight
      for (int s = sub; s < SPLIT; s += subs) {
        const float2 ml = __ldcg(reinterpret_cast<const float2*>(ws_ml + (base + s) * 2));
        const float4 x = __ldcg(reinterpret_cast<const float4*>(src + static_cast<size_t>(s) * FD_D));
        const float mn = fmaxf(m, ml.x);
        const float mu = mn == FD_NEG_INF ? 0.f : mn;  // empty splits so far: all weights 0
        const float a = exp2f(m - mu), e = exp2f(ml.x - mu);
        l = l * a + e * ml.y;
        acc.x = acc.x * a + e * x.x;
        acc.y = acc.y * a + e * x.y;
        acc.z = acc.z * a + e * x.z;
        acc.w = acc.w * a + e * x.w;
        m = mn;
      }
      if (subs == 1) {
        // some split holds a real key, so l > 0
        store_out4(out + (static_cast<size_t>(b) * Hq + hq0 + g) * FD_D + 4 * d4, acc, 1.f / l);
      } else {
        sm_red[idx] = acc;  // idx < units*subs <= FD_THREADS
        sm_mlr[idx] = make_float2(m, l);
      }
    }
    if (subs > 1) {
      __syncthreads();
      for (int u = threadIdx.x; u < units; u += FD_THREADS) {
        float mx = FD_NEG_INF;
        for (int sub = 0; sub < subs; ++sub) mx = fmaxf(mx, sm_mlr[sub * units + u].x);
        const float mu = mx == FD_NEG_INF ? 0.f : mx;
        float l = 0.f;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int sub = 0; sub < subs; ++sub) {
          const float2 ml = sm_mlr[sub * units + u];
          const float4 x = sm_red[sub * units + u];
          const float e = exp2f(ml.x - mu);
          l += e * ml.y;
          acc.x += e * x.x;
          acc.y += e * x.y;
          acc.z += e * x.z;
          acc.w += e * x.w;
        }
        const int g = u / (FD_D / 4), d4 = u % (FD_D / 4);
        store_out4(out + (static_cast<size_t>(b) * Hq + hq0 + g) * FD_D + 4 * d4, acc, 1.f / l);
      }
    }
  }
#else
  // Split weights w[g][s] = exp2(m_s - M) / sum_s exp2(m_s - M) l_s, a warp per row.
  for (int g = warp; g < G; g += WARPS) {
    const size_t base = ws_o + static_cast<size_t>(g) * SPLIT;
    float mx = FD_NEG_INF;
    for (int s = lane; s < SPLIT; s += 32) mx = fmaxf(mx, __ldcg(ws_ml + (base + s) * 2));
#pragma unroll
    for (int x = 16; x >= 1; x >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, x));
    const float mu = mx == FD_NEG_INF ? 0.f : mx;
    float den = 0.f;
    for (int s = lane; s < SPLIT; s += 32) {
      const float2 ml = __ldcg(reinterpret_cast<const float2*>(ws_ml + (base + s) * 2));
      const float e = exp2f(ml.x - mu);
      sm_w[g * SPLIT + s] = e;
      den += e * ml.y;
    }
#pragma unroll
    for (int x = 16; x >= 1; x >>= 1) den += __shfl_xor_sync(0xffffffffu, den, x);
    const float inv = 1.f / den;  // some split holds a real key, so den > 0
    __syncwarp();
    for (int s = lane; s < SPLIT; s += 32) sm_w[g * SPLIT + s] *= inv;
  }
  __syncthreads();

  // out[g][4*d4..] = sum_s w[g][s] * O_s: units = G*32 float4 columns; when
  // the block has more threads than units, `subs` threads share a unit's
  // splits and meet in sm_red.
  const int units = G * (FD_D / 4);
  const int subs = FD_THREADS / units > 1 ? FD_THREADS / units : 1;
  for (int idx = threadIdx.x; idx < units * subs; idx += FD_THREADS) {
    const int u = idx % units, sub = idx / units;
    const int g = u / (FD_D / 4), d4 = u % (FD_D / 4);
    const float* src = workspace + (ws_o + static_cast<size_t>(g) * SPLIT) * FD_D + 4 * d4;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 8  // independent L2 loads in flight: the combine is latency-bound
    for (int s = sub; s < SPLIT; s += subs) {
      const float w = sm_w[g * SPLIT + s];
      const float4 x = __ldcg(reinterpret_cast<const float4*>(src + static_cast<size_t>(s) * FD_D));
      acc.x += w * x.x;
      acc.y += w * x.y;
      acc.z += w * x.z;
      acc.w += w * x.w;
    }
    if (subs == 1) {
      store_out4(out + (static_cast<size_t>(b) * Hq + hq0 + g) * FD_D + 4 * d4, acc, 1.f);
    } else {
      sm_red[idx] = acc;  // idx < units*subs <= FD_THREADS
    }
  }
  if (subs > 1) {
    __syncthreads();
    for (int u = threadIdx.x; u < units; u += FD_THREADS) {
      float4 acc = sm_red[u];
      for (int sub = 1; sub < subs; ++sub) {
        const float4 x = sm_red[sub * units + u];
        acc.x += x.x;
        acc.y += x.y;
        acc.z += x.z;
        acc.w += x.w;
      }
      const int g = u / (FD_D / 4), d4 = u % (FD_D / 4);
      store_out4(out + (static_cast<size_t>(b) * Hq + hq0 + g) * FD_D + 4 * d4, acc, 1.f);
    }
  }
#endif  // COMBINE
}

#if SCHED
// ptxas otherwise aims at 168 registers (3 blocks of 128) and spills a few bytes.
#define FD_BOUNDS __maxnreg__(FD_MAXNREG)
#else
#define FD_BOUNDS __launch_bounds__(FD_THREADS)
#endif
extern "C" __global__ void FD_BOUNDS
flash_decode(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
             const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ out, float* __restrict__ workspace,
             unsigned* __restrict__ counters, int B, int Hq, int Hkv, int L) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int s_is_last;
  {
    // A launch with less dynamic shared memory than this config lays out
    // would corrupt silently; make it a launch error instead.
    unsigned dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    if (dyn < fd_smem_bytes(Hq / Hkv)) __trap();
    // A CLUSTER build launched without its cluster would store into shared
    // memory that is not there.
    if (CLUSTER && (gridDim.x != SPLIT || fd_cluster_rank() != blockIdx.x)) __trap();
  }
#if CLUSTER
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");  // "started"; waited on before the pushes
#endif
#if SCHED
  // Persistent blocks (grid: min(items, BPS * sm_count)): items are
  // (b, kv head, chunk), chunk fastest, so a head's chunks run side by side
  // and its combine comes early; the tail is one chunk, not one head.
  // counters[B*Hkv] is the queue head (`work`), counters[B*Hkv+1] counts the
  // blocks that have left (`done`).
  //
  // Race freedom. (1) Per-head counters and the combine are exactly those of
  // SCHED=0: each of the SPLIT items of a head fences its partial and counts
  // once, the one that sees SPLIT-1 (after every other has counted, hence
  // after their partials are visible) combines and zeroes the counter, which
  // nobody touches again in this launch. (2) A block leaves only after its own
  // fetch from `work` returned >= items, and counts on `done` after that (and
  // after a fence); so the block that sees done == gridDim.x-1 knows every
  // block has made its last `work` and `done` access, and zeroes both with
  // plain stores that the next (stream-ordered) launch sees. No block ever
  // waits on another, so the queue cannot deadlock however many blocks are
  // resident.
  __shared__ unsigned s_item;
  unsigned* work = counters + static_cast<size_t>(B) * Hkv;
  unsigned* done = work + 1;
  const unsigned items = static_cast<unsigned>(SPLIT) * Hkv * B;
  if (threadIdx.x == 0) s_item = atomicAdd(work, 1u);
  __syncthreads();
  unsigned item = s_item;
  while (item < items) {
    unsigned next = items;
    const unsigned hd = item / SPLIT;
    fd_item(q, k, v, out, workspace, counters, B, Hq, Hkv, L, static_cast<int>(item % SPLIT),
            static_cast<int>(hd % Hkv), static_cast<int>(hd / Hkv), smem, s_is_last, work, next);
    __syncthreads();  // every thread is done with this item's shared memory and has read s_item
    if (threadIdx.x == 0) s_item = next;
    __syncthreads();
    item = s_item;
  }
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(done, 1u) == gridDim.x - 1) {
      __threadfence();
      *work = 0;
      *done = 0;
    }
  }
#else
  unsigned next = 0;
  fd_item(q, k, v, out, workspace, counters, B, Hq, Hkv, L, blockIdx.x, blockIdx.y, blockIdx.z, smem, s_is_last,
          nullptr, next);
#endif
}

// The reference for tunekit's verification: a block per (b, query head), a
// thread per d, fp32 online softmax over every key in order. Each thread
// computes the full dot product itself (redundant, simple). Launch: grid
// [B*Hq], block [128], no dynamic shared memory. workspace and counters are
// unused (same argument list as the kernel).
extern "C" __global__ void flash_decode_ref(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                            __nv_bfloat16* out, float* workspace, unsigned* counters, int B, int Hq,
                                            int Hkv, int L) {
  __shared__ float qs[FD_D];
  const int bh = blockIdx.x, b = bh / Hq, h = bh % Hq, d = threadIdx.x;
  const int kvh = h / (Hq / Hkv);
  qs[d] = __bfloat162float(q[static_cast<size_t>(bh) * FD_D + d]);
  __syncthreads();
  const __nv_bfloat16* kh = k + (static_cast<size_t>(b) * Hkv + kvh) * L * FD_D;
  const __nv_bfloat16* vh = v + (static_cast<size_t>(b) * Hkv + kvh) * L * FD_D;
  const float scale = 1.0f / sqrtf(static_cast<float>(FD_D));
  float m = FD_NEG_INF, l = 0.f, acc = 0.f;
  for (int key = 0; key < L; ++key) {
    float s = 0.f;
    for (int x = 0; x < FD_D; ++x) s += qs[x] * __bfloat162float(kh[static_cast<size_t>(key) * FD_D + x]);
    s *= scale;
    const float m_new = fmaxf(m, s);
    const float alpha = expf(m - m_new);  // m = -inf only at key 0: alpha = 0
    const float p = expf(s - m_new);
    l = l * alpha + p;
    acc = acc * alpha + p * __bfloat162float(vh[static_cast<size_t>(key) * FD_D + d]);
    m = m_new;
  }
  out[static_cast<size_t>(bh) * FD_D + d] = __float2bfloat16(acc / l);
}
