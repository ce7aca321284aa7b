#include <gtest/gtest.h>

#include <cmath>

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

TEST(CompareOutputs, IntegersExactUnlessTolerated) {
  std::vector<std::int32_t> expected{5, 7};
  std::vector<std::int32_t> got{5, 8};
  EXPECT_FALSE(compare_outputs(ElementType::i32, got.data(), expected.data(), 2, {0, 0}, "n").passed);
  EXPECT_TRUE(compare_outputs(ElementType::i32, got.data(), expected.data(), 2, {1, 0}, "n").passed);
}
