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
