// The CPU backend against planted kernels: each failure mode must become
// its status, and the next trial must still run.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "backend/cpu/detail/cache.hpp"
#include "backend/cpu/detail/cpu_backend.hpp"
#include "backend/cpu/detail/machine.hpp"
#include "tunekit/backend.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const char* kPlanted = R"(
#include <cstdlib>
#include <stdexcept>
extern "C" void kernel(const float* x, float* y, int n) {
#if KIND == 0
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];
#elif KIND == 1
  volatile int* p = nullptr; *p = n;
#elif KIND == 2
  std::abort();
#elif KIND == 3
  for (volatile int i = 0;;) ++i;
#elif KIND == 4
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + (i == 3 ? 0.5f : 0.0f);
#elif KIND == 5
  for (int i = 1; i < n; ++i) y[i] = 2 * x[i];
#elif KIND == 6
  this is not C++;
#elif KIND == 7
  throw std::runtime_error("boom");
#elif KIND == 8
  static int calls = 0;  // right on its first call only, as a race may be
  ++calls;
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i] + (calls > 1 && i == 7 ? 1.0f : 0.0f);
#elif KIND == 9
  for (int i = 0; i < n; ++i) y[i] += 2 * x[i];  // y is inout: each call adds
#elif KIND == 10
  static bool done = false;  // does its work once, then returns at once: right only where a call left it
  if (done) return;
  done = true;
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];
#elif KIND == 11
  for (int i = 0; i < n; ++i) y[i] = 2 * x[i];
  const_cast<float*>(x)[5] = 1e9f;  // right itself, then writes into its input
#elif KIND == 12
  for (int i = 0; i <= n; ++i) y[i] = 2 * x[i];  // one past the end: into the allocation's padding
#endif
}
)";

class CpuBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(TUNEKIT_BINARY_DIR) / "test-tmp" / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    backend_ = make_backend("c++", {dir_, false});
    builder_ = backend_->make_builder();
    evaluator_ = backend_->make_evaluator();
  }

  BuildInput input(int kind) const {
    BuildInput in;
    in.source = kPlanted;
    in.source_name = "planted.cpp";
    in.defines = {"KIND=" + std::to_string(kind)};
    in.entry = "kernel";
    ArgumentSpec x, y, n;
    x.name = "x";
    y.name = "y";
    y.role = Role::out;
    n.name = "n";
    n.role = Role::scalar;
    n.type = ElementType::i32;
    in.arguments = {x, y, n};
    in.language = "c++";
    in.compiler = "c++";
    in.flags = {"-O1"};
    return in;
  }

  // A generous limit: a busy machine must not turn a good kernel into a
  // timeout. Only the planted hang runs under a short one.
  TrialRequest request(const Artifact& a, std::optional<Artifact> ref, Seconds timeout = Seconds(120)) const {
    TrialRequest rq;
    rq.artifact = a;
    rq.reference = std::move(ref);
    rq.arguments = {{"x", ElementType::f32, Role::in, 1000, Fill::random, 0, {}},
                    {"y", ElementType::f32, Role::out, 1000, Fill::zeros, 0, {}},
                    {"n", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(1000)}};
    rq.tolerance = {1e-6, 0};
    rq.measure.warmup = 1ms;
    rq.measure.max_time = 100ms;
    rq.measure.timeout = timeout;
    rq.measure.cache = CacheMode::hot;
    return rq;
  }

  Artifact build_ok(int kind) {
    BuildResult r = builder_->build(input(kind));
    EXPECT_EQ(r.status, Status::ok) << r.log;
    return r.artifact;
  }

  fs::path dir_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Builder> builder_;
  std::unique_ptr<Evaluator> evaluator_;
};

}  // namespace

TEST_F(CpuBackendTest, MachinePropertiesArePositive) {
  for (const char* key :
       {"l1d_bytes", "l2_bytes", "l3_bytes", "cores", "simd_bytes", "vector_registers", "page_bytes"}) {
    ASSERT_TRUE(backend_->machine().properties.count(key)) << key;
    EXPECT_GT(backend_->machine().properties.at(key).as_int(), 0) << key;
  }
  EXPECT_NE(backend_->machine().device.find("cpu"), std::string::npos);
}

TEST_F(CpuBackendTest, ColdSamplesEvictTheKernelsBuffersAndSayWhatItTook) {
  TrialRequest rq = request(build_ok(0), std::nullopt);
  rq.measure.cache = CacheMode::cold;
  rq.measure.min_samples = rq.measure.max_samples = 5;
  TrialResult cold = evaluator_->evaluate(rq);
  EXPECT_EQ(cold.status, Status::ok) << cold.error;
  EXPECT_EQ(cold.samples.size(), 5u);
  // Flushing happened before every sample (and the warm-up), untimed, and
  // its time came back.
  EXPECT_GT(cold.flush.count(), 0.0);
  rq.measure.cache = CacheMode::hot;
  EXPECT_EQ(evaluator_->evaluate(rq).flush.count(), 0.0);
}

