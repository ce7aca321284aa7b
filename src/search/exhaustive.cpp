// Every valid config, in enumeration (lexicographic) order. Lazy: configs
// come from the space's index one batch at a time, so a budget of 2 over a
// space of 10^12 configs costs two lookups, not the whole enumeration.
#include <unordered_set>

#include "search/detail/builtin.hpp"
#include "search/detail/indexed.hpp"

namespace tunekit::detail {

namespace {

class ExhaustiveStrategy : public Strategy {
 public:
  explicit ExhaustiveStrategy(const Space& space) : space_(space) {}

  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    if (has_usable_index(space_)) {
      const std::uint64_t total = space_.count();
      while (out.size() < n && pos_ < total) {
        const std::uint64_t r = pos_++;
        if (!measured_.count(r)) out.push_back(space_.at(r));
      }
      return out;
    }
    // Not indexable (the index would outgrow its memory budget, or counts
    // more configs than 64 bits hold): the walk of the enumeration goes on
    // from the last config it reached.
    auto visit = [&](std::span<const std::uint32_t> ix) {
      last_.assign(ix.begin(), ix.end());
      Config c = space_.config_at(ix);
      if (!measured_keys_.count(c.key())) out.push_back(std::move(c));
      return out.size() < n;
    };
    if (last_.empty()) space_.for_each(visit);
    else space_.for_each_after(last_, visit);
    return out;
  }

  // A config measured before this search reached it (a seed, the default
  // config) is not proposed again.
  void observe(const Config& config, const Outcome&) override {
    if (has_usable_index(space_)) {
      if (auto r = space_.index_of(config); r && *r >= pos_) measured_.insert(*r);
    } else {
      measured_keys_.insert(config.key());
    }
  }

  std::optional<std::uint64_t> planned() const override {
    // Without an index, counting is a search of the whole space: before the
    // first trial, and in vain when a budget stops the walk early.
    if (!space_.indexable()) return std::nullopt;
    const std::uint64_t n = space_.count();
    if (n == UINT64_MAX) return std::nullopt;  // saturated: more than 64 bits count
    return n;
  }

 private:
  Space space_;  // a copy: it shares the index
  std::uint64_t pos_ = 0;            // with an index: the next rank
  std::vector<std::uint32_t> last_;  // without: the last config walked
  std::unordered_set<std::uint64_t> measured_;
  std::unordered_set<std::string> measured_keys_;
};

}  // namespace

StrategyInfo exhaustive_strategy() {
  return {"exhaustive",
          "every valid config, in enumeration order (lazily, so a budget bounds the work)",
          {},
          [](const StrategyContext& c) { return std::make_unique<ExhaustiveStrategy>(c.space); },
          {"brute_force"}};
}

}  // namespace tunekit::detail
