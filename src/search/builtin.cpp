// The built-in strategies, one line each; their definitions live in the
// file named after them.
#include "search/detail/builtin.hpp"

namespace tunekit::detail {

StrategyInfo auto_strategy();
StrategyInfo exhaustive_strategy();
StrategyInfo genetic_strategy();
StrategyInfo annealing_strategy();
StrategyInfo local_strategy();
StrategyInfo diffevo_strategy();
StrategyInfo surrogate_strategy();
StrategyInfo bayes_strategy();

void register_builtin_strategies(Registry<StrategyInfo>& registry) {
  registry.add(auto_strategy());
  registry.add(exhaustive_strategy());
  registry.add(random_strategy());
  registry.add(genetic_strategy());
  registry.add(annealing_strategy());
  registry.add(local_strategy());
  registry.add(diffevo_strategy());
  registry.add(surrogate_strategy());
  registry.add(bayes_strategy());
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
