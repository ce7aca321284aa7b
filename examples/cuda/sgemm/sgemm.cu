// A tiled single-precision GEMM, C = A * B (row-major; A is M x K, B is K x N).
// Each block computes a BM x BN tile of C, staging BK-deep slices of A and B
// in dynamic shared memory; each thread accumulates a TM x TN sub-tile in
// registers. The tile sizes are template arguments, so the spec names the
// kernel by expression: sgemm<{BM}, {BN}, {BK}, {TM}, {TN}>. (tunekit also
// passes each parameter as a define, -DBM=64 ..., so the template's own
// names must differ from the parameters'.)
template <int bm_, int bn_, int bk_, int tm_, int tn_>
__global__ void __launch_bounds__((bm_ / tm_) * (bn_ / tn_))
sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  constexpr int THREADS = (bm_ / tm_) * (bn_ / tn_);
  extern __shared__ float smem[];
  float* As = smem;            // [bk_][bm_]: A's slice, transposed
  float* Bs = smem + bk_ * bm_;  // [bk_][bn_]
  const int tid = threadIdx.x;
  const int tr = tid / (bn_ / tn_), tc = tid % (bn_ / tn_);
  const int row0 = blockIdx.y * bm_, col0 = blockIdx.x * bn_;

  float acc[tm_][tn_];
#pragma unroll
  for (int m = 0; m < tm_; ++m)
#pragma unroll
    for (int n = 0; n < tn_; ++n) acc[m][n] = 0.0f;
  float a[tm_], b[tn_];

  for (int k0 = 0; k0 < K; k0 += bk_) {
#pragma unroll 4
    for (int i = tid; i < bm_ * bk_; i += THREADS) {
      const int r = i / bk_, c = i % bk_;
      As[c * bm_ + r] = A[(size_t)(row0 + r) * K + k0 + c];
    }
#pragma unroll 4
    for (int i = tid; i < bk_ * bn_; i += THREADS) {
      const int r = i / bn_, c = i % bn_;
      Bs[r * bn_ + c] = B[(size_t)(k0 + r) * N + col0 + c];
    }
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < bk_; ++k) {
#pragma unroll
      for (int m = 0; m < tm_; ++m) a[m] = As[k * bm_ + tr * tm_ + m];
#pragma unroll
      for (int n = 0; n < tn_; ++n) b[n] = Bs[k * bn_ + tc * tn_ + n];
#pragma unroll
      for (int m = 0; m < tm_; ++m)
#pragma unroll
        for (int n = 0; n < tn_; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < tm_; ++m)
#pragma unroll
    for (int n = 0; n < tn_; ++n) C[(size_t)(row0 + tr * tm_ + m) * N + col0 + tc * tn_ + n] = acc[m][n];
}
