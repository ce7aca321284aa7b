// How `surrogate` moves a descent: the parameters in turn, across a
// constraint by changing a second parameter (`repair`), in trades of one
// quantity for another (`trade`), from a find far
// from every descent (`spread`), and at the value of a switch that no
// descent holds (`switch_after`). Probes are switched
// off (explore 0) and the walker's start is set by observed seeds, so the
// moves are the descent's alone.
#include <gtest/gtest.h>

#include <set>

#include "tunekit/strategy.hpp"

using namespace tunekit;

namespace {

Config cfg(std::vector<std::pair<std::string, Value>> entries) { return Config(std::move(entries)); }

Outcome took(double us) {
  Outcome o;
  o.cost = us;
  return o;
}

std::vector<OptionValue> options(std::initializer_list<std::string_view> assignments) {
  std::vector<OptionValue> out;
  for (auto a : assignments) out.push_back(parse_option_assignment(a, {"test"}));
  return out;
}

std::vector<std::string> differing(const Config& a, const Config& b) {
  std::vector<std::string> names;
  for (const auto& [name, value] : a)
    if (!(b.at(name) == value)) names.push_back(name);
  return names;
}

}  // namespace

TEST(Surrogate, ADescentTakesTheParametersInTurn) {
  Space space(
      {{"a", {0, 1, 2, 3, 4, 5, 6, 7}, {}}, {"b", {0, 1, 2, 3, 4, 5, 6, 7}, {}}, {"c", {0, 1, 2, 3, 4, 5, 6, 7}, {}}},
      {});
  auto s = make_strategy("surrogate", space, 7, 200,
                         options({"explore=0", "walkers=1", "initial=2", "patience=100", "sweep=1"}));
  const Config start = cfg({{"a", 3}, {"b", 3}, {"c", 3}});
  s->observe(start, took(1.0));
  s->observe(cfg({{"a", 0}, {"b", 0}, {"c", 0}}), took(5.0));
  // Nothing is faster than the start, so the walker stays there and each
  // move is one parameter away from it: a, b, c, a, b, c, ...
  const std::vector<std::string> names{"a", "b", "c"};
  for (std::size_t i = 0; i < 12; ++i) {
    auto next = s->next(1);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(differing(start, next.front()), std::vector<std::string>{names[i % 3]}) << next.front().str();
    s->observe(next.front(), took(10.0));
  }
}

TEST(Surrogate, ADescentTradesOneQuantityForAnother) {
  // rows = block_y * tile_y, as in the convolution caches; `flag` has a 0,
  // so it is no quantity, and `mode` is no number.
  Space space(
      {{"block_y", {1, 2, 4, 8}, {}}, {"tile_y", {1, 2, 4, 8}, {}}, {"flag", {0, 1, 2}, {}}, {"mode", {"a", "b"}, {}}},
      {});
  const Config start = cfg({{"block_y", 2}, {"tile_y", 2}, {"flag", 1}, {"mode", "a"}});
  // The first n proposals: the walker's neighbours while it has untried ones.
  auto proposals = [&](std::string_view trade, int n) {
    auto s = make_strategy(
        "surrogate", space, 7, 100,
        options({"explore=0", "walkers=1", "initial=2", "patience=100", "sweep=1", "switch_after=0", trade}));
    s->observe(start, took(1.0));
    s->observe(cfg({{"block_y", 8}, {"tile_y", 8}, {"flag", 0}, {"mode", "b"}}), took(5.0));
    std::vector<Config> out;
    for (int i = 0; i < n; ++i) {
      auto next = s->next(1);
      if (next.empty()) break;
      out.push_back(next.front());
      s->observe(next.front(), took(10.0));  // no better: the walker stays
    }
    return out;
  };
  // 9 single moves and 4 trades: to 1 x 4 and 4 x 1, and to 8 x 1 and 1 x 8,
  // the nearest to keeping 4 rows where block_y or tile_y goes to 8.
  std::set<std::pair<std::int64_t, std::int64_t>> trades;
  for (const Config& c : proposals("trade=true", 13)) {
    const auto moved = differing(start, c);
    if (moved.size() == 1) continue;
    ASSERT_EQ(moved, (std::vector<std::string>{"block_y", "tile_y"})) << c.str();
    trades.emplace(c.at("block_y").as_int(), c.at("tile_y").as_int());
  }
  EXPECT_EQ(trades, (std::set<std::pair<std::int64_t, std::int64_t>>{{1, 4}, {4, 1}, {8, 1}, {1, 8}}));
  // Without trades every move is a single one.
  for (const Config& c : proposals("trade=false", 9)) EXPECT_EQ(differing(start, c).size(), 1u) << c.str();
}

