// docs/tutorial.md as a new user follows it: the files it shows are the
// files on disk, its tunekit commands run in order from the repository root
// and succeed, and the program of its last step compiles against the header
// `emit` wrote and runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/detail/process.hpp"
#include "support/markdown.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using namespace std::chrono_literals;
using tunekit::testing::code_blocks;
using tunekit::testing::read_file;
using tunekit::testing::tunekit_commands;
using tunekit::testing::words;

namespace {
const std::string kRoot = TUNEKIT_SOURCE_DIR;
}

TEST(Tutorial, ShowsItsFilesVerbatim) {
  const std::string page = read_file(kRoot + "/docs/tutorial.md");
  std::size_t shown = 0;
  for (const char* lang : {"cpp", "yaml"})
    for (const auto& [file, body] : code_blocks(page, lang)) {
      ASSERT_FALSE(file.empty()) << "a ```" << lang << " block of docs/tutorial.md names no file:\n" << body;
      EXPECT_EQ(body, read_file(kRoot + "/" + file)) << file;
      ++shown;
    }
  EXPECT_EQ(shown, 3u);
}

// The console line the page quotes in step 4 is one that `tunekit tune`
// prints: the same shape as the lines of a real run, and the gbytes metric
// written as the tool writes it for the time shown (2 * 4 * n * n bytes at
// n = 1024, to six significant digits), not rounded by hand. (A busy machine
// adds ", noise ... over the 2% target" to a real line.)
TEST(Tutorial, TheConsoleLineItQuotesIsOneTheToolPrints) {
  const std::regex line(
      R"(No\.[0-9]+: ([0-9]+\.[0-9]{3}) us, \{TILE_I: [0-9]+, TILE_J: [0-9]+\}, gbytes ([^ ,]+)(, .*)?)");
  const auto consistent = [&](const std::string& text) {
    std::smatch m;
    if (!std::regex_match(text, m, line)) return false;
    // The tool computes the metric from the unrounded median: its sixth
    // digit may differ by one from the one the rounded time gives.
    const double gbytes = 2.0 * 4 * 1024 * 1024 / (std::stod(m[1].str()) * 1e-6) / 1e9;
    const std::string written = m[2].str();
    return fmt::format("{:.6g}", std::stod(written)) == written &&
           std::abs(std::stod(written) - gbytes) <= 2e-5 * gbytes;
  };
  std::string page = read_file(kRoot + "/docs/tutorial.md");
  std::replace(page.begin(), page.end(), '\n', ' ');
  const auto at = page.find("(`No.");
  ASSERT_NE(at, std::string::npos);
  const std::string quoted = page.substr(at + 2, page.find('`', at + 2) - at - 2);
  EXPECT_TRUE(consistent(quoted)) << quoted;

  const auto out = tunekit::testing::fresh_dir();
  auto r = detail::run_process({tunekit::testing::tunekit_exe().string(), "tune", "docs/tutorial/transpose.yaml",
                                "--out-dir", out.string(), "--no-progress"},
                               5min, kRoot);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t measured = 0;
  std::istringstream lines(r.output);
  for (std::string l; std::getline(lines, l);)
    if (l.rfind("No.", 0) == 0 && l.find(" us, {") != std::string::npos) {
      EXPECT_TRUE(consistent(l)) << l;
      ++measured;
    }
  EXPECT_GE(measured, 1u) << r.output;
}

TEST(Tutorial, EveryCommandRunsAndTheProgramUsesTheEmittedHeader) {
  const std::string page = read_file(kRoot + "/docs/tutorial.md");
  const auto commands = tunekit_commands(page);
  ASSERT_GE(commands.size(), 5u);
  const auto out = tunekit::testing::fresh_dir();
  for (const auto& command : commands) {
    auto argv = words(command);
    argv[0] = tunekit::testing::tunekit_exe().string();
    const std::string verb = argv[1];
    if (verb == "tune" || verb == "select" || verb == "emit") argv.insert(argv.end(), {"--out-dir", out.string()});
    if (verb == "tune") argv.push_back("--no-progress");
    auto r = detail::run_process(argv, 5min, kRoot);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
    if (verb == "space") EXPECT_NE(r.output.find("valid:"), std::string::npos) << r.output;
    // The page says so: at n = 256 the policy's entry is the best of six.
    if (verb == "select" || verb == "emit")
      EXPECT_NE(r.output.find("part of the valid configs was measured ({n: 256}: 6 of "), std::string::npos)
          << r.output;
    if (verb == "tune") {
      EXPECT_NE(r.output.find("best: "), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(", gbytes "), std::string::npos) << "the metric on every line:\n" << r.output;
    }
  }
  ASSERT_TRUE(std::filesystem::exists(out / "transpose_policy.hpp"));
  // The page's compile command, with the test's output folder for tunekit-out.
  const auto exe = out / "use_policy";
  auto c = detail::run_process(
      {"c++", "-std=c++17", "-I", out.string(), kRoot + "/docs/tutorial/use_policy.cpp", "-o", exe.string()}, 2min);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  auto r = detail::run_process({exe.string()}, 1min);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("n = 1024: TILE_I = "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("n = 3000: TILE_I = "), std::string::npos) << r.output;
  EXPECT_NE(page.find("c++ -std=c++17 -I tunekit-out docs/tutorial/use_policy.cpp -o use_policy"), std::string::npos);
}
