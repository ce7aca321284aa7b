#pragma once
// What the guided strategies share. They work on the space's index: a config
// is its rank (its position among the valid configs) and its value indices,
// never a Config map, except at the Strategy interface. Sampling, neighbours
// and recombination stay inside the valid configs by construction (the index
// draws and checks them), so no strategy loops rejecting invalid ones.
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunekit/strategy.hpp"

namespace tunekit::detail {

using Indices = std::vector<std::uint32_t>;

struct Observation {
  std::uint64_t rank = 0;
  Indices x;                   // value indices
  std::optional<double> cost;  // none: the config failed
};

// Ranks proposed or observed: a bitmap for spaces up to 2^27 configs, a hash
// set beyond.
class RankSet {
 public:
  explicit RankSet(std::uint64_t n);
  bool contains(std::uint64_t r) const;
  // False when it was there already.
  bool insert(std::uint64_t r);
  std::uint64_t size() const { return count_; }

 private:
  std::vector<std::uint64_t> bits_;
  std::unordered_set<std::uint64_t> set_;
  bool dense_;
  std::uint64_t count_ = 0;
};

// The base of the guided strategies: proposals by rank, each once;
// observations decoded to value indices (configs it never proposed, such as
// seeds, included); a uniform draw among the configs not tried yet.
class IndexedSearch : public Strategy {
 public:
  IndexedSearch(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget);

  std::vector<Config> next(std::size_t n) final;
  void observe(const Config& config, const Outcome& outcome) final;
  std::optional<std::uint64_t> planned() const final { return size_; }
  bool guided() const final { return true; }

 protected:
  // Appends up to `n` ranks to `out`, each one with claim() true. Fewer
  // than `n` when it wants results before it goes on (then at least one,
  // unless nothing is pending) or has nothing left.
  virtual void propose(std::size_t n, std::vector<std::uint64_t>& out) = 0;
  // A new observation (observations().back()).
  virtual void learn(const Observation& o) { (void)o; }

  // Marks `rank` as proposed; false if it was proposed or observed before.
  bool claim(std::uint64_t rank);
  bool tried(std::uint64_t rank) const { return tried_.contains(rank); }
  std::uint64_t untried() const { return size_ - tried_.size(); }
  // A config drawn uniformly among the untried ones, not claimed; none when
  // every config was tried.
  std::optional<std::uint64_t> draw_untried();

  Indices indices(std::uint64_t rank) const;
  std::optional<std::uint64_t> rank_of(std::span<const std::uint32_t> x) const;
  bool valid(std::span<const std::uint32_t> x) const { return space_.contains_indices(x); }
  std::size_t first_invalid(std::span<const std::uint32_t> x) const { return space_.first_invalid(x); }
  // The valid configs one parameter away.
  std::vector<Indices> neighbours(std::span<const std::uint32_t> x, Neighbourhood kind) const {
    return space_.neighbours(x, kind);
  }
  // A valid config that takes each parameter from `from` or `to`: it starts
  // at `from` (valid) and takes `to`'s values one parameter at a time, in a
  // random order, wherever the result stays valid. Each parameter takes
  // `to`'s value with probability `rate`.
  Indices recombine(std::span<const std::uint32_t> from, std::span<const std::uint32_t> to, double rate);
  // A valid neighbour of `x` drawn at random: a random parameter among those
  // with another valid value, then one of those values. Costs the values of
  // the parameters it looks at, not the whole neighbourhood. None when `x`
  // has no valid neighbour.
  std::optional<Indices> random_neighbour(std::span<const std::uint32_t> x);
  // A random untried config among the valid neighbours of `x` (adjacent
  // ones first when `adjacent_first`), else none.
  std::optional<std::uint64_t> untried_neighbour(std::span<const std::uint32_t> x, bool adjacent_first);

  const std::vector<Observation>& observations() const { return observations_; }
  // The fastest successful observation, if any.
  const Observation* best() const { return best_ < 0 ? nullptr : &observations_[static_cast<std::size_t>(best_)]; }
  std::size_t pending() const { return pending_; }
  std::size_t parameter_count() const { return cardinality_.size(); }
  std::uint32_t cardinality(std::size_t p) const { return cardinality_[p]; }
  std::uint64_t space_size() const { return size_; }
  std::optional<std::uint64_t> budget() const { return budget_; }

  const Space& space_;
  std::mt19937_64 rng_;

 private:
  std::uint64_t size_;
  std::optional<std::uint64_t> budget_;
  std::vector<std::uint32_t> cardinality_;
  RankSet tried_;
  std::vector<Observation> observations_;
  std::int64_t best_ = -1;
  std::size_t pending_ = 0;
  RankSet observed_;
  // Lazy Fisher-Yates over the ranks, for draw_untried().
  std::uint64_t shuffled_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> moved_;
};

// How many configs a guided strategy hands out when asked for `n`: with a
// budget, a tenth of it at a time, so that the tuner evaluates a batch
// before it asks again and the search learns from what it measured.
std::size_t batch_limit(std::optional<std::uint64_t> budget, std::size_t n);

// The guided strategies need the index; on a space that has none (it would
// outgrow its memory budget) or more configs than 64 bits count, they fall
// back to random search.
bool has_usable_index(const Space& space);
std::unique_ptr<Strategy> random_fallback(const StrategyContext& c);

double uniform01(std::mt19937_64& rng);

}  // namespace tunekit::detail