TEST(Surrogate, RepairCrossesAConstraintThatASingleMoveCannot) {
  // Padding only where the block is not a multiple of 32, as in the
  // convolution caches: from a padded 48, blocks 32 and 64 need pad 0 too.
  Space space({{"bx", {16, 32, 48, 64}, {}}, {"pad", {0, 1}, {}}, {"t", {1, 2}, {}}},
              {Expression::parse("pad == 0 or bx % 32 != 0")});
  const Config start = cfg({{"bx", 48}, {"pad", 1}, {"t", 2}});
  auto first_move = [&](bool repair) {
    auto s = make_strategy("surrogate", space, 3, 12,
                           options({"explore=0", "walkers=1", "initial=2", "patience=100", "sweep=1",
                                    repair ? "repair=true" : "repair=false"}));
    s->observe(start, took(2.0));
    s->observe(cfg({{"bx", 16}, {"pad", 1}, {"t", 2}}), took(2.5));  // bx's one valid single move, tried
    s->observe(cfg({{"bx", 48}, {"pad", 0}, {"t", 2}}), took(9.0));  // pad's, tried
    auto next = s->next(1);
    EXPECT_EQ(next.size(), 1u);
    return next.empty() ? Config() : next.front();
  };
  // bx first: with repair its moves to 32 and 64 (pad 0) are open.
  const Config repaired = first_move(true);
  EXPECT_EQ(differing(start, repaired), (std::vector<std::string>{"bx", "pad"})) << repaired.str();
  EXPECT_TRUE(space.contains(repaired)) << repaired.str();
  // Without it bx and pad have nothing untried: the turn passes to t.
  EXPECT_EQ(first_move(false), cfg({{"bx", 48}, {"pad", 1}, {"t", 1}}));
}

TEST(Surrogate, AFarFindFasterThanTheSlowestDescentStartsOneOfItsOwn) {
  Space space({{"a", {0, 1, 2, 3, 4, 5, 6, 7}, {}},
               {"b", {0, 1, 2, 3, 4, 5, 6, 7}, {}},
               {"c", {0, 1, 2, 3, 4, 5, 6, 7}, {}},
               {"d", {0, 1, 2, 3, 4, 5, 6, 7}, {}}},
              {});
  const Config fast = cfg({{"a", 3}, {"b", 3}, {"c", 3}, {"d", 3}});
  const Config slow = cfg({{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}});
  const Config far = cfg({{"a", 6}, {"b", 6}, {"c", 6}, {"d", 6}});  // 4 parameters from each
  // The descent that moves after the fastest one is stuck.
  auto second_descent = [&](std::string_view spread) {
    auto s = make_strategy("surrogate", space, 5, 200,
                           options({"explore=0", "walkers=2", "initial=2", "patience=1", "sweep=1", spread}));
    s->observe(fast, took(1.0));
    s->observe(slow, took(5.0));
    auto first = s->next(1);  // the descents start at fast and slow; fast moves
    EXPECT_EQ(first.size(), 1u);
    if (first.empty()) return Config();
    EXPECT_EQ(differing(fast, first.front()).size(), 1u) << first.front().str();
    s->observe(first.front(), took(10.0));  // no better: fast's descent is stuck
    s->observe(far, took(3.0));             // found elsewhere (a seed, a probe)
    auto next = s->next(1);
    EXPECT_EQ(next.size(), 1u);
    return next.empty() ? Config() : next.front();
  };
  // With spread 4 the far find replaces the slow descent and moves next.
  const Config spread = second_descent("spread=4");
  EXPECT_EQ(differing(far, spread).size(), 1u) << spread.str();
  // With spread 0 it is not faster than every descent: the slow one moves.
  const Config off = second_descent("spread=0");
  EXPECT_EQ(differing(slow, off).size(), 1u) << off.str();
  // Nor with spread 5: it is only 4 parameters from each descent.
  const Config near = second_descent("spread=5");
  EXPECT_EQ(differing(slow, near).size(), 1u) << near.str();
}

