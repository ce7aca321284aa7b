#include <gtest/gtest.h>

#include "tunekit/evaluator.hpp"

using namespace tunekit;

TEST(ResolveArguments, SizesAndScalarsFromSizesAndParameters) {
  ArgumentSpec a;
  a.name = "A";
  a.size = Expression::parse("M*K + PAD");
  ArgumentSpec m;
  m.name = "M";
  m.role = Role::scalar;
  m.type = ElementType::i32;
  m.value = Expression::parse("M // BM");
  auto r = resolve_arguments({a, m}, {{"M", 128}, {"K", 64}, {"PAD", 4}, {"BM", 32}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].count, 128u * 64 + 4);
  EXPECT_EQ(r[1].scalar, Value(4));
}

TEST(ResolveArguments, UnboundNameIsAnInputError) {
  ArgumentSpec a;
  a.name = "A";
  a.size = Expression::parse("N*N", {"spec.yaml", 3, 20});
  try {
    resolve_arguments({a}, {{"M", 1}});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("spec.yaml:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("N"), std::string::npos) << e.what();
  }
}

TEST(ResolveArguments, NegativeSizeIsAnInputError) {
  ArgumentSpec a;
  a.name = "A";
  a.size = Expression::parse("N - 10");
  EXPECT_THROW(resolve_arguments({a}, {{"N", 2}}), InputError);
}
