// Bayesian optimisation over the discrete valid space: a Gaussian process
// (Matérn 5/2 on the value positions, each scaled to [0, 1]) models log time;
// its length scale is chosen by marginal likelihood from a small grid as data
// comes in; each next config maximises expected improvement among candidates
// drawn from the index (uniform draws, and the valid neighbours of the
// fastest configs). The process is fitted on at most `max_points`
// observations (the fastest half and the most recent half), which bounds a
// step's cost at O(max_points^2 * candidates).
#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

struct BayesOptions {
  std::size_t initial;
  std::size_t candidates;
  std::size_t max_points;
  double exploration;  // xi of expected improvement, in standard deviations of log time
};

constexpr double kFailurePenalty = 2.0;  // a failed config: this many times slower than the slowest measured
constexpr double kNoise = 1e-4;          // of the standardised log time
const double kScales[] = {0.15, 0.3, 0.6, 1.2};

class BayesSearch : public IndexedSearch {
 public:
  BayesSearch(const StrategyContext& c, BayesOptions o) : IndexedSearch(c.space, c.seed, c.budget), o_(o) {
    for (std::size_t p = 0; p < parameter_count(); ++p)
      if (cardinality(p) > 1) active_.push_back(p);
  }

 protected:
  void propose(std::size_t n, std::vector<std::uint64_t>& out) override {
    while (out.size() < n) {
      std::optional<std::uint64_t> r;
      if (ok_ < std::max<std::size_t>(2, o_.initial)) r = draw_untried();
      else r = guided(out);
      if (!r) r = draw_untried();
      if (!r || !claim(*r)) break;
      out.push_back(*r);
    }
  }

  void learn(const Observation& o) override {
    if (o.cost) {
      ++ok_;
      worst_ = std::max(worst_, std::log(*o.cost));
    }
  }

 private:
  Eigen::VectorXd features(std::span<const std::uint32_t> x) const {
    Eigen::VectorXd z(static_cast<Eigen::Index>(active_.size()));
    for (std::size_t i = 0; i < active_.size(); ++i)
      z[static_cast<Eigen::Index>(i)] = x[active_[i]] / (cardinality(active_[i]) - 1.0);
    return z;
  }

  static double matern(double r) {
    const double s = std::sqrt(5.0) * r;
    return (1.0 + s + s * s / 3.0) * std::exp(-s);
  }

  Eigen::MatrixXd gram(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double scale) const {
    Eigen::MatrixXd k(a.cols(), b.cols());
    for (Eigen::Index j = 0; j < b.cols(); ++j)
      for (Eigen::Index i = 0; i < a.cols(); ++i) k(i, j) = matern((a.col(i) - b.col(j)).norm() / scale);
    return k;
  }

  // The training set: every observation, or the fastest and the most recent
  // when there are more than max_points.
  void training(Eigen::MatrixXd& z, Eigen::VectorXd& y) {
    const auto& obs = observations();
    std::vector<std::size_t> pick(obs.size());
    std::iota(pick.begin(), pick.end(), 0);
    auto cost = [&](std::size_t i) {
      return obs[i].cost ? std::log(*obs[i].cost) : worst_ + std::log(kFailurePenalty);
    };
    if (pick.size() > o_.max_points) {
      const std::size_t fastest = o_.max_points / 2;
      std::partial_sort(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(fastest), pick.end(),
                        [&](std::size_t a, std::size_t b) { return cost(a) < cost(b); });
      std::vector<std::size_t> rest(pick.begin() + static_cast<std::ptrdiff_t>(fastest), pick.end());
      std::sort(rest.begin(), rest.end());
      pick.resize(fastest);
      pick.insert(pick.end(), rest.end() - static_cast<std::ptrdiff_t>(o_.max_points - fastest), rest.end());
    }
    z.resize(static_cast<Eigen::Index>(active_.size()), static_cast<Eigen::Index>(pick.size()));
    y.resize(static_cast<Eigen::Index>(pick.size()));
    for (std::size_t i = 0; i < pick.size(); ++i) {
      z.col(static_cast<Eigen::Index>(i)) = features(obs[pick[i]].x);
      y[static_cast<Eigen::Index>(i)] = cost(pick[i]);
    }
  }

