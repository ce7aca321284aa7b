// What every registered strategy promises, checked on the same recorded
// space (the convolution subspace of tests/replay/data): the same seed gives
// the same proposals, a budget is respected, no config is proposed twice,
// only valid configs are proposed, configs observed without being proposed
// (seeds) are not proposed again, batches are honoured, and without a
// budget every valid config is proposed once.
#include <gtest/gtest.h>

#include <set>

#include "tunekit/recording.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/t1.hpp"

using namespace tunekit;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(TUNEKIT_SOURCE_DIR) / "tests" / "replay" / "data";

struct Recorded {
  Recording recording = load_recording(kData / "conv_small.json.gz");
  SpaceDefinition def = load_t1(kData / "conv_small.T1.json");
  Space space{def.parameters, def.constraints};
  ReplayTable table{recording, space};
  // A smaller space on the same recording, for runs to exhaustion.
  Space small{def.parameters, with(def.constraints, "block_size_x <= 48 and tile_size_y <= 2")};
  ReplayTable small_table{recording, small};

  static std::vector<Expression> with(std::vector<Expression> c, const std::string& extra) {
    c.push_back(Expression::parse(extra));
    return c;
  }
};

const Recorded& recorded() {
  static const Recorded r;
  return r;
}

Outcome outcome_of(const ReplayTable& table, const Config& c) {
  Outcome o;
  const RecordedResult* r = table.find(c);
  if (!r) {
    o.status = Status::invalid;
    return o;
  }
  o.status = r->status;
  if (r->time) o.cost = r->time->count();
  return o;
}

struct Drive {
  std::vector<std::string> proposed;  // keys, in order
  std::vector<std::string> problems;
};

// Runs `name` on `table` until it stops or `limit` configs were proposed,
// asking for `batch` at a time, after observing `seeds` it did not propose.
Drive drive(const std::string& name, const ReplayTable& table, std::uint64_t seed, std::optional<std::uint64_t> budget,
            std::size_t batch, std::size_t limit, const std::vector<std::uint64_t>& seeds = {}) {
  const Space& space = table.space();
  auto s = make_strategy(name, space, seed, budget);
  Drive d;
  std::set<std::string> seen;
  for (std::uint64_t r : seeds) {
    const Config c = space.at(r);
    seen.insert(c.key());
    s->observe(c, outcome_of(table, c));
  }
  while (d.proposed.size() < limit) {
    // Never more than the limit: a strategy may hand out short batches (a
    // descent's new start waits for its result), so the last one is cut.
    const auto configs = s->next(std::min(batch, limit - d.proposed.size()));
    if (configs.empty()) break;
    if (configs.size() > batch)
      d.problems.push_back("returned " + std::to_string(configs.size()) + " for a batch of " + std::to_string(batch));
    for (const auto& c : configs) {
      if (!space.contains(c)) d.problems.push_back("invalid config " + c.str());
      if (!seen.insert(c.key()).second) d.problems.push_back("proposed twice (or a seed) " + c.str());
      d.proposed.push_back(c.key());
    }
    for (const auto& c : configs) s->observe(c, outcome_of(table, c));
  }
  return d;
}

class Conformance : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Conformance, SameSeedSameProposals) {
  const auto& r = recorded();
  const auto a = drive(GetParam(), r.table, 5, 60, 1, 60);
  const auto b = drive(GetParam(), r.table, 5, 60, 1, 60);
  EXPECT_EQ(a.proposed, b.proposed);
  EXPECT_TRUE(a.problems.empty()) << a.problems.front();
}

TEST_P(Conformance, BudgetRespectedValidAndNoRepeats) {
  const auto& r = recorded();
  for (std::uint64_t budget : {1u, 13u, 126u}) {
    ReplaySettings s;
    s.strategy = GetParam();
    s.max_evaluations = budget;
    s.seed = 11;
    const ReplayRun run = replay(r.table, s);
    EXPECT_EQ(run.evaluations, budget) << GetParam() << " stopped early";
    // The loop's own duplicate check skips repeats silently; drive() counts them.
    const auto d = drive(GetParam(), r.table, 11, budget, 1, budget);
    EXPECT_EQ(d.proposed.size(), budget);
    for (const auto& p : d.problems) ADD_FAILURE() << GetParam() << ": " << p;
  }
}

TEST_P(Conformance, SeedsAreObservedNotProposed) {
  const auto& r = recorded();
  // Three configs measured ahead of the strategy, as the tuner's seeds are.
  const auto d = drive(GetParam(), r.table, 2, 80, 4, 80, {0, 600, r.space.size() - 1});
  for (const auto& p : d.problems) ADD_FAILURE() << GetParam() << ": " << p;
  EXPECT_EQ(d.proposed.size(), 80u);
}

TEST_P(Conformance, WithoutABudgetEveryConfigOnce) {
  const auto& r = recorded();
  const std::uint64_t n = r.small.size();
  ASSERT_GT(n, 50u);
  const auto d = drive(GetParam(), r.small_table, 9, std::nullopt, 3, 10 * n);
  for (const auto& p : d.problems) ADD_FAILURE() << GetParam() << ": " << p;
  EXPECT_EQ(d.proposed.size(), n) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, Conformance, ::testing::ValuesIn(strategies().names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
