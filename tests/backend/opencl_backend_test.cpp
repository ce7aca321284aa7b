// The OpenCL backend against planted kernels, on whatever OpenCL device is
// here (PoCL on the CPU in CI): program binaries cached by content hash,
// compile errors with their log, and each failure mode of a kernel becoming
// its status while the next trial still runs.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "backend/detail/registry.hpp"
#include "backend/opencl/detail/cl_api.hpp"
#include "backend/opencl/detail/opencl.hpp"
#include "builder/detail/compiler.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Kernels in one source, chosen by KIND. On PoCL (observed with PoCL 3.1):
// KIND 1 writes through a wild pointer and the worker dies of SIGSEGV;
// KIND 2 stores through a null pointer, which LLVM deletes as undefined
// behaviour, so the kernel "succeeds" and leaves y poisoned; KIND 3 never
// returns.
const char* kPlanted = R"(
__kernel void scale(__global const float* x, __global float* y, int n) {
  const int i = get_global_id(0);
#if KIND == 0
  if (i < n) y[i] = 2 * x[i];
#elif KIND == 1
  ((__global volatile int*)16)[i] = n;
#elif KIND == 2
  ((__global int*)0)[i] = n;
#elif KIND == 3
  while (1) {}
#elif KIND == 4
  if (i < n) y[i] = 2 * x[i] + (i == 3 ? 0.5f : 0.0f);
#elif KIND == 5
  if (i > 0 && i < n) y[i] = 2 * x[i];
#elif KIND == 6
  this is not OpenCL C;
#endif
}

// Covers any launch: the reference runs with the trial's geometry.
__kernel void scale_ref(__global const float* x, __global float* y, int n) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = 2 * x[i];
}
)";

// Why there is no OpenCL device here, or empty.
const std::string& unavailable() {
  static const std::string why = [] {
    DeviceListing l = backends().get("opencl").list_devices();
    return l.devices.empty() ? (l.unavailable.empty() ? std::string("no device") : l.unavailable) : std::string();
  }();
  return why;
}

#define SKIP_WITHOUT_OPENCL()                                                        \
  if (!unavailable().empty()) {                                                      \
    std::fprintf(stderr, "no OpenCL device, skipping: %s\n", unavailable().c_str()); \
    GTEST_SKIP() << "no OpenCL device: " << unavailable();                           \
  }

class OpenClBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_OPENCL();
    dir_ = tunekit::testing::fresh_dir();
    backend_ = make_backend("opencl", {dir_, false});
    builder_ = backend_->make_builder();
    evaluator_ = backend_->make_evaluator();
  }

  static BuildInput input(int kind, std::string entry = "scale") {
    BuildInput in;
    in.source = kPlanted;
    in.source_name = "planted.cl";
    in.defines = {"KIND=" + std::to_string(kind)};
    in.entry = std::move(entry);
    ArgumentSpec x, y, n;
    x.name = "x";
    y.name = "y";
    y.role = Role::out;
    n.name = "n";
    n.role = Role::scalar;
    n.type = ElementType::i32;
    in.arguments = {x, y, n};
    in.language = "opencl";
    in.compiler = "opencl";
    return in;
  }

  static TrialRequest request(const Artifact& a, std::optional<Artifact> ref, std::uint64_t block = 64,
                              Seconds timeout = 20s) {
    TrialRequest rq;
    rq.artifact = a;
    rq.entry = "scale";  // the reference's entry is in its artifact
    rq.reference = std::move(ref);
    rq.arguments = {{"x", ElementType::f32, Role::in, 1000, Fill::random, 0, {}},
                    {"y", ElementType::f32, Role::out, 1000, Fill::zeros, 0, {}},
                    {"n", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(1000)}};
    rq.launch.grid = {(1000 + block - 1) / block, 1, 1};
    rq.launch.block = {block, 1, 1};
    rq.tolerance = {1e-6, 0};
    rq.measure.warmup = 1ms;
    rq.measure.max_time = 100ms;
    rq.measure.timeout = timeout;
    rq.measure.cache = CacheMode::hot;
    return rq;
  }

  Artifact build_ok(int kind, std::string entry = "scale") {
    BuildResult r = builder_->build(input(kind, std::move(entry)));
    EXPECT_EQ(r.status, Status::ok) << r.log;
    return r.artifact;
  }

  Artifact reference() { return build_ok(0, "scale_ref"); }

  fs::path dir_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Builder> builder_;
  std::unique_ptr<Evaluator> evaluator_;
};

}  // namespace

