// A seed provider: at each size, the last config of the space in its order
// (the largest values of every parameter whose values ascend), tried before
// the search. One file; `add_last_config_seeds()` is its registration line.
#include "tunekit/seeds.hpp"

namespace {

class LastConfig final : public tunekit::SeedProvider {
 public:
  std::string_view origin() const override { return "last"; }  // its registered name
  std::vector<tunekit::Config> seeds(const tunekit::SeedContext& ctx) const override {
    // ctx.space is this size's space under the constraints: its configs are valid there.
    if (ctx.space.size() == 0) return {};
    return {ctx.space.at(ctx.space.size() - 1)};
  }
};

}  // namespace

void add_last_config_seeds() {
  tunekit::seed_providers().add({"last", "the space's last config at each size",
                                 [](const tunekit::Spec&) -> std::unique_ptr<tunekit::SeedProvider> {
                                   return std::make_unique<LastConfig>();  // null: none for this spec
                                 }});
}
