// A cache-tiled SGEMM whose tiles BM x BN x BK come in as -D defines: the
// small matmul-like kernel the search.rules tests tune (tests/tuner,
// tests/cli). C = A B, row-major, A is M x K, B is K x N.
// Defaults for the reference build, which gets no parameters.
#ifndef BM
#define BM 16
#endif
#ifndef BN
#define BN 16
#endif
#ifndef BK
#define BK 16
#endif

static inline int min_int(int a, int b) { return a < b ? a : b; }

extern "C" void mm(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i0 = 0; i0 < M; i0 += BM)
    for (int j0 = 0; j0 < N; j0 += BN) {
      const int i1 = min_int(i0 + BM, M), j1 = min_int(j0 + BN, N);
      for (int i = i0; i < i1; ++i)
        for (int j = j0; j < j1; ++j) C[i * N + j] = 0;
      for (int k0 = 0; k0 < K; k0 += BK) {
        const int k1 = min_int(k0 + BK, K);
        for (int i = i0; i < i1; ++i)
          for (int k = k0; k < k1; ++k) {
            const float a = A[i * K + k];
            for (int j = j0; j < j1; ++j) C[i * N + j] += a * B[k * N + j];
          }
      }
    }
}

extern "C" void mm_ref(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += static_cast<double>(A[i * K + k]) * B[k * N + j];
      C[i * N + j] = static_cast<float>(s);
    }
}
