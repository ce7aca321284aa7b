// Every valid config, in enumeration (lexicographic) order. Lazy: configs
// come from the space's index one batch at a time, so a budget of 2 over a
// space of 10^12 configs costs two lookups, not the whole enumeration.
#include "search/detail/builtin.hpp"

namespace tunekit::detail {

namespace {

class ExhaustiveStrategy : public Strategy {
 public:
  explicit ExhaustiveStrategy(const Space& space) : space_(space) {}

  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    if (space_.indexable()) {
      const std::uint64_t total = space_.count();
      while (out.size() < n && pos_ < total) out.push_back(space_.at(pos_++));
      return out;
    }
    // Not indexable (the index would outgrow its memory budget): walk the
    // enumeration again from the start, skipping what was proposed. Each
    // call costs the walk up to the new position, which a budget bounds.
    std::uint64_t seen = 0;
    space_.for_each([&](std::span<const std::uint32_t> ix) {
      if (seen++ < pos_) return true;
      out.push_back(space_.config_at(ix));
      return out.size() < n;
    });
    pos_ += out.size();
    return out;
  }

  std::optional<std::uint64_t> planned() const override {
    const std::uint64_t n = space_.count();
    if (n == UINT64_MAX) return std::nullopt;  // saturated: more than 64 bits count
    return n;
  }

 private:
  Space space_;  // a copy: it shares the index
  std::uint64_t pos_ = 0;
};

}  // namespace

StrategyInfo exhaustive_strategy() {
  return {"exhaustive", "every valid config, in enumeration order (lazily, so a budget bounds the work)", {},
          [](const StrategyContext& c) { return std::make_unique<ExhaustiveStrategy>(c.space); }};
}

}  // namespace tunekit::detail
