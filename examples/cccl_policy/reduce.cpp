// A sum reduction annotated CCCL-style: each %RANGE% line declares a tuning
// parameter; tunekit compiles each variant with `#define NAME value` in front.
//
// %RANGE% TUNE_ITEMS items 1:8:1
// %RANGE% TUNE_LANES lanes 1:4:1
#include <cstdint>

// Each "tile" of TUNE_ITEMS * 64 elements is summed into TUNE_LANES partial
// sums (independent dependency chains), then folded into the total.
extern "C" void reduce(const float* in, double* out, std::int64_t n) {
  constexpr std::int64_t tile = TUNE_ITEMS * 64;
  double total = 0;
  for (std::int64_t b = 0; b < n; b += tile) {
    double lane[TUNE_LANES] = {};
    const std::int64_t end = b + tile < n ? b + tile : n;
    for (std::int64_t i = b; i < end; ++i) lane[i % TUNE_LANES] += in[i];
    for (double v : lane) total += v;
  }
  *out = total;
}
