#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "evaluator/detail/verify.hpp"
#include "tunekit/evaluator.hpp"

using namespace tunekit;

TEST(CompareOutputs, WithinToleranceReportsMaxDiffs) {
  std::vector<float> expected{1.0f, 2.0f, -4.0f};
  std::vector<float> got{1.0f, 2.001f, -4.0f};
  Verification v = compare_outputs(ElementType::f32, got.data(), expected.data(), 3, {1e-2, 0}, "C");
  EXPECT_TRUE(v.checked);
  EXPECT_TRUE(v.passed);
  EXPECT_NEAR(v.max_abs_diff, 0.001, 1e-6);
  EXPECT_NEAR(v.max_rel_err, 0.0005, 1e-6);
}

TEST(CompareOutputs, OutsideToleranceNamesFirstMismatch) {
  std::vector<double> expected{1, 2, 3, 4};
  std::vector<double> got{1, 2, 3.5, 5};
  Verification v = compare_outputs(ElementType::f64, got.data(), expected.data(), 4, {0.1, 0.0}, "out");
  EXPECT_FALSE(v.passed);
  EXPECT_DOUBLE_EQ(v.max_abs_diff, 1.0);
  EXPECT_NE(v.detail.find("2 of 4"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("[2]"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("out"), std::string::npos) << v.detail;
}

TEST(CompareOutputs, RelativeToleranceScalesWithMagnitude) {
  std::vector<float> expected{1000.0f};
  std::vector<float> got{1000.5f};
  EXPECT_TRUE(compare_outputs(ElementType::f32, got.data(), expected.data(), 1, {0.0, 1e-3}, "x").passed);
  EXPECT_FALSE(compare_outputs(ElementType::f32, got.data(), expected.data(), 1, {0.0, 1e-4}, "x").passed);
}

TEST(CompareOutputs, NaNInOutputFails) {
  std::vector<float> expected{1.0f, 2.0f};
  std::vector<float> got{1.0f, NAN};
  Verification v = compare_outputs(ElementType::f32, got.data(), expected.data(), 2, {1e9, 1e9}, "C");
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(std::isinf(v.max_abs_diff));
}

TEST(CompareOutputs, NaNWhereReferenceIsNaNPasses) {
  std::vector<float> expected{NAN};
  std::vector<float> got{NAN};
  EXPECT_TRUE(compare_outputs(ElementType::f32, got.data(), expected.data(), 1, {0, 0}, "C").passed);
  std::vector<float> number{1.0f};
  EXPECT_FALSE(compare_outputs(ElementType::f32, number.data(), expected.data(), 1, {0, 0}, "C").passed);
}

// An infinity is a right answer (a masked score, log 0) only as itself:
// inf - inf is NaN, which failed every output that matched it.
TEST(CompareOutputs, AnInfinityInTheReferenceIsMatchedByTheSameOne) {
  for (ElementType type : {ElementType::f32, ElementType::f64}) {
    std::vector<double> expected64{-INFINITY, 1.0, INFINITY};
    std::vector<float> expected32(expected64.begin(), expected64.end());
    auto verdict = [&](std::vector<double> got64, Tolerance tol) {
      std::vector<float> got32(got64.begin(), got64.end());
      return type == ElementType::f32 ? compare_outputs(type, got32.data(), expected32.data(), 3, tol, "S")
                                      : compare_outputs(type, got64.data(), expected64.data(), 3, tol, "S");
    };
    const Verification same = verdict({-INFINITY, 1.0, INFINITY}, {1e-6, 1e-5});
    EXPECT_TRUE(same.passed) << same.detail;
    EXPECT_EQ(same.max_abs_diff, 0.0);
    for (const auto& got :
         std::vector<std::vector<double>>{{-INFINITY, 1.0, -INFINITY}, {-INFINITY, 1.0, 1e30}, {-INFINITY, 1.0, NAN}}) {
      const Verification v = verdict(got, {1e9, 1e9});
      EXPECT_FALSE(v.passed);
      EXPECT_NE(v.detail.find("[2]"), std::string::npos) << v.detail;
    }
  }
}

TEST(CompareOutputs, IntegersExactUnlessTolerated) {
  std::vector<std::int32_t> expected{5, 7};
  std::vector<std::int32_t> got{5, 8};
  EXPECT_FALSE(compare_outputs(ElementType::i32, got.data(), expected.data(), 2, {0, 0}, "n").passed);
  EXPECT_TRUE(compare_outputs(ElementType::i32, got.data(), expected.data(), 2, {1, 0}, "n").passed);
}

// Outputs of 16 and 32-bit floats are screened block by block in float
// (verify.cpp); the verdict must be the element rule's, to the element.
namespace {

double half_to_double(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1f) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(mantissa | 0x400, exponent - 25);
}

double bf16_to_double(std::uint16_t b) {
  const std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

struct Rule {
  std::uint64_t bad = 0, first = 0;
  double max_abs = 0;
};

// The rule as docs/spec-format.md ("Arguments") states it, element by element.
Rule element_rule(const std::vector<double>& got, const std::vector<double>& expected, Tolerance tol) {
  Rule r;
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (std::isnan(expected[i])) {
      ok = std::isnan(got[i]);
    } else if (std::isinf(expected[i])) {  // only the same infinity
      ok = got[i] == expected[i];
      if (!ok) r.max_abs = INFINITY;
    } else {
      const double d = std::fabs(got[i] - expected[i]);
      ok = std::isfinite(d) && d <= tol.atol + tol.rtol * std::fabs(expected[i]);
      if (std::isfinite(d)) r.max_abs = std::max(r.max_abs, d);
      else r.max_abs = INFINITY;
    }
    if (!ok && !r.bad++) r.first = i;
  }
  return r;
}

// Pairs of 16-bit outputs: most within the tolerance, some exactly on its
// bound, some one step over, and, with `specials`, zeros, subnormals,
// infinities and NaN, spread over several blocks and a ragged tail.
template <class Decode>
void check_16_bit(ElementType type, Decode decode, std::uint16_t one, bool specials, std::uint32_t seed) {
  const std::size_t n = 3 * 4096 + 37;
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> expected(n), got(n);
  for (std::size_t i = 0; i < n; ++i) {
    expected[i] = static_cast<std::uint16_t>(one + (rng() & 0x3f));  // [1, 2), few steps apart
    got[i] = expected[i];
    const std::uint32_t roll = rng() % 1000;
    if (roll < 300) got[i] = static_cast<std::uint16_t>(expected[i] + (rng() % 3));                   // 0 to 2 steps up
    else if (roll < 310) got[i] = static_cast<std::uint16_t>(expected[i] + 8);                        // on the bound
    else if (roll < 313) got[i] = static_cast<std::uint16_t>(expected[i] + 9);                        // one step over
    else if (specials && roll < 320) expected[i] = got[i] = 0;                                        // zeros
    else if (specials && roll < 323) expected[i] = got[i] = static_cast<std::uint16_t>(rng() & 0x3);  // subnormals
    else if (specials && roll < 325) got[i] = 0x7fff;                                                 // NaN
    else if (specials && roll < 327) expected[i] = got[i] = 0x7f80;  // bfloat16 infinity
  }
  // One step of the values in [1, 2) is 2^-7 (bfloat16) or 2^-10 (half):
  // the bound is 8 steps, as atol, with rtol 0.
  const double step = decode(static_cast<std::uint16_t>(one + 1)) - decode(one);
  const Tolerance tol{8 * step, 0.0};
  for (std::size_t len : {n, std::size_t{4096}, std::size_t{5}}) {
    std::vector<double> g(len), e(len);
    for (std::size_t i = 0; i < len; ++i) {
      g[i] = decode(got[i]);
      e[i] = decode(expected[i]);
    }
    const Rule rule = element_rule(g, e, tol);
    const Verification v = compare_outputs(type, got.data(), expected.data(), len, tol, "C");
    SCOPED_TRACE(testing::Message() << "seed " << seed << ", " << len << " elements");
    EXPECT_EQ(v.passed, rule.bad == 0);
    if (rule.bad) {
      EXPECT_NE(v.detail.find(fmt::format("{} of {}", rule.bad, len)), std::string::npos) << v.detail;
      EXPECT_NE(v.detail.find(fmt::format("[{}]", rule.first)), std::string::npos) << v.detail;
    }
    if (std::isinf(rule.max_abs)) EXPECT_TRUE(std::isinf(v.max_abs_diff));
    else EXPECT_NEAR(v.max_abs_diff, rule.max_abs, rule.max_abs * 1e-6);
  }
}

}  // namespace

TEST(CompareOutputs, ScreenedBFloat16AgreesWithTheElementRule) {
  for (std::uint32_t seed : {1u, 2u, 3u}) check_16_bit(ElementType::bf16, bf16_to_double, 0x3f80, true, seed);
}

TEST(CompareOutputs, ScreenedHalfAgreesWithTheElementRule) {
  // 0x7f80 is a half NaN too; the subnormals are the half's own.
  for (std::uint32_t seed : {1u, 2u, 3u}) check_16_bit(ElementType::f16, half_to_double, 0x3c00, true, seed);
}

TEST(CompareOutputs, ScreenedBlocksWithinToleranceStillReportTheirMaxima) {
  // Every element passes, so every block is decided by the screen alone.
  for (std::uint32_t seed : {4u, 5u}) check_16_bit(ElementType::bf16, bf16_to_double, 0x3f80, false, seed);
}

TEST(CompareOutputs, ScreenedFloatOnTheBoundPasses) {
  // d == atol + rtol * |e| exactly in double: the element rule passes it,
  // the float screen leaves it to the careful loop, which must agree.
  const std::size_t n = 2 * 4096 + 3;
  std::vector<float> expected(n, 3.0f), got(n, 3.0f);
  got[5000] = 3.5f;
  const Tolerance tol{0.25, 0.25 / 3.0};  // 0.25 + 0.25 / 3 * 3: not exact in double either way
  const double bound = tol.atol + tol.rtol * 3.0;
  const Verification v = compare_outputs(ElementType::f32, got.data(), expected.data(), n, tol, "C");
  EXPECT_EQ(v.passed, 0.5 <= bound) << bound;
  const Tolerance exact{0.5, 0.0};
  EXPECT_TRUE(compare_outputs(ElementType::f32, got.data(), expected.data(), n, exact, "C").passed);
  got[6000] = std::nextafter(3.5f, 4.0f);
  const Verification over = compare_outputs(ElementType::f32, got.data(), expected.data(), n, exact, "C");
  EXPECT_FALSE(over.passed);
  EXPECT_NE(over.detail.find("1 of 8195"), std::string::npos) << over.detail;
  EXPECT_NE(over.detail.find("[6000]"), std::string::npos) << over.detail;
}

// The summary names the tolerance that admitted the outputs by their maxima
// (max abs diff <= atol: every element within atol). A block the float
// screen passes has float-rounded maxima; where one is that close to a
// tolerance, the block's maxima are the careful loop's, exact in double.
TEST(CompareOutputs, AMaximumAtAToleranceIsExactNotFloatRounded) {
  std::vector<float> expected(4096, 1.0f), got(4096, 1.0f);
  got[7] = -std::ldexp(1.0f, -30);  // off by 1 + 2^-30, which float's difference rounds to 1
  const Tolerance tol{1.0, 0.5};    // passed only by atol + rtol x |ref| = 1.5
  const Verification v = compare_outputs(ElementType::f32, got.data(), expected.data(), got.size(), tol, "C");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.max_abs_diff, 1.0 + std::ldexp(1.0, -30));  // above atol: not "within atol"
  EXPECT_EQ(v.max_rel_err, 1.0 + std::ldexp(1.0, -30));
  // Far from either tolerance, the screen's maxima stand (within float's
  // rounding of the exact ones).
  got[7] = 1.25f;
  const Verification far = compare_outputs(ElementType::f32, got.data(), expected.data(), got.size(), tol, "C");
  EXPECT_TRUE(far.passed);
  EXPECT_EQ(far.max_abs_diff, 0.25);
}

