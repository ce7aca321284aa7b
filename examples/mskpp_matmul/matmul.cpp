// The msKPP basic-matmul walkthrough, on the CPU: C = A * B (row-major,
// A is M x K, B is K x N, C is M x N, any sizes).
//
// As in msKPP's basic_matmul, the kernel is a template over two tile
// shapes, and the lines that fix them carry `// tunable` annotations:
//
//   L1TileShape  <m1, n1, k1>: the block of C computed at a time and the
//                depth of each step; the A and B blocks of a step are
//                copied into contiguous, zero-padded buffers ("L1").
//   L0TileShape  <m0, n0, k0>: the register tile ("L0C") of C accumulated
//                in local variables, fed k0 columns of A at a time.
//                L0 must divide L1 in every dimension.
//
// tunekit rewrites the two annotated lines per config: the first is a
// `// tunable` line (the value after '=' is replaced), the second a
// `// tunable: L0_TILE` line (replaced whole by the config's L0_TILE).
// Without tunekit the file compiles as it is, with the defaults below.
//
// matmul_naive is the reference: the i-k-j triple loop, summed in double.

#include <algorithm>
#include <cstring>
#include <vector>

template <int M_, int N_, int K_>
struct GemmShape {
  static constexpr int M = M_, N = N_, K = K_;
};

using L1TileShape = GemmShape<128, 128, 128>;  // tunable
using L0TileShape = GemmShape<4, 16, 64>;  // tunable: L0_TILE

template <class L1, class L0>
void basic_matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  static_assert(L1::M % L0::M == 0 && L1::N % L0::N == 0 && L1::K % L0::K == 0,
                "each L0 tile dimension must divide the L1 tile's");
  std::vector<float> a1(static_cast<std::size_t>(L1::M) * L1::K);  // A block, m1 x k1
  std::vector<float> b1(static_cast<std::size_t>(L1::K) * L1::N);  // B block, k1 x n1
  std::vector<float> c1(static_cast<std::size_t>(L1::M) * L1::N);  // C block, m1 x n1
  for (int m = 0; m < M; m += L1::M) {
    const int mb = std::min(L1::M, M - m);
    for (int n = 0; n < N; n += L1::N) {
      const int nb = std::min(L1::N, N - n);
      std::fill(c1.begin(), c1.end(), 0.0f);
      for (int k = 0; k < K; k += L1::K) {
        const int kb = std::min(L1::K, K - k);
        // Copy the blocks in ("L1"), zero-padded so that the tiles below
        // need no edge cases.
        for (int i = 0; i < L1::M; ++i)
          for (int p = 0; p < L1::K; ++p)
            a1[i * L1::K + p] = i < mb && p < kb ? A[static_cast<std::size_t>(m + i) * K + k + p] : 0.0f;
        for (int p = 0; p < L1::K; ++p)
          for (int j = 0; j < L1::N; ++j)
            b1[p * L1::N + j] = p < kb && j < nb ? B[static_cast<std::size_t>(k + p) * N + n + j] : 0.0f;
        for (int i0 = 0; i0 < L1::M; i0 += L0::M)
          for (int j0 = 0; j0 < L1::N; j0 += L0::N) {
            float acc[L0::M][L0::N];  // the register tile
            for (int i = 0; i < L0::M; ++i)
              for (int j = 0; j < L0::N; ++j) acc[i][j] = c1[(i0 + i) * L1::N + j0 + j];
            for (int p0 = 0; p0 < L1::K; p0 += L0::K)
              for (int p = p0; p < p0 + L0::K; ++p) {
                const float* brow = &b1[p * L1::N + j0];
                for (int i = 0; i < L0::M; ++i) {
                  const float a = a1[(i0 + i) * L1::K + p];
                  for (int j = 0; j < L0::N; ++j) acc[i][j] += a * brow[j];
                }
              }
            for (int i = 0; i < L0::M; ++i)
              for (int j = 0; j < L0::N; ++j) c1[(i0 + i) * L1::N + j0 + j] = acc[i][j];
          }
      }
      for (int i = 0; i < mb; ++i)
        std::memcpy(&C[static_cast<std::size_t>(m + i) * N + n], &c1[i * L1::N], sizeof(float) * nb);
    }
  }
}

extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  basic_matmul<L1TileShape, L0TileShape>(A, B, C, M, N, K);
}

extern "C" void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  std::vector<double> row(N);
  for (int i = 0; i < M; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int p = 0; p < K; ++p) {
      const double a = A[static_cast<std::size_t>(i) * K + p];
      for (int j = 0; j < N; ++j) row[j] += a * B[static_cast<std::size_t>(p) * N + j];
    }
    for (int j = 0; j < N; ++j) C[static_cast<std::size_t>(i) * N + j] = static_cast<float>(row[j]);
  }
}
