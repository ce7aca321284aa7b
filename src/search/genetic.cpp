// A steady-state genetic algorithm: the population is the fastest configs
// measured so far (seeds included); each child is two parents, picked by
// tournament, recombined inside the valid space, then mutated by moves to
// valid neighbours. It proposes one child per slot, and each new result joins
// the population as soon as it is observed.
#include <algorithm>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

struct GeneticOptions {
  std::size_t population;
  std::size_t tournament;
  double crossover;  // share of the differing parameters a child takes from its second parent
  double mutation;   // chance of each further mutation step
};

class GeneticSearch : public IndexedSearch {
 public:
  GeneticSearch(const StrategyContext& c, GeneticOptions o) : IndexedSearch(c.space, c.seed, c.budget), o_(o) {}

 protected:
  void propose(std::size_t n, std::vector<std::uint64_t>& out) override {
    while (out.size() < n) {
      std::optional<std::uint64_t> r;
      if (population_.size() < o_.population || observations().size() < o_.population) {
        r = draw_untried();  // the first generation: random
      } else {
        r = child();
      }
      if (!r) r = draw_untried();
      if (!r || !claim(*r)) break;
      out.push_back(*r);
    }
  }

  void learn(const Observation& o) override {
    if (!o.cost) return;
    population_.push_back(observations().size() - 1);
    std::sort(population_.begin(), population_.end(),
              [&](std::size_t a, std::size_t b) { return *observations()[a].cost < *observations()[b].cost; });
    if (population_.size() > o_.population) population_.resize(o_.population);
  }

 private:
  const Observation& pick() {
    std::size_t winner = population_.size();
    for (std::size_t t = 0; t < std::max<std::size_t>(1, o_.tournament); ++t) {
      const std::size_t i = uniform_below(rng_, population_.size());
      winner = std::min(winner, i);  // sorted: a lower position is fitter
    }
    return observations()[population_[winner]];
  }

  std::optional<std::uint64_t> child() {
    const Observation& a = pick();
    const Observation& b = pick();
    Indices x = recombine(a.x, b.x, o_.crossover);
    // Mutation: a walk to random valid neighbours, one step always when the
    // child repeats a tried config.
    for (int step = 0; step < 8; ++step) {
      auto r = rank_of(x);
      const bool fresh = r && !tried(*r);
      if (fresh && uniform01(rng_) >= o_.mutation) return r;
      auto near = random_neighbour(x);
      if (!near) break;
      x = std::move(*near);
    }
    auto r = rank_of(x);
    if (r && !tried(*r)) return r;
    return untried_neighbour(x, false);
  }

  GeneticOptions o_;
  std::vector<std::size_t> population_;  // observation indices, fastest first
};

}  // namespace

StrategyInfo genetic_strategy() {
  return {
      "genetic",
      "steady-state genetic algorithm: tournament selection among the fastest configs, recombination and "
      "mutation inside the valid space",
      {
          integer_option("population", 20, "configs in the population (the fastest measured)", 2, 1e6),
          integer_option("tournament", 2, "configs drawn per parent pick; the fastest wins", 1, 64),
          real_option("crossover", 0.5, "share of the differing parameters a child takes from its second parent", 0, 1),
          real_option("mutation", 0.3, "chance of each further mutation step (one move to a valid neighbour)", 0, 0.95),
      },
      [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
        if (!has_usable_index(c.space)) return random_fallback(c);
        return std::make_unique<GeneticSearch>(
            c, GeneticOptions{static_cast<std::size_t>(c.options.integer("population")),
                              static_cast<std::size_t>(c.options.integer("tournament")), c.options.real("crossover"),
                              c.options.real("mutation")});
      },
      {"genetic_algorithm"},
      {{"popsize", "population"},
       {"mutation_chance", "mutation",
        "the probability of each further move to a valid neighbour (Kernel Tuner's: a chance of 1 in N per "
        "parameter)"},
       {"method", "crossover", "the share of the differing parameters a child takes from its second parent"}}};
}

}  // namespace tunekit::detail
