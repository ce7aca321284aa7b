// gemm_mma: C = A * B (or A * B^T) in bf16 with fp32 accumulation, on tensor
// cores through mma.sync.m16n8k16 (sm_80 and later; tuned for the H200).
//
//   A: M x K row-major.  B: K x N row-major when b_nk == 0 ("kn"),
//   N x K row-major when b_nk == 1 ("nk", C = A * B^T).  C: M x N row-major.
//   Any M, N, K >= 1.
//
// Launch (exactly):
//   grid  = [ceil_div(M, BM) * ceil_div(N, BN), SPLIT_K]
//   block = [(BM / WM) * (BN / WN) * 32]
//   dynamic shared memory = STAGES * (BM * BK + BK * BN) * 2 bytes (no static shared memory)
//   workspace: SPLIT_K * M * N floats (unused when SPLIT_K == 1)
//   counters:  ceil_div(M, BM) * ceil_div(N, BN) unsigned, zero before the first launch;
//              the kernel leaves them zero again.
//
// Tunables (-DNAME=value): BM, BN, BK block tile; WM, WN warp tile; STAGES
// (2..5) cp.async pipeline depth; SPLIT_K (1 = no split); GROUP_M raster
// swizzle group (1 = row-major raster); PATH (0 = every load path, chosen at
// run time; 1..5 = the one the shape needs, see gemm_mma). Requirements (the spec's constraints):
//   BM % WM == 0, BN % WN == 0, WM % 16 == 0, WN % 16 == 0, BK % 16 == 0,
//   BK and BN powers of two >= 16 (the XOR swizzle permutes within a power of
//   two), SPLIT_K >= 1, GROUP_M >= 1.
//
// The design serves two regimes. Decode shapes (tiny M) are bound by reading
// B once: a 16-row M tile (zero-padded), 16-byte cp.async of B with several
// stages in flight, and split-K so that a small tile grid still fills every
// SM. Large shapes are bound by mma.sync issue: big tiles, XOR-swizzled
// shared memory so ldmatrix is conflict-free, and GROUP_M rasterisation so
// concurrently running blocks share A and B panels in L2.

// No <stdint.h>: NVRTC (tunekit's default compiler) has no such header.
#include <cuda_bf16.h>

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 32
#endif
#ifndef WN
#define WN 32
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
// Which load path is compiled: 0 = all five, chosen at run time from the
// layout and alignment; 1..5 = only that one (see gemm_mma below; the spec
// pins it per problem size).
#ifndef PATH
#define PATH 0
#endif

