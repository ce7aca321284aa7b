#include <fmt/format.h>

#include "search/detail/builtin.hpp"
#include "tunekit/names.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

Registry<StrategyInfo>& strategies() {
  static Registry<StrategyInfo>& registry = []() -> Registry<StrategyInfo>& {
    static Registry<StrategyInfo> r("strategy");
    detail::register_builtin_strategies(r);
    return r;
  }();
  return registry;
}

Options strategy_options(const StrategyInfo& info, const std::vector<OptionValue>& given) {
  // A name this strategy does not declare may be another's: say whose. Kernel
  // Tuner passes its budget among the strategy's options; here it is the
  // search's own setting.
  auto elsewhere = [](const std::string& option) {
    struct Budget {
      const char *kernel_tuner, *spec, *flag;
    };
    for (const Budget& b : {Budget{"max_fevals", "search.max_evals", "--max-evals"},
                            Budget{"time_limit", "search.max_time", "--max-time"}})
      if (option == b.kernel_tuner)
        return fmt::format("; Kernel Tuner's {} is tunekit's budget: {} in a spec, {} on the command line",
                           b.kernel_tuner, b.spec, b.flag);
    std::vector<std::string> owners;
    for (const std::string& name : strategies().names())
      for (const OptionSpec& o : strategies().get(name).options)
        if (o.name == option) owners.push_back("'" + name + "'");
    if (owners.empty()) return std::string();
    return "; '" + option + "' is an option of strategy " + either(owners) + ": choose that strategy to set it";
  };
  return Options::resolve("strategy '" + info.name + "'", info.options, given, elsewhere);
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, const Space& space, std::uint64_t seed,
                                        std::optional<std::uint64_t> budget, const std::vector<OptionValue>& options,
                                        const SourceLocation& where, bool time_limited) {
  const StrategyInfo& info = strategies().get(name, where);
  const Options resolved = strategy_options(info, options);
  return info.make(StrategyContext{space, seed, budget, resolved, time_limited});
}

}  // namespace tunekit
