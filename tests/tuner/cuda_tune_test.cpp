// The whole loop on a GPU (skipped without one): a CUDA spec with a template
// entry, device-limit constraints and planted faults; each fault gets its
// status, every other config is measured, and the run reports how busy the
// GPU was.
#include <gtest/gtest.h>

#include <map>

#include "support/gpu.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::write_file;

namespace {

const char* kKernel = R"(
template <int block>  // not BLOCK: the parameters also arrive as defines
__global__ void __launch_bounds__(block) scale(const float* x, float* y, int n) {
  int i = blockIdx.x * block + threadIdx.x;
#if KIND == 1
  y[i + (1ll << 40)] = 1.0f;
#elif KIND == 2
  for (long long t = clock64();;) if (clock64() - t < 0) break;
#elif KIND == 3
  this does not compile;
#endif
  if (i < n) y[i] = 2.0f * x[i];
}
)";

const char* kSpec = R"yaml(name: cuda-planted
kernel:
  source: planted.cu
  language: cuda
  entry: "scale<{BLOCK}>"
  grid: ["ceil_div(N, BLOCK)"]
  block: [BLOCK]
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 1000000}
parameters:
  BLOCK: [128, 256, 2048]
  KIND: [0, 1, 2, 3]
constraints:
  - BLOCK <= max_threads_per_block
default: {BLOCK: 256, KIND: 0}
tolerance: {atol: 0, rtol: 0}
measure: {warmup: 2ms, min_samples: 5, max_samples: 30, max_time: 100ms, timeout: 30s, early_stop: off}
)yaml";

using tunekit::testing::have_gpu;

}  // namespace

TEST(CudaTune, PlantedFaultsAreRecordedAndTheRestIsMeasured) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
  const auto dir = fresh_dir();
  write_file(dir / "planted.cu", kKernel);
  write_file(dir / "planted.yaml", kSpec);
  Spec spec = load_spec(dir / "planted.yaml");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const auto& trials = report.sizes[0].trials;
  ASSERT_EQ(trials.size(), 8u);  // BLOCK=2048 is pruned by max_threads_per_block
  std::map<std::int64_t, Status> expected{
      {0, Status::ok}, {1, Status::launch_error}, {2, Status::timeout}, {3, Status::compile_error}};
  for (const auto& t : trials) {
    const auto kind = t.config.at("KIND").as_int();
    EXPECT_EQ(t.status, expected[kind]) << t.config.str() << ": " << t.error;
    if (t.status == Status::ok) {
      EXPECT_TRUE(t.verification.passed);
      EXPECT_GT(t.stats.median.count(), 0.0);
      // ptxas's report of the build is kept with the trial.
      EXPECT_GT(t.resources.count("registers") ? t.resources.at("registers") : 0, 0) << t.config.str();
      EXPECT_EQ(t.resources.count("spills") ? t.resources.at("spills") : -1, 0) << t.config.str();
    }
  }
  ASSERT_TRUE(report.sizes[0].best);
  EXPECT_EQ(trials[*report.sizes[0].best].config.at("KIND").as_int(), 0);
  EXPECT_GT(report.device_busy.count(), 0.0);
  EXPECT_GT(report.build.count(), 0.0);
  EXPECT_NE(report.device.find("cuda"), std::string::npos);

  // A rerun resumes: nothing is built or run again, and the stored trials
  // still have their resources.
  TuneReport again = tune(spec, opt);
  EXPECT_EQ(again.resumed, 8u);
  for (const auto& t : again.sizes[0].trials)
    if (t.status == Status::ok) EXPECT_TRUE(t.resources.count("registers")) << t.config.str();
}

// The L2 flushed by reads: every trial is measured, and a cold-read tune does
// not resume the trials of a cold one (another measurement), only its own.
TEST(CudaTune, ColdReadTunesAndKeepsItsOwnTrials) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
  const auto dir = fresh_dir();
  write_file(dir / "planted.cu", kKernel);
  write_file(dir / "planted.yaml", kSpec);
  Spec spec = load_spec(dir / "planted.yaml");
  for (auto& p : spec.parameters)
    if (p.name == "KIND") p.values = {Value(0)};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  spec.measure.cache = CacheMode::cold;
  EXPECT_EQ(tune(spec, opt).resumed, 0u);

  spec.measure.cache = CacheMode::cold_read;
  TuneReport report = tune(spec, opt);
  EXPECT_EQ(report.resumed, 0u);
  ASSERT_EQ(report.sizes.size(), 1u);
  const auto& trials = report.sizes[0].trials;
  ASSERT_EQ(trials.size(), 2u);  // BLOCK 128 and 256
  for (const auto& t : trials) {
    EXPECT_EQ(t.status, Status::ok) << t.config.str() << ": " << t.error;
    EXPECT_TRUE(t.verification.passed);
    EXPECT_GT(t.stats.median.count(), 0.0);
  }
  EXPECT_EQ(tune(spec, opt).resumed, 2u);
}

