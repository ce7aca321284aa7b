// Hand-made spaces with known contents.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <vector>

#include "tunekit/space.hpp"
#include "tunekit/stop.hpp"

using tunekit::Bindings;
using tunekit::Config;
using tunekit::Expression;
using tunekit::InputError;
using tunekit::Parameter;
using tunekit::SourceLocation;
using tunekit::Space;
using tunekit::Value;

namespace {

Parameter param(std::string name, std::vector<Value> values) {
  return Parameter{std::move(name), std::move(values), SourceLocation{"spec.yaml", 3, 5}};
}

std::vector<Value> ints(std::int64_t from, std::int64_t to) {
  std::vector<Value> out;
  for (std::int64_t v = from; v <= to; ++v) out.emplace_back(v);
  return out;
}

std::vector<Expression> exprs(std::initializer_list<const char*> texts) {
  std::vector<Expression> out;
  int line = 10;
  for (const char* t : texts) out.push_back(Expression::parse(t, SourceLocation{"spec.yaml", line++, 5}));
  return out;
}

std::vector<std::vector<std::uint32_t>> all_indices(const Space& s) {
  std::vector<std::vector<std::uint32_t>> out;
  s.for_each([&](std::span<const std::uint32_t> ix) {
    out.emplace_back(ix.begin(), ix.end());
    return true;
  });
  return out;
}

}  // namespace

TEST(Space, NoConstraintsIsTheCartesianProduct) {
  Space s({param("a", ints(1, 3)), param("b", {"x", "y"}), param("c", {0.5, 1.5})}, {});
  EXPECT_EQ(s.cartesian_size(), 12u);
  EXPECT_EQ(s.count(), 12u);
  auto all = s.enumerate();
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all.front().str(), "{a: 1, b: x, c: 0.5}");
  EXPECT_EQ(all[1].str(), "{a: 1, b: x, c: 1.5}");  // the last parameter varies fastest
  EXPECT_EQ(all.back().str(), "{a: 3, b: y, c: 1.5}");
}

TEST(Space, SimpleConstraintCounts) {
  Space lt({param("a", ints(1, 4)), param("b", ints(1, 4))}, exprs({"a < b"}));
  EXPECT_EQ(lt.count(), 6u);
  EXPECT_EQ(lt.enumerate().size(), 6u);

  Space pow2({param("x", ints(1, 64))}, exprs({"x & (x - 1) == 0"}));
  EXPECT_EQ(pow2.count(), 7u);  // 1 2 4 8 16 32 64

  Space div({param("t", ints(1, 8)), param("u", ints(1, 8))}, exprs({"u <= t and t % u == 0"}));
  EXPECT_EQ(div.count(), 1u + 2 + 2 + 3 + 2 + 4 + 2 + 4);  // divisors of 1..8
}

TEST(Space, ForEachIsLexicographicAndPruned) {
  Space s({param("a", ints(0, 2)), param("b", ints(0, 2)), param("c", ints(0, 1))}, exprs({"a + b == 2", "c <= a"}));
  std::vector<std::vector<std::uint32_t>> want{{0, 2, 0}, {1, 1, 0}, {1, 1, 1}, {2, 0, 0}, {2, 0, 1}};
  EXPECT_EQ(all_indices(s), want);
  EXPECT_EQ(s.count(), 5u);

  // Stops when the visitor says so.
  int seen = 0;
  s.for_each([&](std::span<const std::uint32_t>) { return ++seen < 2; });
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(s.enumerate(3).size(), 3u);
  EXPECT_TRUE(s.enumerate(0).empty());
}

TEST(Space, ConstantsAreBound) {
  Bindings sizes{{"N", 6}, {"max_threads", 4}};
  Space s({param("a", ints(1, 4)), param("b", ints(1, 4))}, exprs({"a * b <= N", "a <= max_threads // 2"}), sizes);
  // a in {1, 2}: b <= 6 (4 values) + b <= 3 (3 values)
  EXPECT_EQ(s.count(), 7u);
  EXPECT_EQ(s.constraints().size(), 2u);
  EXPECT_EQ(s.constraints()[0].text(), "a * b <= N");
}

TEST(Space, ParameterShadowsAConstant) {
  Space s({param("N", ints(1, 4))}, exprs({"N > 2"}), {{"N", 100}});
  EXPECT_EQ(s.count(), 2u);
}

