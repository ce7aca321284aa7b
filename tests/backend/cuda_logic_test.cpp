// The CUDA backend's logic that needs no GPU: the device's limits as
// constraint variables, the architecture it builds for, the resource checks
// made before a launch, finding a template entry among a cubin's symbols,
// and a CUDA spec's launch geometry and arguments.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "backend/cuda/detail/driver.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/builder.hpp"
#include "tunekit/evaluator.hpp"
#include "tunekit/error.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

using namespace tunekit;
using namespace tunekit::cuda;

namespace {

// What an H200 reports.
DeviceLimits h200() {
  DeviceLimits d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 64};
  d.max_grid = {2147483647, 65535, 65535};
  d.shared_per_block = 49152;
  d.shared_per_block_optin = 232448;
  d.shared_per_sm = 233472;
  d.registers_per_block = 65536;
  d.registers_per_sm = 65536;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.l2_bytes = 62914560;
  d.memory_bytes = 150754820096ull;
  return d;
}

LaunchGeometry geometry(std::uint64_t threads, std::uint64_t shared = 0, std::uint64_t grid_y = 1) {
  LaunchGeometry g;
  g.grid = {128, grid_y, 1};
  g.block = {threads, 1, 1};
  g.shared_memory = shared;
  return g;
}

}  // namespace

TEST(CudaLogic, ArchitectureOfTheDevice) {
  EXPECT_EQ(default_arch(9, 0), "sm_90a");
  EXPECT_EQ(default_arch(10, 0), "sm_100a");
  EXPECT_EQ(default_arch(8, 6), "sm_86");
  EXPECT_EQ(default_arch(7, 5), "sm_75");
}

TEST(CudaLogic, DeviceLimitsAreConstraintVariables) {
  const MachineInfo m = machine_info(h200());
  EXPECT_NE(m.device.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(m.device.find("132 SMs"), std::string::npos);
  const auto& p = m.properties;
  EXPECT_EQ(p.at("max_threads_per_block").as_int(), 1024);
  EXPECT_EQ(p.at("shared_memory_per_block").as_int(), 49152);
  EXPECT_EQ(p.at("shared_memory_per_block_optin").as_int(), 232448);
  EXPECT_EQ(p.at("registers_per_block").as_int(), 65536);
  EXPECT_EQ(p.at("registers_per_thread").as_int(), 255);
  EXPECT_EQ(p.at("sm_count").as_int(), 132);
  EXPECT_EQ(p.at("l2_bytes").as_int(), 62914560);
  EXPECT_EQ(p.at("compute_capability").as_int(), 90);
  EXPECT_EQ(p.at("arch").as_string(), "sm_90a");

  // They prune a space before anything is built.
  std::vector<Parameter> params{
      {"BM", {32, 64, 128, 256}, {}}, {"BK", {8, 16, 32, 64}, {}}, {"T", {256, 512, 1024, 2048}, {}}};
  std::vector<Expression> constraints{Expression::parse("(BM + BM) * BK * 4 <= shared_memory_per_block"),
                                      Expression::parse("T <= max_threads_per_block")};
  Space space(params, constraints, p);
  for (const Config& c : space.enumerate()) {
    EXPECT_LE(2 * c.at("BM").as_int() * c.at("BK").as_int() * 4, 49152);
    EXPECT_LE(c.at("T").as_int(), 1024);
  }
  EXPECT_LT(space.count(), space.cartesian_size());
  EXPECT_EQ(space.count(), 3u * (4 + 4 + 3 + 2));  // BM x BK pairs under 48 KiB, times T in {256, 512, 1024}
}

TEST(CudaLogic, GeometryOverTheDeviceLimitsIsRefused) {
  const DeviceLimits d = h200();
  EXPECT_FALSE(check_geometry(d, geometry(1024)));
  auto threads = check_geometry(d, geometry(2048));
  ASSERT_TRUE(threads);
  EXPECT_NE(threads->find("2048 threads"), std::string::npos) << *threads;
  EXPECT_TRUE(check_geometry(d, geometry(256, 0, 70000)));  // grid.y
  EXPECT_TRUE(check_geometry(d, geometry(256, 232449)));    // dynamic shared memory
  EXPECT_FALSE(check_geometry(d, geometry(256, 232448)));
}

TEST(CudaLogic, FunctionResourcesAreCheckedBeforeTheLaunch) {
  const DeviceLimits d = h200();
  FunctionResources f{/*registers=*/64, /*static_shared=*/0, /*local_bytes=*/0, /*max_threads_per_block=*/1024};
  EXPECT_FALSE(check_resources(f, d, geometry(1024)));
  // 128 registers per thread leave room for 512 threads.
  f.registers = 128;
  f.max_threads_per_block = 512;
  auto why = check_resources(f, d, geometry(1024));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("128 registers"), std::string::npos) << *why;
  EXPECT_FALSE(check_resources(f, d, geometry(512)));
  // Static plus dynamic shared memory against the opt-in limit.
  f = {32, 40000, 0, 1024};
  EXPECT_FALSE(check_resources(f, d, geometry(256, 192448)));
  why = check_resources(f, d, geometry(256, 192449));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("40000 static"), std::string::npos) << *why;
}

