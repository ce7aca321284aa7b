#pragma once
// The strategies that ship with tunekit: each file of src/search/ defines one
// StrategyInfo; builtin.cpp lists them.
#include <cstdint>
#include <random>

#include "core/detail/random.hpp"  // uniform_below, for the strategies
#include "tunekit/strategy.hpp"

namespace tunekit::detail {

void register_builtin_strategies(Registry<StrategyInfo>& registry);

StrategyInfo random_strategy();

// Option declarations, for the strategies' tables.
OptionSpec integer_option(std::string name, std::int64_t value, std::string help, double min, double max);
OptionSpec real_option(std::string name, double value, std::string help, double min, double max);
OptionSpec boolean_option(std::string name, bool value, std::string help);
OptionSpec text_option(std::string name, std::string value, std::string help, std::vector<std::string> choices);

}  // namespace tunekit::detail