TEST_F(OpenClBackendTest, MachinePropertiesArePositive) {
  const auto& m = backend_->machine();
  for (const char* key : {"max_work_group_size", "local_mem_bytes", "compute_units", "global_mem_bytes",
                          "max_work_item_sizes_0", "max_work_item_sizes_1", "max_work_item_sizes_2", "l2_bytes"}) {
    ASSERT_TRUE(m.properties.count(key)) << key;
    EXPECT_GT(m.properties.at(key).as_int(), 0) << key;
  }
  EXPECT_EQ(m.device.rfind("opencl: ", 0), 0u) << m.device;
  EXPECT_NE(m.device.find(" / "), std::string::npos) << m.device;
}

TEST_F(OpenClBackendTest, BuildIsCachedByContentHash) {
  BuildResult first = builder_->build(input(0));
  ASSERT_EQ(first.status, Status::ok) << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_GT(first.time.count(), 0.0);
  ASSERT_TRUE(fs::exists(first.artifact.path));
  EXPECT_EQ(opencl::read_artifact(first.artifact.path).entry, "scale");
  EXPECT_FALSE(opencl::read_artifact(first.artifact.path).binary.empty());
  BuildResult again = builder_->build(input(0));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.time.count(), 0.0);
  EXPECT_EQ(again.artifact.path, first.artifact.path);
  // Another define, or another entry, is another binary.
  EXPECT_NE(builder_->build(input(4)).artifact.hash, first.artifact.hash);
  EXPECT_NE(builder_->build(input(0, "scale_ref")).artifact.hash, first.artifact.hash);
}

TEST_F(OpenClBackendTest, RebuildIgnoresTheCacheOncePerRun) {
  ASSERT_EQ(builder_->build(input(0)).status, Status::ok);
  auto fresh = make_backend("opencl", {dir_, true})->make_builder();
  EXPECT_FALSE(fresh->build(input(0)).cached);
  EXPECT_TRUE(fresh->build(input(0)).cached);
}

TEST_F(OpenClBackendTest, BuildOptionsCarryFlagsDefinesAndTheSourceFolder) {
  BuildInput in = input(0);
  in.flags = {"-cl-fast-relaxed-math"};
  in.defines.push_back("TILE=16");
  in.source_name = "/some/dir/k.cl";
  EXPECT_EQ(opencl::build_options(in), "-cl-fast-relaxed-math -DKIND=0 -DTILE=16 -I/some/dir");
}

// The runtime compiles the source as text, and looks a quoted #include up
// in the folder the build runs in before any -I: the kernel's header, not
// one of the same name where the user runs tunekit, even where the kernel's
// folder cannot be given as -I (a space in its path).
TEST_F(OpenClBackendTest, AKernelIncludesItsOwnHeaderWhereverTheTuneRuns) {
  const fs::path kernel = dir_ / "my kernels" / "k.cl", decoy = dir_ / "elsewhere";
  tunekit::testing::write_file(kernel.parent_path() / "coef.h", "#define COEF 2.0f\n");
  tunekit::testing::write_file(decoy / "coef.h", "#error the header of the folder tunekit runs in\n");
  BuildInput in = input(0);
  in.source =
      "#include \"coef.h\"\n__kernel void scale(__global const float* x, __global float* y, int n) {\n"
      "  const int i = get_global_id(0);\n  if (i < n) y[i] = COEF * x[i];\n}\n";
  in.source_name = kernel.string();
  const fs::path was = fs::current_path();
  fs::current_path(decoy);
  const BuildResult r = builder_->build(in);
  fs::current_path(was);
  ASSERT_EQ(r.status, Status::ok) << r.log;
  const TrialResult t = evaluator_->evaluate(request(r.artifact, reference()));
  EXPECT_EQ(t.status, Status::ok) << t.error;  // 2 x, as the reference
}

