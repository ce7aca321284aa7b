// bf16 GEMM for Hopper (sm_90a): C = A·B with fp32 accumulation, fed by the
// bulk tensor copy engine (TMA) and computed with warpgroup MMA (wgmma).
//
//   A: M x K row-major.  B: N x K row-major when b_nk = 1 (C = A·Bᵀ, the
//   weight layout of a linear layer), K x N row-major when b_nk = 0.
//   C: M x N row-major bf16.
//
// One block computes a BM x BN tile of C. Warpgroup 0 is the producer: one
// thread issues TMA loads of 64-deep K slices of A and B into a ring of
// STAGES shared-memory stages, each guarded by a "full" mbarrier (the copy
// engine completes it with the byte count) and an "empty" mbarrier (the
// consumers release it). Warpgroups 1..CONSUMERS are consumers: each owns
// BM / CONSUMERS rows of the tile and issues m64nBNk16 wgmma instructions
// straight from shared memory, accumulating in registers. Splitting roles
// lets the producer run STAGES-1 slices ahead without the consumers ever
// spending issue slots on address arithmetic; setmaxnreg moves the
// producer's unused registers to the consumers, which hold the accumulators.
//
// TMA writes each 64-element (128-byte) row with the 128-byte swizzle, the
// layout wgmma reads without bank conflicts. Out-of-range rows and columns
// of a box read as zero, so ragged M, N and K need no special path; only the
// epilogue checks bounds. TMA needs 16-byte aligned global strides: K % 8 == 0
// (and N % 8 == 0 when b_nk = 0); the spec's constraints say so, and other
// shapes go to kernels/gemm/gemm_mma.cu.
//
// SWAP_AB = 1 is for decode shapes (small M, B as N x K): the block
// computes its tile of Cᵀ = B·Aᵀ, so that the weights B fill wgmma's
// 64-row side and M (down to 1) its narrow N side (n8 to n64), with no
// tensor work thrown away on rows of A that do not exist. BM and BN still
// tile C (BM is then 8 to 64, BN 16 to 128); the tile is transposed on its way
// through shared memory. The weights stream through the TMA ring, which keeps
// them out of the registers, and SPLIT_K spreads K over the SMs; KSUB puts
// several 64-deep boxes in a stage, EVICT marks B's lines evict-first.
//
// CLUSTER_M = 2 pairs blocks along M that share B's tile by TMA multicast;
// SPLIT_K = 2 or 4 makes a cluster of blocks that split K and sum their fp32
// tiles through distributed shared memory. EPILOGUE picks how C leaves (see
// its definition). The grid is one block per tile (times SPLIT_K), or, when
// smaller, persistent blocks that walk the tiles.
//
// Kernel arguments (the spec's order): A, B, C, the tensor maps of A and B,
// M, N, K, b_nk. Tensor maps (spec `tensor_map` arguments):
//   A: dims [K, M], box [64, BM]
//   B: b_nk = 1: dims [K, N], box [64, BN]   b_nk = 0: dims [N, K], box [64, 64]
// Dynamic shared memory: STAGES * KSUB * (BM + BN) * 128 + 1024 bytes (the
// 1024 buys the alignment that the 128-byte swizzle pattern needs; with
// SWAP_AB, BN counts as at least 64), plus BM * (BN * 2 + 16) with
// EPILOGUE=2 (kSmemBytes).
#include <cuda_bf16.h>

