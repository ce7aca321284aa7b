// Iterated local search with variable neighbourhoods and tabu memory: a
// first-improvement descent from the current config through its valid
// neighbours, the adjacent ones (one value up or down) first and then the
// rest of the Hamming neighbourhood; at a local optimum the next descent
// starts at a random config (`restart`), or at the end of a kick (a random
// walk of `kick` valid moves, one more after each kick that found nothing)
// from the fastest config. The tabu memory is every config measured: none is
// proposed again, so a descent never re-walks explored ground.
//
// Why restarts by default: a descent from a random start samples the basins
// in proportion to their size, while kicks stay near the fastest basin found.
// On the W6600 convolution cache of bench/search, descents from uniform
// starts end at the optimum in about a fifth of the starts, and the kicks
// circle the plateau at 0.84 of it (bench/search, 100 seeds, mean of medians at
// 1 / 2 / 5%: shared caches 0.771 / 0.892 / 0.952 with kicks, 0.772 / 0.953
// / 0.977 with restarts; held-out 0.881 / 0.944 / 0.969 and 0.885 / 0.946 /
// 0.989).
#include <algorithm>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

struct LocalOptions {
  std::size_t kick;      // random moves of the first kick
  std::size_t max_kick;  // the kick grows up to this
  bool restart;          // a local optimum restarts the descent at a random config (no kick)
};

class LocalSearch : public IndexedSearch {
 public:
  LocalSearch(const StrategyContext& c, LocalOptions o)
      : IndexedSearch(c.space, c.seed, c.budget), o_(o), kick_(o.kick) {}

 protected:
  void propose(std::size_t n, std::vector<std::uint64_t>& out) override {
    while (out.size() < n) {
      std::optional<std::uint64_t> r;
      if (!has_current_) {
        r = draw_untried();
      } else {
        r = next_neighbour();
        if (!r && o_.restart) {
          // The start's result becomes the current config whatever its
          // time, so the new descent runs to its own optimum.
          has_current_ = false;
          r = draw_untried();
        }
        if (!r) r = kick();
        if (!r) r = draw_untried();
      }
      if (!r || !claim(*r)) break;
      out.push_back(*r);
      if (!has_current_) break;  // the start is the first result
    }
  }

  void learn(const Observation& o) override {
    if (!o.cost) return;
    if (!has_current_ || *o.cost < current_cost_) {
      // First improvement: move and explore around the new config.
      if (has_current_) kick_ = o_.kick;
      move_to(o.x, *o.cost);
    }
  }

 private:
  void move_to(const Indices& x, double cost) {
    current_ = x;
    current_cost_ = cost;
    has_current_ = true;
    round_ = 0;
    queue_.clear();
  }

  // The current config's untried neighbours, adjacent ones first, each
  // neighbourhood in a random order.
  std::optional<std::uint64_t> next_neighbour() {
    while (true) {
      while (!queue_.empty()) {
        const std::uint64_t r = queue_.back();
        queue_.pop_back();
        if (!tried(r)) return r;
      }
      if (round_ >= 2) return std::nullopt;
      const auto kind = round_ == 0 ? Neighbourhood::adjacent : Neighbourhood::hamming;
      ++round_;
      for (const auto& x : neighbours(current_, kind))
        if (auto r = rank_of(x); r && !tried(*r)) queue_.push_back(*r);
      for (std::size_t i = queue_.size(); i > 1; --i) std::swap(queue_[i - 1], queue_[uniform_below(rng_, i)]);
    }
  }

  // A local optimum: a random walk from the fastest config. The descent goes
  // on from the walk's end, still accepting only what beats the fastest.
  std::optional<std::uint64_t> kick() {
    const Observation* b = best();
    if (!b) return std::nullopt;
    Indices x = b->x;
    for (std::size_t s = 0; s < kick_; ++s) {
      auto near = neighbours(x, Neighbourhood::hamming);
      if (near.empty()) break;
      x = near[uniform_below(rng_, near.size())];
    }
    kick_ = std::min(o_.max_kick, kick_ + 1);
    current_ = x;
    current_cost_ = *b->cost;
    round_ = 0;
    queue_.clear();
    auto r = rank_of(x);
    if (r && !tried(*r)) return r;
    return next_neighbour();
  }

  LocalOptions o_;
  std::size_t kick_;
  bool has_current_ = false;
  Indices current_;
  double current_cost_ = 0;
  int round_ = 0;  // neighbourhoods of current_ queued so far
  std::vector<std::uint64_t> queue_;
};

}  // namespace

StrategyInfo local_strategy() {
  return {
      "local",
      "iterated local search: first-improvement descent through valid neighbours (adjacent values first, then "
      "any value of one parameter); at a local optimum a new descent from a random config (or a random-walk kick "
      "from the fastest); measured configs are tabu",
      {
          integer_option("kick", 2, "with restart false: random moves of the first kick from a local optimum", 1, 1000),
          integer_option("max_kick", 6, "the kick grows by one move per fruitless kick, up to this", 1, 1000),
          boolean_option("restart", true,
                         "at a local optimum, start the next descent at a random config; false: at the end of a "
                         "kick from the fastest"),
      },
      [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
        if (!has_usable_index(c.space)) return random_fallback(c);
        return std::make_unique<LocalSearch>(
            c, LocalOptions{static_cast<std::size_t>(c.options.integer("kick")),
                            static_cast<std::size_t>(c.options.integer("max_kick")), c.options.boolean("restart")});
      },
      {"greedy_ils", "greedy_mls", "mls"},
      {{"neighbor", "", "a descent tries the adjacent neighbours first, then the rest of the Hamming neighbourhood"},
       {"random_walk", "kick",
        "with restart false, a number of random moves (Kernel Tuner's: a share of the parameters)"},
       {"no_improvement", "", "a descent ends where every neighbour was measured and none was faster"},
       {"order", "", "a descent tries its neighbours in a random order"},
       {"randomize", "", "a descent tries its neighbours in a random order"},
       // Kernel Tuner's hillclimbers: restart from the first improving
       // neighbour, or go through all of them for the best.
       {"restart", "",
        "it chooses a descent's moves: true, the first neighbour that improves (as every descent here moves), false, "
        "the best of all neighbours (mls's default, which no descent here does)"}}};
}

}  // namespace tunekit::detail