TEST_F(OpenClBackendTest, CompileErrorKeepsTheLog) {
  BuildResult r = builder_->build(input(6));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_NE(r.log.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("planted.cl"), std::string::npos) << r.log;  // #line names the source
  EXPECT_FALSE(fs::exists(dir_ / "opencl" / "build" / (r.artifact.hash + ".clbin")));
}

// The driver's compiler may print on the process's stderr (PoCL's clang:
// "1 error generated."): what a build prints is its log, and the tuner's
// own stderr, the user's terminal, gets none of it.
TEST_F(OpenClBackendTest, ACompileErrorPrintsNothingOnTheTunersStderr) {
  const fs::path captured = dir_ / "stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(2);
  const int file = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(saved, 0);
  ASSERT_GE(file, 0);
  ::dup2(file, 2);
  ::close(file);
  const BuildResult r = builder_->build(input(6));
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_EQ(tunekit::testing::read_file(captured), "");
  EXPECT_NE(r.log.find("planted.cl"), std::string::npos) << r.log;
}

TEST_F(OpenClBackendTest, MissingEntryIsACompileError) {
  BuildResult r = builder_->build(input(0, "no_such_kernel"));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_NE(r.log.find("no_such_kernel"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("scale_ref"), std::string::npos) << r.log;  // lists what there is
}

TEST_F(OpenClBackendTest, CorrectKernelIsVerifiedAndTimedWithAColdCache) {
  TrialRequest rq = request(build_ok(0), reference());
  rq.measure.cache = CacheMode::cold;
  TrialResult r = evaluator_->evaluate(rq);
  EXPECT_EQ(r.status, Status::ok) << r.error;
  EXPECT_TRUE(r.verification.checked);
  EXPECT_TRUE(r.verification.passed);
  EXPECT_EQ(r.verification.max_abs_diff, 0.0);
  EXPECT_GE(r.samples.size(), 5u);
  EXPECT_GT(r.stats.median.count(), 0.0);
  EXPECT_GT(r.device_busy.count(), 0.0);
  EXPECT_GT(r.flush.count(), 0.0);  // the time line's "of it ... flushing caches"
}

TEST_F(OpenClBackendTest, EachFailureBecomesItsStatusAndTheRunGoesOn) {
  const Artifact ref = reference();
  const Artifact good = build_ok(0);
  struct Case {
    int kind;
    Status expected;
    const char* in_error;
  } cases[] = {
      {1, Status::crash, "SIGSEGV"},
      {3, Status::timeout, "no result"},
      {4, Status::wrong_result, "[3]"},
      {5, Status::wrong_result, "[0]"},
  };
  for (const auto& c : cases) {
    TrialResult r = evaluator_->evaluate(request(build_ok(c.kind), ref, 64, c.kind == 3 ? 3s : 20s));
    EXPECT_EQ(r.status, c.expected) << "kind " << c.kind << ": " << r.error;
    EXPECT_NE(r.error.find(c.in_error), std::string::npos) << "kind " << c.kind << ": " << r.error;
    // After every failure a good kernel still runs: the worker was replaced.
    TrialResult ok = evaluator_->evaluate(request(good, ref));
    EXPECT_EQ(ok.status, Status::ok) << "after kind " << c.kind << ": " << ok.error;
  }
}

// What a store through a null pointer does depends on the compiler: PoCL's
// LLVM deletes it, so the output is never written. Any of these statuses is
// right; the run must go on either way.
TEST_F(OpenClBackendTest, NullStoreIsCaught) {
  const Artifact ref = reference();
  TrialResult r = evaluator_->evaluate(request(build_ok(2), ref));
  std::fprintf(stderr, "null store: %s: %s\n", std::string(to_string(r.status)).c_str(), r.error.c_str());
  EXPECT_TRUE(r.status == Status::wrong_result || r.status == Status::crash || r.status == Status::launch_error)
      << to_string(r.status) << ": " << r.error;
  EXPECT_EQ(evaluator_->evaluate(request(build_ok(0), ref)).status, Status::ok);
}

TEST_F(OpenClBackendTest, OversizedWorkGroupIsAResourceLimit) {
  const auto max = static_cast<std::uint64_t>(backend_->machine().properties.at("max_work_group_size").as_int());
  const Artifact good = build_ok(0);
  TrialResult r = evaluator_->evaluate(request(good, std::nullopt, max * 2));
  EXPECT_EQ(r.status, Status::resource_limit) << r.error;
  EXPECT_EQ(evaluator_->evaluate(request(good, std::nullopt)).status, Status::ok);
}

TEST_F(OpenClBackendTest, WrongArgumentCountIsALaunchError) {
  TrialRequest rq = request(build_ok(0), std::nullopt);
  rq.arguments.pop_back();
  TrialResult r = evaluator_->evaluate(rq);
  EXPECT_EQ(r.status, Status::launch_error);
  EXPECT_NE(r.error.find("takes 3 arguments"), std::string::npos) << r.error;
}

// Scalars of several types reach the kernel by value, and a 2D launch has
// its global size grid x block in each dimension.
TEST_F(OpenClBackendTest, ScalarsOfSeveralTypesAndTwoDimensions) {
  BuildInput in = input(0, "affine2d");
  in.source = R"(
__kernel void affine2d(__global const float* x, __global float* y, float a, long b, uchar c, int w, int h) {
  const int col = get_global_id(0), row = get_global_id(1);
  if (get_work_dim() == 2 && col < w && row < h) y[row * w + col] = a * x[row * w + col] + (float)b + (float)c;
}
__kernel void affine_ref(__global const float* x, __global float* y, float a, long b, uchar c, int w, int h) {
  for (int i = get_global_id(0) + get_global_id(1) * get_global_size(0); i < w * h;
       i += get_global_size(0) * get_global_size(1))
    y[i] = a * x[i] + (float)b + (float)c;
}
)";
  in.defines.clear();
  auto scalar = [](const char* name, ElementType t) {
    ArgumentSpec s;
    s.name = name;
    s.role = Role::scalar;
    s.type = t;
    return s;
  };
  in.arguments = {in.arguments[0],
                  in.arguments[1],
                  scalar("a", ElementType::f32),
                  scalar("b", ElementType::i64),
                  scalar("c", ElementType::u8),
                  scalar("w", ElementType::i32),
                  scalar("h", ElementType::i32)};
  BuildResult kernel = builder_->build(in);
  ASSERT_EQ(kernel.status, Status::ok) << kernel.log;
  in.entry = "affine_ref";
  BuildResult ref = builder_->build(in);
  ASSERT_EQ(ref.status, Status::ok) << ref.log;

  TrialRequest rq = request(kernel.artifact, ref.artifact);
  rq.arguments = {{"x", ElementType::f32, Role::in, 30 * 20, Fill::random, 0, {}},
                  {"y", ElementType::f32, Role::out, 30 * 20, Fill::zeros, 0, {}},
                  {"a", ElementType::f32, Role::scalar, 0, Fill::zeros, 0, Value(1.5)},
                  {"b", ElementType::i64, Role::scalar, 0, Fill::zeros, 0, Value(std::int64_t{1} << 20)},
                  {"c", ElementType::u8, Role::scalar, 0, Fill::zeros, 0, Value(7)},
                  {"w", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(30)},
                  {"h", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(20)}};
  rq.launch.grid = {4, 3, 1};
  rq.launch.block = {8, 8, 1};
  TrialResult r = evaluator_->evaluate(rq);
  EXPECT_EQ(r.status, Status::ok) << r.error;
  EXPECT_TRUE(r.verification.checked);
}

