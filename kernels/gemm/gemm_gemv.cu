// gemm_gemv: C = A * B^T for the smallest M (1 to 8), bf16 in and out, fp32
// accumulation on the CUDA cores. B streams from DRAM by 16-byte register
// loads, each warp load one contiguous run of 512 bytes (or of whole short
// rows); shared memory holds only the partial sums of warps that split a
// row (WK > 1), and none at all with WK = 1.
//
// Why a third decode kernel next to gemm_skinny and gemm_stream
// (lab/runs/issue-5-run-10.md, -12 and -14):
// - After the write flush, contiguous 16-byte register loads read 32 MiB in
//   14.0-14.1 us, within 2% of the fastest way found (evict-first bulk
//   copies, 13.9 us). gemm_skinny's mma fragment pattern (a warp load is
//   8 rows x 64 bytes) took 15.9 us before any arithmetic.
// - gemm_stream's bulk copies land in shared memory. A kernel that asks for
//   shared memory right after the flush pays for the L1 / shared split
//   change: 0.3-0.9 us (carveout_probe.py), and gemm_stream sits 1.5-2 us
//   above the bare read at (1, 4096, 4096).
// - At M <= 8 the products fit the CUDA cores: 8 * M FMAs per 16 bytes of B,
//   so M = 1 needs no tensor-core fragment layout, and every lane may read
//   whatever contiguous bytes it likes.
//
//   A: M x K row-major, B: N x K row-major ("nk"), C: M x N row-major.
//   1 <= M <= BM <= 8, N >= 1, K % 8 == 0 (16-byte rows), A and B 16-byte
//   aligned, b_nk == 1; anything else stops with __trap() instead of a wrong
//   answer.
//
// Launch (exactly):
//   grid  = [ceil_div(ceil_div(R, ceil_div(R, sm_count * BPS * T)), T)], where
//           R = ceil_div(N, RU * 32 / LR) row groups and T = WARPS / WK teams
//           per block: at most BPS blocks per SM, and the fewest that give
//           each team as many row groups (any grid computes C; this one
//           balances the work)
//   block = [WARPS * 32], no dynamic shared memory, no workspace; with
//   WK > 1, 2 * WARPS * RU * (32 / LR) * BM floats of static shared memory
//
// Tunables (-DNAME=value):
//   BM     rows of A computed (1, 2, 4 or 8); the spec pins it to the
//          smallest value >= M, rows M..BM-1 are skipped
//   LR     lanes per row of B (4, 8, 16 or 32): a warp works on 32 / LR
//          consecutive rows at once
//   KU     16-byte chunks per lane per row in one k-step (loads in flight)
//   RU     row groups of 32 / LR rows that a warp works on at once
//   WARPS  warps per block
//   WK     warps of a block that split each row group's k-steps (a team);
//          1 keeps the kernel free of shared memory and barriers
//   BPS    blocks per SM: the grid's size and the launch bounds, so the whole
//          grid is resident at once
//   PIPE   items (k-steps of a row group) whose loads are in flight while
//          the FMAs of the current one wait for its data: 0 to 3
//   EVICT  1: B's loads carry an L2 evict-first cache policy
//
// Work. A row group is G = RU * 32 / LR consecutive rows of B. The grid's
// teams of WK warps take row groups in turn (team t takes groups t, t + T,
// t + 2T, ...), and warp wk of a team takes k-steps wk, wk + WK, ... of each.
// Lane l serves row (l / LR) of each of the warp's RU sub-groups, and
// 16-byte chunks c = c0 + u * LR + l % LR (u < KU) of that row in the
// k-step that starts at chunk c0: with LR = 32 a warp load is 512
// contiguous bytes of one row; with a smaller LR it is 32 / LR neighbouring
// segments of LR * 16 bytes, one run of memory when a row is that long.
// A's matching chunks come through L1 (A is read by every warp: a few KiB).
//
// Why teams (lab/runs/issue-5-run-14.md): with a warp per row (WK = 1)
// the grid works on every row of (1, 4096, 4096) at once, and in that order
// the arithmetic cost 1.8 us over the bare read (lab/probes/gemv_probe.py:
// 16.3 against 14.5 us); with the warps of a block splitting each row, the
// grid reads a window of whole rows in address order and the arithmetic
// cost nothing measurable there. Tuned, the best team configs (WK = 8) took
// 15.1-15.25 us, the best WK = 1 configs 16.6-16.8 us.
//
// Each lane sums its products in fp32. At the end of its share of a row
// group the LR lanes of a row add their sums by a butterfly of shuffles; the
// lane whose index (mod LR) equals the output's index among the group's
// outputs of that row stores it (WK == 1), or puts it in shared memory,
// where after the team's barrier the team adds the WK partial sums in wk
// order and stores C.
//
// Edges: a chunk at or past K / 8, and every chunk of a row at or past N,
// is not loaded and reads as zero; rows of A at or past M are skipped.

