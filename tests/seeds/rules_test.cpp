// The matmul tile rules (search.rules): the four rules on the shapes of
// issue #5, constraint repair, several matmuls, and the seeded strategy.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tunekit/rules.hpp"
#include "tunekit/strategy.hpp"

using namespace tunekit;

namespace {

std::vector<Value> vals(std::initializer_list<int> xs) {
  std::vector<Value> out;
  for (int x : xs) out.emplace_back(x);
  return out;
}

Parameter param(std::string name, std::initializer_list<int> xs) { return Parameter{std::move(name), vals(xs), {}}; }

TileAxis axis(std::string parameter, const std::string& length) {
  return TileAxis{std::move(parameter), Expression::parse(length), {}};
}

MatmulRule gemm_rule(const std::string& k_length = "K") {
  MatmulRule r;
  r.m = axis("BM", "M");
  r.n = axis("BN", "N");
  r.k = axis("BK", k_length);
  return r;
}

std::vector<Parameter> gemm_params() {
  return {param("BM", {16, 32, 64, 128}), param("BN", {32, 64, 128, 256}), param("BK", {32, 64, 128})};
}

using TR = std::pair<std::int64_t, TileReason>;

Bindings shape(int m, int k, int n) { return {{"M", Value(m)}, {"K", Value(k)}, {"N", Value(n)}}; }

std::vector<Expression> exprs(std::initializer_list<const char*> texts) {
  std::vector<Expression> out;
  for (const char* t : texts) out.push_back(Expression::parse(t));
  return out;
}

RuleConfig derive(const std::vector<Parameter>& params, const std::vector<Expression>& constraints,
                  const Bindings& constants, const std::vector<MatmulRule>& rules,
                  const std::optional<Config>& defaults = std::nullopt) {
  Space space(params, constraints, constants);
  auto rc = rule_config(space, constants, rules, defaults);
  if (!rc) throw std::runtime_error("no rule config");
  EXPECT_TRUE(space.contains(rc->config)) << rc->config.str();
  return *rc;
}

std::int64_t at(const Config& c, const char* name) { return c.at(name).as_int(); }

const TileChoice& choice(const RuleConfig& rc, std::size_t rule, char ax) {
  for (const auto& t : rc.tiles)
    if (t.rule == rule && t.axis == ax) return t;
  throw std::runtime_error("no tile choice");
}

}  // namespace

// The shapes of issue #5, written (M, K, N), with BM {16..128}, BN {32..256},
// BK {32..128} and no constraints: each tile as the rules ask, with the rule
// that decided it.
TEST(RuleConfig, IssueShapes) {
  struct Case {
    int m, k, n;
    int bm, bn, bk;
    TileReason rm, rn, rk;
  };
  using R = TileReason;
  const std::vector<Case> cases{
      {4, 128, 2048, 16, 256, 128, R::tiny_m, R::large, R::not_split},    // K = 128 taken whole
      {4, 2048, 128, 16, 128, 128, R::tiny_m, R::not_split, R::large},    // N = 128 taken whole
      {1, 4096, 4096, 16, 256, 128, R::tiny_m, R::large, R::large},       // GEMV-like decode step
      {16, 4096, 4096, 16, 256, 128, R::tiny_m, R::large, R::large},      // M = 16 is still tiny
      {64, 4096, 14336, 64, 256, 128, R::not_split, R::large, R::large},  // M = 64 not split
      {4096, 4096, 4096, 128, 256, 128, R::large, R::large, R::large},    // all large
      {1000, 1000, 1000, 128, 256, 128, R::large, R::large, R::large},    // not powers of two
      {3000, 1536, 777, 128, 256, 128, R::large, R::large, R::large},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "M=" << c.m << " K=" << c.k << " N=" << c.n);
    RuleConfig rc = derive(gemm_params(), {}, shape(c.m, c.k, c.n), {gemm_rule()});
    EXPECT_FALSE(rc.repaired());
    EXPECT_EQ(at(rc.config, "BM"), c.bm);
    EXPECT_EQ(at(rc.config, "BN"), c.bn);
    EXPECT_EQ(at(rc.config, "BK"), c.bk);
    ASSERT_EQ(rc.tiles.size(), 3u);
    EXPECT_EQ(choice(rc, 0, 'M').reason, c.rm);
    EXPECT_EQ(choice(rc, 0, 'N').reason, c.rn);
    EXPECT_EQ(choice(rc, 0, 'K').reason, c.rk);
    EXPECT_EQ(choice(rc, 0, 'M').length, c.m);
    EXPECT_EQ(choice(rc, 0, 'K').length, c.k);
  }
}

