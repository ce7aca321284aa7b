// gemm_stream: C = A * B^T for decode shapes whose B must stream from DRAM
// (M <= 16, B of several MiB), bf16 in and out, fp32 accumulation through
// mma.sync.m16n8k16. B's rows travel through the bulk copy engine
// (cp.async.bulk, no tensor map) into a shared-memory ring, optionally with an
// L2 evict-first policy; A's k-range is copied once (cp.async) into shared
// memory, where it stays for the whole launch.
//
// Why a second decode kernel next to gemm_skinny: lab/probes/stream_access_probe.py
// read 32 MiB in many ways (lab/runs/issue-5-run-10.md). gemm_skinny's
// pattern (a warp load = 8 rows x 64 bytes, into registers) took 15.9 us at
// best after a write flush. Contiguous register loads took 14.0-14.1 us, but
// the MMA fragment layout does not give each warp load a contiguous run of a
// row. Bulk copies marked evict-first, swept through memory in address order
// by the whole grid, took 13.9-14.1 us, whether a stage was one 16 KiB chunk
// or 8 row segments of 512 B to 8 KiB. They land whole row segments in shared
// memory, where any fragment layout can be read. Without the policy they took
// 15.5-16.0 us: after a write flush, the streamed lines must replace each
// other, not the flush's dirty lines, whose write-back would share the DRAM
// with the reads.
//
//   A: M x K row-major, B: N x K row-major ("nk"), C: M x N row-major.
//   1 <= M <= BM <= 16, N >= 1, K % 8 == 0, A and B 16-byte aligned, b_nk == 1,
//   at most 16 k-stages per block; anything else stops with __trap() instead
//   of a wrong answer.
//
// Launch (exactly):
//   grid    = [CK * P], P = min(ceil_div(N, 8), sm_count // CK) clusters
//   block   = [(WARPS + 1) * 32]: WARPS consumer warps, then one producer warp
//   cluster = [CK, 1, 1]
//   dynamic shared memory = 128 + STAGES * 8 * (KC * 2 + 64)
//       + BM * (ceil_div(ceil_div(K, 32), CK) rounded up to even * 64 + 64)
//       + WARPS * 1024 + (CK > 1: ceil_div(ceil_div(ceil_div(N, 8), P), CK) * CK * BM * 32)
//
// Tunables (-DNAME=value):
//   BM      rows of the A tile: 1, 2, 4, 8 or 16 (rows BM..15 of the m16 MMA
//           are zero); the spec pins it to the smallest value >= M
//   KC      k (elements) per row per ring stage; a stage holds 8 rows of B
//   STAGES  ring depth (2..8)
//   CK      blocks per cluster, splitting K; their partial tiles meet in the
//           owner's shared memory through st.shared::cluster (1: no split)
//   WARPS   consumer warps; each stage's k-groups are dealt out among them
//   EVICT   1: B's copies carry an L2 evict-first cache policy
//
// Work. B's rows form n8 tiles, T = ceil_div(N, 8) of them. Cluster p of P
// takes tiles p, p + P, p + 2P, ... (round r is tile r * P + p), so at any
// time the whole grid reads one contiguous window of B, round by round, as
// the fastest probe kernels did. Block q of the cluster owns an even share of
// K's 32-element k-groups, [k_lo, k_hi) in elements; each tile is
// nsub = ceil(range / KC) k-stages of 8 row segments (one bulk copy per row,
// KC * 2 bytes or the tail).
//
// The producer's elected lane walks the sequence i = r * nsub + sub, ring
// slot i % STAGES: it waits for the slot's "empty" mbarrier (all WARPS
// consumer warps have released use i - STAGES), arms "full" with the byte
// count and issues the copies, which complete it. Meanwhile the consumers
// copy A's slice, one cp.async group per k-stage, so round 0 waits for one
// k-stage of A at a time, not all of it. Every consumer warp waits on "full",
// multiplies k-groups warp, warp + WARPS, ... of the stage and arrives on
// "empty". Since every warp sees every use of every slot, no mbarrier can
// run two phases ahead of a waiter, which a parity wait would mistake for
// the phase it waits for. At the end of a tile the warps' partials meet in
// shared memory (`part`, double-buffered) and are summed in warp order.
//
// Shared memory: the mbarriers (128 bytes), the ring, A's slice,
// part[2][WARPS][128] floats, then (CK > 1) the partial tiles pushed to this
// block. A ring row is KC * 2 + 64 bytes and an A row a multiple of 128 plus
// 64: rows g and g + 1 start 64 bytes apart in the banks, so the eight lanes
// of a quarter warp (rows g, g + 1; 16-byte chunks t = 0..3) hit 32
// different banks.
//
// The MMA's k order is gemm_skinny's permutation (see gemm_skinny.cu): lane
// (g, t) reads 16 bytes at k = 32 j + 8 t of B's row g and of A's rows g and
// g + 8, and feeds two k16 steps with them ({x, y}, then {z, w}).
//
// Edges: rows of B at or past N are never copied; their ring rows hold stale
// bytes that only reach output columns >= N, which are never stored. A's rows
// >= M and k past the range are zero-filled; a lane's B chunk past the
// range's end (K % 8 == 0 makes a chunk all in or all out) is replaced by
// zeros in registers, since stale bytes could be NaN.
//
// CK > 1: a block's finished tile of round r is stored into block r % CK's
// shared memory, red[(r / CK) * CK + q][BM][8]; after one cluster barrier each
// owner sums its tiles' CK partials in q order and writes C, so C does not
// depend on arrival order. Every block arrives on the cluster barrier
// (relaxed) when it starts and waits before its first remote store, so no
// store can reach a block that has not started.

