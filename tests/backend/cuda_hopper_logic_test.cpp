// The CUDA backend's Hopper checks that need no GPU: a cluster against the
// grid and the device, a tensor map against TMA's rules (and the status each
// failure becomes), and the arguments cuTensorMapEncodeTiled gets.
#include <gtest/gtest.h>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "backend/cuda/detail/driver.hpp"

using namespace tunekit;
using namespace tunekit::cuda;

namespace {

DeviceLimits device(int cc_major) {
  DeviceLimits d;
  d.cc_major = cc_major;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 64};
  d.max_grid = {2147483647, 65535, 65535};
  d.shared_per_block_optin = 232448;
  return d;
}

LaunchGeometry clustered(std::array<std::uint64_t, 3> grid, std::array<std::uint64_t, 3> cluster) {
  LaunchGeometry g;
  g.grid = grid;
  g.block = {128, 1, 1};
  g.cluster = cluster;
  return g;
}

ResolvedTensorMap map(std::vector<std::int64_t> dims, std::vector<std::int64_t> box, int swizzle = 0) {
  ResolvedTensorMap m;
  m.of = "A";
  m.dims = std::move(dims);
  m.box = std::move(box);
  m.swizzle = swizzle;
  return m;
}

}  // namespace

TEST(CudaHopperLogic, ClusterMustDivideTheGridAndFitSixteenBlocks) {
  const DeviceLimits h = device(9);
  EXPECT_FALSE(check_geometry(h, clustered({8, 4, 1}, {2, 2, 1})));
  EXPECT_FALSE(check_geometry(h, clustered({8, 4, 1}, {8, 1, 1})));
  auto ragged = check_geometry(h, clustered({10, 4, 1}, {4, 1, 1}));
  ASSERT_TRUE(ragged);
  EXPECT_NE(ragged->find("grid.x = 10 is not a multiple of cluster.x = 4"), std::string::npos) << *ragged;
  auto y = check_geometry(h, clustered({8, 3, 1}, {1, 2, 1}));
  ASSERT_TRUE(y);
  EXPECT_NE(y->find("grid.y = 3"), std::string::npos) << *y;
  // 9 to 16 blocks: a non-portable size, left to the launch (the worker asks for it)
  EXPECT_FALSE(check_geometry(h, clustered({16, 4, 1}, {16, 1, 1})));
  EXPECT_FALSE(check_geometry(h, clustered({12, 4, 1}, {3, 4, 1})));
  auto big = check_geometry(h, clustered({32, 4, 1}, {16, 2, 1}));
  ASSERT_TRUE(big);
  EXPECT_NE(big->find("32 blocks; at most 16"), std::string::npos) << *big;
  auto old = check_geometry(device(8), clustered({8, 4, 1}, {2, 1, 1}));
  ASSERT_TRUE(old);
  EXPECT_NE(old->find("compute capability 9.0"), std::string::npos) << *old;
  // No cluster (1 x 1 x 1) needs nothing.
  EXPECT_FALSE(check_geometry(device(8), clustered({7, 3, 1}, {1, 1, 1})));
}

TEST(CudaHopperLogic, TensorMapWithinTmaRulesPasses) {
  EXPECT_FALSE(check_tensor_map("t", map({200, 77}, {64, 32}), ElementType::bf16, 200 * 77));
  EXPECT_FALSE(check_tensor_map("t", map({200, 77}, {64, 32}, 128), ElementType::bf16, 200 * 77));
  EXPECT_FALSE(check_tensor_map("t", map({4096}, {256}), ElementType::f32, 4096));
  EXPECT_FALSE(check_tensor_map("t", map({7}, {8}), ElementType::bf16, 7));  // 1-D: no stride; a box over the end
}