#ifndef BM
#define BM 128  // rows of C per block: CONSUMERS * 64 * (1 or 2)
#endif
#ifndef BN
#define BN 256  // columns of C per block: 64, 128, 192 or 256 (the wgmma N)
#endif
#ifndef STAGES
#define STAGES 4  // shared-memory ring depth
#endif
#ifndef CONSUMERS
#define CONSUMERS 2  // consumer warpgroups
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1  // CTAs per cluster along M; they share B's tile, each loading 1/CLUSTER_M of it for all
#endif
#ifndef GROUP_M
#define GROUP_M 8  // raster: this many tile rows are walked column by column, for L2 reuse of B
#endif
#ifndef SPLIT_K
#define SPLIT_K 1  // blocks per cluster along K (with CLUSTER_M = 1): each sums a share of K; the fp32 tiles meet in shared memory
#endif
#ifndef SWAP_AB
#define SWAP_AB 0  // 1: compute Cᵀ = B·Aᵀ (B as N x K), the weights on wgmma's 64-row side (decode shapes)
#endif
#ifndef KSUB
#define KSUB 1  // SWAP_AB: 64-deep K boxes per stage, so each of B's rows is read KSUB * 128 contiguous bytes at a time
#endif
#ifndef EVICT
#define EVICT 0  // SWAP_AB: 1 loads B with the L2 evict-first policy (it is read once)
#endif
#ifndef EPILOGUE
#define EPILOGUE 1  // C leaves through shared memory in whole 16-byte row chunks: 1 in the ring (one tile per
                    // block), 2 in a region of its own (persistent blocks too); 0: registers straight to global
#endif

namespace {

constexpr int kBK = 64;                      // K per box: one 128-byte swizzle row of bf16
constexpr int kStageK = kBK * KSUB;          // K per stage
// The wgmma shape: kWM rows (the operand in the ring's first slot, A, or B
// with SWAP_AB) by kWN columns per block. With SWAP_AB a BN of 16 or 32
// loads only that many of B's rows into the m64 block (kARows): the rows
// below hold stale data whose results are never stored. Twice or four times
// the blocks then share B without a split-K reduction.
constexpr int kWM = SWAP_AB ? (BN < 64 ? 64 : BN) : BM;
constexpr int kWN = SWAP_AB ? BM : BN;
constexpr int kARows = SWAP_AB ? BN : kWM;
constexpr int kRowsPerConsumer = kWM / CONSUMERS;
constexpr int kMI = kRowsPerConsumer / 64;   // m64 blocks per consumer
constexpr int kThreads = 128 * (CONSUMERS + 1);
constexpr int kABytes = kWM * kStageK * 2;
constexpr int kBBytes = kWN * kStageK * 2;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kStageLoadBytes = (kARows + kWN) * kStageK * 2;  // what the copies of a stage write
static_assert(kWM % (64 * CONSUMERS) == 0 && (kMI == 1 || kMI == 2), "the wgmma rows must be CONSUMERS * 64 * (1 or 2)");
static_assert(SWAP_AB ? ((BM == 8 || BM == 16 || BM == 32 || BM == 64) && (BN == 16 || BN == 32 || BN % 64 == 0))
                      : (BN % 64 == 0 && BN <= 256),
              "BN must be 64, 128, 192 or 256 (with SWAP_AB, BM 8, 16, 32 or 64 and BN 16, 32, 64 or 128)");
static_assert(kMI * kWN <= 256, "accumulators would exceed the register budget");
static_assert(CLUSTER_M == 1 || CLUSTER_M == 2, "CLUSTER_M must be 1 or 2");
static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "stages must keep 1024-byte alignment");
static_assert(EPILOGUE >= 0 && EPILOGUE <= 2, "EPILOGUE must be 0, 1 or 2");
static_assert(SPLIT_K == 1 || SPLIT_K == 2 || SPLIT_K == 4 || SPLIT_K == 8 || SPLIT_K == 16,
              "SPLIT_K must be 1, 2, 4, 8 or 16 (a cluster of 16 is Hopper's non-portable size)");
static_assert(SPLIT_K == 1 || CLUSTER_M == 1, "a cluster either splits K or shares B");
static_assert(SWAP_AB == 0 || (CLUSTER_M == 1 && (EPILOGUE != 0 || SPLIT_K > 1)),
              "SWAP_AB transposes the tile in shared memory and shares nothing across a cluster");
