#pragma once
// Search strategies decide which configs to try next. Budgets (evaluations,
// seconds) are enforced by the tuner, the same for every strategy.
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "tunekit/evaluator.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
  // Up to `n` configs not proposed before; empty once the strategy is done.
  virtual std::vector<Config> next(std::size_t n) = 0;
  // Feedback for strategies that learn from results.
  virtual void observe(const Config& config, const TrialResult& result) { (void)config, (void)result; }
  // How many configs it will propose in all, when known.
  virtual std::optional<std::size_t> planned() const = 0;
};

// Every valid config, in enumeration order.
std::unique_ptr<Strategy> make_exhaustive(const Space& space);
// Uniform sampling without replacement from the valid configs.
std::unique_ptr<Strategy> make_random(const Space& space, std::uint64_t seed);
// An explicit list, as given (invalid ones included: the tuner records them).
std::unique_ptr<Strategy> make_list(std::vector<Config> configs);

std::unique_ptr<Strategy> make_strategy(const SearchSettings& settings, const Space& space);

// ---- Rule-based starting configs for matmul-like kernels (search.rules).
//
// The tile rules of the study (issue #5), per tiled axis of length L:
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
  tiny_m,       // rule 4: the smallest tile >= M (one tile covers every row)
  not_split,    // rule 2: the largest tile <= L (L itself if it is a value)
  large,        // rule 3: the largest tile
  axis_too_short,  // every tile exceeds L: the smallest
};
std::string_view to_string(TileReason r);

// The rules' choice for one tiled axis.
struct TileChoice {
  std::size_t rule = 0;   // index into the rules
  char axis = 'M';        // 'M', 'N' or 'K'
  std::string parameter;
  double length = 0;      // the axis length, evaluated
  Value value;            // the tile the rules chose for this axis
  TileReason reason = TileReason::large;
};

struct RuleConfig {
  Config config;  // valid in the space: the seed
  Config wanted;  // the rules' own config, before the constraints (may be invalid)
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

// `inner` with `seed` proposed first; `inner`'s own proposal of it is
// skipped, so it is never proposed twice. `inner_proposes_seed` says whether
// `inner` would propose it (true for exhaustive and random search over a
// space holding it; for a list, whether it is listed): planned() counts it
// once either way.
std::unique_ptr<Strategy> make_seeded(std::unique_ptr<Strategy> inner, Config seed, bool inner_proposes_seed);

}  // namespace tunekit
