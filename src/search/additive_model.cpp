// The additive surrogate (detail/additive_model.hpp).
#include "search/detail/additive_model.hpp"

#include <algorithm>
#include <cmath>

#include "search/detail/expected_improvement.hpp"

namespace tunekit::detail {

namespace {

bool is_power_of_two(const Value& v) {
  if (!v.is_int() || v.as_int() <= 0) return false;
  const auto i = static_cast<std::uint64_t>(v.as_int());
  return (i & (i - 1)) == 0;
}

// The trend's feature per value: log2 of positive numbers, the number
// itself otherwise, the position for strings; scaled to [-1, 1].
std::vector<double> positions(const Parameter& p) {
  std::vector<double> z;
  bool positive = true, numeric = true;
  for (const auto& v : p.values) {
    numeric = numeric && v.is_number();
    positive = positive && v.is_number() && v.to_double() > 0;
  }
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    if (positive) z.push_back(std::log2(p.values[i].to_double()));
    else if (numeric) z.push_back(p.values[i].to_double());
    else z.push_back(static_cast<double>(i));
  }
  const auto [lo, hi] = std::minmax_element(z.begin(), z.end());
  const double a = *lo, b = *hi;
  for (auto& x : z) x = b > a ? 2 * (x - a) / (b - a) - 1 : 0;
  return z;
}

}  // namespace

AdditiveModel::AdditiveModel(const std::vector<Parameter>& parameters, const ModelShape& shape)
    : width_(parameters.size()) {
  std::vector<int> active;
  for (std::size_t p = 0; p < parameters.size(); ++p)
    if (parameters[p].values.size() > 1) active.push_back(static_cast<int>(p));
  for (int p : active) {
    const Parameter& par = parameters[static_cast<std::size_t>(p)];
    const std::size_t n = par.values.size();
    if (shape.trends && n > 2) {
      const std::vector<double> z = positions(par);
      double mean_sq = 0;
      for (double x : z) mean_sq += x * x / static_cast<double>(n);
      for (int power = 1; power <= 2; ++power) {
        Group g;
        g.kind = Kind::trend;
        g.p = p;
        g.shrink = shape.shrink_trend;
        for (double x : z) g.z.push_back(power == 1 ? x : x * x - mean_sq);
        g.effect.assign(1, 0.0);
        g.count.assign(1, 0);
        groups_.push_back(std::move(g));
      }
    }
    if (shape.powers_of_two) {
      std::size_t twos = 0;
      for (const auto& v : par.values) twos += is_power_of_two(v);
      bool integers = true;
      for (const auto& v : par.values) integers = integers && v.is_int();
      if (integers && twos > 0 && twos < n) {
        Group g;
        g.p = p;
        g.shrink = shape.shrink_main;
        for (const auto& v : par.values) g.map_p.push_back(is_power_of_two(v) ? 1 : 0);
        g.effect.assign(2, 0.0);
        g.count.assign(2, 0);
        groups_.push_back(std::move(g));
      }
    }
    Group g;
    g.p = p;
    g.shrink = shape.shrink_main;
    g.effect.assign(n, 0.0);
    g.count.assign(n, 0);
    groups_.push_back(std::move(g));
  }
  if (shape.pairs)
    for (std::size_t i = 0; i < active.size(); ++i)
      for (std::size_t j = i + 1; j < active.size(); ++j) {
        Group g;
        g.kind = Kind::pair;
        g.p = active[i];
        g.q = active[j];
        const std::size_t np = parameters[static_cast<std::size_t>(g.p)].values.size();
        const std::size_t nq = parameters[static_cast<std::size_t>(g.q)].values.size();
        // A pair of wide parameters (two ranges of 200,000 values) would
        // take a table of 4 x 10^10 cells, and no budget measures more than
        // a sliver of it: such a pair has no interaction term, and the
        // model keeps its main effects (the spaces of bench/search have
        // pairs of a few hundred cells at most).
        if (np * nq > kMostPairCells) continue;
        g.stride = static_cast<std::uint32_t>(nq);
        g.shrink = shape.shrink_pair;
        g.effect.assign(np * nq, 0.0);
        g.count.assign(g.effect.size(), 0);
        groups_.push_back(std::move(g));
      }
  std::size_t widest = 1;
  for (const auto& g : groups_) widest = std::max(widest, g.effect.size());
  sums_.assign(widest, 0.0);
}

void AdditiveModel::add(std::span<const std::uint32_t> values, double y) {
  const std::uint32_t* x = values.data();
  double f = 0;
  for (auto& g : groups_) {
    if (g.kind == Kind::trend) {
      const double z = g.z[x[static_cast<std::size_t>(g.p)]];
      g.zz += z * z;
    } else {
      ++g.count[cell(g, x)];
    }
    f += contribution(g, g.effect, x);
  }
  xs_.insert(xs_.end(), values.begin(), values.end());
  raw_.push_back(y);
  y = std::min(y, ceiling_);
  y_.push_back(y);
  sum_ += y;
  mean_ = sum_ / static_cast<double>(y_.size());
  fitted_.push_back(f);  // the groups' part; the mean is added when read
}

