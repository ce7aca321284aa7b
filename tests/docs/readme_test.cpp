// The README's commands are run as written (from the repository root), so
// the documentation cannot drift from what tunekit does. Each command gets
// its own --out-dir so the tree stays clean.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/detail/process.hpp"
#include "support/markdown.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using tunekit::testing::tunekit_commands;
using tunekit::testing::words;

namespace {

// Runs the README's commands in order, sharing one output folder (`select`
// and `emit` read what the `tune` before them stored). `extra` is added to
// every command that takes it (`--properties FILE`: a simulated machine).
void run_readme(const std::vector<std::string>& extra_tune_args, bool expect_default_valid) {
  const std::string root = TUNEKIT_SOURCE_DIR;
  const auto commands = tunekit_commands(tunekit::testing::read_file(root + "/README.md"));
  ASSERT_FALSE(commands.empty()) << "no build/bin/tunekit commands found in README.md";
  const std::string out = tunekit::testing::fresh_dir().string();
  for (const auto& command : commands) {
    auto argv = words(command);
    argv[0] = tunekit::testing::tunekit_exe().string();
    const std::string verb = argv.size() > 1 ? argv[1] : "";
    if (verb == "tune" || verb == "select" || verb == "emit") argv.insert(argv.end(), {"--out-dir", out});
    // The simulated machines are CPUs: the T1 example is an OpenCL kernel,
    // whose constraint reads the OpenCL device's max_work_group_size, which
    // a CPU's properties lack (and tune refuses such a file).
    const bool opencl = command.find("examples/kernel_tuner_t1/") != std::string::npos;
    if ((verb == "tune" || verb == "space") && !opencl)
      argv.insert(argv.end(), extra_tune_args.begin(), extra_tune_args.end());
    if (verb == "tune") argv.push_back("--no-progress");
    auto r = detail::run_process(argv, std::chrono::minutes(5), root);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
    if (verb == "tune") EXPECT_NE(r.output.find("best: "), std::string::npos) << command << "\n" << r.output;
    if (verb == "emit")
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "matmul_policy.hpp")) << r.output;
    if (!expect_default_valid) continue;
    // The bundled defaults hold on this machine: no warning about them, and
    // one config for all sizes is found against the default itself.
    EXPECT_EQ(r.output.find("warning: the default"), std::string::npos) << command << "\n" << r.output;
    if (verb == "select" && command.find("all-sizes") != std::string::npos)
      EXPECT_NE(r.output.find("one config for all sizes: "), std::string::npos) << command << "\n" << r.output;
  }
}

}  // namespace

TEST(Readme, EveryTunekitCommandRuns) {
  // This machine, whatever its caches: every command must succeed; a default
  // that is not valid here is allowed (warned about, and select offers the
  // best config valid at every size), since the test must not depend on them.
  run_readme({}, false);
}

// The same commands on two simulated machines at the ends of the range the
// bundled examples' defaults must be valid on (L1d 32 to 64 KiB, L2 0.5 to
// 2 MiB; AVX2 and NEON register files; 16 and 4 cores): the constraints see
// their properties (tune --properties), the kernels still run here.
TEST(Readme, CommandsRunOnASmallCacheMachine) {
  run_readme({"--properties", std::string(TUNEKIT_SOURCE_DIR) + "/tests/docs/data/machines/small_caches.json"}, true);
}

TEST(Readme, CommandsRunOnALargeCacheMachine) {
  run_readme({"--properties", std::string(TUNEKIT_SOURCE_DIR) + "/tests/docs/data/machines/large_caches.json"}, true);
}

// The README's commands build through scripts/build.sh: a preset name with a
// typo is refused and the build folder, which also holds the Triton test's
// Python environment (GBs of downloads), is left as it was. Before, any
// failed configure deleted the folder.
TEST(Readme, TheBuildScriptKeepsTheBuildFolderOnAPresetTypo) {
  const auto dir = tunekit::testing::fresh_dir() / "build";
  std::filesystem::create_directories(dir / "pyenv");
  tunekit::testing::write_file(dir / "pyenv" / "marker", "kept");
  auto r = detail::run_process({"/usr/bin/env", "BUILD_DIR=" + dir.string(),
                                std::string(TUNEKIT_SOURCE_DIR) + "/scripts/build.sh", "cii"},
                               std::chrono::minutes(5));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("build.sh: no preset 'cii' (presets: "), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "pyenv" / "marker"));
}

// The MPI section's command, as written, where tunekit has MPI: two ranks on
// this machine (more than CI's cores allow without --oversubscribe, as root).
TEST(Readme, TheMpiCommandRuns) {
  if (std::string(TUNEKIT_MPIEXEC).empty()) GTEST_SKIP() << "tunekit was built without MPI";
  const std::string root = TUNEKIT_SOURCE_DIR;
  const auto commands = tunekit_commands(tunekit::testing::read_file(root + "/README.md"), "mpirun ");
  ASSERT_EQ(commands.size(), 1u);
  auto argv = words(commands[0]);
  const auto tunekit = std::find(argv.begin(), argv.end(), "build/bin/tunekit");
  ASSERT_NE(tunekit, argv.end()) << commands[0];
  *tunekit = tunekit::testing::tunekit_exe().string();
  argv[0] = TUNEKIT_MPIEXEC;
  argv.insert(argv.begin() + 1, "--oversubscribe");
  argv.insert(argv.begin(), {"env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  argv.insert(argv.end(), {"--out-dir", tunekit::testing::fresh_dir().string(), "--no-progress"});
  const auto r = detail::run_process(argv, std::chrono::minutes(10), root);
  EXPECT_EQ(r.exit_code, 0) << commands[0] << "\n" << r.output;
  EXPECT_NE(r.output.find("best: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("size {K: 512, M: 512, N: 512}"), std::string::npos) << r.output;
}
