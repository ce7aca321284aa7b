// The default strategy: exhaustive search when the budget covers the space
// (or there is no budget), else the guided strategy that bench/search shows
// best at such budgets. docs/search.md gives the rule and its evidence.
#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

StrategyInfo exhaustive_strategy();
StrategyInfo surrogate_strategy();

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

}  // namespace

// The choice, by name; the StrategyContext's options are auto's (none), so
// the chosen strategy runs with its defaults.
std::string auto_choice(const Space& space, std::optional<std::uint64_t> budget, bool time_limited) {
  const std::uint64_t n = space.count();
  const bool covers = budget ? *budget >= n : !time_limited;
  if (covers || !has_usable_index(space)) return "exhaustive";
  return "surrogate";
}

StrategyInfo auto_strategy() {
  return {"auto",
          "the default: exhaustive when the budget covers the space or there is none; otherwise the model-guided "
          "`surrogate`, the best in bench/search at budgets of 1 to 5% of the space (docs/search.md)",
          {},
          [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
            const std::string chosen = auto_choice(c.space, c.budget, c.time_limited);
            const StrategyInfo info = chosen == "exhaustive" ? exhaustive_strategy() : surrogate_strategy();
            const Options defaults = Options::resolve("strategy '" + info.name + "'", info.options, {});
            return std::make_unique<AutoStrategy>(
                info.make(StrategyContext{c.space, c.seed, c.budget, defaults, c.time_limited}), chosen);
          }};
}

}  // namespace tunekit::detail
