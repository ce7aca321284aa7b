// docs/tutorial.md as a new user follows it: the files it shows are the
// files on disk, its tunekit commands run in order from the repository root
// and succeed, and the program of its last step compiles against the header
// `emit` wrote and runs.
#include <gtest/gtest.h>

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