TEST(Space, ConstantFalseMakesTheSpaceEmpty) {
  Space s({param("a", ints(1, 4))}, exprs({"a > 0", "N > 10"}), {{"N", 4}});
  EXPECT_EQ(s.cartesian_size(), 4u);
  EXPECT_EQ(s.count(), 0u);
  EXPECT_TRUE(s.enumerate().empty());
  EXPECT_TRUE(all_indices(s).empty());
  EXPECT_EQ(s.why_invalid(Config({{"a", 1}})), "N > 10");

  Space err({param("a", ints(1, 4))}, exprs({"1 / N > 0"}), {{"N", 0}});  // an error is false
  EXPECT_EQ(err.count(), 0u);
}

TEST(Space, ConstantTrueIsDropped) {
  Space s({param("a", ints(1, 4))}, exprs({"N > 2", "a > 1"}), {{"N", 4}});
  EXPECT_EQ(s.count(), 3u);
  EXPECT_EQ(s.why_invalid(Config({{"a", 1}})), "a > 1");
  EXPECT_EQ(s.why_invalid(Config({{"a", 2}})), std::nullopt);
}

// A config with a name the space has no parameter for (a strategy's
// proposal, say) is not in the space, whatever its other values.
TEST(Space, AConfigWithANameThatIsNoParameterIsNotInIt) {
  Space s({param("a", ints(1, 4))}, exprs({"a > 1"}), {});
  EXPECT_EQ(s.why_invalid(Config({{"a", 2}})), std::nullopt);
  EXPECT_EQ(s.why_invalid(Config({{"a", 2}, {"zz", 7}})), "not in space: zz is not a parameter");
  EXPECT_FALSE(s.contains(Config({{"a", 2}, {"zz", 7}})));
}

// A constraint over more combinations than why_empty() tries, none of them
// holding, is not said to hold for some configs.
TEST(Space, WhyEmptySaysWhatItDidNotTry) {
  Space s({param("a", ints(1, 1000)), param("b", ints(1, 1000))}, exprs({"a + b < 0"}), {});
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.why_empty(1000),
            "no config meets all the constraints; 1 of them held for none of the first 1000 "
            "combinations of their parameters' values (the rest were not tried)");
  EXPECT_EQ(s.why_empty(2000000),
            "spec.yaml:10:5: the constraint 'a + b < 0' holds for no config (it holds for none of the values "
            "of its parameters)");
}

// Counting a space of 10^15 combinations under a constraint that ties them
// all would take hours: a run asked to stop (a signal) ends it.
TEST(Space, ACountThatWouldTakeHoursEndsWhenTheRunIsStopped) {
  std::vector<Parameter> params;
  for (const char* name : {"a", "b", "c", "d", "e"}) params.push_back(param(name, ints(1, 1000)));
  Space s(params, exprs({"(a * b + c * d) % 997 == e % 13"}), {});
  tunekit::request_stop();
  try {
    (void)s.count();
    ADD_FAILURE() << "the count ran to its end";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "stopped while the space's valid configs were counted");
  }
  tunekit::clear_stop();
}

// A long list of values is looked up by hash: the same answers as a scan,
// an equal number of another type included (1.0 finds 1), its own type's
// entry first.
TEST(Space, ALongListOfValuesIsLookedUpAsAShortOneIs) {
  std::vector<Value> values = ints(0, 99);
  values.emplace_back(2.0);  // equal to the int 2, listed after it
  values.emplace_back("x");
  const Space s({param("a", values)}, {});
  const auto at = [&](Value v) { return s.indices_of(Config({{"a", v}})); };
  EXPECT_EQ(at(Value(57)), (std::vector<std::uint32_t>{57}));
  EXPECT_EQ(at(Value(57.0)), (std::vector<std::uint32_t>{57}));  // another type: the equal int
  EXPECT_EQ(at(Value(2.0)), (std::vector<std::uint32_t>{100}));  // its own type first
  EXPECT_EQ(at(Value(2)), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(at(Value("x")), (std::vector<std::uint32_t>{101}));
  EXPECT_EQ(at(Value(100)), std::nullopt);
  EXPECT_EQ(at(Value("y")), std::nullopt);
  EXPECT_EQ(s.why_invalid(Config({{"a", Value(0.5)}})), "not in space: a=0.5");
}

TEST(Space, UnknownNameIsAnErrorAtTheConstraint) {
  try {
    Space s({param("a", ints(1, 4)), param("b", ints(1, 2))}, exprs({"a > 0", "a * bb <= N"}), {{"N", 4}});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "spec.yaml");
    EXPECT_EQ(e.where().line, 11);
    EXPECT_EQ(e.where().column, 5);
    std::string what = e.what();
    EXPECT_NE(what.find("unknown name 'bb' in constraint 'a * bb <= N'"), std::string::npos) << what;
    EXPECT_NE(what.find("parameters a, b"), std::string::npos) << what;
    EXPECT_NE(what.find("sizes/machine properties N"), std::string::npos) << what;
  }
}

