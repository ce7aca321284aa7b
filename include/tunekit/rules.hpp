#pragma once
// Matmul tile rules (`search.rules`): a seed provider that derives one
// starting config per size from the tile shapes a matmul's axes ask for,
// and the report of how that config fared against the search.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/constraint.hpp"
#include "tunekit/space.hpp"
#include "tunekit/trial.hpp"

namespace tunekit {

// The origin (TrialRecord::origin) of the rule config's trials.
inline constexpr std::string_view kOriginRules = "rules";

// Matmul tile rules (`search.rules`): one entry per matmul of the kernel.
// Each tiled axis names the parameter that tiles it and the axis length, an
// expression over problem sizes, machine properties and parameters.
struct TileAxis {
  std::string parameter;  // a declared parameter with numeric values
  Expression length;      // e.g. "K // SPLIT_K"
  SourceLocation where;
};
struct MatmulRule {
  std::optional<TileAxis> m, n, k;  // M: the rows axis (the tiny-M rule applies)
  SourceLocation where;
};

// The rules, per tiled axis of length L:
//   1. a tile never exceeds its axis (tile <= L);
//   2. a small axis (L <= the largest tile) is not split: the largest tile <= L,
//      which is L itself when L is one of the values;
//   3. a large axis (L > the largest tile) takes the largest tile;
//   4. a tiny M (M <= kTinyM) takes the smallest M tile >= M, if any.
// Rules 1 to 3 amount to "the largest tile <= L"; when every tile exceeds L,
// the smallest. Rule 4 overrides rule 1 for tiny M.

// The longest M axis that counts as tiny.
inline constexpr double kTinyM = 16;

enum class TileReason {
  tiny_m,          // rule 4: the smallest tile >= M (one tile covers every row)
  not_split,       // rule 2: the largest tile <= L (L itself if it is a value)
  large,           // rule 3: the largest tile
  axis_too_short,  // every tile exceeds L: the smallest
};
std::string_view to_string(TileReason r);

// The rules' choice for one tiled axis.
struct TileChoice {
  std::size_t rule = 0;  // index into the rules
  char axis = 'M';       // 'M', 'N' or 'K'
  std::string parameter;
  double length = 0;  // the axis length, evaluated
  Value value;        // the tile the rules chose for this axis
  TileReason reason = TileReason::large;
};

struct RuleConfig {
  Config config;                  // valid in the space: the seed
  Config wanted;                  // the rules' own config, before the constraints (may be invalid)
  std::vector<TileChoice> tiles;  // one per tiled axis, in rule order, then M, N, K
  bool repaired() const { return !(config == wanted); }
};

// Derives one config of `space` from the tile rules:
//  - A tile parameter takes the tile its axis asks for; a parameter that
//    tiles several axes takes the smallest of their tiles. Lengths are
//    evaluated over `constants` (the problem size and machine properties the
//    space was built with) and the config's parameter values.
//  - Every other parameter takes `defaults`' value (the spec's `default`),
//    else its first value.
//  - If that config breaks a constraint, the nearest valid config is taken:
//    the first valid config in lexicographic order over
//      tile parameters (M tiles, then N tiles, then K tiles; each group in
//      rule order), then the other parameters (in declaration order),
//    with each value list reordered by preference: for a tile, the wanted
//    value, then the smaller values downwards, then the larger values
//    upwards; for another parameter, the wanted value, then the others by
//    distance in its list (the lower one first on a tie). So the other
//    parameters change first; then K tiles walk down, then N tiles, then M
//    tiles; a tile grows only when no smaller tile fits.
//  - When that repair changes a parameter that an axis length reads, the
//    tiles are derived again with the repaired values (at most 4 rounds).
// nullopt when the space has no valid config. Throws InputError (at the
// rule) for a length that does not evaluate to a number, and for a tile
// parameter that is not in the space or has a non-numeric value.
std::optional<RuleConfig> rule_config(const Space& space, const Bindings& constants,
                                      const std::vector<MatmulRule>& rules,
                                      const std::optional<Config>& defaults = std::nullopt);

// ---- How the rule config (search.rules) fared against the search.

// How one size's rule config compares with the rest of the size's trials.
// "Evaluations" count the trials a search pays for: every trial except
// `invalid` ones (never built nor run).
struct RuleOutcome {
  std::string device;
  Bindings size;
  std::size_t seed = 0;  // index of the rule config's trial among the size's trials (run order)
  Config config;
  Status status = Status::ok;
  std::optional<Microseconds> time;  // the rule config's median, when it ran ok
  std::optional<Microseconds> best;  // the fastest ok trial's median
  std::optional<double> ratio;       // time / best (>= 1)
  std::optional<std::size_t> rank;   // 1 + the ok trials strictly faster (1: it is the best)
  std::size_t ok = 0;                // ok trials of the size
  std::size_t evaluations = 0;       // n: evaluations of the size
  std::size_t faster = 0;            // b: ok trials strictly faster (all ok ones if the rule config failed)
  // The first trial faster than the rule config in run order: its index,
  // and how many evaluations the run had made by then (itself included).
  std::optional<std::size_t> beaten_by;
  std::optional<std::size_t> evaluations_to_beat;
  // Uniform random search over the same n evaluations (the rule config
  // among them, in no special place): the expected number of evaluations
  // until the first faster one, (n + 1) / (b + 1); none when b == 0.
  std::optional<double> expected_random_evaluations;
};

// The expected position (1-based) of the first of `b` marked items in a
// uniformly random order of `n` items, i.e. the expected number of draws
// without replacement until the first marked one: (n + 1) / (b + 1).
// Requires 1 <= b <= n.
double expected_draws_to_first(std::size_t n, std::size_t b);

// `trials`: one size's trials in run order (SizeReport::trials); `seed`
// indexes the rule config's trial.
RuleOutcome rule_outcome(const std::vector<TrialRecord>& trials, std::size_t seed);
// From any mix of devices and sizes (Store::trials: insertion order): one
// outcome per device and size that has a trial whose origin is kOriginRules, in order
// of first appearance. A size resumed across runs is in the order its trials
// were first measured.
std::vector<RuleOutcome> rule_outcomes(const std::vector<TrialRecord>& trials);
// A short table, one line per size.
std::string format_rule_report(const std::vector<RuleOutcome>& outcomes);

}  // namespace tunekit
