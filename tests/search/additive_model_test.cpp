// The surrogate's model (src/search/detail/additive_model.hpp): what the
// search relies on, the cap on targets and the posterior draws.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "search/detail/additive_model.hpp"

using namespace tunekit;
using namespace tunekit::detail;

namespace {

// Two parameters of three values each, no pairs, no trends: the fitted
// effect of a value is the (shrunk) mean of its targets.
std::vector<Parameter> two_by_three() {
  return {Parameter{"a", {Value(1), Value(2), Value(3)}, {}}, Parameter{"b", {Value(1), Value(2), Value(3)}, {}}};
}

ModelShape main_effects_only() {
  ModelShape m;
  m.trends = false;
  m.powers_of_two = false;
  m.pairs = false;
  return m;
}

// Every config once with target `y(a, b)`, then fitted to convergence.
template <class F>
AdditiveModel fitted(F y, double ceiling = INFINITY) {
  AdditiveModel model(two_by_three(), main_effects_only());
  for (std::uint32_t a = 0; a < 3; ++a)
    for (std::uint32_t b = 0; b < 3; ++b) {
      const std::uint32_t x[] = {a, b};
      model.add(x, y(a, b));
    }
  model.cap(ceiling);
  model.fit(50);
  return model;
}

double at(const AdditiveModel& m, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t x[] = {a, b};
  return m.predict(x);
}

}  // namespace

TEST(AdditiveModel, RanksByTheFittedEffects) {
  // b = 2 is fast whatever a is; a = 0 is a little faster than the others.
  const auto model =
      fitted([](std::uint32_t a, std::uint32_t b) { return (b == 2 ? 0.0 : 1.0) + (a == 0 ? 0.0 : 0.1); });
  EXPECT_LT(at(model, 0, 2), at(model, 1, 2));
  EXPECT_LT(at(model, 1, 2), at(model, 0, 0));
}

TEST(AdditiveModel, ACapKeepsAFewDisastersFromSettingTheEffects) {
  // a = 0 holds the fastest config (0.0) but also one 100 times slower than
  // the rest (log 4.6): uncapped, its mean makes a = 0 look slowest; capped
  // at 1.0 above the fastest, the disaster counts as 1.0 and a = 0 leads.
  auto y = [](std::uint32_t a, std::uint32_t b) {
    if (a == 0) return b == 0 ? 0.0 : (b == 1 ? 4.6 : 0.5);
    return 0.6;
  };
  const auto uncapped = fitted(y);
  EXPECT_GT(at(uncapped, 0, 2), at(uncapped, 1, 2));
  const auto capped = fitted(y, 1.0);
  EXPECT_LT(at(capped, 0, 2), at(capped, 1, 2));
  // A cap changes what the model sees, not what it was given: lifting it
  // restores the uncapped fit.
  auto lifted = fitted(y, 1.0);
  lifted.cap(INFINITY);
  lifted.fit(50);
  EXPECT_NEAR(at(lifted, 0, 2), at(uncapped, 0, 2), 1e-6);
}

TEST(AdditiveModel, PosteriorDrawsSpreadWhereDataIsThin) {
  // Value 2 of a is never measured: draws of its configs vary more than
  // draws of a value measured three times, and centre on the prediction.
  AdditiveModel model(two_by_three(), main_effects_only());
  for (std::uint32_t a = 0; a < 2; ++a)
    for (std::uint32_t b = 0; b < 3; ++b) {
      const std::uint32_t x[] = {a, b};
      model.add(x, a == 0 ? 0.0 : 1.0 + 0.1 * b);
    }
  model.fit(50);
  std::mt19937_64 rng(7);
  const std::uint32_t seen[] = {0, 1}, unseen[] = {2, 1};
  double var_seen = 0, var_unseen = 0, mean_seen = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    model.sample(rng);
    const double s = model.predict_sampled(seen) - model.predict(seen);
    const double u = model.predict_sampled(unseen) - model.predict(unseen);
    mean_seen += s / n;
    var_seen += s * s / n;
    var_unseen += u * u / n;
  }
  EXPECT_GT(var_unseen, 1.2 * var_seen);
  EXPECT_NEAR(mean_seen, 0.0, 3 * std::sqrt(var_seen / n) + 1e-9);
}

// Two wide parameters (ranges of 100,000 values) would make an interaction
// table of 10^10 cells: the pair is left out, and the model still ranks by
// the main effects.
TEST(AdditiveModel, APairOfWideParametersHasNoTableButTheMainEffects) {
  std::vector<Parameter> wide(2);
  for (std::size_t p = 0; p < 2; ++p) {
    wide[p].name = p ? "b" : "a";
    for (std::int64_t v = 0; v < 100000; ++v) wide[p].values.push_back(Value(v));
  }
  ModelShape shape = main_effects_only();
  shape.pairs = true;
  AdditiveModel model(wide, shape);
  for (std::uint32_t a = 0; a < 50; ++a) {
    const std::uint32_t x[] = {a, a % 7};
    model.add(x, a == 3 ? 0.0 : 1.0);
  }
  model.fit(20);
  const std::uint32_t best[] = {3, 3}, other[] = {4, 3};
  EXPECT_LT(model.predict(best), model.predict(other));
}
