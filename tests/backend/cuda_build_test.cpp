// The CUDA builder without a GPU: NVRTC compiles for an explicit
// architecture (sm_90a), the cubin is a CUDA ELF for that SM, the mangled
// name of a template entry is kept beside it, and builds are cached by
// content hash. NVRTC needs no device, so this runs in CI.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "backend/cuda/detail/nvrtc.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace tunekit::cuda;
namespace fs = std::filesystem;

namespace {

const char* kSource = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <int UNROLL>
__global__ void scale(const float* x, float* y, float a, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    if (i + u < n) y[i + u] = a * x[i + u] * FACTOR;
}
extern "C" __global__ void plain(__nv_bfloat16* y, __half h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(__half2float(h));
}
)";

BuildInput input(const std::string& entry, int factor = 2) {
  BuildInput in;
  in.source = kSource;
  in.source_name = "scale.cu";
  in.defines = {"FACTOR=" + std::to_string(factor)};
  in.entry = entry;
  in.language = "cuda";
  in.compiler = "nvrtc";
  in.arch = "sm_90a";
  return in;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class CudaBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!nvrtc()) GTEST_SKIP() << "NVRTC is not installed here: " << nvrtc_unavailable_reason();
    dir_ = tunekit::testing::fresh_dir();
  }
  fs::path dir_;
};

}  // namespace

TEST_F(CudaBuildTest, TemplateEntryCompilesToACubinForSm90a) {
  CudaBuilder builder(dir_, false, "");
  BuildResult r = builder.build(input("scale<4>"));
  ASSERT_EQ(r.status, Status::ok) << r.log;
  EXPECT_FALSE(r.cached);
  EXPECT_GT(r.time.count(), 0.0);
  EXPECT_EQ(r.artifact.path.extension(), ".cubin");
  EXPECT_EQ(r.artifact.path.stem(), r.artifact.hash);

  const CubinInfo info = inspect_cubin(slurp(r.artifact.path));
  ASSERT_TRUE(info.valid) << info.error;
  EXPECT_EQ(info.machine, 190);  // EM_CUDA
  EXPECT_EQ(info.sm, 90);

  // The mangled name of the instantiation is stored with the cubin, and is
  // a function of it.
  auto side = read_sidecar(sidecar_path(r.artifact.path));
  ASSERT_TRUE(side);
  EXPECT_EQ(side->entry, "scale<4>");
  EXPECT_EQ(side->arch, "sm_90a");
  EXPECT_EQ(side->lowered.rfind("_Z", 0), 0u) << side->lowered;
  EXPECT_NE(std::find(info.functions.begin(), info.functions.end(), side->lowered), info.functions.end());
  EXPECT_EQ(match_entry(info.functions, "scale<4>"), side->lowered);
}

TEST_F(CudaBuildTest, PlainEntryAndHalfTypesBuild) {
  CudaBuilder builder(dir_, false, "sm_90a");
  BuildInput in = input("plain");
  in.arch.clear();  // the builder's default
  BuildResult r = builder.build(in);
  ASSERT_EQ(r.status, Status::ok) << r.log;
  auto side = read_sidecar(sidecar_path(r.artifact.path));
  ASSERT_TRUE(side);
  EXPECT_EQ(side->lowered, "plain");
  EXPECT_EQ(side->arch, "sm_90a");
}

