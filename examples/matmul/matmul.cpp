// tunekit example kernel: single-precision GEMM  C = A * B  (row-major).
//
//   A is M x K, B is K x N, C is M x N; any M, N, K >= 0.
//
// A BLIS-style blocked GEMM whose structure is chosen by preprocessor macros
// (every macro has a default, so the file compiles without any -D):
//
//   MC, KC, NC   cache-block sizes of the three block loops (ic, pc, jc).
//                A block of MC x KC of A is packed into MR-row slivers and a
//                panel of KC x NC of B into NR-column slivers, both in aligned
//                buffers, zero-padded at the edges.
//   MR, NR       the register tile: the micro-kernel keeps an MR x NR block of
//                C in MR * NR/VL vector registers (VL = 16 floats with
//                AVX-512, 8 with AVX, 4 otherwise); NR must be a multiple of
//                VL. Per k step it loads NR/VL vectors of B, broadcasts MR
//                values of A and issues MR * NR/VL FMAs.
//   UNROLL       unroll factor of the micro-kernel's k loop.
//   LOOP_ORDER   0: jc -> pc -> ic (BLIS: the B panel is packed once per
//                   (jc, pc) and reused by every A block);
//                1: ic -> pc -> jc (the A block is packed once per (ic, pc)
//                   and B panels are re-packed for every ic block).
//   PAR          which dimension the OpenMP threads split: 0 = M (the ic
//                loop), 1 = N (the jc loop). When that loop is the outermost
//                of LOOP_ORDER the threads work on disjoint parts of C with
//                private buffers; otherwise they pack the outer panel
//                together into a shared buffer and split the inner loop.
//   THREADS      number of OpenMP threads; 0 = omp_get_max_threads().
//
// The tuner compiles this file with -O3 -march=native -fopenmp -shared -fPIC
// and -D for each parameter. Requirements: MC % MR == 0, NC % NR == 0,
// NR % VL == 0.
//
// matmul_naive is the reference: an i-k-j triple loop that accumulates each
// row of C in double.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

// ---- tunables ----------------------------------------------------------------
// Defaults: a deliberately middling configuration (the spec's `default`): a
// 2 x 16 register tile exposes the FMA latency, and B is re-packed for every A
// block. Tuned configs are about twice as fast.
#ifndef MC
#define MC 64
#endif
#ifndef KC
#define KC 512
#endif
#ifndef NC
#define NC 256
#endif
#ifndef MR
#define MR 2
#endif
#ifndef NR
#define NR 16
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef LOOP_ORDER
#define LOOP_ORDER 1
#endif
#ifndef PAR
#define PAR 0
#endif
#ifndef THREADS
#define THREADS 0
#endif

namespace {

// ---- vector type ----------------------------------------------------------
#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif
constexpr int VL = kVecBytes / int(sizeof(float));
typedef float vf __attribute__((vector_size(kVecBytes)));                // aligned
typedef float vfu __attribute__((vector_size(kVecBytes), aligned(4)));   // unaligned

constexpr int kMC = MC, kKC = KC, kNC = NC, kMR = MR, kNR = NR, kUnroll = UNROLL;
static_assert(kMR >= 1 && kNR >= 1 && kMC >= 1 && kKC >= 1 && kNC >= 1 && kUnroll >= 1,
              "block sizes must be positive");
static_assert(kNR % VL == 0, "NR must be a multiple of the SIMD width in floats");
static_assert(kMC % kMR == 0, "MC must be a multiple of MR");
static_assert(kNC % kNR == 0, "NC must be a multiple of NR");
static_assert(LOOP_ORDER == 0 || LOOP_ORDER == 1, "LOOP_ORDER must be 0 or 1");
static_assert(PAR == 0 || PAR == 1, "PAR must be 0 (split M) or 1 (split N)");
constexpr int NV = kNR / VL;  // vectors per row of the register tile

// ---- aligned scratch buffers ----------------------------------------------
struct Buffer {
  float* p = nullptr;
  std::size_t n = 0;
  float* get(std::size_t count) {
    if (count > n) {
      std::free(p);
      std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
      p = static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!p) throw std::bad_alloc();
      n = count;
    }
    return p;
  }
  ~Buffer() { std::free(p); }
};

// Per-thread buffers (OpenMP threads persist across calls, so these are
// allocated once) and one shared buffer for cooperative packing.
thread_local Buffer tl_a, tl_b;
Buffer g_shared;

