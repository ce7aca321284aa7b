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

}  // namespace tunekit