TEST(CompareOutputs, NegativeToleranceFailsEvenEqualOutputsAsTheRuleSays) {
  // No spec can give one (tolerances are >= 0), but compare_outputs is
  // public: the screen must not pass what the rule fails.
  const std::vector<float> same(5000, 1.0f);
  EXPECT_FALSE(compare_outputs(ElementType::f32, same.data(), same.data(), same.size(), {-1e-3, 0}, "C").passed);
}

// A large output is compared in parts on several threads; whatever the
// number of parts, the verdict, the count, the first failure (in detail)
// and the maxima are those of one pass.
TEST(CompareOutputs, PartsGiveTheVerdictOfOnePass) {
  const std::uint64_t n = 3 * detail::kVerifyPartElements + 37;
  std::vector<float> expected(n), got(n);
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = got[i] = 1.0f + static_cast<float>(i % 1000) / 1000;
  const Tolerance tol{1e-3, 0};
  auto check = [&](const std::string& what) {
    SCOPED_TRACE(what);
    const Verification one =
        detail::compare_outputs_in_parts(ElementType::f32, got.data(), expected.data(), n, tol, "C", 1);
    for (std::size_t parts : {2, 3, 8}) {
      const Verification v =
          detail::compare_outputs_in_parts(ElementType::f32, got.data(), expected.data(), n, tol, "C", parts);
      EXPECT_EQ(v.passed, one.passed) << parts;
      EXPECT_EQ(v.detail, one.detail) << parts;
      EXPECT_EQ(v.max_abs_diff, one.max_abs_diff) << parts;
      EXPECT_EQ(v.max_rel_err, one.max_rel_err) << parts;
    }
    return one;
  };
  EXPECT_TRUE(check("all equal").passed);
  // Within the tolerance, the largest difference in the last part.
  got[n - 5] += 5e-4f;
  got[10] += 1e-4f;
  const Verification close = check("within the tolerance");
  EXPECT_TRUE(close.passed);
  EXPECT_NEAR(close.max_abs_diff, 5e-4, 1e-6);
  // Failures in the second and third parts, and a NaN in the last: the first
  // is the second part's.
  const std::uint64_t first = detail::kVerifyPartElements + 4099;
  got[first] += 0.5f;
  got[2 * detail::kVerifyPartElements + 1] -= 0.25f;
  got[n - 1] = NAN;
  const Verification wrong = check("three failures");
  EXPECT_FALSE(wrong.passed);
  EXPECT_NE(wrong.detail.find(fmt::format("3 of {} elements differ; first at [{}]", n, first)), std::string::npos)
      << wrong.detail;
  EXPECT_TRUE(std::isinf(wrong.max_abs_diff));
}

