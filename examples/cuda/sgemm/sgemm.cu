// A tiled single-precision GEMM, C = A * B (row-major; A is M x K, B is K x N).
// Each block computes a BM x BN tile of C, staging BK-deep slices of A and B
// in dynamic shared memory; each thread accumulates a TM x TN sub-tile in
// registers. The tile sizes are template arguments, so the spec names the
// kernel by expression: sgemm<{BM}, {BN}, {BK}, {TM}, {TN}>.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  extern __shared__ float smem[];
  float* As = smem;            // [BK][BM]: A's slice, transposed
  float* Bs = smem + BK * BM;  // [BK][BN]
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  float acc[TM][TN];
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) acc[m][n] = 0.0f;
  float a[TM], b[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll 4
    for (int i = tid; i < BM * BK; i += THREADS) {
      const int r = i / BK, c = i % BK;
      As[c * BM + r] = A[(size_t)(row0 + r) * K + k0 + c];
    }
#pragma unroll 4
    for (int i = tid; i < BK * BN; i += THREADS) {
      const int r = i / BN, c = i % BN;
      Bs[r * BN + c] = B[(size_t)(k0 + r) * N + col0 + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int m = 0; m < TM; ++m) a[m] = As[k * BM + tr * TM + m];
#pragma unroll
      for (int n = 0; n < TN; ++n) b[n] = Bs[k * BN + tc * TN + n];
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) C[(size_t)(row0 + tr * TM + m) * N + col0 + tc * TN + n] = acc[m][n];
}
