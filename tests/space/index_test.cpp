// The indexable space: at / index_of / random / neighbours / membership, on
// hand-made spaces and on the five published spaces (tests/space/data/spaces).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "tunekit/strategy.hpp"
#include "tunekit/space.hpp"
#include "tunekit/t1.hpp"

using tunekit::Config;
using tunekit::Expression;
using tunekit::Neighbourhood;
using tunekit::Parameter;
using tunekit::SourceLocation;
using tunekit::Space;
using tunekit::Value;

namespace {

namespace fs = std::filesystem;

Parameter param(std::string name, std::vector<Value> values) {
  return Parameter{std::move(name), std::move(values), SourceLocation{}};
}

std::vector<Value> ints(std::int64_t from, std::int64_t to) {
  std::vector<Value> out;
  for (std::int64_t v = from; v <= to; ++v) out.emplace_back(v);
  return out;
}

std::vector<Expression> exprs(std::initializer_list<const char*> texts) {
  std::vector<Expression> out;
  for (const char* t : texts) out.push_back(Expression::parse(t));
  return out;
}

std::vector<std::vector<std::uint32_t>> all(const Space& s) {
  std::vector<std::vector<std::uint32_t>> out;
  s.for_each([&](std::span<const std::uint32_t> ix) {
    out.emplace_back(ix.begin(), ix.end());
    return true;
  });
  return out;
}

// Pearson's chi-square of `draws` uniform samples over n cells; returns the
// statistic divided by its 99.99% bound (approximately, for large n:
// df + 3.72 * sqrt(2 df) + small-df slack), so < 1 passes.
double chi_square_ratio(const std::map<std::uint64_t, std::uint64_t>& hits, std::uint64_t n, std::uint64_t draws) {
  const double expected = static_cast<double>(draws) / static_cast<double>(n);
  double chi2 = 0;
  std::uint64_t seen = 0;
  for (const auto& [cell, h] : hits) {
    chi2 += (static_cast<double>(h) - expected) * (static_cast<double>(h) - expected) / expected;
    ++seen;
  }
  chi2 += static_cast<double>(n - seen) * expected;  // cells never drawn
  const double df = static_cast<double>(n - 1);
  return chi2 / (df + 3.72 * std::sqrt(2 * df) + 10);
}

// Five published spaces with their exact counts (copied from the team's
// shared folder: data a test needs lives in the repository).
fs::path spaces_dir() { return fs::path(std::string(TUNEKIT_SOURCE_DIR) + "/tests/space/data/spaces"); }

}  // namespace

TEST(Index, AtAndIndexOfFollowForEachOrder) {
  // Two linked pairs, interleaved in declaration order: a-c and b-d. The
  // index splits them into independent components, yet at(i) is the i-th
  // config in lexicographic (for_each) order.
  Space s({param("a", ints(0, 3)), param("b", ints(0, 3)), param("c", ints(0, 3)), param("d", ints(0, 3))},
          exprs({"a < c", "b + d != 3"}));
  auto want = all(s);
  ASSERT_EQ(want.size(), 6u * 12u);
  ASSERT_EQ(s.size(), want.size());
  for (std::uint64_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(s.indices_at(i), want[i]);
    EXPECT_EQ(s.index_of(std::span<const std::uint32_t>(want[i])), std::optional<std::uint64_t>(i));
    EXPECT_EQ(s.index_of(s.at(i)), std::optional<std::uint64_t>(i));
  }
  EXPECT_EQ(s.at(0).str(), "{a: 0, b: 0, c: 1, d: 0}");
  EXPECT_THROW(s.at(want.size()), std::out_of_range);
  EXPECT_FALSE(s.index_of(Config({{"a", 3}, {"b", 0}, {"c", 0}, {"d", 0}})).has_value());  // a < c fails
  EXPECT_FALSE(s.index_of(Config({{"a", 9}, {"b", 0}, {"c", 0}, {"d", 0}})).has_value());  // not a value
  EXPECT_FALSE(s.index_of(Config({{"a", 0}})).has_value());                                // incomplete
}