TEST(Space, DuplicateParameterIsAnError) {
  EXPECT_THROW(Space({param("a", ints(1, 2)), param("a", ints(1, 2))}, {}), InputError);
}

TEST(Space, StringAndFloatParameters) {
  Space s({param("mode", {"fast", "safe", ""}), param("f", {0.5, 1.0, 2.5}), param("n", ints(0, 3))},
          exprs({"mode == 'fast' or n > 1", "n * f >= 1", "mode"}));
  // mode=fast: n*f >= 1 -> (1,1.0),(1,2.5),(2,*),(3,*): 8; mode=safe: n in {2,3}: 6; mode='' is falsy.
  EXPECT_EQ(s.count(), 14u);
  EXPECT_EQ(s.enumerate().size(), 14u);
  EXPECT_EQ(s.enumerate(1)[0].str(), "{mode: fast, f: 0.5, n: 2}");
}

TEST(Space, EvaluationErrorsCountAsFalse) {
  Space s({param("a", ints(-2, 2)), param("b", ints(-1, 1))}, exprs({"a / b > 0"}));
  // b == 0 always fails; a/b > 0 when signs agree: (1,1),(2,1),(-1,-1),(-2,-1)
  EXPECT_EQ(s.count(), 4u);
  Space mixed({param("a", {1, "x"}), param("b", ints(0, 1))}, exprs({"a + b > 0"}));
  EXPECT_EQ(mixed.count(), 2u);  // 'x' + int is a TypeError
}

TEST(Space, DegenerateSpaces) {
  Space none({}, {});
  EXPECT_EQ(none.cartesian_size(), 1u);
  EXPECT_EQ(none.count(), 1u);
  EXPECT_EQ(all_indices(none).size(), 1u);  // the empty config

  Space empty_param({param("a", ints(1, 3)), param("b", {})}, {});
  EXPECT_EQ(empty_param.cartesian_size(), 0u);
  EXPECT_EQ(empty_param.count(), 0u);
  EXPECT_TRUE(all_indices(empty_param).empty());

  Space never({param("a", ints(1, 3))}, exprs({"a > 5"}));
  EXPECT_EQ(never.count(), 0u);
  EXPECT_TRUE(never.enumerate().empty());
}

TEST(Space, IndependentGroupsMultiply) {
  // Three independent pairs of 10 x 10 with 45 valid each, plus two free
  // parameters of 7 values.
  std::vector<Parameter> ps;
  std::vector<Expression> cs;
  for (int g = 0; g < 3; ++g) {
    std::string a = "a" + std::to_string(g), b = "b" + std::to_string(g);
    ps.push_back(param(a, ints(0, 9)));
    ps.push_back(param(b, ints(0, 9)));
    cs.push_back(Expression::parse(a + " < " + b));
  }
  ps.push_back(param("free0", ints(1, 7)));
  ps.push_back(param("free1", ints(1, 7)));
  Space s(ps, cs);
  EXPECT_EQ(s.count(), 45u * 45u * 45u * 49u);
}

TEST(Space, MemoisedSubtreesWithWideKeys) {
  // count(d | a, b, c) is the same for every x: it is computed once per
  // (a, b, c) and reused, while x still matters one level up (x <= c).
  Space s({param("x", ints(0, 3)), param("a", ints(0, 3)), param("b", ints(0, 3)), param("c", ints(0, 3)),
           param("d", ints(0, 3)), param("y", ints(0, 2))},
          exprs({"x <= c", "a + b + c + d == 6", "y != b"}));
  std::uint64_t want = 0;
  for (int x = 0; x <= 3; ++x)
    for (int a = 0; a <= 3; ++a)
      for (int b = 0; b <= 3; ++b)
        for (int c = 0; c <= 3; ++c)
          for (int d = 0; d <= 3; ++d)
            for (int y = 0; y <= 2; ++y) want += x <= c && a + b + c + d == 6 && y != b;
  EXPECT_EQ(s.count(), want);
  EXPECT_EQ(all_indices(s).size(), want);
}

