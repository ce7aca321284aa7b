#include <gtest/gtest.h>

#include "evaluator/detail/protocol.hpp"
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

// A buffer whose count reads a parameter may be too big for the device for
// that config alone; the workers then keep an allocation refused for it as
// the config's failure, not the machine's.
TEST(ResolveArguments, ABufferTheConfigSizesIsMarked) {
  ArgumentSpec fixed, tiled, shaped;
  fixed.name = "x";
  fixed.size = Expression::parse("M * K");
  tiled.name = "scratch";
  tiled.size = Expression::parse("M * BM");
  shaped.name = "t";
  shaped.shape = {Expression::parse("M"), Expression::parse("BM")};
  const Bindings env{{"M", 128}, {"K", 64}, {"BM", 32}};
  const auto r = resolve_arguments({fixed, tiled, shaped}, env, Config({{"BM", Value(32)}}));
  ASSERT_EQ(r.size(), 3u);
  EXPECT_FALSE(r[0].sized_by_config);
  EXPECT_TRUE(r[1].sized_by_config);
  EXPECT_TRUE(r[2].sized_by_config);
  // Without the config, nothing tells the parameters from the sizes.
  EXPECT_FALSE(resolve_arguments({tiled}, env)[0].sized_by_config);

  tunekit::detail::WorkerRequest rq;
  rq.arguments = r;
  const auto back = tunekit::detail::request_from_json(tunekit::detail::to_json(rq));
  EXPECT_FALSE(back.arguments[0].sized_by_config);
  EXPECT_TRUE(back.arguments[1].sized_by_config);
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
