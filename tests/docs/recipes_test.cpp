// docs/architecture.md's three recipes, compiled and run: a strategy, a
// backend and an output writer, each added through its registry alone and
// then used from the command line by name. The page shows the recipe files
// verbatim (checked below), so the documentation cannot drift from code
// that works.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "tunekit/cli.hpp"
#include "support/temp_dir.hpp"

// The recipes themselves.
#include "../../docs/recipes/toy_backend.cpp"
#include "../../docs/recipes/toy_seeds.cpp"
#include "../../docs/recipes/toy_strategy.cpp"
#include "../../docs/recipes/toy_writer.cpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;
using tunekit::testing::write_file;

namespace {

// The registries are process-wide: each toy is added once per test binary.
void add_toys() {
  if (!backends().find("formula")) add_formula_backend();
  if (!strategies().find("backwards")) add_backwards_strategy();
  if (!writers().find("markdown")) add_markdown_writer();
}

int run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "tunekit");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cli::run(static_cast<int>(argv.size()), argv.data());
}

std::filesystem::path formula_spec(const std::filesystem::path& dir) {
  write_file(dir / "formula.txt", "time = 10 + (X - 5)^2 us\n");
  write_file(dir / "formula.yaml",
             "kernel: {source: formula.txt, language: formula, entry: X}\n"
             "arguments: []\n"
             "parameters: {X: [1, 2, 3, 4, 5, 6, 7, 8, 9], Y: [0, 1]}\n"
             "constraints: [\"Y == 0 or X > 6\"]\n");
  return dir / "formula.yaml";
}

}  // namespace

TEST(Recipes, ABackendAddedThroughTheRegistryTunesItsSpecs) {
  add_toys();
  const auto dir = fresh_dir();
  const auto out = dir / "out";
  ASSERT_EQ(run_cli({"tune", formula_spec(dir).string(), "-o", out.string(), "--no-progress"}), 0);
  auto j = nlohmann::json::parse(read_file(out / "X.json"));
  EXPECT_EQ(j["device"], "formula");
  EXPECT_EQ(j["sizes"][0]["best"]["config"]["X"], 5);
  EXPECT_EQ(j["sizes"][0]["trials"].size(), 12u);  // 9 with Y = 0, 3 with Y = 1: the constraint holds
  // `tunekit plugins` lists it with the built-in ones.
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_cli({"plugins"}), 0);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("formula (formula): a time computed from the config"),
            std::string::npos);
}

TEST(Recipes, AStrategyAddedThroughTheRegistryRunsFromTheCommandLineByName) {
  add_toys();
  const auto dir = fresh_dir();
  const auto out = dir / "out";
  ASSERT_EQ(run_cli({"tune", formula_spec(dir).string(), "--strategy", "backwards", "--option", "skip=1", "--max-evals",
                     "4", "-o", out.string(), "--no-progress"}),
            0);
  auto j = nlohmann::json::parse(read_file(out / "X.json"));
  const auto& trials = j["sizes"][0]["trials"];
  // The baseline (the first valid config) comes first, then the strategy's
  // proposals: the valid configs from the last, one skipped.
  ASSERT_EQ(trials.size(), 4u);
  EXPECT_EQ(trials[0]["config"], nlohmann::json({{"X", 1}, {"Y", 0}}));
  EXPECT_EQ(trials[1]["config"], nlohmann::json({{"X", 9}, {"Y", 0}}));
  EXPECT_EQ(trials[2]["config"], nlohmann::json({{"X", 8}, {"Y", 1}}));
  EXPECT_EQ(trials[3]["config"], nlohmann::json({{"X", 8}, {"Y", 0}}));
  for (const auto& t : trials) EXPECT_EQ(t["status"], "ok");
  // Its options are checked like the built-in ones'.
  EXPECT_EQ(run_cli({"tune", formula_spec(dir).string(), "--strategy", "backwards", "--option", "skp=1", "-o",
                     out.string(), "--no-progress"}),
            1);
}

TEST(Recipes, AWriterAddedThroughTheRegistryWritesWhenAskedFor) {
  add_toys();
  const auto dir = fresh_dir();
  const auto out = dir / "out";
  ASSERT_EQ(run_cli({"tune", formula_spec(dir).string(), "-o", out.string(), "--no-progress"}), 0);
  EXPECT_FALSE(std::filesystem::exists(out / "X.md"));  // not a default writer
  ASSERT_EQ(run_cli({"tune", formula_spec(dir).string(), "--output", "markdown,console", "-o", out.string(),
                     "--no-progress"}),
            0);
  EXPECT_EQ(read_file(out / "X.md"), "| size | best config | time (us) |\n|---|---|---|\n|  | {X: 5, Y: 0} | 10 |\n");
  // A run narrowed by --where writes its own file beside the full run's.
  ASSERT_EQ(run_cli({"tune", formula_spec(dir).string(), "--output", "markdown", "--where", "X > 6", "-o", out.string(),
                     "--no-progress"}),
            0);
  EXPECT_EQ(read_file(out / "X.md"), "| size | best config | time (us) |\n|---|---|---|\n|  | {X: 5, Y: 0} | 10 |\n");
  std::size_t narrowed = 0;
  for (const auto& e : std::filesystem::directory_iterator(out))
    if (e.path().extension() == ".md" && e.path().filename() != "X.md") {
      ++narrowed;
      EXPECT_NE(read_file(e.path()).find("{X: 7"), std::string::npos) << e.path();
    }
  EXPECT_EQ(narrowed, 1u);
}

