// The examples as their READMEs describe them: every example folder has a
// README; the tunekit commands in its ```sh blocks run (each tune with a
// budget of two configs, so the suite stays short: the commands, flags and
// specs are what is checked); and every CUDA spec loads and has configs to
// try on an H200, on any machine.
#include <gtest/gtest.h>

#include "core/detail/process.hpp"
#include "support/markdown.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/backend.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
using tunekit::testing::read_file;
using tunekit::testing::tunekit_commands;
using tunekit::testing::words;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = TUNEKIT_SOURCE_DIR;

// Folders under examples/ that hold a spec or a kernel source.
std::vector<fs::path> example_folders() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "examples")) {
    if (!e.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(e.path())) {
      const auto ext = f.path().extension();
      if (ext == ".yaml" || ext == ".cpp" || ext == ".cu" || ext == ".cl") {
        out.push_back(e.path());
        break;
      }
    }
  }
  return out;
}

}  // namespace

TEST(Examples, EveryFolderHasAReadme) {
  const auto folders = example_folders();
  EXPECT_GE(folders.size(), 10u);
  for (const auto& f : folders) EXPECT_TRUE(fs::exists(f / "README.md")) << f;
}

TEST(Examples, TheCommandsOfEveryReadmeRun) {
  std::size_t ran = 0;
  for (const auto& folder : example_folders()) {
    const auto commands = tunekit_commands(read_file(folder / "README.md"));
    const auto out = tunekit::testing::fresh_dir("." + folder.filename().string());
    for (const auto& command : commands) {
      std::vector<std::string> argv;
      for (const auto& w : words(command)) {
        if (w == "#") break;  // a comment after the command
        // The README's output folder is the test's.
        const std::string prefix = "tunekit-out";
        if (w.rfind(prefix, 0) == 0) argv.push_back((out / fs::path(w).lexically_relative(prefix)).string());
        else argv.push_back(w);
      }
      argv[0] = tunekit::testing::tunekit_exe().string();
      const std::string verb = argv[1];
      const bool has_out = std::find(argv.begin(), argv.end(), "-o") != argv.end() ||
                           std::find(argv.begin(), argv.end(), "--out-dir") != argv.end();
      if ((verb == "tune" || verb == "select" || verb == "emit") && !has_out)
        argv.insert(argv.end(), {"--out-dir", out.string()});
      if (verb == "tune") argv.insert(argv.end(), {"--max-evals", "2", "--no-progress"});
      auto r = detail::run_process(argv, 5min, kRoot);
      // A backend this build left out (TUNEKIT_ENABLE_CUDA or _OPENCL off, or
      // its headers missing at configure time) refuses its example, and says so.
      if ((!TUNEKIT_HAS_CUDA || !TUNEKIT_HAS_OPENCL) && r.exit_code != 0 &&
          r.output.find("backend is not in this build") != std::string::npos)
        continue;
      EXPECT_EQ(r.exit_code, 0) << folder << ": " << command << "\n" << r.output;
      if (verb == "tune") EXPECT_NE(r.output.find("best: "), std::string::npos) << command << "\n" << r.output;
      ++ran;
    }
  }
  EXPECT_GE(ran, 8u);
}

TEST(Examples, EveryCudaSpecLoadsAndHasConfigsOnAnH200) {
  const MachineInfo h200{"cuda: NVIDIA H200",
                         {{"compute_capability", Value(90)},
                          {"max_threads_per_block", Value(1024)},
                          {"max_shared_memory_per_block", Value(49152)},
                          {"shared_memory_per_block", Value(49152)},
                          {"shared_memory_per_block_optin", Value(232448)},
                          {"shared_memory_per_sm", Value(233472)},
                          {"registers_per_block", Value(65536)},
                          {"registers_per_sm", Value(65536)},
                          {"warp_size", Value(32)},
                          {"sm_count", Value(132)},
                          {"l2_bytes", Value(52428800)}}};
  std::size_t checked = 0;
  // examples/cuda's specs, and the CUDA T1 file of examples/kernel_tuner_t1.
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "examples")) {
    const auto ext = e.path().extension();
    const bool cuda_folder = e.path().string().find("/examples/cuda/") != std::string::npos;
    if (!(cuda_folder && ext == ".yaml") && !(ext == ".json" && e.path().parent_path().filename() == "kernel_tuner_t1"))
      continue;
    const Spec s = load_spec(e.path());
    if (!cuda_folder && s.kernel.language != "cuda") continue;
    EXPECT_EQ(s.kernel.language, "cuda") << e.path();
    Bindings constants = h200.properties;
    for (const auto& [k, v] : s.sizes.front()) constants[k] = v;
    EXPECT_GT(Space(s.parameters, s.constraints, constants).count(), 0u) << e.path();
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}