// Each rule on its own, where the shapes above do not tell them apart.
TEST(RuleConfig, EachRule) {
  auto one = [](std::initializer_list<int> tiles, char ax, int length) {
    MatmulRule r;
    (ax == 'M' ? r.m : ax == 'N' ? r.n : r.k) = axis("T", "L");
    RuleConfig rc = derive({param("T", tiles)}, {}, {{"L", Value(length)}}, {r});
    return std::pair(at(rc.config, "T"), rc.tiles.at(0).reason);
  };
  using R = TileReason;
  // A tile never exceeds its axis: the largest tile <= L.
  EXPECT_EQ(one({32, 64, 128, 256}, 'N', 96), TR(64, R::not_split));
  EXPECT_EQ(one({32, 64, 128, 256}, 'K', 200), TR(128, R::not_split));
  // A small axis is covered exactly by a tile of its own length.
  EXPECT_EQ(one({32, 64, 128, 256}, 'N', 64), TR(64, R::not_split));
  // Every tile exceeds the axis: the smallest.
  EXPECT_EQ(one({32, 64, 128, 256}, 'N', 24), TR(32, R::axis_too_short));
  // A large axis takes the largest tile.
  EXPECT_EQ(one({32, 64, 128, 256}, 'N', 257), TR(256, R::large));
  // The list order does not matter.
  EXPECT_EQ(one({128, 32, 256, 64}, 'N', 100), TR(64, R::not_split));
  // A tiny M takes the smallest tile >= M, even past the axis (one tile for all rows) ...
  EXPECT_EQ(one({1, 2, 4, 8, 16}, 'M', 5), TR(8, R::tiny_m));
  EXPECT_EQ(one({1, 2, 4, 8, 16}, 'M', 4), TR(4, R::tiny_m));
  // ... but the same length on N or K is not tiny: the tile stays within the axis.
  EXPECT_EQ(one({1, 2, 4, 8, 16}, 'N', 5), TR(4, R::not_split));
  // A tiny M with no tile >= M falls back to the other rules: the largest.
  EXPECT_EQ(one({2, 4, 8}, 'M', 12), TR(8, R::large));
  // M = 17 is not tiny.
  EXPECT_EQ(one({16, 32, 64}, 'M', 17), TR(16, R::not_split));
}

// Untiled parameters take the default's value, else their first value.
TEST(RuleConfig, OtherParametersFromTheDefault) {
  auto params = gemm_params();
  params.push_back(param("STAGES", {1, 2, 3, 4}));
  params.push_back(param("UNROLL", {1, 4}));
  Config defaults({{"BM", Value(32)}, {"STAGES", Value(3)}});
  RuleConfig rc = derive(params, {}, shape(64, 256, 512), {gemm_rule()}, defaults);
  EXPECT_EQ(at(rc.config, "BM"), 64);  // a tile ignores the default
  EXPECT_EQ(at(rc.config, "BN"), 256);
  EXPECT_EQ(at(rc.config, "BK"), 128);
  EXPECT_EQ(at(rc.config, "STAGES"), 3);
  EXPECT_EQ(at(rc.config, "UNROLL"), 1);
  // In declaration order, like every config of the space.
  std::vector<std::string> names;
  for (const auto& [n, v] : rc.config) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"BM", "BN", "BK", "STAGES", "UNROLL"}));
}