namespace gemm_mma_detail {

using uint32_t = unsigned int;
using uintptr_t = unsigned long long;  // 64-bit device pointers

constexpr int kWarpsM = BM / WM;
constexpr int kWarpsN = BN / WN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMI = WM / 16;  // m16 tiles per warp
constexpr int kNI = WN / 8;   // n8 tiles per warp
constexpr int kStageA = BM * BK;  // elements
constexpr int kStageB = BK * BN;  // elements, either layout

static_assert(BM % WM == 0 && BN % WN == 0, "warp tile must divide the block tile");
static_assert(WM % 16 == 0, "WM must be a multiple of the m16 MMA");
static_assert(WN % 16 == 0, "WN must be a multiple of 16: B fragments come in n16 pairs from ldmatrix.x4");
static_assert(BK % 16 == 0, "BK must be a multiple of the k16 MMA");
static_assert((BK & (BK - 1)) == 0 && (BN & (BN - 1)) == 0, "BK and BN must be powers of two (swizzle)");
static_assert(STAGES >= 2, "the pipeline needs at least two stages");
static_assert(SPLIT_K >= 1 && GROUP_M >= 1, "SPLIT_K and GROUP_M must be >= 1");

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Shared tiles are stored as rows of 16-byte chunks. ldmatrix reads 8 rows
// of one chunk column in a phase; without a permutation those 8 chunks would
// sit in the same 4 banks whenever a row is a multiple of 128 bytes. XORing
// the chunk index with a function of the row puts the 8 rows of an aligned
// group into 8 distinct 16-byte bank groups. For rows shorter than 128 bytes
// (CPR < 8 chunks) several rows share one 128-byte line, so the XOR key
// changes only every 8/CPR rows and covers only CPR values.
template <int CPR>
__device__ __forceinline__ int swizzle(int row, int chunk) {
  constexpr int kPeriod = CPR >= 8 ? 8 : CPR;
  constexpr int kDiv = CPR >= 8 ? 1 : 8 / CPR;
  return chunk ^ ((row / kDiv) % kPeriod);
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// src_bytes == 0 zero-fills the 16 bytes without reading global memory;
// that is how out-of-range chunks (M, N and K edges) become zeros.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Copies a ROWS x COLS tile (COLS contiguous both in global and shared
// memory) whose top-left global element is (row0, col0) of a row-major
// matrix with leading dimension ld; elements at row >= row_end or
// col >= col_end are zero.
//
// VEC: every row starts 16-byte aligned and col_end % 8 == 0, so each
// 16-byte chunk is either wholly in range or wholly out: one cp.async each.
//
// Otherwise (a leading dimension that is not a multiple of 8, e.g. N = 777)
// cp.async cannot be used: its smallest copy is 4 bytes and such rows are
// only 2-byte aligned. fetch() gathers each chunk into registers ("stash")
// and store() writes it to shared memory; the caller may put the MMAs of a
// k-tile between the two so the global latency is hidden. A chunk whose 8
// elements start at an odd bf16 index is read as the 5 aligned 32-bit words
// covering elements c-1 .. c+8 and realigned with a funnel shift at store
// time (5 registers, not 8 half-filled ones). Chunks at the right edge of
// the matrix (where those words would leave the row) and outside it are
// read element by element with predicates.
template <int ROWS, int COLS, bool VEC>
struct TileLoader {
  static constexpr int kCPR = COLS / 8;
  static constexpr int kChunks = ROWS * kCPR;
  static constexpr int kIters = ceil_div(kChunks, kThreads);
  static constexpr bool kGuard = kChunks % kThreads != 0;  // last iteration has idle threads
  static constexpr int kStashRegs = VEC ? 0 : 5 * kIters + 1;
  static_assert(kIters <= 32, "one shift bit per chunk in a 32-bit mask");

  uint32_t stash[VEC ? 1 : kIters][5];
  uint32_t shifted;  // bit i: chunk i was read from one element before its start

  __device__ __forceinline__ void fetch(__nv_bfloat16* sdst, const __nv_bfloat16* __restrict__ g, int ld, int row0,
                                        int col0, int row_end, int col_end, int tid) {
    if constexpr (!VEC) shifted = 0;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int c = i * kThreads + tid;
      if (kGuard && c >= kChunks) break;
      const int r = c / kCPR;
      const int ch = c % kCPR;
      const int grow = row0 + r;
      const int gcol = col0 + ch * 8;
      if constexpr (VEC) {
        const bool ok = grow < row_end && gcol < col_end;
        // A valid address even when nothing is read.
        const __nv_bfloat16* src = ok ? g + (size_t)grow * ld + gcol : g;
        cp_async16(smem_addr(sdst + r * COLS + swizzle<kCPR>(r, ch) * 8), src, ok ? 16 : 0);
      } else {
        const bool row_ok = grow < row_end;
        const unsigned short* p =
            reinterpret_cast<const unsigned short*>(g) + (row_ok ? (size_t)grow * ld + gcol : 0);
        const bool odd = (reinterpret_cast<uintptr_t>(p) & 2) != 0;
        // Word reads must stay inside this row's valid columns [0, col_end).
        const bool words = row_ok && (odd ? (gcol >= 1 && gcol + 9 <= col_end) : (gcol + 8 <= col_end));
        if (words) {
          const uint32_t* w = reinterpret_cast<const uint32_t*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t(3));
          stash[i][0] = __ldg(w);
          stash[i][1] = __ldg(w + 1);
          stash[i][2] = __ldg(w + 2);
          stash[i][3] = __ldg(w + 3);
          stash[i][4] = odd ? __ldg(w + 4) : 0u;
          shifted |= (odd ? 1u : 0u) << i;
        } else {
#pragma unroll
          for (int e = 0; e < 8; e += 2) {
            const unsigned lo = (row_ok && gcol + e < col_end) ? __ldg(p + e) : 0u;
            const unsigned hi = (row_ok && gcol + e + 1 < col_end) ? __ldg(p + e + 1) : 0u;
            stash[i][e / 2] = lo | (hi << 16);
          }
          stash[i][4] = 0u;
        }
      }
    }
  }