TEST_F(CudaBuildTest, BuildsAreCachedByContentHash) {
  CudaBuilder builder(dir_, false, "");
  BuildResult first = builder.build(input("scale<2>"));
  ASSERT_EQ(first.status, Status::ok) << first.log;
  BuildResult again = builder.build(input("scale<2>"));
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.time.count(), 0.0);
  EXPECT_EQ(again.artifact.path, first.artifact.path);
  // Another define, entry or architecture is another artifact.
  EXPECT_NE(builder.build(input("scale<2>", 3)).artifact.hash, first.artifact.hash);
  EXPECT_NE(builder.build(input("scale<4>")).artifact.hash, first.artifact.hash);
  BuildInput other = input("scale<2>");
  other.arch = "sm_80";
  BuildResult sm80 = builder.build(other);
  ASSERT_EQ(sm80.status, Status::ok) << sm80.log;
  EXPECT_NE(sm80.artifact.hash, first.artifact.hash);
  EXPECT_EQ(inspect_cubin(slurp(sm80.artifact.path)).sm, 80);
  // A new builder over the same folder finds it; a rebuilding one compiles once.
  EXPECT_TRUE(CudaBuilder(dir_, false, "").build(input("scale<2>")).cached);
  CudaBuilder fresh(dir_, true, "");
  EXPECT_FALSE(fresh.build(input("scale<2>")).cached);
  EXPECT_TRUE(fresh.build(input("scale<2>")).cached);
}

TEST_F(CudaBuildTest, CompileErrorKeepsTheLog) {
  CudaBuilder builder(dir_, false, "");
  BuildInput in = input("scale<2>");
  in.source += "\n__global__ void broken() { this is not cuda; }\n";
  BuildResult r = builder.build(in);
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_NE(r.log.find("scale.cu"), std::string::npos) << r.log;
  EXPECT_FALSE(fs::exists(r.artifact.path));
}

namespace {

bool nvcc_installed() {
  return fs::exists("/usr/local/cuda/bin/nvcc") || std::system("command -v nvcc >/dev/null 2>&1") == 0;
}

// The copies of sources that nvcc builds left in a cache folder.
std::vector<std::string> sources_left(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.path().extension() == ".cu") found.push_back(entry.path().string());
  return found;
}

}  // namespace

// nvcc compiles a copy of the source in the cache: a build that fails
// leaves none of it there (one for each failing config, each run).
TEST_F(CudaBuildTest, AFailedNvccBuildLeavesNoCopyOfItsSource) {
  if (!nvcc_installed()) GTEST_SKIP() << "nvcc is not installed here";
  CudaBuilder builder(dir_, false, "");
  BuildInput in = input("scale<2>");
  in.compiler = "nvcc";
  in.source += "\n__global__ void broken() { this is not cuda; }\n";
  BuildResult r = builder.build(in);
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_EQ(r.fault, Fault::config) << r.log;
  EXPECT_EQ(sources_left(dir_), std::vector<std::string>{});
}

// A copy of the source cut short (a full disk; here a file-size limit) is
// the machine's failure, said so, not a compile error of the config's
// source, and leaves nothing behind.
TEST_F(CudaBuildTest, ASourceCutShortIsTheMachinesAndLeavesNoPartBehind) {
  if (!nvcc_installed()) GTEST_SKIP() << "nvcc is not installed here";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    CudaBuilder builder(dir_, false, "");
    BuildInput in = input("scale<2>");
    in.compiler = "nvcc";
    const rlimit small{64, 64};
    ::setrlimit(RLIMIT_FSIZE, &small);
    const BuildResult r = builder.build(in);
    const bool told = r.status == Status::compile_error && r.fault == Fault::environment &&
                      r.log.find("cannot write") != std::string::npos &&
                      r.log.find("File too large") != std::string::npos;
    ::_exit(told ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "not the machine's failure, or the log does not say why";
  EXPECT_EQ(sources_left(dir_), std::vector<std::string>{});
}

TEST_F(CudaBuildTest, UnknownEntryIsACompileError) {
  CudaBuilder builder(dir_, false, "");
  BuildResult r = builder.build(input("no_such_kernel<3>"));
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_FALSE(r.log.empty());
}

TEST_F(CudaBuildTest, NoArchitectureAndNoDeviceIsACompileError) {
  CudaBuilder builder(dir_, false, "");
  BuildInput in = input("scale<2>");
  in.arch.clear();
  BuildResult r = builder.build(in);
  EXPECT_EQ(r.status, Status::compile_error);
  EXPECT_NE(r.log.find("architecture"), std::string::npos) << r.log;
}

TEST_F(CudaBuildTest, BuildsInParallelOnSeveralThreads) {
  CudaBuilder builder(dir_, false, "");
  std::vector<BuildInput> inputs;
  for (int f = 1; f <= 8; ++f) inputs.push_back(input(f % 2 ? "scale<1>" : "scale<8>", f));
  std::vector<BuildResult> results(inputs.size());
  build_parallel(builder, inputs, 4, [&](std::size_t i, BuildResult r) { results[i] = std::move(r); });
  std::set<std::string> hashes;
  for (const auto& r : results) {
    EXPECT_EQ(r.status, Status::ok) << r.log;
    EXPECT_TRUE(fs::exists(r.artifact.path));
    // Each build's own report, though others compiled beside it.
    EXPECT_TRUE(r.resources.count("registers")) << nlohmann::json(r.resources).dump();
    hashes.insert(r.artifact.hash);
  }
  EXPECT_EQ(hashes.size(), inputs.size());
}

TEST_F(CudaBuildTest, NvccBuildFindsTheSameEntry) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc") && std::system("command -v nvcc >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "nvcc is not installed here";
  CudaBuilder builder(dir_, false, "");
  BuildInput in = input("scale<4>");
  in.compiler = "nvcc";
  BuildResult r = builder.build(in);
  ASSERT_EQ(r.status, Status::ok) << r.log;
  auto side = read_sidecar(sidecar_path(r.artifact.path));
  ASSERT_TRUE(side);
  BuildResult by_nvrtc = builder.build(input("scale<4>"));
  ASSERT_EQ(by_nvrtc.status, Status::ok) << by_nvrtc.log;
  EXPECT_EQ(side->lowered, read_sidecar(sidecar_path(by_nvrtc.artifact.path))->lowered);
  EXPECT_EQ(inspect_cubin(slurp(r.artifact.path)).sm, 90);
}