// No <stdint.h>: NVRTC (tunekit's default compiler) has no such header.
#include <cuda_bf16.h>

#ifndef BM
#define BM 1
#endif
#ifndef LR
#define LR 32
#endif
#ifndef KU
#define KU 4
#endif
#ifndef RU
#define RU 1
#endif
#ifndef WARPS
#define WARPS 8
#endif
#ifndef BPS
#define BPS 4
#endif
#ifndef PIPE
#define PIPE 0
#endif
#ifndef WK
#define WK 1
#endif
#ifndef EVICT
#define EVICT 0
#endif

namespace gemm_gemv_detail {

using uint32_t = unsigned int;
using uint64_t = unsigned long long;

constexpr int kRowsPerLoad = 32 / LR;        // rows one warp load touches
constexpr int kGroup = RU * kRowsPerLoad;    // rows per row group
constexpr int kTeams = WARPS / WK;           // row groups a block works on at once

static_assert(BM == 1 || BM == 2 || BM == 4 || BM == 8, "BM must be 1, 2, 4 or 8");
static_assert(LR == 4 || LR == 8 || LR == 16 || LR == 32, "LR must be 4, 8, 16 or 32");
static_assert(KU >= 1 && KU <= 16, "KU must be 1..16");
static_assert(RU >= 1 && RU <= 8, "RU must be 1..8");
static_assert(WARPS >= 1 && WARPS <= 32, "WARPS must be 1..32");
static_assert(BPS >= 1 && BPS <= 32, "BPS must be 1..32");
static_assert(PIPE >= 0 && PIPE <= 3, "PIPE must be 0..3");
static_assert(WK >= 1 && WARPS % WK == 0 && (WK == 1 || kTeams <= 15),
              "WK must divide WARPS, and leave at most 15 teams (named barriers 1..15) when WK > 1");

// A team's WK warps wait for each other (named barrier 1 + team).
__device__ __forceinline__ void team_sync(int team) {
  asm volatile("bar.sync %0, %1;" ::"r"(1 + team), "n"(WK * 32) : "memory");
}

__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// B is read once: no L1 allocation, and optionally first out of L2 (after a
// write flush, a streamed line should replace another streamed line, not one
// of the flush's dirty lines whose write-back would share the DRAM).
__device__ __forceinline__ uint4 load_b(const uint4* p, uint64_t policy) {
  uint4 v;
  if (EVICT)
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  return v;
}

// A is read by every warp: through L1.
__device__ __forceinline__ uint4 load_a(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// bf16 is the top half of an fp32: the low element of a pair shifts up, the
// high one is masked.
__device__ __forceinline__ float lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

// The k-step's B chunks of the warp's RU sub-groups; chunks past the row's
// end or rows past N are zero (and not loaded).
__device__ __forceinline__ void load_step(uint4 (&b)[RU][KU], const uint4* B4, long long row0, int c0, int sub,
                                          int cl, int N, int kch, uint64_t policy) {
#pragma unroll
  for (int r = 0; r < RU; ++r) {
    const long long row = row0 + r * kRowsPerLoad + sub;
#pragma unroll
    for (int u = 0; u < KU; ++u) {
      const int c = c0 + u * LR + cl;
      b[r][u] = (row < N && c < kch) ? load_b(B4 + row * kch + c, policy) : make_uint4(0, 0, 0, 0);
    }
  }
}

__device__ __forceinline__ void fma_step(float (&acc)[RU][BM], const uint4 (&b)[RU][KU], const uint4* A4, int c0,
                                         int cl, int M, int kch) {
#pragma unroll
  for (int u = 0; u < KU; ++u) {
    const int c = c0 + u * LR + cl;
    if (c >= kch) continue;  // the B chunks are zero; A must not be read past its rows
    float bf[RU][8];
#pragma unroll
    for (int r = 0; r < RU; ++r) {
      const uint32_t w[4] = {b[r][u].x, b[r][u].y, b[r][u].z, b[r][u].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        bf[r][2 * j] = lo(w[j]);
        bf[r][2 * j + 1] = hi(w[j]);
      }
    }
#pragma unroll
    for (int m = 0; m < BM; ++m) {
      if (m >= M) break;
      const uint4 av = load_a(A4 + (long long)m * kch + c);
      const uint32_t w[4] = {av.x, av.y, av.z, av.w};
      float af[8];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        af[2 * j] = lo(w[j]);
        af[2 * j + 1] = hi(w[j]);
      }
#pragma unroll
      for (int r = 0; r < RU; ++r)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[r][m] = fmaf(af[j], bf[r][j], acc[r][m]);
    }
  }
}

}  // namespace gemm_gemv_detail