  __device__ __forceinline__ void store(__nv_bfloat16* sdst, int tid) {
    if constexpr (!VEC) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const int c = i * kThreads + tid;
        if (kGuard && c >= kChunks) break;
        const int r = c / kCPR;
        const int ch = c % kCPR;
        const unsigned sh = ((shifted >> i) & 1u) * 16u;
        *reinterpret_cast<uint4*>(sdst + r * COLS + swizzle<kCPR>(r, ch) * 8) =
            make_uint4(__funnelshift_r(stash[i][0], stash[i][1], sh), __funnelshift_r(stash[i][1], stash[i][2], sh),
                       __funnelshift_r(stash[i][2], stash[i][3], sh), __funnelshift_r(stash[i][3], stash[i][4], sh));
      }
    }
  }
};

// Stores two adjacent outputs (r, c) and (r, c + 1); bf16x2 when both are in
// range and the pair is 4-byte aligned (odd N makes every other row odd).
__device__ __forceinline__ void store_c_pair(__nv_bfloat16* __restrict__ C, int M, int N, bool c_aligned, int r, int c,
                                             float v0, float v1) {
  if (r >= M) return;
  const size_t idx = (size_t)r * N + c;
  if (c_aligned && c + 1 < N && (idx & 1) == 0) {
    *reinterpret_cast<__nv_bfloat162*>(C + idx) = __floats2bfloat162_rn(v0, v1);
  } else {
    if (c < N) C[idx] = __float2bfloat16_rn(v0);
    if (c + 1 < N) C[idx + 1] = __float2bfloat16_rn(v1);
  }
}

// Not inlined on purpose: each layout/alignment variant then gets its own
// register allocation. Inlined into one kernel, ptxas was seen to settle on
// 128 registers with spills although every variant alone needs fewer.
template <int B_NK, bool A_VEC, bool B_VEC>
__device__ __noinline__ void gemm_body(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                          __nv_bfloat16* __restrict__ C, float* __restrict__ workspace,
                                          unsigned* __restrict__ counters, int M, int N, int K, bool c_aligned) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* const sA = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* const sB = sA + STAGES * kStageA;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;

  // Raster swizzle: consecutive block indices walk down a column of GROUP_M
  // tile rows before moving right, so the blocks resident at one time touch
  // GROUP_M A panels and few B panels instead of one A panel and all of B.
  const int grid_m = ceil_div(M, BM);
  const int grid_n = ceil_div(N, BN);
  const int pid = blockIdx.x;
  int pid_m, pid_n;
  if (GROUP_M == 1) {
    pid_m = pid / grid_n;
    pid_n = pid % grid_n;
  } else {
    const int in_group = GROUP_M * grid_n;
    const int group = pid / in_group;
    const int first_m = group * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);  // the last group may be short
    pid_m = first_m + (pid % in_group) % group_rows;
    pid_n = (pid % in_group) / group_rows;
  }
  const int m0 = pid_m * BM;
  const int n0 = pid_n * BN;

  // Split z gets k-tiles [kt0, kt1): an even share, so no split is empty
  // while SPLIT_K <= k-tiles; an empty share still runs the epilogue below
  // (writing zeros) so that the tile's arrival count reaches SPLIT_K.
  const int z = SPLIT_K > 1 ? (int)blockIdx.y : 0;
  const int ktiles = ceil_div(K, BK);
  const int kt0 = (int)(((long long)z * ktiles) / SPLIT_K);
  const int kt1 = (int)(((long long)(z + 1) * ktiles) / SPLIT_K);
  const int nkt = kt1 - kt0;

  TileLoader<BM, BK, A_VEC> la;
  TileLoader<B_NK ? BN : BK, B_NK ? BK : BN, B_VEC> lb;

  // Issues the loads of k-tile kt (absolute) into pipeline slot `stage`.
  auto fetch = [&](int kt, int stage) {
    const int k0 = kt * BK;
    la.fetch(sA + stage * kStageA, A, K, m0, k0, M, K, tid);
    if constexpr (B_NK)
      lb.fetch(sB + stage * kStageB, B, K, n0, k0, N, K, tid);
    else
      lb.fetch(sB + stage * kStageB, B, N, k0, n0, K, N, tid);
  };
  auto store = [&](int stage) {
    la.store(sA + stage * kStageA, tid);
    lb.store(sB + stage * kStageB, tid);
  };
  // Keeping a gathered tile in registers across the MMAs hides its latency
  // but costs registers next to the accumulators; past a budget that would
  // cause spills (big warp tiles), write it at once instead and let the
  // other resident warps cover the stall.
  constexpr bool kOverlap = decltype(la)::kStashRegs + decltype(lb)::kStashRegs + kMI * kNI * 4 <= 96;

  float acc[kMI][kNI][4];