// The nvcc a build runs is $CUDA_HOME's before $PATH's: another toolkit
// under $CUDA_HOME builds another variant, not the cached one of the first.
TEST_F(CudaBuildTest, AnotherNvccUnderCudaHomeIsAnotherVariant) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no /usr/local/cuda/bin/nvcc to stand behind";
  std::vector<std::string> hashes;
  const char* before = std::getenv("CUDA_HOME");
  const std::string saved = before ? before : "";
  for (const char* home : {"kit-a", "kit-b"}) {
    fs::create_directories(dir_ / home / "bin");
    const fs::path nvcc = dir_ / home / "bin" / "nvcc";
    std::ofstream(nvcc) << "#!/bin/sh\nexec /usr/local/cuda/bin/nvcc \"$@\"\n";
    fs::permissions(nvcc, fs::perms::owner_all);
    ::setenv("CUDA_HOME", (dir_ / home).c_str(), 1);
    CudaBuilder builder(dir_ / "cache", false, "");
    BuildInput in = input("scale<4>");
    in.compiler = "nvcc";
    BuildResult r = builder.build(in);
    ASSERT_EQ(r.status, Status::ok) << r.log;
    EXPECT_FALSE(r.cached) << home;
    hashes.push_back(r.artifact.hash);
  }
  if (before) ::setenv("CUDA_HOME", saved.c_str(), 1);
  else ::unsetenv("CUDA_HOME");
  EXPECT_NE(hashes[0], hashes[1]);
}

// The host compiler nvcc runs preprocesses the source: a cubin cached from
// one host compiler is not served to a build with another, even where the
// flags are the same and the environment names it ($NVCC_CCBIN; here two
// wrappers of the same gcc, told apart by their files).
TEST_F(CudaBuildTest, AnotherNvccHostCompilerIsAnotherVariant) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc") && std::system("command -v nvcc >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "nvcc is not installed here";
  const char* before = std::getenv("NVCC_CCBIN");
  const std::string saved = before ? before : "";
  std::vector<std::string> hashes;
  for (const char* host : {"host-a", "host-b"}) {
    const fs::path wrapper = dir_ / host / "gcc";
    fs::create_directories(wrapper.parent_path());
    std::ofstream(wrapper) << "#!/bin/sh\n# " << host << "\nexec gcc \"$@\"\n";
    fs::permissions(wrapper, fs::perms::owner_all);
    ::setenv("NVCC_CCBIN", wrapper.c_str(), 1);
    CudaBuilder builder(dir_ / "cache", false, "");
    BuildInput in = input("scale<4>");
    in.compiler = "nvcc";
    BuildResult r = builder.build(in);
    ASSERT_EQ(r.status, Status::ok) << r.log;
    EXPECT_FALSE(r.cached) << host;
    hashes.push_back(r.artifact.hash);
  }
  if (before) ::setenv("NVCC_CCBIN", saved.c_str(), 1);
  else ::unsetenv("NVCC_CCBIN");
  EXPECT_NE(hashes[0], hashes[1]);
}

