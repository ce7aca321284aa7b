// Model-guided local search: an additive surrogate of log time with pairwise
// interactions (detail/additive_model.hpp), refitted as each result comes in,
// picks a descent's next move: it takes the parameters in turn (in rounds
// ordered by the gain the model predicts along each) and, among the
// valid configs where only that parameter differs (or a second one too, where
// the constraints demand it, or in a trade that keeps their product), measures
// the one with the highest expected improvement, so a descent measures
// promising moves first and values it knows little about before ones it
// knows are slow.
// Several descents (walkers) start from the fastest configs of the initial
// sample; the fastest walker that is not stuck moves. A walker is stuck after
// `patience` neighbours measured without improvement; when all are, the
// slowest restarts at the best candidate among random draws and
// perturbations of the fastest config.
//
// A share of the steps (`explore`) probes the whole space instead: the best
// of random draws under a draw from the model's posterior (Thompson
// sampling). Descents alone settle on the broad plateau they start in; on
// the convolution caches of bench/search the fastest configs lie in a
// narrow basin elsewhere, which only such probes find. In the last
// `endgame` share of a budget there are no probes: a basin a probe finds
// there has no evaluations left to be descended. The model sees every
// time above `cap` times the fastest as that: the many configs 10 to 100
// times slower would otherwise set the effects that rank the fast ones.
//
// Once `switch_after` results are in, a switch that every walker holds at
// the same value (a parameter of two values, such as "use shared memory")
// gets one descent of its own at its other value, which never changes it.
// Such a switch often picks another algorithm: the model, fitted mostly
// around the walkers, judges the other value by configs that are slow for
// other reasons, and no walker would try it where it pays.
// docs/search.md gives the measurements behind the defaults.
#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "search/detail/additive_model.hpp"
#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

struct SurrogateOptions {
  std::size_t initial;     // random configs before the model leads
  std::size_t walkers;     // descents kept at once
  std::size_t patience;    // neighbours measured without improvement before a walker is stuck
  std::size_t random;      // random candidates of a restart or a probe
  double explore;          // share of the proposals that probe the whole space
  double endgame;          // share of the budget, at its end, without probes
  double min_gain;         // an improvement smaller than this (relative) does not renew a walker's patience
  double failure_penalty;  // a failed config counts as this factor slower than the slowest measured
  bool thompson;           // restarts and probes pick by a posterior draw, not expected improvement
  double cap;              // the model sees no time above this factor of the fastest (0: no cap)
  bool pairs;
  double sweep;                 // share of a descent's moves that take its parameters in turn
  bool repair;                  // a move to a value invalid with the rest also changes one other parameter
  bool trade;                   // a move along a quantity may move another the opposite way, keeping their product
  std::size_t spread;           // a find this many parameters from every walker may replace the slowest (0: never)
  std::size_t switch_after;     // results before a neglected switch gets a descent (0: never)
  double switch_share;          // share of the proposals that descent takes while it lasts
  std::size_t switch_patience;  // its moves without improvement before it ends
};

// A descent, and the descent of a switch that every walker holds at one
// value (it never moves `parameter`). They live outside SurrogateSearch:
// nested there, SwitchDescent is not yet default-constructible for clang
// where the class declares its std::optional members.
struct Walker {
  Indices x;
  double cost = INFINITY;  // log time
  std::size_t misses = 0;
  std::optional<std::uint64_t> start;  // a restart point not measured yet
  std::vector<std::size_t> round{};    // the parameters its sweep moves take in turn
  std::size_t next = 0;                // the next in `round`
  std::uint64_t moves = 0;             // moves proposed, for the share `sweep`
};

struct SwitchDescent {
  std::size_t parameter = 0;
  Walker walker;
  bool ended = false;
};

