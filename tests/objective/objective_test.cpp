// Metrics computed on read from a trial's time, size and config, and the
// objective's value, cost and gain (objective.hpp).
#include <gtest/gtest.h>

#include <limits>

#include "tunekit/objective.hpp"

using namespace tunekit;

namespace {

TrialRecord trial(double us, std::int64_t bm, Status status = Status::ok) {
  TrialRecord t;
  t.size = {{"M", Value(1000)}, {"N", Value(2000)}};
  t.config.set("BM", Value(bm));
  t.status = status;
  t.stats.median = Microseconds(us);
  t.stats.count = 5;
  return t;
}

std::vector<Metric> metrics() {
  return {{"gpoints", Expression::parse("M * N / time_s / 1e9")},
          {"per_row", Expression::parse("time_us / BM")},
          {"broken", Expression::parse("time_us / (BM - BM)")}};
}

}  // namespace

TEST(Metrics, ComputedFromTimeSizeAndConfig) {
  auto values = metric_values(metrics(), trial(1000, 4));
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0].first, "gpoints");
  ASSERT_TRUE(values[0].second);
  EXPECT_DOUBLE_EQ(*values[0].second, 2.0);  // 2e6 points in 1 ms
  ASSERT_TRUE(values[1].second);
  EXPECT_DOUBLE_EQ(*values[1].second, 250.0);
  EXPECT_FALSE(values[2].second) << "a division by zero is no value, not a crash";
  EXPECT_TRUE(metric_values(metrics(), trial(1000, 4, Status::timeout)).empty());
}

TEST(Objective, TimeIsTheDefault) {
  Objective time;
  EXPECT_TRUE(time.is_time());
  EXPECT_EQ(objective_value(time, {}, trial(12.5, 1)), 12.5);
  EXPECT_EQ(objective_cost(time, {}, trial(12.5, 1)), 12.5);
  EXPECT_FALSE(objective_cost(time, {}, trial(12.5, 1, Status::wrong_result)));
  EXPECT_DOUBLE_EQ(*objective_gain(time, 20, 10), 2.0);  // half the time: twice as good
}

TEST(Objective, AMaximisedMetricCostsItsNegation) {
  Objective o{"gpoints", true, {}};
  EXPECT_DOUBLE_EQ(*objective_value(o, metrics(), trial(1000, 4)), 2.0);
  EXPECT_DOUBLE_EQ(*objective_cost(o, metrics(), trial(1000, 4)), -2.0);
  // The faster trial has more points per second: the lower cost.
  EXPECT_LT(*objective_cost(o, metrics(), trial(500, 4)), *objective_cost(o, metrics(), trial(1000, 4)));
  EXPECT_DOUBLE_EQ(*objective_gain(o, 2.0, 3.0), 1.5);
  EXPECT_FALSE(objective_gain(o, 0.0, 3.0));
  EXPECT_EQ(o.describe(), "gpoints (higher is better)");
  EXPECT_FALSE(objective_value(Objective{"unknown", true, {}}, metrics(), trial(1000, 4)));
}

TEST(Objective, TheSearchSeesAPositiveCostWithTheSameRatios) {
  Objective time;
  Objective rate{"gpoints", true, {}};
  EXPECT_EQ(search_cost(time, 12.5), 12.5);
  EXPECT_DOUBLE_EQ(*search_cost(rate, 4.0), 0.25);
  // Twice the rate is half the cost, as half the time is.
  EXPECT_DOUBLE_EQ(*search_cost(rate, 4.0) / *search_cost(rate, 8.0),
                   *search_cost(time, 2.0) / *search_cost(time, 1.0));
  // No logarithm to model: the search takes these as failed.
  for (double v : {0.0, -3.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_FALSE(search_cost(time, v)) << v;
    EXPECT_FALSE(search_cost(rate, v)) << v;
  }
  EXPECT_FALSE(search_cost(rate, 1e-320));  // its inverse overflows
}
