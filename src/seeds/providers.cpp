// The seed providers' registry. A built-in provider is its file,
// src/seeds/NAME.cpp defining `SeedProviderInfo NAME_seed_provider()`, and
// its name in this list (in the order its seeds are tried).
#include <stdexcept>

#include "tunekit/seeds.hpp"

#define TUNEKIT_BUILTIN_SEED_PROVIDERS(X) X(rules) X(spec) X(transfer)

namespace tunekit {

namespace detail {
#define TUNEKIT_DECLARE_SEED_PROVIDER(name) SeedProviderInfo name##_seed_provider();
TUNEKIT_BUILTIN_SEED_PROVIDERS(TUNEKIT_DECLARE_SEED_PROVIDER)
#undef TUNEKIT_DECLARE_SEED_PROVIDER
}  // namespace detail

Registry<SeedProviderInfo>& seed_providers() {
  static Registry<SeedProviderInfo>& registry = []() -> Registry<SeedProviderInfo>& {
    static Registry<SeedProviderInfo> r("seed provider");
#define TUNEKIT_ADD_SEED_PROVIDER(name) r.add(detail::name##_seed_provider());
    TUNEKIT_BUILTIN_SEED_PROVIDERS(TUNEKIT_ADD_SEED_PROVIDER)
#undef TUNEKIT_ADD_SEED_PROVIDER
    return r;
  }();
  return registry;
}

std::vector<std::unique_ptr<SeedProvider>> providers_for(const Spec& spec) {
  std::vector<std::unique_ptr<SeedProvider>> out;
  for (const SeedProviderInfo& info : seed_providers().entries()) {
    std::unique_ptr<SeedProvider> p = info.make(spec);
    if (!p) continue;
    // The store and the reports know a trial's provider by its origin.
    if (p->origin() != info.name)
      throw std::logic_error("the seed provider '" + info.name + "' made a provider whose origin is '" +
                             std::string(p->origin()) + "'");
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tunekit
