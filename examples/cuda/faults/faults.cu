// 50 variants of y = 2x + 1, two of them planted faults:
//   BLOCK=128, ITEMS=4, MODE=1: writes far outside any allocation (an
//   illegal address: a sticky error, the worker is replaced);
//   BLOCK=512, ITEMS=2, MODE=0: never returns (a hang: the worker is killed
//   after measure.timeout).
// Every other variant must be measured. ITEMS elements per thread, taken
// contiguously (MODE 0) or strided by the grid (MODE 1).
extern "C" __global__ void axpb(const float* __restrict__ x, float* __restrict__ y, int n) {
  const long long tid = (long long)blockIdx.x * BLOCK + threadIdx.x;
  const long long threads = (long long)gridDim.x * BLOCK;
#if BLOCK == 128 && ITEMS == 4 && MODE == 1
  y[tid + (1ll << 40)] = 1.0f;  // planted: illegal address
#endif
#if BLOCK == 512 && ITEMS == 2 && MODE == 0
  for (long long t0 = clock64();;)  // planted: infinite loop
    if (clock64() - t0 < 0) break;
#endif
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = MODE == 0 ? tid * ITEMS + k : tid + k * threads;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
  }
}
