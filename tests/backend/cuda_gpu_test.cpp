// The CUDA backend on a GPU (skipped without one): planted kernels must each
// get their status, the worker must come back after a sticky error or a
// hang, and correct kernels must be verified and timed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "support/gpu.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const char* kPlanted = R"(
__device__ int done_once;
__device__ int calls;
extern "C" __global__ void kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if KIND == 5
  if (i == 7) return;                                         // never writes [7]
#endif
#if KIND == 1
  y[i + (1ll << 40)] = 1.0f;                                  // illegal address
#elif KIND == 2
  for (long long t = clock64();;) if (clock64() - t < 0) break; // hang
#elif KIND == 3
  if (i == 5) __trap();                                       // trap
#endif
#if KIND == 6
  __shared__ int skip;                                        // its work once, then nothing
  if (threadIdx.x == 0) skip = done_once;
  __syncthreads();
  if (skip) return;
#endif
  if (i < n) y[i] = 2.0f * x[i]
#if KIND == 4
    + (i == 3 ? 0.5f : 0.0f)                                  // wrong at [3]
#elif KIND == 8
    * (calls ? 1.0000002f : 1.0f)                             // right, its last bits unlike its first call's
#endif
    ;
#if KIND == 8
  __syncthreads();
  if (i == 0) calls = 1;
#endif
#if KIND == 6
  if (i == 0) done_once = 1;
#elif KIND == 7
  __syncthreads();
  if (i < n) const_cast<float*>(x)[i] = 1e9f;                 // right itself, then writes into its input
#endif
}
// Uses dynamic shared memory: more than 48 KiB needs the opt-in.
extern "C" __global__ void staged(const float* x, float* y, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = 2.0f * tile[threadIdx.x];
}
// One kernel per element type: y = x + s, the reference adds the constant.
template <class T>
__global__ void add(const T* x, T* y, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (T)((float)x[i] + (float)s);
}
template <class T>
__global__ void add_ref(const T* x, T* y, T s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (T)((float)x[i] + (float)VALUE);
}
)";

const char* kTypes = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
)";

using tunekit::testing::have_gpu;

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device here";
    dir_ = tunekit::testing::fresh_dir();
    backend_ = make_backend("cuda", {dir_, false});
    builder_ = backend_->make_builder();
    evaluator_ = backend_->make_evaluator();
  }

  static ArgumentSpec arg(const char* name, ElementType t, Role role) {
    ArgumentSpec a;
    a.name = name;
    a.type = t;
    a.role = role;
    return a;
  }

  BuildInput input(int kind, const std::string& entry = "kernel", std::vector<std::string> defines = {}) const {
    BuildInput in;
    in.source = std::string(kTypes) + kPlanted;
    in.source_name = "planted.cu";
    in.defines = std::move(defines);
    in.defines.push_back("KIND=" + std::to_string(kind));
    in.entry = entry;
    in.arguments = {arg("x", ElementType::f32, Role::in), arg("y", ElementType::f32, Role::out),
                    arg("n", ElementType::i32, Role::scalar)};
    in.language = "cuda";
    in.compiler = "nvrtc";
    return in;
  }

  Artifact build_ok(const BuildInput& in) {
    BuildResult r = builder_->build(in);
    EXPECT_EQ(r.status, Status::ok) << r.log;
    return r.artifact;
  }

  TrialRequest request(const Artifact& a, std::optional<Artifact> ref, std::uint64_t n = 100000,
                       std::uint64_t block = 256) const {
    TrialRequest rq;
    rq.artifact = a;
    rq.entry = "kernel";
    rq.reference = std::move(ref);
    rq.arguments = {{"x", ElementType::f32, Role::in, n, Fill::random, 0, {}},
                    {"y", ElementType::f32, Role::out, n, Fill::zeros, 0, {}},
                    {"n", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(static_cast<std::int64_t>(n))}};
    rq.launch.grid = {(n + block - 1) / block, 1, 1};
    rq.launch.block = {block, 1, 1};
    rq.tolerance = {0, 0};
    rq.measure.warmup = 2ms;
    rq.measure.max_time = 100ms;
    rq.measure.timeout = 3s;
    return rq;
  }

  fs::path dir_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Builder> builder_;
  std::unique_ptr<Evaluator> evaluator_;
};

}  // namespace