TEST(CudaHopperLogic, TensorMapProblemsGetTheirStatus) {
  struct Case {
    ResolvedTensorMap m;
    ElementType type;
    std::uint64_t elements;
    Status status;
    const char* why;
  } cases[] = {
      {map({100, 77}, {64, 32}), ElementType::bf16, 100 * 77, Status::launch_error, "not a multiple of 16"},
      {map({200, 77}, {64, 32}), ElementType::bf16, 200 * 76, Status::launch_error, "cover 15400 elements"},
      {map({200, 77}, {64, 512}), ElementType::bf16, 200 * 77, Status::resource_limit, "box[1] = 512"},
      {map({200, 77}, {4, 32}), ElementType::bf16, 200 * 77, Status::resource_limit, "multiple of 16 bytes"},
      {map({200, 77}, {128, 32}, 128), ElementType::bf16, 200 * 77, Status::resource_limit, "128-byte swizzle span"},
      {map({200, 77}, {32, 32}, 32), ElementType::bf16, 200 * 77, Status::resource_limit, "32-byte swizzle span"},
      {map({200, 0}, {64, 32}), ElementType::bf16, 200 * 77, Status::launch_error, "dims[1] = 0"},
      {map({1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}), ElementType::f32, 1, Status::launch_error, "6 dimensions"},
      {map({64, 2}, {16}), ElementType::f32, 128, Status::launch_error, "1 box extents for 2 dimensions"},
  };
  for (const auto& c : cases) {
    auto p = check_tensor_map("tmap", c.m, c.type, c.elements);
    ASSERT_TRUE(p) << c.why;
    EXPECT_EQ(p->status, c.status) << p->why;
    EXPECT_NE(p->why.find(c.why), std::string::npos) << p->why;
    EXPECT_NE(p->why.find("tensor map 'tmap' (of 'A'"), std::string::npos) << p->why;
  }
  ResolvedTensorMap nan = map({64}, {16});
  nan.oob_nan = true;
  EXPECT_FALSE(check_tensor_map("t", nan, ElementType::f32, 64));
  auto ints = check_tensor_map("t", nan, ElementType::i32, 64);
  ASSERT_TRUE(ints);
  EXPECT_NE(ints->why.find("floating-point"), std::string::npos) << ints->why;
}

TEST(CudaHopperLogic, EncodingIsADenseRowMajorArray) {
  ResolvedTensorMap m = map({200, 77, 3}, {64, 32, 1}, 128);
  m.l2_promotion = 256;
  const TensorMapEncoding e = tensor_map_encoding(m, ElementType::bf16);
  EXPECT_EQ(e.data_type, kTensorMapBfloat16);
  EXPECT_EQ(e.rank, 3u);
  EXPECT_EQ(e.dims[0], 200u);
  EXPECT_EQ(e.dims[2], 3u);
  EXPECT_EQ(e.strides[0], 400u);       // bytes of a row
  EXPECT_EQ(e.strides[1], 400u * 77);  // of a plane
  EXPECT_EQ(e.box[0], 64u);
  EXPECT_EQ(e.box[1], 32u);
  EXPECT_EQ(e.element_strides[0], 1u);
  EXPECT_EQ(e.swizzle, kTensorMapSwizzle128B);
  EXPECT_EQ(e.l2_promotion, kTensorMapL2Promotion256B);
  EXPECT_EQ(e.oob_fill, kTensorMapOobFillNone);  // zeros
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}), ElementType::f32).data_type, kTensorMapFloat32);
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}), ElementType::f16).data_type, kTensorMapFloat16);
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}), ElementType::i8).data_type, kTensorMapUint8);
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}), ElementType::u32).data_type, kTensorMapUint32);
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}), ElementType::i64).data_type, kTensorMapInt64);
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}), ElementType::f64).data_type, kTensorMapFloat64);
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}, 32), ElementType::f64).swizzle, kTensorMapSwizzle32B);
  EXPECT_EQ(tensor_map_encoding(map({8}, {8}, 64), ElementType::f64).swizzle, kTensorMapSwizzle64B);
}

TEST(CudaHopperLogic, DriverStructsHaveCudaHsLayout) {
  // cuda.h (CUDA 12 and 13): CUlaunchAttribute is 72 bytes with its value at
  // 8; CUlaunchConfig is 56 bytes; a CUtensorMap is 128 bytes.
  EXPECT_EQ(sizeof(CUlaunchAttribute), 72u);
  EXPECT_EQ(offsetof(CUlaunchAttribute, value), 8u);
  EXPECT_EQ(sizeof(CUlaunchConfig), 56u);
  EXPECT_EQ(sizeof(CUtensorMap), 128u);
  EXPECT_EQ(alignof(CUtensorMap) % 64, 0u);
}