static_assert((KSUB == 1 && EVICT == 0) || SWAP_AB, "KSUB and EVICT are SWAP_AB's");
static_assert(KSUB == 1 || KSUB == 2 || KSUB == 4 || KSUB == 8, "KSUB must be 1, 2, 4 or 8");
// Two blocks per SM where the accumulators are few (SWAP_AB's narrow tiles)
// and the rings small enough: one block's copies then run while the other
// finishes, and more tiles fit in one wave. The big tiles keep the whole
// register file for one block, which setmaxnreg hands to the consumers.
constexpr int kMinBlocks = (SWAP_AB && kMI * kWN <= 64) ? 2 : 1;
// A row of a split-K partial tile (fp32), padded so that the float2 writes
// of a half warp (4 rows x 4 lanes) hit 32 different banks.
constexpr int kPRowBytes = BN * 4 + 32;
static_assert(SPLIT_K == 1 || BM * kPRowBytes <= STAGES * kStageBytes, "the partial tile must fit in the ring");
constexpr int kCRowBytes = BN * 2 + 16;  // a staged row of C (see the epilogue)
// Dynamic shared memory: the ring, the 1024 that buy its alignment, and EPILOGUE=2's region.
constexpr int kSmemBytes = STAGES * kStageBytes + 1024 + (EPILOGUE == 2 ? BM * kCRowBytes : 0);

// The driver's CUtensorMap: 128 opaque bytes, passed by value.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Blocks until the phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, int inner, int outer, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(inner), "r"(outer), "r"(bar)
      : "memory");
}

// The same with an L2 cache policy (createpolicy) for the lines it reads.
__device__ __forceinline__ void tma_load_2d_hint(unsigned dst, const TensorMap* map, int inner, int outer, unsigned bar,
                                                 unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(inner), "r"(outer), "r"(bar), "l"(policy)
      : "memory");
}

// The same, written to this offset in every CTA of `mask` (a cluster), each
// of whose barriers at `bar`'s offset is told the bytes.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TensorMap* map, int inner, int outer,
                                                      unsigned bar, unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(inner), "r"(outer), "r"(bar), "h"(mask)
      : "memory");
}

// Arrives on the barrier at `bar`'s offset in the cluster's CTA `rank`.
// The default (.release.cta) semantics, not .release.cluster: a consumer's
// reads of the stage are complete once wgmma.wait_group returns, so there is
// nothing to order at cluster scope, and a cluster-scope release, made once
// per stage, took 4096^3 from 184 to 316 us (run 13).
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}

// Four floats at `addr` (this block's shared memory) in cluster block `rank`.
[[maybe_unused]] __device__ __forceinline__ float4 ld_cluster_f4(unsigned addr, unsigned rank) {
  float4 v;
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n"
      "}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(addr), "r"(rank)
      : "memory");
  return v;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// A shared-memory matrix descriptor for the 128-byte swizzle. K-major
// operands: rows of 64 elements, 8-row groups 1024 bytes apart (SBO); the
// leading offset is unused. MN-major (B as K x N): 64-column atoms `lbo`
// bytes apart, 8-row K groups 1024 bytes apart.
__device__ __forceinline__ unsigned long long descriptor(unsigned addr, unsigned lbo) {
  unsigned long long d = 0;
  d |= static_cast<unsigned long long>((addr & 0x3FFFF) >> 4);
  d |= static_cast<unsigned long long>((lbo >> 4) & 0x3FFF) << 16;
  d |= static_cast<unsigned long long>((1024 >> 4) & 0x3FFF) << 32;
  d |= 1ull << 62;  // 128-byte swizzle
  return d;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int n_>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(n_) : "memory"); }

template <int n_, int tb_>
struct Wgmma;

template <int tb_>
struct Wgmma<8, tb_> {
  static __device__ __forceinline__ void mma(float (&d)[4], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3}, "
        "%4, %5, p, 1, 1, 0, %6;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(da), "l"(db), "n"(tb_));
  }
};