// The driver compiles an OpenCL kernel, so trials measured with one
// platform, device or driver are not another's: the kernel's identity (and
// so its spec hash) names them as clGetPlatformInfo and clGetDeviceInfo say
// for the device the run uses, and a device that is not here is none of
// them.
// A buffer the device cannot hold now is refused for the machine's state, so
// its trial's fault is the environment's and a rerun measures it again; a
// refusal for a reason of its own stays the config's.
TEST(OpenClLogic, ExhaustedMemoryIsTheMachinesState) {
  EXPECT_TRUE(opencl::is_memory_exhausted(CL_MEM_OBJECT_ALLOCATION_FAILURE));
  EXPECT_TRUE(opencl::is_memory_exhausted(CL_OUT_OF_HOST_MEMORY));
  EXPECT_TRUE(opencl::is_memory_exhausted(CL_OUT_OF_RESOURCES));
  EXPECT_FALSE(opencl::is_memory_exhausted(CL_INVALID_BUFFER_SIZE));
  EXPECT_FALSE(opencl::is_memory_exhausted(CL_INVALID_WORK_GROUP_SIZE));
}

TEST(OpenClIdentity, NamesThePlatformDeviceAndDriverTheRunUses) {
  SKIP_WITHOUT_OPENCL();
  const auto& identity = backends().get("opencl").kernel.toolchain_identity;
  ASSERT_TRUE(identity) << "the opencl backend names no toolchain identity";
  const opencl::DeviceRef device = opencl::find_device(0);
  const auto platform_version = [&] {
    char text[1024] = {};
    opencl::api().clGetPlatformInfo(device.platform, CL_PLATFORM_VERSION, sizeof text - 1, text, nullptr);
    std::string s = text;
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
  };
  const std::string id = identity("opencl", {}, 0);
  for (const std::string& part : {device.platform_name, platform_version(), device.device_name,
                                  opencl::device_string(device.device, CL_DRIVER_VERSION)}) {
    EXPECT_FALSE(part.empty());
    EXPECT_NE(id.find(part), std::string::npos) << "'" << part << "' in '" << id << "'";
  }
  EXPECT_EQ(identity("opencl", {}, 0), id);

  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cl", "__kernel void k(__global float* y) { y[0] = 1; }\n");
  tunekit::testing::write_file(dir / "k.yaml",
                               "kernel: {source: k.cl, entry: k, language: opencl, grid: [1], block: [1]}\n"
                               "arguments:\n  - {name: y, type: f32, size: 1, role: out}\n");
  const Spec spec = load_spec(dir / "k.yaml");
  EXPECT_EQ(detail::kernel_compiler_identity(spec, 0), id);
  std::string why;
  const auto absent = static_cast<int>(opencl::enumerate_devices(why).size());
  EXPECT_NE(identity("opencl", {}, absent), id);
  EXPECT_NE(spec_hash(spec, absent), spec_hash(spec, 0));
}

