// Strategies built from others: an explicit list, and a strategy with a seed
// proposed ahead of it.
#include "tunekit/strategy.hpp"

namespace tunekit {

namespace {

class ListStrategy : public Strategy {
 public:
  explicit ListStrategy(std::vector<Config> configs) : configs_(std::move(configs)) {}
  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    while (out.size() < n && pos_ < configs_.size()) out.push_back(configs_[pos_++]);
    return out;
  }
  std::optional<std::uint64_t> planned() const override { return configs_.size(); }

 private:
  std::vector<Config> configs_;
  std::size_t pos_ = 0;
};

class SeededStrategy : public Strategy {
 public:
  SeededStrategy(std::unique_ptr<Strategy> inner, Config seed, bool inner_proposes_seed)
      : inner_(std::move(inner)), seed_(std::move(seed)), seed_key_(seed_.key()), extra_(!inner_proposes_seed) {}
  std::vector<Config> next(std::size_t n) override {
    std::vector<Config> out;
    if (n == 0) return out;
    if (!seed_given_) {
      out.push_back(seed_);
      seed_given_ = true;
    }
    // Asks again only when the seed's removal left a gap: a strategy that
    // proposed fewer than asked wants its results first.
    while (out.size() < n) {
      const std::size_t want = n - out.size();
      auto more = inner_->next(want);
      if (more.empty()) break;
      const bool full = more.size() == want;
      for (auto& c : more)
        if (c.key() != seed_key_) out.push_back(std::move(c));
      if (!full) break;
    }
    return out;
  }
  void observe(const Config& config, const Outcome& outcome) override { inner_->observe(config, outcome); }
  std::string describe() const override { return inner_->describe(); }
  bool guided() const override { return inner_->guided(); }
  std::optional<std::uint64_t> planned() const override {
    auto p = inner_->planned();
    if (!p) return std::nullopt;
    return *p + (extra_ ? 1 : 0);
  }

 private:
  std::unique_ptr<Strategy> inner_;
  Config seed_;
  std::string seed_key_;
  bool extra_;
  bool seed_given_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_list(std::vector<Config> configs) {
  return std::make_unique<ListStrategy>(std::move(configs));
}

std::unique_ptr<Strategy> make_seeded(std::unique_ptr<Strategy> inner, Config seed, bool inner_proposes_seed) {
  return std::make_unique<SeededStrategy>(std::move(inner), std::move(seed), inner_proposes_seed);
}

}  // namespace tunekit