template <int tb_>
struct Wgmma<16, tb_> {
  static __device__ __forceinline__ void mma(float (&d)[8], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, "
        "%8, %9, p, 1, 1, 0, %10;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(da), "l"(db), "n"(tb_));
  }
};

template <int tb_>
struct Wgmma<32, tb_> {
  static __device__ __forceinline__ void mma(float (&d)[16], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
        "%16, %17, p, 1, 1, 0, %18;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(da), "l"(db), "n"(tb_));
  }
};

template <int tb_>
struct Wgmma<64, tb_> {
  static __device__ __forceinline__ void mma(float (&d)[32], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, %34;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "n"(tb_));
  }
};

template <int tb_>
struct Wgmma<128, tb_> {
  static __device__ __forceinline__ void mma(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, %66;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "n"(tb_));
  }
};

template <int tb_>
struct Wgmma<192, tb_> {
  static __device__ __forceinline__ void mma(float (&d)[96], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
        "%96, %97, p, 1, 1, 0, %98;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "l"(da), "l"(db), "n"(tb_));
  }
};

template <int tb_>
struct Wgmma<256, tb_> {
  static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, %130;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "n"(tb_));
  }
};

// A consumer warpgroup hands a stage back: to its own producer, or to the
// producers of every CTA in the cluster, which all wrote into it.
__device__ __forceinline__ void release(unsigned bar, int thread_in_group) {
  if (thread_in_group != 0) return;
  if (CLUSTER_M == 1) {
    mbar_arrive(bar);
  } else {
#pragma unroll
    for (int r = 0; r < CLUSTER_M; ++r) mbar_arrive_cluster(bar, r);
  }
}

// Consecutive blocks walk GROUP_M tile rows column by column, so the blocks
// resident at one time share B's column tiles in L2.
__device__ __forceinline__ void tile_of(int pid, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GROUP_M * tiles_n;
  const int first_m = (pid / per_group) * GROUP_M;
  const int rows = min(tiles_m - first_m, GROUP_M);
  tm = first_m + (pid % per_group) % rows;
  tn = (pid % per_group) / rows;
}

template <int tb_>
__device__ __forceinline__ void consume(float (&acc)[kMI][kWN / 2], unsigned a_stage, unsigned b_stage, int consumer) {
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < kStageK / 16; ++k) {
    // K-major operands hold KSUB boxes of 64 K each, one after the other.
    const int sub = k / (kBK / 16), ks = k % (kBK / 16);
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
      // A: this consumer's 64-row block; each k16 step is 32 bytes along the swizzled row.
      const unsigned a = a_stage + sub * kWM * 128 + (consumer * kMI + mi) * 64 * 128 + ks * 32;
      // B: K-major steps 32 bytes along the row; MN-major (KSUB = 1) steps 16 rows of 128 bytes.
      const unsigned b = tb_ ? b_stage + k * 16 * 128 : b_stage + sub * kWN * 128 + ks * 32;
      Wgmma<kWN, tb_>::mma(acc[mi], descriptor(a, 16), descriptor(b, tb_ ? kBK * 128 : 16));
    }
  }
  wgmma_commit();
}