// A float element is told in its own shortest form: its double's 17 digits
// pushed the console's one line past its limit, and the cut took where the
// first difference was and what the kernel wrote there.
TEST(CompareOutputs, AFloatIsToldInItsOwnShortestForm) {
  std::vector<float> expected(1000, -0.0712432f), got = expected;
  got[999] = NAN;
  const Verification v =
      detail::compare_outputs_in_parts(ElementType::f32, got.data(), expected.data(), got.size(), {1e-6, 1e-5}, "c", 1);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.detail,
            "c: 1 of 1000 elements differ; first at [999]: got nan, expected -0.0712432 (atol 1e-06, rtol 1e-05)");
}

// A 16-bit float output one unit in its last place from the reference's (a
// sum rounded once differently) passes under its type's default tolerance;
// under f32's (rtol 1e-5) it failed. Bit patterns: 0x3c00 is 1 in both f16
// and (0x3f80) bf16; the next pattern up is one unit above.
TEST(CompareOutputs, OneUnitInTheLastPlaceOfA16BitFloatPassesItsDefaultTolerance) {
  for (auto [type, one] :
       {std::pair{ElementType::f16, std::uint16_t{0x3c00}}, std::pair{ElementType::bf16, std::uint16_t{0x3f80}}}) {
    const std::vector<std::uint16_t> expected(64, one), got(64, static_cast<std::uint16_t>(one + 1));
    const auto compared = [&](const Tolerance& tol) {
      return compare_outputs(type, got.data(), expected.data(), got.size(), tol, "y").passed;
    };
    EXPECT_TRUE(compared(default_tolerance(type))) << to_string(type);
    EXPECT_FALSE(compared(default_tolerance(ElementType::f32))) << to_string(type);
  }
}