// Repair: the other parameters change first; then the K tile walks down,
// then N, then M; a tile grows only when nothing smaller fits.
TEST(RuleConfig, ConstraintRepair) {
  auto params = gemm_params();
  params.push_back(param("STAGES", {1, 2, 3, 4}));
  const Config defaults({{"STAGES", Value(3)}});
  const Bindings big = shape(4096, 4096, 4096);  // wants 128 x 256 x 128: 49152 elements per stage

  // STAGES 3 -> its nearest value that fits, 2 (before 4 and 1): the tiles stay.
  RuleConfig a = derive(params, exprs({"(BM * BK + BK * BN) * STAGES <= 98304"}), big, {gemm_rule()}, defaults);
  EXPECT_TRUE(a.repaired());
  EXPECT_EQ(at(a.wanted, "STAGES"), 3);
  EXPECT_EQ(at(a.config, "BM"), 128);
  EXPECT_EQ(at(a.config, "BN"), 256);
  EXPECT_EQ(at(a.config, "BK"), 128);
  EXPECT_EQ(at(a.config, "STAGES"), 2);

  // No STAGES fits at BK 128: BK walks down to 64, with the one STAGES that fits.
  RuleConfig b = derive(params, exprs({"(BM * BK + BK * BN) * STAGES <= 24576"}), big, {gemm_rule()}, defaults);
  EXPECT_EQ(at(b.config, "BM"), 128);
  EXPECT_EQ(at(b.config, "BN"), 256);
  EXPECT_EQ(at(b.config, "BK"), 64);
  EXPECT_EQ(at(b.config, "STAGES"), 1);

  // A constraint on BM * BN: N gives way before M.
  RuleConfig c = derive(gemm_params(), exprs({"BM * BN <= 8192"}), big, {gemm_rule()});
  EXPECT_EQ(at(c.config, "BM"), 128);
  EXPECT_EQ(at(c.config, "BN"), 64);
  EXPECT_EQ(at(c.config, "BK"), 128);

  // Nothing smaller fits: the tile grows, to the nearest larger value.
  RuleConfig d = derive(gemm_params(), exprs({"BK >= 64"}), shape(64, 32, 256), {gemm_rule()});
  EXPECT_EQ(at(d.wanted, "BK"), 32);
  EXPECT_EQ(at(d.config, "BK"), 64);
  EXPECT_EQ(at(d.config, "BM"), 64);
  EXPECT_EQ(at(d.config, "BN"), 256);

  // Deterministic: the same inputs give the same config.
  RuleConfig e = derive(params, exprs({"(BM * BK + BK * BN) * STAGES <= 24576"}), big, {gemm_rule()}, defaults);
  EXPECT_EQ(e.config, b.config);
}

TEST(RuleConfig, EmptySpaceHasNoRuleConfig) {
  Space space(gemm_params(), exprs({"BM > 1000"}), shape(64, 64, 64));
  EXPECT_FALSE(rule_config(space, shape(64, 64, 64), {gemm_rule()}).has_value());
}

// A length that reads a parameter: K // SPLIT_K with SPLIT_K's default, and
// again with the repaired value when the repair changes it.
TEST(RuleConfig, LengthReadsAParameter) {
  auto params = gemm_params();
  params.push_back(param("SPLIT_K", {1, 2, 4}));
  const Config defaults({{"SPLIT_K", Value(4)}});
  RuleConfig a = derive(params, {}, shape(8, 256, 4096), {gemm_rule("K // SPLIT_K")}, defaults);
  EXPECT_EQ(at(a.config, "SPLIT_K"), 4);
  EXPECT_EQ(at(a.config, "BK"), 64);  // 256 / 4 = 64, covered by one tile
  EXPECT_EQ(choice(a, 0, 'K').length, 64);

  // Split-K only for tiny M: at M = 64 the repair sets SPLIT_K = 1, and the
  // K tile is derived again for K = 256.
  RuleConfig b =
      derive(params, exprs({"SPLIT_K == 1 or M <= 16"}), shape(64, 256, 4096), {gemm_rule("K // SPLIT_K")}, defaults);
  EXPECT_EQ(at(b.config, "SPLIT_K"), 1);
  EXPECT_EQ(at(b.config, "BK"), 128);
  EXPECT_EQ(choice(b, 0, 'K').length, 256);
  EXPECT_FALSE(b.repaired());  // the second round's own config (SPLIT_K = 1) is valid
}

// Several matmuls in one kernel (decode attention: QK^T, attn*V, the output
// projection), each with its own tiles; a tile shared by two axes takes the
// smaller of their tiles.
TEST(RuleConfig, SeveralMatmuls) {
  std::vector<Parameter> params{param("BQ", {16, 32, 64}),     param("BKV", {32, 64, 128, 256}),
                                param("BD", {32, 64, 128}),    param("BO_M", {16, 32, 64, 128}),
                                param("BO_N", {64, 128, 256}), param("BO_K", {32, 64, 128})};
  const Bindings sizes{
      {"group", Value(8)}, {"seq", Value(200)}, {"d", Value(128)}, {"hidden", Value(4096)}, {"B", Value(4)}};
  MatmulRule qk, av, out;
  qk.m = axis("BQ", "group");  // 8 query heads per KV head: tiny M
  qk.n = axis("BKV", "seq");
  qk.k = axis("BD", "d");
  av.m = axis("BQ", "group");
  av.n = axis("BD", "d");
  av.k = axis("BKV", "seq");
  out.m = axis("BO_M", "B * group");  // 32 rows: not tiny
  out.n = axis("BO_N", "hidden");
  out.k = axis("BO_K", "group * d");
  RuleConfig rc = derive(params, {}, sizes, {qk, av, out});
  EXPECT_EQ(at(rc.config, "BQ"), 16);
  EXPECT_EQ(at(rc.config, "BKV"), 128);  // 200: the largest tile <= 200
  EXPECT_EQ(at(rc.config, "BD"), 128);
  EXPECT_EQ(at(rc.config, "BO_M"), 32);
  EXPECT_EQ(at(rc.config, "BO_N"), 256);
  EXPECT_EQ(at(rc.config, "BO_K"), 128);
  ASSERT_EQ(rc.tiles.size(), 9u);
  EXPECT_EQ(rc.tiles[0].rule, 0u);  // rule order, then M, N, K
  EXPECT_EQ(rc.tiles[0].axis, 'M');
  EXPECT_EQ(rc.tiles[8].rule, 2u);
  EXPECT_EQ(rc.tiles[8].axis, 'K');

  // A parameter on two axes of different lengths takes the smaller tile.
  MatmulRule first, second;
  first.m = axis("BM", "M");        // M = 4: tiny, 16
  second.m = axis("BM", "M * 16");  // 64: 64
  RuleConfig shared = derive({param("BM", {16, 32, 64, 128})}, {}, {{"M", Value(4)}}, {first, second});
  EXPECT_EQ(at(shared.config, "BM"), 16);
  EXPECT_EQ(choice(shared, 1, 'M').value, Value(64));
}