// Writes this consumer's accumulators into the row-major BM x BN tile of C
// at `tile` in shared memory, rows `row_bytes` apart: bf16 (the staged
// epilogue) or floats (fp32_, a split-K partial). The m64nN accumulator
// layout is the mma.sync m16n8 one per warp, repeated along N: d[4j + 2h + c]
// is row 16w + lane/4 + 8h, column 8j + 2(lane % 4) + c of the wgmma tile,
// which SWAP_AB transposes (so each value goes alone, not as a pair).
template <bool fp32_>
__device__ __forceinline__ void stage_acc(const float (&acc)[kMI][kWN / 2], unsigned tile, int row_bytes, int consumer,
                                          int warp, int lane) {
  constexpr int kElem = fp32_ ? 4 : 2;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = (consumer * kMI + mi) * 64 + warp * 16 + lane / 4 + 8 * h;
      if (kARows < kWM && row >= kARows) continue;  // a row of B that was not loaded
#pragma unroll
      for (int j = 0; j < kWN / 8; ++j) {
        const int col = 8 * j + 2 * (lane % 4);
        const float v0 = acc[mi][4 * j + 2 * h], v1 = acc[mi][4 * j + 2 * h + 1];
        if (SWAP_AB) {
          // wgmma (row, col) is C's (col, row): v0 and v1 land a row apart.
          const unsigned at = tile + col * row_bytes + row * kElem;
          if (fp32_) {
            asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(at), "f"(v0) : "memory");
            asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(at + row_bytes), "f"(v1) : "memory");
          } else {
            asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(at), "h"(__bfloat16_as_ushort(__float2bfloat16_rn(v0)))
                         : "memory");
            asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(at + row_bytes),
                         "h"(__bfloat16_as_ushort(__float2bfloat16_rn(v1)))
                         : "memory");
          }
        } else if (fp32_) {
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(tile + row * row_bytes + col * 4), "f"(v0), "f"(v1)
                       : "memory");
        } else {
          __nv_bfloat162 v = __floats2bfloat162_rn(v0, v1);
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(tile + row * row_bytes + col * 2),
                       "r"(*reinterpret_cast<unsigned*>(&v))
                       : "memory");
        }
      }
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
gemm_wgmma(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B, __nv_bfloat16* __restrict__ C,
           const __grid_constant__ TensorMap tmap_a, const __grid_constant__ TensorMap tmap_b, int M, int N, int K,
           int b_nk) {
  (void)A;
  (void)B;
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
  // The same offset in every CTA: multicast copies land at the address they
  // were issued for, so the alignment padding must not differ between CTAs.
  const unsigned base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int wg = threadIdx.x / 128;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
  const int ktiles = (K + kStageK - 1) / kStageK;  // stages' worth of K
  const unsigned rank = CLUSTER_M > 1 ? cluster_rank() : 0;
  // SPLIT_K: block `kpart` of a cluster takes K slices [kt_begin, kt_end) of its tile.
  const int kpart = SPLIT_K > 1 ? static_cast<int>(cluster_rank()) : 0;
  const int kt_begin = kpart * ktiles / SPLIT_K, kt_end = (kpart + 1) * ktiles / SPLIT_K;
  {
    // A launch with less dynamic shared memory than this config lays out
    // would overrun it silently; make it a launch error instead.
    unsigned dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    if (dyn < static_cast<unsigned>(kSmemBytes)) __trap();
  }
  // EPILOGUE=1 stages C in the ring, and SPLIT_K leaves its partial tile
  // there, which a persistent block's producer is already refilling.
  if ((EPILOGUE == 1 || SPLIT_K > 1) && static_cast<int>(gridDim.x) < tiles * SPLIT_K) __trap();
  if (SWAP_AB && !b_nk) __trap();  // Bᵀ's rows would not be K-major

  if (threadIdx.x == 0) {
    // The copy engine reads each map from parameter memory on first use;
    // fetch both now, while the barriers are set up, not at the first copy.
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&tmap_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&tmap_b)) : "memory");
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_addr(&full[s]), 1);
      // Every consumer of every CTA in the cluster reads each B half.
      mbar_init(smem_addr(&empty[s]), CONSUMERS * CLUSTER_M);
    }
    // The copy engine (the async proxy) and the peers must see the initialised barriers.
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if (CLUSTER_M > 1) cluster_sync();
  else __syncthreads();

  // Blocks walk the tiles with a stride of the grid: one tile each when the
  // grid covers them all, several when the grid is one block per SM
  // (persistent), where the producer already fills the next tile's stages
  // while the consumers store the last one. The stage ring runs on across
  // tiles (`it` counts K slices over all of a block's tiles). A cluster is
  // CLUSTER_M consecutive blocks and the grid a multiple of it, so its blocks
  // get consecutive tile ids, which tile_of maps to consecutive tile rows of
  // one tile column (GROUP_M even): they share B's tile.
  if (wg == 0) {
    if (kMinBlocks == 1) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      unsigned long long evict_first = 0;
      if (EVICT) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(evict_first));
      int it = 0;
      for (int pid = blockIdx.x / SPLIT_K; pid < tiles; pid += gridDim.x / SPLIT_K) {
        int tm, tn;
        tile_of(pid, tiles_m, tiles_n, tm, tn);
        for (int kt = kt_begin; kt < kt_end; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) mbar_wait(smem_addr(&empty[s]), ((it / STAGES) - 1) & 1);
          const unsigned a_dst = base + s * kStageBytes, b_dst = a_dst + kABytes;
          const unsigned bar = smem_addr(&full[s]);
          mbar_expect_tx(bar, kStageLoadBytes);
          if (SWAP_AB) {
            // B's rows fill the wgmma rows, A's the narrow side (the maps' boxes are BN and BM rows)
            // (Boxes of 8 rows, a row group's KSUB boxes back to back, were
            // 4 to 10 us slower: run 16e.)
#pragma unroll
            for (int sub = 0; sub < KSUB; ++sub) {
              const int k0 = (kt * KSUB + sub) * kBK;
              if (EVICT) {
                tma_load_2d_hint(a_dst + sub * kWM * 128, &tmap_b, k0, tn * BN, bar, evict_first);
              } else {
                tma_load_2d(a_dst + sub * kWM * 128, &tmap_b, k0, tn * BN, bar);
              }
              tma_load_2d(b_dst + sub * kWN * 128, &tmap_a, k0, tm * BM, bar);
            }
            continue;
          }
          tma_load_2d(a_dst, &tmap_a, kt * kBK, tm * BM, bar);
          if (CLUSTER_M == 1) {
            if (b_nk) {
              tma_load_2d(b_dst, &tmap_b, kt * kBK, tn * BN, bar);
            } else {
              // K x N: one 64-row (K) by 64-column (N) box per 64-column atom.
#pragma unroll
              for (int j = 0; j < BN / 64; ++j)
                tma_load_2d(b_dst + j * kBK * 128, &tmap_b, tn * BN + j * 64, kt * kBK, bar);
            }
          } else {
            // This CTA loads its share of B's tile into every CTA of the
            // cluster (N x K: the map's box is BN / CLUSTER_M rows).
            constexpr unsigned short kAll = (1u << CLUSTER_M) - 1;
            if (b_nk) {
              constexpr int rows = BN / CLUSTER_M;  // a multiple of 32: rows * 128 bytes stays 1024-aligned
              tma_load_2d_multicast(b_dst + rank * rows * 128, &tmap_b, kt * kBK, tn * BN + rank * rows, bar, kAll);
            } else {
              for (int j = rank; j < BN / 64; j += CLUSTER_M)
                tma_load_2d_multicast(b_dst + j * kBK * 128, &tmap_b, tn * BN + j * 64, kt * kBK, bar, kAll);
            }
          }
        }
      }
    }
    // The producer's threads leave now: the block lives on while its
    // consumers run, and the cluster barrier below waits only for threads
    // that have not exited. Parking them in that barrier instead made warp 0
    // reach an `.aligned` barrier diverged, and cost clusters 10% (360 -> 330
    // us at 4096^3, hot, wgmma_check.cu).
    return;
  } else {
    if (kMinBlocks == 1) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMERS == 1 ? 240 : 232));
    const int consumer = wg - 1;
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    float acc[kMI][kWN / 2];
    int it = 0;
    for (int pid = blockIdx.x / SPLIT_K; pid < tiles; pid += gridDim.x / SPLIT_K) {
      int tm, tn;
      tile_of(pid, tiles_m, tiles_n, tm, tn);
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int i = 0; i < kWN / 2; ++i) acc[mi][i] = 0.f;

      for (int kt = kt_begin; kt < kt_end; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(smem_addr(&full[s]), (it / STAGES) & 1);
        const unsigned a_stage = base + s * kStageBytes, b_stage = a_stage + kABytes;
        if (b_nk || SWAP_AB) {
          consume<0>(acc, a_stage, b_stage, consumer);
        } else {
          consume<1>(acc, a_stage, b_stage, consumer);
        }
        // One group stays in flight while the next stage is awaited; the one
        // before it has finished reading its stage, which goes back to the
        // producer(s) that fill it.
        wgmma_wait<1>();
        if (kt > kt_begin) release(smem_addr(&empty[(it - 1) % STAGES]), t);
      }
      wgmma_wait<0>();
      if (kt_end > kt_begin) release(smem_addr(&empty[(it - 1) % STAGES]), t);

      // Epilogue (the accumulator layout: see stage_acc).