TEST(CudaLogic, TemplateEntriesAreFoundByTheirDemangledNames) {
  // void gemm<128, 64>(float const*, float const*, float*, int, int, int), and gemm<128, 6>.
  const std::vector<std::string> syms{"_Z4gemmILi128ELi6EEvPKfS1_Pfiii", "_Z4gemmILi128ELi64EEvPKfS1_Pfiii", "plain"};
  EXPECT_EQ(match_entry(syms, "gemm<128, 64>"), "_Z4gemmILi128ELi64EEvPKfS1_Pfiii");
  EXPECT_EQ(match_entry(syms, "gemm<128,64>"), "_Z4gemmILi128ELi64EEvPKfS1_Pfiii");
  EXPECT_EQ(match_entry(syms, "gemm<128, 6>"), "_Z4gemmILi128ELi6EEvPKfS1_Pfiii");
  EXPECT_EQ(match_entry(syms, "plain"), "plain");
  EXPECT_FALSE(match_entry(syms, "gemm<128, 32>"));
  EXPECT_FALSE(match_entry(syms, "emm<128, 64>"));
  EXPECT_EQ(match_entry({"_Z6kernelPf"}, "anything"), "_Z6kernelPf");  // a lone kernel
}

TEST(CudaLogic, NvrtcOptionsCarryArchDefinesAndFlags) {
  BuildInput in;
  in.defines = {"BM=64", "MODE=fast"};
  in.flags = {"-use_fast_math"};
  const auto o = nvrtc_options(in, "sm_90a");
  ASSERT_GE(o.size(), 4u);
  EXPECT_EQ(o[0], "--gpu-architecture=sm_90a");
  EXPECT_EQ(o[1], "-DBM=64");
  EXPECT_EQ(o[2], "-DMODE=fast");
  EXPECT_EQ(o.back(), "-use_fast_math");
}

TEST(CudaLogic, CubinInspectionRejectsOtherFiles) {
  EXPECT_FALSE(inspect_cubin("").valid);
  EXPECT_FALSE(inspect_cubin(std::string(100, 'x')).valid);
}

TEST(CudaLogic, SidecarRoundTrips) {
  const auto dir = tunekit::testing::fresh_dir();
  const auto file = sidecar_path(dir / "abc.cubin");
  EXPECT_EQ(file.filename(), "abc.json");
  write_sidecar(file, {"gemm<1, 2>", "_Z4gemmILi1ELi2EEvv", "sm_90a", "nvrtc 13.0"});
  auto s = read_sidecar(file);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->entry, "gemm<1, 2>");
  EXPECT_EQ(s->lowered, "_Z4gemmILi1ELi2EEvv");
  EXPECT_EQ(s->arch, "sm_90a");
  EXPECT_FALSE(read_sidecar(dir / "missing.json"));
}