constexpr std::size_t kAPanel = std::size_t(kMC) * kKC;  // floats in a packed A block
constexpr std::size_t kBPanel = std::size_t(kKC) * kNC;  // floats in a packed B panel

// ---- packing --------------------------------------------------------------
// A block rows [i0, i0+mc), cols [p0, p0+kc) -> slivers of MR rows, each
// stored k-major (MR consecutive floats per k). Sliver s starts at s*MR*kc.
inline void pack_a_sliver(const float* A, int K, int i0, int mrows, int p0, int kc, float* dst) {
  if (mrows == kMR) {
    const float* rows[kMR];
    for (int i = 0; i < kMR; ++i) rows[i] = A + std::size_t(i0 + i) * K + p0;
    for (int k = 0; k < kc; ++k) {
#pragma GCC unroll 32
      for (int i = 0; i < kMR; ++i) dst[k * kMR + i] = rows[i][k];
    }
  } else {
    for (int k = 0; k < kc; ++k)
      for (int i = 0; i < kMR; ++i)
        dst[k * kMR + i] = i < mrows ? A[std::size_t(i0 + i) * K + p0 + k] : 0.0f;
  }
}

// B panel rows [p0, p0+kc), cols [j0, j0+nc) -> slivers of NR columns, each
// stored k-major (NR consecutive floats per k). Sliver t starts at t*NR*kc.
inline void pack_b_sliver(const float* B, int N, int j0, int ncols, int p0, int kc, float* dst) {
  const float* src = B + std::size_t(p0) * N + j0;
  if (ncols == kNR) {
    for (int k = 0; k < kc; ++k) {
      const float* s = src + std::size_t(k) * N;
      float* d = dst + std::size_t(k) * kNR;
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) *reinterpret_cast<vf*>(d + v * VL) = *reinterpret_cast<const vfu*>(s + v * VL);
    }
  } else {
    for (int k = 0; k < kc; ++k) {
      const float* s = src + std::size_t(k) * N;
      float* d = dst + std::size_t(k) * kNR;
      int j = 0;
      for (; j < ncols; ++j) d[j] = s[j];
      for (; j < kNR; ++j) d[j] = 0.0f;
    }
  }
}

// Packs slivers [s_begin, s_end) of an A block (mc rows starting at i0).
inline void pack_a(const float* A, int K, int i0, int mc, int p0, int kc, float* buf, int s_begin, int s_end) {
  for (int s = s_begin; s < s_end; ++s) {
    int r = s * kMR;
    int mrows = mc - r < kMR ? mc - r : kMR;
    pack_a_sliver(A, K, i0 + r, mrows, p0, kc, buf + std::size_t(s) * kMR * kc);
  }
}

inline void pack_b(const float* B, int N, int j0, int nc, int p0, int kc, float* buf, int t_begin, int t_end) {
  for (int t = t_begin; t < t_end; ++t) {
    int c = t * kNR;
    int ncols = nc - c < kNR ? nc - c : kNR;
    pack_b_sliver(B, N, j0 + c, ncols, p0, kc, buf + std::size_t(t) * kNR * kc);
  }
}

// ---- micro-kernel ---------------------------------------------------------
// C[0:m, 0:n] (=|+=) Apack(MR x kc) * Bpack(kc x NR). `first`: overwrite C
// (first k block) instead of accumulating.
__attribute__((always_inline)) inline void
micro_kernel(int kc, const float* __restrict a, const float* __restrict b, float* __restrict c, int ldc,
             bool first, int m, int n) {
  vf acc[kMR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = vf{};

  auto step = [&](const float* __restrict ak, const float* __restrict bk) __attribute__((always_inline)) {
    vf bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      bv[v] = *reinterpret_cast<const vf*>(bk + v * VL);
#if defined(__x86_64__) || defined(__i386__)
      // Keep B in a register: otherwise GCC may fold the B load into every
      // FMA (MR loads per vector of B) and the kernel becomes load-bound.
      __asm__("" : "+v"(bv[v]));
#endif
    }
#pragma GCC unroll 32
    for (int i = 0; i < kMR; ++i) {
      const float ai = ak[i];  // scalar * vector broadcasts (vbroadcastss / {1to16})
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] += ai * bv[v];
    }
  };

  int k = 0;
  for (; k + kUnroll <= kc; k += kUnroll) {
#pragma GCC unroll 64
    for (int u = 0; u < kUnroll; ++u) step(a + (k + u) * kMR, b + (k + u) * kNR);
  }
  for (; k < kc; ++k) step(a + k * kMR, b + k * kNR);

  if (m == kMR && n == kNR) {
#pragma GCC unroll 32
    for (int i = 0; i < kMR; ++i) {
      float* ci = c + std::size_t(i) * ldc;
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        vfu* p = reinterpret_cast<vfu*>(ci + v * VL);
        if (first)
          *p = acc[i][v];
        else
          *p = *p + acc[i][v];
      }
    }
  } else {
    alignas(64) float tile[kMR * kNR];
#pragma GCC unroll 32
    for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) *reinterpret_cast<vf*>(tile + i * kNR + v * VL) = acc[i][v];
    for (int i = 0; i < m; ++i) {
      float* ci = c + std::size_t(i) * ldc;
      const float* ti = tile + i * kNR;
      if (first)
        for (int j = 0; j < n; ++j) ci[j] = ti[j];
      else
        for (int j = 0; j < n; ++j) ci[j] += ti[j];
    }
  }
}

