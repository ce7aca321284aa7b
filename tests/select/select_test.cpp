#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "tunekit/select.hpp"

using namespace tunekit;

namespace {

TrialRecord trial(int m, int cfg, double us, Status status = Status::ok) {
  TrialRecord t;
  t.size = {{"M", m}};
  t.config = Config({{"C", cfg}});
  t.status = status;
  t.stats.median = Microseconds(us);
  return t;
}

// Three sizes, four configs. Config 0 is the default.
//            M=1    M=2    M=3
//   C=0      10     20     40
//   C=1       5     30     40   (best at M=1)
//   C=2      11     10     23   (best at M=2)
//   C=3      12     11     20   (best at M=3)
std::vector<TrialRecord> table() {
  return {trial(1, 0, 10), trial(1, 1, 5),  trial(1, 2, 11), trial(1, 3, 12), trial(2, 0, 20), trial(2, 1, 30),
          trial(2, 2, 10), trial(2, 3, 11), trial(3, 0, 40), trial(3, 1, 40), trial(3, 2, 23), trial(3, 3, 20)};
}

}  // namespace

TEST(BestPerSize, FastestOkTrialOfEachSize) {
  auto t = table();
  t.push_back(trial(2, 4, 1, Status::wrong_result));  // fast but wrong: never chosen
  auto best = best_per_size(t);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].config.at("C"), Value(1));
  EXPECT_EQ(best[1].config.at("C"), Value(2));
  EXPECT_EQ(best[2].config.at("C"), Value(3));
  EXPECT_EQ(best[2].time.count(), 20);
}

// CCCL's base variant ({TUNE_BASE: 1}, measured at every size) is the
// baseline of the speedups, never a config to choose, however fast.
TEST(BestPerSize, CcclsBaseVariantIsNeverChosen) {
  auto t = table();
  for (int m : {1, 2, 3}) {
    TrialRecord base = trial(m, 0, 0.5);
    base.config = Config({{"TUNE_BASE", 1}});
    base.origin = std::string(kOriginBase);
    t.push_back(base);
  }
  const auto best = best_per_size(t);
  ASSERT_EQ(best.size(), 3u);
  for (const auto& b : best) EXPECT_EQ(b.config.find("TUNE_BASE"), nullptr) << b.config.str();
  const auto choice = best_for_all_sizes(t, Config({{"C", 0}}));
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->config.str(), "{C: 2}");
  // Ok at every size, it is still no config that ran at all of them.
  std::vector<TrialRecord> apart{trial(1, 1, 5), trial(2, 2, 5)};
  for (int m : {1, 2}) apart.push_back(t[t.size() - 4 + static_cast<std::size_t>(m)]);
  EXPECT_NE(why_no_universal(apart, std::nullopt).find("no config ran correctly at all 2 sizes"), std::string::npos)
      << why_no_universal(apart, std::nullopt);
}

// An exact tie goes to the trial stored first, as the tuner names the best
// (it went to the config whose key sorts first: C=10 before C=9).
TEST(BestPerSize, ATieGoesToTheTrialStoredFirst) {
  for (const auto& [first, second] : {std::pair{9, 10}, std::pair{10, 9}}) {
    const auto best = best_per_size({trial(1, first, 0.821), trial(1, second, 0.821), trial(1, 11, 0.9)});
    ASSERT_EQ(best.size(), 1u);
    EXPECT_EQ(best[0].config.at("C"), Value(first)) << first << " stored first";
  }
}

// CCCL's base variant as each size's baseline: the same choice as over the
// default (a geomean's ratio), its speedups over the base; none while some
// size lacks a base that ran correctly.
TEST(BestForAllSizes, OverCcclsBaseVariant) {
  auto t = table();
  for (const auto& [m, us] : std::vector<std::pair<int, double>>{{1, 8.0}, {2, 16.0}, {3, 25.0}}) {
    TrialRecord base = trial(m, 0, us);
    base.config = Config({{"TUNE_BASE", 1}});
    base.origin = std::string(kOriginBase);
    t.push_back(base);
  }
  const auto choice = best_for_all_sizes_over_base(t);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->config.str(), best_for_all_sizes(t, Config({{"C", 0}}))->config.str());
  ASSERT_EQ(choice->per_size.size(), 3u);
  EXPECT_EQ(choice->per_size[0].baseline.count(), 8.0);
  EXPECT_DOUBLE_EQ(choice->per_size[0].speedup, 8.0 / choice->per_size[0].time.count());
  EXPECT_NEAR(choice->geomean_speedup,
              std::cbrt(8.0 / choice->per_size[0].time.count() * 16.0 / choice->per_size[1].time.count() * 25.0 /
                        choice->per_size[2].time.count()),
              1e-12);
  t.back().status = Status::launch_error;
  EXPECT_FALSE(best_for_all_sizes_over_base(t));
  EXPECT_FALSE(best_for_all_sizes_over_base(table()));
}

