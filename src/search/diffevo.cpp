// Differential evolution (DE/best/1/bin) on value indices: each trial is the
// target with, per parameter at rate `crossover`, the mutant's value
// best + F (a - b), rounded into the parameter's value range; the trial is
// then brought into the valid space by moving from the target towards it one
// parameter at a time wherever the constraints allow. A trial replaces its
// target when it is faster.
#include <algorithm>
#include <cmath>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

struct DiffEvoOptions {
  std::size_t population;
  double f;
  double crossover;
};

class DiffEvoSearch : public IndexedSearch {
 public:
  DiffEvoSearch(const StrategyContext& c, DiffEvoOptions o) : IndexedSearch(c.space, c.seed, c.budget), o_(o) {}

 protected:
  void propose(std::size_t n, std::vector<std::uint64_t>& out) override {
    while (out.size() < n) {
      std::optional<std::uint64_t> r;
      if (members_.size() < o_.population) r = draw_untried();
      else r = trial();
      if (!r) r = draw_untried();
      if (!r || !claim(*r)) break;
      out.push_back(*r);
      if (members_.size() >= o_.population) target_of_[*r] = target_;
    }
  }

  void learn(const Observation& o) override {
    const double cost = o.cost ? *o.cost : INFINITY;
    auto it = target_of_.find(o.rank);
    if (it == target_of_.end()) {
      // The initial population (or a seed): joins while there is room, else
      // replaces the slowest member when faster.
      if (members_.size() < o_.population) {
        members_.push_back({o.x, cost});
      } else {
        auto worst = std::max_element(members_.begin(), members_.end(),
                                      [](const Member& a, const Member& b) { return a.cost < b.cost; });
        if (cost < worst->cost) *worst = {o.x, cost};
      }
      return;
    }
    Member& target = members_[it->second];
    if (cost <= target.cost) target = {o.x, cost};
    target_of_.erase(it);
  }

 private:
  struct Member {
    Indices x;
    double cost;  // infinity: failed
  };

  std::optional<std::uint64_t> trial() {
    target_ = next_target_++ % members_.size();
    const Member& target = members_[target_];
    std::size_t best = 0;
    for (std::size_t i = 1; i < members_.size(); ++i)
      if (members_[i].cost < members_[best].cost) best = i;
    std::size_t a = uniform_below(rng_, members_.size()), b = uniform_below(rng_, members_.size());
    if (a == b) b = (a + 1) % members_.size();
    Indices wish = target.x;
    const std::size_t forced = uniform_below(rng_, parameter_count());
    for (std::size_t p = 0; p < parameter_count(); ++p) {
      if (p != forced && uniform01(rng_) >= o_.crossover) continue;
      const double v = members_[best].x[p] + o_.f * (static_cast<double>(members_[a].x[p]) - members_[b].x[p]);
      const double hi = cardinality(p) - 1.0;
      wish[p] = static_cast<std::uint32_t>(std::clamp(std::round(v), 0.0, hi));
    }
    Indices x = recombine(target.x, wish, 1.0);
    auto r = rank_of(x);
    if (r && !tried(*r)) return r;
    return untried_neighbour(x, true);
  }

  DiffEvoOptions o_;
  std::vector<Member> members_;
  std::size_t target_ = 0, next_target_ = 0;
  std::unordered_map<std::uint64_t, std::size_t> target_of_;  // proposed trial -> its target
};

}  // namespace

StrategyInfo diffevo_strategy() {
  return {"diffevo",
          "differential evolution (best/1/bin) on value indices, each trial moved into the valid space towards its "
          "target",
          {
              integer_option("population", 20, "members of the population", 4, 1e6),
              real_option("f", 0.8, "differential weight F", 0, 2),
              real_option("crossover", 0.7, "share of the parameters a trial takes from its mutant", 0, 1),
          },
          [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
            if (!has_usable_index(c.space)) return random_fallback(c);
            return std::make_unique<DiffEvoSearch>(
                c, DiffEvoOptions{static_cast<std::size_t>(c.options.integer("population")), c.options.real("f"),
                                  c.options.real("crossover")});
          },
          {"diff_evo"},
          {{"popsize", "population", "the number of members, whatever the number of parameters"},
           {"popsize_times_dimensions", "", "population is the number of members"},
           {"F", "f", "the same differential weight"},
           {"CR", "crossover", "the same crossover rate"},
           {"method", "", "the scheme is best/1/bin"}}};
}

}  // namespace tunekit::detail
