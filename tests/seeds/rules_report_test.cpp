// The rule-config report (search.rules): the expected-evaluations formula
// against brute force, and the outcome of constructed trials.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "tunekit/rules.hpp"

using namespace tunekit;

namespace {

TrialRecord trial(int bm, Status status, double us, bool seed = false, int m = 64) {
  TrialRecord t;
  t.device = "cpu";
  t.size = {{"M", Value(m)}};
  t.config = Config({{"BM", Value(bm)}});
  t.status = status;
  if (status == Status::ok) t.stats.median = Microseconds(us);
  t.origin = seed ? std::string(kOriginRules) : std::string(kOriginSearch);
  return t;
}

// The exact mean position of the first marked item over all n! orders.
double brute_force(std::size_t n, std::size_t b) {
  std::vector<int> items(n, 0);
  std::fill(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(b), 1);
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  double sum = 0;
  std::size_t count = 0;
  do {
    std::size_t pos = 0;
    while (!items[perm[pos]]) ++pos;
    sum += static_cast<double>(pos + 1);
    ++count;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return sum / static_cast<double>(count);
}

}  // namespace

TEST(RuleReport, ExpectedDrawsMatchesBruteForce) {
  for (std::size_t n = 1; n <= 7; ++n)
    for (std::size_t b = 1; b <= n; ++b)
      EXPECT_NEAR(expected_draws_to_first(n, b), brute_force(n, b), 1e-12) << "n=" << n << " b=" << b;
  EXPECT_DOUBLE_EQ(expected_draws_to_first(9, 1), 5.0);
  EXPECT_DOUBLE_EQ(expected_draws_to_first(4, 4), 1.0);
  EXPECT_THROW(expected_draws_to_first(3, 0), std::invalid_argument);
  EXPECT_THROW(expected_draws_to_first(3, 4), std::invalid_argument);
}

TEST(RuleReport, OutcomeOfASeededRun) {
  // Run order: the rule config first (30 us), then the default (40), an
  // invalid config, a compile error, a faster one (20), a tie (30), the best (10).
  std::vector<TrialRecord> t{trial(16, Status::ok, 30, true), trial(32, Status::ok, 40),
                             trial(48, Status::invalid, 0),   trial(64, Status::compile_error, 0),
                             trial(96, Status::ok, 20),       trial(112, Status::ok, 30),
                             trial(128, Status::ok, 10)};
  RuleOutcome o = rule_outcome(t, 0);
  EXPECT_EQ(o.seed, 0u);
  EXPECT_EQ(o.config, t[0].config);
  ASSERT_TRUE(o.time && o.best && o.ratio && o.rank);
  EXPECT_DOUBLE_EQ(o.time->count(), 30);
  EXPECT_DOUBLE_EQ(o.best->count(), 10);
  EXPECT_DOUBLE_EQ(*o.ratio, 3.0);
  EXPECT_EQ(o.ok, 5u);
  EXPECT_EQ(o.evaluations, 6u);  // the invalid one is not an evaluation
  EXPECT_EQ(o.faster, 2u);       // 20 and 10; the tie does not beat it
  EXPECT_EQ(*o.rank, 3u);
  ASSERT_TRUE(o.beaten_by && o.evaluations_to_beat);
  EXPECT_EQ(*o.beaten_by, 4u);            // the trial No.5 ...
  EXPECT_EQ(*o.evaluations_to_beat, 4u);  // ... is the 4th evaluation
  ASSERT_TRUE(o.expected_random_evaluations);
  EXPECT_DOUBLE_EQ(*o.expected_random_evaluations, 7.0 / 3.0);

  // The best rule config is never beaten.
  RuleOutcome best = rule_outcome(t, 6);
  EXPECT_EQ(*best.rank, 1u);
  EXPECT_DOUBLE_EQ(*best.ratio, 1.0);
  EXPECT_FALSE(best.beaten_by);
  EXPECT_FALSE(best.evaluations_to_beat);
  EXPECT_FALSE(best.expected_random_evaluations);
  EXPECT_NE(format_rule_report({best}).find("never"), std::string::npos);
}

TEST(RuleReport, FailedRuleConfigIsBeatenByAnyOkTrial) {
  std::vector<TrialRecord> t{trial(16, Status::crash, 0, true), trial(32, Status::wrong_result, 0),
                             trial(64, Status::ok, 50), trial(128, Status::ok, 60)};
  RuleOutcome o = rule_outcome(t, 0);
  EXPECT_EQ(o.status, Status::crash);
  EXPECT_FALSE(o.time);
  EXPECT_FALSE(o.ratio);
  EXPECT_FALSE(o.rank);
  EXPECT_EQ(o.faster, 2u);
  EXPECT_EQ(*o.beaten_by, 2u);
  EXPECT_EQ(*o.evaluations_to_beat, 3u);
  EXPECT_DOUBLE_EQ(*o.expected_random_evaluations, 5.0 / 3.0);
  EXPECT_NE(format_rule_report({o}).find("crash"), std::string::npos);
}

// A size whose value is the string "4" is shown quoted, apart from the
// number 4, as every config and size printed for a reader is.
TEST(RuleReport, AStringSizeThatReadsAsANumberIsQuoted) {
  std::vector<TrialRecord> t{trial(16, Status::ok, 5, true)};
  RuleOutcome o = rule_outcome(t, 0);
  o.size = {{"M", Value("4")}, {"N", Value(4)}};
  const std::string text = format_rule_report({o});
  EXPECT_NE(text.find("{M: '4', N: 4}"), std::string::npos) << text;
}

TEST(RuleReport, OutcomesPerDeviceAndSizeFromStoredTrials) {
  // Two sizes interleaved as a store returns them; a size without a seed
  // has no outcome.
  std::vector<TrialRecord> t{trial(16, Status::ok, 5, false, 4), trial(16, Status::ok, 30, true, 64),
                             trial(32, Status::ok, 8, true, 4), trial(32, Status::ok, 20, false, 64),
                             trial(64, Status::ok, 1, false, 99)};
  auto outs = rule_outcomes(t);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].size.at("M"), Value(4));  // the order of first appearance
  EXPECT_EQ(outs[0].seed, 1u);                // index within its size
  EXPECT_EQ(*outs[0].beaten_by, 0u);          // 5 us, measured before the seed
  EXPECT_EQ(outs[1].size.at("M"), Value(64));
  EXPECT_EQ(outs[1].seed, 0u);
  EXPECT_EQ(*outs[1].evaluations_to_beat, 2u);
  const std::string text = format_rule_report(outs);
  EXPECT_NE(text.find("{M: 4}"), std::string::npos) << text;
  EXPECT_NE(text.find("1.60x"), std::string::npos) << text;  // 8 / 5
  EXPECT_NE(text.find("1.50x"), std::string::npos) << text;  // 30 / 20
  EXPECT_EQ(text.find("{M: 99}"), std::string::npos) << text;
}
