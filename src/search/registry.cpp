#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/detail/plugin_call.hpp"
#include "search/detail/builtin.hpp"
#include "tunekit/names.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

Registry<StrategyInfo>& strategies() {
  static Registry<StrategyInfo>& registry = []() -> Registry<StrategyInfo>& {
    static Registry<StrategyInfo> r("strategy");
    detail::register_builtin_strategies(r);
    // Kernel Tuner's strategies that none here stands for (its others are
    // aliases of the strategies they match), of those Kernel Tuner 1.5
    // knows (its interface.py's _STRATEGY_IMPORTS).
    for (const char* name :
         {"pso", "firefly_algorithm", "basinhopping", "dual_annealing", "minimize", "ordered_greedy_mls",
          "adaptive_tabu_greywolf", "hybrid_vndx", "skopt", "pyatf_strategies"})
      r.add_foreign(name, fmt::format("Kernel Tuner's {} has no counterpart here; 'auto', the default, is the "
                                      "strategy bench/search compares with Kernel Tuner's best (docs/search.md)",
                                      name));
    // Searches for the Pareto front of several objectives: what auto's
    // comparison measures does not apply.
    for (const char* name : {"nsga2", "nsga3"})
      r.add_foreign(name, fmt::format("Kernel Tuner's {} has no counterpart here: it searches several objectives at "
                                      "once for their Pareto front, and a search here ranks configs by one (a "
                                      "spec's objective:, tunekit replay's --minimize or --maximize)",
                                      name));
    return r;
  }();
  return registry;
}

namespace {

const OptionSpec* declared(const StrategyInfo& info, std::string_view name) {
  auto it = std::find_if(info.options.begin(), info.options.end(), [&](const OptionSpec& o) { return o.name == name; });
  return it == info.options.end() ? nullptr : &*it;
}

}  // namespace

std::string StrategyInfo::problem() const {
  if (auto p = declaration_problem(options); !p.empty()) return p;
  for (const ForeignOption& f : kernel_tuner_options) {
    if (!f.here.empty() && !declared(*this, f.here))
      return fmt::format("Kernel Tuner's {} is said to be its option '{}', which it does not declare", f.name, f.here);
    // Its message shows only under Kernel Tuner's name for the strategy.
    if (declared(*this, f.name) && (f.note.empty() || aliases.empty()))
      return fmt::format(
          "Kernel Tuner's {} has the name of its own option '{}': that needs a note of what it means "
          "there, and an alias (Kernel Tuner's name for the strategy) under which it means that",
          f.name, f.name);
  }
  return "";
}

