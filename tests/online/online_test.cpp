#include <gtest/gtest.h>

#include "core/detail/process.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/online.hpp"

using namespace tunekit;
using online::Params;

TEST(Online, TunesOnFirstSightThenReadsTheFile) {
  const auto dir = tunekit::testing::fresh_dir();
  int calls = 0;
  auto tune = [&](const online::Size& s) {
    ++calls;
    return std::pair<Params, double>{{{"BLOCK", s.at("N") / 4}}, 1.5};
  };
  {
    online::Tuner t(dir / "p.json");
    auto a = t.get({{"N", 64}}, tune);
    EXPECT_EQ(a.source, online::Choice::Source::tuned);
    EXPECT_EQ(a.params.at("BLOCK"), 16);
    EXPECT_EQ(t.get({{"N", 64}}, tune).source, online::Choice::Source::stored);
    EXPECT_EQ(calls, 1);
  }
  online::Tuner again(dir / "p.json");
  auto b = again.get({{"N", 64}}, tune);
  EXPECT_EQ(b.source, online::Choice::Source::stored);
  EXPECT_EQ(b.params.at("BLOCK"), 16);
  EXPECT_EQ(calls, 1);
}

TEST(Online, LookupOnlyTakesTheNearestTunedSize) {
  const auto dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "p.json", R"({"kernel": "k", "entries": [
    {"size": {"M": 16, "N": 1024}, "config": {"BM": 16}, "time_us": 10},
    {"size": {"M": 4096, "N": 4096}, "config": {"BM": 64}, "time_us": null}]})");
  online::Tuner t(dir / "p.json", online::Mode::lookup_only);
  EXPECT_EQ(t.find({{"M", 16}, {"N", 1024}})->at("BM"), 16);
  auto near = t.get({{"M", 2048}, {"N", 8192}}, nullptr);
  EXPECT_EQ(near.source, online::Choice::Source::nearest);
  EXPECT_EQ(near.params.at("BM"), 64);
  EXPECT_EQ(t.get({{"M", 8}, {"N", 900}}, nullptr).params.at("BM"), 16);
}

TEST(Online, ExampleProgramTunesOnceAcrossRuns) {
  const auto dir = tunekit::testing::fresh_dir();
  const std::string exe = std::string(TUNEKIT_BINARY_DIR) + "/bin/online_example";
  const std::string file = (dir / "tuned.json").string();
  auto first = detail::run_process({exe, file, "100000", "300000"}, std::chrono::seconds(120));
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("N=100000: "), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("(tuned now)"), std::string::npos) << first.output;
  auto second = detail::run_process({exe, file, "300000", "100000"}, std::chrono::seconds(120));
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("tuned now"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("(from the file)"), std::string::npos) << second.output;
}