// ---- macro-kernel ---------------------------------------------------------
// C[i0:i0+mc, j0:j0+nc] (=|+=) packed A block * packed B panel.
inline void macro_kernel(int mc, int nc, int kc, const float* ap, const float* bp, float* C, int N, int i0, int j0,
                         bool first) {
  for (int jr = 0; jr < nc; jr += kNR) {
    int n = nc - jr < kNR ? nc - jr : kNR;
    const float* b = bp + std::size_t(jr) * kc;  // sliver jr/NR starts at (jr/NR)*NR*kc
    for (int ir = 0; ir < mc; ir += kMR) {
      int m = mc - ir < kMR ? mc - ir : kMR;
      const float* a = ap + std::size_t(ir) * kc;
      micro_kernel(kc, a, b, C + std::size_t(i0 + ir) * N + j0 + jr, N, first, m, n);
    }
  }
}

// ---- work splitting ---------------------------------------------------------
inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Splits [0, total) into `parts` contiguous ranges whose boundaries are
// multiples of `align`; returns part `idx` as [lo, hi).
inline void split_range(int total, int parts, int idx, int align, int& lo, int& hi) {
  int units = ceil_div(total, align);
  int base = units / parts, extra = units % parts;
  int u0 = idx * base + (idx < extra ? idx : extra);
  int u1 = u0 + base + (idx < extra ? 1 : 0);
  lo = u0 * align < total ? u0 * align : total;
  hi = u1 * align < total ? u1 * align : total;
}

// ---- drivers ----------------------------------------------------------------
// All drivers run inside an OpenMP parallel region (or serially with tid=0,
// nth=1) and compute C = A*B.

#if LOOP_ORDER == 0
// jc -> pc -> ic.
#if PAR == 1
// Threads split N: independent, private buffers.
void driver(const float* A, const float* B, float* C, int M, int N, int K, int tid, int nth) {
  int n_lo, n_hi;
  split_range(N, nth, tid, kNR, n_lo, n_hi);
  float* ap = tl_a.get(kAPanel);
  float* bp = tl_b.get(kBPanel);
  for (int jc = n_lo; jc < n_hi; jc += kNC) {
    int nc = n_hi - jc < kNC ? n_hi - jc : kNC;
    for (int pc = 0; pc < K; pc += kKC) {
      int kc = K - pc < kKC ? K - pc : kKC;
      pack_b(B, N, jc, nc, pc, kc, bp, 0, ceil_div(nc, kNR));
      for (int ic = 0; ic < M; ic += kMC) {
        int mc = M - ic < kMC ? M - ic : kMC;
        pack_a(A, K, ic, mc, pc, kc, ap, 0, ceil_div(mc, kMR));
        macro_kernel(mc, nc, kc, ap, bp, C, N, ic, jc, pc == 0);
      }
    }
  }
}
#else
// Threads split M inside the B panel loop: B panel packed cooperatively into
// a shared buffer, A blocks private.
void driver(const float* A, const float* B, float* C, int M, int N, int K, int tid, int nth) {
  int m_lo, m_hi;
  split_range(M, nth, tid, kMR, m_lo, m_hi);
  float* ap = tl_a.get(kAPanel);
  float* bp = g_shared.p;
  for (int jc = 0; jc < N; jc += kNC) {
    int nc = N - jc < kNC ? N - jc : kNC;
    for (int pc = 0; pc < K; pc += kKC) {
      int kc = K - pc < kKC ? K - pc : kKC;
      int t_lo, t_hi;
      split_range(ceil_div(nc, kNR), nth, tid, 1, t_lo, t_hi);
      pack_b(B, N, jc, nc, pc, kc, bp, t_lo, t_hi);
#pragma omp barrier
      for (int ic = m_lo; ic < m_hi; ic += kMC) {
        int mc = m_hi - ic < kMC ? m_hi - ic : kMC;
        pack_a(A, K, ic, mc, pc, kc, ap, 0, ceil_div(mc, kMR));
        macro_kernel(mc, nc, kc, ap, bp, C, N, ic, jc, pc == 0);
      }
#pragma omp barrier
    }
  }
}
#endif
constexpr std::size_t kSharedFloats = PAR == 0 ? kBPanel : 0;

