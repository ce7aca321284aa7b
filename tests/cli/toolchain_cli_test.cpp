// A store read where another toolchain is (a GPU host's store copied to a
// laptop or a CI box, with another compiler release): select, emit and
// report answer from the trials it holds and say whose they are, while tune
// measures with this machine's toolchain and reuses nothing of another's.
// Another release is simulated as the tests of spec_hash do: a wrapper
// compiler of the same name whose --version (and so whose text) differs,
// found first on $PATH.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "builder/detail/compiler.hpp"
#include "core/detail/process.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/spec.hpp"
#include "tunekit/statistics.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using tunekit::testing::fresh_dir;
using tunekit::testing::tunekit_cli;
using tunekit::testing::tunekit_exe;
using tunekit::testing::write_file;
namespace fs = std::filesystem;

namespace {

// y = 2x over N, built by `tk-cc`, the wrapper compiler on $PATH.
std::string write_spec(const fs::path& dir) {
  write_file(dir / "k.cpp",
             "extern \"C\" void f(const float* x, float* y, int n) {\n"
             "  for (int i = 0; i < n; ++i) y[i] = KIND * 0 + 2 * x[i];\n}\n");
  write_file(dir / "k.yaml", R"(name: k
kernel: {source: k.cpp, entry: f, compiler: tk-cc, flags: [-O0]}
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 64}
parameters: {KIND: [0, 1]}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, timeout: 300s, early_stop: off}
)");
  return (dir / "k.yaml").string();
}

// A folder holding `tk-cc`, which says it is release `release` and builds
// with the system's c++.
fs::path install_release(const fs::path& dir, const std::string& release) {
  const fs::path folder = dir / ("cc-" + release);
  write_file(folder / "tk-cc", "#!/bin/sh\ncase \"$1\" in --version) echo 'tkcc (Fake) " + release +
                                   "';; -dumpmachine) exec c++ -dumpmachine;; *) exec c++ \"$@\";; esac\n");
  fs::permissions(folder / "tk-cc", fs::perms::owner_all);
  return folder;
}

// `tunekit ARGS...` with `compilers` first on $PATH.
detail::ProcessResult tunekit_with(const fs::path& compilers, const std::vector<std::string>& args) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> argv{"env", "PATH=" + compilers.string() + ":" + (path ? path : ""), tunekit_exe().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return detail::run_process(argv, std::chrono::seconds(300));
}

// Runs SQL on a store, as an older tunekit, or a release that miscompiles
// the kernel, would have left it.
void run_sql(const fs::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(handle);
  sqlite3_close(handle);
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

// Tuned with one release, read with another: select, emit and report answer
// from the tune's trials, with a note naming both toolchains once. Where
// this machine's release has trials, they are read, without a note.
TEST(ToolchainCli, AStoreTunedWithAnotherCompilerReleaseServesSelectEmitAndReport) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir);
  const std::string out = (dir / "out").string();
  const fs::path gpu_host = install_release(dir, "12.2.0"), laptop = install_release(dir, "13.1.0");
  auto r = tunekit_with(gpu_host, {"tune", spec, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;

  const std::string note =
      "note: the trials of this spec in " + out + "/tunekit.db were measured with 'tkcc (Fake) 12.2.0 for ";
  for (const std::vector<std::string>& command : {std::vector<std::string>{"select", spec, "-o", out},
                                                  {"emit", spec, "-o", out},
                                                  {"report", spec, "-o", out},
                                                  {"rules-report", spec, "-o", out}}) {
    r = tunekit_with(laptop, command);
    // rules-report: the trials are read, and none is a rule config.
    EXPECT_EQ(r.exit_code, command[0] == "rules-report" ? 3 : 0) << command[0] << ": " << r.output;
    EXPECT_EQ(count_of(r.output, note), 1u) << command[0] << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "; this machine builds with 'tkcc (Fake) 13.1.0 for ")) << r.output;
    const bool policy = command[0] == "select" || command[0] == "emit";
    EXPECT_TRUE(contains(r.output, policy ? ": the policy is theirs\n" : ": the report is theirs\n")) << r.output;
  }
  EXPECT_TRUE(fs::exists(dir / "out" / "k_policy.hpp"));
  EXPECT_TRUE(fs::exists(dir / "out" / "k.html"));
  r = tunekit_with(laptop, {"select", spec, "-o", out});
  EXPECT_TRUE(contains(r.output, "{KIND: ")) << r.output;

  // On the machine that tuned, its own trials, as before.
  r = tunekit_with(gpu_host, {"select", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "note: the trials")) << r.output;
}

