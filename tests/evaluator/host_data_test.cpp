#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "evaluator/detail/host_data.hpp"

using namespace tunekit;
using namespace tunekit::detail;

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(to_half(1.0f).bits, 0x3c00);
  EXPECT_EQ(to_half(-2.0f).bits, 0xc000);
  EXPECT_EQ(to_half(65504.0f).bits, 0x7bff);       // largest finite
  EXPECT_EQ(to_half(1e6f).bits, 0x7c00);           // overflow to inf
  EXPECT_EQ(to_half(5.9604645e-8f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(to_half(0.0f).bits, 0x0000);
  EXPECT_TRUE(std::isnan(to_float(to_half(NAN))));
  EXPECT_FLOAT_EQ(to_float(Half{0x3555}), 0.333251953125f);
}

TEST(Half, RoundTripsEveryFiniteValue) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const Half h{static_cast<std::uint16_t>(b)};
    const float f = to_float(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(to_half(f).bits, h.bits) << std::hex << b;
  }
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties to even -> 1.
  EXPECT_EQ(to_half(1.0f + 0x1.0p-11f).bits, 0x3c00);
  EXPECT_EQ(to_half(1.0f + 3 * 0x1.0p-11f).bits, 0x3c02);
}

TEST(BFloat16, ConversionsRoundToNearestEven) {
  EXPECT_EQ(to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_bfloat16(-3.0f).bits, 0xc040);
  EXPECT_FLOAT_EQ(to_float(BFloat16{0x3f80}), 1.0f);
  EXPECT_EQ(to_bfloat16(1.0f + 0x1.0p-8f).bits, 0x3f80);      // tie -> even
  EXPECT_EQ(to_bfloat16(1.0f + 3 * 0x1.0p-8f).bits, 0x3f82);  // tie -> even (up)
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(NAN))));
}

TEST(HostData, FillIsDeterministicAndInRange) {
  ResolvedArgument a{"x", ElementType::f32, Role::in, 1000, Fill::random, 0, {}};
  std::vector<float> x(1000), y(1000);
  fill(x.data(), a, 7);
  fill(y.data(), a, 7);
  EXPECT_EQ(x, y);
  for (float v : x) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  fill(y.data(), a, 8);
  EXPECT_NE(x, y);
}

// `fill: normal` (Kernel Tuner's numpy.random.randn): standard normal, so
// about 68% of the values within one of 0, and the same for the same seed.
TEST(HostData, NormalFillIsStandardNormal) {
  constexpr std::size_t n = 20000;
  ResolvedArgument a{"x", ElementType::f64, Role::in, n, Fill::normal, 0, {}};
  std::vector<double> x(n), y(n);
  fill(x.data(), a, 3);
  fill(y.data(), a, 3);
  EXPECT_EQ(x, y);
  double sum = 0, squares = 0;
  std::size_t within_one = 0;
  for (double v : x) {
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    squares += v * v;
    within_one += std::abs(v) < 1;
  }
  const double mean = sum / n, variance = squares / n - mean * mean;
  // Bounds of about 5 standard errors: a uniform fill (variance 1/3) fails.
  EXPECT_NEAR(mean, 0.0, 0.04);
  EXPECT_NEAR(variance, 1.0, 0.05);
  EXPECT_NEAR(static_cast<double>(within_one) / n, 0.6827, 0.017);
}

TEST(HostData, SequenceAndConstantInEveryType) {
  ResolvedArgument a{"x", ElementType::bf16, Role::in, 4, Fill::sequence, 2.0, {}};
  std::vector<BFloat16> b(4);
  fill(b.data(), a, 1);
  EXPECT_FLOAT_EQ(to_float(b[3]), 5.0f);
  a.type = ElementType::i16;
  a.fill = Fill::constant;
  a.fill_value = -3;
  std::vector<std::int16_t> i(4);
  fill(i.data(), a, 1);
  EXPECT_EQ(i[2], -3);
}

TEST(HostData, PoisonedHalfOutputsFailVerification) {
  std::vector<Half> out(3), ref(3, to_half(1.0f));
  poison(out.data(), ElementType::f16, 3);
  EXPECT_FALSE(compare_outputs(ElementType::f16, out.data(), ref.data(), 3, {1, 1}, "o").passed);
  out.assign(3, to_half(1.0f));
  EXPECT_TRUE(compare_outputs(ElementType::f16, out.data(), ref.data(), 3, {0, 0}, "o").passed);
}

TEST(HostData, ScalarBitsInTheArgumentsType) {
  ResolvedArgument a{"n", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(-5)};
  std::uint64_t bits = scalar_bits(a);
  std::int32_t v;
  std::memcpy(&v, &bits, 4);
  EXPECT_EQ(v, -5);
  a.type = ElementType::f32;
  a.scalar = Value(0.5);
  bits = scalar_bits(a);
  float f;
  std::memcpy(&f, &bits, 4);
  EXPECT_EQ(f, 0.5f);
}
