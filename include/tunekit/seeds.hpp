#pragma once
// Seeds: configs worth trying before the search at each size, such as the
// configs a kernel engineer already knows (search.seeds) or the one the
// matmul tile rules derive (search.rules, rules.hpp). Each comes from a
// seed provider; the tuner evaluates them first, records the provider's
// origin with their trials, and lets the strategy observe their results.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/config.hpp"
#include "tunekit/registry.hpp"
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

// A kind of seed provider, as a registry entry. `make` returns the provider
// a spec asks for, or null when it asks for none of this kind (a spec
// without search.rules gets no tile rules).
struct SeedProviderInfo {
  std::string name;     // the origin of its trials: its provider's origin()
  std::string summary;  // one line, for `tunekit plugins` and the docs
  std::function<std::unique_ptr<SeedProvider>(const Spec&)> make;

  // The required parts it lacks ("" when none): see Registry::add.
  std::string missing() const { return make ? "" : "make (the function that makes it)"; }
};

// The process-wide registry, with the built-in providers in the order their
// seeds are tried: the tile rules (search.rules), search.seeds, then
// transfer (search.transfer: the fastest configs of the nearest sizes tuned
// before). One a program adds comes after them.
Registry<SeedProviderInfo>& seed_providers();

// The providers `spec` asks for, in the registry's order. A config two
// providers give is tried once, with the first one's origin. Throws
// std::logic_error when a provider's origin is not its entry's name.
std::vector<std::unique_ptr<SeedProvider>> providers_for(const Spec& spec);

}  // namespace tunekit
