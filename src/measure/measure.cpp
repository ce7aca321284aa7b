#include "tunekit/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
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

std::optional<Microseconds> early_stop_bar(const MeasureSettings& s) {
  // A best of 0 (a clock too coarse for the kernel) would cut everything.
  if (!(s.early_stop > 0) || !s.best_so_far || !(s.best_so_far->count() > 0)) return std::nullopt;
  return *s.best_so_far * s.early_stop;
}

Sampling collect_samples(const MeasureSettings& s, const std::function<void()>& flush,
                         const std::function<Microseconds(std::size_t)>& sample) {
  using Clock = std::chrono::steady_clock;
  constexpr std::size_t kUnbounded = SIZE_MAX;
  constexpr std::size_t k = kEarlyStopSamples;
  const bool cold = is_cold(s.cache) && flush;
  const std::optional<Microseconds> bar = early_stop_bar(s);
  auto call = [&](std::size_t at_most) {
    if (cold) flush();
    return sample(at_most);
  };

  // Warm-up: at least one call, then until the warm-up time is spent, so
  // page faults, lazy binding and frequency ramp-up are not measured. With a
  // bar, the calls after the first (which may load the kernel) are judged as
  // they come, and the hints keep a backend from enqueueing more of them
  // than the judgement needs: a loser is seen after k + 1 calls instead of
  // warming up for the whole time.
  const auto warm_start = Clock::now();
  std::size_t warm_calls = 0, above_in_a_row = 0;
  bool looks_slower = false;
  do {
    const std::size_t at_most = !bar || warm_calls > k ? kUnbounded : warm_calls == 0 ? 1 : k + 1 - warm_calls;
    const Microseconds t = call(at_most);
    if (bar && warm_calls > 0) above_in_a_row = t > *bar ? above_in_a_row + 1 : 0;
    ++warm_calls;
    looks_slower = above_in_a_row >= k;
  } while (!looks_slower && Clock::now() - warm_start < s.warmup);

  Sampling out;
  std::vector<Microseconds>& samples = out.samples;
  const std::size_t min_samples = std::max<std::size_t>(1, s.min_samples);
  const std::size_t max_samples = std::max(min_samples, s.max_samples);
  bool judged = !bar;  // the early stop's verdict, taken on the first k samples
  auto start = Clock::now();
  while (samples.size() < max_samples) {
    std::size_t at_most = max_samples - samples.size();
    if (!judged) at_most = std::min(at_most, k - samples.size());
    samples.push_back(call(at_most));
    if (!judged && samples.size() == k) {
      judged = true;
      if (*std::min_element(samples.begin(), samples.end()) > *bar) {
        out.cut_short = true;
        return out;
      }
      if (looks_slower) {
        // The warm-up was ended by calls that the samples do not confirm:
        // the kernel was still warming up. Finish, and start over.
        while (Clock::now() - warm_start < s.warmup) (void)call(kUnbounded);
        samples.clear();
        start = Clock::now();
        continue;
      }
    }
    if (samples.size() < min_samples) continue;
    if (Clock::now() - start >= s.max_time) break;
    // nvbench's rule: stop once the relative standard deviation is under
    // the target; a kernel that stays noisy runs until the time cap.
    if (summarize(samples).noise < s.target_noise) break;
  }
  return out;
}

Sampling collect_samples(const MeasureSettings& s, const std::function<void()>& flush,
                         const std::function<Microseconds()>& sample) {
  return collect_samples(s, flush, [&](std::size_t) { return sample(); });
}

}  // namespace tunekit