TEST(Space, HugeCountsSaturate) {
  std::vector<Parameter> ps;
  for (int i = 0; i < 22; ++i) ps.push_back(param("p" + std::to_string(i), ints(0, 9)));  // 10^22
  Space s(ps, exprs({"p0 + p21 >= 0"}));
  EXPECT_EQ(s.cartesian_size(), UINT64_MAX);
  EXPECT_EQ(s.count(), UINT64_MAX);
  EXPECT_EQ(s.enumerate(2).size(), 2u);
}

// 2^64 - 1 valid configs fit in 64 bits: the count is exact, not the
// saturated one, and every rank is there. (3 * 5 * 17 * 257 * 641 * 65537 *
// 6700417, each factor an independent group; 65537 = 256 * 256 + 1 and
// 6700417 = 384 * 17449 + 1, a grid and one more config.) One more config,
// 2^64 of them, saturates.
TEST(Space, ExactlyTwoToThe64MinusOneConfigsIsNotSaturated) {
  std::vector<Parameter> ps{param("a", ints(0, 2)),    param("b", ints(0, 4)),    param("c", ints(0, 16)),
                            param("d", ints(0, 256)),  param("e", ints(0, 640)),  param("q1", ints(0, 256)),
                            param("q2", ints(0, 255)), param("r1", ints(0, 384)), param("r2", ints(0, 17448))};
  Space s(ps, exprs({"q1 < 256 or q2 == 0", "r1 < 384 or r2 == 0"}));
  ASSERT_TRUE(s.build());
  EXPECT_EQ(s.count(), UINT64_MAX);
  ASSERT_NO_THROW(EXPECT_EQ(s.size(), UINT64_MAX));
  const Config last = s.at(UINT64_MAX - 1);
  EXPECT_EQ(last.str(), "{a: 2, b: 4, c: 16, d: 256, e: 640, q1: 256, q2: 0, r1: 384, r2: 0}");
  EXPECT_EQ(s.index_of(last), UINT64_MAX - 1);
  std::mt19937_64 rng(1);
  EXPECT_TRUE(s.contains(s.random(rng)));

  std::vector<Parameter> bits;
  for (int i = 0; i < 64; ++i) bits.push_back(param("p" + std::to_string(i), ints(0, 1)));
  Space full(bits, {});
  ASSERT_TRUE(full.build());
  EXPECT_EQ(full.count(), UINT64_MAX);
  EXPECT_THROW(full.size(), std::overflow_error);
}

TEST(Space, DeadEndsAreNotExplored) {
  // A constraint between the first and the last parameter with 10^8
  // combinations of free parameters in between. Plain depth-first search
  // would walk all of them for every failing value of `a`.
  // A regression shows as this test running past ctest's limit (600 s): the
  // last space alone would take 10^10 constraint evaluations.
  std::vector<Parameter> ps{param("a", ints(0, 9))};
  for (int i = 0; i < 8; ++i) ps.push_back(param("m" + std::to_string(i), ints(0, 9)));
  ps.push_back(param("z", ints(0, 9)));
  Space s(ps, exprs({"a == 9 and z == 9"}));
  EXPECT_EQ(s.count(), 100000000u);
  auto first = s.enumerate(3);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].str(), "{a: 9, m0: 0, m1: 0, m2: 0, m3: 0, m4: 0, m5: 0, m6: 0, m7: 0, z: 9}");
  EXPECT_EQ(first[2].str(), "{a: 9, m0: 0, m1: 0, m2: 0, m3: 0, m4: 0, m5: 0, m6: 0, m7: 2, z: 9}");

  // Chained through the middle: every parameter constrains the next.
  Space chain(ps, exprs({"a == 9", "m0 == a - 9", "m1 == m0", "m2 == m1", "m3 == m2", "m4 == m3", "m5 == m4",
                         "m6 == m5", "m7 == m6", "z == m7 + 9"}));
  EXPECT_EQ(chain.count(), 1u);
  EXPECT_EQ(chain.enumerate().size(), 1u);

  Space none(ps, exprs({"a > 100 * z + 9"}));
  EXPECT_EQ(none.count(), 0u);
  EXPECT_TRUE(none.enumerate().empty());
}

