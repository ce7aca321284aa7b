// The expression language: Python semantics of every operator, parse errors
// with exact locations, bind() and evaluation errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/constraint.hpp"

using tunekit::Bindings;
using tunekit::Expression;
using tunekit::InputError;
using tunekit::SourceLocation;
using tunekit::Value;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::string show(const std::optional<Value>& v) {
  if (!v) return "<error>";
  if (v->is_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g (float)", v->as_float());
    return buf;
  }
  return v->repr() + (v->is_int() ? " (int)" : " (str)");
}

bool same(const std::optional<Value>& a, const std::optional<Value>& b) {
  if (!a || !b) return !a && !b;
  if (a->raw().index() != b->raw().index()) return false;
  if (a->is_float()) {
    double x = a->as_float(), y = b->as_float();
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);  // -0.0 != 0.0 here
  }
  return *a == *b;
}

std::vector<Value> values_for(const Expression& e, const Bindings& env) {
  std::vector<Value> out;
  for (const auto& name : e.variables()) out.push_back(env.at(name));
  return out;
}

// Evaluates `text` three ways and requires them to agree with `want`
// (nullopt = Python raises): through the interpreter with a value span, with
// evaluate(Bindings), and with every variable bound (constant folding).
testing::AssertionResult evaluates(std::string_view text, const std::optional<Value>& want, const Bindings& env = {}) {
  Expression e = Expression::parse(text);
  std::optional<Value> got = e.evaluate(values_for(e, env));
  if (!same(got, want))
    return testing::AssertionFailure() << "'" << text << "' gave " << show(got) << ", expected " << show(want);
  std::optional<Value> via_env;
  try {
    via_env = e.evaluate(env);
  } catch (const InputError&) {
  }
  if (!same(via_env, want))
    return testing::AssertionFailure() << "'" << text << "' evaluate(Bindings) gave " << show(via_env);
  Expression folded = e.bind(env);
  if (!folded.variables().empty())
    return testing::AssertionFailure() << "'" << text << "' still has free variables after bind";
  std::optional<Value> via_fold = folded.evaluate(std::span<const Value>{});
  if (!same(via_fold, want)) return testing::AssertionFailure() << "'" << text << "' folded to " << show(via_fold);
  if (e.test(values_for(e, env)) != (want && want->truthy()))
    return testing::AssertionFailure() << "'" << text << "' test() disagrees with truthiness";
  return testing::AssertionSuccess();
}

const std::optional<Value> kError = std::nullopt;
Value I(std::int64_t v) { return Value(v); }
Value F(double v) { return Value(v); }
Value S(const char* v) { return Value(v); }

}  // namespace