#if SPLIT_K > 1
      // Split-K: every block of the cluster holds an fp32 partial of the
      // whole tile. It leaves it in its ring (idle: one tile per block); after
      // a cluster barrier, block q sums its share of the tile's 4-column
      // chunks (of the rows inside C: one row of 8 for a GEMV) from all the
      // partials through distributed shared memory and stores them, in the
      // order of the blocks, so C does not depend on timing. The barrier at
      // the kernel's end keeps each partial until every block has read it.
      asm volatile("bar.sync 1, %0;\n" ::"n"(128 * CONSUMERS) : "memory");
      stage_acc<true>(acc, base, kPRowBytes, consumer, warp, lane);
      cluster_sync();
      const int chunks = min(BM, M - tm * BM) * (BN / 4);
      const bool vec = (N % 4) == 0;  // 8-byte stores of 4 bf16 stay aligned
      for (int idx = kpart * chunks / SPLIT_K + threadIdx.x - 128; idx < (kpart + 1) * chunks / SPLIT_K;
           idx += 128 * CONSUMERS) {
        const int row = idx / (BN / 4), col = (idx % (BN / 4)) * 4;
        const int grow = tm * BM + row, gcol = tn * BN + col;
        if (grow >= M || gcol >= N) continue;
        float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int q = 0; q < SPLIT_K; ++q) {
          const float4 x = ld_cluster_f4(base + row * kPRowBytes + col * 4, q);
          sum.x += x.x;
          sum.y += x.y;
          sum.z += x.z;
          sum.w += x.w;
        }
        __nv_bfloat16* out = C + static_cast<size_t>(grow) * N + gcol;
        const __nv_bfloat162 lo = __floats2bfloat162_rn(sum.x, sum.y), hi = __floats2bfloat162_rn(sum.z, sum.w);
        if (vec) {
          uint2 pk;
          pk.x = *reinterpret_cast<const unsigned*>(&lo);
          pk.y = *reinterpret_cast<const unsigned*>(&hi);
          *reinterpret_cast<uint2*>(out) = pk;
        } else {
          const __nv_bfloat16 e[4] = {lo.x, lo.y, hi.x, hi.y};
#pragma unroll
          for (int c = 0; c < 4; ++c)
            if (gcol + c < N) out[c] = e[c];
        }
      }