TEST(CudaLogic, SpecLaunchAndArgumentsResolvePerConfig) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "k.cu",
                               "template <int B> __global__ void k(const __half* x, __nv_bfloat16* y, "
                               "unsigned char* m, long long* c, float s, int n) {}\n");
  tunekit::testing::write_file(dir / "k.yaml", R"yaml(kernel:
  source: k.cu
  language: cuda
  entry: "k<{BLOCK}>"
  grid: ["ceil_div(n, BLOCK * ITEMS)", 2]
  block: [BLOCK]
  shared_memory: BLOCK * ITEMS * 2
arguments:
  - {name: x, type: f16, size: n}
  - {name: y, type: bf16, size: n, role: out}
  - {name: m, type: u8, size: n // 8}
  - {name: c, type: i64, size: 1, role: inout, fill: zeros}
  - {name: s, type: f32, value: 0.5}
  - {name: n, type: i32, value: n}
sizes: {n: 100000}
parameters:
  BLOCK: [128, 256]
  ITEMS: [1, 4]
constraints: [BLOCK * ITEMS * 2 <= shared_memory_per_block]
)yaml");
  Spec spec = load_spec(dir / "k.yaml");
  EXPECT_EQ(spec.kernel.language, "cuda");
  EXPECT_TRUE(spec.kernel.flags.empty());
  Config c({{"BLOCK", 256}, {"ITEMS", 4}});
  Bindings env = machine_info(h200()).properties;
  env["n"] = 100000;
  for (const auto& [k, v] : c) env[k] = v;
  const LaunchGeometry g = resolve_launch(spec.kernel.launch, env);
  EXPECT_EQ(g.grid[0], 98u);  // ceil(100000 / 1024)
  EXPECT_EQ(g.grid[1], 2u);
  EXPECT_EQ(g.block[0], 256u);
  EXPECT_EQ(g.shared_memory, 2048u);
  const auto args = resolve_arguments(spec.arguments, env);
  ASSERT_EQ(args.size(), 6u);
  EXPECT_EQ(args[0].type, ElementType::f16);
  EXPECT_EQ(args[1].type, ElementType::bf16);
  EXPECT_EQ(args[2].count, 12500u);
  EXPECT_EQ(args[3].type, ElementType::i64);
  EXPECT_EQ(args[4].role, Role::scalar);
  EXPECT_EQ(size_of(ElementType::bf16), 2u);
  const BuildInput in = make_build_input(spec, "", c, {});
  EXPECT_EQ(in.entry, "k<256>");
  EXPECT_EQ(in.compiler, "nvrtc");
  EXPECT_TRUE(in.arch.empty());  // the device's own
}

// CCCL's base variant of a %RANGE% kernel whose launch reads a parameter:
// `base:` gives the base its value there (CUB's own block size), while its
// build defines TUNE_BASE alone, as CCCL's scripts build it.
TEST(CudaLogic, TheBaseVariantsLaunchReadsTheValuesBaseGives) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string source =
      "// %RANGE% TUNE_THREADS tpb 64:128:64\n"
      "#if TUNE_BASE\n#define THREADS 256\n#else\n#define THREADS TUNE_THREADS\n#endif\n"
      "template <int B> __global__ void k(float* y, int n) {}\n";
  tunekit::testing::write_file(dir / "k.cu", source);
  const std::string head = R"yaml(kernel:
  source: k.cu
  language: cuda
  entry: "k<{TUNE_THREADS}>"
  grid: ["ceil_div(n, TUNE_THREADS)"]
  block: [TUNE_THREADS]
arguments:
  - {name: y, type: f32, size: n, role: out}
  - {name: n, type: i32, value: n}
sizes: {n: 1000}
)yaml";
  tunekit::testing::write_file(dir / "k.yaml", head + "base: {TUNE_THREADS: 256}\n");
  const Spec spec = load_spec(dir / "k.yaml");
  const Config base = base_variant_config(spec);
  EXPECT_EQ(base, Config({{"TUNE_BASE", 1}, {"TUNE_THREADS", 256}}));
  Bindings env{{"n", Value(1000)}};
  for (const auto& [k, v] : base) env[k] = v;
  const LaunchGeometry g = resolve_launch(spec.kernel.launch, env);
  EXPECT_EQ(g.block[0], 256u);
  EXPECT_EQ(g.grid[0], 4u);
  const BuildInput in = make_build_input(spec, source, base, spec.sizes.front());
  EXPECT_EQ(in.entry, "k<256>");
  EXPECT_NE(in.source.find("#define TUNE_BASE 1\n"), std::string::npos) << in.source;
  EXPECT_EQ(in.source.find("#define TUNE_THREADS"), std::string::npos) << in.source;
  // A config's build defines its values, as before.
  const BuildInput tuned = make_build_input(spec, source, Config({{"TUNE_THREADS", 64}}), spec.sizes.front());
  EXPECT_NE(tuned.source.find("#define TUNE_THREADS 64\n"), std::string::npos) << tuned.source;

  // Without `base:`, the launch has no value to read: the tuner records the
  // base's launch_error with this reason and what `base:` would give.
  tunekit::testing::write_file(dir / "k.yaml", head);
  const Spec bare = load_spec(dir / "k.yaml");
  EXPECT_EQ(base_variant_config(bare), Config({{"TUNE_BASE", 1}}));
  Bindings bare_env{{"n", Value(1000)}, {"TUNE_BASE", Value(1)}};
  EXPECT_THROW(resolve_launch(bare.kernel.launch, bare_env), InputError);
}