// No <stdint.h>: NVRTC (tunekit's default compiler) has no such header.
#include <cuda_bf16.h>

#ifndef BM
#define BM 16
#endif
#ifndef KC
#define KC 1024
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CK
#define CK 1
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef EVICT
#define EVICT 1
#endif

namespace gemm_stream_detail {

using uint32_t = unsigned int;
using uint64_t = unsigned long long;

constexpr int kHalves = BM > 8 ? 2 : 1;  // row halves g, g + 8 that hold rows < BM
constexpr int kThreads = (WARPS + 1) * 32;
constexpr uint32_t kRowBytes = KC * 2 + 64;
constexpr uint32_t kStageBytes = 8 * kRowBytes;
constexpr uint32_t kBarBytes = 128;  // full[8], empty[8]
constexpr int kMaxSub = 16;          // k-stages per block: A's cp.async groups (see a_wait)

static_assert(BM == 1 || BM == 2 || BM == 4 || BM == 8 || BM == 16, "BM must be 1, 2, 4, 8 or 16");
static_assert(KC % 64 == 0 && KC >= 64 && KC <= 4096, "KC must be a multiple of 64 in 64..4096");
static_assert(STAGES >= 2 && STAGES <= 8, "STAGES must be 2..8");
static_assert(CK >= 1 && CK <= 16, "CK must be 1..16 (the largest cluster; 9..16 is non-portable)");
static_assert(WARPS >= 1 && WARPS <= 16, "WARPS must be 1..16");

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void bar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void bar_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// One row segment of B into the ring; completes `bar` with its byte count.
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, uint64_t policy) {
  if (EVICT)
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar), "l"(policy)
        : "memory");
  else
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// A's copies; src_bytes == 0 writes 16 zero bytes (rows >= M, k past the range).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// Waits until at most n of this thread's cp.async groups are pending
// (wait_group takes an immediate).
__device__ __forceinline__ void a_wait(int n) {
  switch (n) {
#define GS_WAIT(k) \
  case k:          \
    asm volatile("cp.async.wait_group " #k ";\n" ::: "memory"); \
    break;
    GS_WAIT(0) GS_WAIT(1) GS_WAIT(2) GS_WAIT(3) GS_WAIT(4) GS_WAIT(5) GS_WAIT(6) GS_WAIT(7)
    GS_WAIT(8) GS_WAIT(9) GS_WAIT(10) GS_WAIT(11) GS_WAIT(12) GS_WAIT(13) GS_WAIT(14) GS_WAIT(15)
#undef GS_WAIT
    default:  // (n < kMaxSub; waiting for all is always safe)
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  }
}

__device__ __forceinline__ uint4 lds128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

__device__ __forceinline__ void cluster_arrive_started() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait_started() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// Stores v at the same shared-memory offset as p in cluster block `rank`.
__device__ __forceinline__ void st_cluster(float* p, unsigned rank, float v) {
  uint32_t remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(p)), "r"(rank));
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(remote), "f"(v) : "memory");
}

// The consumer warps only (named barrier 1; the producer warp never joins).
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, %0;\n" ::"n"(WARPS * 32) : "memory"); }

__device__ __forceinline__ void mma_bf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

}  // namespace gemm_stream_detail

