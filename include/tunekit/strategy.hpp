#pragma once
// Search strategies decide which configs to try next. Each one is a plugin in
// the strategies() registry: its name, a one-line summary, its typed options
// and a factory. Budgets (evaluations, seconds) are enforced by the tuner,
// the same for every strategy; so are duplicates (a config is evaluated at
// most once per size) and seeds (proposed ahead of the strategy, and
// observed by it like any other result).
//
// Adding a strategy: one file in src/search/ that defines its StrategyInfo,
// and one line in src/search/builtin.cpp (or, outside the library,
// strategies().add(info) before the spec is loaded).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/options.hpp"
#include "tunekit/registry.hpp"
#include "tunekit/space.hpp"
#include "tunekit/status.hpp"

namespace tunekit {

// A strategy that answers this many times in a row with only configs the
// search has evaluated (a plugin's bug) ends the search, in a tune and a
// replay alike, rather than being asked forever.
inline constexpr int kMostStaleProposals = 100;

// What a strategy learns of one evaluated config.
struct Outcome {
  Status status = Status::ok;
  // The objective to minimise (the median time in microseconds, or a
  // metric as search_cost gives it: positive, so that strategies may model
  // its logarithm), when the config ran correctly; none when it failed.
  // Status::slower (cut short by the early stop) has one too: the median of
  // its few samples, a real time at least measure.early_stop times the best
  // so far.
  std::optional<double> cost;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Up to `n` configs of the space, none proposed before; empty once it is
  // done. Fewer than `n` when it has nothing more to propose, or when it
  // wants the results of what it proposed before it goes on (a guided
  // strategy with a small budget): the tuner then evaluates what it got
  // before it asks again. The tuner calls observe() for every evaluated
  // config before it asks again, so a strategy that waits for results
  // proposes from what it has.
  virtual std::vector<Config> next(std::size_t n) = 0;
  // The outcome of a config: one it proposed, a seed, the baseline, or a
  // trial resumed from the store. May come for configs it never proposed.
  virtual void observe(const Config& config, const Outcome& outcome) {
    (void)config;
    (void)outcome;
  }
  // How many configs it will propose in all, when known.
  virtual std::optional<std::uint64_t> planned() const { return std::nullopt; }
  // Whether what it observes steers what it proposes (a guided search), so
  // that a budget buys the configs it judged worth measuring; false for a
  // fixed order (exhaustive's, a list's), of which a budget runs the first
  // configs only, which the tuner warns of.
  virtual bool guided() const { return false; }
  // What it is doing, when its name does not say it all: `auto` names the
  // strategy it chose. Empty otherwise.
  virtual std::string describe() const { return {}; }
};

struct StrategyContext {
  const Space& space;                   // this size's constrained space
  std::uint64_t seed = 1;               // for every random choice it makes
  std::optional<std::uint64_t> budget;  // evaluations it will be given, when limited
  const Options& options;               // its options, checked against its StrategyInfo
  bool time_limited = false;            // the search stops after a time budget (search.max_time)
};

// An option of Kernel Tuner's strategy for the same algorithm (its
// strategy_options) and what stands for it here: a Kernel Tuner user who
// writes `popsize` is told to write `population`, not only that popsize is
// unknown. One may have the name of an option of the strategy here and mean
// another thing (local's `restart`): under Kernel Tuner's name for the
// strategy (an alias) the user means Kernel Tuner's, and is told what each
// means (strategy_options); under the strategy's own name, it is its own.
struct ForeignOption {
  std::string name;    // Kernel Tuner's
  std::string here;    // the option that stands for it here; empty: none
  std::string note{};  // how it differs, or why there is none; for one named as an option here, what it means there
};

struct StrategyInfo {
  std::string name;     // as written in specs and on the command line
  std::string summary;  // one line, for `tunekit plugins` and the docs
  std::vector<OptionSpec> options;
  std::function<std::unique_ptr<Strategy>(const StrategyContext&)> make;
  // Other names it answers to: Kernel Tuner's for the same algorithm
  // (genetic_algorithm), so a Kernel Tuner user's spelling works.
  std::vector<std::string> aliases = {};
  // Kernel Tuner's options of that algorithm, for the message about an
  // unknown option (those of every strategy, such as maxiter, are the
  // registry's).
  std::vector<ForeignOption> kernel_tuner_options = {};
  // A rule across its options that their bounds cannot say (t_end above
  // t_start): the option at fault and why, or nullopt when they hold.
  std::function<std::optional<std::pair<std::string, std::string>>(const Options&)> check_options = {};

  // The required parts it lacks ("" when none): see Registry::add.
  std::string missing() const { return make ? "" : "make (the function that makes it)"; }
  // What is wrong with its declared options ("" when nothing), a Kernel
  // Tuner option said to stand for one it does not declare, and one named as
  // a declared option without a note, or without an alias to show it under.
  std::string problem() const;
};

// The process-wide registry, with the built-in strategies.
Registry<StrategyInfo>& strategies();

// The evaluations a share of the space stands for (search.max_fraction,
// --max-fraction): ceil(fraction * valid configs), at least 1.
std::uint64_t evaluations_for_fraction(double fraction, std::uint64_t space_size);

// `given` checked against the strategy's declared options, the others at
// their defaults. Throws InputError at the bad value: an option this
// strategy lacks names the strategies that have it (`walkers` under `auto`
// is surrogate's). `called`: the name the strategy was given by; where it is
// one of its aliases (Kernel Tuner's greedy_ils for local), an option of
// Kernel Tuner's that has the name of one here but means another thing
// there (`restart`) is refused, saying what each means.
Options strategy_options(const StrategyInfo& info, const std::vector<OptionValue>& given, std::string_view called = {});

// The named strategy over `space`, its options resolved against its
// declaration (as strategy_options, called by `name`). Throws InputError at
// `where` for an unknown name or a bad option (naming the known ones).
std::unique_ptr<Strategy> make_strategy(std::string_view name, const Space& space, std::uint64_t seed,
                                        std::optional<std::uint64_t> budget,
                                        const std::vector<OptionValue>& options = {}, const SourceLocation& where = {},
                                        bool time_limited = false);

// ---- Compositions the tuner uses.

// An explicit list, as given (invalid ones included: the tuner records them).
std::unique_ptr<Strategy> make_list(std::vector<Config> configs);

// `inner` with `seed` proposed first; `inner`'s own proposal of it is
// skipped, so it is never proposed twice. `inner_proposes_seed` says whether
// `inner` would propose it (true for exhaustive and random search over a
// space holding it; for a list, whether it is listed): planned() counts it
// once either way. Observations go to `inner`.
std::unique_ptr<Strategy> make_seeded(std::unique_ptr<Strategy> inner, Config seed, bool inner_proposes_seed);

}  // namespace tunekit
