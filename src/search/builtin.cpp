// The built-in strategies: NAME stands for `StrategyInfo NAME_strategy()`,
// defined in src/search/NAME.cpp; adding one is that file and its name in
// this list (in the order `tunekit plugins` lists them).
#include "search/detail/builtin.hpp"

#define TUNEKIT_BUILTIN_STRATEGIES(X) \
  X(auto) X(exhaustive) X(random) X(genetic) X(annealing) X(local) X(diffevo) X(surrogate) X(bayes)

namespace tunekit::detail {

#define TUNEKIT_DECLARE_STRATEGY(name) StrategyInfo name##_strategy();
TUNEKIT_BUILTIN_STRATEGIES(TUNEKIT_DECLARE_STRATEGY)
#undef TUNEKIT_DECLARE_STRATEGY

void register_builtin_strategies(Registry<StrategyInfo>& registry) {
#define TUNEKIT_ADD_STRATEGY(name) registry.add(name##_strategy());
  TUNEKIT_BUILTIN_STRATEGIES(TUNEKIT_ADD_STRATEGY)
#undef TUNEKIT_ADD_STRATEGY
}

OptionSpec integer_option(std::string name, std::int64_t value, std::string help, double min, double max) {
  return {std::move(name), OptionSpec::Type::integer, Value(value), std::move(help), min, max, {}};
}
OptionSpec real_option(std::string name, double value, std::string help, double min, double max) {
  return {std::move(name), OptionSpec::Type::real, Value(value), std::move(help), min, max, {}};
}
OptionSpec boolean_option(std::string name, bool value, std::string help) {
  OptionSpec o;
  o.name = std::move(name);
  o.type = OptionSpec::Type::boolean;
  o.default_value = Value(value ? 1 : 0);
  o.help = std::move(help);
  return o;
}
OptionSpec text_option(std::string name, std::string value, std::string help, std::vector<std::string> choices) {
  OptionSpec o;
  o.name = std::move(name);
  o.type = OptionSpec::Type::text;
  o.default_value = Value(std::move(value));
  o.help = std::move(help);
  o.choices = std::move(choices);
  return o;
}

}  // namespace tunekit::detail