TEST(RuleConfig, BadLengthsAndParametersAreInputErrors) {
  Space space(gemm_params(), {}, shape(4, 4, 4));
  MatmulRule unknown_size = gemm_rule("KK");
  EXPECT_THROW(rule_config(space, shape(4, 4, 4), {unknown_size}), InputError);
  MatmulRule string_length;
  string_length.m = TileAxis{"BM", Expression::parse("'wide'", {"s.yaml", 7, 12}), {"s.yaml", 7, 5}};
  try {
    rule_config(space, shape(4, 4, 4), {string_length});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 7);
    EXPECT_NE(e.message().find("not a number"), std::string::npos) << e.what();
  }
  MatmulRule no_param;
  no_param.n = TileAxis{"BX", Expression::parse("N"), {"s.yaml", 3, 9}};
  try {
    rule_config(space, shape(4, 4, 4), {no_param});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 9);
  }
}

// The seeded strategy proposes the seed first and never again, over
// exhaustive and random search and over a list with or without it.
TEST(Seeded, SeedFirstAndOnlyOnce) {
  Space space(gemm_params(), exprs({"BM * BN <= 8192"}), shape(64, 64, 64));
  const std::size_t n = space.size();
  ASSERT_GT(n, 5u);
  const Config seed = space.at(n / 2);
  auto drain = [](Strategy& s, std::size_t step) {
    std::vector<Config> all;
    for (auto more = s.next(step); !more.empty(); more = s.next(step)) all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  for (int kind = 0; kind < 2; ++kind) {
    for (std::size_t step : {1u, 3u, 100u}) {
      auto s = make_seeded(make_strategy(kind == 0 ? "exhaustive" : "random", space, 7, std::nullopt), seed, true);
      EXPECT_EQ(s->planned().value_or(0), n);
      auto all = drain(*s, step);
      ASSERT_EQ(all.size(), n) << "step " << step;
      EXPECT_EQ(all.front(), seed);
      std::set<std::string> keys;
      for (const auto& c : all) keys.insert(c.key());
      EXPECT_EQ(keys.size(), n);  // no config twice
    }
  }
  // The rest of the order is the inner strategy's, the seed taken out.
  auto plain = make_strategy("random", space, 7, std::nullopt)->next(n);
  auto seeded = make_seeded(make_strategy("random", space, 7, std::nullopt), seed, true)->next(n);
  std::vector<Config> expected{seed};
  for (const auto& c : plain)
    if (!(c == seed)) expected.push_back(c);
  EXPECT_EQ(seeded, expected);

  // A list without the seed: one more proposal than listed.
  std::vector<Config> list{space.at(0), space.at(1)};
  auto l = make_seeded(make_list(list), seed, false);
  EXPECT_EQ(l->planned().value_or(0), 3u);
  EXPECT_EQ(drain(*l, 2), (std::vector<Config>{seed, list[0], list[1]}));
  // A list with it: the seed moves to the front.
  auto m = make_seeded(make_list({list[0], seed, list[1]}), seed, true);
  EXPECT_EQ(m->planned().value_or(0), 3u);
  EXPECT_EQ(drain(*m, 1), (std::vector<Config>{seed, list[0], list[1]}));
  EXPECT_TRUE(make_seeded(make_list(list), seed, false)->next(0).empty());
}