  std::optional<std::uint64_t> guided(const std::vector<std::uint64_t>& pending_here) {
    Eigen::MatrixXd z;
    Eigen::VectorXd y;
    training(z, y);
    const double mean = y.mean();
    const double sd = std::max(1e-9, std::sqrt((y.array() - mean).square().mean()));
    y = (y.array() - mean) / sd;
    const Eigen::Index n = y.size();

    // Length scale: the grid point of highest marginal likelihood, refreshed
    // as the data grows by a quarter.
    if (static_cast<double>(n) >= 1.25 * static_cast<double>(fitted_at_) || scale_ == 0) {
      double best_ll = -INFINITY;
      for (double s : kScales) {
        Eigen::MatrixXd k = gram(z, z, s * std::sqrt(static_cast<double>(active_.size())));
        k.diagonal().array() += kNoise;
        Eigen::LLT<Eigen::MatrixXd> llt(k);
        if (llt.info() != Eigen::Success) continue;
        const Eigen::VectorXd a = llt.solve(y);
        const double ll = -0.5 * y.dot(a) - Eigen::MatrixXd(llt.matrixL()).diagonal().array().log().sum();
        if (ll > best_ll) {
          best_ll = ll;
          scale_ = s;
        }
      }
      if (scale_ == 0) scale_ = kScales[1];
      fitted_at_ = static_cast<std::size_t>(n);
    }
    const double scale = scale_ * std::sqrt(static_cast<double>(active_.size()));
    Eigen::MatrixXd k = gram(z, z, scale);
    k.diagonal().array() += kNoise;
    Eigen::LLT<Eigen::MatrixXd> llt(k);
    if (llt.info() != Eigen::Success) return std::nullopt;
    const Eigen::VectorXd alpha = llt.solve(y);

    // Candidates.
    std::vector<std::uint64_t> ranks;
    std::unordered_set<std::uint64_t> seen(pending_here.begin(), pending_here.end());
    auto consider = [&](std::uint64_t r) {
      if (!tried(r) && seen.insert(r).second) ranks.push_back(r);
    };
    std::vector<const Observation*> ranked;
    for (const auto& o : observations())
      if (o.cost) ranked.push_back(&o);
    const std::size_t top = std::min<std::size_t>(3, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(top), ranked.end(),
                      [](const Observation* a, const Observation* b) { return *a->cost < *b->cost; });
    for (std::size_t t = 0; t < top; ++t)
      for (const auto& x : neighbours(ranked[t]->x, Neighbourhood::hamming))
        if (auto r = rank_of(x)) consider(*r);
    for (std::size_t c = 0; c < o_.candidates; ++c) consider(uniform_below(rng_, space_size()));
    if (ranks.empty()) return std::nullopt;

    Eigen::MatrixXd zc(static_cast<Eigen::Index>(active_.size()), static_cast<Eigen::Index>(ranks.size()));
    for (std::size_t i = 0; i < ranks.size(); ++i) zc.col(static_cast<Eigen::Index>(i)) = features(indices(ranks[i]));
    const Eigen::MatrixXd ks = gram(z, zc, scale);
    const Eigen::VectorXd mu = ks.transpose() * alpha;
    const Eigen::MatrixXd v = llt.matrixL().solve(ks);
    const Eigen::VectorXd var = (1.0 - v.colwise().squaredNorm().array()).max(1e-12);

    const double incumbent = y.minCoeff();
    std::size_t pick = 0;
    double best_ei = -1;
    for (Eigen::Index i = 0; i < mu.size(); ++i) {
      const double s = std::sqrt(var[i]);
      const double imp = incumbent - mu[i] - o_.exploration;
      const double u = imp / s;
      const double ei = imp * 0.5 * std::erfc(-u / std::sqrt(2.0)) + s * std::exp(-0.5 * u * u) / std::sqrt(2.0 * M_PI);
      if (ei > best_ei) {
        best_ei = ei;
        pick = static_cast<std::size_t>(i);
      }
    }
    return ranks[pick];
  }

  BayesOptions o_;
  std::vector<std::size_t> active_;  // parameters with more than one value
  std::size_t ok_ = 0;
  double worst_ = -INFINITY;
  double scale_ = 0;
  std::size_t fitted_at_ = 0;
};

}  // namespace

StrategyInfo bayes_strategy() {
  return {"bayes",
          "Bayesian optimisation: a Gaussian process (Matern 5/2) of log time over the value positions, expected "
          "improvement over candidates drawn from the valid space",
          {
              integer_option("initial", 10, "random configs measured before the model leads", 2, 1e6),
              integer_option("candidates", 256, "random candidates per step (with the neighbours of the 3 fastest)", 1,
                             1e6),
              integer_option("max_points", 160,
                             "observations the process is fitted on (the fastest half, the most recent half)", 8, 1e5),
              real_option("exploration", 0.01, "xi of expected improvement, in standard deviations of log time", 0, 10),
          },
          [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
            if (!has_usable_index(c.space)) return random_fallback(c);
            return std::make_unique<BayesSearch>(
                c,
                BayesOptions{static_cast<std::size_t>(c.options.integer("initial")),
                             static_cast<std::size_t>(c.options.integer("candidates")),
                             static_cast<std::size_t>(c.options.integer("max_points")), c.options.real("exploration")});
          }};
}

}  // namespace tunekit::detail
