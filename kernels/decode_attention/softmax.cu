// Row softmax for the decode-attention step (issue #5, part 1):
//   y[r, :] = softmax(scale * x[r, :]), bf16 in and out, fp32 math.
// One block of THREADS threads per row; 16-byte loads (n % 8 == 0). Two passes
// over the row: an online (max, sum) per thread, merged across the block,
// then a re-read (from L1/L2: a row is a few KiB) that writes the
// probabilities. The decode step's rows are short (n = 2048), so the time is
// latency; fewer, fuller threads mostly trade reduction depth for load ILP.
#include <cuda_bf16.h>

#ifndef THREADS
#define THREADS 256
#endif
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS: a multiple of 32, at most 1024");

#define SM_NEG_INF __int_as_float(0xff800000u)

// Merges (m, s) with (m2, s2): s is a sum of exp(v - m).
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float mx = fmaxf(m, m2);
  if (mx == SM_NEG_INF) return;  // both empty
  s = s * __expf(m - mx) + s2 * __expf(m2 - mx);
  m = mx;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_rows(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int rows, int n, float scale) {
  __shared__ float sm_m[THREADS / 32], sm_s[THREADS / 32];
  const int row = blockIdx.x;
  if (row >= rows) return;  // block-uniform
  const uint4* xr = reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * n);
  uint4* yr = reinterpret_cast<uint4*>(y + static_cast<size_t>(row) * n);
  const int n8 = n / 8;

  float m = SM_NEG_INF, s = 0.f;
  for (int i = threadIdx.x; i < n8; i += THREADS) {
    const uint4 u = xr[i];
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
    float v[8];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __bfloat1622float2(h[j]);
      v[2 * j] = f.x * scale;
      v[2 * j + 1] = f.y * scale;
    }
    float mx = v[0];
#pragma unroll
    for (int j = 1; j < 8; ++j) mx = fmaxf(mx, v[j]);
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += __expf(v[j] - mx);
    merge(m, s, mx, sum);
  }
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
    merge(m, s, m2, s2);
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) {
    sm_m[warp] = m;
    sm_s[warp] = s;
  }
  __syncthreads();
  m = sm_m[0];
  s = sm_s[0];
  for (int w = 1; w < THREADS / 32; ++w) merge(m, s, sm_m[w], sm_s[w]);  // same order in every thread
  const float inv = 1.f / s;

  for (int i = threadIdx.x; i < n8; i += THREADS) {
    const uint4 u = xr[i];
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
    uint4 o;
    __nv_bfloat162* oh = reinterpret_cast<__nv_bfloat162*>(&o);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __bfloat1622float2(h[j]);
      oh[j] = __floats2bfloat162_rn(__expf(f.x * scale - m) * inv, __expf(f.y * scale - m) * inv);
    }
    yr[i] = o;
  }
}

// tunekit's reference: thread 0 of a block per row, three plain loops.
extern "C" __global__ void softmax_rows_ref(const __nv_bfloat16* x, __nv_bfloat16* y, int rows, int n, float scale) {
  const int row = blockIdx.x;
  if (row >= rows || threadIdx.x != 0) return;
  const __nv_bfloat16* xr = x + static_cast<size_t>(row) * n;
  float m = SM_NEG_INF;
  for (int i = 0; i < n; ++i) m = fmaxf(m, __bfloat162float(xr[i]) * scale);
  float s = 0.f;
  for (int i = 0; i < n; ++i) s += expf(__bfloat162float(xr[i]) * scale - m);
  for (int i = 0; i < n; ++i) y[static_cast<size_t>(row) * n + i] = __float2bfloat16(expf(__bfloat162float(xr[i]) * scale - m) / s);
}
