#include "search/detail/builtin.hpp"
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

std::unique_ptr<Strategy> make_strategy(std::string_view name, const Space& space, std::uint64_t seed,
                                        std::optional<std::uint64_t> budget, const std::vector<OptionValue>& options,
                                        const SourceLocation& where, bool time_limited) {
  const StrategyInfo& info = strategies().get(name, where);
  const Options resolved = Options::resolve("strategy '" + info.name + "'", info.options, options);
  return info.make(StrategyContext{space, seed, budget, resolved, time_limited});
}

}  // namespace tunekit
