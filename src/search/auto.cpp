// The default strategy: exhaustive search when the budget covers the space
// (or there is no budget), else the guided strategy that bench/search shows
// best at such budgets, blended with genetic children and Bayesian
// optimisation once the budget runs long. docs/search.md gives the rule and
// its evidence.
#include <iterator>
#include <set>
#include <vector>

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
  bool guided() const override { return inner_->guided(); }
  std::string describe() const override { return chosen_; }

 private:
  std::unique_ptr<Strategy> inner_;
  std::string chosen_;
};

// The guided strategy alone for the first kBayesFrom proposals, then with
// one in six from `bayes` up to kBlendAfter, then a cycle of proposals from
// three: `surrogate` (0), a `genetic` child (1) and `bayes` (2). All three
// observe every result, so each takes the others' finds as seeds. Why the
// blend (bench/search, lab/runs/issue-23/tuning.md):
// - genetic children recombine the fastest configs the model found, which
//   reaches narrow basins that the model's probes miss (the A4000
//   convolution cache at 5% of the space: the fastest basin in 75 of 100
//   seeds instead of 62);
// - the Gaussian process's expected improvement goes where it knows least,
//   corners of the box included, where the additive model ranks configs by
//   effects learnt elsewhere: on the held-out caches at 5% (900 seeds) the
//   mean of medians went from 0.983 to 0.999 (W6600 convolution 0.836 ->
//   0.990, W6600 dedispersion 0.977 -> 1.000), at 1 and 2% it stayed level,
//   and on the shared caches the 5% p10 went from 0.977 to 0.961;
// - one `bayes` pick in six from the 50th proposal escapes traps whose way
//   out changes two parameters at once, each to an end of its range (the
//   RTX 3090 pnpoly cache at 2%: 10th percentile 0.868 -> 0.997); with
//   `surrogate`'s endgame that took the held-out caches' 2% p10 from 0.929
//   to 0.935 (900 seeds). The blend's full share from the 50th cost the
//   shared caches' 2% mean 0.013.
constexpr std::size_t kBayesFrom = 50;
constexpr std::size_t kBlendAfter = 100;
constexpr std::size_t kCycle[] = {1, 2, 0, 2, 0, 2};  // by proposal number mod 6

// Which part proposes the n-th time (from 1).
constexpr std::size_t part_for(std::size_t turn) {
  if (turn > kBlendAfter) return kCycle[turn % std::size(kCycle)];
  return turn > kBayesFrom && turn % std::size(kCycle) == 0 ? 2 : 0;
}
// `bayes` with a smaller pool and process than its defaults: it observes
// every result, so its conditioning is paid at every step; this keeps
// `auto` at 278 thousand instructions per evaluation on the hub's GEMM
// space (390 with the defaults, 162 without `bayes`).
const std::vector<OptionValue> kBayesInAuto = {{"candidates", std::int64_t{64}, {}},
                                               {"max_points", std::int64_t{64}, {}}};

class Interleaved : public Strategy {
 public:
  Interleaved(const Space& space, std::vector<std::unique_ptr<Strategy>> parts, std::optional<std::uint64_t> budget)
      : space_(space), parts_(std::move(parts)), budget_(budget), proposed_(space.size()) {}

  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    n = batch_limit(budget_, n);  // the batches its parts would hand out
    // Each asks for one at a time; a config two propose in one batch is
    // kept once (a strategy only skips what it has seen the result of).
    for (std::size_t asked = 0; out.size() < n && asked < 2 * n + 2; ++asked) {
      const std::size_t first = part_for(++turn_);
      // A part with nothing to propose hands its turn to the next.
      std::vector<Config> c;
      for (std::size_t k = 0; k < parts_.size() && c.empty(); ++k) c = parts_[(first + k) % parts_.size()]->next(1);
      if (c.empty()) break;
      if (fresh(c.front())) out.push_back(std::move(c.front()));
    }
    return out;
  }
  void observe(const Config& config, const Outcome& outcome) override {
    for (auto& p : parts_) p->observe(config, outcome);
  }
  // What each part would propose alone: the whole space (the tuner caps it
  // by the budget, for the progress bar's total).
  std::optional<std::uint64_t> planned() const override { return parts_.front()->planned(); }
  bool guided() const override { return true; }

 private:
  // Whether no part proposed `c` before. By rank: a config's key is a
  // formatted string, and formatting every proposal was 6% of `auto`'s
  // instructions on the hub's GEMM space.
  bool fresh(const Config& c) {
    if (auto r = space_.index_of(c)) return proposed_.insert(*r);
    return proposed_outside_.insert(c.key()).second;
  }

  const Space& space_;
  std::vector<std::unique_ptr<Strategy>> parts_;
  std::optional<std::uint64_t> budget_;
  std::size_t turn_ = 0;
  RankSet proposed_;
  std::set<std::string> proposed_outside_;  // configs outside the space, which no part proposes today
};

}  // namespace

// The choice, by name; the StrategyContext's options are auto's (none), so
// the chosen strategy runs with its defaults. The blend's name is the same
// whatever the budget (bench/search/report.py groups results by it), though
// a budget of 50 or less leaves `surrogate` proposing alone.
std::string auto_choice(const Space& space, std::optional<std::uint64_t> budget, bool time_limited) {
  // No index to move through (too large to index, or more configs than 64
  // bits count): the guided strategies would sample at random anyway. Asked
  // before the count, which without an index is a search of the whole space.
  if (!has_usable_index(space)) return budget || time_limited ? "random" : "exhaustive";
  const std::uint64_t n = space.count();
  const bool covers = budget ? *budget >= n : !time_limited;
  if (covers) return "exhaustive";
  return "surrogate+genetic+bayes";
}

StrategyInfo auto_strategy() {
  return {"auto",
          "the default: exhaustive when the budget covers the space or there is none; otherwise the model-guided "
          "`surrogate`, the best in bench/search at budgets of 1 to 5% of the space; from the 50th proposal one in "
          "six comes from `bayes`, and after the first 100, of every six one is a `genetic` child of the fastest "
          "configs and three come from `bayes` (docs/search.md); `random` on a space too large to index",
          {},
          [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
            const std::string chosen = auto_choice(c.space, c.budget, c.time_limited);
            auto make = [&](std::string_view name, std::uint64_t seed, const std::vector<OptionValue>& options = {}) {
              return make_strategy(name, c.space, seed, c.budget, options, {}, c.time_limited);
            };
            if (chosen == "exhaustive" || chosen == "random")
              return std::make_unique<AutoStrategy>(make(chosen, c.seed), chosen);
            std::vector<std::unique_ptr<Strategy>> parts;
            parts.push_back(make("surrogate", c.seed));
            parts.push_back(make("genetic", c.seed + 1));
            parts.push_back(make("bayes", c.seed + 2, kBayesInAuto));
            return std::make_unique<AutoStrategy>(std::make_unique<Interleaved>(c.space, std::move(parts), c.budget),
                                                  chosen);
          }};
}

}  // namespace tunekit::detail
