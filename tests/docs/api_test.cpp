// docs/api.md's two programs, compiled into this test and run: tuning from
// C++ (load_spec, tune, the report, the writers, the store) and online
// tuning (online.hpp). The page shows them verbatim (checked below).
#include <gtest/gtest.h>

#include "support/markdown.hpp"
#include "support/temp_dir.hpp"

#include "../../docs/examples/api_online.cpp"
#include "../../docs/examples/api_tune.cpp"

using tunekit::testing::code_blocks;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;

namespace {
const std::string kRoot = TUNEKIT_SOURCE_DIR;
}

TEST(ApiPage, ShowsItsProgramsVerbatim) {
  const auto blocks = code_blocks(read_file(kRoot + "/docs/api.md"), "cpp");
  ASSERT_EQ(blocks.size(), 2u);
  for (const auto& [file, body] : blocks) {
    ASSERT_FALSE(file.empty()) << body;
    EXPECT_EQ(body, read_file(kRoot + "/" + file)) << file;
  }
}

TEST(ApiPage, TunesFromCpp) {
  const auto out = fresh_dir();
  testing::internal::CaptureStdout();
  const std::string best = tune_from_cpp(kRoot + "/docs/tutorial/transpose.yaml", out);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(best.rfind("{TILE_I: ", 0), 0u) << printed;
  EXPECT_NE(printed.find(", gbytes "), std::string::npos) << printed;
  EXPECT_NE(printed.find("stored best at {n: 1024}: " + best), std::string::npos) << printed;
  EXPECT_TRUE(std::filesystem::exists(out / "transpose.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "transpose.html"));
}

TEST(ApiPage, TunesOnlineOnFirstSightThenReadsTheFile) {
  const auto file = fresh_dir() / "tiles.json";
  const auto first = online_tiles(file);
  EXPECT_EQ(first.second, "tuned");
  EXPECT_TRUE(first.first == 64 || first.first == 256 || first.first == 1024) << first.first;
  const auto again = online_tiles(file);
  EXPECT_EQ(again.second, "stored");
  EXPECT_EQ(again.first, first.first);
}
