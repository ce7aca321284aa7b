// The spec's seed providers: the tile rules and the listed seeds.
#include "tunekit/rules.hpp"
#include "tunekit/seeds.hpp"

#include "seeds/detail/transfer.hpp"

namespace tunekit {

namespace {

class RulesProvider : public SeedProvider {
 public:
  RulesProvider(const std::vector<MatmulRule>& rules, const std::optional<Config>& defaults)
      : rules_(rules), defaults_(defaults) {}
  std::string_view origin() const override { return kOriginRules; }
  bool one_per_size() const override { return true; }
  std::vector<Config> seeds(const SeedContext& ctx) const override {
    if (auto rc = rule_config(ctx.space, ctx.constants, rules_, defaults_)) return {rc->config};
    return {};
  }

 private:
  const std::vector<MatmulRule>& rules_;
  const std::optional<Config>& defaults_;
};

// search.seeds: each seed the constraints allow at this size.
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
  const std::vector<Config>& configs_;
};

}  // namespace

std::vector<std::unique_ptr<SeedProvider>> seed_providers(const Spec& spec) {
  std::vector<std::unique_ptr<SeedProvider>> out;
  if (!spec.search.rules.empty())
    out.push_back(std::make_unique<RulesProvider>(spec.search.rules, spec.default_config));
  if (!spec.search.seeds.empty()) out.push_back(std::make_unique<ListedSeeds>(spec.search.seeds));
  // Transfer needs sizes to transfer between: more than one in the spec, or
  // a rerun whose store has others (the tuner hands it what it knows).
  if (spec.search.transfer > 0 && spec.configs.empty())
    out.push_back(detail::make_transfer_provider(spec.search.transfer));
  return out;
}

}  // namespace tunekit
