// CUDA Hopper launch features in a spec: tensor-map arguments and
// thread-block clusters, and the errors (with line and column) for their
// mistakes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tunekit/error.hpp"
#include "tunekit/spec.hpp"
#include "support/spec_errors.hpp"

namespace fs = std::filesystem;
using namespace tunekit;
using ::testing::HasSubstr;

namespace {

class HopperSpec : public tunekit::testing::SpecErrors {
 protected:
  void SetUp() override {
    SpecErrors::SetUp();
    std::ofstream(dir_ / "k.cu") << "__global__ void k() {}\n";
  }
};

// 8 lines: a CUDA kernel and a bf16 buffer A; arguments follow from line 9.
const std::string kCuda =
    "kernel:\n"
    "  source: k.cu\n"
    "  entry: k\n"
    "  language: cuda\n"
    "  grid: [1]\n"
    "  block: [128]\n"
    "arguments:\n"
    "  - {name: A, type: bf16, size: M*K}\n";

}  // namespace

TEST_F(HopperSpec, TensorMapArgumentIsParsed) {
  Spec s = load_spec(
      write(kCuda + "  - {name: tmap_a, tensor_map: {of: A, dims: [K, M], box: [BK, BM], swizzle: 128}}\n"
                    "  - name: tmap_b\n"
                    "    tensor_map: {of: A, dims: [K, M, 1], box: [BK, BM, 1], oob: nan, l2_promotion: 256}\n"));
  ASSERT_EQ(s.arguments.size(), 3u);
  const ArgumentSpec& a = s.arguments[1];
  EXPECT_EQ(a.name, "tmap_a");
  EXPECT_EQ(a.role, Role::tensor_map);
  EXPECT_EQ(a.type, ElementType::bf16);  // the buffer's
  EXPECT_FALSE(a.size.has_value());
  ASSERT_TRUE(a.tensor_map.has_value());
  const TensorMapSpec& t = *a.tensor_map;
  EXPECT_EQ(t.of, "A");
  ASSERT_EQ(t.dims.size(), 2u);
  EXPECT_EQ(t.dims[0].text(), "K");
  EXPECT_EQ(t.box[1].text(), "BM");
  EXPECT_EQ(t.swizzle, 128);
  EXPECT_FALSE(t.oob_nan);         // default: zero
  EXPECT_EQ(t.l2_promotion, 128);  // default
  EXPECT_EQ(t.where.line, 9);
  EXPECT_EQ(t.of_where.line, 9);
  const TensorMapSpec& u = *s.arguments[2].tensor_map;
  EXPECT_EQ(u.dims.size(), 3u);
  EXPECT_EQ(u.swizzle, 0);
  EXPECT_TRUE(u.oob_nan);
  EXPECT_EQ(u.l2_promotion, 256);
}

TEST_F(HopperSpec, TensorMapMayComeBeforeItsBuffer) {
  Spec s =
      load_spec(write("kernel: {source: k.cu, entry: k, language: cuda, grid: [1], block: [1]}\n"
                      "arguments:\n"
                      "  - {name: t, tensor_map: {of: B, dims: [8], box: [8]}}\n"
                      "  - {name: B, type: f32, size: 8}\n"));
  EXPECT_EQ(s.arguments[0].type, ElementType::f32);
}

TEST_F(HopperSpec, TensorMapOfMustNameABuffer) {
  expect_error(kCuda + "  - {name: t, tensor_map: {of: AA, dims: [K], box: [8]}}\n", 9, 32,
               "'of' names no argument: 'AA'; did you mean 'A'?");
  expect_error(kCuda + "  - {name: n, type: i32, value: 4}\n  - {name: t, tensor_map: {of: n, dims: [K], box: [8]}}\n",
               10, 32, "'of' must name a buffer argument");
}

TEST_F(HopperSpec, TensorMapKeysAreChecked) {
  expect_error(kCuda + "  - {name: t, type: f32, tensor_map: {of: A, dims: [K], box: [8]}}\n", 9, 15,
               "'type' does not apply");
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K], box: [8], swizle: 32}}\n", 9, 56,
               "unknown key 'swizle'");
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K]}}\n", 9, 27, "missing required key 'box'");
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K, M], box: [8]}}\n", 9, 54,
               "'box' has 1 extent but 'dims' has 2");
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [1, 2, 3, 4, 5, 6], box: [8]}}\n", 9, 41,
               "a list of 1 to 5 expressions");
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K], box: [8], swizzle: 16}}\n", 9, 65,
               "expected one of none, 32, 64, 128");
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K], box: [8], oob: nan, l2_promotion: 32}}\n", 9, 80,
               "expected one of none, 64, 128, 256");
}