TEST(Index, DegenerateSpaces) {
  Space none({}, {});
  EXPECT_EQ(none.size(), 1u);
  EXPECT_TRUE(none.at(0).empty());
  EXPECT_EQ(none.index_of(Config{}), std::optional<std::uint64_t>(0));
  std::mt19937_64 rng(1);
  EXPECT_TRUE(none.random(rng).empty());

  Space empty({param("a", ints(1, 3))}, exprs({"a > 5"}));
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_THROW(empty.at(0), std::out_of_range);
  EXPECT_THROW(empty.random(rng), std::out_of_range);
  EXPECT_FALSE(empty.index_of(Config({{"a", 1}})).has_value());
  EXPECT_TRUE(empty.neighbours(Config({{"a", 1}})).empty());

  Space no_values({param("a", ints(1, 3)), param("b", {})}, {});
  EXPECT_EQ(no_values.size(), 0u);
  EXPECT_TRUE(no_values.build());

  Space constant_false({param("a", ints(1, 3))}, exprs({"N > 1"}), {{"N", 0}});
  EXPECT_EQ(constant_false.size(), 0u);
}

TEST(Index, SaturatedCounts) {
  std::vector<Parameter> ps;
  for (int i = 0; i < 22; ++i) ps.push_back(param("p" + std::to_string(i), ints(0, 9)));  // 10^22 configs
  Space s(ps, exprs({"p0 + p21 >= 3"}));
  EXPECT_EQ(s.count(), UINT64_MAX);
  EXPECT_THROW(s.size(), std::overflow_error);
  EXPECT_TRUE(s.indexable());
  // Sampling and membership still work: every node count fits.
  std::mt19937_64 rng(3);
  for (int k = 0; k < 20; ++k) EXPECT_TRUE(s.contains(s.random(rng)));
  auto c = s.random(rng);
  EXPECT_TRUE(s.contains_indices(*s.indices_of(c)));
  // make_random falls back to draws without an index range.
  auto strategy = tunekit::make_strategy("random", s, 5, std::nullopt);
  EXPECT_FALSE(strategy->planned().has_value());
  auto batch = strategy->next(5);
  ASSERT_EQ(batch.size(), 5u);
  std::set<std::string> keys;
  for (const auto& x : batch) keys.insert(x.key());
  EXPECT_EQ(keys.size(), 5u);
}

TEST(Index, StringsFloatsAndErrors) {
  Space s({param("mode", {"fast", "safe", ""}), param("f", {0.5, 1.0, 2.5}), param("n", ints(-1, 3))},
          exprs({"mode == 'fast' or n > 1", "n * f >= 1 or 1 / n < 0", "mode + 'x' != 'safex' or f < 1"}));
  auto want = all(s);
  ASSERT_EQ(s.size(), want.size());
  for (std::uint64_t i = 0; i < want.size(); ++i) EXPECT_EQ(s.indices_at(i), want[i]);
  EXPECT_GT(want.size(), 0u);
}

TEST(Index, RandomIsUniform) {
  // Components of different sizes, dead ends and shared subgraphs.
  Space s({param("a", ints(1, 8)), param("b", ints(1, 8)), param("c", ints(0, 4)), param("d", ints(1, 6))},
          exprs({"a * b <= 24", "b % d == 0 or c == 0", "a != c"}));
  const std::uint64_t n = s.size();
  ASSERT_GT(n, 100u);
  std::mt19937_64 rng(12345);
  const std::uint64_t draws = n * 200;
  std::map<std::uint64_t, std::uint64_t> hits;
  for (std::uint64_t k = 0; k < draws; ++k) {
    auto ix = s.random_indices(rng);
    auto i = s.index_of(std::span<const std::uint32_t>(ix));
    ASSERT_TRUE(i.has_value());
    hits[*i]++;
  }
  EXPECT_EQ(hits.size(), n);
  double r = chi_square_ratio(hits, n, draws);
  std::printf("[ uniform  ] %llu configs, %llu draws, chi-square / bound = %.3f\n", static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(draws), r);
  EXPECT_LT(r, 1.0);
}

