// Simulated annealing over the valid neighbours of the current config: a
// slower neighbour is accepted with probability exp(-log(slowdown) / T), and
// T falls geometrically from `t_start` to `t_end` over the budget (over the
// space when there is none). Where every neighbour was tried, it restarts
// from an untried neighbour of the fastest config, else from a random one.
#include <cmath>

#include <fmt/format.h>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

struct AnnealingOptions {
  double t_start, t_end;
  bool adjacent;  // neighbours: one value up or down (else any other value of one parameter)
};

class AnnealingSearch : public IndexedSearch {
 public:
  AnnealingSearch(const StrategyContext& c, AnnealingOptions o) : IndexedSearch(c.space, c.seed, c.budget), o_(o) {}

 protected:
  void propose(std::size_t n, std::vector<std::uint64_t>& out) override {
    while (out.size() < n) {
      std::optional<std::uint64_t> r;
      if (current_.empty()) {
        r = draw_untried();
      } else {
        r = untried_neighbour(current_, o_.adjacent);
        if (!r && best()) {
          current_ = best()->x;  // stuck: restart from the fastest
          current_cost_ = *best()->cost;
          r = untried_neighbour(current_, o_.adjacent);
        }
        if (!r) r = draw_untried();
      }
      if (!r || !claim(*r)) break;
      out.push_back(*r);
      if (current_.empty()) break;  // the start is the first result
    }
  }

  void learn(const Observation& o) override {
    ++steps_;
    if (!o.cost) return;
    const double cost = std::log(*o.cost);
    if (current_.empty()) {
      current_ = o.x;
      current_cost_ = cost;
      return;
    }
    const double delta = cost - current_cost_;
    if (delta <= 0 || uniform01(rng_) < std::exp(-delta / temperature())) {
      current_ = o.x;
      current_cost_ = cost;
    }
  }

 private:
  double temperature() const {
    const double horizon = static_cast<double>(budget().value_or(space_size()));
    const double progress = std::min(1.0, static_cast<double>(steps_) / std::max(1.0, horizon));
    return o_.t_start * std::pow(o_.t_end / o_.t_start, progress);
  }

  AnnealingOptions o_;
  Indices current_;
  double current_cost_ = 0;  // log time
  std::uint64_t steps_ = 0;
};

}  // namespace

StrategyInfo annealing_strategy() {
  return {
      "annealing",
      "simulated annealing over valid neighbours, cooling geometrically over the budget; restarts near the "
      "fastest config when every neighbour was tried",
      {
          real_option("t_start", 0.2,
                      "start temperature: a 20% slower neighbour is accepted with probability 1/e at 0.2", 1e-6, 1e6),
          real_option("t_end", 0.005, "end temperature (at the end of the budget)", 1e-9, 1e6),
          text_option("neighbourhood", "hamming",
                      "hamming: another value of one parameter; adjacent: the next or previous value of one parameter",
                      {"hamming", "adjacent"}),
      },
      [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
        if (!has_usable_index(c.space)) return random_fallback(c);
        return std::make_unique<AnnealingSearch>(c, AnnealingOptions{c.options.real("t_start"), c.options.real("t_end"),
                                                                     c.options.text("neighbourhood") == "adjacent"});
      },
      {"simulated_annealing"},
      {{"T", "t_start"},
       {"T_min", "t_end"},
       {"alpha", "", "the temperature falls geometrically from t_start to t_end over the budget"},
       {"neighbor", "neighbourhood", "hamming or adjacent"}},
      [](const Options& o) -> std::optional<std::pair<std::string, std::string>> {
        if (o.real("t_end") <= o.real("t_start")) return std::nullopt;
        return std::pair<std::string, std::string>{
            "t_end", fmt::format("{:g} is above t_start ({:g}): the search would heat up, not cool down",
                                 o.real("t_end"), o.real("t_start"))};
      }};
}

}  // namespace tunekit::detail
