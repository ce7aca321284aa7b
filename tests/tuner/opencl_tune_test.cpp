// The whole loop on an OpenCL device (PoCL in CI): a spec with a tunable
// work-group size and planted kernels meets every failure mode, records
// each with its status, and still finds a best config.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "backend/detail/registry.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

// KIND 1 writes through a wild pointer (SIGSEGV in PoCL's worker), 3 never
// returns, 4 is off by 1 at [7], 5 does not compile.
const char* kKernel = R"(
__kernel void scale(__global const float* x, __global float* y, int n) {
  const int i = get_global_id(0);
#if KIND == 0
  if (i < n) y[i] = 2 * x[i];
#elif KIND == 1
  ((__global volatile int*)16)[i] = n;
#elif KIND == 3
  while (1) {}
#elif KIND == 4
  if (i < n) y[i] = 2 * x[i] + (i == 7);
#elif KIND == 5
  this does not compile;
#endif
}
__kernel void scale_ref(__global const float* x, __global float* y, int n) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = 2 * x[i];
}
)";

const char* kSpec = R"yaml(name: planted_opencl
kernel:
  source: planted.cl
  entry: scale
  language: opencl
  grid: ["ceil_div(N, BS)"]
  block: [BS]
arguments:
  - {{name: x, type: f32, size: N, fill: random}}
  - {{name: y, type: f32, size: N, role: out}}
  - {{name: n, type: i32, value: N}}
sizes: {{N: 4096}}
parameters:
  KIND: [0, 1, 3, 4, 5]
  BS: [32, 64, 128, {big}, {huge}]
constraints:
  - BS <= 4 * max_work_group_size
configs:
  - {{KIND: 0, BS: 32}}
  - {{KIND: 0, BS: 128}}
  - {{KIND: 1, BS: 64}}
  - {{KIND: 3, BS: 64}}
  - {{KIND: 4, BS: 64}}
  - {{KIND: 5, BS: 64}}
  - {{KIND: 0, BS: {big}}}
  - {{KIND: 0, BS: {huge}}}
default: {{KIND: 0, BS: 64}}
reference: {{entry: scale_ref}}
tolerance: {{atol: 1e-6, rtol: 0}}
measure: {{warmup: 1ms, min_samples: 3, max_samples: 20, max_time: 200ms, cache: hot, timeout: 30s, early_stop: off}}
)yaml";

}  // namespace

TEST(OpenClTune, PlantedFailuresAreRecordedAndTheBestIsFound) {
  const DeviceListing devices = backends().get("opencl").list_devices();
  if (devices.devices.empty()) {
    std::fprintf(stderr, "no OpenCL device, skipping: %s\n", devices.unavailable.c_str());
    GTEST_SKIP() << "no OpenCL device: " << devices.unavailable;
  }
  const std::int64_t max_group = devices.devices[0].properties.at("max_work_group_size").as_int();

  const auto dir = fresh_dir();
  write_file(dir / "planted.cl", kKernel);
  // A work-group twice the device's limit passes the constraint and is
  // refused by the device; four times plus one breaks the constraint.
  write_file(dir / "planted.yaml",
             fmt::format(fmt::runtime(kSpec), fmt::arg("big", 2 * max_group), fmt::arg("huge", 4 * max_group + 1)));
  Spec spec = load_spec(dir / "planted.yaml");

  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report = tune(spec, opt);
  EXPECT_EQ(report.device.rfind("opencl: ", 0), 0u) << report.device;
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  ASSERT_EQ(s.trials.size(), 9u);  // the eight listed and the default
  std::map<std::pair<std::int64_t, std::int64_t>, TrialRecord> by_config;
  for (const auto& t : s.trials) {
    by_config[{t.config.at("KIND").as_int(), t.config.at("BS").as_int()}] = t;
    std::fprintf(stderr, "  %s: %s %s\n", t.config.str().c_str(), std::string(to_string(t.status)).c_str(),
                 t.error.substr(0, 120).c_str());
  }
  auto status = [&](std::int64_t kind, std::int64_t bs) { return by_config.at({kind, bs}).status; };
  EXPECT_EQ(status(0, 64), Status::ok);
  EXPECT_EQ(status(0, 32), Status::ok);
  EXPECT_EQ(status(0, 128), Status::ok);
  EXPECT_EQ(status(1, 64), Status::crash);
  EXPECT_NE(by_config.at({1, 64}).error.find("SIGSEGV"), std::string::npos) << by_config.at({1, 64}).error;
  EXPECT_EQ(status(3, 64), Status::timeout);
  EXPECT_EQ(status(4, 64), Status::wrong_result);
  EXPECT_NE(by_config.at({4, 64}).error.find("[7]"), std::string::npos) << by_config.at({4, 64}).error;
  EXPECT_EQ(status(5, 64), Status::compile_error);
  EXPECT_NE(by_config.at({5, 64}).error.find("planted.cl"), std::string::npos) << by_config.at({5, 64}).error;
  EXPECT_EQ(status(0, 2 * max_group), Status::resource_limit);
  EXPECT_EQ(status(0, 4 * max_group + 1), Status::invalid);

  // The default config is evaluated first and is the baseline; the best is
  // a verified, correct kernel.
  EXPECT_EQ(s.trials[0].config.at("BS"), Value(64));
  ASSERT_TRUE(s.baseline && s.best);
  EXPECT_EQ(*s.baseline, 0u);
  EXPECT_EQ(s.trials[*s.best].config.at("KIND"), Value(0));
  EXPECT_TRUE(s.trials[*s.best].verification.checked);
  EXPECT_GT(s.trials[*s.best].stats.median.count(), 0.0);

  // A rerun resumes: nothing is rebuilt or rerun. The invalid config is
  // not stored (a constraint decides it again), so 8 of the 9 come back.
  TuneReport again = tune(spec, opt);
  EXPECT_EQ(again.resumed, 8u);
  EXPECT_EQ(again.measure.count(), 0.0);
}
