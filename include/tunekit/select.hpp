#pragma once
// Choosing configs across problem sizes: the best per size; one config for
// all sizes by the geometric mean of its speedup over the default (CCCL's
// way); or the fewest configs such that every size has one within a
// tolerance of its own best.
#include <optional>
#include <vector>

#include "tunekit/store.hpp"

namespace tunekit {

struct SizeBest {
  Bindings size;
  Config config;
  Microseconds time{0};
};

// The fastest ok trial of each size, sizes in order of first appearance.
std::vector<SizeBest> best_per_size(const std::vector<TrialRecord>& trials);

struct SizeSpeedup {
  Bindings size;
  Microseconds time{0};      // the chosen config's
  Microseconds baseline{0};  // the default config's
  double speedup = 0;        // baseline / time
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
};

// Among the configs measured ok at every size, the one whose speedup over
// `baseline` has the highest geometric mean. nullopt when no config is ok at
// every size, or the baseline is not ok at every size. A config cut short
// by the early stop (Status::slower) at a size is not a candidate.
std::optional<UniversalChoice> best_for_all_sizes(const std::vector<TrialRecord>& trials, const Config& baseline);

struct Cover {
  std::vector<Config> configs;              // the fewest that cover every size
  std::vector<std::size_t> config_of_size;  // per size (best_per_size order): index into configs
  std::vector<SizeBest> per_size;           // each size's own best
};

// Exact minimum cover: every size gets a config whose time is within
// (1 + tolerance) of that size's best. Configs not measured ok at a size do
// not cover it (one cut short there by an early stop of factor F could not
// have, for a tolerance under F - 1).
Cover covering_set(const std::vector<TrialRecord>& trials, double tolerance);

}  // namespace tunekit
