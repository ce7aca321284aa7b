// search.rules on the command line: the table at the end of `tunekit tune`,
// `tunekit rules-report` from the database, and `--no-rules`; `tunekit
// report` from the same database.
#include <gtest/gtest.h>

#include "core/detail/process.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"

using namespace tunekit;
using tunekit::testing::contains;
using namespace std::chrono_literals;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;
using tunekit::testing::tunekit_exe;
using tunekit::testing::write_file;

namespace {

detail::ProcessResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), tunekit_exe().string());
  return detail::run_process(args, 300s);
}

const std::filesystem::path kData = std::filesystem::path(TUNEKIT_SOURCE_DIR) / "tests/tuner/data";

// The test spec with its first size only, in `dir`.
std::string one_size_spec(const std::filesystem::path& dir) {
  write_file(dir / "tiled_matmul.cpp", read_file(kData / "tiled_matmul.cpp"));
  std::string text = read_file(kData / "tiled_matmul.yaml");
  const auto second = text.find("  - {M: 48");
  EXPECT_NE(second, std::string::npos);
  text.erase(second, text.find('\n', second) + 1 - second);
  write_file(dir / "spec.yaml", text);
  return (dir / "spec.yaml").string();
}

}  // namespace

TEST(CliRules, TuneReportsTheRuleConfigAndNoRulesTurnsItOff) {
  const auto dir = fresh_dir();
  const std::string spec = one_size_spec(dir);
  const std::string out = (dir / "out").string();
  auto r = run_cli({"tune", spec, "--max-evals", "4", "--out-dir", out, "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "No.1: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "{BM: 8, BN: 64, BK: 32}")) << r.output;
  EXPECT_TRUE(contains(r.output, "rules: the rule config (search.rules)")) << r.output;
  EXPECT_TRUE(contains(r.output, "rule config No.1: {BM: 8, BN: 64, BK: 32}")) << r.output;
  // The first line of the trials is the rule config.
  const auto first = r.output.find("No.1: ");
  ASSERT_NE(first, std::string::npos);
  const std::string line = r.output.substr(first, r.output.find('\n', first) - first);
  EXPECT_TRUE(contains(line, "{BM: 8, BN: 64, BK: 32}")) << line;

  auto report = run_cli({"rules-report", spec, "--out-dir", out});
  EXPECT_EQ(report.exit_code, 0) << report.output;

  // `tunekit report`: the page, and the parameter table of the size, from
  // the spec's trials or, without a spec, from everything in the database.
  const auto page = dir / "page.html";
  auto html = run_cli({"report", spec, "--out-dir", out, "--html", page.string()});
  ASSERT_EQ(html.exit_code, 0) << html.output;
  EXPECT_TRUE(contains(html.output, "{K: 32, M: 4, N: 64}: 4 trials")) << html.output;
  EXPECT_TRUE(contains(html.output, "parameter   spread")) << html.output;
  EXPECT_TRUE(contains(read_file(page), "<svg ")) << html.output;
  auto all = run_cli({"report", "--db", (std::filesystem::path(out) / "tunekit.db").string(), "--out-dir", out});
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_TRUE(contains(read_file(std::filesystem::path(out) / "tunekit.html"), "<svg ")) << all.output;
  EXPECT_TRUE(contains(report.output, "{K: 32, M: 4, N: 64}")) << report.output;
  EXPECT_TRUE(contains(report.output, "rule config No.1: {BM: 8, BN: 64, BK: 32}")) << report.output;

  const std::string out2 = (dir / "out2").string();
  auto plain = run_cli({"tune", spec, "--max-evals", "3", "--out-dir", out2, "--no-progress", "--no-rules"});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(contains(plain.output, "rule config")) << plain.output;
  EXPECT_TRUE(contains(plain.output, "No.1: ")) << plain.output;
  const auto p1 = plain.output.find("No.1: ");
  EXPECT_TRUE(contains(plain.output.substr(p1, plain.output.find('\n', p1) - p1), "{BM: 2, BN: 16, BK: 16}"))
      << plain.output;
  auto none = run_cli({"rules-report", spec, "--out-dir", out2});
  EXPECT_EQ(none.exit_code, 3) << none.output;
  EXPECT_TRUE(contains(none.output, "no trial of this spec is a rule config")) << none.output;

  auto help = run_cli({"tune", "--help"});
  EXPECT_TRUE(contains(help.output, "--no-rules")) << help.output;
}
