// docs/search.md's commands (replays of the bundled convolution recording)
// run as written, from the repository root, so the page cannot drift from
// what `tunekit replay` and `tunekit tune --replay` do.
#include <gtest/gtest.h>

#include "core/detail/process.hpp"
#include "support/markdown.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using tunekit::testing::tunekit_commands;
using tunekit::testing::words;

TEST(SearchDoc, EveryTunekitCommandRuns) {
  const std::string root = TUNEKIT_SOURCE_DIR;
  const auto commands = tunekit_commands(tunekit::testing::read_file(root + "/docs/search.md"));
  ASSERT_GE(commands.size(), 5u) << "docs/search.md lost its replay commands";
  const std::string out = tunekit::testing::fresh_dir().string();
  for (const auto& command : commands) {
    auto argv = words(command);
    argv[0] = tunekit::testing::tunekit_exe().string();
    // What the page writes under tunekit-out/ goes to a fresh folder, so
    // the tree stays clean and one command can read what another wrote.
    bool has_out = false;
    for (auto& a : argv) {
      has_out = has_out || a == "-o" || a == "--out-dir";
      if (a.rfind("tunekit-out", 0) == 0) a = out + a.substr(std::string("tunekit-out").size());
    }
    if (argv.size() > 1 && argv[1] == "tune") {
      if (!has_out) argv.insert(argv.end(), {"--out-dir", out});
      argv.push_back("--no-progress");
    }
    auto r = detail::run_process(argv, std::chrono::minutes(5), root);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
    if (command.find("--json") != std::string::npos)
      EXPECT_NE(r.output.find("\"fraction_of_optimum\""), std::string::npos) << command << "\n" << r.output;
    else EXPECT_NE(r.output.find("best"), std::string::npos) << command << "\n" << r.output;
    if (command.find("--minimize") != std::string::npos)
      EXPECT_NE(r.output.find("objective: compile_time (lower is better)"), std::string::npos) << r.output;
  }
}

// What the page says Kernel Tuner does with a recorded time of 0 or below is
// what Kernel Tuner 1.5 does: its cost is the time itself (get_result_cost
// has no `or sys.float_info.max`), so it takes such a config for the best,
// where a replay here counts it as failed. The page once said the opposite.
TEST(SearchDoc, SaysWhatKernelTunerDoesWithATimeOfZero) {
  const std::string page = tunekit::testing::read_file(std::string(TUNEKIT_SOURCE_DIR) + "/docs/search.md");
  // Words wrapped onto the next line read as one space.
  std::string text;
  for (char c : page)
    if (!(c == '\n' || c == ' ') || text.empty() || text.back() != ' ') text += c == '\n' ? ' ' : c;
  EXPECT_EQ(text.find("take a time of 0 as the worst"), std::string::npos);
  EXPECT_NE(text.find("Kernel Tuner 1.5 takes such a time as it is: its cost (`get_result_cost`) is the time"),
            std::string::npos);
  EXPECT_NE(text.find("`get_best_config` names it best"), std::string::npos);
}