TEST(CpuCache, EvictLinesKeepsTheDataAndCoversUnalignedRanges) {
#if defined(__x86_64__) || defined(__aarch64__)
  EXPECT_FALSE(cpu::eviction_instruction().empty());
  std::vector<float> v(10000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  // Unaligned start and odd length: every line the range touches, nothing
  // outside a line of it.
  EXPECT_TRUE(cpu::evict_lines(reinterpret_cast<const char*>(v.data()) + 3, v.size() * sizeof(float) - 5));
  EXPECT_TRUE(cpu::evict_lines(v.data(), 0));
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<float>(i));
#else
  EXPECT_FALSE(cpu::evict_lines(nullptr, 0)) << "no eviction instruction: the worker overwrites a buffer instead";
#endif
}

TEST_F(CpuBackendTest, BuildIsCachedByContentHash) {
  BuildResult first = builder_->build(input(0));
  ASSERT_EQ(first.status, Status::ok) << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(fs::exists(first.artifact.path));
  BuildResult again = builder_->build(input(0));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.artifact.path, first.artifact.path);
  EXPECT_NE(builder_->build(input(4)).artifact.hash, first.artifact.hash);
}

// A source that cannot be written whole (a full disk; here a file-size
// limit) is the machine's failure, and leaves no part of itself in the
// cache: one per config, each run, until a later run sweeps them.
TEST_F(CpuBackendTest, ASourceCutShortIsTheMachinesAndLeavesNoPartBehind) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit small{64, 64};
    ::setrlimit(RLIMIT_FSIZE, &small);
    const BuildResult r = builder_->build(input(0));
    const bool told = r.status == Status::compile_error && r.fault == Fault::environment &&
                      r.log.find("File too large") != std::string::npos;
    ::_exit(told ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "not the machine's failure, or the log does not say why";
  std::vector<std::string> sources;
  for (const auto& entry : fs::recursive_directory_iterator(dir_))
    if (entry.path().extension() == ".cpp") sources.push_back(entry.path().string());
  EXPECT_EQ(sources, std::vector<std::string>{}) << "a part of the source was left";
}

// Builds use -march=native: a processor of another model, or with other
// instruction-set flags, gets a cache folder of its own.
TEST(CpuBackendBuilds, BuildsAreKeptApartPerProcessor) {
  auto folder = [](const std::string& text) {
    std::istringstream in(text);
    return cpu::processor_build_folder(in);
  };
  const std::string xeon = "processor\t: 0\nmodel name\t: Xeon\nflags\t\t: sse2 avx2 avx512f\n";
  EXPECT_EQ(folder(xeon), folder(xeon + "processor\t: 1\nmodel name\t: Xeon\nflags\t\t: sse2 avx2 avx512f\n"));
  EXPECT_NE(folder(xeon), folder("processor\t: 0\nmodel name\t: Xeon\nflags\t\t: sse2 avx2\n"));
  EXPECT_NE(folder(xeon), folder("processor\t: 0\nmodel name\t: EPYC\nflags\t\t: sse2 avx2 avx512f\n"));
  EXPECT_EQ(folder(xeon).rfind("isa-", 0), 0u);
}

// mpirun binds each rank to one core by default: a tune there times its
// kernels on that core, and must say so rather than claim the machine's.
TEST(CpuMachine, ACoreBindingIsTheCoresAKernelIsTimedOn) {
  cpu_set_t mine;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "needs two cores to bind to one";
  const MachineInfo whole = cpu::probe_machine();
  EXPECT_EQ(whole.properties.at("cores").as_int(), CPU_COUNT(&mine));
  int first = 0;
  while (!CPU_ISSET(first, &mine)) ++first;
  MachineInfo bound;
  std::vector<std::string> warnings;
  int bind_error = 0;
  // The affinity of one thread, the one that probes (as a bound rank's).
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) {
      bind_error = errno;
      return;
    }
    bound = cpu::probe_machine();
    warnings = cpu::core_warnings();
  }).join();
  ASSERT_EQ(bind_error, 0);
  EXPECT_EQ(bound.properties.at("cores").as_int(), 1);
  EXPECT_NE(bound.device, whole.device);  // a store keeps its trials apart
  EXPECT_NE(bound.device.find("(1 of "), std::string::npos) << bound.device;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--bind-to none"), std::string::npos) << warnings[0];
}