Options strategy_options(const StrategyInfo& info, const std::vector<OptionValue>& given, std::string_view called) {
  // Under Kernel Tuner's name for the strategy, an option that has the name
  // of one here but another meaning is Kernel Tuner's: taken as this one's,
  // it would run another search than the one asked for.
  if (!called.empty() && called != info.name)
    for (const OptionValue& v : given) {
      const OptionSpec* own = declared(info, v.name);
      auto theirs = std::find_if(info.kernel_tuner_options.begin(), info.kernel_tuner_options.end(),
                                 [&](const ForeignOption& f) { return f.name == v.name; });
      if (!own || theirs == info.kernel_tuner_options.end()) continue;
      throw InputError(v.where,
                       fmt::format("option '{0}' of strategy '{1}' is Kernel Tuner's, which means another thing than "
                                   "tunekit's '{0}': in Kernel Tuner, {2}; tunekit's '{0}', of strategy '{3}': {4} "
                                   "(name the strategy '{3}' to set it)",
                                   v.name, called, theirs->note, info.name, own->help));
    }
  // A name this strategy does not declare may be Kernel Tuner's or another
  // strategy's: say what stands for it here, or whose it is. Kernel Tuner
  // passes its budget among the strategy's options; here it is the search's
  // own setting.
  auto elsewhere = [&info](const std::string& option) {
    struct Budget {
      const char *kernel_tuner, *what, *spec, *flag;
    };
    for (const Budget& b : {Budget{"max_fevals", "is tunekit's budget", "search.max_evals", "--max-evals"},
                            Budget{"maxiter", "bounds its iterations; here the budget bounds a search",
                                   "search.max_evals", "--max-evals"},
                            Budget{"fraction", "is tunekit's budget", "search.max_fraction", "--max-fraction"},
                            Budget{"time_limit", "is tunekit's budget", "search.max_time", "--max-time"}})
      if (option == b.kernel_tuner)
        return fmt::format("; Kernel Tuner's {} {}: {} in a spec, {} on the command line", b.kernel_tuner, b.what,
                           b.spec, b.flag);
    // Kernel Tuner's options of every strategy, then this one's.
    static const std::vector<ForeignOption> every{
        {"constraint_aware", "", "every strategy proposes valid configs only"}};
    for (const auto* list : {&every, &info.kernel_tuner_options})
      for (const ForeignOption& f : *list) {
        if (f.name != option) continue;
        const std::string note = f.note.empty() ? "" : ": " + f.note;
        if (f.here.empty()) return fmt::format("; Kernel Tuner's {} has no counterpart here{}", f.name, note);
        return fmt::format("; Kernel Tuner's {} is '{}' here{}", f.name, f.here, note);
      }
    std::vector<std::string> owners;
    for (const std::string& name : strategies().names())
      for (const OptionSpec& o : strategies().get(name).options)
        if (o.name == option) owners.push_back("'" + name + "'");
    if (owners.empty()) return std::string();
    return "; '" + option + "' is an option of strategy " + either(owners) + ": choose that strategy to set it";
  };
  Options resolved = Options::resolve("strategy '" + info.name + "'", info.options, given, elsewhere);
  if (info.check_options)
    if (auto bad =
            detail::call_plugin("strategy", info.name, "check_options", [&] { return info.check_options(resolved); })) {
      SourceLocation where;
      for (const OptionValue& v : given)
        if (v.name == bad->first) where = v.where;
      throw InputError(where, fmt::format("option '{}' of strategy '{}': {}", bad->first, info.name, bad->second));
    }
  return resolved;
}

std::uint64_t evaluations_for_fraction(double fraction, std::uint64_t space_size) {
  // Less a hair, so that 0.02 of 100 configs is 2, not 3 (0.02 * 100 is
  // 2.0000000000000004).
  const double n = std::ceil(fraction * static_cast<double>(space_size) - 1e-9);
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::min(n, static_cast<double>(space_size))));
}

namespace {

// A strategy may be a plugin: what it throws says whose it is and where,
// not only "map::at".
class NamedStrategy final : public Strategy {
 public:
  NamedStrategy(std::string name, std::unique_ptr<Strategy> inner) : name_(std::move(name)), inner_(std::move(inner)) {}
  std::vector<Config> next(std::size_t n) override {
    return guard("next", [&] { return inner_->next(n); });
  }
  void observe(const Config& config, const Outcome& outcome) override {
    guard("observe", [&] { inner_->observe(config, outcome); });
  }
  std::optional<std::uint64_t> planned() const override {
    return guard("planned", [&] { return inner_->planned(); });
  }
  std::string describe() const override {
    return guard("describe", [&] { return inner_->describe(); });
  }
  bool guided() const override {
    return guard("guided", [&] { return inner_->guided(); });
  }

 private:
  template <typename F>
  auto guard(const char* call, F&& f) const -> decltype(f()) {
    return detail::call_plugin("strategy", name_, call, std::forward<F>(f));
  }
  std::string name_;
  std::unique_ptr<Strategy> inner_;
};

}  // namespace

std::unique_ptr<Strategy> make_strategy(std::string_view name, const Space& space, std::uint64_t seed,
                                        std::optional<std::uint64_t> budget, const std::vector<OptionValue>& options,
                                        const SourceLocation& where, bool time_limited) {
  const StrategyInfo& info = strategies().get(name, where);
  const Options resolved = strategy_options(info, options, name);
  std::unique_ptr<Strategy> made;
  try {
    made = info.make(StrategyContext{space, seed, budget, resolved, time_limited});
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    if (stop_requested()) throw;  // stopped while it counted the space: no fault of its
    throw std::runtime_error(fmt::format("the strategy '{}' could not be made: {}", info.name, e.what()));
  }
  if (!made)
    throw std::runtime_error(fmt::format("the strategy '{}' could not be made: its make returned none", info.name));
  return std::make_unique<NamedStrategy>(info.name, std::move(made));
}

}  // namespace tunekit