TEST(BestForAllSizes, GeometricMeanOfSpeedups) {
  auto choice = best_for_all_sizes(table(), Config({{"C", 0}}));
  ASSERT_TRUE(choice);
  // C=1: (2 * 2/3 * 1)^(1/3) = 1.10; C=2: (10/11 * 2 * 40/23)^(1/3) = 1.47; C=3: (10/12 * 20/11 * 2)^(1/3) = 1.45
  EXPECT_EQ(choice->config.at("C"), Value(2));
  EXPECT_NEAR(choice->geomean_speedup, std::cbrt(10.0 / 11 * 2 * 40.0 / 23), 1e-12);
  ASSERT_EQ(choice->per_size.size(), 3u);
  EXPECT_NEAR(choice->per_size[1].speedup, 2.0, 1e-12);
}

TEST(BestForAllSizes, NeedsEveryConfigAtEverySize) {
  auto t = table();
  t[10].status = Status::crash;  // C=2 fails at M=3: C=3 wins
  EXPECT_EQ(best_for_all_sizes(t, Config({{"C", 0}}))->config.at("C"), Value(3));
  t[8].status = Status::timeout;  // the default fails at M=3: no baseline
  EXPECT_FALSE(best_for_all_sizes(t, Config({{"C", 0}})));
}

// A size where no config ran correctly has nothing to offer: the choice is
// made over the others, as per-size and cover drop it, not given up.
TEST(BestForAllSizes, ASizeWhereEveryConfigFailedIsLeftOut) {
  auto t = table();
  for (std::size_t i = 8; i < 12; ++i) t[i].status = Status::crash;  // all of M=3
  const auto choice = best_for_all_sizes(t, Config({{"C", 0}}));
  ASSERT_TRUE(choice);
  ASSERT_EQ(choice->per_size.size(), 2u);
  // C=1: sqrt(10/5 * 20/30) = 1.155; C=2: sqrt(10/11 * 20/10) = 1.348; C=3: sqrt(10/12 * 20/11) = 1.231
  EXPECT_EQ(choice->config.at("C"), Value(2));
  EXPECT_NEAR(choice->geomean_speedup, std::sqrt(10.0 / 11 * 2.0), 1e-12);
}

TEST(CoveringSet, FewestConfigsWithinTolerance) {
  // Within 10%: C=3 covers M=2 (11 <= 11) and M=3; M=1 needs C=1. Two configs.
  Cover c = covering_set(table(), 0.10);
  ASSERT_EQ(c.configs.size(), 2u);
  std::set<std::int64_t> chosen;
  for (const auto& cfg : c.configs) chosen.insert(cfg.at("C").as_int());
  EXPECT_EQ(chosen, (std::set<std::int64_t>{1, 3}));
  ASSERT_EQ(c.config_of_size.size(), 3u);
  EXPECT_EQ(c.configs[c.config_of_size[0]].at("C"), Value(1));
  EXPECT_EQ(c.configs[c.config_of_size[2]].at("C"), Value(3));
  // Exact tolerance: each size needs its own best.
  EXPECT_EQ(covering_set(table(), 0.0).configs.size(), 3u);
  // Wide tolerance: one config covers all (C=2 is within 120% of every best).
  EXPECT_EQ(covering_set(table(), 1.2).configs.size(), 1u);
  // No size is within a negative tolerance of its own best: an error, not an empty cover.
  for (double bad : {-0.05, std::nan(""), double(INFINITY)}) EXPECT_THROW(covering_set(table(), bad), std::invalid_argument);
}

