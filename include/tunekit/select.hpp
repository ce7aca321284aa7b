#pragma once
// Choosing configs across problem sizes: the best per size; one config for
// all sizes by the geometric mean of its speedup over the default or over
// CCCL's base variant (CCCL's way); or the fewest configs such that every size has one within a
// tolerance of its own best. "Best" is by the spec's objective
// (objective.hpp): the median time unless it names a metric.
#include <optional>
#include <string>
#include <vector>

#include "tunekit/objective.hpp"
#include "tunekit/store.hpp"

namespace tunekit {

struct SizeBest {
  Bindings size;
  Config config;
  Microseconds time{0};
  double value = 0;  // the objective's value (microseconds for time)
};

// The best ok trial of each size, sizes in order of first appearance.
std::vector<SizeBest> best_per_size(const std::vector<TrialRecord>& trials, const Goal& goal = {});

struct SizeSpeedup {
  Bindings size;
  Microseconds time{0};      // the chosen config's
  Microseconds baseline{0};  // the default config's (against_best: the size's best config's; over the base: the base's)
  double speedup = 0;        // how many times better than the baseline (< 1: worse)
};

struct UniversalChoice {
  Config config;
  double geomean_speedup = 0;
  std::vector<SizeSpeedup> per_size;
  // Configs the early stop cut short at some size (ok or cut at the others)
  // whose geomean, with their fastest sample where they were cut, would beat
  // this one's: the choice is settled only when this is empty (a tune with
  // the early stop off measures them in full).
  std::vector<Config> unsettled_by;
  // True when the comparison is with each size's own best config instead
  // of the default (best_valid_everywhere): speedups are then at most 1.
  bool against_best = false;
};

// Among the configs measured ok at every size, the one whose speedup over
// `baseline` has the highest geometric mean. nullopt when no config is ok at
// every size, or the baseline is not ok at every size; why_no_universal()
// then says which. A config cut short by the early stop (Status::slower) at
// a size is not a candidate.
std::optional<UniversalChoice> best_for_all_sizes(const std::vector<TrialRecord>& trials, const Config& baseline,
                                                  const Goal& goal = {});

// The same against CCCL's base variant (TUNE_BASE=1, is_base_trial): each
// size's baseline is its base, as CCCL's scripts score every variant
// (SizeSpeedup::baseline is the base's time). nullopt also when some size
// where a config ran has no base that ran correctly. Of several bases at a
// size (stored under other `base:` values) the last that ran correctly
// counts: keep only the spec's own (base_variant_config), as `tunekit select`
// does.
std::optional<UniversalChoice> best_for_all_sizes_over_base(const std::vector<TrialRecord>& trials,
                                                            const Goal& goal = {});

// Without a baseline to compare with: among the configs measured ok at every
// size, the one closest to each size's best (the highest geometric mean of
// its objective over the best's, the right way up). nullopt when no config
// is ok at every size.
std::optional<UniversalChoice> best_valid_everywhere(const std::vector<TrialRecord>& trials, const Goal& goal = {});

// Why best_for_all_sizes() found nothing, in a sentence: the sizes where the
// baseline did not run correctly (with its status there), or the sizes that
// no config shared with all others ran at.
std::string why_no_universal(const std::vector<TrialRecord>& trials, const std::optional<Config>& baseline);

struct Cover {
  std::vector<Config> configs;              // the fewest that cover every size
  std::vector<std::size_t> config_of_size;  // per size (best_per_size order): index into configs
  std::vector<SizeBest> per_size;           // each size's own best
};

// Exact minimum cover: every size gets a config within (1 + tolerance) of
// that size's best by the goal; of the covers with that few configs, one
// whose configs are nearer each size's best (a local search from the first
// found, swapping one config at a time). Configs not measured ok at a size do not
// cover it (one cut short there by an early stop of factor F could not
// have, for a tolerance under F - 1). Throws std::invalid_argument for a
// tolerance that is negative or not finite.
Cover covering_set(const std::vector<TrialRecord>& trials, double tolerance, const Goal& goal = {});

}  // namespace tunekit
