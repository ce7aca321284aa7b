// A standalone check of gemm_wgmma, outside tunekit: builds with nvcc
// (-DBM=... to pick a config), encodes the tensor maps itself and compares
// each shape with gemm_reference on random inputs. It separates a kernel bug
// from a bug in tunekit's tensor-map arguments when the tuner reports
// wrong results.
//   nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a wgmma_check.cu -lcuda -o wgmma_check && ./wgmma_check
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "wgmma_gemm.cu"

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

static TensorMap encode(void* base, unsigned long long inner, unsigned long long outer, unsigned box_inner,
                        unsigned box_outer) {
  TensorMap m{};
  cuuint64_t dims[2] = {inner, outer};
  cuuint64_t strides[1] = {inner * 2};
  cuuint32_t box[2] = {box_inner, box_outer};
  cuuint32_t elem[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(reinterpret_cast<CUtensorMap*>(&m), CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base,
                                      dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed: %d\n", static_cast<int>(r));
    std::exit(1);
  }
  return m;
}

static bool persistent = false;

static bool check(int M, int N, int K, int b_nk, std::mt19937& rng, bool timed = false) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<__nv_bfloat16> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N);
  for (auto& x : a) x = __float2bfloat16(u(rng));
  for (auto& x : b) x = __float2bfloat16(u(rng));
  __nv_bfloat16 *dA, *dB, *dC, *dR;
  CHECK(cudaMalloc(&dA, a.size() * 2));
  CHECK(cudaMalloc(&dB, b.size() * 2));
  CHECK(cudaMalloc(&dC, static_cast<size_t>(M) * N * 2));
  CHECK(cudaMalloc(&dR, static_cast<size_t>(M) * N * 2));
  CHECK(cudaMemcpy(dA, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dC, 0xFF, static_cast<size_t>(M) * N * 2));  // NaN: unwritten elements fail
  TensorMap ta = encode(dA, K, M, 64, BM);
  TensorMap tb = b_nk ? encode(dB, K, N, 64, BN / CLUSTER_M) : encode(dB, N, K, 64, 64);
  const int smem = kSmemBytes;
  CHECK(cudaFuncSetAttribute(gemm_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  // Every tile its own block, or (PERSISTENT) one block per SM walking the tiles.
  int grid = ((M + BM - 1) / BM) * ((N + BN - 1) / BN) * SPLIT_K;
  if (persistent) {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    grid = std::min(grid, sms / CLUSTER_M * CLUSTER_M);
  }
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = CLUSTER_M * SPLIT_K;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, gemm_wgmma, static_cast<const __nv_bfloat16*>(dA),
                           static_cast<const __nv_bfloat16*>(dB), dC, ta, tb, M, N, K, b_nk));
  CHECK(cudaGetLastError());
  if (timed && M == 4096 && N == 4096 && b_nk) {
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, gemm_wgmma, &config) == cudaSuccess)
      std::printf("  at most %d clusters of %d resident\n", clusters, CLUSTER_M);
  }
  if (timed) {  // hot-cache timing, a first look only: tunekit's figures are the ones reported
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    std::vector<float> ms(20);
    for (auto& t : ms) {
      cudaEventRecord(e0);
      CHECK(cudaLaunchKernelEx(&config, gemm_wgmma, static_cast<const __nv_bfloat16*>(dA),
                               static_cast<const __nv_bfloat16*>(dB), dC, ta, tb, M, N, K, b_nk));
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      cudaEventElapsedTime(&t, e0, e1);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("  %d x %d x %d: %.1f us, %.0f TFLOP/s\n", M, N, K, 1000 * ms[10], 2.0 * M * N * K / (ms[10] * 1e9));
  }
  gemm_reference<<<1024, 256>>>(dA, dB, dR, ta, tb, M, N, K, b_nk);
  CHECK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> c(static_cast<size_t>(M) * N), r(c.size());
  CHECK(cudaMemcpy(c.data(), dC, c.size() * 2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(r.data(), dR, r.size() * 2, cudaMemcpyDeviceToHost));
  double max_diff = 0, max_ref = 0;
  size_t bad = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const double x = __bfloat162float(c[i]), y = __bfloat162float(r[i]);
    const double d = std::fabs(x - y);
    if (!(d <= 0.02 * std::sqrt(static_cast<double>(K)) * 0.1 + 0.02 * std::fabs(y))) ++bad;
    if (!(d <= max_diff)) max_diff = d;
    max_ref = std::fmax(max_ref, std::fabs(y));
  }
  std::printf("M=%d N=%d K=%d b_nk=%d: max|diff| %.4g (max|ref| %.3g), %zu bad of %zu -> %s\n", M, N, K, b_nk,
              max_diff, max_ref, bad, c.size(), bad ? "FAIL" : "ok");
  cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dR);
  return bad == 0;
}

int main(int argc, char** argv) {
  bool large_only = false;  // --large-only: 4096^3 (N x K) once, timed; for ncu and cluster diagnostics
  for (int i = 1; i < argc; ++i) {
    persistent |= std::string(argv[i]) == "--persistent";
    large_only |= std::string(argv[i]) == "--large-only";
  }
  std::mt19937 rng(12345);
  const int shapes[][3] = {{128, 256, 64}, {256, 512, 1024}, {1000, 1000, 1000}, {3000, 777, 1536}, {77, 130, 200}, {512, 384, 4096}};
  bool ok = true;
  std::printf("config BM=%d BN=%d STAGES=%d CONSUMERS=%d CLUSTER_M=%d GROUP_M=%d EPILOGUE=%d SPLIT_K=%d%s\n", BM, BN,
              STAGES, CONSUMERS, CLUSTER_M, GROUP_M, EPILOGUE, SPLIT_K, persistent ? " persistent" : "");
  if (persistent && (EPILOGUE == 1 || SPLIT_K > 1)) {
    std::printf("--persistent needs -DEPILOGUE=0 or 2 and SPLIT_K=1 (both use the ring after the last K slice)\n");
    return 2;
  }
  if (large_only) return check(4096, 4096, 4096, 1, rng, true) ? 0 : 1;
  for (auto& s : shapes)
    for (int b_nk = 1; b_nk >= 0; --b_nk) {
      if (!b_nk && s[1] % 8) continue;  // K x N rows must be 16-byte aligned for TMA
      if (((s[0] + BM - 1) / BM) % CLUSTER_M) continue;  // a cluster pairs tile rows
      ok = check(s[0], s[1], s[2], b_nk, rng) && ok;
    }
  for (int b_nk = 1; b_nk >= 0; --b_nk) {
    ok = check(4096, 4096, 4096, b_nk, rng, true) && ok;
    ok = check(4096, 14336, 4096, b_nk, rng, true) && ok;
  }
  std::printf(ok ? "ALL OK\n" : "SOME FAILED\n");
  return ok ? 0 : 1;
}
