// search.seeds in a spec: partial configs completed from the default, and
// located errors.
#include <gtest/gtest.h>

#include "tunekit/spec.hpp"
#include "support/spec_errors.hpp"

using namespace tunekit;

namespace {

// 9 lines: kernel, one argument, four parameters, a default naming two.
const std::string kHead =
    "kernel: {source: k.cpp, entry: k}\n"
    "arguments:\n"
    "  - {name: X, type: f32, size: M*N}\n"
    "parameters:\n"
    "  BM: [64, 128, 256]\n"
    "  BN: [64, 128, 256]\n"
    "  STAGES: [2, 3, 4]\n"
    "  PERSISTENT: [0, 1]\n"
    "default: {BM: 128, BN: 128, STAGES: 4, PERSISTENT: 0}\n";

using SeedSpec = tunekit::testing::SpecErrors;

Config cfg(int bm, int bn, int stages, int persistent) {
  return Config({{"BM", Value(bm)}, {"BN", Value(bn)}, {"STAGES", Value(stages)}, {"PERSISTENT", Value(persistent)}});
}

}  // namespace

TEST_F(SeedSpec, PartialSeedsTakeTheDefaultForTheRest) {
  Spec s = load_spec(write(kHead + "search:\n"
                                   "  seeds:\n"
                                   "    - {BN: 256, STAGES: 3, PERSISTENT: 1}\n"
                                   "    - {BM: 64}\n"
                                   "    - {PERSISTENT: 1, BM: 256, BN: 64, STAGES: 2}\n"));
  ASSERT_EQ(s.search.seeds.size(), 3u);
  EXPECT_EQ(s.search.seeds[0], cfg(128, 256, 3, 1));
  EXPECT_EQ(s.search.seeds[1], cfg(64, 128, 4, 0));
  EXPECT_EQ(s.search.seeds[2], cfg(256, 64, 2, 1));
  // Parameter order, whatever order the seed names them in.
  EXPECT_EQ(s.search.seeds[2].str(), "{BM: 256, BN: 64, STAGES: 2, PERSISTENT: 1}");

  // Without a default, a parameter a seed leaves out takes its first value.
  std::string no_default = kHead.substr(0, kHead.find("default:"));
  Spec t = load_spec(write(no_default + "search: {seeds: [{STAGES: 3}]}\n"));
  ASSERT_EQ(t.search.seeds.size(), 1u);
  EXPECT_EQ(t.search.seeds[0], cfg(64, 64, 3, 0));

  EXPECT_TRUE(load_spec(write(kHead + "search: {strategy: random}\n")).search.seeds.empty());
  EXPECT_TRUE(load_spec(write(kHead + "search: {seeds: }\n")).search.seeds.empty());
}

// A value equal to a listed one of another type (3.0 for 3, 1 for 1.0) is
// the listed value, in a seed, the default and a configs list: the variant
// is built and stored as the space lists it.
TEST_F(SeedSpec, ValuesAreTheListedOnes) {
  const std::string head =
      "kernel: {source: k.cpp, entry: k}\n"
      "arguments:\n"
      "  - {name: X, type: f32, size: 8}\n"
      "parameters:\n"
      "  SCALE: [0.5, 1.0, 3]\n";
  Spec s = load_spec(write(head + "default: {SCALE: 1}\nsearch: {seeds: [{SCALE: 3.0}]}\n"));
  EXPECT_EQ(s.default_config->at("SCALE").repr(), "1.0");
  ASSERT_EQ(s.search.seeds.size(), 1u);
  EXPECT_EQ(s.search.seeds[0].at("SCALE").repr(), "3");
  s = load_spec(write(head + "configs: [{SCALE: 1}, {SCALE: 3.0}]\n"));
  ASSERT_EQ(s.configs.size(), 2u);
  EXPECT_EQ(s.configs[0].at("SCALE").repr(), "1.0");
  EXPECT_EQ(s.configs[1].at("SCALE").repr(), "3");
}

TEST_F(SeedSpec, LocatedErrors) {
  const std::string s = kHead + "search:\n  seeds:\n";  // entries start on line 12
  expect_error(s + "    - {BM: 64, STAGE: 3}\n", 12, 16,
               "unknown parameter 'STAGE' in 'search.seeds[0]'; did you mean 'STAGES'?");
  expect_error(s + "    - {BM: 96}\n", 12, 12, "96 in 'search.seeds[0]' is not one of BM's values (64, 128, 256)");
  // A string is shown as one: '64' is not the 64 listed.
  expect_error(s + "    - {BM: '64'}\n", 12, 13, "'64' in 'search.seeds[0]' is not one of BM's values (64, 128, 256)");
  expect_error(s + "    - [BM, 64]\n", 12, 7, "must be a mapping of parameter names to values");
  expect_error(kHead + "search: {seeds: {BM: 64}}\n", 10, 17, "must be a list of configs to try first");
  // Two seeds that the default completes into the same config.
  expect_error(s + "    - {BM: 64}\n    - {BM: 64, STAGES: 4}\n", 13, 7,
               "seed {BM: 64, BN: 128, STAGES: 4, PERSISTENT: 0} repeats search.seeds[0] (at ");
  expect_error(kHead + "search: {seed: 1, seedss: []}\n", 10, 19, "did you mean 'seeds'?");
}
