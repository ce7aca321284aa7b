// A program outside the tree that uses an installed tunekit.
#include <cstdio>

#include "tunekit/space.hpp"

int main() {
  tunekit::Space space({{"BM", {16, 32, 64}, {}}, {"BN", {16, 32, 64}, {}}},
                       {tunekit::Expression::parse("BM * BN <= 1024")});
  std::printf("valid=%llu\n", static_cast<unsigned long long>(space.count()));
  return space.count() == 6 ? 0 : 1;
}
