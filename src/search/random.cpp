// Uniform sampling without replacement from the valid configs.
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
  IndexedRandomStrategy(const Space& space, std::uint64_t seed) : space_(space), n_(space.size()), rng_(seed) {}
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
  std::optional<std::uint64_t> planned() const override { return n_; }

 private:
  std::uint64_t at(std::uint64_t i) const {
    auto it = moved_.find(i);
    return it == moved_.end() ? i : it->second;
  }
  Space space_;  // a copy: it shares the index
  std::uint64_t n_;
  std::mt19937_64 rng_;
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

// A small space without an index: a shuffle of the enumeration. Sampling
// without replacement = a prefix of a uniform shuffle; the Fisher-Yates loop
// is spelled out (std::shuffle's algorithm is not specified), so a seed gives
// the same order with every standard library.
class ShuffledStrategy : public Strategy {
 public:
  ShuffledStrategy(const Space& space, std::uint64_t seed) : configs_(space.enumerate()) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = configs_.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(uniform_below(rng, i));
      std::swap(configs_[i - 1], configs_[j]);
    }
  }
  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    while (out.size() < n && pos_ < configs_.size()) {
      Config& c = configs_[pos_++];
      if (!measured_.count(c.key())) out.push_back(c);
    }
    return out;
  }
  void observe(const Config& config, const Outcome&) override { measured_.insert(config.key()); }
  std::optional<std::uint64_t> planned() const override { return configs_.size(); }

 private:
  std::vector<Config> configs_;
  std::size_t pos_ = 0;
  std::unordered_set<std::string> measured_;
};

std::unique_ptr<Strategy> make_random(const Space& space, std::uint64_t seed) {
  if (space.indexable()) {
    if (space.count() == UINT64_MAX) return std::make_unique<DrawingRandomStrategy>(space, seed);
    return std::make_unique<IndexedRandomStrategy>(space, seed);
  }
  return std::make_unique<ShuffledStrategy>(space, seed);
}

}  // namespace

StrategyInfo random_strategy() {
  return {"random",
          "uniform sampling without replacement from the valid configs",
          {},
          [](const StrategyContext& c) { return make_random(c.space, c.seed); },
          {"random_sample"}};
}

}  // namespace tunekit::detail
