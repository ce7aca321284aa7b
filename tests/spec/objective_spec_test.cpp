// `metrics:` and `objective:` in a spec, the spec's size order, and why a
// default config is not valid on a machine (issue #20).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/spec_errors.hpp"
#include "tunekit/spec.hpp"

using namespace tunekit;
using ::testing::HasSubstr;
using ::testing::Not;
using tunekit::testing::SpecErrors;

namespace {

const std::string kHead = R"Y(kernel: {source: k.cpp, entry: k}
arguments: [{name: n, type: i32, value: M}]
sizes: [{N: 64, M: 32, K: 16}]
parameters: {BM: [16, 32], BK: [8, 16]}
)Y";

}  // namespace

TEST_F(SpecErrors, MetricsAndObjectiveLoad) {
  Spec s = load_spec(write(kHead + R"Y(metrics:
  gflops: "2 * M * N * K / time_s / 1e9"
  per_tile: "time_us / (BM * BK)"
objective: {maximize: gflops}
)Y"));
  ASSERT_EQ(s.metrics.size(), 2u);
  EXPECT_EQ(s.metrics[0].name, "gflops");
  EXPECT_EQ(s.metrics[1].name, "per_tile");
  EXPECT_EQ(s.objective.name, "gflops");
  EXPECT_TRUE(s.objective.maximize);
  // The sizes in the order the spec declares them, not alphabetical.
  EXPECT_EQ(s.size_names, (std::vector<std::string>{"N", "M", "K"}));
}

TEST_F(SpecErrors, ObjectiveDefaultsToTime) {
  Spec s = load_spec(write(kHead));
  EXPECT_TRUE(s.objective.is_time());
  EXPECT_FALSE(s.objective.maximize);
  EXPECT_TRUE(load_spec(write(kHead + "objective: time\n")).objective.is_time());
}

TEST_F(SpecErrors, MetricErrorsAreLocated) {
  expect_error(kHead + "metrics: {gflops: \"2 * M * Q / time_s\"}\n", 5, 20, "'Q', which is neither a size");
  expect_error(kHead + "metrics: {gflops: \"2 * M / tme_s\"}\n", 5, 20, "did you mean 'time_s'?");
  expect_error(kHead + "metrics: {BM: \"time_s\"}\n", 5, 11, "has the name of a size or parameter");
  expect_error(kHead + "metrics: {time_us: \"time_s\"}\n", 5, 11, "has the name of a measured time");
  expect_error(kHead + "metrics: [gflops]\n", 5, 10, "must be a mapping of metric names to expressions");
  // A parameter or size named as the time would be read as the time.
  const std::string timed =
      "kernel: {source: k.cpp, entry: k}\narguments: []\nsizes: [{N: 64}]\n"
      "parameters: {time_s: [8, 16]}\nmetrics: {g: \"N / time_s\"}\n";
  expect_error(timed, 4, 14, "parameter 'time_s' has the name a metric reads the measured time by");
}

TEST_F(SpecErrors, ObjectiveErrorsAreLocated) {
  const std::string metrics = "metrics: {gflops: \"M / time_s\"}\n";
  expect_error(kHead + metrics + "objective: {maximize: glops}\n", 6, 23, "did you mean 'gflops'?");
  expect_error(kHead + metrics + "objective: gflops\n", 6, 12, "say which way is better");
  expect_error(kHead + metrics + "objective: {maximize: time}\n", 6, 23, "time can only be minimised");
  expect_error(kHead + metrics + "objective: {fastest: gflops}\n", 6, 13, "unknown key 'fastest'");
}

TEST_F(SpecErrors, DefaultProblemNamesTheConstraintAndTheMachineProperty) {
  Spec s = load_spec(write(kHead + R"Y(constraints:
  - l1d_bytes // 2 <= BM * BK * 4 <= l1d_bytes
default: {BM: 16, BK: 8}
)Y"));
  const Bindings size = s.sizes.front();
  // 512 bytes of tile: valid with a 1 KiB L1d, not with a 48 KiB one.
  EXPECT_FALSE(default_config_problem(s, size, {{"l1d_bytes", Value(1024)}}));
  auto why = default_config_problem(s, size, {{"l1d_bytes", Value(49152)}});
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("the default {BM: 16, BK: 8} breaks the constraint `l1d_bytes // 2 <= BM * BK * 4 <= "
                              "l1d_bytes`"));
  EXPECT_THAT(*why, HasSubstr(":6:5)"));  // where the spec states it
  EXPECT_THAT(*why, HasSubstr("BM = 16, BK = 8 and the machine's l1d_bytes = 49152"));
  EXPECT_THAT(*why, HasSubstr("depends on the machine"));
}

// A constraint that names a machine property but fails on the default's own
// values fails on every machine: the message says so by not naming it.
TEST_F(SpecErrors, DefaultProblemNamesTheMachineOnlyWhenItDecides) {
  Spec s = load_spec(write(kHead + R"Y(constraints:
  - BM * BK * 4 <= l1d_bytes and BK > M // 2
default: {BM: 16, BK: 8}
)Y"));
  const Bindings size = s.sizes.front();  // M = 32: BK > 16 fails for BK = 8 wherever it runs
  for (const std::int64_t l1d : {256, 49152}) {
    auto why = default_config_problem(s, size, {{"l1d_bytes", Value(l1d)}});
    ASSERT_TRUE(why) << l1d;
    EXPECT_THAT(*why, HasSubstr("with BM = 16, BK = 8, M = 32 at size")) << *why;
    EXPECT_THAT(*why, Not(HasSubstr("l1d_bytes ="))) << *why;
    EXPECT_THAT(*why, Not(HasSubstr("depends on the machine"))) << *why;
  }
  // With BK > 4 instead, only the machine's L1d can break it.
  Spec t = load_spec(write(kHead + R"Y(constraints:
  - BM * BK * 4 <= l1d_bytes and BK > 4
default: {BM: 16, BK: 8}
)Y"));
  auto why = default_config_problem(t, t.sizes.front(), {{"l1d_bytes", Value(256)}});
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("the machine's l1d_bytes = 256"));
  EXPECT_THAT(*why, HasSubstr("depends on the machine"));
}

TEST_F(SpecErrors, DefaultOutsideItsLists) {
  Spec s = load_spec(write(kHead + "default: {BM: 24, BK: 8}\n"));
  auto why = default_config_problem(s, s.sizes.front(), {});
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("outside its lists: BM = 24 is not among BM's values [16, 32]"));
}

// The early stop compares times: under a metric objective, a spec that turns
// it on is refused where it does; off, or left out, loads.
TEST_F(SpecErrors, EarlyStopOnlyUnderTheTimeObjective) {
  const std::string metric = "metrics: {cost: \"time_us * BM\"}\nobjective: {minimize: cost}\n";
  expect_error(kHead + metric + "measure: {early_stop: 3}\n", 7, 23,
               "'measure.early_stop' turns the early stop on, but the early stop compares times, and the objective "
               "is cost (lower is better), by which a config slower in time can still be the best; expected off");
  EXPECT_DOUBLE_EQ(load_spec(write(kHead + metric + "measure: {early_stop: off}\n")).measure.early_stop, 0.0);
  // Left out, the factor stays the default, which the tune does not apply.
  EXPECT_NO_THROW(load_spec(write(kHead + metric)));
  EXPECT_DOUBLE_EQ(load_spec(write(kHead + "measure: {early_stop: 2}\n")).measure.early_stop, 2.0);
}
