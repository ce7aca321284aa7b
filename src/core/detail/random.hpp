#pragma once
// Draws that stay the same for a seed with every standard library: the
// std:: distributions may differ between implementations, and a seed must
// replay the same search and the same sample of a space everywhere.
#include <cstdint>
#include <random>

namespace tunekit::detail {

// Unbiased integer in [0, n): rejection of the short last block.
inline std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % n;
}

}  // namespace tunekit::detail