TEST(ExpressionArithmetic, AddSubMulStayInt) {
  EXPECT_TRUE(evaluates("a + b", I(5), {{"a", 2}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a - b", I(-1), {{"a", 2}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a * b", I(6), {{"a", 2}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a + b", F(5.5), {{"a", 2}, {"b", 3.5}}));
  EXPECT_TRUE(evaluates("a * b", F(0.0), {{"a", 0}, {"b", 2.0}}));
  EXPECT_TRUE(evaluates("True + True", I(2)));
  EXPECT_TRUE(evaluates("False * 3", I(0)));
}

TEST(ExpressionArithmetic, TrueDivisionGivesFloat) {
  EXPECT_TRUE(evaluates("a / b", F(3.5), {{"a", 7}, {"b", 2}}));
  EXPECT_TRUE(evaluates("a / b", F(2.0), {{"a", 6}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a / b", F(-0.5), {{"a", 1}, {"b", -2}}));
  EXPECT_TRUE(evaluates("1 / 3", F(1.0 / 3.0)));
}

// An int over an int is the exact quotient rounded once, as Python's is:
// dividing the two doubles rounds an operand past 2**53 first. (The
// expected values are Python's.)
TEST(ExpressionArithmetic, TrueDivisionOfIntsIsCorrectlyRounded) {
  EXPECT_TRUE(evaluates("a / b", F(3002399751580331.0), {{"a", 9007199254740993}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a / b == 3002399751580331.0", I(1), {{"a", 9007199254740993}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a / b", F(-3002399751580331.0), {{"a", -9007199254740993}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a / b", F(0.9999999999999998), {{"a", 9007199254740993}, {"b", 9007199254740995}}));
  EXPECT_TRUE(evaluates("a / b", F(123456789012345.67), {{"a", 123456789012345678}, {"b", 1000}}));
  EXPECT_TRUE(evaluates("a / b", F(-3.0744573456182584e+18), {{"a", kMin}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a / b", F(1.0), {{"a", kMin}, {"b", kMin + 1}}));
  EXPECT_TRUE(evaluates("a / b", F(1.3176245766935393e+18), {{"a", kMax}, {"b", 7}}));
  EXPECT_TRUE(evaluates("a / b", F(-0.0), {{"a", 0}, {"b", -5}}));
  // 0 over a divisor past 2^53 (the fuzzer's case: no bits to count in 0).
  EXPECT_TRUE(evaluates("a / b", F(0.0), {{"a", 0}, {"b", kMax}}));
  EXPECT_TRUE(evaluates("a / b", F(-0.0), {{"a", 0}, {"b", kMin}}));
}

TEST(ExpressionArithmetic, FloorDivisionFloors) {
  EXPECT_TRUE(evaluates("a // b", I(3), {{"a", 7}, {"b", 2}}));
  EXPECT_TRUE(evaluates("a // b", I(-4), {{"a", -7}, {"b", 2}}));
  EXPECT_TRUE(evaluates("a // b", I(-4), {{"a", 7}, {"b", -2}}));
  EXPECT_TRUE(evaluates("a // b", I(3), {{"a", -7}, {"b", -2}}));
  EXPECT_TRUE(evaluates("a // b", I(-1), {{"a", -1}, {"b", 5}}));
  EXPECT_TRUE(evaluates("a // b", F(3.0), {{"a", 7.5}, {"b", 2}}));
  EXPECT_TRUE(evaluates("a // b", F(-4.0), {{"a", -7.5}, {"b", 2}}));
  EXPECT_TRUE(evaluates("a // b", F(14.0), {{"a", 7}, {"b", 0.5}}));
  EXPECT_TRUE(evaluates("a // b", F(-1.0), {{"a", -1}, {"b", 2.0}}));
  EXPECT_TRUE(evaluates("a // b", F(-0.0), {{"a", 0.0}, {"b", -2}}));
  EXPECT_TRUE(evaluates("a // b", kError, {{"a", kMin}, {"b", -1}}));  // 2**63 does not fit
}

TEST(ExpressionArithmetic, ModuloTakesTheSignOfTheDivisor) {
  EXPECT_TRUE(evaluates("a % b", I(1), {{"a", 7}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a % b", I(2), {{"a", -7}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a % b", I(-2), {{"a", 7}, {"b", -3}}));
  EXPECT_TRUE(evaluates("a % b", I(-1), {{"a", -7}, {"b", -3}}));
  EXPECT_TRUE(evaluates("a % b", I(0), {{"a", kMin}, {"b", -1}}));
  EXPECT_TRUE(evaluates("a % b", F(0.5), {{"a", -7.5}, {"b", 2}}));
  EXPECT_TRUE(evaluates("a % b", F(-0.5), {{"a", 7.5}, {"b", -2}}));
  EXPECT_TRUE(evaluates("a % b", F(0.0), {{"a", 5}, {"b", 2.5}}));
  EXPECT_TRUE(evaluates("a % b", F(-0.0), {{"a", 4.0}, {"b", -2}}));
  EXPECT_TRUE(evaluates("a % b", F(1.5), {{"a", -0.5}, {"b", 2}}));
  // gemm: the modulo operand is a float from true division
  EXPECT_TRUE(
      evaluates("KWG % ((MDIMC * NDIMC)/MDIMA) == 0", I(1), {{"KWG", 32}, {"MDIMC", 16}, {"NDIMC", 8}, {"MDIMA", 8}}));
  EXPECT_TRUE(
      evaluates("KWG % ((MDIMC * NDIMC)/MDIMA) == 0", I(0), {{"KWG", 16}, {"MDIMC", 32}, {"NDIMC", 32}, {"MDIMA", 8}}));
}

TEST(ExpressionArithmetic, PowerIsRightAssociativeAndBindsTighterThanUnaryMinus) {
  EXPECT_TRUE(evaluates("2 ** 3 ** 2", I(512)));
  EXPECT_TRUE(evaluates("(2 ** 3) ** 2", I(64)));
  EXPECT_TRUE(evaluates("-2 ** 2", I(-4)));
  EXPECT_TRUE(evaluates("(-2) ** 2", I(4)));
  EXPECT_TRUE(evaluates("-a ** 2", I(-9), {{"a", 3}}));
  EXPECT_TRUE(evaluates("2 ** -1", F(0.5)));
  EXPECT_TRUE(evaluates("2 ** -2 ** 2", F(0.0625)));
  EXPECT_TRUE(evaluates("a ** b", I(1024), {{"a", 2}, {"b", 10}}));
  EXPECT_TRUE(evaluates("a ** b", I(-8), {{"a", -2}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a ** b", I(1), {{"a", 0}, {"b", 0}}));
  EXPECT_TRUE(evaluates("a ** b", I(kMin), {{"a", -2}, {"b", 63}}));
  EXPECT_TRUE(evaluates("a ** b", kError, {{"a", 2}, {"b", 63}}));  // int overflow
  EXPECT_TRUE(evaluates("a ** b", I(1), {{"a", -1}, {"b", kMax - 1}}));
  EXPECT_TRUE(evaluates("a ** b", F(std::sqrt(2.0)), {{"a", 2}, {"b", 0.5}}));
  EXPECT_TRUE(evaluates("a ** b", F(-8.0), {{"a", -2.0}, {"b", 3}}));
  EXPECT_TRUE(evaluates("a ** b", kError, {{"a", 0}, {"b", -1}}));        // ZeroDivisionError
  EXPECT_TRUE(evaluates("a ** b", kError, {{"a", -8}, {"b", 1.0 / 3}}));  // complex in Python
  EXPECT_TRUE(evaluates("a ** b", kError, {{"a", 10.0}, {"b", 400}}));    // OverflowError
  EXPECT_TRUE(evaluates("2 * 3 ** 2", I(18)));
}

TEST(ExpressionArithmetic, IntOverflowIsAnError) {
  EXPECT_TRUE(evaluates("a + 1", kError, {{"a", kMax}}));
  EXPECT_TRUE(evaluates("a - 1", kError, {{"a", kMin}}));
  EXPECT_TRUE(evaluates("a * a", kError, {{"a", std::int64_t{1} << 32}}));
  EXPECT_TRUE(evaluates("-a", kError, {{"a", kMin}}));
  EXPECT_TRUE(evaluates("abs(a)", kError, {{"a", kMin}}));
  EXPECT_TRUE(evaluates("a + 1.0", F(9223372036854775808.0), {{"a", kMax}}));  // floats do not overflow
  EXPECT_TRUE(evaluates("a * 10", F(INFINITY), {{"a", 1e308}}));
  // ceil_div overflows only where its quotient does, not on the way (it
  // once negated a).
  EXPECT_TRUE(evaluates("ceil_div(a, -2)", I(std::int64_t{1} << 62), {{"a", kMin}}));
  EXPECT_TRUE(evaluates("ceil_div(a, -1)", kError, {{"a", kMin}}));
  EXPECT_TRUE(evaluates("ceil_div(a, 3)", I(kMin / 3), {{"a", kMin}}));
}

TEST(ExpressionArithmetic, DivisionByZeroIsAnError) {
  for (const char* text : {"a / 0", "a // 0", "a % 0", "a / 0.0", "a // 0.0", "a % 0.0", "ceil_div(a, 0)"}) {
    EXPECT_TRUE(evaluates(text, kError, {{"a", 1}})) << text;
    EXPECT_TRUE(evaluates(text, kError, {{"a", 1.5}})) << text;
  }
  Expression e = Expression::parse("a / b > 1");
  std::vector<Value> zero{Value(4), Value(0)};
  EXPECT_FALSE(e.evaluate(zero).has_value());
  EXPECT_FALSE(e.test(zero));
  Expression n = Expression::parse("not (a / b > 1)");  // an error stays an error under 'not'
  EXPECT_FALSE(n.test(zero));
}

TEST(ExpressionArithmetic, Precedence) {
  EXPECT_TRUE(evaluates("1 + 2 * 3", I(7)));
  EXPECT_TRUE(evaluates("(1 + 2) * 3", I(9)));
  EXPECT_TRUE(evaluates("10 - 4 - 3", I(3)));
  EXPECT_TRUE(evaluates("2 * 3 % 4", I(2)));
  EXPECT_TRUE(evaluates("100 // 10 // 3", I(3)));
  EXPECT_TRUE(evaluates("2 ** 2 * 3", I(12)));
  EXPECT_TRUE(evaluates("-3 % 5", I(2)));
  EXPECT_TRUE(evaluates("- - 3", I(3)));
  EXPECT_TRUE(evaluates("1 + -2", I(-1)));
  EXPECT_TRUE(evaluates("+a", F(2.5), {{"a", 2.5}}));
  EXPECT_TRUE(evaluates("1 + 2 < 4", I(1)));
  EXPECT_TRUE(evaluates("not 1 == 2", I(1)));
  EXPECT_TRUE(evaluates("1 or 0 and 0", I(1)));  // and binds tighter than or
  EXPECT_TRUE(evaluates("(1 or 0) and 0", I(0)));
  EXPECT_TRUE(evaluates("6 & 3 == 2", I(1)));  // (6 & 3) == 2: bitwise operators bind tighter than ==
  EXPECT_TRUE(evaluates("1 | 2 ^ 3 & 4 << 1", I(3)));
}

TEST(ExpressionArithmetic, BitwiseAndShifts) {
  EXPECT_TRUE(evaluates("6 & 3", I(2)));
  EXPECT_TRUE(evaluates("6 | 3", I(7)));
  EXPECT_TRUE(evaluates("6 ^ 3", I(5)));
  EXPECT_TRUE(evaluates("1 << 4", I(16)));
  EXPECT_TRUE(evaluates("-16 >> 2", I(-4)));
  EXPECT_TRUE(evaluates("-1 >> 100", I(-1)));
  EXPECT_TRUE(evaluates("~5", I(-6)));
  EXPECT_TRUE(evaluates("a & (a - 1) == 0", I(1), {{"a", 64}}));
  EXPECT_TRUE(evaluates("1 << 63", kError));
  EXPECT_TRUE(evaluates("1 << -1", kError));
  EXPECT_TRUE(evaluates("a & 1", kError, {{"a", 1.0}}));
}

TEST(ExpressionStrings, ConcatenationAndComparison) {
  EXPECT_TRUE(evaluates("s + t", S("abcd"), {{"s", "ab"}, {"t", "cd"}}));
  EXPECT_TRUE(evaluates("'ab' + 'cd' == 'abcd'", I(1)));
  EXPECT_TRUE(evaluates("s + 1", kError, {{"s", "ab"}}));
  EXPECT_TRUE(evaluates("1 + s", kError, {{"s", "ab"}}));
  EXPECT_TRUE(evaluates("s * 2", kError, {{"s", "ab"}}));
  EXPECT_TRUE(evaluates("-s", kError, {{"s", "ab"}}));
  EXPECT_TRUE(evaluates("s == 1", I(0), {{"s", "1"}}));  // no error, just False
  EXPECT_TRUE(evaluates("s != 1", I(1), {{"s", "1"}}));
  EXPECT_TRUE(evaluates("s < 1", kError, {{"s", "1"}}));
  EXPECT_TRUE(evaluates("1 >= s", kError, {{"s", "1"}}));
  EXPECT_TRUE(evaluates("s == 'fast'", I(1), {{"s", "fast"}}));
  EXPECT_TRUE(evaluates("s == \"fast\"", I(1), {{"s", "fast"}}));
  EXPECT_TRUE(evaluates("'abc' < 'abd'", I(1)));
  EXPECT_TRUE(evaluates("'b' > 'abc'", I(1)));
  EXPECT_TRUE(evaluates("'' < 'a'", I(1)));
  EXPECT_TRUE(evaluates("'a' in 'cat'", I(1)));
  EXPECT_TRUE(evaluates("'x' not in 'cat'", I(1)));
  EXPECT_TRUE(evaluates("1 in 'cat'", kError));
  EXPECT_TRUE(evaluates("'it\\'s'", S("it's")));
}

TEST(ExpressionComparisons, NumbersCompareExactly) {
  EXPECT_TRUE(evaluates("1 == 1.0", I(1)));
  EXPECT_TRUE(evaluates("1 < 1.5", I(1)));
  EXPECT_TRUE(evaluates("2 >= 2.0", I(1)));
  EXPECT_TRUE(evaluates("a == b", I(0), {{"a", 9007199254740993}, {"b", 9007199254740992.0}}));
  EXPECT_TRUE(evaluates("a > b", I(1), {{"a", 9007199254740993}, {"b", 9007199254740992.0}}));
  EXPECT_TRUE(evaluates("a < b", I(1), {{"a", kMax}, {"b", 9223372036854775808.0}}));
  EXPECT_TRUE(evaluates("a == a", I(0), {{"a", NAN}}));
  EXPECT_TRUE(evaluates("a != a", I(1), {{"a", NAN}}));
}

TEST(ExpressionComparisons, ChainsAreConjunctions) {
  EXPECT_TRUE(evaluates("1 < 2 < 3", I(1)));
  EXPECT_TRUE(evaluates("1 < 3 < 2", I(0)));
  EXPECT_TRUE(evaluates("3 > 2 > 2", I(0)));
  EXPECT_TRUE(evaluates("1 != 2 != 1", I(1)));  // not transitive: 1 != 2 and 2 != 1
  EXPECT_TRUE(evaluates("1 == 1 == 1.0", I(1)));
  EXPECT_TRUE(evaluates("32 <= a*b <= 1024", I(1), {{"a", 8}, {"b", 8}}));
  EXPECT_TRUE(evaluates("32 <= a*b <= 1024", I(0), {{"a", 2}, {"b", 8}}));
  EXPECT_TRUE(evaluates("32 <= a*b <= 1024", I(0), {{"a", 64}, {"b", 32}}));
  EXPECT_TRUE(evaluates("a < b <= c < d", I(1), {{"a", 1}, {"b", 2}, {"c", 2}, {"d", 3}}));
  EXPECT_TRUE(evaluates("a < b <= c < d", I(0), {{"a", 1}, {"b", 2}, {"c", 2}, {"d", 2}}));
}

TEST(ExpressionComparisons, ChainsShortCircuit) {
  // The first false comparison ends the chain: later operands are never
  // evaluated, so their errors do not happen.
  EXPECT_TRUE(evaluates("a > b < 1 / c", I(0), {{"a", 1}, {"b", 2}, {"c", 0}}));
  EXPECT_TRUE(evaluates("a < b < 1 / c", kError, {{"a", 1}, {"b", 2}, {"c", 0}}));
  EXPECT_TRUE(evaluates("a > b < s", I(0), {{"a", 1}, {"b", 2}, {"s", "x"}}));
  EXPECT_TRUE(evaluates("a < b < s", kError, {{"a", 1}, {"b", 2}, {"s", "x"}}));
  // The middle operand's value is used for both comparisons.
  EXPECT_TRUE(evaluates("0 < a // 2 < 2", I(1), {{"a", 3}}));
}

TEST(ExpressionLogic, AndOrReturnOperands) {
  EXPECT_TRUE(evaluates("a or b", I(5), {{"a", 0}, {"b", 5}}));
  EXPECT_TRUE(evaluates("a or b", I(3), {{"a", 3}, {"b", 5}}));
  EXPECT_TRUE(evaluates("a and b", I(0), {{"a", 0}, {"b", 5}}));
  EXPECT_TRUE(evaluates("a and b", I(5), {{"a", 3}, {"b", 5}}));
  EXPECT_TRUE(evaluates("a and b", F(0.0), {{"a", 0.0}, {"b", 5}}));
  EXPECT_TRUE(evaluates("s or t", S("x"), {{"s", ""}, {"t", "x"}}));
  EXPECT_TRUE(evaluates("s and t", S(""), {{"s", ""}, {"t", "x"}}));
  EXPECT_TRUE(evaluates("a or b or c", I(0), {{"a", 0}, {"b", 0.0}, {"c", 0}}));
  EXPECT_TRUE(evaluates("a and b and c", I(7), {{"a", 1}, {"b", 2}, {"c", 7}}));
  EXPECT_TRUE(evaluates("not a", I(1), {{"a", 0}}));
  EXPECT_TRUE(evaluates("not a", I(0), {{"a", 2.5}}));
  EXPECT_TRUE(evaluates("not s", I(1), {{"s", ""}}));
  EXPECT_TRUE(evaluates("not not s", I(1), {{"s", "x"}}));
  EXPECT_TRUE(evaluates("not a", I(0), {{"a", NAN}}));  // NaN is truthy
}

TEST(ExpressionLogic, AndOrShortCircuit) {
  EXPECT_TRUE(evaluates("a and 1 / a", I(0), {{"a", 0}}));
  EXPECT_TRUE(evaluates("a or 1 / b", I(1), {{"a", 1}, {"b", 0}}));
  EXPECT_TRUE(evaluates("a and 1 / b", kError, {{"a", 1}, {"b", 0}}));
  EXPECT_TRUE(evaluates("a or 1 / b", kError, {{"a", 0}, {"b", 0}}));
  EXPECT_TRUE(evaluates("tile > 1 or stride == 0", I(1), {{"tile", 1}, {"stride", 0}}));
  EXPECT_TRUE(evaluates("tile > 1 or stride == 0", I(0), {{"tile", 1}, {"stride", 1}}));
  EXPECT_TRUE(evaluates("a if b else c", I(1), {{"a", 1}, {"b", 1}, {"c", 2}}));
  EXPECT_TRUE(evaluates("a if b else c", I(2), {{"a", 1}, {"b", 0}, {"c", 2}}));
  EXPECT_TRUE(evaluates("1 / a if a else 0", I(0), {{"a", 0}}));
}

TEST(ExpressionMembership, InLiteralLists) {
  EXPECT_TRUE(evaluates("x in [1, 2, 4]", I(1), {{"x", 2}}));
  EXPECT_TRUE(evaluates("x in [1, 2, 4]", I(0), {{"x", 3}}));
  EXPECT_TRUE(evaluates("x in (1, 2, 4)", I(1), {{"x", 4.0}}));
  EXPECT_TRUE(evaluates("x not in (1, 2)", I(1), {{"x", 3}}));
  EXPECT_TRUE(evaluates("x not in [1, 2,]", I(0), {{"x", 1}}));
  EXPECT_TRUE(evaluates("x in ['a', 'b']", I(1), {{"x", "b"}}));
  EXPECT_TRUE(evaluates("x in ['1']", I(0), {{"x", 1}}));
  EXPECT_TRUE(evaluates("x in []", I(0), {{"x", 1}}));
  EXPECT_TRUE(evaluates("x in [y, y * 2]", I(1), {{"x", 6}, {"y", 3}}));
  EXPECT_TRUE(evaluates("0 < x in [1, 2]", I(1), {{"x", 2}}));
  EXPECT_TRUE(evaluates("x in (3,)", I(1), {{"x", 3}}));
}

TEST(ExpressionFunctions, MinMaxAbsCeilDiv) {
  EXPECT_TRUE(evaluates("min(a, b, c)", I(1), {{"a", 3}, {"b", 1}, {"c", 2}}));
  EXPECT_TRUE(evaluates("max(a, b, c)", I(3), {{"a", 3}, {"b", 1}, {"c", 2}}));
  EXPECT_TRUE(evaluates("min(1, 1.0)", I(1)));  // the first of equal values
  EXPECT_TRUE(evaluates("max(1.0, 1)", F(1.0)));
  EXPECT_TRUE(evaluates("max(2.5, 2)", F(2.5)));
  EXPECT_TRUE(evaluates("min([4, 2, 8])", I(2)));
  EXPECT_TRUE(evaluates("max((4, 2, 8))", I(8)));
  EXPECT_TRUE(evaluates("min('b', 'a')", S("a")));
  EXPECT_TRUE(evaluates("min(1, s)", kError, {{"s", "a"}}));
  EXPECT_TRUE(evaluates("abs(a)", I(3), {{"a", -3}}));
  EXPECT_TRUE(evaluates("abs(a)", F(2.5), {{"a", -2.5}}));
  EXPECT_TRUE(evaluates("abs(s)", kError, {{"s", "x"}}));
  EXPECT_TRUE(evaluates("ceil_div(a, b)", I(4), {{"a", 7}, {"b", 2}}));
  EXPECT_TRUE(evaluates("ceil_div(a, b)", I(4), {{"a", 8}, {"b", 2}}));
  EXPECT_TRUE(evaluates("ceil_div(a, b)", I(-3), {{"a", -7}, {"b", 2}}));
  EXPECT_TRUE(evaluates("ceil_div(a, b)", I(1), {{"a", 1}, {"b", 1024}}));
  EXPECT_TRUE(evaluates("ceil_div(a, b)", F(3.0), {{"a", 5.0}, {"b", 2}}));
}

// With a float operand ceil_div is a float division, which takes the least
// int64 (Python negates it to 2**63, a big int): no overflow. An int zero
// keeps no sign, as Python's -0 does not.
TEST(ExpressionFunctions, CeilDivWithAFloatTakesTheLeastInt64) {
  EXPECT_TRUE(evaluates("ceil_div(a, 1.0)", F(-9223372036854775808.0), {{"a", kMin}}));
  EXPECT_TRUE(evaluates("ceil_div(a, b)", F(4611686018427387904.0), {{"a", kMin}, {"b", -2.0}}));
  EXPECT_TRUE(evaluates("ceil_div(a, 1.0)", F(-0.0), {{"a", 0}}));
  EXPECT_TRUE(evaluates("ceil_div(a, 2.0)", F(4.0), {{"a", 7}}));
}

TEST(ExpressionFunctions, Conversions) {
  EXPECT_TRUE(evaluates("int(a)", I(2), {{"a", 2.9}}));
  EXPECT_TRUE(evaluates("int(a)", I(-2), {{"a", -2.9}}));
  EXPECT_TRUE(evaluates("int(s)", I(-12), {{"s", " -12 "}}));
  EXPECT_TRUE(evaluates("int(s)", kError, {{"s", "1.5"}}));
  EXPECT_TRUE(evaluates("int(a)", kError, {{"a", INFINITY}}));
  EXPECT_TRUE(evaluates("float(a)", F(3.0), {{"a", 3}}));
  EXPECT_TRUE(evaluates("float(s)", F(1.5), {{"s", "1.5"}}));
  EXPECT_TRUE(evaluates("float(s)", kError, {{"s", "abc"}}));
  EXPECT_TRUE(evaluates("round(a)", I(2), {{"a", 2.5}}));  // ties to even
  EXPECT_TRUE(evaluates("round(a)", I(4), {{"a", 3.5}}));
  EXPECT_TRUE(evaluates("round(a)", I(0), {{"a", -0.5}}));
  EXPECT_TRUE(evaluates("round(a)", I(-3), {{"a", -2.7}}));
  EXPECT_TRUE(evaluates("round(a)", I(7), {{"a", 7}}));
}

TEST(ExpressionLiterals, Numbers) {
  EXPECT_TRUE(evaluates("1e-3", F(1e-3)));
  EXPECT_TRUE(evaluates(".5", F(0.5)));
  EXPECT_TRUE(evaluates("2.", F(2.0)));
  EXPECT_TRUE(evaluates("1_000", I(1000)));
  EXPECT_TRUE(evaluates("0x10 + 0o10 + 0b10", I(26)));
  EXPECT_TRUE(evaluates("9223372036854775807", I(kMax)));
  EXPECT_TRUE(evaluates("-9223372036854775807 - 1", I(kMin)));
  EXPECT_TRUE(evaluates("True", I(1)));
  EXPECT_TRUE(evaluates("False", I(0)));
  EXPECT_TRUE(evaluates("2E3", F(2000.0)));
}

TEST(ExpressionEvaluate, SpanAndTest) {
  Expression e = Expression::parse("a * b + c");
  ASSERT_EQ(e.variables(), (std::vector<std::string>{"a", "b", "c"}));
  std::vector<Value> v{Value(2), Value(3), Value(4)};
  ASSERT_TRUE(e.evaluate(v).has_value());
  EXPECT_EQ(e.evaluate(v)->as_int(), 10);
  std::vector<Value> too_few{Value(2)};
  EXPECT_FALSE(e.evaluate(too_few).has_value());
  EXPECT_FALSE(e.test(too_few));

  EXPECT_FALSE(Expression::parse("0.0").test({}));
  EXPECT_TRUE(Expression::parse("'x'").test({}));
  EXPECT_FALSE(Expression::parse("''").test({}));

  // Order of first appearance, each name once.
  EXPECT_EQ(Expression::parse("c + a * b + a - c").variables(), (std::vector<std::string>{"c", "a", "b"}));
  EXPECT_EQ(Expression::parse("x if y else z").variables(), (std::vector<std::string>{"x", "y", "z"}));
}

TEST(ExpressionEvaluate, DefaultAndMovedFromAreEmpty) {
  Expression empty;
  EXPECT_EQ(empty.text(), "");
  EXPECT_TRUE(empty.variables().empty());
  EXPECT_FALSE(empty.evaluate(std::span<const Value>{}).has_value());
  EXPECT_FALSE(empty.test({}));
  EXPECT_THROW(empty.evaluate(Bindings{}), InputError);

  Expression a = Expression::parse("x + 1");
  Expression b = a;  // copies share the program
  Expression c = std::move(a);
  EXPECT_EQ(b.text(), "x + 1");
  EXPECT_EQ(c.evaluate(Bindings{{"x", 1}}).as_int(), 2);
  a = c;
  EXPECT_EQ(a.evaluate(Bindings{{"x", 2}}).as_int(), 3);
}

TEST(ExpressionEvaluate, BindingsErrorsNameTheProblem) {
  SourceLocation loc{"spec.yaml", 4, 9};
  Expression e = Expression::parse("a/b + 1", loc);
  EXPECT_EQ(e.evaluate(Bindings{{"a", 6}, {"b", 3}}).as_float(), 3.0);
  try {
    e.evaluate(Bindings{{"a", 1}});
    FAIL() << "expected an InputError";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("unknown name 'b'"), std::string::npos) << err.what();
    EXPECT_EQ(err.where().file, "spec.yaml");
    EXPECT_EQ(err.where().line, 4);
    EXPECT_EQ(err.where().column, 9);
  }
  try {
    e.evaluate(Bindings{{"a", 1}, {"b", 0}});
    FAIL() << "expected an InputError";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("division by zero in 'a/b'"), std::string::npos) << err.what();
    EXPECT_EQ(err.where().column, 9);
  }
  try {
    Expression::parse("n + 'x'").evaluate(Bindings{{"n", 1}});
    FAIL() << "expected an InputError";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("unsupported operand types for '+': 'int' and 'str'"), std::string::npos)
        << err.what();
  }
  try {
    Expression::parse("2 ** n").evaluate(Bindings{{"n", 80}});
    FAIL() << "expected an InputError";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("overflow"), std::string::npos) << err.what();
  }
}

TEST(ExpressionEvaluate, EvaluateInt) {
  Expression e = Expression::parse("N / 2");
  EXPECT_EQ(e.evaluate_int(Bindings{{"N", 8}}), 4);  // 4.0 is integral
  EXPECT_THROW(e.evaluate_int(Bindings{{"N", 7}}), InputError);
  EXPECT_EQ(Expression::parse("M * K").evaluate_int(Bindings{{"M", 256}, {"K", 128}}), 32768);
  EXPECT_THROW(Expression::parse("'x'").evaluate_int({}), InputError);
  EXPECT_THROW(Expression::parse("a * 1e300").evaluate_int(Bindings{{"a", 1e300}}), InputError);
}

TEST(ExpressionBind, FoldsConstantsAndKeepsFreeNames) {
  Expression e = Expression::parse("a * b + c");
  Expression b = e.bind({{"b", 2}});
  EXPECT_EQ(b.variables(), (std::vector<std::string>{"a", "c"}));
  std::vector<Value> v{Value(3), Value(1)};
  EXPECT_EQ(b.evaluate(v)->as_int(), 7);
  EXPECT_EQ(b.text(), e.text());

  Expression all = e.bind({{"a", 1}, {"b", 2}, {"c", 3}, {"unused", 9}});
  EXPECT_TRUE(all.variables().empty());
  EXPECT_EQ(all.evaluate(std::span<const Value>{})->as_int(), 5);

  // Only the names in the map are replaced.
  EXPECT_EQ(e.bind({{"zzz", 1}}).variables(), e.variables());

  // A decided 'and' drops its other operand and its names.
  Expression g = Expression::parse("use_column != 0 or n_y_blocks <= 1");
  Expression g0 = g.bind({{"use_column", 0}});
  EXPECT_EQ(g0.variables(), (std::vector<std::string>{"n_y_blocks"}));
  Expression g1 = g.bind({{"use_column", 1}});
  EXPECT_TRUE(g1.variables().empty());
  EXPECT_TRUE(g1.test({}));

  // A failing operation is left in place to fail at evaluation.
  Expression d = Expression::parse("a / b > 0").bind({{"b", 0}});
  EXPECT_EQ(d.variables(), (std::vector<std::string>{"a"}));
  std::vector<Value> one{Value(1)};
  EXPECT_FALSE(d.evaluate(one).has_value());
  try {
    d.evaluate(Bindings{{"a", 1}});
    FAIL();
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("division by zero in 'a / b'"), std::string::npos) << err.what();
  }

  // Strings and machine properties.
  EXPECT_TRUE(Expression::parse("mode == 'fast'").bind({{"mode", "fast"}}).test({}));
  Expression mem = Expression::parse("MC*KC*4 + KC*NC*4 <= l2_bytes").bind({{"l2_bytes", 1 << 20}});
  EXPECT_EQ(mem.variables(), (std::vector<std::string>{"MC", "KC", "NC"}));
  std::vector<Value> sizes{Value(64), Value(256), Value(512)};
  EXPECT_TRUE(mem.test(sizes));

  // Binding twice is the same as binding once.
  Expression twice = e.bind({{"a", 1}}).bind({{"b", 2}});
  EXPECT_EQ(twice.variables(), (std::vector<std::string>{"c"}));
  std::vector<Value> c{Value(3)};
  EXPECT_EQ(twice.evaluate(c)->as_int(), 5);
}

// ------------------------------------------------------------ parse errors

namespace {

// Parses `text` at spec.yaml:12:7 and returns the error.
std::optional<InputError> parse_error(std::string_view text) {
  try {
    Expression::parse(text, SourceLocation{"spec.yaml", 12, 7});
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

TEST(ExpressionParse, ErrorsPointAtTheOffendingCharacter) {
  struct Case {
    const char* text;
    int column;
    const char* message;
  };
  const Case cases[] = {
      {"(a + b", 13, "expected ')' to close '(' at column 7"},
      {"min(a, (b + c]", 20, "expected ')' to close '(' at column 14"},
      {"a + $", 11, "unexpected character '$'"},
      {"foo(a)", 7, "unknown function 'foo'"},
      {"a and", 12, "expected an expression after 'and'"},
      {"a and or b", 13, "expected an expression after 'and'"},
      {"1 +* 2", 10, "expected an expression after '+'"},
      {"a b", 9, "unexpected name 'b'"},
      {"a + b)", 12, "unmatched ')'"},
      {"", 7, "empty expression"},
      {"a = 1", 9, "did you mean '=='"},
      {"a && b", 9, "use 'and'"},
      {"!a", 7, "use 'not'"},
      {"x == 'abc", 12, "unterminated string literal"},
      {"[1, 2]", 7, "only be used on the right of 'in'"},
      {"x in [1, 2", 17, "expected ']' to close '[' at column 12"},
      {"99999999999999999999 + 1", 7, "does not fit in 64 bits"},
      {"a is b", 9, "'is' is not supported"},
      {"min(a)", 7, "min() expects at least 2 arguments"},
      {"abs(a, b)", 7, "abs() expects 1 argument, got 2"},
      {"ceil_div(a)", 7, "ceil_div() expects 2 arguments, got 1"},
      {"x ≤ 3", 9, "unexpected character '≤'"},
      {"'é' == x $", 16, "unexpected character '$'"},  // columns count characters, not bytes
      {"1e", 7, "expected digits after the exponent"},
      {"012", 7, "leading zeros"},
      {"a if b", 13, "expected 'else'"},
      {"None", 7, "'None' is not supported"},
      // Kernel Tuner's restrictions as functions of the config.
      {"lambda p: p['a'] <= 2", 7, "a Python lambda (Kernel Tuner's restriction as a function)"},
      {"  lambda: 1", 9, "write its body over the parameter names"},
      {"p['a'] <= 2", 8, "unexpected '[' after 'p': there is no subscript"},
  };
  for (const auto& c : cases) {
    auto err = parse_error(c.text);
    ASSERT_TRUE(err.has_value()) << "'" << c.text << "' parsed";
    EXPECT_EQ(err->where().file, "spec.yaml") << c.text;
    EXPECT_EQ(err->where().line, 12) << c.text;
    EXPECT_EQ(err->where().column, c.column) << c.text << ": " << err->what();
    EXPECT_NE(err->message().find(c.message), std::string::npos) << c.text << ": " << err->what();
    std::string prefix = "spec.yaml:12:" + std::to_string(c.column) + ": ";
    EXPECT_EQ(std::string(err->what()).rfind(prefix, 0), 0u) << err->what();
  }
}

TEST(ExpressionParse, UnknownLocationCountsFromOne) {
  try {
    Expression::parse("a +");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().column, 4);
    EXPECT_STREQ(e.what(), "column 4: expected an expression after '+'");
  }
  // Given on the command line, the flag and its text are the place, and the
  // column is said apart from the text (not glued on as ":4").
  try {
    Expression::parse("a +", SourceLocation{"--where a +"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--where a + (column 4): expected an expression after '+'");
  }
}

TEST(ExpressionParse, AcceptsWhitespaceAndNesting) {
  EXPECT_TRUE(evaluates("  ( ( 1 ) )  ", I(1)));
  EXPECT_TRUE(evaluates("min(\n a,\t b )", I(1), {{"a", 1}, {"b", 2}}));
  EXPECT_TRUE(evaluates("max(1, 2,)", I(2)));
  std::string deep = std::string(200, '(') + "1" + std::string(200, ')');
  EXPECT_TRUE(evaluates(deep, I(1)));
  std::string wide = "x";
  for (int i = 0; i < 100; ++i) wide += " + x";
  EXPECT_TRUE(evaluates(wide, I(101), {{"x", 1}}));
  std::string stack = "0";
  for (int i = 0; i < 60; ++i) stack = "(x + " + stack + ")";  // deeper than the inline stack
  EXPECT_TRUE(evaluates(stack, I(60), {{"x", 1}}));
}

// Every form that nests, however long, ends as the located error, not as a
// stack overflow: a chain of `**` (right-associative, so each one a level
// deeper) crashed at 20,000 terms.
TEST(ExpressionParse, DeepNestingOfEveryFormIsAnErrorNotACrash) {
  auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const int n = 30000;
  for (const std::string& text :
       {"1" + repeat("**1", n), repeat("(", n) + "1" + repeat(")", n), repeat("-", n) + "1", repeat("not ", n) + "1",
        "1" + repeat("+1", n), repeat("abs(", n) + "1" + repeat(")", n), "1" + repeat(" if 1 else 1", n)}) {
    auto err = parse_error(text);
    ASSERT_TRUE(err.has_value()) << text.substr(0, 20) << " parsed";
    EXPECT_NE(err->message().find("nested too deeply"), std::string::npos)
        << text.substr(0, 20) << ": " << err->message();
  }
}
