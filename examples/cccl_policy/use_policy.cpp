// A program that ships the tuned policy: it includes the header that
// `tunekit emit --mode all-sizes` wrote and sizes its launch from it.
#include <cstdio>

#include "reduce_policy.hpp"

int main() {
  constexpr auto tuned = tunekit_policy::reduce_select(65536);
  static_assert(tuned.TUNE_ITEMS >= 1 && tuned.TUNE_ITEMS <= 8, "a tuned value");
  // One config for every size, tuned or not.
  const auto other = tunekit_policy::reduce_select(12345);
  std::printf("TUNE_ITEMS=%lld TUNE_LANES=%lld same=%d\n", static_cast<long long>(tuned.TUNE_ITEMS),
              static_cast<long long>(tuned.TUNE_LANES),
              tuned.TUNE_ITEMS == other.TUNE_ITEMS && tuned.TUNE_LANES == other.TUNE_LANES);
  return 0;
}
