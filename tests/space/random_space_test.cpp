// Property test: on randomly generated spaces, count(), for_each(),
// enumerate() and contains() agree with a brute-force loop over the
// Cartesian product that calls Expression::test on every full config; so do
// the index's members (at, index_of, contains_indices, neighbours, random),
// and the bounded-memory fallback used when the index is over budget.
//
// The generator covers ints (negative too), floats, strings, every operator
// of the language (+ - * / // % ** & | ^ << >> unary - + ~, comparisons and
// chains, in / not in, and / or / not, x if c else y), the built-in
// functions, division by zero and other evaluation errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tunekit/space.hpp"

using tunekit::Bindings;
using tunekit::Config;
using tunekit::Expression;
using tunekit::Parameter;
using tunekit::SourceLocation;
using tunekit::Space;
using tunekit::Value;

namespace {

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }

  std::vector<Value> values() {
    static const std::vector<Value> ints{-3, -2, -1, 0, 1, 2, 3, 4, 5, 8, 16};
    static const std::vector<Value> floats{0.5, -1.5, 2.5, 0.25};
    static const std::vector<Value> strings{"a", "b", ""};
    std::vector<Value> pool = ints;
    int kind = uniform(0, 9);
    if (kind >= 7) pool.insert(pool.end(), floats.begin(), floats.end());
    if (kind == 9) pool = strings, pool.push_back(Value(1));
    std::shuffle(pool.begin(), pool.end(), rng_);
    pool.resize(
        static_cast<std::size_t>(uniform(chance(0.1) ? 1 : 2, std::min<int>(4, static_cast<int>(pool.size())))));
    return pool;
  }

  std::string leaf(const std::vector<std::string>& names) {
    static const std::vector<std::string> literals{"0", "1", "2", "3", "-1", "-2", "0.5", "2.5", "1.5e1", "True", "N"};
    static const std::vector<std::string> strings{"'a'", "''"};
    if (chance(0.65)) return pick(names);
    return chance(0.03) ? pick(strings) : pick(literals);
  }

  std::string paren(const std::string& s) { return chance(0.5) ? "(" + s + ")" : s; }

  std::string arith(int depth, const std::vector<std::string>& names) {
    static const std::vector<std::string> ops{"+", "-", "*", "/", "//", "%", "**"};
    static const std::vector<std::string> bit_ops{"&", "|", "^", "<<", ">>"};
    if (depth <= 0 || chance(0.4)) return leaf(names);
    int k = uniform(0, 13);
    if (k < 6) return "(" + arith(depth - 1, names) + " " + pick(ops) + " " + arith(depth - 1, names) + ")";
    if (k == 6) return "-" + paren(arith(depth - 1, names));
    if (k == 7) {
      static const std::vector<std::string> fns{"min", "max"};
      if (chance(0.3)) return pick(fns) + "([" + arith(depth - 1, names) + ", " + arith(depth - 1, names) + "])";
      return pick(fns) + "(" + arith(depth - 1, names) + ", " + arith(depth - 1, names) + ")";
    }
    if (k == 8) return "abs(" + arith(depth - 1, names) + ")";
    if (k == 9) return "ceil_div(" + arith(depth - 1, names) + ", " + arith(depth - 1, names) + ")";
    if (k == 10) return "(" + arith(depth - 1, names) + " " + pick(bit_ops) + " " + arith(depth - 1, names) + ")";
    if (k == 11) {
      static const std::vector<std::string> unary{"~", "+", "not "};
      return "(" + pick(unary) + paren(arith(depth - 1, names)) + ")";
    }
    if (k == 12) {
      static const std::vector<std::string> fns{"int", "float", "round"};
      return pick(fns) + "(" + arith(depth - 1, names) + ")";
    }
    return "(" + arith(depth - 1, names) + " if " + comparison(0, names) + " else " + arith(depth - 1, names) + ")";
  }

  std::string comparison(int depth, const std::vector<std::string>& names) {
    static const std::vector<std::string> cmps{"==", "!=", "<", "<=", ">", ">="};
    static const std::vector<std::string> strings{"'a'", "'b'", "''"};
    if (chance(0.1)) return pick(names) + (chance(0.5) ? " == " : " != ") + pick(strings);
    if (chance(0.15)) {
      std::string s = arith(depth, names) + (chance(0.5) ? " in [" : " not in [");
      int n = chance(0.1) ? 0 : uniform(1, 3);
      for (int i = 0; i < n; ++i) s += (i ? ", " : "") + leaf(names);
      return s + "]";
    }
    std::string s = arith(depth, names);
    int n = chance(0.6) ? 1 : uniform(2, 3);  // chains of up to three comparisons
    for (int i = 0; i < n; ++i) s += " " + pick(cmps) + " " + arith(depth, names);
    return s;
  }

  std::string condition(int depth, const std::vector<std::string>& names) {
    int k = uniform(0, 9);
    if (depth <= 0 || k < 4) return comparison(1, names);
    if (k < 5) return paren(condition(depth - 1, names)) + " and " + paren(condition(depth - 1, names));
    if (k < 8) return paren(condition(depth - 1, names)) + " or " + paren(condition(depth - 1, names));
    if (k == 8) return "not " + paren(condition(depth - 1, names));
    return arith(2, names);  // truthiness of an arbitrary value
  }

 private:
  std::mt19937_64 rng_;
};

