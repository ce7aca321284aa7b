// The README's commands are run as written (from the repository root), so
// the documentation cannot drift from what tunekit does. Each command gets
// its own --out-dir so the tree stays clean.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;

namespace {

// `build/bin/tunekit ...` lines of ```sh blocks, with `\` continuations joined.
std::vector<std::string> tunekit_commands(const std::string& markdown) {
  std::vector<std::string> out;
  std::istringstream in(markdown);
  bool in_sh = false;
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(' ');
    const std::string text = start == std::string::npos ? "" : line.substr(start);
    if (text.rfind("```", 0) == 0) {
      in_sh = !in_sh && text == "```sh";
      continue;
    }
    if (!in_sh) continue;
    if (!pending.empty() || text.rfind("build/bin/tunekit ", 0) == 0) {
      pending += text;
      if (!pending.empty() && pending.back() == '\\') pending.pop_back();
      else {
        out.push_back(pending);
        pending.clear();
      }
    }
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

}  // namespace

TEST(Readme, EveryTunekitCommandRuns) {
  const std::string root = TUNEKIT_SOURCE_DIR;
  const auto commands = tunekit_commands(tunekit::testing::read_file(root + "/README.md"));
  ASSERT_FALSE(commands.empty()) << "no build/bin/tunekit commands found in README.md";
  // In order, sharing one output folder: `select` and `emit` read what the
  // `tune` before them stored.
  const std::string out = tunekit::testing::fresh_dir().string();
  for (const auto& command : commands) {
    auto argv = words(command);
    argv[0] = tunekit::testing::tunekit_exe().string();
    const std::string verb = argv.size() > 1 ? argv[1] : "";
    if (verb == "tune" || verb == "select" || verb == "emit") argv.insert(argv.end(), {"--out-dir", out});
    if (verb == "tune") argv.push_back("--no-progress");
    auto r = detail::run_process(argv, std::chrono::minutes(5), root);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
    if (verb == "tune") EXPECT_NE(r.output.find("best: "), std::string::npos) << command << "\n" << r.output;
    if (verb == "emit") EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "matmul_policy.hpp")) << r.output;
  }
}
