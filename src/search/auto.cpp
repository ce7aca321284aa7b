// The default strategy: exhaustive search when the budget covers the space
// (or there is no budget), else the guided strategy that bench/search shows
// best at such budgets, with a share of genetic children once the budget
// runs long. docs/search.md gives the rule and its evidence.
#include <set>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

// Forwards to the chosen strategy and says which it is.
class AutoStrategy : public Strategy {
 public:
  AutoStrategy(std::unique_ptr<Strategy> inner, std::string chosen)
      : inner_(std::move(inner)), chosen_(std::move(chosen)) {}
  std::vector<Config> next(std::size_t n) override { return inner_->next(n); }
  void observe(const Config& config, const Outcome& outcome) override { inner_->observe(config, outcome); }
  std::optional<std::uint64_t> planned() const override { return inner_->planned(); }
  std::string describe() const override { return chosen_; }

 private:
  std::unique_ptr<Strategy> inner_;
  std::string chosen_;
};

constexpr std::size_t kGeneticAfter = 100, kGeneticEvery = 3;

// The guided strategy, and after `start` proposals every `every`-th from a
// second one. Both observe every result, so each takes the other's finds as
// seeds: the genetic children recombine the fastest configs the model found,
// which reaches narrow basins that the model's probes miss (bench/search:
// on the A4000 convolution cache at 5% of the space, the fastest basin is
// found in 75 of 100 seeds instead of 62).
class Interleaved : public Strategy {
 public:
  Interleaved(const Space& space, std::unique_ptr<Strategy> first, std::unique_ptr<Strategy> second, std::size_t start,
              std::size_t every, std::optional<std::uint64_t> budget)
      : space_(space),
        first_(std::move(first)),
        second_(std::move(second)),
        start_(start),
        every_(every),
        budget_(budget),
        proposed_(space.size()) {}

  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    n = batch_limit(budget_, n);  // the batches its parts would hand out
    // Each asks for one at a time; a config both propose in one batch is
    // kept once (a strategy only skips what it has seen the result of).
    for (std::size_t asked = 0; out.size() < n && asked < 2 * n + 2; ++asked) {
      ++turn_;
      Strategy* s = turn_ > start_ && turn_ % every_ == 0 ? second_.get() : first_.get();
      auto c = s->next(1);
      if (c.empty()) c = (s == first_.get() ? second_ : first_)->next(1);
      if (c.empty()) break;
      if (fresh(c.front())) out.push_back(std::move(c.front()));
    }
    return out;
  }
  void observe(const Config& config, const Outcome& outcome) override {
    first_->observe(config, outcome);
    second_->observe(config, outcome);
  }

 private:
  // Whether neither part proposed `c` before. By rank: a config's key is a
  // formatted string, and formatting every proposal was 6% of `auto`'s
  // instructions on the hub's GEMM space.
  bool fresh(const Config& c) {
    if (auto r = space_.index_of(c)) return proposed_.insert(*r);
    return proposed_outside_.insert(c.key()).second;
  }

  const Space& space_;
  std::unique_ptr<Strategy> first_, second_;
  std::size_t start_, every_;
  std::optional<std::uint64_t> budget_;
  std::size_t turn_ = 0;
  RankSet proposed_;
  std::set<std::string> proposed_outside_;  // configs outside the space, which no part proposes today
};

}  // namespace

// The choice, by name; the StrategyContext's options are auto's (none), so
// the chosen strategy runs with its defaults.
std::string auto_choice(const Space& space, std::optional<std::uint64_t> budget, bool time_limited) {
  const std::uint64_t n = space.count();
  const bool covers = budget ? *budget >= n : !time_limited;
  if (covers || !has_usable_index(space)) return "exhaustive";
  return "surrogate+genetic";
}

StrategyInfo auto_strategy() {
  return {"auto",
          "the default: exhaustive when the budget covers the space or there is none; otherwise the model-guided "
          "`surrogate`, the best in bench/search at budgets of 1 to 5% of the space, with every third proposal "
          "after the first 100 a `genetic` child of the fastest configs (docs/search.md)",
          {},
          [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
            const std::string chosen = auto_choice(c.space, c.budget, c.time_limited);
            auto make = [&](std::string_view name, std::uint64_t seed) {
              return make_strategy(name, c.space, seed, c.budget, {}, {}, c.time_limited);
            };
            if (chosen == "exhaustive") return std::make_unique<AutoStrategy>(make("exhaustive", c.seed), chosen);
            return std::make_unique<AutoStrategy>(
                std::make_unique<Interleaved>(c.space, make("surrogate", c.seed), make("genetic", c.seed + 1),
                                              kGeneticAfter, kGeneticEvery, c.budget),
                chosen);
          }};
}

}  // namespace tunekit::detail