TEST(Space, ConfigAtAndIndicesOf) {
  Space s({param("a", ints(1, 4)), param("m", {"x", "y"}), param("f", {0.5, 2.0})}, exprs({"a > 1"}));
  std::vector<std::uint32_t> ix{2, 1, 0};
  Config c = s.config_at(ix);
  EXPECT_EQ(c.str(), "{a: 3, m: y, f: 0.5}");
  auto back = s.indices_of(c);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, ix);

  // Python equality: 2 finds 2.0.
  auto by_int = s.indices_of(Config({{"a", 1}, {"m", "x"}, {"f", 2}}));
  ASSERT_TRUE(by_int.has_value());
  EXPECT_EQ(*by_int, (std::vector<std::uint32_t>{0, 0, 1}));

  EXPECT_FALSE(s.indices_of(Config({{"a", 1}, {"m", "x"}})).has_value());              // f missing
  EXPECT_FALSE(s.indices_of(Config({{"a", 9}, {"m", "x"}, {"f", 0.5}})).has_value());  // not a value
  EXPECT_FALSE(s.indices_of(Config({{"a", "1"}, {"m", "x"}, {"f", 0.5}})).has_value());

  std::vector<std::uint32_t> bad{4, 0, 0};
  EXPECT_THROW(s.config_at(bad), std::out_of_range);
  std::vector<std::uint32_t> short_ix{0, 0};
  EXPECT_THROW(s.config_at(short_ix), std::out_of_range);
}

TEST(Space, WhyInvalid) {
  Space s({param("a", ints(1, 4)), param("b", ints(1, 4))}, exprs({"a <= b", "a * b != 4"}));
  EXPECT_EQ(s.why_invalid(Config({{"a", 1}, {"b", 2}})), std::nullopt);
  EXPECT_TRUE(s.contains(Config({{"b", 2}, {"a", 1}})));  // order does not matter
  EXPECT_EQ(s.why_invalid(Config({{"a", 3}, {"b", 2}})), "a <= b");
  EXPECT_EQ(s.why_invalid(Config({{"a", 2}, {"b", 2}})), "a * b != 4");
  EXPECT_EQ(s.why_invalid(Config({{"a", 3}, {"b", 7}})), "not in space: b=7");
  EXPECT_EQ(s.why_invalid(Config({{"a", 3}})), "not in space: no value for b");
  EXPECT_FALSE(s.contains(Config({{"a", 2}, {"b", 2}})));
  // every enumerated config is contained, every other one is not
  std::uint64_t contained = 0;
  for (std::int64_t a = 1; a <= 4; ++a)
    for (std::int64_t b = 1; b <= 4; ++b) contained += s.contains(Config({{"a", a}, {"b", b}}));
  EXPECT_EQ(contained, s.count());
}

TEST(Space, CopiesAreIndependent) {
  Space s({param("a", ints(1, 4))}, exprs({"a % 2 == 0"}));
  Space t = s;
  EXPECT_EQ(t.count(), 2u);
  Space u = std::move(s);
  EXPECT_EQ(u.count(), 2u);
  EXPECT_EQ(u.parameters().size(), 1u);
}