class SurrogateSearch : public IndexedSearch {
 public:
  SurrogateSearch(const StrategyContext& c, SurrogateOptions o)
      : IndexedSearch(c.space, c.seed, c.budget), o_(o), model_(c.space.parameters(), shape(o)) {
    if (!o_.trade) return;
    const auto& params = c.space.parameters();
    log_values_.resize(params.size());
    for (std::size_t p = 0; p < params.size(); ++p) {
      const auto& values = params[p].values;
      // Two values make a switch, not a quantity (and a 0 has no log).
      if (values.size() < 3 ||
          !std::all_of(values.begin(), values.end(), [](const Value& v) { return v.is_number() && v.to_double() > 0; }))
        continue;
      for (const Value& v : values) log_values_[p].push_back(std::log(v.to_double()));
    }
  }

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
    std::optional<double> y;
    if (o.cost) {
      y = std::log(*o.cost);
      worst_ = ok_ == 0 ? *y : std::max(worst_, *y);
      ++ok_;
      model_.add(o.x, *y);
      note_fastest(o);
      for (const Indices& f : failed_) model_.add(f, worst_ + std::log(o_.failure_penalty));
      failed_.clear();
      dirty_ = true;
    } else if (ok_ == 0) {
      failed_.push_back(o.x);
    } else {
      model_.add(o.x, worst_ + std::log(o_.failure_penalty));
      dirty_ = true;
    }
    auto owner = proposed_by_.find(o.rank);
    if (owner == proposed_by_.end()) {
      // A config no walker proposed (an initial draw, a seed, a probe, or
      // under `auto` a genetic child or a pick of `bayes`) takes over the slowest walker
      // when it is faster than every walker, or faster than the slowest and
      // `spread` parameters or more from each: a second basin gets a
      // descent of its own instead of waiting to beat the first one's best
      // (bench/search, 300 seeds: the 10th percentile at 1% on the held-out
      // caches from 0.857 to 0.878, the means unchanged or up by 0.002 to
      // 0.006).
      if (y) offer(o.x, *y, o_.spread);
      return;
    }
    if (owner->second == kSwitchDescent) {
      proposed_by_.erase(owner);
      Walker& w = switch_->walker;
      if (y && *y < w.cost) {
        w.x = o.x;
        w.cost = *y;
        w.misses = 0;
        // Faster than every walker: a walker takes it over too, so the
        // search goes on from it with the switch free again.
        offer(o.x, *y, 0);
      } else {
        ++w.misses;
      }
      return;
    }
    Walker& w = walkers_[owner->second];
    proposed_by_.erase(owner);
    if (y && (*y < w.cost || (w.start && o.rank == *w.start))) {
      // First improvement (or the walker's new start): it moves here. A
      // small gain moves it but does not renew its patience, so a descent
      // that creeps through a poor region gives way.
      const bool renews = w.start || !std::isfinite(w.cost) || *y < w.cost - std::log1p(o_.min_gain);
      w.x = o.x;
      w.cost = *y;
      if (renews) w.misses = 0;
      else ++w.misses;
      w.start.reset();
    } else {
      ++w.misses;
    }
  }

 private:
  static ModelShape shape(const SurrogateOptions& o) {
    ModelShape m;
    m.pairs = o.pairs;
    return m;
  }

  // Walkers start at the fastest distinct configs measured so far.
  void start_walkers() {
    if (!walkers_.empty()) return;
    std::vector<const Observation*> ranked;
    for (const auto& o : observations())
      if (o.cost) ranked.push_back(&o);
    std::sort(ranked.begin(), ranked.end(),
              [](const Observation* a, const Observation* b) { return *a->cost < *b->cost; });
    for (std::size_t i = 0; i < ranked.size() && walkers_.size() < std::max<std::size_t>(1, o_.walkers); ++i) {
      Walker w;
      w.x = ranked[i]->x;
      w.cost = std::log(*ranked[i]->cost);
      walkers_.push_back(std::move(w));
    }
  }

  std::optional<std::uint64_t> guided() {
    if (o_.cap > 0 && ok_ > 0) {
      const double ceiling = best_cost() + std::log(o_.cap);
      if (ceiling < model_.ceiling()) {
        model_.cap(ceiling);  // the next full fit takes it in
        dirty_ = true;
      }
    }
    if (dirty_) {
      // A full fit while it is cheap (one sweep: it starts from the last
      // fit, which lacks one point), then as the data grows by a quarter;
      // in between, each new result nudges the effects it touches.
      if (model_.size() <= kAlwaysFit || model_.size() >= fitted_at_ + fitted_at_ / 4) {
        model_.fit(model_.size() <= kAlwaysFit ? 1 : 2);
        fitted_at_ = model_.size();
      } else {
        model_.absorb(absorbed_);
      }
      absorbed_ = model_.size();
      dirty_ = false;
    }
    start_walkers();
    if (auto r = switch_move()) return r;
    // Now and then a probe of the whole space, so a descent in a poor
    // region does not take the whole budget.
    ++steps_;
    if (in_share(steps_, o_.explore) && !in_endgame())
      if (auto r = restart_point(false)) return r;
    // The fastest walker that is not stuck moves; when all are stuck, the
    // slowest restarts.
    std::optional<std::size_t> turn;
    for (std::size_t i = 0; i < walkers_.size(); ++i)
      if (walkers_[i].misses < o_.patience && (!turn || walkers_[i].cost < walkers_[*turn].cost)) turn = i;
    if (turn) {
      Walker& w = walkers_[*turn];
      const double target = std::isfinite(w.cost) ? w.cost : best_cost();
      ++w.moves;
      // A sweep move's candidates, over all parameters, include every valid
      // neighbour: when it finds none untried, neither would the best move.
      const bool in_turn = in_share(w.moves, o_.sweep);
      if (auto r = in_turn ? sweep_move(w, target) : best_move(neighbours(w.x, Neighbourhood::hamming), target)) {
        proposed_by_[*r] = *turn;
        return r;
      }
      w.misses = o_.patience;  // nothing left around it
    }
    const std::size_t slowest = slowest_walker();
    auto r = restart_point(true);
    if (r) {
      Walker& w = walkers_[slowest];
      w.x = indices(*r);
      w.cost = INFINITY;
      w.misses = 0;
      w.start = r;
      proposed_by_[*r] = slowest;
    }
    return r;
  }

  double best_cost() const { return std::log(*best()->cost); }

  // Whether the results in and those awaited reach the budget's last
  // `endgame` share.
  bool in_endgame() const {
    const auto b = budget();
    return b && static_cast<double>(observations().size() + pending()) >= (1 - o_.endgame) * static_cast<double>(*b);
  }

  std::size_t slowest_walker() const {
    std::size_t slowest = 0;
    for (std::size_t i = 1; i < walkers_.size(); ++i)
      if (walkers_[i].cost > walkers_[slowest].cost) slowest = i;
    return slowest;
  }

  // A find at x (log time y) takes over the slowest walker when it is faster
  // than every walker, or (with `spread` above 0) faster than the slowest and
  // at least `spread` parameters from each.
  void offer(const Indices& x, double y, std::size_t spread) {
    if (walkers_.empty()) return;
    const std::size_t slowest = slowest_walker();
    bool fastest = true, apart = spread > 0;
    for (const Walker& w : walkers_) {
      fastest = fastest && y < w.cost;
      apart = apart && distance(x, w.x) >= spread;
    }
    if (fastest || (apart && y < walkers_[slowest].cost)) walkers_[slowest] = Walker{x, y, 0, std::nullopt};
  }

  // Whether the n-th of a series of turns (from 1) is one of the `share`
  // spread evenly through it.
  static bool in_share(std::uint64_t n, double share) {
    return share > 0 && std::fmod(static_cast<double>(n) * share, 1.0) + share >= 1.0;
  }

  static std::size_t distance(const Indices& a, const Indices& b) {
    std::size_t d = 0;
    for (std::size_t k = 0; k < a.size(); ++k) d += a[k] != b[k];
    return d;
  }

  // The walker's next parameter in turn that has an untried move: the move
  // along it with the highest expected improvement. Taking the parameters in
  // turn keeps the model from steering every move by effects it estimated
  // from configs slow for another reason (bench/search, 150 seeds: at 2% on
  // the A4000 convolution cache the fast basin is reached in 53% of the
  // seeds instead of 29%).
  // A parameter `held` is never moved, not even by a repair.
  std::optional<std::uint64_t> sweep_move(Walker& w, double target, std::optional<std::size_t> held = std::nullopt) {
    // Enough turns to reach every parameter once, across a new round.
    for (std::size_t k = 0; k <= w.x.size(); ++k) {
      if (w.next >= w.round.size()) {
        w.round = by_predicted_gain(w.x);
        w.next = 0;
      }
      std::vector<Indices> moves = moves_along(w.x, w.round[w.next++]);
      if (held) std::erase_if(moves, [&](const Indices& y) { return y[*held] != w.x[*held]; });
      if (auto r = best_move(std::move(moves), target)) return r;
    }
    return std::nullopt;
  }

  // The switch descent's next move, when it is its turn: it starts once
  // `switch_after` results are in, at the fastest config measured with the
  // neglected value, and ends after `switch_patience` moves without
  // improvement (one per search: bench/search found a second one no help).
  std::optional<std::uint64_t> switch_move() {
    if (o_.switch_after == 0 || ok_ < o_.switch_after || (switch_ && switch_->ended)) return std::nullopt;
    if (!switch_ && !(switch_ = neglected_switch())) return std::nullopt;  // none yet
    if (!in_share(++switch_turns_, o_.switch_share)) return std::nullopt;
    Walker& w = switch_->walker;
    std::optional<std::uint64_t> r;
    if (w.misses < o_.switch_patience) r = sweep_move(w, w.cost, switch_->parameter);
    if (!r) {
      switch_->ended = true;
      return std::nullopt;
    }
    proposed_by_[*r] = kSwitchDescent;
    return r;
  }

  // `o` is the last of observations().
  void note_fastest(const Observation& o) {
    fastest_with_.resize(o.x.size());
    for (std::size_t p = 0; p < o.x.size(); ++p) {
      if (cardinality(p) != 2) continue;
      auto& f = fastest_with_[p][o.x[p]];
      if (!f || *o.cost < *observations()[*f].cost) f = observations().size() - 1;
    }
  }

  // Among the parameters of two values that every walker holds at one
  // value, and whose other value has a measured config, the one whose flip
  // the model predicts slowest from the fastest config: the value the
  // walkers are least likely ever to try.
  std::optional<SwitchDescent> neglected_switch() const {
    const Indices& fastest = best()->x;
    std::optional<SwitchDescent> pick;
    double slowest = -INFINITY;
    for (std::size_t p = 0; p < fastest.size(); ++p) {
      if (cardinality(p) != 2) continue;
      const std::uint32_t held = walkers_.front().x[p];
      if (!std::all_of(walkers_.begin(), walkers_.end(), [&](const Walker& w) { return w.x[p] == held; })) continue;
      const auto at = fastest_with_[p][1 - held];
      if (!at) continue;
      const Observation& start = observations()[*at];
      Indices flipped = fastest;
      flipped[p] = 1 - held;
      const double slower = model_.predict(flipped) - model_.predict(fastest);
      if (slower <= slowest) continue;
      slowest = slower;
      pick.emplace();
      pick->parameter = p;
      pick->walker.x = start.x;
      pick->walker.cost = std::log(*start.cost);
    }
    return pick;
  }

  // A round's order: the parameters by the largest gain the model predicts
  // for a move along each from x, not in the order the spec declares them,
  // which says nothing. With that order a parameter declared last (the H200
  // GEMM's EPILOGUE and GROUP_M) came too late for a budget of 30: replayed
  // on six exhaustive H200 databases of kernels/gemm/wgmma_gemm.yaml, 100
  // seeds each, 54 runs reach 0.98 of the best that did not and 33 the other
  // way; the bench/search caches level over 500 seeds. Trades are left out
  // of the gain: with them a round costs about five times the predictions on
  // the hub's GEMM space, for an order no better in bench/search (300 seeds).
  std::vector<std::size_t> by_predicted_gain(const Indices& x) const {
    const double here = model_.predict(x);
    std::vector<std::pair<double, std::size_t>> gain;
    for (std::size_t p = 0; p < x.size(); ++p) {
      double lowest = here;
      for (const auto& y : moves_along(x, p, false)) lowest = std::min(lowest, model_.predict(y));
      gain.emplace_back(here - lowest, p);
    }
    std::stable_sort(gain.begin(), gain.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::size_t> order;
    for (const auto& g : gain) order.push_back(g.second);
    return order;
  }

  // The valid configs that differ from x in parameter p only, and with
  // `repair` those that need one more parameter changed to be valid: for
  // each value of p the constraints rule out with the rest of x, each
  // other value of each other parameter that makes it valid. Without them
  // a descent cannot cross a constraint such as the convolution caches'
  // "padding only where the block is not a multiple of 32": from a padded
  // config no single move reaches the unpadded blocks of 64 to 256 where
  // the MI250X's fastest configs are (bench/search, 150 seeds: the mean
  // fraction of optimum on the shared caches at 2% from 0.928 to 0.944).
  // With `trade` and `trades`, the trades led by p as well.
  std::vector<Indices> moves_along(const Indices& x, std::size_t p, bool trades = true) const {
    std::vector<Indices> out;
    Indices y = x;
    for (std::uint32_t v = 0; v < cardinality(p); ++v) {
      if (v == x[p]) continue;
      y[p] = v;
      const std::size_t invalid_at = first_invalid(y);
      if (invalid_at == y.size()) {
        out.push_back(y);
      } else if (o_.repair) {
        // A parameter after the one where y leaves the space cannot bring
        // it back: the repairs skip them (checking them was 3% of `auto`'s
        // instructions on the hub's GEMM space).
        for (std::size_t q = 0; q <= invalid_at; ++q) {
          if (q == p) continue;
          for (std::uint32_t u = 0; u < cardinality(q); ++u) {
            if (u == x[q]) continue;
            y[q] = u;
            if (valid(y)) out.push_back(y);
          }
          y[q] = x[q];
        }
      }
      y[p] = x[p];
    }
    if (o_.trade && trades) add_trades(x, p, out);
    return out;
  }

  // Trades led by p: p takes another value and each other quantity q the
  // value nearest to keeping the product of the two, where that is another
  // value of q and the config is valid (block_size_y 2 -> 1 with
  // tile_size_y 2 -> 4: the rows a block covers stay the same). Kernels
  // trade threads for work per thread, tile height for width, stages for
  // tile size; where the fastest configs lie across such a trade, every
  // single move from a config near them is slower and a descent stops
  // short. Steepest descent over every config of the convolution caches,
  // with trades among the moves, ends within 0.95 of the optimum from 16%
  // of the starts instead of 9% (A100), 81% instead of 62% (MI250X) and
  // 38% instead of 21% (W6600).
  void add_trades(const Indices& x, std::size_t p, std::vector<Indices>& out) const {
    if (log_values_[p].empty()) return;
    for (std::size_t q = 0; q < x.size(); ++q) {
      const auto& lq = log_values_[q];
      if (q == p || lq.empty()) continue;
      for (std::uint32_t a = 0; a < log_values_[p].size(); ++a) {
        if (a == x[p]) continue;
        const double want = lq[x[q]] - (log_values_[p][a] - log_values_[p][x[p]]);
        std::uint32_t b = 0;
        for (std::uint32_t u = 1; u < lq.size(); ++u)
          if (std::abs(lq[u] - want) < std::abs(lq[b] - want)) b = u;
        if (b == x[q]) continue;
        Indices y = x;
        y[p] = a;
        y[q] = b;
        if (valid(y)) out.push_back(std::move(y));
      }
    }
  }

  // The best of `random` draws from the whole space and, for a restart
  // (not a probe), perturbations of the fastest config: by a draw from the
  // model's posterior (Thompson) or by expected improvement over the
  // fastest time. The pool's storage is kept from call to call: probes come
  // every few steps, and allocating each candidate afresh cost more than
  // scoring it.
  std::optional<std::uint64_t> restart_point(bool near_best) {
    std::size_t used = 0;
    auto slot = [&]() -> Candidate& {
      if (used == pool_.size()) pool_.emplace_back();
      return pool_[used++];
    };
    for (std::size_t k = 0; k < o_.random; ++k) {
      const std::uint64_t r = uniform_below(rng_, space_size());
      if (tried(r)) continue;
      Candidate& c = slot();
      c.rank = r;
      c.x.resize(parameter_count());
      space_.indices_at(r, c.x);
    }
    for (int k = 0; near_best && k < 8; ++k) {
      Candidate& c = slot();
      c.rank.reset();
      c.x = best()->x;
      for (int s = 0; s < 3; ++s)
        if (auto y = random_neighbour(c.x)) c.x = std::move(*y);
    }
    const std::span<const Candidate> pool(pool_.data(), used);
    if (!o_.thompson)
      return best_of(pool, [&](const Indices& x) { return model_.expected_improvement(x, best_cost()); });
    model_.sample(rng_);
    return best_of(pool, [&](const Indices& x) { return -model_.predict_sampled(x); });
  }

  struct Candidate {
    std::optional<std::uint64_t> rank;  // when known already
    Indices x;
  };

  // The untried valid config of `configs` with the highest score. A
  // candidate is ranked only when it leads: ranking costs more than scoring.
  template <class Score>
  std::optional<std::uint64_t> best_of(std::span<const Candidate> configs, Score score) {
    std::optional<std::uint64_t> pick;
    double top = -INFINITY;
    for (const auto& c : configs) {
      const double v = score(c.x);
      if (!(v > top)) continue;
      auto r = c.rank ? c.rank : rank_of(c.x);
      if (!r || tried(*r)) continue;
      top = v;
      pick = r;
    }
    return pick;
  }

  // The move with the highest expected improvement over the log time `target`.
  std::optional<std::uint64_t> best_move(std::vector<Indices> moves, double target) {
    std::vector<Candidate> c;
    c.reserve(moves.size());
    for (auto& x : moves) c.push_back({std::nullopt, std::move(x)});
    return best_of(c, [&](const Indices& x) { return model_.expected_improvement(x, target); });
  }

  SurrogateOptions o_;
  // Per parameter, the logs of its values where it is a quantity that
  // trades take part in (see add_trades); empty for the others.
  std::vector<std::vector<double>> log_values_;
  AdditiveModel model_;
  std::size_t ok_ = 0;
  double worst_ = 0;
  bool dirty_ = false;
  static constexpr std::size_t kAlwaysFit = 128;
  std::size_t fitted_at_ = 0;
  std::size_t absorbed_ = 0;  // observations the model has taken in
  std::vector<Indices> failed_;
  std::vector<Candidate> pool_;  // restart_point's, reused
  std::vector<Walker> walkers_;
  std::unordered_map<std::uint64_t, std::size_t> proposed_by_;  // rank -> walker (or kSwitchDescent)
  static constexpr std::size_t kSwitchDescent = static_cast<std::size_t>(-1);
  std::optional<SwitchDescent> switch_;
  // Per parameter of two values, per value: the fastest result with it
  // (an index into observations()).
  std::vector<std::array<std::optional<std::size_t>, 2>> fastest_with_;
  std::uint64_t switch_turns_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace

StrategyInfo surrogate_strategy() {
  return {
      "surrogate",
      "model-guided local search: an additive model of log time with pairwise interactions, refitted after each "
      "result, picks each descent's next move by expected improvement among the valid configs that differ in "
      "its next parameter in turn (by predicted gain) or trade it for another quantity; stuck descents restart, "
      "and a share of the steps probes the whole space, where a draw from the model expects most",
      {
          integer_option("initial", 8, "random configs measured before the model leads", 2, 1e6),
          integer_option("walkers", 4, "descents kept at once, started from the fastest initial configs", 1, 64),
          integer_option("patience", 8, "neighbours measured without improvement before a descent is stuck", 1, 1e6),
          integer_option("random", 32, "random candidates of a restart or a probe", 0, 1e6),
          real_option(
              "min_gain", 0.0,
              "an improvement smaller than this share of the time moves a descent but does not renew its patience", 0,
              1),
          real_option("explore", 0.4,
                      "share of the proposals that probe the whole space (a restart's candidates) instead of a descent",
                      0, 1),
          real_option("endgame", 0.25,
                      "share of an evaluation budget, at its end, with no probes: the descents take every step, since "
                      "a basin a probe finds there has no evaluations left to be descended",
                      0, 1),
          real_option("failure_penalty", 2.0,
                      "a failed config counts as this many times slower than the slowest measured", 1, 1e6),
          boolean_option("thompson", true, "restarts and probes pick by a draw from the model's posterior"),
          real_option("cap", 2.0,
                      "the model sees every time above this factor of the fastest so far as that factor (0: no cap)", 0,
                      1e6),
          boolean_option("pairs", true, "model the interaction of every pair of parameters"),
          real_option("sweep", 1.0,
                      "share of a descent's moves that take its parameters in turn (the best move along the next "
                      "one); the rest take the best of all its neighbours",
                      0, 1),
          boolean_option("repair", true,
                         "a sweep move to a value the constraints rule out with the rest of the config also changes "
                         "one other parameter, to make it valid"),
          boolean_option("trade", true,
                         "a move along a parameter of three or more positive numbers may move another such "
                         "parameter the opposite way, to the value that keeps their product nearest (block_size_y "
                         "2 -> 1 with tile_size_y 2 -> 4)"),
          integer_option(
              "spread", 3,
              "a config no descent proposed (a probe, a seed, an initial draw) that differs from every descent in "
              "at least this many parameters starts a descent in place of the slowest when faster than it "
              "(0: only when faster than every descent)",
              0, 1e6),
          integer_option("switch_after", 50,
                         "results after which a parameter of two values that every descent holds at one value (a "
                         "switch such as shared memory on or off) gets one descent of its own at the other value "
                         "(0: never)",
                         0, 1e6),
          real_option("switch_share", 0.5, "share of the proposals that the switch's descent takes while it lasts",
                      0.01, 1),
          integer_option("switch_patience", 4, "moves without improvement after which the switch's descent ends", 1,
                         1e6),
      },
      [](const StrategyContext& c) -> std::unique_ptr<Strategy> {
        if (!has_usable_index(c.space)) return random_fallback(c);
        return std::make_unique<SurrogateSearch>(
            c, SurrogateOptions{static_cast<std::size_t>(c.options.integer("initial")),
                                static_cast<std::size_t>(c.options.integer("walkers")),
                                static_cast<std::size_t>(c.options.integer("patience")),
                                static_cast<std::size_t>(c.options.integer("random")), c.options.real("explore"),
                                c.options.real("endgame"), c.options.real("min_gain"),
                                c.options.real("failure_penalty"), c.options.boolean("thompson"), c.options.real("cap"),
                                c.options.boolean("pairs"), c.options.real("sweep"), c.options.boolean("repair"),
                                c.options.boolean("trade"), static_cast<std::size_t>(c.options.integer("spread")),
                                static_cast<std::size_t>(c.options.integer("switch_after")),
                                c.options.real("switch_share"),
                                static_cast<std::size_t>(c.options.integer("switch_patience"))});
      },
      {},
      {},
      [](const Options& o) -> std::optional<std::pair<std::string, std::string>> {
        const double cap = o.real("cap");
        if (cap == 0 || cap >= 1) return std::nullopt;
        return std::pair<std::string, std::string>{
            "cap", fmt::format("{:g} is below 1: every time would be capped below the fastest; give 0 (no cap) or a "
                               "factor of at least 1",
                               cap)};
      }};
}

}  // namespace tunekit::detail
