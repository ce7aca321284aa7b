#pragma once
// Honest timing: warm-up, optional cache flush, repeat until the noise is
// low (or a cap is hit), report the median. Backend-neutral: a backend gives
// a function that times one sample.
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/names.hpp"
#include "tunekit/statistics.hpp"
#include "tunekit/units.hpp"

namespace tunekit {

// cold (the default): the flush overwrites a buffer larger than the caches,
// as triton's do_bench does, so times compare with it; on a GPU that leaves
// the L2 full of dirty lines, and the timed kernel pays for writing them back.
// cold_read: the flush reads that buffer, so the L2 holds only clean lines
// nobody times. hot: no flush.
enum class CacheMode { cold, hot, cold_read };

// "cold", "cold-read", "hot": the names in specs, on the command line and in
// the worker protocol.
NameTable<CacheMode> cache_mode_names();
std::string_view to_string(CacheMode m);
std::optional<CacheMode> cache_mode_from_string(std::string_view name);
inline bool is_cold(CacheMode m) { return m != CacheMode::hot; }

struct MeasureSettings {
  Microseconds warmup = std::chrono::milliseconds(50);  // time spent warming up (at least one call)
  std::size_t min_samples = 5;
  std::size_t max_samples = 200;
  Seconds max_time{2.0};                 // cap on sampling time per trial
  double target_noise = 0.02;            // stop when relative noise of the median estimate < this
  CacheMode cache = CacheMode::cold;     // flush caches before every sample (unless hot)
  Seconds timeout{60.0};                 // per trial (build excluded); past it: Status::timeout
};

// Runs the sampling loop. `flush` is called before each sample when cache is
// cold or cold_read (its time is not counted); `sample` runs the kernel once
// and returns its duration.
std::vector<Microseconds> collect_samples(const MeasureSettings& s, const std::function<void()>& flush,
                                          const std::function<Microseconds()>& sample);

// "1.5s", "200ms", "50us", "3m" or a bare number of seconds. Throws
// std::invalid_argument with a message saying what is expected.
Seconds parse_duration(std::string_view text);

}  // namespace tunekit
