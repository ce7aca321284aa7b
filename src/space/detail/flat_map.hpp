#pragma once
// A small open-addressing hash map from 64-bit keys to 64-bit values, for
// the space solver's memo tables: one allocation, 16 bytes a slot, no
// per-entry nodes.
#include <cstdint>
#include <utility>
#include <vector>

namespace tunekit::detail {

class FlatMap {
 public:
  static constexpr std::uint64_t kMissing = UINT64_MAX;

  // The value stored for `key`, or kMissing.
  std::uint64_t find(std::uint64_t key) const {
    if (slots_.empty()) return kMissing;
    const std::uint64_t stored = key + 1;
    for (std::size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].first == stored) return slots_[i].second;
      if (slots_[i].first == 0) return kMissing;
    }
  }

  // Inserts or overwrites. Keys must be below UINT64_MAX.
  void set(std::uint64_t key, std::uint64_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    const std::uint64_t stored = key + 1;
    for (std::size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].first == stored) {
        slots_[i].second = value;
        return;
      }
      if (slots_[i].first == 0) {
        slots_[i] = {stored, value};
        ++size_;
        return;
      }
    }
  }

  std::size_t size() const { return size_; }

 private:
  static std::size_t hash(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }

  void grow() {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, {0, 0});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const auto& [stored, value] : old)
      if (stored != 0) set(stored - 1, value);
  }

  std::vector<std::pair<std::uint64_t, std::uint64_t>> slots_;  // key + 1 (0 = empty), value
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace tunekit::detail
