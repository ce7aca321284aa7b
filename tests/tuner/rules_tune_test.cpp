// search.rules end to end on the CPU: the rule config is evaluation No.1 of
// every size, flagged in the store, never evaluated twice, and the report
// (summary, JSON, from the store) agrees with the trials.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"
#include "tuner/data/tiled_matmul.hpp"
#include "tunekit/report.hpp"
#include "tunekit/rules.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/tuner.hpp"

using namespace tunekit;
using tunekit::testing::fresh_dir;
using tunekit::testing::read_file;

namespace {

const std::filesystem::path& kSpec = tunekit::testing::kTiledMatmulSpec;
using tunekit::testing::tiles;

// The outcome recomputed by hand from one size's trials (seed first).
void expect_consistent(const RuleOutcome& o, const std::vector<TrialRecord>& trials) {
  ASSERT_EQ(o.seed, 0u);
  ASSERT_EQ(trials[0].status, Status::ok);
  const double rule = trials[0].stats.median.count();
  double best = rule;
  std::size_t faster = 0;
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    ASSERT_EQ(trials[i].status, Status::ok) << trials[i].config.str() << ": " << trials[i].error;
    const double t = trials[i].stats.median.count();
    best = std::min(best, t);
    if (t < rule) {
      ++faster;
      if (!first) first = i;
    }
  }
  ASSERT_TRUE(o.time && o.best && o.ratio && o.rank);
  EXPECT_DOUBLE_EQ(o.time->count(), rule);
  EXPECT_DOUBLE_EQ(o.best->count(), best);
  EXPECT_DOUBLE_EQ(*o.ratio, rule / best);
  EXPECT_GE(*o.ratio, 1.0);
  EXPECT_EQ(*o.rank, faster + 1);
  EXPECT_EQ(o.evaluations, trials.size());
  EXPECT_EQ(o.faster, faster);
  EXPECT_EQ(o.beaten_by, first);
  if (first) {
    EXPECT_EQ(*o.evaluations_to_beat, *first + 1);
    EXPECT_DOUBLE_EQ(*o.expected_random_evaluations, (trials.size() + 1.0) / (faster + 1.0));
  } else {
    EXPECT_FALSE(o.evaluations_to_beat);
    EXPECT_FALSE(o.expected_random_evaluations);
  }
}

}  // namespace

