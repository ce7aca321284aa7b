// Model-guided local search: an additive surrogate of log time with pairwise
// interactions (detail/additive_model.hpp), refitted as each result comes in,
// orders the valid neighbours of the current config, so a descent measures
// the promising moves first; at a local optimum the search restarts from the
// candidate the surrogate likes best among random draws and perturbations of
// the fastest config. Thompson sampling keeps the choices exploratory.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "search/detail/additive_model.hpp"
#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

struct SurrogateOptions {
  std::size_t initial;     // random configs before the model leads
  std::size_t patience;    // neighbours measured without improvement before a restart
  std::size_t random;      // random candidates of a restart
  double failure_penalty;  // a failed config counts as this factor slower than the slowest measured
  bool pairs;
};

class SurrogateSearch : public IndexedSearch {
 public:
  SurrogateSearch(const StrategyContext& c, SurrogateOptions o)
      : IndexedSearch(c.space, c.seed, c.budget), o_(o), model_(c.space.parameters(), shape(o)) {}

 protected:
  void propose(std::size_t n, std::vector<std::uint64_t>& out) override {
    while (out.size() < n) {
      std::optional<std::uint64_t> r;
      if (ok_ < std::max<std::size_t>(2, o_.initial)) r = draw_untried();
      else r = guided();
      if (!r) r = draw_untried();
      if (!r || !claim(*r)) break;
      out.push_back(*r);
    }
  }

  void learn(const Observation& o) override {
    if (o.cost) {
      const double y = std::log(*o.cost);
      worst_ = ok_ == 0 ? y : std::max(worst_, y);
      ++ok_;
      model_.add(o.x, y);
      for (const Indices& f : failed_) model_.add(f, worst_ + std::log(o_.failure_penalty));
      failed_.clear();
      dirty_ = true;
      if (!has_current_ || y < current_cost_ || (restart_ && o.rank == *restart_)) {
        // First improvement (or the restart point): the descent moves here.
        restart_.reset();
        current_ = o.x;
        current_cost_ = y;
        has_current_ = true;
        misses_ = 0;
        return;
      }
    } else if (ok_ == 0) {
      failed_.push_back(o.x);
    } else {
      model_.add(o.x, worst_ + std::log(o_.failure_penalty));
      dirty_ = true;
    }
    ++misses_;
  }

 private:
  static ModelShape shape(const SurrogateOptions& o) {
    ModelShape m;
    m.pairs = o.pairs;
    return m;
  }

  std::optional<std::uint64_t> guided() {
    if (dirty_) {
      model_.fit(2);
      dirty_ = false;
    }
    if (!has_current_ && best()) {
      current_ = best()->x;
      current_cost_ = std::log(*best()->cost);
      has_current_ = true;
    }
    if (misses_ < o_.patience) {
      if (auto r = best_of(neighbours(current_, Neighbourhood::hamming), current_cost_)) return r;
    }
    // A local optimum (or one that looks like it): restart.
    misses_ = 0;
    std::vector<Indices> pool;
    for (std::size_t k = 0; k < o_.random; ++k) pool.push_back(indices(uniform_below(rng_, space_size())));
    if (const Observation* b = best()) {
      for (int k = 0; k < 8; ++k) {
        Indices x = b->x;
        for (int s = 0; s < 3; ++s) {
          auto near = neighbours(x, Neighbourhood::hamming);
          if (near.empty()) break;
          x = near[uniform_below(rng_, near.size())];
        }
        pool.push_back(std::move(x));
      }
    }
    // The descent goes on from the restart point, however fast it turns out;
    // until its result is in, from the fastest config.
    restart_ = best_of(std::move(pool), std::log(*best()->cost));
    return restart_;
  }

  // The untried config of `configs` with the highest expected improvement
  // over the log time `target`.
  std::optional<std::uint64_t> best_of(std::vector<Indices> configs, double target) {
    std::optional<std::uint64_t> pick;
    double best = INFINITY;
    for (const auto& x : configs) {
      auto r = rank_of(x);
      if (!r || tried(*r)) continue;
      const double v = -model_.expected_improvement(x, target);
      if (v < best) {
        best = v;
        pick = r;
      }
    }
    return pick;
  }

  SurrogateOptions o_;
  AdditiveModel model_;
  std::size_t ok_ = 0;
  double worst_ = 0;
  bool dirty_ = false;
  std::vector<Indices> failed_;
  bool has_current_ = false;
  Indices current_;
  double current_cost_ = 0;  // log time
  std::size_t misses_ = 0;
  std::optional<std::uint64_t> restart_;
};

}  // namespace

StrategyInfo surrogate_strategy() {
  return {"surrogate",
          "model-guided local search: an additive model of log time with pairwise interactions, refitted after each "
          "result, orders the valid neighbours of the current config; restarts where the model points at a local "
          "optimum (Thompson sampling)",
          {
              integer_option("initial", 8, "random configs measured before the model leads", 2, 1e6),
              integer_option("patience", 16, "neighbours measured without improvement before a restart", 1, 1e6),
              integer_option("random", 64, "random candidates of a restart", 0, 1e6),
              real_option("failure_penalty", 2.0, "a failed config counts as this many times slower than the slowest measured", 1, 1e6),
              boolean_option("pairs", true, "model the interaction of every pair of parameters"),
          },
          [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
            if (!has_usable_index(c.space)) return random_fallback(c);
            return std::make_unique<SurrogateSearch>(
                c, SurrogateOptions{static_cast<std::size_t>(c.options.integer("initial")),
                                    static_cast<std::size_t>(c.options.integer("patience")),
                                    static_cast<std::size_t>(c.options.integer("random")),
                                    c.options.real("failure_penalty"), c.options.boolean("pairs")});
          }};
}

}  // namespace tunekit::detail
