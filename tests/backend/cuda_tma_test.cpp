// Hopper launch features on a GPU (skipped without one): TMA tensor maps as
// kernel arguments (encoded by the worker, zero fill at ragged edges, a
// 128-byte swizzle), thread-block clusters (cuLaunchKernelEx), and a tensor
// map TMA cannot describe becoming a recorded status. The kernels are in
// tests/backend/data/hopper_kernels.cu.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

const fs::path kKernels = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "backend" / "data" / "hopper_kernels.cu";

// W = 200 and H = 77 are multiples of no box: the last box of each row and
// column hangs over the edge, and TMA must fill that part with zeros.
const char* kCopySpec = R"yaml(name: tma-copy
kernel:
  source: hopper_kernels.cu
  language: cuda
  entry: tma_copy
  grid: ["ceil_div(W, BW)", "ceil_div(H, BH)"]
  block: [128]
arguments:
  - {name: A, type: bf16, size: W*H}
  - {name: out, type: bf16, size: W*H, role: out}
  - {name: plain, tensor_map: {of: A, dims: [W, H], box: [BW, BH]}}
  - {name: swizzled, tensor_map: {of: A, dims: [W, H], box: [64, BH], swizzle: 128}}
  - {name: W, type: i32, value: W}
  - {name: H, type: i32, value: H}
sizes: {W: 200, H: 77}
parameters:
  BW: [32, 64]
  BH: [16, 32]
  SWZ: [0, 1]
constraints:
  - SWZ == 0 or BW == 64
default: {BW: 32, BH: 16, SWZ: 0}
reference: {entry: tma_copy_ref, grid: [16], block: [256]}
tolerance: {atol: 0, rtol: 0}
measure: {warmup: 2ms, min_samples: 3, max_samples: 10, max_time: 50ms, timeout: 10s, early_stop: off}
)yaml";

// A 16 x 4 grid in clusters of CX x CY; CX = 3 does not divide it, 16 x 1 is
// a non-portable size (Hopper runs it), 16 x 2 is more than any GPU allows.
const char* kClusterSpec = R"yaml(name: clusters
kernel:
  source: hopper_kernels.cu
  language: cuda
  entry: cluster_ids
  grid: [16, 4]
  block: [32]
  cluster: [CX, CY]
arguments:
  - {name: out, type: u32, size: 16*4*4, role: out}
  - {name: cx, type: i32, value: CX}
  - {name: cy, type: i32, value: CY}
parameters:
  CX: [1, 2, 3, 4, 16]
  CY: [1, 2]
default: {CX: 1, CY: 1}
reference: {entry: cluster_ids_ref, grid: [16, 4], block: [32]}
tolerance: {atol: 0, rtol: 0}
measure: {warmup: 2ms, min_samples: 3, max_samples: 10, max_time: 50ms, timeout: 10s, early_stop: off}
)yaml";

using tunekit::testing::have_gpu;

bool have_hopper() {
  for (const auto& l : list_devices())
    if (l.backend == "cuda")
      for (const auto& d : l.devices)
        if (auto cc = d.properties.find("compute_capability"); cc != d.properties.end() && cc->second.as_int() >= 90)
          return true;
  return false;
}

class CudaTmaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
    if (!have_hopper()) GTEST_SKIP() << "TMA and clusters need compute capability 9.0";
    dir_ = fresh_dir();
    write_file(dir_ / "hopper_kernels.cu", read_file(kKernels));
  }

  TuneReport run(const std::string& spec_text, const std::string& name = "spec.yaml") {
    write_file(dir_ / name, spec_text);
    Spec spec = load_spec(dir_ / name);
    TuneOptions opt;
    opt.out_dir = dir_ / "out";
    return tune(spec, opt);
  }

  fs::path dir_;
};

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TEST_F(CudaTmaTest, TmaCopiesRaggedTilesPlainAndSwizzled) {
  TuneReport report = run(kCopySpec);
  ASSERT_EQ(report.sizes.size(), 1u);
  const auto& trials = report.sizes[0].trials;
  ASSERT_EQ(trials.size(), 6u);  // BW=32 with SWZ=1 is pruned
  int swizzled = 0;
  for (const auto& t : trials) {
    EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
    EXPECT_TRUE(t.verification.checked) << t.config.str();
    EXPECT_TRUE(t.verification.passed) << t.config.str() << ": " << t.verification.detail;
    EXPECT_GT(t.stats.median.count(), 0.0) << t.config.str();
    swizzled += t.config.at("SWZ").as_int() == 1;
  }
  EXPECT_EQ(swizzled, 2);
}

TEST_F(CudaTmaTest, ClusterKernelSeesItsRankAndClusterId) {
  TuneReport report = run(kClusterSpec);
  ASSERT_EQ(report.sizes.size(), 1u);
  const auto& trials = report.sizes[0].trials;
  ASSERT_EQ(trials.size(), 10u);
  int non_portable = 0;
  for (const auto& t : trials) {
    const auto cx = t.config.at("CX").as_int(), cy = t.config.at("CY").as_int();
    if (cx == 3 || cx * cy > 16) {
      EXPECT_EQ(t.status, Status::resource_limit) << t.config.str() << ": " << t.error;
      EXPECT_NE(t.error.find(cx == 3 ? "not a multiple of cluster.x" : "at most 16"), std::string::npos) << t.error;
      continue;
    }
    non_portable += cx * cy > 8;
    EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
    EXPECT_TRUE(t.verification.checked) << t.config.str();
    EXPECT_TRUE(t.verification.passed) << t.config.str() << ": " << t.verification.detail;
  }
  EXPECT_EQ(non_portable, 1);  // 16 x 1 ran and saw 16 ranks
}

TEST_F(CudaTmaTest, MisalignedStrideIsARecordedStatus) {
  // A row of 100 bf16 elements is 200 bytes, not a multiple of 16: no config
  // can encode the map. The reference ignores its maps (it gets them zeroed)
  // and runs; every trial records why, and the run ends normally.
  TuneReport report = run(replace(kCopySpec, "sizes: {W: 200, H: 77}", "sizes: {W: 100, H: 77}"));
  ASSERT_EQ(report.sizes.size(), 1u);
  const auto& trials = report.sizes[0].trials;
  ASSERT_EQ(trials.size(), 6u);
  for (const auto& t : trials) {
    EXPECT_EQ(t.status, Status::launch_error) << t.config.str() << ": " << t.error;
    EXPECT_NE(t.error.find("multiple of 16"), std::string::npos) << t.error;
  }
  // A box TMA refuses (inner extent over the swizzle span) is a
  // resource_limit of that config only.
  TuneReport wide =
      run(replace(kCopySpec, "box: [64, BH], swizzle: 128", "box: [BW * 2, BH], swizzle: 128"), "wide.yaml");
  ASSERT_EQ(wide.sizes.size(), 1u);
  std::map<std::string, Status> seen;
  for (const auto& t : wide.sizes[0].trials) {
    const bool too_wide = t.config.at("BW").as_int() == 64;  // 128 bf16 = 256 bytes > 128
    EXPECT_EQ(t.status, too_wide ? Status::resource_limit : Status::ok) << t.config.str() << ": " << t.error;
    if (too_wide) EXPECT_NE(t.error.find("swizzle span"), std::string::npos) << t.error;
  }
}