// tune measures with this machine's toolchain and reuses no trial another
// built; with two toolchains' trials and none of this machine's, select
// does not guess: it lists them, and --toolchain picks one.
TEST(ToolchainCli, TuneMeasuresAgainAndSeveralToolchainsArePickedByTheFlag) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir);
  const std::string out = (dir / "out").string();
  const fs::path db = dir / "out" / "tunekit.db";
  const fs::path old_release = install_release(dir, "12.2.0"), new_release = install_release(dir, "13.1.0"),
                 third = install_release(dir, "14.0.0");
  auto r = tunekit_with(old_release, {"tune", spec, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = tunekit_with(new_release, {"tune", spec, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "resumed from the store")) << r.output;
  EXPECT_TRUE(contains(r.output, db.string() + " holds 2 trials of 'k' on this device measured with another "
                                               "toolchain ('tkcc (Fake) 12.2.0 for "))
      << r.output;
  EXPECT_TRUE(contains(r.output, "a tune reuses no trial another toolchain built, so this run measures anew"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "other version")) << r.output;  // the kernel has not changed
  std::vector<std::string> toolchains;
  for (const auto& t : Store(db, Store::Access::read_only).all()) toolchains.push_back(t.toolchain);
  ASSERT_EQ(toolchains.size(), 4u);  // both configs, measured once with each release
  EXPECT_TRUE(toolchains[0].starts_with("tkcc (Fake) 12.2.0 for ")) << toolchains[0];
  EXPECT_TRUE(toolchains[2].starts_with("tkcc (Fake) 13.1.0 for ")) << toolchains[2];
  // The same release resumes its own.
  r = tunekit_with(old_release, {"tune", spec, "--no-progress", "-o", out});
  EXPECT_TRUE(contains(r.output, "2 resumed from the store")) << r.output;

  r = tunekit_with(third, {"select", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, spec + ": " + db.string() +
                                     " holds this spec's trials measured with 2 toolchains, none of them this "
                                     "machine's ('tkcc (Fake) 14.0.0 for "))
      << r.output;
  EXPECT_TRUE(contains(r.output, "'" + toolchains[0] + "' (2 trials), '" + toolchains[2] +
                                     "' (2 trials); pick one with --toolchain TEXT (part of its text)"))
      << r.output;

  r = tunekit_with(third, {"emit", spec, "-o", out, "--toolchain", "13.1.0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(
      contains(r.output, "were measured with '" + toolchains[2] + "'; this machine builds with 'tkcc (Fake) 14.0.0"))
      << r.output;
  // The flag picks another toolchain's even where this machine's has trials.
  r = tunekit_with(old_release, {"select", spec, "-o", out, "--toolchain", "13.1.0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "were measured with '" + toolchains[2] + "'")) << r.output;
  r = tunekit_with(new_release, {"select", spec, "-o", out, "--toolchain", "13.1.0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "note: the trials")) << r.output;

  r = tunekit_with(third, {"select", spec, "-o", out, "--toolchain", "tkcc"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--toolchain: 'tkcc' is part of 2 of the toolchains " + db.string() +
                                     " holds this spec's trials of: '" + toolchains[0] + "' (2 trials), '" +
                                     toolchains[2] + "' (2 trials); give more of one's text"))
      << r.output;
  r = tunekit_with(third, {"report", spec, "-o", out, "--toolchain", "9.9"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--toolchain: '9.9' is part of none of the toolchains " + db.string() +
                                     " holds this spec's trials of: '"))
      << r.output;
  r = tunekit_with(third, {"report", "-o", out, "--toolchain", "13.1.0"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--toolchain: picks the trials of a spec tuned with that setting: give the SPEC too"))
      << r.output;
}

// This machine's trials answer where it has any, and are never mixed with
// another toolchain's; but where they hold nothing usable (every trial at a
// size failed, a size -s names missing), the message names the other
// toolchains whose trials ran correctly there, and --toolchain reads them:
// the advice to give the tune's --seed or --flags could not help.
TEST(ToolchainCli, AnotherToolchainsCorrectTrialsAreNamedWhereThisMachinesHoldNothingUsable) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir);
  const std::string out = (dir / "out").string();
  const fs::path gpu_host = install_release(dir, "12.2.0"), laptop = install_release(dir, "13.1.0");
  auto r = tunekit_with(gpu_host, {"tune", spec, "--no-progress", "-o", out, "-a", "N=[32,64]"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = tunekit_with(laptop, {"tune", spec, "--no-progress", "-o", out, "-a", "N=[64,128]"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The laptop's release fails to build the kernel at N=64 (a tune stops
  // where the reference config does not build, so the failures are made).
  run_sql(dir / "out" / "tunekit.db",
          "UPDATE trials SET status = 'compile_error', error = 'tk-cc: internal error', median_us = NULL "
          "WHERE toolchain LIKE 'tkcc (Fake) 13.1.0%' AND size_json LIKE '%64%'");
  const std::string other = "ran correctly with another toolchain: 'tkcc (Fake) 12.2.0 for ";
  const std::string reads = "' (2 trials); --toolchain TEXT (part of its text) reads them";

  for (const std::string command : {"select", "emit"}) {
    r = tunekit_with(laptop, {command, spec, "-o", out, "-s", "N=64"});
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_TRUE(
        contains(r.output, "nothing to " + command +
                               ": no trial of 'k' ran correctly: there is no config "
                               "to choose; the database holds trials of this spec at the sizes the flags make that " +
                               other))
        << r.output;
    EXPECT_TRUE(contains(r.output, reads)) << r.output;
    EXPECT_FALSE(contains(r.output, "under other settings")) << r.output;  // another toolchain is no setting
  }

  r = tunekit_with(laptop, {"select", spec, "-o", out, "-s", "N=32"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--size N=32: the store holds no trials of this spec measured with the toolchain "
                       "read at the sizes the flags make; it holds {N: 128}, {N: 64}; the database holds "
                       "trials of this spec at the sizes the flags make that " +
                           other))
      << r.output;
  EXPECT_TRUE(contains(r.output, reads)) << r.output;

  // Without -s: this machine's policy, of its one size that ran correctly,
  // and a note at each size where the other toolchain's did.
  r = tunekit_with(laptop, {"select", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 size, 1 distinct config")) << r.output;
  EXPECT_FALSE(contains(r.output, "note: the trials of this spec")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "note: no config ran correctly at {N: 64}: it has no entry, and gets the rule of an "
                       "untuned size; the database holds trials of this spec there that " +
                           other))
      << r.output;
  EXPECT_TRUE(contains(r.output,
                       "note: the toolchain read has no trials at {N: 32}: it has no entry, and gets the "
                       "rule of an untuned size; the database holds trials of this spec there that " +
                           other))
      << r.output;
  EXPECT_EQ(count_of(r.output, reads), 2u) << r.output;

  r = tunekit_with(laptop, {"select", spec, "-o", out, "-s", "N=64", "--toolchain", "12.2.0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "  {N: 64}: {KIND: ")) << r.output;
}

// --toolchain picks among the toolchains a store names for the spec's
// trials; where it names none (a store of schema 9, or no trials of the
// spec) the flag is refused, not ignored.
TEST(ToolchainCli, TheToolchainFlagIsRefusedWhereTheStoreNamesNone) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir);
  const std::string out = (dir / "out").string();
  const fs::path db = dir / "out" / "tunekit.db";
  const fs::path gpu_host = install_release(dir, "12.2.0"), laptop = install_release(dir, "13.1.0");
  auto r = tunekit_with(gpu_host, {"tune", spec, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // Other flags make another kernel of the spec, which the store has no trials of.
  r = tunekit_with(laptop, {"select", spec, "-o", out, "--flags", "-O1", "--toolchain", "12.2.0"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--toolchain: picks one of the toolchains a store names for this spec's trials, "
                       "and there is none: the database " +
                           db.string() + " has no trials of this spec (as it is now), but 2 trials of 'k'"))
      << r.output;

  // As a tunekit before schema 10 left it: no trial names its toolchain.
  run_sql(db,
          "DROP INDEX trials_by_kernel_without_toolchain; ALTER TABLE trials DROP COLUMN hash_without_toolchain; "
          "ALTER TABLE trials DROP COLUMN toolchain; PRAGMA user_version=9;");
  r = tunekit_with(laptop, {"select", spec, "-o", out, "--toolchain", "nonsense"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--toolchain: picks one of the toolchains a store names for this spec's trials, "
                       "and the 2 trials of 'k' in " +
                           db.string() +
                           " name none: they were stored by a tunekit before schema 10, which did not "
                           "record the toolchain, and are read only where the toolchain that measured "
                           "them is (leave out --toolchain)"))
      << r.output;
  // Where that toolchain is, they are this machine's, which the flag may name.
  r = tunekit_with(gpu_host, {"select", spec, "-o", out, "--toolchain", "12.2.0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = tunekit_with(gpu_host, {"select", spec, "-o", out, "--toolchain", "nonsense"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--toolchain: 'nonsense' is part of none of the toolchains")) << r.output;
}

namespace {

// `tunekit ARGS...` where PoCL lists two devices, its one-core driver's
// (device 0) and its threaded driver's (device 1): an OpenCL kernel's
// toolchain names the device, so each has its own, as two GPUs of other
// drivers would.
detail::ProcessResult tunekit_on_two_devices(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "POCL_DEVICES=basic pthread", tunekit_exe().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return detail::run_process(argv, std::chrono::seconds(300));
}

// The name `tunekit devices` gives OpenCL device `index`, as the store
// keeps it; empty where there is none.
std::string opencl_device_name(const std::string& devices, int index) {
  const std::string line = "\nopencl " + std::to_string(index) + ": ";
  const auto at = ("\n" + devices).find(line);
  if (at == std::string::npos) return {};
  const auto start = at + line.size() - 1;  // the leading "\n" was added
  return devices.substr(start, devices.find('\n', start) - start);
}

}  // namespace

// select, emit and report read a device's trials under that device's
// toolchain, as its tune stored them: a tune on device 1, whose OpenCL
// driver differs from device 0's, is this machine's, not another
// toolchain's, and --device picks it without --toolchain.
TEST(ToolchainCli, EachDeviceOfThisMachineIsReadUnderItsOwnToolchain) {
  const auto devices = tunekit_on_two_devices({"devices"});
  const std::string basic = opencl_device_name(devices.output, 0), threaded = opencl_device_name(devices.output, 1);
  if (basic.empty() || threaded.empty() || basic == threaded)
    GTEST_SKIP() << "needs PoCL's two drivers as two OpenCL devices: " << devices.output;
  const auto dir = fresh_dir();
  write_file(dir / "k.cl",
             "__kernel void twice(__global const float* x, __global float* y, int n) {\n"
             "  int i = get_global_id(0);\n  if (i < n) y[i] = 2.0f * x[i];\n}\n");
  write_file(dir / "k.yaml", R"yaml(name: k
kernel: {source: k.cl, entry: twice, language: opencl, grid: ["ceil_div(N, BS)"], block: [BS]}
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 256}
parameters: {BS: [32, 64]}
measure: {warmup: 0us, min_samples: 2, max_samples: 2, cache: hot, timeout: 300s, early_stop: off}
)yaml");
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  auto r = tunekit_on_two_devices({"tune", spec, "--device-index", "1", "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;

  for (const std::vector<std::string>& command : {std::vector<std::string>{"select", spec, "-o", out},
                                                  {"select", spec, "-o", out, "--device", threaded},
                                                  {"emit", spec, "-o", out, "--device", threaded},
                                                  {"report", spec, "-o", out},
                                                  {"rules-report", spec, "-o", out}}) {
    r = tunekit_on_two_devices(command);
    EXPECT_EQ(r.exit_code, command[0] == "rules-report" ? 3 : 0) << command[0] << ": " << r.output;
    EXPECT_FALSE(contains(r.output, "note: the trials")) << command[0] << ": " << r.output;
    EXPECT_FALSE(contains(r.output, "--toolchain")) << command[0] << ": " << r.output;
  }
  // Read where only device 0 is listed: the trials are of a device this
  // machine lacks, not of another compiler.
  r = detail::run_process({"env", "POCL_DEVICES=basic", tunekit_exe().string(), "select", spec, "-o", out},
                          std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "were measured on '" + threaded +
                                     "', which this machine does not list (tunekit devices): the policy is that "
                                     "device's"))
      << r.output;

  // Both devices tuned: a policy is one device's, each read under its own
  // toolchain; report lays them side by side.
  r = tunekit_on_two_devices({"tune", spec, "--device-index", "0", "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = tunekit_on_two_devices({"select", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "holds this spec's results on 2 devices: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "so pick one with --device")) << r.output;
  for (const std::string& device : {basic, threaded}) {
    r = tunekit_on_two_devices({"select", spec, "-o", out, "--device", device});
    EXPECT_EQ(r.exit_code, 0) << device << ": " << r.output;
    EXPECT_FALSE(contains(r.output, "note: the trials")) << device << ": " << r.output;
  }
  r = tunekit_on_two_devices({"report", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "note: the trials")) << r.output;
}

// A CUDA kernel's toolchain is the machine's, not the device's: NVRTC's
// version, or nvcc's release and its host compiler's, the same for every
// GPU. What differs from one GPU to another, the architecture a build
// targets (sm_80, sm_90), is in each trial's device name and its build's
// hash, so a store of two GPUs holds one spec_hash with two devices' trials,
// and select, emit and report read each device's under it, as a tune on
// either stored them (no GPU needed: the trials are written here).
TEST(ToolchainCli, EachCudaDeviceIsReadUnderTheMachinesOneToolchain) {
  const auto dir = fresh_dir();
  write_file(dir / "k.cu",
             "extern \"C\" __global__ void twice(const float* x, float* y, int n) {\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2.0f * x[i];\n}\n");
  write_file(dir / "k.yaml", R"yaml(name: k
kernel: {source: k.cu, entry: twice, language: cuda, grid: ["ceil_div(N, BS)"], block: [BS]}
arguments:
  - {name: x, type: f32, size: N}
  - {name: y, type: f32, size: N, role: out}
  - {name: n, type: i32, value: N}
sizes: {N: 256}
parameters: {BS: [32, 64]}
)yaml");
  const Spec loaded = load_spec(dir / "k.yaml");
  for (int device : {1, 2}) {
    EXPECT_EQ(spec_hash(loaded, device), spec_hash(loaded, 0)) << "device " << device;
    EXPECT_EQ(detail::kernel_compiler_identity(loaded, device), detail::kernel_compiler_identity(loaded, 0));
  }
  const std::string a100 = "cuda: NVIDIA A100-SXM4-40GB (sm_80, 108 SMs, 40 GiB)",
                    h100 = "cuda: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79 GiB)";
  {
    Store store(dir / "out" / "tunekit.db");
    for (const auto& [device, fastest] : {std::pair{a100, 32}, std::pair{h100, 64}})
      for (int bs : {32, 64}) {
        TrialRecord t;
        // Stored as a tune on that GPU stores it: under spec_hash(spec, its index).
        t.spec_hash = spec_hash(loaded, device == a100 ? 0 : 1);
        t.hash_without_toolchain = spec_hash_without_toolchain(loaded);
        t.toolchain = detail::kernel_compiler_identity(loaded, device == a100 ? 0 : 1);
        t.kernel = "k";
        t.device = device;
        t.machine = R"({"device": ")" + device + R"("})";
        t.size = {{"N", Value(256)}};
        t.config = Config({{"BS", Value(bs)}});
        t.samples = {Microseconds(bs == fastest ? 5.0 : 50.0), Microseconds(bs == fastest ? 5.0 : 50.0)};
        t.stats = summarize(t.samples);
        store.put(t);
      }
  }
  const std::string spec = (dir / "k.yaml").string(), out = (dir / "out").string();
  for (const auto& [device, fastest] : {std::pair{a100, 32}, std::pair{h100, 64}}) {
    for (const char* command : {"select", "emit"}) {
      const auto r = tunekit_cli({command, spec, "-o", out, "--device", device});
      EXPECT_EQ(r.exit_code, 0) << command << " " << device << ": " << r.output;
      EXPECT_FALSE(contains(r.output, "note: the trials")) << command << ": " << r.output;
      EXPECT_FALSE(contains(r.output, "--toolchain")) << command << ": " << r.output;
      const std::string answer =
          command == std::string("select") ? r.output : tunekit::testing::read_file(dir / "out" / "k_policy.json");
      EXPECT_TRUE(contains(answer, command == std::string("select") ? "{BS: " + std::to_string(fastest) + "}"
                                                                    : "\"BS\": " + std::to_string(fastest)))
          << command << " " << device << ": " << answer;
    }
  }
  const auto r = tunekit_cli({"report", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "note: the trials")) << r.output;
  const std::string page = tunekit::testing::read_file(dir / "out" / "k.html");
  EXPECT_TRUE(contains(page, "sm_80")) << page;
  EXPECT_TRUE(contains(page, "sm_90"));
}

// The other toolchains' trials a message names are counted as this
// machine's are: only those of configs the spec's space holds now (a config
// it has since left out is none an answer could hold).
TEST(ToolchainCli, OtherToolchainsTrialsAreCountedInTheSpaceAsItIsNow) {
  const auto dir = fresh_dir();
  const std::string spec = write_spec(dir);
  const std::string out = (dir / "out").string();
  const fs::path db = dir / "out" / "tunekit.db";
  const fs::path gpu_host = install_release(dir, "12.2.0"), laptop = install_release(dir, "13.1.0"),
                 third = install_release(dir, "14.0.0");
  auto r = tunekit_with(gpu_host, {"tune", spec, "--no-progress", "-o", out, "-a", "N=[32,64]"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = tunekit_with(laptop, {"tune", spec, "--no-progress", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  run_sql(db,
          "UPDATE trials SET status = 'compile_error', error = 'tk-cc: internal error', median_us = NULL "
          "WHERE toolchain LIKE 'tkcc (Fake) 13.1.0%'");
  // The space narrows to KIND 0: half of each toolchain's trials leave it.
  std::string text = tunekit::testing::read_file(spec);
  text.replace(text.find("KIND: [0, 1]"), 12, "KIND: [0]");
  write_file(spec, text);

  r = tunekit_with(laptop, {"select", spec, "-o", out, "-s", "N=64"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "ran correctly with another toolchain: 'tkcc (Fake) 12.2.0 for ")) << r.output;
  EXPECT_TRUE(contains(r.output, "' (1 trial); --toolchain TEXT (part of its text) reads them")) << r.output;
  r = tunekit_with(laptop, {"select", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "' (2 trials); --toolchain TEXT (part of its text) reads them")) << r.output;

  r = tunekit_with(third, {"select", spec, "-o", out});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "' (2 trials, and 2 outside the spec's space as it is now), 'tkcc (Fake) 13.1.0 for "))
      << r.output;
  EXPECT_TRUE(contains(r.output, "' (1 trial, and 1 outside the spec's space as it is now); pick one with --toolchain"))
      << r.output;
}