void AdditiveModel::cap(double ceiling) {
  ceiling_ = ceiling;
  sum_ = 0;
  for (std::size_t i = 0; i < y_.size(); ++i) {
    y_[i] = std::min(raw_[i], ceiling_);
    sum_ += y_[i];
  }
  if (!y_.empty()) mean_ = sum_ / static_cast<double>(y_.size());
}

void AdditiveModel::fit(int sweeps) {
  const std::size_t n = y_.size();
  if (n == 0) return;
  for (int s = 0; s < sweeps; ++s) {
    for (auto& g : groups_) {
      if (g.kind == Kind::trend) {
        double zr = 0;
        const auto p = static_cast<std::size_t>(g.p);
        for (std::size_t i = 0; i < n; ++i) {
          const double z = g.z[xs(i)[p]];
          zr += z * (y_[i] - mean_ - fitted_[i] + g.effect[0] * z);
        }
        const double beta = zr / (g.zz + g.shrink);
        const double delta = beta - g.effect[0];
        g.effect[0] = beta;
        for (std::size_t i = 0; i < n; ++i) fitted_[i] += delta * g.z[xs(i)[p]];
        continue;
      }
      std::fill(sums_.begin(), sums_.begin() + static_cast<std::ptrdiff_t>(g.effect.size()), 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t c = cell(g, xs(i));
        sums_[c] += y_[i] - mean_ - fitted_[i] + g.effect[c];
      }
      for (std::size_t c = 0; c < g.effect.size(); ++c) {
        const double e = g.count[c] ? sums_[c] / (g.count[c] + g.shrink) : 0.0;
        sums_[c] = e - g.effect[c];  // now the change
        g.effect[c] = e;
      }
      for (std::size_t i = 0; i < n; ++i) fitted_[i] += sums_[cell(g, xs(i))];
    }
  }
  double rss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y_[i] - mean_ - fitted_[i];
    rss += r * r;
  }
  noise_ = std::sqrt((rss + 0.01) / static_cast<double>(n + 1));
}

void AdditiveModel::absorb(std::size_t first) {
  for (std::size_t i = first; i < y_.size(); ++i) absorb_one(i);
}

void AdditiveModel::absorb_one(std::size_t i) {
  const std::uint32_t* x = xs(i);
  for (auto& g : groups_) {
    const double r = y_[i] - mean_ - fitted_[i];
    if (g.kind == Kind::trend) {
      const double z = g.z[x[static_cast<std::size_t>(g.p)]];
      const double delta = z * r / (g.zz + g.shrink);
      g.effect[0] += delta;
      fitted_[i] += delta * z;  // the other observations' fits go stale until the next fit()
      continue;
    }
    const std::uint32_t c = cell(g, x);
    const double delta = r / (g.count[c] + g.shrink);
    g.effect[c] += delta;
    fitted_[i] += delta;
  }
}

double AdditiveModel::predict(std::span<const std::uint32_t> x) const {
  double f = mean_;
  for (const auto& g : groups_) f += contribution(g, g.effect, x.data());
  return f;
}

double AdditiveModel::spread(std::span<const std::uint32_t> x) const {
  double v = 0;
  for (const auto& g : groups_) {
    if (g.kind == Kind::trend) {
      const double z = g.z[x[static_cast<std::size_t>(g.p)]];
      v += z * z / (g.zz + g.shrink);
    } else {
      v += 1.0 / (g.count[cell(g, x.data())] + g.shrink);
    }
  }
  return noise_ * std::sqrt(v);
}

double AdditiveModel::expected_improvement(std::span<const std::uint32_t> x, double target) const {
  return detail::expected_improvement(target - predict(x), std::max(1e-12, spread(x)));
}

void AdditiveModel::sample(std::mt19937_64& rng) {
  // A draw needs thousands of normal variates (every cell of every pair),
  // and Thompson sampling does not need them exact: a fixed table of 4096
  // standard normal draws, indexed by 12 random bits at a time, costs a
  // few instructions each where std::normal_distribution costs dozens.
  static const std::vector<double> table = [] {
    std::mt19937_64 g(0x5eed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> t(4096);
    for (auto& v : t) v = normal(g);
    return t;
  }();
  std::uint64_t bits = 0;
  int left = 0;
  auto normal = [&] {
    if (left == 0) {
      bits = rng();
      left = 5;
    }
    --left;
    const double v = table[bits & 4095];
    bits >>= 12;
    return v;
  };
  for (auto& g : groups_) {
    g.sampled.resize(g.effect.size());
    if (g.kind == Kind::trend) {
      g.sampled[0] = g.effect[0] + noise_ * std::sqrt(1.0 / (g.zz + g.shrink)) * normal();
      continue;
    }
    for (std::size_t c = 0; c < g.effect.size(); ++c)
      g.sampled[c] = g.effect[c] + noise_ * std::sqrt(1.0 / (g.count[c] + g.shrink)) * normal();
  }
}

double AdditiveModel::predict_sampled(std::span<const std::uint32_t> x) const {
  double f = mean_;
  for (const auto& g : groups_) f += contribution(g, g.sampled, x.data());
  return f;
}

}  // namespace tunekit::detail