TEST(CoveringSet, ATrialMeasuredOnceCoversNoSizeWhereConfirmedOnesBeatIt) {
  // At M=2, C=2 and C=3 were confirmed; C=0, measured once at 9 us, looks
  // faster than both. best_per_size names C=2, and so must an exact cover:
  // C=0 counted would cover M=2 better than its best.
  auto t = table();
  t[6].confirmed = t[7].confirmed = true;
  t[4].stats.median = Microseconds(9);
  EXPECT_EQ(best_per_size(t)[1].config.at("C"), Value(2));
  Cover exact = covering_set(t, 0.0);
  ASSERT_EQ(exact.config_of_size.size(), 3u);
  EXPECT_EQ(exact.configs[exact.config_of_size[1]].at("C"), Value(2));
  // Where no trial was confirmed, the fastest covers its size.
  t[6].confirmed = t[7].confirmed = false;
  exact = covering_set(t, 0.0);
  EXPECT_EQ(exact.configs[exact.config_of_size[1]].at("C"), Value(0));
}

TEST(CoveringSet, ExactWhereGreedyIsNot) {
  // Sizes 1-6. A covers 1-4, B covers 1, 3, 5, C covers 2, 4, 6. Greedy
  // takes A first and then needs B and C; the optimum is B + C.
  std::vector<TrialRecord> t;
  auto add = [&](int cfg, std::initializer_list<int> sizes) {
    for (int m : sizes) t.push_back(trial(m, cfg, 10));
  };
  for (int m = 1; m <= 6; ++m) t.push_back(trial(m, 9, 100));  // slow everywhere
  add(1, {1, 2, 3, 4});
  add(2, {1, 3, 5});
  add(3, {2, 4, 6});
  Cover c = covering_set(t, 0.0);
  ASSERT_EQ(c.configs.size(), 2u);
  std::set<std::int64_t> chosen;
  for (const auto& cfg : c.configs) chosen.insert(cfg.at("C").as_int());
  EXPECT_EQ(chosen, (std::set<std::int64_t>{2, 3}));
}

// Among covers of the fewest configs, the faster: configs that cover the
// same sizes, and covers of the same count, are told apart by how far each
// size's time is from its best, not by their order in the table.
TEST(CoveringSet, TiesGoToTheFasterConfigs) {
  // Size 1 needs C=1; C=16 and C=8 both cover size 2 at 5%, C=8 is its best
  // (C=16 comes first in the table's string order, "16" < "8").
  std::vector<TrialRecord> t{trial(1, 1, 100), trial(1, 8, 200), trial(1, 16, 200),
                             trial(2, 8, 50),  trial(2, 16, 52), trial(2, 1, 90)};
  Cover c = covering_set(t, 0.05);
  ASSERT_EQ(c.configs.size(), 2u);
  std::set<std::int64_t> chosen;
  for (const auto& cfg : c.configs) chosen.insert(cfg.at("C").as_int());
  EXPECT_EQ(chosen, (std::set<std::int64_t>{1, 8}));

  // Three sizes, two configs needed at 10%: {1, 2} is found first (it
  // covers size 1 first in the table's order), {3, 4} is each size's best
  // but size 3 at 5% over.
  //        M=1   M=2   M=3
  //   C=1  109   109    -
  //   C=2   -     -    100
  //   C=3  100    -     -
  //   C=4   -    100   105
  t = {trial(1, 1, 109), trial(2, 1, 109), trial(3, 2, 100), trial(1, 3, 100), trial(2, 4, 100), trial(3, 4, 105)};
  c = covering_set(t, 0.10);
  ASSERT_EQ(c.configs.size(), 2u);
  chosen.clear();
  for (const auto& cfg : c.configs) chosen.insert(cfg.at("C").as_int());
  EXPECT_EQ(chosen, (std::set<std::int64_t>{3, 4}));
}

TEST(BestPerSize, ByAMaximisedMetric) {
  // work = M * C: a config that does more work per microsecond wins, though
  // it is slower.
  Goal goal{{"rate", true, {}}, {{"rate", Expression::parse("M * C / time_us")}}};
  auto best = best_per_size(table(), goal);
  ASSERT_EQ(best.size(), 3u);
  // M=1: C=3 at 12 us does 3/12 = 0.25, C=1 at 5 us does 0.2.
  EXPECT_EQ(best[0].config.at("C"), Value(3));
  EXPECT_DOUBLE_EQ(best[0].value, 0.25);
  EXPECT_EQ(best[0].time.count(), 12);
}