TEST_F(CudaGpuTest, DeviceIsDescribed) {
  const auto& p = backend_->machine().properties;
  for (const char* key : {"max_threads_per_block", "shared_memory_per_block", "shared_memory_per_block_optin",
                          "registers_per_block", "sm_count", "l2_bytes", "compute_capability"})
    EXPECT_GT(p.at(key).as_int(), 0) << key;
  EXPECT_EQ(backend_->machine().device.rfind("cuda: ", 0), 0u);
  EXPECT_TRUE(backend_->measures_while_building());
}

TEST_F(CudaGpuTest, CorrectKernelIsVerifiedAndTimedCold) {
  Artifact ref = build_ok(input(0));
  TrialResult r = evaluator_->evaluate(request(ref, std::nullopt));
  ASSERT_EQ(r.status, Status::ok) << r.error;
  EXPECT_GE(r.samples.size(), 5u);
  EXPECT_GT(r.stats.median.count(), 0.0);
  EXPECT_GT(r.device_busy.count(), 0.0);

  BuildInput other = input(0, "kernel", {"UNUSED=1"});  // another artifact, same function
  r = evaluator_->evaluate(request(build_ok(other), ref));
  ASSERT_EQ(r.status, Status::ok) << r.error;
  EXPECT_TRUE(r.verification.checked);
  EXPECT_TRUE(r.verification.passed);
}

TEST_F(CudaGpuTest, ShortKernelsTimedHotAreBatched) {
  Artifact a = build_ok(input(0));
  TrialRequest rq = request(a, std::nullopt, 1024);
  rq.measure.cache = CacheMode::hot;
  TrialResult r = evaluator_->evaluate(rq);
  ASSERT_EQ(r.status, Status::ok) << r.error;
  // A batch of graph-replayed launches, divided: well under one launch's
  // event-to-event time of a few microseconds.
  EXPECT_LT(r.stats.median.count(), 5.0);
  EXPECT_GT(r.stats.median.count(), 0.0);
}

// cold-read flushes the L2 with loads (a second kernel of the flush module);
// one worker can switch between the modes, each flush timed anew when the
// mode changes. The medians are printed: hot is batched, so comparing them
// would not show whether the flush evicts (lab/probes/stream_floor_probe.py
// measures that).
TEST_F(CudaGpuTest, ColdReadIsTimedAndModesAlternate) {
  Artifact ref = build_ok(input(0));
  for (CacheMode mode : {CacheMode::cold_read, CacheMode::cold, CacheMode::hot, CacheMode::cold_read}) {
    TrialRequest rq = request(ref, std::nullopt, 4u << 20);
    rq.measure.cache = mode;
    TrialResult r = evaluator_->evaluate(rq);
    ASSERT_EQ(r.status, Status::ok) << to_string(mode) << ": " << r.error;
    EXPECT_GE(r.samples.size(), 5u) << to_string(mode);
    EXPECT_GT(r.stats.median.count(), 0.0) << to_string(mode);
    std::printf("%s: median %.2f us over %zu samples\n", std::string(to_string(mode)).c_str(), r.stats.median.count(),
                r.samples.size());
  }

  TrialRequest rq = request(build_ok(input(0, "kernel", {"UNUSED=1"})), ref);
  rq.measure.cache = CacheMode::cold_read;
  TrialResult r = evaluator_->evaluate(rq);
  ASSERT_EQ(r.status, Status::ok) << r.error;
  EXPECT_TRUE(r.verification.checked);
  EXPECT_TRUE(r.verification.passed);
}