struct RandomSpace {
  std::vector<Parameter> params;
  std::vector<Expression> constraints;
  Bindings constants;
  std::string describe() const {
    std::ostringstream out;
    for (const auto& p : params) {
      out << p.name << " in [";
      for (std::size_t i = 0; i < p.values.size(); ++i) out << (i ? ", " : "") << p.values[i].repr();
      out << "]\n";
    }
    for (const auto& c : constraints) out << "constraint: " << c.text() << "\n";
    for (const auto& [k, v] : constants) out << "constant " << k << " = " << v.repr() << "\n";
    return out.str();
  }
};

RandomSpace make_space(Generator& g, int min_params, int max_params, std::uint64_t max_cartesian, int max_constraints,
                       int max_arity = 3) {
  RandomSpace s;
  while (true) {
    s.params.clear();
    int n = g.uniform(min_params, max_params);
    std::uint64_t cartesian = 1;
    for (int i = 0; i < n; ++i) {
      Parameter p{"p" + std::to_string(i), g.values(), SourceLocation{}};
      cartesian *= p.values.size();
      s.params.push_back(std::move(p));
    }
    if (cartesian <= max_cartesian) break;
  }
  s.constants = {{"N", g.uniform(0, 5)}};
  int constraints = g.chance(0.1) ? 0 : g.uniform(1, max_constraints);
  for (int c = 0; c < constraints; ++c) {
    // Each constraint reads a few parameters, so that spaces split into
    // independent groups and frontiers of different widths.
    std::vector<std::string> names;
    int k = g.uniform(1, std::min<int>(max_arity, static_cast<int>(s.params.size())));
    for (int i = 0; i < k; ++i) names.push_back(g.pick(s.params).name);
    s.constraints.push_back(Expression::parse(g.condition(2, names)));
  }
  return s;
}

// Valid value-index tuples in lexicographic order, by brute force.
std::vector<std::vector<std::uint32_t>> brute_force(const RandomSpace& s) {
  std::vector<std::vector<std::uint32_t>> valid;
  const std::size_t n = s.params.size();
  for (const auto& p : s.params)
    if (p.values.empty()) return valid;
  std::vector<std::uint32_t> ix(n, 0);
  std::vector<Value> args;
  while (true) {
    bool ok = true;
    for (const auto& c : s.constraints) {
      args.clear();
      for (const auto& name : c.variables()) {
        auto it = s.constants.find(name);
        if (it != s.constants.end()) {
          args.push_back(it->second);
          continue;
        }
        std::size_t p = static_cast<std::size_t>(std::stoi(name.substr(1)));
        args.push_back(s.params[p].values[ix[p]]);
      }
      if (!c.test(args)) {
        ok = false;
        break;
      }
    }
    if (ok) valid.push_back(ix);
    // next tuple, last parameter fastest
    std::size_t k = n;
    while (k > 0) {
      --k;
      if (++ix[k] < s.params[k].values.size()) break;
      ix[k] = 0;
      if (k == 0) return valid;
    }
    if (n == 0) return valid;
  }
}