// A kernel's own header (#include "NAME" beside it) is found by both CUDA
// compilers without a flag, and an edit to it measures the configs anew: the
// stale trials are not resumed and the stale builds not served.
TEST(CudaTune, AKernelsOwnHeaderIsFoundAndPartOfItUnderBothCompilers) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
  for (const std::string compiler : {"nvrtc", "nvcc"}) {
    SCOPED_TRACE(compiler);
    const auto dir = fresh_dir();
    write_file(dir / "factor.cuh", "__device__ inline float factor() { return 2.0f; }\n");
    write_file(dir / "k.cu", "#include \"factor.cuh\"\n"
                             "__global__ void scale(const float* x, float* y, int n) {\n"
                             "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
                             "  if (i < n) y[i] = factor() * x[i];\n}\n"
                             "__global__ void twice(const float* x, float* y, int n) {\n"
                             "  int i = blockIdx.x * 256 + threadIdx.x;\n"
                             "  if (i < n) y[i] = 2.0f * x[i];\n}\n");
    write_file(dir / "k.yaml", "name: own-header\n"
                               "kernel: {source: k.cu, language: cuda, compiler: " + compiler +
                               ", entry: scale, grid: [\"ceil_div(N, BLOCK)\"], block: [BLOCK]}\n"
                               "arguments:\n"
                               "  - {name: x, type: f32, size: N}\n"
                               "  - {name: y, type: f32, size: N, role: out}\n"
                               "  - {name: n, type: i32, value: N}\n"
                               "sizes: {N: 4096}\n"
                               "parameters: {BLOCK: [128, 256]}\n"
                               "reference: {entry: twice, grid: [\"ceil_div(N, 256)\"], block: [256]}\n"
                               "measure: {warmup: 0us, min_samples: 2, max_samples: 2, confirm: 0}\n");
    TuneOptions opt;
    opt.out_dir = dir / "out";
    auto statuses = [&] {
      const TuneReport r = tune(load_spec(dir / "k.yaml"), opt);
      std::string out;
      for (const auto& t : r.all_trials()) out += std::string(to_string(t.status)) + " ";
      return std::pair{out, r.resumed};
    };
    EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"ok ok ", 0}));
    write_file(dir / "factor.cuh", "__device__ inline float factor() { return 3.0f; }\n");
    EXPECT_EQ(statuses(), (std::pair<std::string, std::size_t>{"wrong_result wrong_result ", 0}));
  }
}

// CCCL's base variant on the GPU: a %RANGE% source with a `#if TUNE_BASE`
// branch and a launch that reads no %RANGE% parameter gets its base built
// with TUNE_BASE=1, launched, verified and reported as the speedups' base.
TEST(CudaTune, CcclsBaseIsBuiltLaunchedAndVerified) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
  const auto dir = fresh_dir();
  write_file(dir / "k.cu",
             "// %RANGE% TUNE_ITEMS items 1:2:1\n"
             "#if TUNE_BASE\n#define ITEMS 4\n#else\n#define ITEMS TUNE_ITEMS\n#endif\n"
             "extern \"C\" __global__ void scale(const float* x, float* y, int n) {\n"
             "  for (int k = 0; k < ITEMS; ++k) {\n"
             "    int i = (blockIdx.x * 256 + threadIdx.x) * ITEMS + k;\n"
             "    if (i < n) y[i] = 2.0f * x[i];\n  }\n}\n");
  write_file(dir / "k.yaml",
             "name: cccl-base-cuda\n"
             "kernel: {source: k.cu, language: cuda, entry: scale, grid: [\"ceil_div(N, 256)\"], "
             "block: [256]}\n"
             "arguments:\n"
             "  - {name: x, type: f32, size: N, fill: random}\n"
             "  - {name: y, type: f32, size: N, role: out}\n"
             "  - {name: n, type: i32, value: N}\n"
             "sizes: {N: 100000}\n"
             "default: {TUNE_ITEMS: 1}\n"
             "tolerance: {atol: 0, rtol: 0}\n"
             "measure: {warmup: 1ms, min_samples: 3, max_samples: 5, confirm: 0, early_stop: off}\n");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  ASSERT_EQ(s.trials.size(), 3u);  // TUNE_ITEMS 1 and 2, and the base
  ASSERT_TRUE(s.base);
  const TrialRecord& base = s.trials[*s.base];
  EXPECT_EQ(base.config, Config({{"TUNE_BASE", Value(1)}}));
  EXPECT_EQ(base.status, Status::ok) << base.error;
  EXPECT_TRUE(base.verification.checked);
  EXPECT_TRUE(base.verification.passed);
  EXPECT_GT(base.stats.median.count(), 0.0);
  ASSERT_TRUE(s.best);
  EXPECT_NE(*s.best, *s.base);
}

