// docs/plugins.md is what `tunekit plugins --markdown` prints from the
// registries: adding a strategy, backend or writer without regenerating the
// page fails here (regenerate: build/bin/tunekit plugins --markdown > docs/plugins.md).
#include <gtest/gtest.h>

#include "info_command.hpp"
#include "support/temp_dir.hpp"

TEST(PluginsDoc, MatchesTheRegistries) {
  const std::string page = tunekit::testing::read_file(std::string(TUNEKIT_SOURCE_DIR) + "/docs/plugins.md");
  EXPECT_EQ(page, tunekit::cli::plugins_markdown())
      << "docs/plugins.md is stale: run build/bin/tunekit plugins --markdown > docs/plugins.md";
}

// The generated page is where a plugin's author reads about strategies: a
// guided one that reports planned() and keeps guided()'s default is warned
// of as a fixed order that the budget cut short, so the page says so.
TEST(PluginsDoc, TellsAGuidedStrategyThatReportsItsPlanToOverrideGuided) {
  const std::string page = tunekit::cli::plugins_markdown();
  const std::string strategies = page.substr(0, page.find("## Backends"));
  EXPECT_NE(strategies.find("`planned()`"), std::string::npos) << strategies;
  EXPECT_NE(strategies.find("must override\n`guided()` to return true"), std::string::npos) << strategies;
}
