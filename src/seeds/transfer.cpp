// Transfer across sizes: a size's search starts from the fastest configs of
// the nearest sizes tuned before. Sizes are compared in log space (a GEMM at
// M = 4096 is nearer to M = 2048 than to M = 64), so a kernel tuned on a
// sweep of sizes starts each new size where its neighbours ended.
#include <algorithm>
#include <cmath>

#include "seeds/detail/transfer.hpp"

namespace tunekit::detail {

double size_distance(const Bindings& a, const Bindings& b) {
  // A name only one size has, or two different strings: far, but still
  // comparable (any tuned size is better than none).
  constexpr double kFar = 64.0;
  double d = 0;
  auto scaled = [](const Value& v) { return std::log2(std::abs(v.to_double()) + 1.0); };
  for (const auto& [name, va] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      d += kFar;
      continue;
    }
    const Value& vb = it->second;
    if (va.is_number() && vb.is_number()) {
      const double x = scaled(va) - scaled(vb);
      d += x * x;
    } else if (!(va == vb)) {
      d += kFar;
    }
  }
  for (const auto& [name, vb] : b)
    if (!a.count(name)) d += kFar;
  return std::sqrt(d);
}

std::vector<Config> transfer_seeds(const Space& space, const Bindings& size, std::span<const TunedSize> tuned,
                                   std::size_t count, std::size_t nearest, std::span<const Config> taken) {
  std::vector<std::pair<double, const TunedSize*>> near;
  const std::string own = size_key(size);
  for (const auto& t : tuned)
    if (size_key(t.size) != own && !t.fastest.empty()) near.emplace_back(size_distance(size, t.size), &t);
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (near.size() > nearest) near.resize(nearest);
  // Round robin, nearest size first: the fastest of each, then the second
  // fastest of each, ...
  std::vector<Config> out;
  for (std::size_t rank = 0; out.size() < count; ++rank) {
    bool any = false;
    for (const auto& [distance, t] : near) {
      if (rank >= t->fastest.size()) continue;
      any = true;
      const Config& c = t->fastest[rank];
      if (out.size() < count && space.contains(c) && std::find(out.begin(), out.end(), c) == out.end() &&
          std::find(taken.begin(), taken.end(), c) == taken.end())
        out.push_back(c);
    }
    if (!any) break;
  }
  return out;
}

namespace {

class TransferProvider : public SeedProvider {
 public:
  explicit TransferProvider(std::size_t count) : count_(count) {}
  std::string_view origin() const override { return kOriginTransfer; }
  bool learns() const override { return true; }
  std::vector<Config> seeds(const SeedContext& ctx) const override {
    return transfer_seeds(ctx.space, ctx.size, ctx.tuned, count_, kNearestSizes, ctx.taken);
  }

 private:
  static constexpr std::size_t kNearestSizes = 2;
  std::size_t count_;
};

}  // namespace

std::unique_ptr<SeedProvider> make_transfer_provider(std::size_t count) {
  return std::make_unique<TransferProvider>(count);
}

SeedProviderInfo transfer_seed_provider() {
  return {std::string(kOriginTransfer),
          "search.transfer: the fastest configs of the nearest sizes tuned before (in this run or, from the store, "
          "an earlier one)",
          [](const Spec& spec) -> std::unique_ptr<SeedProvider> {
            // Transfer needs sizes to transfer between: more than one in the
            // spec, or a rerun whose store has others (the tuner hands it
            // what it knows). A spec's listed configs are all it measures.
            if (spec.search.transfer == 0 || !spec.configs.empty()) return nullptr;
            return make_transfer_provider(spec.search.transfer);
          }};
}

}  // namespace tunekit::detail