TEST(Surrogate, ASwitchNoDescentHoldsGetsADescentOfItsOwn) {
  Space space({{"a", {0, 1, 2, 3, 4, 5, 6, 7}, {}},
               {"b", {0, 1, 2, 3, 4, 5, 6, 7}, {}},
               {"c", {0, 1, 2, 3, 4, 5, 6, 7}, {}},
               {"shmem", {0, 1}, {}}},
              {});
  const Config walker = cfg({{"a", 3}, {"b", 3}, {"c", 3}, {"shmem", 1}});
  const Config other = cfg({{"a", 5}, {"b", 5}, {"c", 5}, {"shmem", 0}});  // the only result without shmem
  auto strategy = [&](std::string_view after) {
    auto s = make_strategy("surrogate", space, 9, 200,
                           options({"explore=0", "walkers=1", "initial=2", "patience=100", "sweep=1", after,
                                    "switch_share=1", "switch_patience=100"}));
    s->observe(walker, took(1.0));
    s->observe(cfg({{"a", 0}, {"b", 0}, {"c", 0}, {"shmem", 1}}), took(5.0));
    s->observe(cfg({{"a", 7}, {"b", 7}, {"c", 7}, {"shmem", 1}}), took(6.0));
    s->observe(other, took(8.0));
    return s;
  };
  // After 4 results the one descent holds shmem 1: a descent starts at the
  // fastest config without it and moves a, b and c, never shmem.
  auto s = strategy("switch_after=4");
  for (int i = 0; i < 6; ++i) {
    auto next = s->next(1);
    ASSERT_EQ(next.size(), 1u);
    const auto moved = differing(other, next.front());
    ASSERT_EQ(moved.size(), 1u) << next.front().str();
    EXPECT_NE(moved.front(), "shmem") << next.front().str();
    s->observe(next.front(), took(9.0));  // no better: it stays at `other`
  }
  // Without it the walker moves, from shmem 1.
  auto off = strategy("switch_after=0");
  auto next = off->next(1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(differing(walker, next.front()).size(), 1u) << next.front().str();
}

// In the budget's last `endgame` share there are no probes: with every
// other step a probe (explore 1), the proposals that reach into it are the
// descent's moves, one parameter from its start, while before it (and with
// no endgame) they are draws from the whole space.
TEST(Surrogate, NoProbesInTheEndgame) {
  // 33 neighbours of the start: more than the endgame's 20 moves.
  const std::vector<Value> twelve{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  Space space({{"a", twelve, {}}, {"b", twelve, {}}, {"c", twelve, {}}}, {});
  const Config start = cfg({{"a", 3}, {"b", 3}, {"c", 3}});
  // Per proposal, the number of parameters in which it differs from start.
  auto distances = [&](std::string_view endgame) {
    auto s = make_strategy("surrogate", space, 11, 40,
                           options({"explore=1", "walkers=1", "initial=2", "patience=100", endgame}));
    s->observe(start, took(1.0));
    s->observe(cfg({{"a", 0}, {"b", 0}, {"c", 0}}), took(5.0));
    std::vector<std::size_t> out;
    for (int i = 0; i < 38; ++i) {
      auto next = s->next(1);
      if (next.empty()) break;
      out.push_back(differing(start, next.front()).size());
      s->observe(next.front(), took(10.0));
    }
    return out;
  };
  auto far = [](const std::vector<std::size_t>& d, std::size_t from, std::size_t to) {
    std::size_t n = 0;
    for (std::size_t i = from; i < to; ++i) n += d[i] > 1;
    return n;
  };
  // Results 1 and 2 are the observed ones; the 19th proposal makes 20 of 40.
  const auto half = distances("endgame=0.5");
  ASSERT_EQ(half.size(), 38u);
  EXPECT_GE(far(half, 0, 18), 12u);  // probes: a random config is 1 parameter from start in 34 of 1728
  EXPECT_EQ(far(half, 18, 38), 0u);
  for (std::size_t i = 18; i < 38; ++i) EXPECT_EQ(half[i], 1u) << i;
  const auto none = distances("endgame=0");
  ASSERT_EQ(none.size(), 38u);
  EXPECT_GE(far(none, 18, 38), 12u);
}