#else  // LOOP_ORDER == 1
// ic -> pc -> jc.
#if PAR == 0
// Threads split M: independent, private buffers.
void driver(const float* A, const float* B, float* C, int M, int N, int K, int tid, int nth) {
  int m_lo, m_hi;
  split_range(M, nth, tid, kMR, m_lo, m_hi);
  float* ap = tl_a.get(kAPanel);
  float* bp = tl_b.get(kBPanel);
  for (int ic = m_lo; ic < m_hi; ic += kMC) {
    int mc = m_hi - ic < kMC ? m_hi - ic : kMC;
    for (int pc = 0; pc < K; pc += kKC) {
      int kc = K - pc < kKC ? K - pc : kKC;
      pack_a(A, K, ic, mc, pc, kc, ap, 0, ceil_div(mc, kMR));
      for (int jc = 0; jc < N; jc += kNC) {
        int nc = N - jc < kNC ? N - jc : kNC;
        pack_b(B, N, jc, nc, pc, kc, bp, 0, ceil_div(nc, kNR));
        macro_kernel(mc, nc, kc, ap, bp, C, N, ic, jc, pc == 0);
      }
    }
  }
}
#else
// Threads split N inside the A block loop: A block packed cooperatively into
// a shared buffer, B panels private.
void driver(const float* A, const float* B, float* C, int M, int N, int K, int tid, int nth) {
  int n_lo, n_hi;
  split_range(N, nth, tid, kNR, n_lo, n_hi);
  float* ap = g_shared.p;
  float* bp = tl_b.get(kBPanel);
  for (int ic = 0; ic < M; ic += kMC) {
    int mc = M - ic < kMC ? M - ic : kMC;
    for (int pc = 0; pc < K; pc += kKC) {
      int kc = K - pc < kKC ? K - pc : kKC;
      int s_lo, s_hi;
      split_range(ceil_div(mc, kMR), nth, tid, 1, s_lo, s_hi);
      pack_a(A, K, ic, mc, pc, kc, ap, s_lo, s_hi);
#pragma omp barrier
      for (int jc = n_lo; jc < n_hi; jc += kNC) {
        int nc = n_hi - jc < kNC ? n_hi - jc : kNC;
        pack_b(B, N, jc, nc, pc, kc, bp, 0, ceil_div(nc, kNR));
        macro_kernel(mc, nc, kc, ap, bp, C, N, ic, jc, pc == 0);
      }
#pragma omp barrier
    }
  }
}
#endif
constexpr std::size_t kSharedFloats = PAR == 1 ? kAPanel : 0;
#endif

}  // namespace

extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (std::size_t i = 0; i < std::size_t(M) * N; ++i) C[i] = 0.0f;
    return;
  }
  if (kSharedFloats) g_shared.get(kSharedFloats);
#ifdef _OPENMP
  int nth = THREADS > 0 ? THREADS : omp_get_max_threads();
  // No point in more threads than register tiles along the split dimension.
  int tiles = PAR == 0 ? ceil_div(M, kMR) : ceil_div(N, kNR);
  if (nth > tiles) nth = tiles;
  if (nth < 1) nth = 1;
  if (nth == 1) {
    driver(A, B, C, M, N, K, 0, 1);
    return;
  }
#pragma omp parallel num_threads(nth)
  driver(A, B, C, M, N, K, omp_get_thread_num(), omp_get_num_threads());
#else
  driver(A, B, C, M, N, K, 0, 1);
#endif
}

// Reference: i-k-j triple loop, each row of C accumulated in double.
extern "C" void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  std::vector<double> row(N > 0 ? N : 0);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) row[j] = 0.0;
    for (int k = 0; k < K; ++k) {
      double a = A[std::size_t(i) * K + k];
      const float* b = B + std::size_t(k) * N;
      for (int j = 0; j < N; ++j) row[j] += a * double(b[j]);
    }
    for (int j = 0; j < N; ++j) C[std::size_t(i) * N + j] = float(row[j]);
  }
}