TEST(CudaLogic, ListingSaysWhyThereIsNoDevice) {
  for (const auto& l : list_devices())
    if (l.backend == "cuda" && l.devices.empty()) EXPECT_FALSE(l.unavailable.empty());
}

// A kernel the display watchdog stopped ran too long: a timeout, which a
// rerun under a longer limit measures again, not a launch error that stands
// under any settings (failure_reuse.cpp).
TEST(CudaLogic, AFailedCallsStatusSaysWhatTheDriverRefused) {
  EXPECT_EQ(status_of_failed_call(CUDA_ERROR_LAUNCH_TIMEOUT), Status::timeout);
  EXPECT_EQ(status_of_failed_call(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), Status::resource_limit);
  EXPECT_EQ(status_of_failed_call(CUDA_ERROR_INVALID_CLUSTER_SIZE), Status::resource_limit);
  EXPECT_EQ(status_of_failed_call(CUDA_ERROR_ILLEGAL_ADDRESS), Status::launch_error);
  EXPECT_EQ(status_of_failed_call(CUDA_ERROR_LAUNCH_FAILED), Status::launch_error);
}

TEST(CudaLogic, FlushCoversTheL2SeveralTimes) {
  EXPECT_EQ(flush_bytes_for(h200()), 256'000'000ull);
  DeviceLimits big = h200();
  big.l2_bytes = 128 << 20;
  EXPECT_EQ(flush_bytes_for(big), 4ull * (128 << 20));
}

// ptxas's report (-v), as nvcc prints it and as NVRTC's log holds it: the
// entry's own lines are read, not its neighbour's, and the report leaves the
// log, which keeps the compiler's warnings.
TEST(CudaLogic, PtxasReportGivesTheEntrysResources) {
  const std::string nvcc_log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z4tmplILi64EEvPf' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z4tmplILi64EEvPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 1 barriers, 256 bytes smem\n"
      "ptxas info    : Compile time = 17.205 ms\n"
      "ptxas info    : Compiling entry function 'spills' for 'sm_90a'\n"
      "ptxas info    : Function properties for spills\n"
      "    248 bytes stack frame, 488 bytes spill stores, 544 bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 0 barriers, 248 bytes cumulative stack size\n"
      "kernel.cu(3): warning #177-D: variable \"unused\" was declared but never referenced\n";
  EXPECT_EQ(ptxas_resources(nvcc_log, "spills"), (KernelResources{{"registers", 24},
                                                                  {"barriers", 0},
                                                                  {"stack_bytes", 248},
                                                                  {"spill_store_bytes", 488},
                                                                  {"spill_load_bytes", 544},
                                                                  {"spills", 122}}));
  EXPECT_EQ(ptxas_resources(nvcc_log, "_Z4tmplILi64EEvPf"), (KernelResources{{"registers", 12},
                                                                             {"barriers", 1},
                                                                             {"shared_memory", 256},
                                                                             {"stack_bytes", 0},
                                                                             {"spill_store_bytes", 0},
                                                                             {"spill_load_bytes", 0},
                                                                             {"spills", 0}}));
  EXPECT_TRUE(ptxas_resources(nvcc_log, "spill").empty());  // a prefix of another entry's name
  EXPECT_EQ(without_ptxas_report(nvcc_log),
            "kernel.cu(3): warning #177-D: variable \"unused\" was declared but never referenced\n");

  const std::string nvrtc_log =
      "ptxas info    : Compiling entry function 'plain' for 'sm_90a'\n"
      "ptxas info    : Function properties for plain\n"
      "ptxas         .     0 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 64 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 10.152 ms";
  const KernelResources plain = ptxas_resources(nvrtc_log, "plain");
  EXPECT_EQ(plain.at("registers"), 64);
  EXPECT_EQ(plain.at("spills"), 1);
  EXPECT_EQ(without_ptxas_report(nvrtc_log), "");
  EXPECT_EQ(without_ptxas_report("error: one\nerror: two"), "error: one\nerror: two");
}

