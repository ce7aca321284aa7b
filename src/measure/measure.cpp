#include "tunekit/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace tunekit {

namespace {
constexpr Named<CacheMode> kCacheModes[] = {
    {CacheMode::cold, "cold"}, {CacheMode::cold_read, "cold-read"}, {CacheMode::hot, "hot"}};
}  // namespace

NameTable<CacheMode> cache_mode_names() { return kCacheModes; }
std::string_view to_string(CacheMode m) { return name_of(cache_mode_names(), m); }
std::optional<CacheMode> cache_mode_from_string(std::string_view name) { return value_named(cache_mode_names(), name); }

Statistics summarize(std::span<const Microseconds> samples) {
  Statistics s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> v;
  v.reserve(samples.size());
  for (auto d : samples) v.push_back(d.count());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.min = Microseconds(v.front());
  s.max = Microseconds(v.back());
  s.median = Microseconds(n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  s.mean = Microseconds(mean);
  if (n > 1 && mean > 0) {
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    s.noise = std::sqrt(ss / static_cast<double>(n - 1)) / mean;
  }
  return s;
}

std::vector<Microseconds> collect_samples(const MeasureSettings& s, const std::function<void()>& flush,
                                          const std::function<Microseconds()>& sample) {
  using Clock = std::chrono::steady_clock;
  const bool cold = is_cold(s.cache) && flush;

  // Warm-up: at least one call, then until the warm-up time is spent, so
  // page faults, lazy binding and frequency ramp-up are not measured.
  const auto warm_start = Clock::now();
  do {
    if (cold) flush();
    (void)sample();
  } while (Clock::now() - warm_start < s.warmup);

  std::vector<Microseconds> samples;
  const std::size_t min_samples = std::max<std::size_t>(1, s.min_samples);
  const std::size_t max_samples = std::max(min_samples, s.max_samples);
  const auto start = Clock::now();
  while (samples.size() < max_samples) {
    if (cold) flush();
    samples.push_back(sample());
    if (samples.size() < min_samples) continue;
    if (Clock::now() - start >= s.max_time) break;
    // nvbench's rule: stop once the relative standard deviation is under
    // the target; a kernel that stays noisy runs until the time cap.
    if (summarize(samples).noise < s.target_noise) break;
  }
  return samples;
}

}  // namespace tunekit
