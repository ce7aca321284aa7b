#include <random>

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

}  // namespace

std::unique_ptr<Strategy> make_exhaustive(const Space& space) {
  return std::make_unique<SequenceStrategy>("exhaustive", space.enumerate());
}

std::unique_ptr<Strategy> make_random(const Space& space, std::uint64_t seed) {
  // Sampling without replacement = a prefix of a uniform shuffle. The
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