TEST(Index, NeighboursAgreeWithConstraints) {
  Space s({param("a", ints(1, 6)), param("b", {1, 2, 4, 8}), param("m", {"x", "y"})},
          exprs({"a * b <= 16", "m == 'x' or a % 2 == 0"}));
  // A valid config and an invalid one.
  for (const Config& c : {Config({{"a", 2}, {"b", 4}, {"m", "y"}}), Config({{"a", 5}, {"b", 8}, {"m", "y"}})}) {
    std::vector<std::string> want_h, want_a;
    for (std::size_t p = 0; p < s.parameters().size(); ++p) {
      const auto& values = s.parameters()[p].values;
      auto own = s.indices_of(c)->at(p);
      for (std::uint32_t v = 0; v < values.size(); ++v) {
        if (v == own) continue;
        Config n = c;
        n.set(s.parameters()[p].name, values[v]);
        if (!s.contains(n)) continue;
        want_h.push_back(n.key());
        if (v + 1 == own || own + 1 == v) want_a.push_back(n.key());
      }
    }
    std::vector<std::string> got_h, got_a;
    for (const auto& n : s.neighbours(c, Neighbourhood::hamming)) got_h.push_back(n.key());
    for (const auto& n : s.neighbours(c, Neighbourhood::adjacent)) got_a.push_back(n.key());
    EXPECT_EQ(got_h, want_h) << c.str();
    EXPECT_EQ(got_a, want_a) << c.str();
  }
  EXPECT_TRUE(s.neighbours(Config({{"a", 99}, {"b", 1}, {"m", "x"}})).empty());  // not in the space
}

TEST(Index, FallbackWhenOverBudget) {
  Space s({param("a", ints(0, 9)), param("b", ints(0, 9)), param("c", ints(0, 9))}, exprs({"a + b + c == 12"}));
  Space small = s;
  small.set_index_budget(0);
  EXPECT_FALSE(small.indexable());
  EXPECT_EQ(small.memory_bytes(), 0u);
  EXPECT_EQ(small.count(), s.count());
  EXPECT_EQ(all(small), all(s));
  EXPECT_THROW(small.at(0), std::length_error);
  std::mt19937_64 rng(1);
  EXPECT_THROW(small.random(rng), std::length_error);
  // Membership and neighbours evaluate the constraints instead.
  Config c({{"a", 3}, {"b", 4}, {"c", 5}});
  EXPECT_TRUE(small.contains_indices(*small.indices_of(c)));
  EXPECT_EQ(small.neighbours(c).size(), s.neighbours(c).size());
  EXPECT_TRUE(s.indexable());  // the copy's budget is its own
}

TEST(Index, ConcurrentFirstUse) {
  Space s({param("a", ints(0, 50)), param("b", ints(0, 50)), param("c", ints(0, 50))}, exprs({"a * b % 7 == c % 5"}));
  std::uint64_t counts[4] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { counts[t] = s.count(); });
  for (auto& th : threads) th.join();
  for (auto c : counts) EXPECT_EQ(c, counts[0]);
  EXPECT_EQ(counts[0], all(s).size());
}

TEST(Index, RandomStrategyDoesNotEnumerate) {
  // 10^12 valid configs: enumerating them would not finish.
  std::vector<Parameter> ps;
  for (int i = 0; i < 12; ++i) ps.push_back(param("p" + std::to_string(i), ints(0, 9)));
  Space s(ps, exprs({"p0 <= p11"}));
  auto strategy = tunekit::make_strategy("random", s, 9, std::nullopt);
  ASSERT_TRUE(strategy->planned().has_value());
  EXPECT_EQ(*strategy->planned(), s.size());
  std::set<std::string> keys;
  for (int k = 0; k < 5; ++k)
    for (const auto& c : strategy->next(20)) {
      EXPECT_TRUE(s.contains(c));
      keys.insert(c.key());
    }
  EXPECT_EQ(keys.size(), 100u);
}

// ---------------------------------------------------------------- shared spaces

class SharedIndex : public testing::TestWithParam<const char*> {};

