// A strategy: the valid configs from the last to the first, after skipping
// `skip` of them. One file; `add_backwards_strategy()` is its registration
// line.
#include <algorithm>

#include "tunekit/strategy.hpp"

namespace {

class Backwards : public tunekit::Strategy {
 public:
  Backwards(const tunekit::Space& space, std::uint64_t skip) : space_(space), skip_(skip) {}

  std::vector<tunekit::Config> next(std::size_t n) override {
    std::vector<tunekit::Config> out;
    const std::uint64_t size = space_.size();  // the valid configs, through the space's index
    // Positions size-1-skip, size-2-skip, ... wrapping around: each valid
    // config once.
    while (out.size() < n && proposed_ < size) {
      const std::uint64_t back = (skip_ + proposed_++) % size;
      out.push_back(space_.at(size - 1 - back));
    }
    return out;
  }
  void observe(const tunekit::Config&, const tunekit::Outcome& outcome) override {
    if (outcome.cost) best_ = std::min(best_.value_or(*outcome.cost), *outcome.cost);
  }
  std::optional<std::uint64_t> planned() const override { return space_.size(); }

 private:
  tunekit::Space space_;  // a copy shares the index
  std::uint64_t skip_;
  std::uint64_t proposed_ = 0;
  std::optional<double> best_;  // what it learnt; a real strategy steers by it
};

}  // namespace

void add_backwards_strategy() {
  tunekit::strategies().add({"backwards",
                             "the valid configs from the last to the first",
                             {{"skip", tunekit::OptionSpec::Type::integer, 0, "configs to skip at the end", 0}},
                             [](const tunekit::StrategyContext& c) -> std::unique_ptr<tunekit::Strategy> {
                               return std::make_unique<Backwards>(c.space, c.options.integer("skip"));
                             }});
}
