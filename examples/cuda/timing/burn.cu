// One kernel, three lengths (timing agreement, issue #4): each thread reads
// x[i], applies `iters` dependent fused multiply-adds, and writes y[i].
// iters = 1 is a memory-bound copy; a large iters makes it compute-bound.
extern "C" __global__ void burn(const float* __restrict__ x, float* __restrict__ y, int n, int iters) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = fmaf(v, 0.999999f, 1e-7f);
  y[i] = v;
}