void check_space(const RandomSpace& rs, Generator& g, bool check_membership) {
  SCOPED_TRACE(rs.describe());
  Space space(rs.params, rs.constraints, rs.constants);
  auto want = brute_force(rs);

  EXPECT_EQ(space.count(), want.size());

  std::vector<std::vector<std::uint32_t>> got;
  space.for_each([&](std::span<const std::uint32_t> ix) {
    got.emplace_back(ix.begin(), ix.end());
    return true;
  });
  EXPECT_EQ(got, want);

  auto configs = space.enumerate();
  ASSERT_EQ(configs.size(), want.size());
  for (std::size_t i = 0; i < configs.size(); ++i) ASSERT_EQ(configs[i].key(), space.config_at(want[i]).key());

  if (!want.empty()) {
    std::size_t limit = static_cast<std::size_t>(g.uniform(1, static_cast<int>(want.size())));
    EXPECT_EQ(space.enumerate(limit).size(), limit);
  }

  // The index: the i-th config, the rank of each config, membership.
  ASSERT_TRUE(space.build());
  ASSERT_EQ(space.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(space.indices_at(i), want[i]) << "i = " << i;
    ASSERT_EQ(space.index_of(std::span<const std::uint32_t>(want[i])), std::optional<std::uint64_t>(i));
  }
  EXPECT_THROW(space.at(want.size()), std::out_of_range);
  std::set<std::vector<std::uint32_t>> valid(want.begin(), want.end());
  // first_invalid(ix) = f: no valid config agrees with ix on every
  // parameter up to f; with the index (`tight`) one agrees on every
  // parameter before f, unless the space is empty.
  auto check_first_invalid = [&](const Space& s, const std::vector<std::uint32_t>& ix, bool tight) {
    auto agrees_up_to = [&](std::size_t n) {
      return std::any_of(valid.begin(), valid.end(),
                         [&](const auto& v) { return std::equal(ix.begin(), ix.begin() + n, v.begin()); });
    };
    const std::size_t f = s.first_invalid(ix);
    if (valid.count(ix)) {
      EXPECT_EQ(f, ix.size());
      return;
    }
    ASSERT_LT(f, ix.size());
    EXPECT_FALSE(agrees_up_to(f + 1));
    if (tight) EXPECT_EQ(agrees_up_to(f), !want.empty());
  };
  std::mt19937_64 rng(g.uniform(0, 1 << 30));
  if (!want.empty())
    for (int k = 0; k < 10; ++k) EXPECT_EQ(valid.count(space.random_indices(rng)), 1u);
  else EXPECT_THROW(space.random(rng), std::out_of_range);

  // Neighbours of a few configs, valid or not, against brute force.
  std::vector<std::vector<std::uint32_t>> probes;
  for (int probe = 0; probe < 4; ++probe) {
    std::vector<std::uint32_t> ix;
    for (const auto& p : rs.params)
      ix.push_back(static_cast<std::uint32_t>(g.uniform(0, static_cast<int>(p.values.size()) - 1)));
    if (probe == 0 && !want.empty())
      ix = want[static_cast<std::size_t>(g.uniform(0, static_cast<int>(want.size()) - 1))];
    std::vector<std::vector<std::uint32_t>> hamming, adjacent;
    for (std::size_t p = 0; p < ix.size(); ++p)
      for (std::uint32_t v = 0; v < rs.params[p].values.size(); ++v) {
        if (v == ix[p]) continue;
        auto n = ix;
        n[p] = v;
        if (!valid.count(n)) continue;
        hamming.push_back(n);
        if (v + 1 == ix[p] || v == ix[p] + 1) adjacent.push_back(n);
      }
    EXPECT_EQ(space.neighbours(std::span<const std::uint32_t>(ix), tunekit::Neighbourhood::hamming), hamming);
    EXPECT_EQ(space.neighbours(std::span<const std::uint32_t>(ix), tunekit::Neighbourhood::adjacent), adjacent);
    EXPECT_EQ(space.contains_indices(ix), valid.count(ix) == 1);

    check_first_invalid(space, ix, true);
    probes.push_back(ix);
  }

  // The fallback when the index is over budget gives the same answers.
  Space bounded(rs.params, rs.constraints, rs.constants);
  bounded.set_index_budget(0);
  EXPECT_EQ(bounded.count(), want.size());
  std::size_t visited = 0;
  bool same = true;
  bounded.for_each([&](std::span<const std::uint32_t> ix) {
    same = same && visited < want.size() && std::equal(ix.begin(), ix.end(), want[visited].begin());
    ++visited;
    return true;
  });
  EXPECT_TRUE(same);
  EXPECT_EQ(visited, want.size());
  for (const auto& ix : probes) check_first_invalid(bounded, ix, false);

  // A walk resumed after a config, valid or not, goes on with the valid
  // configs after it in for_each order, with and without the index.
  std::vector<std::vector<std::uint32_t>> starts(want.begin(), want.begin() + std::min<std::size_t>(want.size(), 3));
  for (std::size_t i = 0; i < probes.size() && i < 5; ++i) starts.push_back(probes[i]);
  for (const auto& after : starts)
    for (const Space* s : {&space, &bounded}) {
      auto from = std::upper_bound(want.begin(), want.end(), after);
      bool in_order = true;
      s->for_each_after(after, [&](std::span<const std::uint32_t> ix) {
        in_order = in_order && from != want.end() && std::equal(ix.begin(), ix.end(), from->begin());
        ++from;
        return true;
      });
      EXPECT_TRUE(in_order && from == want.end()) << (s == &space ? "indexed" : "bounded");
    }

  if (!check_membership) return;
  for (int probe = 0; probe < 40; ++probe) {
    std::vector<std::uint32_t> ix;
    for (const auto& p : rs.params)
      ix.push_back(static_cast<std::uint32_t>(g.uniform(0, static_cast<int>(p.values.size()) - 1)));
    Config c = space.config_at(ix);
    EXPECT_EQ(space.contains(c), valid.count(ix) == 1) << c.str();
    EXPECT_EQ(space.contains_indices(ix), valid.count(ix) == 1) << c.str();
    auto rank = space.index_of(c);
    EXPECT_EQ(rank.has_value(), valid.count(ix) == 1) << c.str();
    if (rank) EXPECT_EQ(space.at(*rank).key(), c.key());
    auto back = space.indices_of(c);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, ix);
  }
}

}  // namespace