TEST_P(SharedIndex, RoundTripsSamplingAndNeighbours) {
  ASSERT_TRUE(fs::is_directory(spaces_dir())) << spaces_dir() << " is missing from the repository";
  auto def = tunekit::load_space_json(spaces_dir() / GetParam());
  Space space(def.parameters, def.constraints);
  ASSERT_TRUE(space.build());
  const std::uint64_t n = space.size();
  EXPECT_EQ(n, *def.expected_valid);
  EXPECT_EQ(space.cartesian_size(), *def.expected_cartesian);
  const double per = static_cast<double>(space.memory_bytes()) / static_cast<double>(n);
  std::printf("[ index    ] %-13s valid %8llu  index %8zu bytes  %.3f bytes/config\n", def.name.c_str(),
              static_cast<unsigned long long>(n), space.memory_bytes(), per);
  EXPECT_LT(space.memory_bytes(), space.cartesian_size());

  // index -> config -> index, on a spread of indices and the ends.
  std::vector<std::uint64_t> probes{0, 1, n / 3, n / 2, n - 2, n - 1};
  for (std::uint64_t k = 0; k < 500; ++k) probes.push_back((k * 2654435761u) % n);
  std::vector<std::uint32_t> previous;
  for (auto i : probes) {
    Config c = space.at(i);
    ASSERT_TRUE(space.contains(c)) << c.str();
    ASSERT_EQ(space.index_of(c), std::optional<std::uint64_t>(i));
  }
  // at() follows for_each order on a prefix.
  std::uint64_t i = 0;
  bool same = true;
  space.for_each([&](std::span<const std::uint32_t> ix) {
    auto got = space.indices_at(i++);
    same = same && std::equal(ix.begin(), ix.end(), got.begin());
    return i < 3000;
  });
  EXPECT_TRUE(same);

  // Neighbours of random configs agree with the constraints.
  std::mt19937_64 rng(77);
  for (int k = 0; k < 20; ++k) {
    Config c = space.random(rng);
    ASSERT_TRUE(space.contains(c));
    for (auto kind : {Neighbourhood::hamming, Neighbourhood::adjacent}) {
      auto got = space.neighbours(c, kind);
      std::size_t want = 0;
      auto own = *space.indices_of(c);
      for (std::size_t p = 0; p < own.size(); ++p) {
        const auto& values = space.parameters()[p].values;
        for (std::uint32_t v = 0; v < values.size(); ++v) {
          if (v == own[p]) continue;
          if (kind == Neighbourhood::adjacent && v + 1 != own[p] && own[p] + 1 != v) continue;
          Config m = c;
          m.set(space.parameters()[p].name, values[v]);
          want += space.contains(m);
        }
      }
      EXPECT_EQ(got.size(), want) << c.str();
      for (const auto& m : got) EXPECT_TRUE(space.contains(m));
    }
  }
}

TEST_P(SharedIndex, RandomSamplingIsUniform) {
  ASSERT_TRUE(fs::is_directory(spaces_dir())) << spaces_dir() << " is missing from the repository";
  auto def = tunekit::load_space_json(spaces_dir() / GetParam());
  Space space(def.parameters, def.constraints);
  const std::uint64_t n = space.size();
  // Uniform over n configs: chi-square over 64 buckets of consecutive indices.
  const std::uint64_t buckets = 64, draws = 64000;
  std::map<std::uint64_t, std::uint64_t> hits;
  std::vector<std::uint64_t> size(buckets, 0);
  for (std::uint64_t b = 0; b < buckets; ++b)
    size[b] = ((b + 1) * n + buckets - 1) / buckets - (b * n + buckets - 1) / buckets;  // i with i*64/n == b
  std::mt19937_64 rng(2024);
  for (std::uint64_t k = 0; k < draws; ++k) {
    auto ix = space.random_indices(rng);
    auto i = space.index_of(std::span<const std::uint32_t>(ix));
    ASSERT_TRUE(i.has_value());
    hits[*i * buckets / n]++;
  }
  double chi2 = 0;
  for (std::uint64_t b = 0; b < buckets; ++b) {
    const double expected = static_cast<double>(draws) * static_cast<double>(size[b]) / static_cast<double>(n);
    const double h = static_cast<double>(hits[b]);
    chi2 += (h - expected) * (h - expected) / expected;
  }
  // 63 degrees of freedom: the 99.99% point is about 113.
  EXPECT_LT(chi2, 113.0) << def.name;
}

INSTANTIATE_TEST_SUITE_P(Published, SharedIndex,
                         testing::Values("dedispersion.json", "expdist.json", "gemm.json", "hotspot.json",
                                         "microhh.json"),
                         [](const testing::TestParamInfo<const char*>& param_info) {
                           std::string name = param_info.param;
                           return name.substr(0, name.find('.'));
                         });