TEST(Recipes, ASeedProviderAddedThroughTheRegistrySeedsEverySizeUnderItsName) {
  add_toys();
  add_last_config_seeds();
  // Removed at the end: the other recipes' tests expect no seeds.
  struct Unregister {
    ~Unregister() { seed_providers().remove("last"); }
  } unregister;
  const auto dir = fresh_dir();
  const auto out = dir / "out";
  ASSERT_EQ(run_cli({"tune", formula_spec(dir).string(), "--max-evals", "3", "-o", out.string(), "--no-progress"}), 0);
  auto j = nlohmann::json::parse(read_file(out / "X.json"));
  const auto& trials = j["sizes"][0]["trials"];
  ASSERT_EQ(trials.size(), 3u);
  // The space's last config, then the baseline (its first).
  EXPECT_EQ(trials[0]["config"], nlohmann::json({{"X", 9}, {"Y", 1}}));
  EXPECT_EQ(trials[0]["origin"], "last");
  EXPECT_EQ(trials[1]["config"], nlohmann::json({{"X", 1}, {"Y", 0}}));
  EXPECT_EQ(trials[1]["origin"], "default");
  EXPECT_EQ(trials[2]["origin"], "search");
  EXPECT_EQ(j["sizes"][0]["seeded"], nlohmann::json({{"transfer", 0}, {"last", 1}}));
}

// Each ```cpp block of the page that follows a `<!-- recipe: FILE -->` line
// is FILE, verbatim; every recipe file is shown (and the main() that runs
// the command line with them, built by Install.ConsumerFindsPackage).
TEST(Recipes, ThePageShowsTheCompiledFiles) {
  const std::string root = TUNEKIT_SOURCE_DIR;
  const std::string page = read_file(root + "/docs/architecture.md");
  const std::regex block(R"(<!-- recipe: ([^ ]+) -->\s*```cpp\n([\s\S]*?)```)");
  std::set<std::string> shown;
  for (std::sregex_iterator it(page.begin(), page.end(), block), end; it != end; ++it) {
    const std::string file = (*it)[1];
    EXPECT_EQ((*it)[2].str(), read_file(root + "/" + file))
        << file << " differs from its listing in docs/architecture.md";
    shown.insert(file);
  }
  EXPECT_EQ(shown, (std::set<std::string>{"docs/recipes/toy_backend.cpp", "docs/recipes/toy_seeds.cpp",
                                          "docs/recipes/toy_strategy.cpp", "docs/recipes/toy_writer.cpp",
                                          "tests/install/consumer/cli_main.cpp"}));
}

// A code example that a page shows without its `<!-- recipe: FILE -->` line
// is compiled by nothing, and drifts from the API unseen: every block of
// C++ in the plugin pages (a ```cpp block, or any block with an #include or
// a tunekit:: name) must be a recipe above.
TEST(Recipes, EveryCodeExampleOfThePluginPagesIsARecipe) {
  const std::string root = TUNEKIT_SOURCE_DIR;
  const std::regex fence(R"((<!-- recipe: [^ ]+ -->\s*)?```([^\n]*)\n([\s\S]*?)```)");
  const std::regex cxx(R"(#include|tunekit::|int main\()");
  for (const std::string page : {"docs/architecture.md", "docs/plugins.md"}) {
    const std::string text = read_file(root + "/" + page);
    for (std::sregex_iterator it(text.begin(), text.end(), fence), end; it != end; ++it) {
      const std::string language = (*it)[2], body = (*it)[3];
      const bool is_cxx = std::set<std::string>{"cpp", "c++", "cxx", "cc", "c", "h", "hpp"}.count(language) ||
                          std::regex_search(body, cxx);
      if (!is_cxx) continue;
      const auto line = std::count(text.begin(), text.begin() + it->position(3), '\n');
      EXPECT_TRUE((*it)[1].matched) << page << ":" << line
                                    << ": a C++ example that no test compiles: put it in a file that "
                                       "tests/docs/recipes_test.cpp includes and show it after "
                                       "'<!-- recipe: FILE -->'\n"
                                    << body;
    }
  }
}