TEST(SpaceProperty, SmallRandomSpacesMatchBruteForce) {
  Generator g(20240601);
  int nonempty = 0, partial = 0;
  const int rounds = 500;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    RandomSpace rs = make_space(g, 1, 6, 4096, 3);
    Space space(rs.params, rs.constraints, rs.constants);
    auto n = space.count();
    nonempty += n > 0;
    partial += n > 0 && n < space.cartesian_size();
    check_space(rs, g, true);
    if (HasFatalFailure() || HasNonfatalFailure()) break;
  }
  // The generator must produce interesting spaces, not just empty or full ones.
  std::printf("[ property ] %d of %d spaces non-empty, %d partially valid\n", nonempty, rounds, partial);
  EXPECT_GT(nonempty, rounds * 2 / 5);
  EXPECT_GT(partial, rounds / 5);
}

TEST(SpaceProperty, LargerRandomSpacesMatchBruteForce) {
  Generator g(7);
  std::uint64_t configs = 0, valid = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    RandomSpace rs = make_space(g, 7, 10, 100000, 6, 4);
    Space space(rs.params, rs.constraints, rs.constants);
    configs += space.cartesian_size();
    valid += space.count();
    check_space(rs, g, false);
    if (HasFatalFailure() || HasNonfatalFailure()) break;
  }
  std::printf("[ property ] larger spaces: %llu configs brute-forced, %llu valid\n",
              static_cast<unsigned long long>(configs), static_cast<unsigned long long>(valid));
  EXPECT_GT(configs, 500000u);
  EXPECT_GT(valid, 10000u);
}