// Without an OpenCL platform the CLI says why instead of failing obscurely.
// OCL_ICD_VENDORS pointing nowhere hides every driver from the ICD loader.
TEST(OpenClUnavailable, DevicesAndTuneSayWhy) {
  SKIP_WITHOUT_OPENCL();  // there must be a loader for this to mean anything
  const auto dir = tunekit::testing::fresh_dir();
  const std::string env = "OCL_ICD_VENDORS=" + (dir / "no-vendors").string() + " ";
  const std::string exe = tunekit::testing::tunekit_exe().string();
  ASSERT_EQ(std::system((env + exe + " devices > " + (dir / "devices.txt").string() + " 2>&1").c_str()), 0);
  EXPECT_NE(tunekit::testing::read_file(dir / "devices.txt").find("opencl: none (no OpenCL platform found"),
            std::string::npos)
      << tunekit::testing::read_file(dir / "devices.txt");
  const std::string spec = std::string(TUNEKIT_SOURCE_DIR) + "/examples/opencl/matmul.yaml";
  const int rc = std::system(
      (env + exe + " tune " + spec + " -o " + (dir / "out").string() + " > " + (dir / "tune.txt").string() + " 2>&1")
          .c_str());
  EXPECT_NE(rc, 0);
  EXPECT_NE(tunekit::testing::read_file(dir / "tune.txt").find("no OpenCL platform found"), std::string::npos)
      << tunekit::testing::read_file(dir / "tune.txt");
}