#pragma unroll
  for (int i = 0; i < kMI; ++i)
#pragma unroll
    for (int j = 0; j < kNI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

  // Prologue: STAGES-1 tiles in flight. Exactly one commit group per slot,
  // empty or not, so that wait_group<STAGES-2> below always means "the group
  // of the tile about to be used has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < nkt) {
      fetch(kt0 + s, s);
      store(s);  // gathered tiles are written at once here: nothing to overlap yet
    }
    cp_async_commit();
  }

  // Lane-dependent parts of the ldmatrix addresses (see the fragment layouts
  // of mma.m16n8k16): A x4 = rows 0-15 of the m16 tile x two k8 halves;
  // B x4 = two n8 tiles x two k8 halves.
  const int a_row = warp_m * WM + (lane & 15);
  const int a_chunk = lane >> 4;
  // nk: rows are n. Matrix j = lane/8: n8 tile j/2, k half j%2.
  const int bnk_row = warp_n * WN + ((lane >> 4) << 3) + (lane & 7);
  const int bnk_chunk = (lane >> 3) & 1;
  // kn: rows are k (transposed load). Matrix j: k half j%2, n8 tile j/2.
  const int bkn_row = (((lane >> 3) & 1) << 3) + (lane & 7);
  const int bkn_chunk = (warp_n * WN) / 8 + (lane >> 4);

  // Slot indices advance with wrap-around instead of a modulo per k-tile.
  int stage = 0;                // slot of tile `it`
  int next_stage = STAGES - 1;  // slot of tile `it + STAGES - 1`
  for (int it = 0; it < nkt; ++it) {
    cp_async_wait<STAGES - 2>();
    // Makes every thread's copies of tile `it` visible, and guarantees all
    // warps have finished reading slot (it-1)%STAGES, which is refilled next.
    __syncthreads();

    const int next = it + STAGES - 1;
    const bool more = next < nkt;
    if (more) {
      fetch(kt0 + next, next_stage);
      if (!kOverlap) store(next_stage);
    }
    cp_async_commit();

    const uint32_t a_base = smem_addr(sA + stage * kStageA);
    const uint32_t b_base = smem_addr(sB + stage * kStageB);
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint32_t af[kMI][4];
      uint32_t bf[kNI][2];
#pragma unroll
      for (int i = 0; i < kMI; ++i) {
        const int r = a_row + i * 16;
        ldmatrix_x4(af[i], a_base + (r * BK + swizzle<BK / 8>(r, kk * 2 + a_chunk) * 8) * 2);
      }
#pragma unroll
      for (int j = 0; j < kNI / 2; ++j) {
        uint32_t t[4];
        if (B_NK) {
          const int r = bnk_row + j * 16;
          ldmatrix_x4(t, b_base + (r * BK + swizzle<BK / 8>(r, kk * 2 + bnk_chunk) * 8) * 2);
        } else {
          const int r = kk * 16 + bkn_row;
          ldmatrix_x4_trans(t, b_base + (r * BN + swizzle<BN / 8>(r, bkn_chunk + j * 2) * 8) * 2);
        }
        bf[2 * j][0] = t[0];
        bf[2 * j][1] = t[1];
        bf[2 * j + 1][0] = t[2];
        bf[2 * j + 1][1] = t[3];
      }
#pragma unroll
      for (int i = 0; i < kMI; ++i)
#pragma unroll
        for (int j = 0; j < kNI; ++j) mma_bf16(acc[i][j], af[i], bf[j][0], bf[j][1]);
    }

    // Slot next_stage was last read in iteration it-1, before this
    // iteration's barrier; it is next read in iteration `next`, after a later
    // barrier. So the gathered tile can be written now, its loads having had
    // the whole k-tile of MMAs to arrive.
    if (kOverlap && more) store(next_stage);
    stage = stage + 1 == STAGES ? 0 : stage + 1;
    next_stage = next_stage + 1 == STAGES ? 0 : next_stage + 1;
  }
  cp_async_wait<0>();  // only empty groups can remain; do not exit with copies pending

  // Accumulator fragment: acc[i][j][0..1] = (row g, cols 2t, 2t+1),
  // acc[i][j][2..3] = (row g+8, same cols), g = lane/4, t = lane%4.
  const int row_base = m0 + warp_m * WM + (lane >> 2);
  const int col_base = n0 + warp_n * WN + (lane & 3) * 2;

  if constexpr (SPLIT_K == 1) {
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int j = 0; j < kNI; ++j) {
        const int r = row_base + i * 16;
        const int c = col_base + j * 8;
        store_c_pair(C, M, N, c_aligned, r, c, acc[i][j][0], acc[i][j][1]);
        store_c_pair(C, M, N, c_aligned, r + 8, c, acc[i][j][2], acc[i][j][3]);
      }
  } else {
    const size_t plane = (size_t)M * N;
    // Every split publishes its partial tile (in-range elements only).
    float* const mine = workspace + (size_t)z * plane;
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int j = 0; j < kNI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = row_base + i * 16 + h * 8;
          const int c = col_base + j * 8;
          if (r >= M) continue;
          const size_t idx = (size_t)r * N + c;
          const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
          // Odd N (and odd M*N for the plane offset) misaligns every other pair.
          if (c + 1 < N && (reinterpret_cast<uintptr_t>(mine + idx) & 7) == 0) {
            __stcg(reinterpret_cast<float2*>(mine + idx), make_float2(v0, v1));
          } else {
            if (c < N) __stcg(mine + idx, v0);
            if (c + 1 < N) __stcg(mine + idx + 1, v1);
          }
        }
    // Release: each thread orders its own partial stores device-wide, and
    // the barrier makes thread 0's arrival come after all of them.
    __threadfence();
    __syncthreads();
    const int tile = pid_m * grid_n + pid_n;
    unsigned prev = 0;
    if (tid == 0) prev = atomicAdd(&counters[tile], 1u);
    const bool last = __syncthreads_or(tid == 0 && prev == SPLIT_K - 1) != 0;
    if (!last) return;

    // Acquire: the other splits' partials are visible in L2; read them with
    // .cg so no stale L1 line can be used. Summing in split order (own
    // partial from registers at its place) makes C independent of which
    // split happened to arrive last.
    __threadfence();
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int j = 0; j < kNI; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = row_base + i * 16 + h * 8;
          const int c = col_base + j * 8;
          if (r >= M) continue;
          const size_t idx = (size_t)r * N + c;
          float s0 = 0.f, s1 = 0.f;
