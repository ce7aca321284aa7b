// The seed providers' registry. A built-in provider is its file,
// src/seeds/NAME.cpp defining `SeedProviderInfo NAME_seed_provider()`, and
// its name in this list (in the order its seeds are tried).
#include <stdexcept>

#include <utility>

#include "core/detail/plugin_call.hpp"
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
    static Registry<SeedProviderInfo> r(
        "seed provider",
        {{std::string(kOriginSearch), "it is the origin of the configs the search proposes"},
         {std::string(kOriginBaseline), "it is the origin of the default config's trial"},
         {std::string(kOriginBase), "it is the origin of the trial of CCCL's base variant (TUNE_BASE)"}});
#define TUNEKIT_ADD_SEED_PROVIDER(name) r.add(detail::name##_seed_provider());
    TUNEKIT_BUILTIN_SEED_PROVIDERS(TUNEKIT_ADD_SEED_PROVIDER)
#undef TUNEKIT_ADD_SEED_PROVIDER
    return r;
  }();
  return registry;
}

namespace {

// What a provider throws, named: a program's own provider failing must say
// whose failure it is, as a strategy's does.
template <typename F>
auto named(const std::string& name, const char* call, F&& f) -> decltype(f()) {
  return detail::call_plugin("seed provider", name, call, std::forward<F>(f));
}

class NamedSeedProvider final : public SeedProvider {
 public:
  NamedSeedProvider(std::string name, std::unique_ptr<SeedProvider> inner)
      : name_(std::move(name)), inner_(std::move(inner)) {}
  std::string_view origin() const override { return name_; }
  bool one_per_size() const override {
    return named(name_, "one_per_size", [&] { return inner_->one_per_size(); });
  }
  bool learns() const override {
    return named(name_, "learns", [&] { return inner_->learns(); });
  }
  std::vector<Config> seeds(const SeedContext& ctx) const override {
    return named(name_, "seeds", [&] { return inner_->seeds(ctx); });
  }

 private:
  std::string name_;
  std::unique_ptr<SeedProvider> inner_;
};

}  // namespace

std::vector<std::unique_ptr<SeedProvider>> providers_for(const Spec& spec) {
  std::vector<std::unique_ptr<SeedProvider>> out;
  for (const SeedProviderInfo& info : seed_providers().entries()) {
    std::unique_ptr<SeedProvider> p = named(info.name, "make", [&] { return info.make(spec); });
    if (!p) continue;
    // The store and the reports know a trial's provider by its origin.
    if (p->origin() != info.name)
      throw std::logic_error("the seed provider '" + info.name + "' made a provider whose origin is '" +
                             std::string(p->origin()) + "'");
    out.push_back(std::make_unique<NamedSeedProvider>(info.name, std::move(p)));
  }
  return out;
}

}  // namespace tunekit
