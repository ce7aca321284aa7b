// The in-process replay loop on the recorded convolution subspace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tunekit/constraint.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/t1.hpp"

#include "support/cli.hpp"

using namespace tunekit;
using tunekit::testing::contains;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";

struct Fixture {
  Recording recording = load_recording(kData / "conv_small.json.gz");
  SpaceDefinition def = load_t1(kData / "conv_small.T1.json");
  Space space{def.parameters, def.constraints};
  ReplayTable table{recording, space};
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

// Registered for one test, removed after it.
struct Registered {
  explicit Registered(StrategyInfo info) : name(info.name) { strategies().add(std::move(info)); }
  ~Registered() { strategies().remove(name); }
  std::string name;
};

std::string input_error(const ReplaySettings& s) {
  try {
    replay(fixture().table, s);
  } catch (const InputError& e) {
    return std::string(e.where().str()) + ": " + e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST(Replay, ExhaustiveFindsTheOptimum) {
  ReplaySettings s;
  s.strategy = "exhaustive";
  const ReplayRun run = replay(fixture().table, s);
  EXPECT_EQ(run.evaluations, fixture().space.size());
  EXPECT_DOUBLE_EQ(run.fraction_of_optimum, 1.0);
  ASSERT_TRUE(run.best_time);
  EXPECT_EQ(*run.best_time, *fixture().table.optimum_time());
  std::uint64_t nulls = 0;
  for (const auto& t : run.trace) nulls += t ? 0 : 1;
  EXPECT_EQ(nulls, run.failed);
  EXPECT_EQ(run.failed, fixture().recording.results().size() - fixture().recording.ok_count());
  double cost = 0;
  for (const auto& r : fixture().recording.results()) cost += r.cost().count();
  EXPECT_NEAR(run.simulated.count(), cost, 1e-6);
}

TEST(Replay, BudgetSeedAndTrace) {
  ReplaySettings s;
  s.strategy = "random";
  s.max_evaluations = 25;
  s.seed = 3;
  const ReplayRun a = replay(fixture().table, s);
  const ReplayRun b = replay(fixture().table, s);
  EXPECT_EQ(a.evaluations, 25u);
  ASSERT_EQ(a.trace.size(), 25u);
  EXPECT_EQ(a.trace, b.trace);
  s.seed = 4;
  EXPECT_NE(replay(fixture().table, s).trace, a.trace);
  // The best is the fastest of the trace.
  std::optional<Microseconds> fastest;
  for (const auto& t : a.trace)
    if (t && (!fastest || *t < *fastest)) fastest = t;
  EXPECT_EQ(fastest, a.best_time);
  EXPECT_NEAR(a.fraction_of_optimum, fixture().table.optimum_time()->count() / fastest->count(), 1e-12);
}

TEST(Replay, SimulatedTimeBudget) {
  ReplaySettings s;
  s.strategy = "exhaustive";
  s.max_time = Seconds(30);
  const ReplayRun run = replay(fixture().table, s);
  EXPECT_GT(run.evaluations, 0u);
  EXPECT_LT(run.evaluations, fixture().space.size());
  EXPECT_GE(run.simulated.count(), 30.0);
  // The evaluation that crossed the limit was the last one.
  EXPECT_LT(run.simulated.count() - fixture().table.at(run.evaluations - 1)->cost().count(), 30.0);
}

TEST(Replay, AutoUnderATimeBudgetSearches) {
  ReplaySettings s;
  s.max_time = Seconds(30);
  const std::string chosen = replay(fixture().table, s).strategy;
  EXPECT_TRUE(contains(chosen, "surrogate")) << chosen;
  s.max_time.reset();  // nothing limits it: every config, in order
  EXPECT_EQ(replay(fixture().table, s).strategy, "auto: exhaustive");
}

TEST(Replay, FractionBudgetRoundsUp) {
  EXPECT_EQ(evaluations_for_fraction(0.01, 4362), 44u);
  EXPECT_EQ(evaluations_for_fraction(0.05, 11130), 557u);
  EXPECT_EQ(evaluations_for_fraction(0.02, 100), 2u);
  EXPECT_EQ(evaluations_for_fraction(1e-9, 100), 1u);
}

TEST(Replay, BadSettingsSayWhatIsExpected) {
  ReplaySettings s;
  s.max_evaluations = 0;
  std::string msg = input_error(s);
  EXPECT_TRUE(contains(msg, "--max-evals")) << msg;
  s.max_evaluations = fixture().space.size() + 1;
  msg = input_error(s);
  EXPECT_TRUE(contains(msg, "expected 1 to " + std::to_string(fixture().space.size()))) << msg;
  s.max_evaluations = 10;
  s.strategy = "genetc";
  msg = input_error(s);
  EXPECT_TRUE(contains(msg, "did you mean 'genetic'")) << msg;
  EXPECT_TRUE(contains(msg, "surrogate")) << msg;  // the known ones are listed
  s.strategy = "genetic";
  s.options = {parse_option_assignment("popsize=10", {"--option popsize=10"})};
  msg = input_error(s);
  EXPECT_TRUE(contains(msg, "unknown option 'popsize' of strategy 'genetic'")) << msg;
  EXPECT_TRUE(contains(msg, "population")) << msg;  // the known ones are listed
  s.options = {parse_option_assignment("mutaton=0.1", {"--option mutaton=0.1"})};
  EXPECT_TRUE(contains(input_error(s), "did you mean 'mutation'")) << input_error(s);
  s.options = {parse_option_assignment("walkers=2", {"--option walkers=2"})};
  msg = input_error(s);
  EXPECT_TRUE(contains(msg, "'walkers' is an option of strategy 'surrogate'")) << msg;
  // bench/search's STRATEGY:NAME form gets the form that works here.
  s.options = {parse_option_assignment("genetic:population=10", {"--option genetic:population=10"})};
  msg = input_error(s);
  EXPECT_TRUE(contains(msg, "--option genetic:population=10")) << msg;
  EXPECT_TRUE(contains(msg, "write it as population=VALUE")) << msg;
  // ... and in that form a misspelt name still gets its guess, and one of
  // another strategy still says whose it is.
  s.options = {parse_option_assignment("genetic:mutaton=0.1", {"--option genetic:mutaton=0.1"})};
  msg = input_error(s);
  EXPECT_TRUE(contains(msg, "option 'genetic:mutaton': unknown option 'mutaton' of strategy 'genetic'")) << msg;
  EXPECT_TRUE(contains(msg, "did you mean 'mutation'")) << msg;
  s.strategy = "auto";
  s.options = {parse_option_assignment("surrogate:walkers=2", {"--option surrogate:walkers=2"})};
  msg = input_error(s);
  EXPECT_TRUE(contains(msg, "strategy 'auto' takes no options; 'walkers' is an option of strategy 'surrogate'")) << msg;
}

TEST(Replay, AutoSaysWhatItChose) {
  ReplaySettings s;
  s.max_evaluations = 30;
  EXPECT_EQ(replay(fixture().table, s).strategy, "auto: surrogate+genetic+bayes");
  s.max_evaluations.reset();
  EXPECT_EQ(replay(fixture().table, s).strategy, "auto: exhaustive");
}

TEST(Replay, RanksByTheTablesObjective) {
  // The convolution subspace ranked by a spec's metric that is a constant
  // over the time: the same optimum and, the search seeing the inverse, the
  // same configs in the same order as by time.
  const ReplayTable rate(
      fixture().recording, fixture().space,
      {Objective{"gpoints", true, {}}, {{"gpoints", Expression::parse("4096 * 4096 / time_s / 1e9")}}, {}});
  EXPECT_EQ(rate.optimum(), fixture().table.optimum());
  for (std::uint64_t seed : {1, 2}) {
    ReplaySettings s;
    s.max_evaluations = 30;
    s.seed = seed;
    const ReplayRun by_time = replay(fixture().table, s);
    const ReplayRun by_rate = replay(rate, s);
    EXPECT_EQ(by_rate.configs, by_time.configs) << seed;
    EXPECT_EQ(by_rate.best, by_time.best) << seed;
    EXPECT_NEAR(by_rate.fraction_of_optimum, by_time.fraction_of_optimum, 1e-12) << seed;
    // Higher is better: the fraction is the best value over the optimum's.
    ASSERT_TRUE(by_rate.best_value);
    EXPECT_DOUBLE_EQ(by_rate.fraction_of_optimum, *by_rate.best_value / by_rate.optimum_value);
    ASSERT_EQ(by_rate.values.size(), by_rate.trace.size());
    for (std::size_t i = 0; i < by_rate.values.size(); ++i)
      EXPECT_EQ(by_rate.values[i].has_value(), by_rate.trace[i].has_value()) << i;
  }
  // A metric that is not the time's: the exhaustive replay's best is its
  // optimum, and the best found is the config with the best value.
  const ReplayTable blocks(fixture().recording, fixture().space,
                           {Objective{"per_thread", false, {}},
                            {{"per_thread", Expression::parse("time_us * block_size_x * block_size_y")}},
                            {}});
  ReplaySettings all;
  all.strategy = "exhaustive";
  const ReplayRun run = replay(blocks, all);
  EXPECT_DOUBLE_EQ(run.fraction_of_optimum, 1.0);
  ASSERT_TRUE(run.best_value);
  EXPECT_DOUBLE_EQ(*run.best_value, *blocks.optimum_value());
  double lowest = INFINITY;
  for (const auto& v : run.values)
    if (v) lowest = std::min(lowest, *v);
  EXPECT_DOUBLE_EQ(lowest, *run.best_value);
  EXPECT_NE(blocks.optimum(), fixture().table.optimum());
}

TEST(Replay, AnEmptySpaceIsNotABudgetError) {
  // Restrictions that reject every config leave nothing to replay: that is
  // the error, not a budget "of 1 to 0" or a recording without a success.
  const Space none(fixture().def.parameters, {Expression::parse("block_size_x * block_size_y <= 0")});
  ASSERT_EQ(none.size(), 0u);
  const ReplayTable table(fixture().recording, none);
  for (const std::optional<std::uint64_t> budget : {std::optional<std::uint64_t>(1), std::optional<std::uint64_t>()}) {
    ReplaySettings s;
    s.max_evaluations = budget;
    std::string msg = "(no InputError)";
    try {
      replay(table, s);
    } catch (const InputError& e) {
      msg = e.what();
    }
    EXPECT_TRUE(contains(msg, "conv_small.json.gz: the space's restrictions leave no valid config")) << msg;
    EXPECT_FALSE(contains(msg, "--max-evals")) << msg;
  }
}

// A replay takes proposals as the tuner does: in the space's own values
// (1.0 for an integer's 1 is that config), each config once, valid or not,
// a name the space lacks making a config invalid, and a strategy that keeps
// proposing what it has ends the search rather than being asked forever.
TEST(Replay, ProposalsAreTakenAsTheTunerTakesThem) {
  struct Scripted final : Strategy {
    std::vector<Config> script;
    std::size_t at = 0;
    std::vector<Config> next(std::size_t) override {
      return {script[std::min(at++, script.size() - 1)]};  // the last one, again and again
    }
  };
  const Space& space = fixture().space;
  const Config first = space.at(0);
  Config as_float, extra = first, invalid;
  for (const auto& [name, value] : first)
    as_float.set(name, value.is_int() ? Value(static_cast<double>(value.as_int())) : value);
  extra.set("no_such_parameter", Value(1));
  for (const auto& [name, value] : first) invalid.set(name, value);
  invalid.set(first.begin()->first, Value(-12345));  // not among the parameter's values
  Registered scripted({"scripted", "a fixed list", {}, [=](const StrategyContext&) {
                         auto s = std::make_unique<Scripted>();
                         s->script = {as_float, first, extra, invalid, invalid, extra};
                         return s;
                       }});
  ReplaySettings s;
  s.strategy = "scripted";
  s.max_evaluations = 10;
  const ReplayRun run = replay(fixture().table, s);
  ASSERT_EQ(run.evaluations, 3u);  // first (as floats and as itself), extra, invalid
  EXPECT_EQ(run.configs.at(0).str(), first.str());
  EXPECT_EQ(run.failed, 2u);
  EXPECT_FALSE(run.trace.at(1));
  EXPECT_FALSE(run.trace.at(2));
  EXPECT_TRUE(contains(run.ended_early, "proposed only configs it had evaluated, 100 times in a row"))
      << run.ended_early;
}

// A time budget counts each evaluation's recorded compile, verification and
// benchmark times: over a cache that lacks some of a config's, it would count
// that config as free and might never end. Refused before the search, naming
// the file, the first such config of the space and what it lacks, as Kernel
// Tuner's simulation mode refuses a time limit on such a cache. Without a
// time budget, the missing times are harmless; outside the space, too.
TEST(Replay, ATimeBudgetNeedsEveryConfigsRecordedTimes) {
  const fs::path dir = tunekit::testing::fresh_dir();
  tunekit::testing::write_file(dir / "old.json", R"({"kernel_name": "tiny", "device_name": "Test GPU",
"tune_params_keys": ["a", "b"], "tune_params": {"a": [1, 2, 4], "b": [0, 1]}, "cache": {
"1,0": {"a": 1, "b": 0, "time": 3.0, "compile_time": 100.0, "verification_time": 0, "benchmark_time": 20.0},
"1,1": {"a": 1, "b": 1, "time": 2.5, "compile_time": 100.0, "verification_time": 0, "benchmark_time": 20.0},
"2,0": {"a": 2, "b": 0, "time": 2.0, "compile_time": 100.0},
"2,1": {"a": 2, "b": 1, "time": 1.5, "compile_time": 100.0, "verification_time": 0, "benchmark_time": 20.0},
"4,0": {"a": 4, "b": 0, "time": 1.25},
"4,1": {"a": 4, "b": 1, "time": 1.75, "compile_time": 100.0, "verification_time": 0, "benchmark_time": 20.0}}})");
  const Recording recording = load_recording(dir / "old.json");
  EXPECT_EQ(recording.find(Config({{"a", 1}, {"b", 0}}))->missing_times, "");
  EXPECT_EQ(recording.find(Config({{"a", 2}, {"b", 0}}))->missing_times, "verification_time, benchmark_time");
  EXPECT_EQ(recording.find(Config({{"a", 4}, {"b", 0}}))->missing_times,
            "compile_time, verification_time, benchmark_time");
  const Space space({{"a", {1, 2, 4}, {}}, {"b", {0, 1}, {}}}, {});
  const ReplayTable table(recording, space);
  ReplaySettings s;
  s.strategy = "exhaustive";
  s.max_time = Seconds(1);
  std::string msg = "(no InputError)";
  try {
    replay(table, s);
  } catch (const InputError& e) {
    msg = std::string(e.where().str()) + ": " + e.what();
  }
  EXPECT_TRUE(contains(msg, (dir / "old.json").string() +
                                ": {a: 2, b: 0} has no recorded verification_time, benchmark_time: a time budget "
                                "counts each evaluation's recorded compile, verification and benchmark times"))
      << msg;
  EXPECT_TRUE(contains(msg, "--max-evals or --max-fraction")) << msg;
  s.max_time.reset();
  EXPECT_EQ(replay(table, s).evaluations, 6u);
  // The configs that lack times ruled out by the space: nothing to refuse.
  const Space with_b1({{"a", {1, 2, 4}, {}}, {"b", {0, 1}, {}}}, {Expression::parse("b == 1")});
  const ReplayTable b1(recording, with_b1);
  s.max_time = Seconds(1);
  const ReplayRun run = replay(b1, s);
  EXPECT_GT(run.evaluations, 0u);
  EXPECT_GE(run.simulated.count(), 0.12);
}