// A launch that reads a %RANGE% parameter: the base launches with the
// values `base:` gives (CUB's block size, not the default's: a kernel of 256
// threads launched with 64 writes nothing, a wrong result); without them its
// launch_error says what `base:` is for, and the tune goes on.
TEST(CudaTune, CcclsBaseLaunchesWithTheValuesBaseGives) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
  const auto dir = fresh_dir();
  write_file(dir / "k.cu",
             "// %RANGE% TUNE_THREADS tpb 64:128:64\n"
             "#if TUNE_BASE\n#define THREADS 256\n#else\n#define THREADS TUNE_THREADS\n#endif\n"
             "extern \"C\" __global__ void scale(const float* x, float* y, int n) {\n"
             "  if (blockDim.x != THREADS) return;\n"
             "  int i = blockIdx.x * THREADS + threadIdx.x;\n"
             "  if (i < n) y[i] = 2.0f * x[i];\n}\n");
  const std::string spec =
      "name: cccl-base-launch\n"
      "kernel: {source: k.cu, language: cuda, entry: scale, grid: [\"ceil_div(N, TUNE_THREADS)\"], "
      "block: [TUNE_THREADS]}\n"
      "arguments:\n"
      "  - {name: x, type: f32, size: N, fill: random}\n"
      "  - {name: y, type: f32, size: N, role: out}\n"
      "  - {name: n, type: i32, value: N}\n"
      "sizes: {N: 100000}\n"
      "default: {TUNE_THREADS: 64}\n"
      "tolerance: {atol: 0, rtol: 0}\n"
      "measure: {warmup: 1ms, min_samples: 3, max_samples: 5, confirm: 0, early_stop: off}\n";
  TuneOptions opt;
  opt.out_dir = dir / "out";
  write_file(dir / "k.yaml", spec);
  const TuneReport without = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_EQ(without.sizes.size(), 1u);
  ASSERT_TRUE(without.sizes[0].base);
  const TrialRecord& failed = without.sizes[0].trials[*without.sizes[0].base];
  EXPECT_EQ(failed.status, Status::launch_error);
  EXPECT_NE(failed.error.find("'base:'"), std::string::npos) << failed.error;
  ASSERT_TRUE(without.sizes[0].best);

  write_file(dir / "k.yaml", spec + "base: {TUNE_THREADS: 256}\n");
  const TuneReport report = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const SizeReport& s = report.sizes[0];
  ASSERT_TRUE(s.base);
  const TrialRecord& base = s.trials[*s.base];
  EXPECT_EQ(base.config, Config({{"TUNE_BASE", Value(1)}, {"TUNE_THREADS", Value(256)}}));
  EXPECT_EQ(base.status, Status::ok) << base.error;
  EXPECT_TRUE(base.verification.checked);
  EXPECT_TRUE(base.verification.passed);
  EXPECT_EQ(report.resumed, 2u);  // the configs: `base:` changes the base alone
}

// The CUDA worker stops sampling short of min_samples to answer within the
// trial's timeout: a slow config is measured on the samples its timeout
// leaves, with a note saying so, not lost as a timeout.
TEST(CudaTune, ASlowConfigIsMeasuredOnTheSamplesItsTimeoutLeaves) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
  const auto dir = fresh_dir();
  // 300 ms a launch by the GPU's own nanosecond timer: 50 samples would take
  // 15 s, far past the 6 s timeout.
  write_file(dir / "k.cu",
             "__device__ unsigned long long now() {\n"
             "  unsigned long long t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t;\n}\n"
             "extern \"C\" __global__ void scale(const float* x, float* y, int n) {\n"
             "  if (SLOW && blockIdx.x == 0 && threadIdx.x == 0)\n"
             "    for (unsigned long long t0 = now(); now() - t0 < 300000000ull;) {}\n"
             "  int i = blockIdx.x * 256 + threadIdx.x;\n"
             "  if (i < n) y[i] = 2.0f * x[i];\n}\n");
  write_file(dir / "k.yaml",
             "name: slow-cuda\n"
             "kernel: {source: k.cu, language: cuda, entry: scale, grid: [\"ceil_div(N, 256)\"], "
             "block: [256]}\n"
             "arguments:\n"
             "  - {name: x, type: f32, size: N, fill: random}\n"
             "  - {name: y, type: f32, size: N, role: out}\n"
             "  - {name: n, type: i32, value: N}\n"
             "sizes: {N: 4096}\n"
             "parameters: {SLOW: [0, 1]}\n"
             "tolerance: {atol: 0, rtol: 0}\n"
             "measure: {warmup: 0us, min_samples: 50, max_samples: 100, max_time: 1s, noise: 0, "
             "timeout: 6s, confirm: 0, early_stop: off}\n");
  TuneOptions opt;
  opt.out_dir = dir / "out";
  const TuneReport report = tune(load_spec(dir / "k.yaml"), opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  std::size_t slow = 0;
  for (const auto& t : report.sizes[0].trials) {
    if (t.config.at("SLOW").as_int() != 1) continue;
    ++slow;
    EXPECT_EQ(t.status, Status::ok) << t.error;
    EXPECT_GE(t.samples.size(), 1u);
    EXPECT_LT(t.samples.size(), 50u);
    EXPECT_NE(t.error.find("sampling stopped after "), std::string::npos) << t.error;
    EXPECT_NE(t.error.find("(min_samples 50) to answer within the trial's timeout"), std::string::npos) << t.error;
  }
  EXPECT_EQ(slow, 1u);
}
