#pragma once
// A surrogate of a kernel's log time over value indices: a constant plus
// groups of effects, fitted by backfitting with ridge shrinkage:
//  - per parameter, a trend: linear and quadratic in the value's position
//    (log2 of the value for positive numbers), so that an unmeasured value
//    is predicted from its neighbours' (block sizes have sweet spots);
//  - per parameter, one effect per value, shrunk towards the trend;
//  - per integer parameter whose values mix powers of two and others, one
//    effect for "is a power of two" (what GPUs favour, learnt, not assumed);
//  - per pair of parameters, one effect per pair of values (interactions).
// Each effect is shrunk towards zero in proportion to how few observations
// it has. Fitting costs O(observations x groups) per sweep, a prediction
// O(groups): a strategy's step stays in microseconds where a Gaussian
// process would cost O(observations^3).
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "tunekit/space.hpp"

namespace tunekit::detail {

struct ModelShape {
  bool trends = true;
  bool powers_of_two = true;
  bool pairs = true;
  double shrink_main = 1.0;
  double shrink_pair = 3.0;
  double shrink_trend = 1.0;
};

// The most cells a pair's interaction table may have (see the constructor).
inline constexpr std::size_t kMostPairCells = std::size_t{1} << 16;

class AdditiveModel {
 public:
  AdditiveModel(const std::vector<Parameter>& parameters, const ModelShape& shape);

  void add(std::span<const std::uint32_t> x, double y);
  // Every target above `ceiling` counts as `ceiling` (infinity: none), so
  // that a few configs many times slower than the rest do not set the
  // effects that rank the fast ones. The next fit() takes it in.
  void cap(double ceiling);
  double ceiling() const { return ceiling_; }
  // Gauss-Seidel sweeps over the groups, starting from the current effects:
  // O(observations x groups) each.
  void fit(int sweeps);
  // The share of a sweep of the observations from `first` on: each group's
  // effect at their cells moves by their residual, shrunk; O(groups) per
  // observation. Between full fits, it keeps a long search's step cheap.
  void absorb(std::size_t first);
  std::size_t size() const { return y_.size(); }

  double predict(std::span<const std::uint32_t> x) const;
  // The posterior standard deviation of the prediction, taking the effects
  // as independent: large where the config's values (and pairs of values)
  // were rarely measured.
  double spread(std::span<const std::uint32_t> x) const;
  // Expected improvement of `x` over the log time `target`.
  double expected_improvement(std::span<const std::uint32_t> x, double target) const;
  // Thompson sampling: draw every effect from its posterior, then
  // predict_sampled() scores configs under that draw.
  void sample(std::mt19937_64& rng);
  double predict_sampled(std::span<const std::uint32_t> x) const;
  // Residual standard deviation of the fit.
  double noise() const { return noise_; }

 private:
  enum class Kind { value, pair, trend };
  struct Group {
    Kind kind = Kind::value;
    int p = -1, q = -1;
    std::vector<std::uint32_t> map_p;         // value index -> cell part; empty: the value index itself
    std::uint32_t stride = 1;                 // cell = map_p[x[p]] * stride + x[q]
    std::vector<double> z;                    // trend: the feature per value of p
    double shrink = 1;
    std::vector<double> effect, sampled;  // per cell (trend: one coefficient)
    std::vector<std::uint32_t> count;
    double zz = 0;  // trend: sum of z^2 over observations
  };
  static std::uint32_t cell(const Group& g, const std::uint32_t* x) {
    const std::uint32_t v = x[static_cast<std::size_t>(g.p)];
    const std::uint32_t a = g.map_p.empty() ? v : g.map_p[v];
    return g.q < 0 ? a : a * g.stride + x[static_cast<std::size_t>(g.q)];
  }
  static double contribution(const Group& g, const std::vector<double>& e, const std::uint32_t* x) {
    if (g.kind == Kind::trend) return e[0] * g.z[x[static_cast<std::size_t>(g.p)]];
    return e[cell(g, x)];
  }
  // Observation i's value indices.
  const std::uint32_t* xs(std::size_t i) const { return xs_.data() + i * width_; }

  void absorb_one(std::size_t i);

  std::vector<Group> groups_;
  std::size_t width_ = 0;          // parameters per observation
  std::vector<std::uint32_t> xs_;  // the observations' value indices, one after another: a fit reads them all
  std::vector<double> raw_, y_, fitted_;        // targets as added, and capped
  double ceiling_ = INFINITY;
  std::vector<double> sums_;  // scratch, per cell
  double mean_ = 0, sum_ = 0, noise_ = 1;
};

}  // namespace tunekit::detail