#elif EPILOGUE
      // Straight from that layout, a warp's store covers 8 rows x 16 bytes:
      // 8 half-written sectors. Staged in shared memory, a warp stores 512
      // contiguous bytes; at 4096^3 that took 198 to 182 us (run 13). The
      // stage is the ring (EPILOGUE=1: idle once every consumer is past its
      // last wgmma, as the producer loads nothing more for a block's only
      // tile) or a region after it (EPILOGUE=2). Rows are BN * 2 + 16 bytes
      // apart, so the bf16x2 writes of a warp's 8 rows x 4 lanes hit 32
      // different banks. The first barrier also keeps a fast consumer from
      // overwriting the stage while others still copy out the last tile.
      static_assert(EPILOGUE == 2 || BM * kCRowBytes <= STAGES * kStageBytes, "the staged tile must fit in the ring");
      const unsigned stage = base + (EPILOGUE == 2 ? STAGES * kStageBytes : 0);
      asm volatile("bar.sync 1, %0;\n" ::"n"(128 * CONSUMERS) : "memory");
      stage_acc<false>(acc, stage, kCRowBytes, consumer, warp, lane);
      asm volatile("bar.sync 1, %0;\n" ::"n"(128 * CONSUMERS) : "memory");
      const bool vec = (N % 8) == 0;  // 16-byte stores stay aligned
      for (int idx = threadIdx.x - 128; idx < BM * BN / 8; idx += 128 * CONSUMERS) {
        const int row = idx / (BN / 8), col = (idx % (BN / 8)) * 8;
        const int grow = tm * BM + row, gcol = tn * BN + col;
        if (grow >= M || gcol >= N) continue;
        uint4 v;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(stage + row * kCRowBytes + col * 2));
        __nv_bfloat16* out = C + static_cast<size_t>(grow) * N + gcol;
        if (vec) {
          *reinterpret_cast<uint4*>(out) = v;
        } else {
          const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int c = 0; c < 8; ++c)  // unrolled: w stays in registers
            if (gcol + c < N) out[c] = __ushort_as_bfloat16(static_cast<unsigned short>(w[c / 2] >> (16 * (c % 2))));
        }
      }
