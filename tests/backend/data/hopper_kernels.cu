// Kernels of tests/backend/cuda_tma_test.cpp (sm_90a; compiled by NVRTC, so
// no #include: the tensor map is declared here, as the spec format's CUDA
// section says).
//
// tma_copy: each block copies one BW x BH box of the bf16 array A (W x H,
// row-major, W innermost) into shared memory through TMA
// (cp.async.bulk.tensor with an mbarrier), then writes the in-bounds part to
// `out` (same shape as A). The tile is pre-filled with 0xFFFF, so an
// out-of-bounds element that TMA did not zero makes the whole block write
// NaN (a verification failure). SWZ=1 reads the map with 128-byte swizzle
// (box rows of exactly 128 bytes: BW == 64) and undoes the swizzle.
// Parameters (-D): BW, BH, SWZ.

struct alignas(64) TmaMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ bool mbarrier_try_wait(unsigned bar, unsigned phase) {
  unsigned ok;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(ok)
      : "r"(bar), "r"(phase)
      : "memory");
  return ok != 0;
}

#ifndef BW
#define BW 64
#endif
#ifndef BH
#define BH 16
#endif
#ifndef SWZ
#define SWZ 0
#endif

extern "C" __global__ void __launch_bounds__(128)
tma_copy(const unsigned short* A, unsigned short* out, const __grid_constant__ TmaMap plain,
         const __grid_constant__ TmaMap swizzled, int W, int H) {
  // 1024 bytes of slack: a 128-byte swizzle pattern repeats every 1024 bytes,
  // and TMA swizzles by shared-memory address bits, so the tile starts on a
  // 1024-byte boundary.
  __shared__ __align__(1024) unsigned char raw[BW * BH * 2 + 1024];
  __shared__ __align__(8) unsigned long long bar_storage;
  const unsigned raw_addr = smem_addr(raw);
  const unsigned tile_addr = (raw_addr + 1023u) & ~1023u;
  unsigned short* tile = reinterpret_cast<unsigned short*>(raw + (tile_addr - raw_addr));
  const unsigned bar = smem_addr(&bar_storage);
  const TmaMap* map = SWZ ? &swizzled : &plain;

  for (int e = threadIdx.x; e < BW * BH; e += blockDim.x) tile[e] = 0xFFFFu;
  // The generic-proxy writes above must be ordered before TMA (the async
  // proxy) overwrites the same bytes.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  const int x0 = blockIdx.x * BW, y0 = blockIdx.y * BH;
  if (threadIdx.x == 0) {
    const unsigned bytes = BW * BH * 2;  // the whole box, out-of-bounds part included
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            tile_addr),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(x0), "r"(y0), "r"(bar)
        : "memory");
  }
  while (!mbarrier_try_wait(bar, 0)) {
  }

  // Element (r, c) of the box; with the 128-byte swizzle, the 16-byte chunk
  // c / 8 of row r sits at chunk (c / 8) ^ (r % 8).
  auto at = [&](int r, int c) -> unsigned short {
#if SWZ
    const int chunk = (c >> 3) ^ (r & 7);
    return tile[r * BW + chunk * 8 + (c & 7)];
#else
    return tile[r * BW + c];
#endif
  };
  int bad = 0;
  for (int e = threadIdx.x; e < BW * BH; e += blockDim.x) {
    const int r = e / BW, c = e % BW;
    if ((x0 + c >= W || y0 + r >= H) && at(r, c) != 0) bad = 1;
  }
  bad = __syncthreads_or(bad);
  for (int e = threadIdx.x; e < BW * BH; e += blockDim.x) {
    const int r = e / BW, c = e % BW;
    const int x = x0 + c, y = y0 + r;
    if (x < W && y < H) out[(long long)y * W + x] = bad ? 0x7FC0u : at(r, c);  // bf16 NaN
  }
}

// The reference: a plain copy over any launch (grid-stride); it gets the
// tensor maps too, and ignores them.
extern "C" __global__ void tma_copy_ref(const unsigned short* A, unsigned short* out, const __grid_constant__ TmaMap plain,
                                        const __grid_constant__ TmaMap swizzled, int W, int H) {
  const long long n = (long long)W * H;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = A[i];
}

// cluster_ids: block (bx, by) of a grid of clusters CX x CY writes its rank
// in the cluster, its cluster's id and the cluster's size.
extern "C" __global__ void cluster_ids(unsigned* out, int cx, int cy) {
  unsigned rank, nrank, idx, idy;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(nrank));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(idx));
  asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(idy));
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    out[4 * b + 0] = rank;
    out[4 * b + 1] = idx;
    out[4 * b + 2] = idy;
    out[4 * b + 3] = nrank;
  }
}

// What cluster_ids must write, from blockIdx and the cluster shape: ranks
// run x fastest within a cluster.
extern "C" __global__ void cluster_ids_ref(unsigned* out, int cx, int cy) {
  const unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    out[4 * b + 0] = (blockIdx.x % cx) + (blockIdx.y % cy) * cx;
    out[4 * b + 1] = blockIdx.x / cx;
    out[4 * b + 2] = blockIdx.y / cy;
    out[4 * b + 3] = cx * cy;
  }
}
