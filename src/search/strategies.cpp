#include <random>
#include <set>
#include <unordered_map>

#include "tunekit/search.hpp"

namespace tunekit {

namespace {

// Proposes a fixed sequence, in order.
class SequenceStrategy : public Strategy {
 public:
  SequenceStrategy(std::string_view name, std::vector<Config> configs) : name_(name), configs_(std::move(configs)) {}
  std::string_view name() const override { return name_; }
  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    while (out.size() < n && pos_ < configs_.size()) out.push_back(configs_[pos_++]);
    return out;
  }
  std::optional<std::size_t> planned() const override { return configs_.size(); }

 private:
  std::string_view name_;
  std::vector<Config> configs_;
  std::size_t pos_ = 0;
};

// Unbiased integer in [0, n): rejection of the short last block.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % n;
}

// Uniform sampling without replacement by index: a Fisher-Yates shuffle of
// 0..n-1 done lazily, one position per proposal, with the swapped positions
// in a hash map (memory proportional to the proposals, not to n). Configs
// come from the space's index (Space::at), so nothing is enumerated.
class IndexedRandomStrategy : public Strategy {
 public:
  IndexedRandomStrategy(const Space& space, std::uint64_t seed) : space_(space), n_(space.size()), rng_(seed) {}
  std::string_view name() const override { return "random"; }
  std::vector<Config> next(std::size_t k) override {
    std::vector<Config> out;
    while (out.size() < k && pos_ < n_) {
      const std::uint64_t j = pos_ + uniform_below(rng_, n_ - pos_);
      const std::uint64_t picked = at(j);
      moved_[j] = at(pos_);
      moved_.erase(pos_);
      ++pos_;
      out.push_back(space_.at(picked));
    }
    return out;
  }
  std::optional<std::size_t> planned() const override {
    if (n_ > SIZE_MAX) return std::nullopt;
    return static_cast<std::size_t>(n_);
  }

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
};

// A space with more valid configs than 64 bits count: uniform draws, the
// ones seen before skipped.
class HugeRandomStrategy : public Strategy {
 public:
  HugeRandomStrategy(const Space& space, std::uint64_t seed) : space_(space), rng_(seed) {}
  std::string_view name() const override { return "random"; }
  std::vector<Config> next(std::size_t k) override {
    std::vector<Config> out;
    while (out.size() < k) {
      auto ix = space_.random_indices(rng_);
      if (seen_.insert(ix).second) out.push_back(space_.config_at(ix));
    }
    return out;
  }
  std::optional<std::size_t> planned() const override { return std::nullopt; }

 private:
  Space space_;
  std::mt19937_64 rng_;
  std::set<std::vector<std::uint32_t>> seen_;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive(const Space& space) {
  return std::make_unique<SequenceStrategy>("exhaustive", space.enumerate());
}

std::unique_ptr<Strategy> make_random(const Space& space, std::uint64_t seed) {
  if (space.indexable()) {
    if (space.count() == UINT64_MAX) return std::make_unique<HugeRandomStrategy>(space, seed);
    return std::make_unique<IndexedRandomStrategy>(space, seed);
  }
  // Not indexable (the index would exceed its memory budget): shuffle the
  // enumeration. Sampling without replacement = a prefix of a uniform shuffle. The
  // Fisher-Yates loop is spelled out (std::shuffle's algorithm is not
  // specified), so a seed gives the same order with every standard library.
  std::vector<Config> configs = space.enumerate();
  std::mt19937_64 rng(seed);
  for (std::size_t i = configs.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_below(rng, i));
    std::swap(configs[i - 1], configs[j]);
  }
  return std::make_unique<SequenceStrategy>("random", std::move(configs));
}

std::unique_ptr<Strategy> make_list(std::vector<Config> configs) {
  return std::make_unique<SequenceStrategy>("list", std::move(configs));
}

std::unique_ptr<Strategy> make_strategy(const SearchSettings& settings, const Space& space) {
  switch (settings.strategy) {
    case StrategyKind::random: return make_random(space, settings.seed);
    case StrategyKind::exhaustive: break;
  }
  return make_exhaustive(space);
}

}  // namespace tunekit
