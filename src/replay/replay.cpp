// The in-process replay loop.
#include "tunekit/replay.hpp"

#include <ctime>

#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "tunekit/objective.hpp"
#include "tunekit/stop.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

namespace {

// CPU time of this thread: what the strategy's own work costs, whatever else
// the machine runs.
Seconds thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return Seconds(static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9);
}

}  // namespace

ReplayRun replay(const ReplayTable& table, const ReplaySettings& settings) {
  const Space& space = table.space();
  const std::uint64_t size = space.size();
  // Before the budget, which no number fits in an empty space.
  if (size == 0)
    throw InputError({table.recording().file().string()},
                     "the space's restrictions leave no valid config: there is nothing to replay");
  if (settings.max_evaluations && (*settings.max_evaluations == 0 || *settings.max_evaluations > size))
    throw InputError({"--max-evals"},
                     fmt::format("a budget of {} evaluations: expected 1 to {} (the space's valid configs)",
                                 *settings.max_evaluations, size));
  const std::uint64_t budget = settings.max_evaluations.value_or(size);
  const auto optimum = table.optimum_value();
  if (!optimum)
    throw InputError(
        {table.recording().file().string()},
        table.objective().is_time()
            ? "no config of the space succeeded in the recording"
            : "no config of the space that succeeded in the recording has a value of " + table.objective().name);
  const Objective& objective = table.objective();
  // A time budget needs every config's times, checked before the search:
  // at the first config it proposed, whether the replay failed would depend
  // on the seed. One outside the space is never evaluated.
  if (settings.max_time)
    for (const RecordedResult& r : table.recording().results())
      if (!r.missing_times.empty() && table.find(table.recording().config_of(r)) == &r)
        require_recorded_cost(table.recording(), r);

  ReplayRun run;
  run.optimum_value = *optimum;
  run.optimum_time = *table.optimum_time();
  Seconds cpu{0};
  auto t0 = thread_cpu();
  // A time budget with no evaluation budget leaves `auto` a guided search,
  // as `tunekit tune --max-time` does, not the enumeration it runs when
  // nothing limits the search.
  auto strategy = make_strategy(settings.strategy, space, settings.seed, settings.max_evaluations, settings.options,
                                {"--strategy"}, settings.max_time.has_value());
  cpu += thread_cpu() - t0;
  run.strategy = strategies().get(settings.strategy).name;  // not an alias
  if (auto d = strategy->describe(); !d.empty()) run.strategy += ": " + d;

  // Proposals as the tuner takes them: written in the space's values, and
  // each config (valid or not) evaluated once. A valid one is known by its
  // rank, which costs no text: this loop is the search benchmark's.
  std::unordered_set<std::uint64_t> seen_valid;
  std::unordered_set<std::string> seen_invalid;
  const std::size_t batch = std::max<std::size_t>(1, settings.batch);
  int stale_answers = 0;
  auto out_of_budget = [&] {
    return run.evaluations >= budget || (settings.max_time && run.simulated >= *settings.max_time);
  };
  while (!out_of_budget()) {
    if (stop_requested()) {
      run.ended_early = fmt::format("stopped on request after {} evaluations", run.evaluations);
      break;
    }
    t0 = thread_cpu();
    std::vector<Config> proposed = strategy->next(std::min<std::uint64_t>(batch, budget - run.evaluations));
    cpu += thread_cpu() - t0;
    if (proposed.empty()) break;
    bool fresh = false;
    for (Config& c : proposed) {
      if (out_of_budget()) break;
      const auto rank = space.index_of(c);
      if (rank ? !seen_valid.insert(*rank).second : !seen_invalid.insert(c.key()).second) continue;
      if (rank) c = space.at(*rank);
      fresh = true;
      const RecordedResult* r = rank ? table.at(*rank) : nullptr;
      if (rank && !r)
        throw InputError({table.recording().file().string()},
                         fmt::format("the recording lacks {}, a valid config of the space", c.str()));
      Outcome outcome;
      ++run.evaluations;
      run.configs.push_back(c);
      if (!r) {
        outcome.status = Status::invalid;  // outside the space: the tuner records it as such
        run.trace.push_back(std::nullopt);
        run.values.push_back(std::nullopt);
        ++run.failed;
      } else {
        outcome.status = r->status;
        const auto value = table.value(*r);
        if (value) outcome.cost = search_cost(objective, *value);
        run.trace.push_back(value ? r->time : std::nullopt);  // no objective value: a failed evaluation
        run.values.push_back(value);
        if (!value) ++run.failed;
        run.simulated += r->cost();
        if (value && (!run.best_value || objective_better(objective, *value, *run.best_value))) {
          run.best_value = value;
          run.best_time = r->time;
          run.best = c;
        }
      }
      t0 = thread_cpu();
      strategy->observe(c, outcome);
      cpu += thread_cpu() - t0;
    }
    if (fresh) stale_answers = 0;
    else if (++stale_answers == kMostStaleProposals) {
      run.ended_early = fmt::format(
          "the strategy '{}' proposed only configs it had evaluated, {} times in a row; the search ended after {} "
          "evaluations",
          settings.strategy, kMostStaleProposals, run.evaluations);
      break;
    }
  }
  run.strategy_cpu = cpu;
  // The best found against the optimum, the right way up.
  if (run.best_value)
    run.fraction_of_optimum = objective_gain(objective, run.optimum_value, *run.best_value).value_or(0);
  return run;
}

}  // namespace tunekit