TEST(BestValidEverywhere, ClosestToEachSizesBestWithoutADefault) {
  // No default to compare with: the geometric mean of best / time.
  auto choice = best_valid_everywhere(table());
  ASSERT_TRUE(choice);
  EXPECT_TRUE(choice->against_best);
  // C=2: (5/11 * 10/10 * 20/23)^(1/3) = 0.733; C=3: (5/12 * 10/11 * 20/20)^(1/3) = 0.724
  EXPECT_EQ(choice->config.at("C"), Value(2));
  EXPECT_NEAR(choice->geomean_speedup, std::cbrt(5.0 / 11 * 20.0 / 23), 1e-12);
  ASSERT_EQ(choice->per_size.size(), 3u);
  EXPECT_EQ(choice->per_size[0].baseline.count(), 5);  // M=1's best
}

TEST(WhyNoUniversal, NamesTheSizesWhereTheDefaultFailed) {
  auto t = table();
  t[8].status = Status::timeout;  // the default at M=3
  t.erase(t.begin() + 4);         // the default at M=2: never ran (invalid there)
  EXPECT_FALSE(best_for_all_sizes(t, Config({{"C", 0}})));
  const std::string why = why_no_universal(t, Config({{"C", 0}}));
  EXPECT_NE(why.find("the default {C: 0} did not run correctly at 2 of 3 sizes"), std::string::npos) << why;
  EXPECT_NE(why.find("{M: 2} (not run there: not valid there, left out by a --where, or not reached within a budget)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("{M: 3} (timeout)"), std::string::npos) << why;
  // The others still ran everywhere: there is something to offer instead.
  EXPECT_TRUE(best_valid_everywhere(t));
  // Nothing ran at every size: said too.
  std::vector<TrialRecord> split{trial(1, 1, 5), trial(2, 2, 5)};
  EXPECT_NE(why_no_universal(split, std::nullopt).find("no config ran correctly at all 2 sizes"), std::string::npos);
  EXPECT_FALSE(best_valid_everywhere(split));
}

namespace {

// A trial cut short by the early stop: a few samples, the fastest `min_us`.
TrialRecord cut(int m, int cfg, double min_us) {
  TrialRecord t = trial(m, cfg, min_us * 1.1, Status::slower);
  t.stats.min = Microseconds(min_us);
  t.stats.count = 3;
  t.slower_than = SlowerThan{3.0, Microseconds(min_us / 4)};
  return t;
}

}  // namespace

// Its few samples are no measurement: nothing chooses it, even when they
// are the fastest times of their size.
TEST(EarlyStop, NoSelectionChoosesATrialCutShort) {
  auto t = table();
  t.push_back(cut(1, 9, 1));
  t.push_back(cut(2, 9, 1));
  t.push_back(cut(3, 9, 1));
  auto best = best_per_size(t);
  ASSERT_EQ(best.size(), 3u);
  for (const auto& b : best) EXPECT_NE(b.config.at("C"), Value(9));
  EXPECT_EQ(best_for_all_sizes(t, Config({{"C", 0}}))->config.at("C"), Value(2));
  for (const auto& c : covering_set(t, 10.0).configs) EXPECT_NE(c.at("C"), Value(9));
}

// One config for all sizes is settled only when no config cut short at a
// size could beat it with its fastest sample there.
TEST(EarlyStop, AllSizesSaysWhenACutConfigMightHaveWon) {
  auto t = table();
  // C=5: best at M=1 and M=2, cut at M=3 (its fastest sample 60 us).
  t.push_back(trial(1, 5, 2));
  t.push_back(trial(2, 5, 4));
  t.push_back(cut(3, 5, 60));
  // C=6: cut at M=1 (fastest sample 100), far behind anyway.
  t.push_back(cut(1, 6, 100));
  t.push_back(trial(2, 6, 30));
  t.push_back(trial(3, 6, 40));
  auto choice = best_for_all_sizes(t, Config({{"C", 0}}));
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->config.at("C"), Value(2));  // 1.47
  // C=5 at best: (10/2 * 20/4 * 40/60)^(1/3) = 2.55 > 1.47; C=6: 0.63.
  ASSERT_EQ(choice->unsettled_by.size(), 1u);
  EXPECT_EQ(choice->unsettled_by[0].at("C"), Value(5));

  t.back() = cut(3, 6, 400);
  t[t.size() - 4] = cut(3, 5, 4000);  // now C=5 at best: (5 * 5 * 0.01)^(1/3) = 0.63
  EXPECT_TRUE(best_for_all_sizes(t, Config({{"C", 0}}))->unsettled_by.empty());
}