TEST_F(CpuBackendTest, RebuildIgnoresTheCacheOncePerRun) {
  ASSERT_EQ(builder_->build(input(0)).status, Status::ok);
  auto fresh = make_backend("c++", {dir_, true})->make_builder();
  EXPECT_FALSE(fresh->build(input(0)).cached);
  EXPECT_TRUE(fresh->build(input(0)).cached);
}

TEST_F(CpuBackendTest, CompileErrorKeepsTheLog) {
  BuildResult r = builder_->build(input(6));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_NE(r.log.find("planted.cpp"), std::string::npos) << r.log;
}

TEST_F(CpuBackendTest, CorrectKernelIsVerifiedAndTimed) {
  Artifact ref = build_ok(0);
  TrialResult r = evaluator_->evaluate(request(build_ok(0), ref));
  EXPECT_EQ(r.status, Status::ok) << r.error;
  EXPECT_TRUE(r.verification.checked);
  EXPECT_TRUE(r.verification.passed);
  EXPECT_EQ(r.verification.max_abs_diff, 0.0);
  EXPECT_GE(r.samples.size(), 5u);
  EXPECT_GT(r.stats.median.count(), 0.0);
}

TEST_F(CpuBackendTest, EachFailureBecomesItsStatusAndTheRunGoesOn) {
  Artifact ref = build_ok(0);
  struct Case {
    int kind;
    Status expected;
    const char* in_error;
  } cases[] = {
      {1, Status::crash, "SIGSEGV"},    {2, Status::crash, "SIGABRT"},    {3, Status::timeout, "no result"},
      {4, Status::wrong_result, "[3]"}, {5, Status::wrong_result, "[0]"}, {7, Status::launch_error, "boom"},
  };
  for (const auto& c : cases) {
    TrialResult r = evaluator_->evaluate(request(build_ok(c.kind), ref, c.kind == 3 ? Seconds(3) : Seconds(120)));
    EXPECT_EQ(r.status, c.expected) << "kind " << c.kind << ": " << r.error;
    EXPECT_NE(r.error.find(c.in_error), std::string::npos) << "kind " << c.kind << ": " << r.error;
    // After every failure a good kernel still runs: the worker was replaced.
    TrialResult ok = evaluator_->evaluate(request(build_ok(0), ref));
    EXPECT_EQ(ok.status, Status::ok) << "after kind " << c.kind << ": " << ok.error;
  }
}

TEST_F(CpuBackendTest, WrongResultReportsTheDifference) {
  TrialResult r = evaluator_->evaluate(request(build_ok(4), build_ok(0)));
  ASSERT_EQ(r.status, Status::wrong_result);
  EXPECT_NEAR(r.verification.max_abs_diff, 0.5, 1e-6);
  EXPECT_TRUE(r.samples.empty());
}