TEST(Space, AnEmptySpaceSaysWhichConstraintEmptiedIt) {
  const std::vector<Parameter> params{param("a", ints(1, 4)), param("b", ints(1, 4))};
  EXPECT_EQ(Space(params, exprs({"a <= b"})).why_empty(), std::nullopt);
  // One constraint that no value of its parameters meets, located.
  EXPECT_EQ(Space(params, exprs({"a <= b", "b > 5"})).why_empty(),
            "spec.yaml:11:5: the constraint 'b > 5' holds for no config (it holds for none of the values of its "
            "parameters)");
  // One that reads only a size the run fixed.
  EXPECT_EQ(Space(params, exprs({"N > 100"}), Bindings{{"N", Value(64)}}).why_empty(),
            "spec.yaml:10:5: the constraint 'N > 100' holds for no config (it reads no parameter: the sizes and "
            "the machine's properties decide it)");
  // Each holds somewhere, but not together.
  // Each holds somewhere, but not together: which ones to relax, and what
  // each leaves.
  EXPECT_EQ(Space(params, exprs({"a > b", "b > a"})).why_empty(),
            "each of the 2 constraints holds for some configs, but no config meets them all: without 'a > b' "
            "(spec.yaml:10:5), 6 configs are valid; without 'b > a' (spec.yaml:11:5), 6 configs are valid");
  // A constraint that conflicts with none is not named.
  EXPECT_EQ(Space(params, exprs({"a != 3", "a + b > 6", "a + b < 5"})).why_empty(),
            "each of the 3 constraints holds for some configs, but no config meets them all: without 'a + b > 6' "
            "(spec.yaml:11:5), 5 configs are valid; without 'a + b < 5' (spec.yaml:12:5), 2 configs are valid");
  // Three that exclude each other only pairwise: no one left out helps.
  EXPECT_EQ(Space(params, exprs({"a > b", "b > a", "a == b"})).why_empty(),
            "each of the 3 constraints holds for some configs, but no config meets them all (nor does any one of "
            "them left out make a config valid)");
  // Where leaving one out opens a space whose index is large (a weighted sum
  // and two products carried through eight parameters), it is not counted,
  // and the message says so rather than that it would not help.
  std::vector<Parameter> wide;
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h"}) wide.push_back(param(name, ints(1, 12)));
  EXPECT_EQ(Space(wide, exprs({"a*3 + b*5 + c*7 + d*11 + e*13 + f*17 + g*19 + h*23 <= 400",
                               "(a*b*c*d + e*f*g*h) % 13 == 5", "a > 6", "a < 4"}))
                .why_empty(),
            "each of the 4 constraints holds for some configs, but no config meets them all (2 of them not tried: "
            "the counts with one left out stop at a fixed amount of work)");
}

// The counts with one constraint left out share one allowance of work, not
// only a memory budget each: seven that each fit it, and each cost about as
// much as the space's own count, are not all made at every empty size of a
// tune (once seven such counts, each under its own budget, were).
TEST(Space, AnEmptySpacesCountsWithOneLeftOutShareOneAllowance) {
  std::vector<Parameter> digits;
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) digits.push_back(param(name, ints(0, 9)));
  // Every number of six digits has a remainder by 7, so no config is valid;
  // leaving one out leaves about a seventh of 10^6, each with its own
  // context (the digits so far as a number) at every parameter.
  std::vector<Expression> constraints;
  for (int r = 0; r < 7; ++r)
    constraints.push_back(
        Expression::parse("(a*100000 + b*10000 + c*1000 + d*100 + e*10 + f) % 7 != " + std::to_string(r)));
  const auto why = Space(digits, constraints).why_empty();
  ASSERT_TRUE(why.has_value());
  const std::string without = "without '(a*100000 + b*10000 + c*1000 + d*100 + e*10 + f) % 7 != ";
  EXPECT_EQ(*why, "each of the 7 constraints holds for some configs, but no config meets them all: " + without +
                      "0', 142858 configs are valid; " + without + "1', 142857 configs are valid; " + without +
                      "2', 142857 configs are valid; 4 of them not tried: the counts with one left out stop at a "
                      "fixed amount of work");
}

// A constraint that would divide by zero only where another constraint
// already rules the values out drops nothing, and is not warned about
// (the H200 GEMV spec's `WARPS // WK`, guarded by `WARPS % WK == 0`, once
// gave four warnings); unguarded, it is.
TEST(Space, AFailureWhereAnotherConstraintRulesOutIsNotWarned) {
  const std::vector<Parameter> params{param("WARPS", {Value(4), Value(8)}), param("WK", {Value(1), Value(8)})};
  EXPECT_TRUE(Space(params, exprs({"WARPS % WK == 0", "64 // (WARPS // WK) >= 8"})).constraint_errors().empty());
  const auto unguarded = Space(params, exprs({"64 // (WARPS // WK) >= 8"})).constraint_errors();
  ASSERT_EQ(unguarded.size(), 1u);
  EXPECT_NE(unguarded[0].find("first at {WARPS: 4, WK: 8}"), std::string::npos) << unguarded[0];
}