extern "C" __global__ void __launch_bounds__(gemm_stream_detail::kThreads, 1)
    gemm_stream(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K, int b_nk) {
  using namespace gemm_stream_detail;
  extern __shared__ __align__(128) unsigned char smem[];

  const int KG = (K + 31) >> 5;          // k-groups of 32
  const int kgq = (KG + CK - 1) / CK;    // the most any block of the cluster owns
  const uint32_t a_row = (uint32_t)((kgq + 1) & ~1) * 64 + 64;
  const int T = (N + 7) >> 3;            // n8 tiles
  const int P = (int)gridDim.x / CK;     // clusters
  const int p = (int)blockIdx.x / CK;
  const int rounds_max = (T + P - 1) / P;
  const int slots = (rounds_max + CK - 1) / CK;  // tiles a block owns at most (CK > 1)
  const uint32_t ring_off = kBarBytes;
  const uint32_t a_off = ring_off + STAGES * kStageBytes;
  const uint32_t part_off = a_off + BM * a_row;
  const uint32_t red_off = part_off + WARPS * 1024;
  const uint32_t need = red_off + (CK > 1 ? (uint32_t)slots * CK * BM * 8 * 4 : 0u);
  {
    // Requirements (the spec's constraints); a launch outside them is an
    // error instead of a wrong answer or an out-of-bounds access.
    unsigned dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    const bool aligned = ((reinterpret_cast<uint64_t>(A) | reinterpret_cast<uint64_t>(B)) & 15) == 0;
    if (b_nk != 1 || M < 1 || M > BM || N < 1 || K < 1 || (K & 7) != 0 || !aligned || dyn < need ||
        (kgq * 32 + KC - 1) / KC > kMaxSub ||
        gridDim.x % CK != 0 || blockDim.x != kThreads)
      __trap();
    // A CK > 1 build launched without its cluster would store into shared
    // memory that is not there.
    if (CK > 1 && cluster_rank() != blockIdx.x % CK) __trap();
  }
  const int q = (int)blockIdx.x % CK;
  const uint32_t full0 = smem_addr(smem), empty0 = full0 + 64;
  const uint32_t ring = smem_addr(smem) + ring_off;
  const uint32_t As = smem_addr(smem) + a_off;
  float* const part = reinterpret_cast<float*>(smem + part_off);
  float* const red = reinterpret_cast<float*>(smem + red_off);

  // This block's k range: k-groups [kg0, kg1), elements [k_lo, k_hi).
  const int kg0 = (int)((long long)q * KG / CK), kg1 = (int)((long long)(q + 1) * KG / CK);
  const int k_lo = kg0 * 32, k_hi = min(kg1 * 32, K), k_len = k_hi - k_lo;
  const int nsub = k_len > 0 ? (k_len + KC - 1) / KC : 0;
  const int rounds = p < T ? (T - p + P - 1) / P : 0;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      bar_init(full0 + 8 * s, 1);
      bar_init(empty0 + 8 * s, WARPS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if constexpr (CK > 1) cluster_arrive_started();
  __syncthreads();

  if (warp == WARPS) {
    // --- the producer ---
    if (lane == 0) {
      uint64_t policy = 0;
      if (EVICT) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
      const int total = rounds * nsub;
      for (int i = 0; i < total; ++i) {
        const int s = i % STAGES;
        if (i >= STAGES) bar_wait(empty0 + 8 * s, (uint32_t)((i / STAGES - 1) & 1));
        const int r = i / nsub, sub = i % nsub;
        const int n0 = (r * P + p) * 8;
        const int kb = k_lo + sub * KC;
        const int kc = min(KC, k_hi - kb);
        const int rows = min(8, N - n0);
        bar_expect(full0 + 8 * s, (uint32_t)(rows * kc * 2));
        for (int j = 0; j < rows; ++j)
          bulk_copy(ring + s * kStageBytes + j * kRowBytes, B + ((size_t)(n0 + j) * K + kb), (uint32_t)kc * 2,
                    full0 + 8 * s, policy);
      }
    }
    __syncwarp();
    if constexpr (CK > 1) cluster_wait_started();
  } else {
    // --- the consumers ---
    // A's slice, one cp.async group per k-stage (rows < M, k < k_hi; zeros
    // elsewhere), so round 0 can start on k-stage 0 while the rest arrive.
    for (int sub = 0; sub < nsub; ++sub) {
      const int chunks = KC / 8;  // 16-byte chunks per row per k-stage
      for (int idx = tid; idx < BM * chunks; idx += WARPS * 32) {
        const int row = idx / chunks, k = sub * KC + (idx % chunks) * 8;  // k relative to k_lo
        const bool ok = row < M && k < k_len;
        if (k < kgq * 32) cp_async16(As + row * a_row + k * 2, ok ? A + ((size_t)row * K + k_lo + k) : A, ok ? 16 : 0);
      }
      asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    if constexpr (CK > 1) cluster_wait_started();

    const int g = lane >> 2, t = lane & 3;
    const bool a_lane = BM >= 8 || g < BM;
    const uint32_t a_lane_addr = As + g * a_row + 16 * t;
    for (int r = 0; r < rounds; ++r) {
      // Two accumulator sets, one per k16 step of a k-group: two
      // independent MMA chains instead of one twice as long.
      float acc0[4] = {0.f, 0.f, 0.f, 0.f}, acc1[4] = {0.f, 0.f, 0.f, 0.f};
      for (int sub = 0; sub < nsub; ++sub) {
        const int i = r * nsub + sub, s = i % STAGES;
        const int kb = sub * KC;  // relative to k_lo
        const int groups = (min(KC, k_len - kb) + 31) >> 5;
        const uint32_t b_addr = ring + s * kStageBytes + g * kRowBytes + 16 * t;
        const uint32_t a_addr = a_lane_addr + kb * 2;
        if (r == 0) {
          a_wait(nsub - 1 - sub);  // this thread's copies of k-stage sub have landed,
          consumers_sync();        // and everybody's
        }
        bar_wait(full0 + 8 * s, (uint32_t)((i / STAGES) & 1));
#pragma unroll 2
        for (int j = warp; j < groups; j += WARPS) {
          const bool kin = kb + 32 * j + 8 * t < k_len;
          const uint4 b = kin ? lds128(b_addr + 64 * j) : make_uint4(0u, 0u, 0u, 0u);
          const uint4 lo = a_lane ? lds128(a_addr + 64 * j) : make_uint4(0u, 0u, 0u, 0u);
          const uint4 hi = kHalves > 1 ? lds128(a_addr + 8 * a_row + 64 * j) : make_uint4(0u, 0u, 0u, 0u);
          mma_bf16(acc0, lo.x, hi.x, lo.y, hi.y, b.x, b.y);
          mma_bf16(acc1, lo.z, hi.z, lo.w, hi.w, b.z, b.w);
        }
        __syncwarp();
        if (lane == 0) bar_arrive(empty0 + 8 * s);
      }
      // The warps' partials of the tile meet in part[r % 2] (two buffers: a
      // warp may write round r + 1's before the others have read round r's;
      // round r + 2's waits for the barrier below in round r + 1).
      float* const mine = part + ((r & 1) * WARPS + warp) * 128 + lane * 4;
      *reinterpret_cast<float4*>(mine) =
          make_float4(acc0[0] + acc1[0], acc0[1] + acc1[1], acc0[2] + acc1[2], acc0[3] + acc1[3]);
      consumers_sync();
      // Element e of the 128 held by lane e / 4: row g + 8 (e % 4 / 2),
      // column 2 t + e % 2 (the m16n8 accumulator layout).
      const int n0 = (r * P + p) * 8;
      for (int e = tid; e < 128; e += WARPS * 32) {
        const int el = e >> 2, m = (el >> 2) + 8 * ((e & 3) >> 1), c = 2 * (el & 3) + (e & 1);
        float v = 0.f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) v += part[((r & 1) * WARPS + w) * 128 + e];
        if constexpr (CK == 1) {
          if (m < M && n0 + c < N) C[(size_t)m * N + n0 + c] = __float2bfloat16_rn(v);
        } else {
          if (m < BM) st_cluster(red + ((size_t)((r / CK) * CK + q) * BM + m) * 8 + c, (unsigned)(r % CK), v);
        }
      }
    }
  }

  if constexpr (CK > 1) {
    // Every block's pushes are visible to their owners after this.
    cluster_sync();
    // This block owns rounds r = slot * CK + q: sum their CK partials in order.
    const int owned = rounds > q ? (rounds - q + CK - 1) / CK : 0;
    for (int e = tid; e < owned * BM * 8; e += kThreads) {
      const int slot = e / (BM * 8), m = (e / 8) % BM, c = e % 8;
      const int n = ((slot * CK + q) * P + p) * 8 + c;
      if (m >= M || n >= N) continue;
      float s = 0.f;
#pragma unroll
      for (int qq = 0; qq < CK; ++qq) s += red[((size_t)(slot * CK + qq) * BM + m) * 8 + c];
      C[(size_t)m * N + n] = __float2bfloat16_rn(s);
    }
  }
}

// The verification reference: one output per thread (grid-stride), fp32
// accumulation in k order, rounded to bf16 once.
extern "C" __global__ void gemm_stream_reference(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                                                 int M, int N, int K, int b_nk) {
  const size_t total = (size_t)M * N;
  for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (size_t)gridDim.x * blockDim.x) {
    const size_t m = idx / N, n = idx % N;
    float s = 0.f;
    for (int k = 0; k < K; ++k) {
      const float a = __bfloat162float(A[m * K + k]);
      const float b = __bfloat162float(b_nk ? B[n * K + k] : B[(size_t)k * N + n]);
      s = fmaf(a, b, s);
    }
    C[idx] = __float2bfloat16_rn(s);
  }
}
