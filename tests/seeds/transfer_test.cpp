// Transfer across sizes: which tuned sizes are nearest, and which of their
// configs seed the next size.
#include <gtest/gtest.h>

#include "seeds/detail/transfer.hpp"

using namespace tunekit;
using namespace tunekit::detail;

namespace {

TunedSize tuned(int m, std::vector<int> fastest_bm) {
  TunedSize t;
  t.size = {{"M", m}, {"N", 1024}};
  for (int bm : fastest_bm) t.fastest.push_back(Config({{"BM", bm}}));
  return t;
}

}  // namespace

TEST(Transfer, DistanceIsInLogSpace) {
  const Bindings a{{"M", 4096}}, b{{"M", 2048}}, c{{"M", 64}};
  EXPECT_LT(size_distance(a, b), size_distance(a, c));
  EXPECT_DOUBLE_EQ(size_distance(a, a), 0.0);
  EXPECT_DOUBLE_EQ(size_distance(a, b), size_distance(b, a));
  // A name only one size has is far, but finite.
  const Bindings d{{"M", 4096}, {"K", 8}};
  EXPECT_GT(size_distance(a, d), size_distance(a, c));
  EXPECT_TRUE(std::isfinite(size_distance(a, d)));
  // Strings compare by equality.
  EXPECT_DOUBLE_EQ(size_distance({{"layout", "nt"}}, {{"layout", "nt"}}), 0.0);
  EXPECT_GT(size_distance({{"layout", "nt"}}, {{"layout", "tn"}}), 0.0);
}

TEST(Transfer, NearestSizesFastestFirstValidOnly) {
  const Space space({{"BM", {16, 32, 64, 128, 256}, {}}}, {Expression::parse("BM <= M")}, {{"M", 128}});
  const std::vector<TunedSize> history{tuned(4096, {256, 128, 64}), tuned(256, {128, 256, 32}), tuned(64, {64, 16, 32}),
                                       tuned(128, {16})};
  // At M = 128 itself: its own entry is left out. Nearest: 64, then 256
  // (log2(|M| + 1): 0.99 and 1.00 away), then 4096.
  const auto seeds = transfer_seeds(space, {{"M", 128}, {"N", 1024}}, history, 4, 2);
  std::vector<std::string> got;
  for (const auto& c : seeds) got.push_back(c.str());
  EXPECT_EQ(got, (std::vector<std::string>{"{BM: 64}", "{BM: 128}", "{BM: 16}", "{BM: 32}"}));
  // 256 is not valid at M = 128: skipped, not replaced by a config of a
  // farther size.
  for (const auto& c : seeds) EXPECT_TRUE(space.contains(c));
  EXPECT_TRUE(transfer_seeds(space, {{"M", 128}}, {}, 3, 2).empty());
  EXPECT_EQ(transfer_seeds(space, {{"M", 128}, {"N", 1024}}, history, 1, 2).size(), 1u);
  // A config another provider seeds already is skipped, and the count is
  // made up from the next fastest.
  const std::vector<Config> taken{Config({{"BM", 64}})};
  got.clear();
  for (const auto& c : transfer_seeds(space, {{"M", 128}, {"N", 1024}}, history, 2, 2, taken)) got.push_back(c.str());
  EXPECT_EQ(got, (std::vector<std::string>{"{BM: 128}", "{BM: 16}"}));
}
