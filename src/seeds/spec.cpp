// search.seeds: the configs a kernel engineer already knows, tried first at
// each size where the constraints allow them.
#include "tunekit/seeds.hpp"

namespace tunekit::detail {

namespace {

class ListedSeeds : public SeedProvider {
 public:
  explicit ListedSeeds(const std::vector<Config>& configs) : configs_(configs) {}
  std::string_view origin() const override { return kOriginSpecSeeds; }
  std::vector<Config> seeds(const SeedContext& ctx) const override {
    std::vector<Config> out;
    for (const Config& c : configs_)
      if (ctx.space.contains(c)) out.push_back(c);
    return out;
  }

 private:
  const std::vector<Config>& configs_;  // the spec's, which outlives the tune
};

}  // namespace

SeedProviderInfo spec_seed_provider() {
  return {std::string(kOriginSpecSeeds), "the spec's search.seeds, each where the constraints allow it",
          [](const Spec& spec) -> std::unique_ptr<SeedProvider> {
            if (spec.search.seeds.empty()) return nullptr;
            return std::make_unique<ListedSeeds>(spec.search.seeds);
          }};
}

}  // namespace tunekit::detail