#pragma unroll 4
          for (int zz = 0; zz < SPLIT_K; ++zz) {
            float v0, v1;
            if (zz == z) {
              v0 = acc[i][j][2 * h];
              v1 = acc[i][j][2 * h + 1];
            } else {
              const float* p = workspace + (size_t)zz * plane + idx;
              v0 = c < N ? __ldcg(p) : 0.f;
              v1 = c + 1 < N ? __ldcg(p + 1) : 0.f;
            }
            s0 += v0;
            s1 += v1;
          }
          store_c_pair(C, M, N, c_aligned, r, c, s0, s1);
        }
    // Every split of this tile has arrived, so nobody else touches the
    // counter in this launch: re-arm it for the next one.
    if (tid == 0) counters[tile] = 0;
  }
}

}  // namespace gemm_mma_detail

extern "C" __global__ void __launch_bounds__(gemm_mma_detail::kThreads, 1)
    gemm_mma(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, float* workspace, unsigned* counters,
             int M, int N, int K, int b_nk) {
  using namespace gemm_mma_detail;
  // 16-byte cp.async needs every row start 16-byte aligned: a leading
  // dimension that is a multiple of 8 elements and an aligned base. Anything
  // else takes the element-wise gather (correct for any shape). K % 8 != 0
  // breaks both A and nk-B, so only three combinations per layout exist.
  const bool a_vec = (K % 8 == 0) && ((reinterpret_cast<gemm_mma_detail::uintptr_t>(A) & 15) == 0);
  const bool b_vec = (b_nk ? (K % 8 == 0) : (N % 8 == 0)) && ((reinterpret_cast<gemm_mma_detail::uintptr_t>(B) & 15) == 0);
  const bool c_aligned = (reinterpret_cast<gemm_mma_detail::uintptr_t>(C) & 3) == 0;
  const int path = b_nk ? (a_vec && b_vec ? 1 : 2) : (a_vec && b_vec ? 3 : a_vec ? 4 : 5);
#if PATH == 0
  // Every path compiled, chosen at run time: one binary for any shape.
  switch (path) {
    case 1: gemm_body<1, true, true>(A, B, C, workspace, counters, M, N, K, c_aligned); break;
    case 2: gemm_body<1, false, false>(A, B, C, workspace, counters, M, N, K, c_aligned); break;
    case 3: gemm_body<0, true, true>(A, B, C, workspace, counters, M, N, K, c_aligned); break;
    case 4: gemm_body<0, true, false>(A, B, C, workspace, counters, M, N, K, c_aligned); break;
    default: gemm_body<0, false, false>(A, B, C, workspace, counters, M, N, K, c_aligned); break;
  }
#else
  // One path, fixed when compiled: a fifth of the build time, which is what
  // a tuner compiling hundreds of variants per shape pays. A launch whose
  // shape needs another path stops with an error instead of a wrong answer.
  if (path != PATH) __trap();
  constexpr int kLayout = PATH <= 2 ? 1 : 0;
  gemm_body<kLayout, PATH == 1 || PATH == 3 || PATH == 4, PATH == 1 || PATH == 3>(A, B, C, workspace, counters, M, N,
                                                                                   K, c_aligned);
#endif
}

// The verification reference: one output per thread (grid-stride, so any
// launch covers C), fp32 accumulation in k order, rounded to bf16 once.
extern "C" __global__ void gemm_reference(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                                          float* workspace, unsigned* counters, int M, int N, int K, int b_nk) {
  (void)workspace;
  (void)counters;
  const size_t total = (size_t)M * N;
  for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (size_t)gridDim.x * blockDim.x) {
    const size_t m = idx / N;
    const size_t n = idx % N;
    float s = 0.f;
    for (int k = 0; k < K; ++k) {
      const float a = __bfloat162float(A[m * K + k]);
      const float b = __bfloat162float(b_nk ? B[n * K + k] : B[(size_t)k * N + n]);
      s = fmaf(a, b, s);
    }
    C[idx] = __float2bfloat16_rn(s);
  }
}