// nvcc runs a host compiler even for a cubin: it preprocesses the source
// (with its own headers and macros) and cicc is told its version. So the
// kernel's identity names that compiler's release, as the CPU's does
// (detail::compiler_release: --version, -dumpmachine, a wrapper's text),
// wherever the flags or the environment name it and as nvcc picks it: the
// last -ccbin, then $NVCC_CCBIN, then $PATH's gcc. NVRTC runs none.
TEST(CudaToolchainIdentity, NvccNamesTheReleaseOfItsHostCompiler) {
  namespace fs = std::filesystem;
  using tunekit::testing::write_file;
  const auto dir = tunekit::testing::fresh_dir();
  std::map<std::string, std::optional<std::string>> saved;
  for (const char* name : {"CUDA_HOME", "PATH", "NVCC_CCBIN", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"})
    saved[name] = std::getenv(name) ? std::optional<std::string>(std::getenv(name)) : std::nullopt;
  const auto executable = [](const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    write_file(file, text);
    fs::permissions(file, fs::perms::owner_all);
    return file.string();
  };
  executable(dir / "kit" / "bin" / "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n");
  ::setenv("CUDA_HOME", (dir / "kit").c_str(), 1);
  for (const char* name : {"NVCC_CCBIN", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"}) ::unsetenv(name);
  const auto host = [&](const std::string& file, const std::string& release, const std::string& wrapped = "") {
    return executable(dir / file, "#!/bin/sh\ncase \"$1\" in --version) echo 'fakecc (Fake) " + release +
                                      "';; -dumpmachine) echo x86_64-linux-gnu;; *) exit 1;; esac\n" + wrapped);
  };
  const std::string here = host("here/g++", "12.2.0");
  const std::string elsewhere = host("elsewhere/g++", "12.2.0");
  const std::string wrapper = host("wrapper/g++", "12.2.0", "# a wrapper that adds -DOFFSET=1\n");
  const std::string newer = host("newer/g++", "13.1.0");
  host("folder/gcc", "12.2.0");
  host("on-path/gcc", "13.1.0");

  const std::string id = toolchain_identity("nvcc", {"-O3", "-ccbin", here});
  EXPECT_EQ(id.rfind("nvcc release 12.4, V12.4.131 host fakecc (Fake) 12.2.0 for x86_64-linux-gnu script ", 0), 0u)
      << id;
  EXPECT_EQ(toolchain_identity("nvcc", {"-ccbin", elsewhere}), id);
  EXPECT_EQ(toolchain_identity("nvcc", {"--compiler-bindir=" + here}), id);
  EXPECT_EQ(toolchain_identity("nvcc", {"-ccbin", (dir / "folder").string()}), id);
  EXPECT_NE(toolchain_identity("nvcc", {"-ccbin", wrapper}), id);
  EXPECT_NE(toolchain_identity("nvcc", {"-ccbin", newer}), id);
  EXPECT_EQ(toolchain_identity("nvcc", {"-ccbin", newer, "-ccbin=" + here}), id);
  ::setenv("NVCC_APPEND_FLAGS", ("-ccbin " + newer).c_str(), 1);
  EXPECT_EQ(toolchain_identity("nvcc", {"-ccbin", here}), toolchain_identity("nvcc", {"-ccbin", newer}));
  ::unsetenv("NVCC_APPEND_FLAGS");
  ::setenv("NVCC_CCBIN", here.c_str(), 1);
  EXPECT_EQ(toolchain_identity("nvcc", {}), id);
  EXPECT_NE(toolchain_identity("nvcc", {"-ccbin", newer}), id);
  ::unsetenv("NVCC_CCBIN");
  ::setenv("PATH", ((dir / "on-path").string() + ":" + saved["PATH"].value_or("")).c_str(), 1);
  EXPECT_EQ(toolchain_identity("nvcc", {}), toolchain_identity("nvcc", {"-ccbin", newer}));
  EXPECT_EQ(toolchain_identity("nvrtc", {"-ccbin", newer}), toolchain_identity("nvrtc", {}));
  EXPECT_EQ(toolchain_identity("nvrtc", {}).find("host"), std::string::npos);

  for (const auto& [name, value] : saved)
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
}