// Both compilers report the entry's registers and spills, a cached build
// keeps them, and kernel.max_spills refuses a variant that spills more, as
// a resource_limit, before anything runs.
TEST_F(CudaBuildTest, EachBuildReportsItsResourcesAndMaxSpillsRefusesSpillingVariants) {
  const char* spilling = R"(
extern "C" __global__ void spills(float* out, const float* in, int n) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; ++j) acc[j] = in[j * n + threadIdx.x];
  for (int i = 0; i < n; ++i) {
#pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = acc[j] * acc[(j + 7) % 48] + in[i * 48 + j];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; ++j) s += acc[j];
  out[threadIdx.x] = s;
}
)";
  const bool have_nvcc = fs::exists("/usr/local/cuda/bin/nvcc") || std::system("command -v nvcc >/dev/null 2>&1") == 0;
  for (const std::string compiler : {"nvrtc", "nvcc"}) {
    if (compiler == "nvcc" && !have_nvcc) continue;
    SCOPED_TRACE(compiler);
    CudaBuilder builder(dir_ / compiler, false, "");
    BuildInput plain = input("plain");
    plain.compiler = compiler;
    const BuildResult ok = builder.build(plain);
    ASSERT_EQ(ok.status, Status::ok) << ok.log;
    ASSERT_TRUE(ok.resources.count("registers") && ok.resources.count("spills"))
        << "resources: " << nlohmann::json(ok.resources).dump() << "; cached: " << ok.cached << "; log: " << ok.log;
    EXPECT_GT(ok.resources.at("registers"), 0);
    EXPECT_EQ(ok.resources.at("spills"), 0);
    EXPECT_EQ(ok.log.find("ptxas info"), std::string::npos) << ok.log;  // the report is not the log

    BuildInput in = input("spills");
    in.source = spilling;
    in.compiler = compiler;
    in.flags = {compiler == "nvcc" ? "-maxrregcount=24" : "--maxrregcount=24"};
    const BuildResult spilled = builder.build(in);
    ASSERT_EQ(spilled.status, Status::ok) << spilled.log;
    ASSERT_TRUE(spilled.resources.count("registers") && spilled.resources.count("spills"))
        << "resources: " << nlohmann::json(spilled.resources).dump() << "; log: " << spilled.log;
    EXPECT_LE(spilled.resources.at("registers"), 24);
    ASSERT_GT(spilled.resources.at("spills"), 0);
    EXPECT_EQ(spilled.resources.at("spills") * 4, spilled.resources.at("spill_store_bytes"));

    in.max_spills = spilled.resources.at("spills");  // at the limit: built
    EXPECT_EQ(builder.build(in).status, Status::ok);
    in.max_spills = 0;
    const BuildResult refused = builder.build(in);  // served from the cache, judged again
    EXPECT_TRUE(refused.cached);
    EXPECT_EQ(refused.status, Status::resource_limit);
    EXPECT_EQ(refused.fault, Fault::config);
    EXPECT_EQ(refused.resources, spilled.resources);
    EXPECT_NE(refused.log.find("registers spilled"), std::string::npos) << refused.log;
    EXPECT_NE(refused.log.find("kernel.max_spills"), std::string::npos) << refused.log;
    plain.max_spills = 0;
    EXPECT_EQ(builder.build(plain).status, Status::ok);
  }
}