// The first call's outputs are right and the timed calls' are not (a race,
// state kept between calls): the outputs are checked again after timing.
TEST_F(CpuBackendTest, AKernelRightOnlyOnItsFirstCallIsWrong) {
  TrialResult r = evaluator_->evaluate(request(build_ok(8), build_ok(0)));
  ASSERT_EQ(r.status, Status::wrong_result) << r.error;
  EXPECT_NE(r.error.find("wrong on a call after its timed ones"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("[7]"), std::string::npos) << r.error;
  EXPECT_NEAR(r.verification.max_abs_diff, 1.0, 1e-6);
  EXPECT_TRUE(r.samples.empty());
  EXPECT_EQ(r.stats.median.count(), 0.0);
}

// A kernel that skips its work after its first call leaves that call's
// right outputs in place: the call checked after timing starts from outputs
// poisoned again, or it would pass, timed as nearly empty.
TEST_F(CpuBackendTest, AKernelThatStopsWorkingAfterItsFirstCallIsWrong) {
  TrialResult r = evaluator_->evaluate(request(build_ok(10), build_ok(0)));
  ASSERT_EQ(r.status, Status::wrong_result) << r.error;
  EXPECT_NE(r.error.find("wrong on a call after its timed ones"), std::string::npos) << r.error;
  EXPECT_TRUE(r.samples.empty());
}

// A config that writes into its input is wrong: its timed calls computed
// from other inputs (it was ok, and could be named best). It leaves no other
// data behind for the next configs of the same worker: they compute from
// the inputs as generated, and pass.
TEST_F(CpuBackendTest, AConfigThatWritesIntoItsInputIsWrongAndDoesNotFailTheNext) {
  const Artifact ref = build_ok(0);
  const TrialResult wrote = evaluator_->evaluate(request(build_ok(11), ref));
  EXPECT_EQ(wrote.status, Status::wrong_result);
  EXPECT_EQ(wrote.error.rfind("wrote into input 'x', which it may only read: element [5] changed from ", 0), 0u)
      << wrote.error;
  EXPECT_NE(wrote.error.find(" to 1000000000 (1 of its 1000 elements of f32 changed)"), std::string::npos)
      << wrote.error;
  for (int i = 0; i < 2; ++i) {
    TrialResult r = evaluator_->evaluate(request(build_ok(0), ref));
    EXPECT_EQ(r.status, Status::ok) << i << ": " << r.error;
  }
}

// An off-by-one write lands in the output's padding (1000 floats round up
// to 4032 bytes): it was verified and timed as right.
TEST_F(CpuBackendTest, AKernelThatWritesPastItsOutputIsWrong) {
  const TrialResult r = evaluator_->evaluate(request(build_ok(12), build_ok(0)));
  EXPECT_EQ(r.status, Status::wrong_result);
  EXPECT_EQ(r.error, "wrote past the end of output 'y' (1000 elements of f32): element [1000] changed");
  TrialResult next = evaluator_->evaluate(request(build_ok(0), build_ok(0)));
  EXPECT_EQ(next.status, Status::ok) << next.error;
}

// An entry named like a function the C library exports is the kernel's own:
// the call shim's call of it was resolved to the C library's warn(), already
// loaded in the worker, and the kernel never ran.
TEST_F(CpuBackendTest, AnEntryNamedLikeACLibraryFunctionIsTheKernels) {
  BuildInput in = input(0);
  in.source =
      "extern \"C\" void warn(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 2 * x[i]; }\n";
  in.entry = "warn";
  BuildResult built = builder_->build(in);
  ASSERT_EQ(built.status, Status::ok) << built.log;
  TrialResult r = evaluator_->evaluate(request(built.artifact, build_ok(0)));
  EXPECT_EQ(r.status, Status::ok) << r.error;
}

// An inout output changes with every call by design (here it accumulates),
// so only its first call is compared with the reference.
TEST_F(CpuBackendTest, AnInoutKernelIsComparedOnItsFirstCallOnly) {
  TrialRequest rq = request(build_ok(9), build_ok(9));
  rq.arguments[1].role = Role::inout;
  TrialResult r = evaluator_->evaluate(rq);
  EXPECT_EQ(r.status, Status::ok) << r.error;
  EXPECT_TRUE(r.verification.passed);
  EXPECT_GE(r.samples.size(), 5u);
}

TEST_F(CpuBackendTest, WithoutReferenceNothingIsVerified) {
  TrialResult r = evaluator_->evaluate(request(build_ok(4), std::nullopt));
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_FALSE(r.verification.checked);
}

TEST_F(CpuBackendTest, CallShimPassesTypedArguments) {
  std::string shim = cpu::call_shim(input(0));
  EXPECT_NE(shim.find("kernel(tk_pointer(tk_args[0]), tk_pointer(tk_args[1]), *(int32_t*)tk_args[2])"),
            std::string::npos)
      << shim;
}

// A parameter reaches the source as a define: one named like a name the
// call shim could use (T, p, q) must not rewrite the shim.
TEST_F(CpuBackendTest, ParametersNamedLikeShortIdentifiersBuild) {
  for (const char* language : {"c++", "c"}) {
    BuildInput in = input(0);
    in.language = language;
    in.compiler = std::string(language) == "c" ? "cc" : "c++";
    in.source = std::string(language) == "c"
                    ? "void kernel(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = T * x[i]; }\n"
                    : "extern \"C\" void kernel(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = "
                      "T * x[i]; }\n";
    in.defines = {"T=2", "p=3", "q=4", "type=5"};
    BuildResult r = builder_->build(in);
    EXPECT_EQ(r.status, Status::ok) << language << ": " << r.log;
  }
}

// Buffers reach entries declared with any pointer type, in C++ and in C.
TEST_F(CpuBackendTest, ShimCallsEntriesWithConstAndHalfPointersAndCEntries) {
  BuildInput in = input(0);
  in.source = R"(
extern "C" void kernel(const float* x, _Float16* y, int n) { for (int i = 0; i < n; ++i) y[i] = (_Float16)x[i]; }
)";
  in.arguments[1].type = ElementType::f16;
  BuildResult r = builder_->build(in);
  EXPECT_EQ(r.status, Status::ok) << r.log;

  BuildInput c = input(0);
  c.language = "c";
  c.compiler = "cc";
  c.source = "void kernel(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 2 * x[i]; }\n";
  BuildResult rc = builder_->build(c);
  ASSERT_EQ(rc.status, Status::ok) << rc.log;
  TrialResult t = evaluator_->evaluate(request(rc.artifact, build_ok(0)));
  EXPECT_EQ(t.status, Status::ok) << t.error;
}
