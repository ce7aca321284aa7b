// The built-in strategies, one line each; their definitions live in the
// file named after them.
#include "search/detail/builtin.hpp"

namespace tunekit::detail {

StrategyInfo exhaustive_strategy();
StrategyInfo random_strategy();

void register_builtin_strategies(Registry<StrategyInfo>& registry) {
  registry.add(exhaustive_strategy());
  registry.add(random_strategy());
}

std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % n;
}

}  // namespace tunekit::detail
