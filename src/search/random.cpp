// Uniform sampling without replacement from the valid configs.
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "search/detail/builtin.hpp"

namespace tunekit::detail {

namespace {

// By index: a Fisher-Yates shuffle of 0..n-1 done lazily, one position per
// proposal, with the swapped positions in a hash map (memory proportional to
// the proposals, not to n). Configs come from the space's index (Space::at),
// so nothing is enumerated.
class IndexedRandomStrategy : public Strategy {
 public:
  IndexedRandomStrategy(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget)
      : space_(space), n_(space.size()), rng_(seed), planned_(budget ? std::min(*budget, n_) : n_) {}
  std::vector<Config> next(std::size_t k) override {
    std::vector<Config> out;
    while (out.size() < k && pos_ < n_) {
      const std::uint64_t j = pos_ + uniform_below(rng_, n_ - pos_);
      const std::uint64_t picked = at(j);
      moved_[j] = at(pos_);
      moved_.erase(pos_);
      ++pos_;
      if (!measured_.count(picked)) out.push_back(space_.at(picked));
    }
    return out;
  }
  // A config measured before this search drew it (a seed, the default
  // config) is not proposed again.
  void observe(const Config& config, const Outcome&) override {
    if (auto r = space_.index_of(config)) measured_.insert(*r);
  }
  // A sample of the budget's size: its first configs are as fair as any,
  // not the head of an order a budget cuts short.
  std::optional<std::uint64_t> planned() const override { return planned_; }

 private:
  std::uint64_t at(std::uint64_t i) const {
    auto it = moved_.find(i);
    return it == moved_.end() ? i : it->second;
  }
  Space space_;  // a copy: it shares the index
  std::uint64_t n_;
  std::mt19937_64 rng_;
  std::uint64_t planned_;
  std::uint64_t pos_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> moved_;
  std::unordered_set<std::uint64_t> measured_;
};

// More valid configs than 64 bits count, or no index: uniform draws, the ones
// seen before skipped (a repeat is vanishingly rare in such a space).
class DrawingRandomStrategy : public Strategy {
 public:
  DrawingRandomStrategy(const Space& space, std::uint64_t seed) : space_(space), rng_(seed) {}
  std::vector<Config> next(std::size_t k) override {
    std::vector<Config> out;
    while (out.size() < k) {
      auto ix = space_.random_indices(rng_);
      if (seen_.insert(ix).second) out.push_back(space_.config_at(ix));
    }
    return out;
  }
  void observe(const Config& config, const Outcome&) override {
    if (auto ix = space_.indices_of(config)) seen_.insert(*ix);
  }

 private:
  Space space_;
  std::mt19937_64 rng_;
  std::set<std::vector<std::uint32_t>> seen_;
};

// A space without an index (one whose index would outgrow its memory
// budget, so anything but small): uniform draws from the Cartesian product,
// each kept if the constraints allow it (uniform over the valid configs),
// with memory for the proposals only. Where the valid configs are too rare
// for draws to find one, the enumeration is walked instead, as exhaustive
// walks it, each call going on from where the last one stopped.
class UnindexedRandomStrategy : public Strategy {
 public:
  UnindexedRandomStrategy(const Space& space, std::uint64_t seed) : space_(space), rng_(seed) {
    for (const auto& p : space_.parameters()) sizes_.push_back(p.values.size());
  }
  std::vector<Config> next(std::size_t k) override {
    std::vector<Config> out;
    std::vector<std::uint32_t> ix(sizes_.size());
    while (out.size() < k && !walking_) {
      std::optional<Config> found;
      for (int tries = 0; tries < kTries && !found; ++tries) {
        for (std::size_t p = 0; p < sizes_.size(); ++p)
          ix[p] = static_cast<std::uint32_t>(uniform_below(rng_, sizes_[p]));
        if (!space_.contains_indices(ix)) continue;
        Config c = space_.config_at(ix);
        if (seen_.insert(c.key()).second) found = std::move(c);
      }
      if (found) out.push_back(std::move(*found));
      else walking_ = true;
    }
    if (walking_ && out.size() < k) {
      auto visit = [&](std::span<const std::uint32_t> v) {
        last_.assign(v.begin(), v.end());
        Config c = space_.config_at(v);
        if (seen_.insert(c.key()).second) out.push_back(std::move(c));
        return out.size() < k;
      };
      if (last_.empty()) space_.for_each(visit);
      else space_.for_each_after(last_, visit);
    }
    return out;
  }
  void observe(const Config& config, const Outcome&) override { seen_.insert(config.key()); }
  // Unknown without counting the space, which is what this avoids.
  std::optional<std::uint64_t> planned() const override { return std::nullopt; }

 private:
  static constexpr int kTries = 10000;  // draws for one config before walking instead
  Space space_;
  std::mt19937_64 rng_;
  std::vector<std::uint64_t> sizes_;
  std::unordered_set<std::string> seen_;
  bool walking_ = false;
  std::vector<std::uint32_t> last_;  // the last config walked
};

std::unique_ptr<Strategy> make_random(const Space& space, std::uint64_t seed,
                                      std::optional<std::uint64_t> budget = std::nullopt) {
  if (space.indexable()) {
    if (space.count() == UINT64_MAX) return std::make_unique<DrawingRandomStrategy>(space, seed);
    return std::make_unique<IndexedRandomStrategy>(space, seed, budget);
  }
  return std::make_unique<UnindexedRandomStrategy>(space, seed);
}

}  // namespace

StrategyInfo random_strategy() {
  return {"random",
          "uniform sampling without replacement from the valid configs",
          {},
          [](const StrategyContext& c) { return make_random(c.space, c.seed, c.budget); },
          {"random_sample"}};
}

}  // namespace tunekit::detail
