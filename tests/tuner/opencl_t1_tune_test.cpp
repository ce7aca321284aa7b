// A Kernel Tuner T1 file tuned as it is, on an OpenCL device (PoCL in CI):
// examples/kernel_tuner_t1, whose kernel, written for Kernel Tuner, reads
// the macros Kernel Tuner defines, and whose Search and Budget run the
// search.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "backend/detail/registry.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;

TEST(OpenClT1Tune, AKernelTunerFileIsTunedAsItIs) {
  const DeviceListing devices = backends().get("opencl").list_devices();
  if (devices.devices.empty()) {
    std::fprintf(stderr, "no OpenCL device, skipping: %s\n", devices.unavailable.c_str());
    GTEST_SKIP() << "no OpenCL device: " << devices.unavailable;
  }
  // A copy, so that the results go to a folder of the test's own.
  const auto dir = fresh_dir();
  const std::filesystem::path example = std::filesystem::path(TUNEKIT_SOURCE_DIR) / "examples/kernel_tuner_t1";
  for (const char* file : {"vector_add.cl", "vector_add.json"}) std::filesystem::copy_file(example / file, dir / file);
  Spec spec = load_spec(dir / "vector_add.json");
  // Every config measured in full: on a busy machine the early stop may cut
  // one short as more than 3x slower, and the check is that each one ran
  // right, not how fast.
  spec.measure.early_stop = 0;

  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  // The budget is the file's: six configs, the default first (its
  // baseline), every one built with the macros and verified against it.
  ASSERT_EQ(s.trials.size(), 6u);
  EXPECT_EQ(s.trials[0].config.at("block_size_x"), Value(64));
  EXPECT_EQ(s.trials[0].config.at("tile_size_x"), Value(1));
  for (const TrialRecord& t : s.trials) {
    EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
    if (&t != &s.trials[0]) EXPECT_TRUE(t.verification.checked) << t.config.str();
  }
  ASSERT_TRUE(s.best);
  EXPECT_GT(s.trials[*s.best].stats.median.count(), 0.0);
}