TEST_F(CudaGpuTest, EachFailureBecomesItsStatusAndTheRunGoesOn) {
  Artifact ref = build_ok(input(0));
  struct Case {
    int kind;
    Status expected;
    const char* in_error;
  } cases[] = {
      {1, Status::launch_error, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {2, Status::timeout, "no result"},
      {3, Status::launch_error, "CUDA_ERROR_"},
      {4, Status::wrong_result, "[3]"},
      {5, Status::wrong_result, "[7]"},
  };
  for (const auto& c : cases) {
    TrialResult r = evaluator_->evaluate(request(build_ok(input(c.kind)), ref));
    EXPECT_EQ(r.status, c.expected) << "kind " << c.kind << ": " << r.error;
    EXPECT_NE(r.error.find(c.in_error), std::string::npos) << "kind " << c.kind << ": " << r.error;
    // The next trial runs, in a fresh worker where needed.
    TrialResult ok =
        evaluator_->evaluate(request(build_ok(input(0, "kernel", {"AFTER=" + std::to_string(c.kind)})), ref));
    EXPECT_EQ(ok.status, Status::ok) << "after kind " << c.kind << ": " << ok.error;
  }
}

// A kernel that does its work on its first call only is checked once more
// after timing, into outputs poisoned again; a config that writes into its
// input leaves the next config the input as generated.
TEST_F(CudaGpuTest, AKernelRightOnceAndOneThatWritesItsInputAreTold) {
  Artifact ref = build_ok(input(0));
  TrialResult once = evaluator_->evaluate(request(build_ok(input(6)), ref));
  EXPECT_EQ(once.status, Status::wrong_result) << once.error;
  EXPECT_NE(once.error.find("wrong on a call after its timed ones"), std::string::npos) << once.error;
  evaluator_->evaluate(request(build_ok(input(7)), ref));
  TrialResult next = evaluator_->evaluate(request(build_ok(input(0, "kernel", {"AFTER=7"})), ref));
  EXPECT_EQ(next.status, Status::ok) << next.error;
}

// The check after timing compares the outputs with the first call's on the
// device; outputs that differ there in their last bits are read back and
// checked against the reference's tolerance, as the first call's were.
TEST_F(CudaGpuTest, AKernelWhoseLastBitsChangeFromCallToCallIsRight) {
  Artifact ref = build_ok(input(0));
  TrialRequest rq = request(build_ok(input(8)), ref);
  rq.tolerance = {0, 1e-5};
  TrialResult r = evaluator_->evaluate(rq);
  EXPECT_EQ(r.status, Status::ok) << r.error;
  EXPECT_TRUE(r.verification.passed) << r.verification.detail;
  EXPECT_FALSE(r.samples.empty());
}

TEST_F(CudaGpuTest, ResourceLimitsAreCheckedBeforeTheLaunch) {
  // Refused before the launch: no reference is needed.
  TrialResult r = evaluator_->evaluate(request(build_ok(input(0)), std::nullopt, 100000, 2048));
  EXPECT_EQ(r.status, Status::resource_limit) << r.error;
  BuildInput staged = input(0, "staged");
  TrialRequest rq = request(build_ok(staged), std::nullopt, 100000, 1024);
  rq.entry = "staged";
  rq.launch.shared_memory = 300 * 1024;  // over the opt-in limit
  r = evaluator_->evaluate(rq);
  EXPECT_EQ(r.status, Status::resource_limit) << r.error;
  rq.launch.shared_memory = 100 * 1024;  // over 48 KiB: needs the attribute
  r = evaluator_->evaluate(rq);
  EXPECT_EQ(r.status, Status::ok) << r.error;
}

TEST_F(CudaGpuTest, EveryElementTypeReachesTheKernel) {
  struct Case {
    const char* type;
    ElementType t;
  } cases[] = {{"float", ElementType::f32},          {"double", ElementType::f64}, {"__half", ElementType::f16},
               {"__nv_bfloat16", ElementType::bf16}, {"int", ElementType::i32},    {"long long", ElementType::i64},
               {"unsigned char", ElementType::u8}};
  for (const auto& c : cases) {
    const std::string t = c.type;
    BuildInput kernel = input(0, "add<" + t + ">", {"VALUE=3"});
    BuildInput reference = input(0, "add_ref<" + t + ">", {"VALUE=3"});
    TrialRequest rq = request(build_ok(kernel), build_ok(reference), 5000);
    rq.entry = kernel.entry;
    rq.arguments = {{"x", c.t, Role::in, 5000, Fill::random, 0, {}},
                    {"y", c.t, Role::out, 5000, Fill::zeros, 0, {}},
                    {"s", c.t, Role::scalar, 0, Fill::zeros, 0, Value(3)},
                    {"n", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(5000)}};
    // The reference's own launch must match: it is the same geometry.
    TrialResult r = evaluator_->evaluate(rq);
    EXPECT_EQ(r.status, Status::ok) << t << ": " << r.error;
    EXPECT_TRUE(r.verification.passed) << t << ": " << r.verification.detail;
    // A wrong scalar is caught.
    rq.arguments[2].scalar = Value(4);
    r = evaluator_->evaluate(rq);
    EXPECT_EQ(r.status, Status::wrong_result) << t << ": " << r.error;
  }
}
