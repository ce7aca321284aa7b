#pragma once
// The strategies that ship with tunekit: each file of src/search/ defines one
// StrategyInfo; builtin.cpp lists them.
#include <cstdint>
#include <random>

#include "tunekit/strategy.hpp"

namespace tunekit::detail {

void register_builtin_strategies(Registry<StrategyInfo>& registry);

// Unbiased integer in [0, n): rejection of the short last block, so a seed
// gives the same draws with every standard library.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n);

}  // namespace tunekit::detail
