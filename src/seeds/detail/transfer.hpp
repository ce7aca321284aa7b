#pragma once
// Transfer across sizes (transfer.cpp), exposed for tests and the benchmark.
#include <memory>
#include <span>
#include <vector>

#include "tunekit/seeds.hpp"

namespace tunekit::detail {

// Distance between two problem sizes: Euclidean over log2(|value| + 1) of the
// names both have; a name only one has, or two different strings, adds 64.
double size_distance(const Bindings& a, const Bindings& b);

// Up to `count` configs valid in `space` and not in `taken`: the fastest of
// the `nearest` sizes in `tuned` (other than `size`), taken in turn, nearest
// first.
std::vector<Config> transfer_seeds(const Space& space, const Bindings& size, std::span<const TunedSize> tuned,
                                   std::size_t count, std::size_t nearest, std::span<const Config> taken = {});

std::unique_ptr<SeedProvider> make_transfer_provider(std::size_t count);

}  // namespace tunekit::detail