TEST_F(HopperSpec, LiteralBoxesAreCheckedAtLoad) {
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K, M], box: [64, 512]}}\n", 9, 59,
               "box[1] = 512; a box extent is 1 to 256 elements");
  // 4 bf16 elements are 8 bytes.
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K, M], box: [4, 8]}}\n", 9, 55,
               "box[0] = 4 bf16 elements is 8 bytes");
  // 128 bf16 elements are 256 bytes, over a 128-byte swizzle.
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [K, M], box: [128, 8], swizzle: 128}}\n", 9, 55,
               "over the 128-byte swizzle span");
  // A row of 100 bf16 elements is 200 bytes.
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [100, M], box: [64, 8]}}\n", 9, 42,
               "multiples of 16 bytes");
  expect_error(kCuda + "  - {name: t, tensor_map: {of: A, dims: [0], box: [8]}}\n", 9, 42, "dims[0] = 0");
  expect_error(
      kCuda + "  - {name: i, type: i32, size: 8}\n  - {name: t, tensor_map: {of: i, dims: [8], box: [8], oob: nan}}\n",
      10, 27, "oob: nan needs a floating-point buffer");
}

TEST_F(HopperSpec, TensorMapsNeedCuda) {
  expect_error(
      "kernel: {source: k.cpp, entry: k}\n"
      "arguments:\n"
      "  - {name: A, type: f32, size: 64}\n"
      "  - {name: t, tensor_map: {of: A, dims: [64], box: [16]}}\n",
      4, 5, "needs kernel.language: cuda");
}

TEST_F(HopperSpec, ClusterIsParsed) {
  Spec s =
      load_spec(write("kernel:\n  source: k.cu\n  entry: k\n  language: cuda\n  grid: [8, 4]\n  block: [128]\n"
                      "  cluster: [CX, 2]\n"
                      "arguments:\n  - {name: A, type: f32, size: 8, role: out}\n"
                      "reference: {entry: k, grid: [8, 4], block: [32], cluster: [2]}\n"));
  ASSERT_EQ(s.kernel.launch.cluster.size(), 2u);
  EXPECT_EQ(s.kernel.launch.cluster[0].text(), "CX");
  EXPECT_EQ(s.kernel.launch.cluster[1].text(), "2");
  ASSERT_EQ(s.reference.launch.cluster.size(), 1u);
}

TEST_F(HopperSpec, ClusterErrors) {
  const std::string head = "kernel:\n  source: k.cu\n  entry: k\n  language: cuda\n  grid: [8, 4]\n  block: [128]\n";
  const std::string args = "arguments:\n  - {name: A, type: f32, size: 8}\n";
  expect_error(head + "  cluster: [4, 8]\n" + args, 7, 13, "a cluster of 32 blocks; no GPU allows more than 16");
  expect_error(head + "  cluster: [2, 0]\n" + args, 7, 16, "cluster[1] = 0 must be at least 1");
  expect_error(head + "  cluster: [1, 1, 1, 1]\n" + args, 7, 12, "a list of 1 to 3 expressions");
  expect_error("kernel:\n  source: k.cpp\n  entry: k\n  cluster: [2]\n" + args, 4, 3,
               "'cluster' (thread-block clusters) applies to cuda kernels, not c++");
  // An OpenCL kernel declares its __local arrays: at load, not at its
  // reference's launch.
  write("__kernel void k() {}\n", "k.cl");
  expect_error("kernel:\n  source: k.cl\n  entry: k\n  language: opencl\n  grid: [8]\n  block: [64]\n"
               "  shared_memory: 1024\n" + args,
               7, 3,
               "'shared_memory' (dynamic shared memory per block) applies to cuda kernels, not opencl (whose "
               "kernels declare their local memory themselves)");
  // The driver builds an OpenCL program: a compiler named would be ignored.
  expect_error(
      "kernel:\n  source: k.cl\n  entry: k\n  language: opencl\n  grid: [8]\n  block: [64]\n"
      "  compiler: nvcc\n" +
          args,
      7, 13, "bad value 'nvcc' for 'kernel.compiler': expected one of opencl");
  expect_error(head + args + "reference: {entry: k, cluster: [2]}\n", 9, 23,
               "'reference.cluster' needs the reference's own 'grid' and 'block'");
}

// ptxas reports a CUDA build's spills, so kernel.max_spills applies to CUDA
// kernels as to Triton's; a host kernel's compiler reports none.
TEST_F(HopperSpec, MaxSpillsAppliesToCudaKernels) {
  const std::string cuda = "kernel:\n  source: k.cu\n  entry: k\n  language: cuda\n  grid: [1]\n  block: [128]\n";
  const std::string args = "arguments:\n  - {name: A, type: f32, size: 8}\n";
  Spec s = load_spec(write(cuda + "  max_spills: 0\n" + args));
  ASSERT_TRUE(s.kernel.max_spills);
  EXPECT_EQ(*s.kernel.max_spills, 0);
  expect_error("kernel:\n  source: k.cpp\n  entry: k\n  max_spills: 4\n" + args, 4, 3,
               "'max_spills' applies to cuda and triton kernels, not c++");
  expect_error(cuda + "  max_spills: -1\n" + args, 7, 15, "a number of spilled registers");
}
