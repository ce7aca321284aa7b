// A Kernel Tuner T1 file with constant memory, tuned on a GPU (skipped
// without one): examples/kernel_tuner_t1/convolution, whose filter is a
// __constant__ symbol the worker fills before each call, and whose kernel
// fails its own check where the symbol is left unfilled or the grid is not
// Kernel Tuner's.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::have_gpu;

TEST(CudaT1Tune, AKernelTunerFileWithConstantMemoryIsTunedAsItIs) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
  const auto dir = fresh_dir();
  const std::filesystem::path example = std::filesystem::path(TUNEKIT_SOURCE_DIR) / "examples/kernel_tuner_t1";
  for (const char* file : {"convolution.cu", "convolution.json"})
    std::filesystem::copy_file(example / file, dir / file);
  Spec spec = load_spec(dir / "convolution.json");
  spec.measure.max_time = Seconds(0.05);  // a check of the loop, not a measurement
  // Every config measured in full (on an H200 the 32-thread blocks were cut
  // short as more than 3x slower): the check is that each one ran right.
  spec.measure.early_stop = 0;

  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  ASSERT_EQ(s.trials.size(), 24u);  // brute_force: 6 block sizes times 4 tiles
  for (const TrialRecord& t : s.trials) {
    EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
    if (t.config.at("block_size_x") != Value(128) || t.config.at("tile_size_x") != Value(1))
      EXPECT_TRUE(t.verification.checked) << t.config.str();
  }
  ASSERT_TRUE(s.best);
  EXPECT_GT(s.trials[*s.best].stats.median.count(), 0.0);
}