TEST(TuneRules, RuleConfigFirstThenTheSearchAndAConsistentReport) {
  const auto dir = fresh_dir();
  Spec spec = load_spec(kSpec);
  ASSERT_EQ(spec.search.rules.size(), 1u);
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report = tune(spec, opt);
  EXPECT_EQ(report.seeded_by, std::vector<std::string>{"rules"});
  ASSERT_EQ(report.sizes.size(), 2u);
  // What the rules ask for at each size (see the spec's comments).
  const std::vector<Config> expected{tiles(8, 64, 32), tiles(32, 16, 32)};
  for (std::size_t si = 0; si < 2; ++si) {
    const SizeReport& s = report.sizes[si];
    SCOPED_TRACE("size " + size_key(s.size));
    Space space(spec.parameters, spec.constraints, s.size);
    auto rc = rule_config(space, s.size, spec.search.rules, spec.default_config);
    ASSERT_TRUE(rc);
    EXPECT_EQ(rc->config, expected[si]);
    ASSERT_EQ(s.trials.size(), 6u);  // max_evals
    EXPECT_EQ(s.trials[0].config, expected[si]);
    EXPECT_EQ(s.trials[0].origin, kOriginRules);
    EXPECT_EQ(s.first_of(kOriginRules), 0u);
    EXPECT_EQ(s.trials[1].origin, kOriginBaseline);
    EXPECT_EQ(s.trials[1].config, *spec.default_config);  // the baseline comes second
    std::set<std::string> keys;
    for (std::size_t i = 0; i < s.trials.size(); ++i) {
      EXPECT_TRUE(keys.insert(s.trials[i].config.key()).second) << "evaluated twice: " << s.trials[i].config.str();
      if (i) EXPECT_NE(s.trials[i].origin, kOriginRules);
    }
    expect_consistent(rule_outcome(s.trials, 0), s.trials);
  }

  // From the store alone: the same outcomes.
  Store store(report.db);
  const auto stored = store.trials(report.spec_hash);
  std::size_t flagged = 0;
  for (const auto& t : stored) flagged += t.origin == kOriginRules;
  EXPECT_EQ(flagged, 2u);
  auto outcomes = rule_outcomes(stored);
  ASSERT_EQ(outcomes.size(), 2u);
  for (std::size_t si = 0; si < 2; ++si) {
    RuleOutcome live = rule_outcome(report.sizes[si].trials, 0);
    EXPECT_EQ(outcomes[si].config, live.config);
    EXPECT_EQ(outcomes[si].size, live.size);
    EXPECT_EQ(outcomes[si].rank, live.rank);
    EXPECT_EQ(outcomes[si].ratio, live.ratio);
    EXPECT_EQ(outcomes[si].beaten_by, live.beaten_by);
    EXPECT_EQ(outcomes[si].evaluations_to_beat, live.evaluations_to_beat);
    EXPECT_EQ(outcomes[si].expected_random_evaluations, live.expected_random_evaluations);
  }

  // The summary ends with the table; the JSON carries the same numbers.
  const std::string summary = format_summary(report);
  EXPECT_NE(summary.find("rules: the rule config (search.rules)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("rule config No.1: {BM: 32, BN: 16, BK: 32}"), std::string::npos) << summary;
  auto json = nlohmann::json::parse(format_json(report));
  EXPECT_EQ(json["seeded_by"], nlohmann::json::array({"rules"}));
  for (std::size_t si = 0; si < 2; ++si) {
    const auto& r = json["sizes"][si]["rules"];
    const RuleOutcome o = rule_outcome(report.sizes[si].trials, 0);
    EXPECT_EQ(r["no"], 1);
    EXPECT_EQ(r["config"]["BM"], expected[si].at("BM").as_int());
    EXPECT_DOUBLE_EQ(r["time_us"].get<double>(), o.time->count());
    EXPECT_DOUBLE_EQ(r["ratio_to_best"].get<double>(), *o.ratio);
    EXPECT_EQ(r["rank"], *o.rank);
    EXPECT_EQ(r["evaluations"], 6);
    EXPECT_EQ(json["sizes"][si]["trials"][0]["origin"], "rules");
    EXPECT_EQ(json["sizes"][si]["trials"][1]["origin"], "default");
    if (o.evaluations_to_beat) EXPECT_EQ(r["evaluations_to_beat"], *o.evaluations_to_beat);
    else EXPECT_TRUE(r["evaluations_to_beat"].is_null());
  }

  // Without rules (--no-rules), a rerun resumes: the default comes first, no
  // report, and the store keeps its flags.
  spec.search.rules.clear();
  TuneReport plain = tune(spec, opt);
  EXPECT_TRUE(plain.seeded_by.empty());
  EXPECT_EQ(plain.sizes[0].trials[0].config, *spec.default_config);
  EXPECT_FALSE(plain.sizes[0].first_of(kOriginRules));
  EXPECT_EQ(format_summary(plain).find("rule config"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(format_json(plain))["sizes"][0]["rules"].is_null());
  EXPECT_EQ(rule_outcomes(Store(report.db).trials(report.spec_hash)).size(), 2u);
}

// A list strategy (`configs`) that lacks the rule config: the rule config
// first, then the list, nothing twice.
TEST(TuneRules, ListStrategyIsSeededToo) {
  const auto dir = fresh_dir();
  Spec spec = load_spec(kSpec);
  spec.sizes.resize(1);
  spec.configs = {tiles(2, 16, 16), tiles(16, 32, 16)};
  TuneOptions opt;
  opt.out_dir = dir / "out";
  TuneReport report = tune(spec, opt);
  ASSERT_EQ(report.sizes.size(), 1u);
  const auto& t = report.sizes[0].trials;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].config, tiles(8, 64, 32));
  EXPECT_EQ(t[0].origin, kOriginRules);
  EXPECT_EQ(t[1].config, tiles(2, 16, 16));
  EXPECT_EQ(t[2].config, tiles(16, 32, 16));
}
