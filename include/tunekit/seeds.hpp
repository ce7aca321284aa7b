#pragma once
// Seeds: configs worth trying before the search at each size, such as the
// configs a kernel engineer already knows (search.seeds) or the one the
// matmul tile rules derive (search.rules, rules.hpp). Each comes from a
// seed provider; the tuner evaluates them first, records the provider's
// origin with their trials, and lets the strategy observe their results.
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "tunekit/config.hpp"
#include "tunekit/space.hpp"
#include "tunekit/spec.hpp"

namespace tunekit {

// The origin of search.seeds' trials.
inline constexpr std::string_view kOriginSpecSeeds = "spec";
// The origin of the configs transferred from the sizes tuned before.
inline constexpr std::string_view kOriginTransfer = "transfer";

// A size tuned before this one (earlier in this run, or in an earlier run of
// the same spec on the same device, from the store): its fastest configs.
struct TunedSize {
  Bindings size;
  std::vector<Config> fastest;  // fastest first
};

struct SeedContext {
  const Space& space;                // this size's constrained space
  const Bindings& constants;         // the size and the machine's properties
  const Bindings& size;              // the size alone
  std::span<const TunedSize> tuned;  // the sizes tuned before (empty unless the provider learns())
  // Configs other providers seed at this size already (for a provider that
  // learns()): it skips them, so its count is of configs it adds.
  std::span<const Config> taken = {};
};

class SeedProvider {
 public:
  virtual ~SeedProvider() = default;
  // Recorded as the origin of the trials it seeds.
  virtual std::string_view origin() const = 0;
  // True when it gives at most one config per size: the store then keeps one
  // trial per size with this origin, the latest run's.
  virtual bool one_per_size() const { return false; }
  // True when its seeds depend on the sizes tuned before (ctx.tuned): the
  // tuner then asks it when the size's turn comes, after the sizes before it.
  virtual bool learns() const { return false; }
  // Valid configs of ctx.space, in the order they are to be tried.
  virtual std::vector<Config> seeds(const SeedContext& ctx) const = 0;
};

// The spec's seed providers, in the order their seeds are tried: the tile
// rules (search.rules), then search.seeds, then transfer (search.transfer:
// the fastest configs of the nearest sizes tuned before). A config two
// providers give is tried once, with the first one's origin.
std::vector<std::unique_ptr<SeedProvider>> seed_providers(const Spec& spec);

}  // namespace tunekit
