// docs/spec-format.md's first example, with every key, loads as written
// beside a matmul.cpp: the page cannot show a spec tunekit rejects.
#include <gtest/gtest.h>

#include "support/markdown.hpp"
#include "support/temp_dir.hpp"
#include "tunekit/spec.hpp"

using namespace tunekit;
using tunekit::testing::code_blocks;
using tunekit::testing::read_file;
using tunekit::testing::write_file;

TEST(SpecFormat, TheFirstExampleLoadsAsWritten) {
  const std::string root = TUNEKIT_SOURCE_DIR;
  const auto blocks = code_blocks(read_file(root + "/docs/spec-format.md"), "yaml");
  ASSERT_FALSE(blocks.empty());
  const auto dir = tunekit::testing::fresh_dir();
  write_file(dir / "matmul.cpp", read_file(root + "/examples/matmul/matmul.cpp"));
  write_file(dir / "spec.yaml", blocks.front().second);
  Spec s;
  try {
    s = load_spec(dir / "spec.yaml");
  } catch (const std::exception& e) {
    FAIL() << "docs/spec-format.md's first example does not load: " << e.what();
  }
  // Every section made it through.
  EXPECT_EQ(s.name, "matmul");
  EXPECT_EQ(s.arguments.size(), 5u);
  EXPECT_EQ(s.parameters.size(), 4u);
  EXPECT_EQ(s.constraints.size(), 2u);
  EXPECT_EQ(s.configs.size(), 1u);
  EXPECT_TRUE(s.default_config);
  EXPECT_EQ(s.reference.entry, "matmul_naive");
  EXPECT_EQ(s.search.rules.size(), 1u);
  EXPECT_EQ(s.search.seeds.size(), 1u);
  ASSERT_EQ(s.metrics.size(), 1u);
  EXPECT_EQ(s.metrics[0].name, "gflops");
  EXPECT_EQ(s.objective.name, "gflops");
  EXPECT_TRUE(s.objective.maximize);
  EXPECT_EQ(s.kernel.build_timeout, Seconds(300));
  ASSERT_EQ(s.kernel.defines.size(), 1u);
  EXPECT_EQ(s.kernel.defines[0].name, "PANEL_BYTES");
}