#else
      const bool pairs = (N % 2) == 0;  // bf16x2 stores stay 4-byte aligned
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = tm * BM + (consumer * kMI + mi) * 64 + warp * 16 + lane / 4 + 8 * h;
          if (row >= M) continue;
          __nv_bfloat16* out = C + static_cast<size_t>(row) * N;
#pragma unroll
          for (int j = 0; j < BN / 8; ++j) {
            const int col = tn * BN + 8 * j + 2 * (lane % 4);
            const float v0 = acc[mi][4 * j + 2 * h], v1 = acc[mi][4 * j + 2 * h + 1];
            if (pairs && col + 1 < N) {
              *reinterpret_cast<__nv_bfloat162*>(out + col) = __floats2bfloat162_rn(v0, v1);
            } else {
              if (col < N) out[col] = __float2bfloat16_rn(v0);
              if (col + 1 < N) out[col + 1] = __float2bfloat16_rn(v1);
            }
          }
        }
      }
#endif
    }
  }
  // No CTA may leave while a peer can still write into its shared memory,
  // arrive on its barriers or (SPLIT_K) read its partial tile: the
  // consumers of the cluster wait for each other.
  if (CLUSTER_M > 1 || SPLIT_K > 1) cluster_sync();
}

// The verification reference: one thread per element of C, fp32
// accumulation in K order, grid-stride so any launch covers C.
extern "C" __global__ void gemm_reference(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                          __nv_bfloat16* __restrict__ C, const __grid_constant__ TensorMap tmap_a,
                                          const __grid_constant__ TensorMap tmap_b, int M, int N, int K, int b_nk) {
  (void)tmap_a;
  (void)tmap_b;
  const size_t total = static_cast<size_t>(M) * N;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int m = static_cast<int>(i / N), n = static_cast<int>(i % N);
    float s = 0.f;
    for (int k = 0; k < K; ++k) {
      const float b = b_nk ? __bfloat162float(B[static_cast<size_t>(n) * K + k]) : __bfloat162float(B[static_cast<size_t>(k) * N + n]);
      s += __bfloat162float(A[static_cast<size_t>(m) * K + k]) * b;
    }
    C[i] = __float2bfloat16_rn(s);
  }
}