extern "C" __global__ void __launch_bounds__(WARPS * 32, BPS)
    gemm_gemv(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K, int b_nk) {
  using namespace gemm_gemv_detail;
  // The teams' partial sums (WK > 1 only: with WK == 1 the kernel uses no
  // shared memory, see above).
  __shared__ float part[2][WK > 1 ? kTeams : 1][WK][WK > 1 ? kGroup * BM : 1];
  {
    // Requirements (the spec's constraints); a launch outside them is an
    // error instead of a wrong answer or an out-of-bounds access.
    const bool aligned = ((reinterpret_cast<uint64_t>(A) | reinterpret_cast<uint64_t>(B)) & 15) == 0;
    if (b_nk != 1 || M < 1 || M > BM || N < 1 || K < 8 || (K & 7) != 0 || !aligned || blockDim.x != WARPS * 32)
      __trap();
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int sub = lane / LR, cl = lane % LR;
  const int team = warp / WK, wk = warp % WK;  // row team of the block, and this warp's place in it
  const int kch = K >> 3;                      // 16-byte chunks per row
  const int step = LR * KU;
  const int steps = (kch + step - 1) / step;   // k-steps per row group
  // this warp's k-steps of each row group: wk, wk + WK, ...
  const int mine = (steps - wk + WK - 1) / WK;
  if (mine < 1) __trap();  // WK > steps (the spec rules it out): a warp with no share would skip the sums
  const long long teams = (long long)gridDim.x * kTeams;
  const long long groups = ((long long)N + kGroup - 1) / kGroup;
  const uint4* B4 = reinterpret_cast<const uint4*>(B);
  const uint4* A4 = reinterpret_cast<const uint4*>(A);
  const uint64_t policy = EVICT ? evict_first_policy() : 0;

  // The warp's items, in order: (row group g, its j-th k-step of g) for
  // g = t, t + T, ... (t this team's index in the grid, T the grid's teams).
  // Loads run PIPE items ahead of the FMAs, across row groups too, so a
  // warp whose share of a row is one k-step still has its next row in flight
  // while it adds and stores this one.
  long long lg = (long long)blockIdx.x * kTeams + team;  // load cursor
  int lj = 0;
  long long g = lg;  // FMA cursor
  int j = 0;
  uint4 b[PIPE + 1][RU][KU];
#pragma unroll
  for (int p = 0; p <= PIPE; ++p) {
    // (past the last group, rows are >= N: nothing is loaded)
    load_step(b[p], B4, lg * kGroup, (wk + lj * WK) * step, sub, cl, N, kch, policy);
    if (++lj == mine) lj = 0, lg += teams;
  }
  float acc[RU][BM];
#pragma unroll
  for (int r = 0; r < RU; ++r)
#pragma unroll
    for (int m = 0; m < BM; ++m) acc[r][m] = 0.f;
  int parity = 0;  // which half of `part` this row group's sums use (WK > 1)

  while (g < groups) {
    fma_step(acc, b[0], A4, (wk + j * WK) * step, cl, M, kch);
#pragma unroll
    for (int p = 0; p < PIPE; ++p)
#pragma unroll
      for (int r = 0; r < RU; ++r)
#pragma unroll
        for (int u = 0; u < KU; ++u) b[p][r][u] = b[p + 1][r][u];
    load_step(b[PIPE], B4, lg * kGroup, (wk + lj * WK) * step, sub, cl, N, kch, policy);
    if (++lj == mine) lj = 0, lg += teams;

    if (++j < mine) continue;
    // This warp's share of the row group is done. The LR lanes of each row
    // add their sums (xor offsets below LR stay in the row's aligned group
    // of lanes); output o = (row in group, m) then belongs to lane o mod LR.
    const long long row0 = g * kGroup;
#pragma unroll
    for (int r = 0; r < RU; ++r)
#pragma unroll
      for (int m = 0; m < BM; ++m) {
        float v = acc[r][m];
        acc[r][m] = 0.f;
#pragma unroll
        for (int off = LR / 2; off >= 1; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if ((r * BM + m) % LR != cl) continue;
        const int o = (r * kRowsPerLoad + sub) * BM + m;
        if (WK == 1) {
          const long long row = row0 + r * kRowsPerLoad + sub;
          if (m < M && row < N) C[(long long)m * N + row] = __float2bfloat16_rn(v);
        } else {
          part[parity][team][wk][o] = v;
        }
      }
    if (WK > 1) {
      // The team's WK partial sums meet in shared memory and are added in
      // wk order, so C does not depend on which warp finished first. Two
      // halves of `part`: the next group's stores go to the other half, and
      // the group after that passes the next barrier only once every reader
      // of this one has arrived there.
      team_sync(team);
      for (int o = wk * 32 + lane; o < kGroup * BM; o += WK * 32) {
        float v = 0.f;
#pragma unroll
        for (int q = 0; q < WK; ++q) v += part[parity][team][q][o];
        const int m = o % BM;
        const long long row = row0 + o / BM;
        if (m < M && row < N) C[(long long)m * N + row] = __float2bfloat16_rn(v);
      }
      parity ^= 1;
    }
    j = 0;
    g += teams;
  }
}

// The plain reference tunekit verifies against: one thread per output, fp32
// accumulation in k order.
extern "C" __global__ void gemm_gemv_reference(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
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
