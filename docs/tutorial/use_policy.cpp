// The tutorial's last step: a program that picks its tile sizes from the
// header `tunekit emit` wrote.
#include <cstdio>

#include "transpose_policy.hpp"

int main() {
  const int sizes[] = {256, 1024, 3000};
  for (int n : sizes) {
    const auto tiles = tunekit_policy::transpose_select(n);
    std::printf("n = %d: TILE_I = %lld, TILE_J = %lld\n", n, static_cast<long long>(tiles.TILE_I),
                static_cast<long long>(tiles.TILE_J));
  }
}
