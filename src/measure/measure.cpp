#include "tunekit/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>

#include <fmt/format.h>

namespace tunekit {

namespace {
constexpr Named<CacheMode> kCacheModes[] = {
    {CacheMode::cold, "cold"}, {CacheMode::cold_read, "cold-read"}, {CacheMode::hot, "hot"}};
}  // namespace

NameTable<CacheMode> cache_mode_names() { return kCacheModes; }
std::string_view to_string(CacheMode m) { return name_of(cache_mode_names(), m); }
std::optional<CacheMode> cache_mode_from_string(std::string_view name) { return value_named(cache_mode_names(), name); }

namespace {

// Sample quantile by linear interpolation (type 7, numpy's default) of the
// sorted values v[0..n).
double quantile(const double* v, std::size_t n, double q) {
  const double pos = q * static_cast<double>(n - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, n - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// The 1-based ranks of the order statistics that bound the median's 95%
// confidence interval among n samples: n/2 -+ 0.98 sqrt(n) (the binomial's
// normal approximation), clamped to the sample. Below 6 samples the clamp
// makes it the whole range.
std::pair<std::size_t, std::size_t> interval_ranks(std::size_t n) {
  const double half = 0.98 * std::sqrt(static_cast<double>(n));
  const auto last = static_cast<std::ptrdiff_t>(n);
  const auto lower = static_cast<std::ptrdiff_t>(std::floor(static_cast<double>(n) / 2 - half));
  const auto upper = static_cast<std::ptrdiff_t>(std::ceil(1 + static_cast<double>(n) / 2 + half));
  return {static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(lower, 1, last)),
          static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(upper, 1, last))};
}

// The half-width of that interval, relative to the median
// (Statistics::noise).
double median_noise(const std::vector<double>& v, double median) {
  const std::size_t n = v.size();
  if (n < 2 || !(median > 0)) return 0;
  const auto [j, k] = interval_ranks(n);
  return (v[k - 1] - v[j - 1]) / (2 * median);
}

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Two groups of times: a split of the sorted samples with at least a fifth
// of them on each side, whose gap is wider than twice the interquartile range
// of either side and than 1% of the median (a kernel whose time alternates
// between two values, a clock that switches speed). One slow sample, or a
// long tail, leaves no such gap. (Sarle's bimodality coefficient, tried
// first, flags a plainly skewed distribution, which most timings are.)
bool bimodal(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  if (n < 10) return false;
  const double median = median_of_sorted(sorted);
  if (!(median > 0)) return false;
  auto iqr = [&](std::size_t begin, std::size_t end) {
    return quantile(sorted.data() + begin, end - begin, 0.75) - quantile(sorted.data() + begin, end - begin, 0.25);
  };
  for (std::size_t k = (n + 4) / 5; k + (n + 4) / 5 <= n; ++k) {
    const double gap = sorted[k] - sorted[k - 1];
    if (gap > 0.01 * median && gap > 2 * iqr(0, k) && gap > 2 * iqr(k, n)) return true;
  }
  return false;
}

// Whether the median of `samples` is known to within `target` (the
// half-width of its 95% confidence interval, statistics.hpp); a kernel that
// stays noisy runs until the time cap. nvbench stops on the relative
// standard deviation instead, which one preempted sample on a shared machine
// keeps above any target.
bool noise_met(const std::vector<Microseconds>& samples, double target) {
  // One sample has no spread: its noise of 0 says nothing of the median.
  // Under min_samples: 1 it ended every trial at its first sample, a cold
  // outlier included, as if measured to within the target.
  if (samples.size() < 2) return false;
  std::vector<double> sorted;
  sorted.reserve(samples.size());
  for (auto d : samples) sorted.push_back(d.count());
  std::sort(sorted.begin(), sorted.end());
  return median_noise(sorted, median_of_sorted(sorted)) < target;
}

}  // namespace

double median_interval_level(std::size_t n) {
  if (n < 2) return 0;
  // The interval [x(j), x(k)] holds the median when j to k - 1 of the n
  // samples lie below it, each with probability 1/2, whatever the
  // distribution (a continuous one): a binomial sum, in logarithms, as 2^n
  // overflows from n = 1024.
  const auto [j, k] = interval_ranks(n);
  const double ln_all = static_cast<double>(n) * std::log(2.0), nn = static_cast<double>(n);
  double level = 0;
  for (std::size_t i = j; i < k; ++i) {
    const double ii = static_cast<double>(i);
    level += std::exp(std::lgamma(nn + 1) - std::lgamma(ii + 1) - std::lgamma(nn - ii + 1) - ln_all);
  }
  return std::min(level, 1.0);
}

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
  const double median = median_of_sorted(v);
  s.median = Microseconds(median);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  s.mean = Microseconds(mean);
  if (n > 1 && mean > 0) {
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    s.spread = std::sqrt(ss / static_cast<double>(n - 1)) / mean;
  }
  s.noise = median_noise(v, median);
  s.noise_level = median_interval_level(n);
  s.bimodal = bimodal(v);
  return s;
}

std::optional<std::string> sampling_outlasts_timeout(const MeasureSettings& s) {
  const Seconds warmup = s.warmup;
  if (warmup + s.max_time < s.timeout) return std::nullopt;
  // The timeout guards against a hung config; a sampling cap that reaches
  // it would make it a second, silent cap that throws every sample away.
  return fmt::format(
      "the warm-up ({:g} s) and the sampling cap, max_time ({:g} s), take {:g} s, which does not fit within the "
      "timeout ({:g} s) that bounds the whole trial: expected a timeout above {:g} s, or a shorter {}",
      warmup.count(), s.max_time.count(), (warmup + s.max_time).count(), s.timeout.count(),
      (warmup + s.max_time).count(), warmup > s.max_time ? "warm-up" : "max_time");
}

std::string out_of_time_note(const Sampling& sampled, const MeasureSettings& s) {
  if (!sampled.out_of_time) return {};
  return fmt::format(
      "sampling stopped after {} sample{} (min_samples {}) to answer within the trial's timeout ({:g} s: "
      "measure.timeout, --timeout)",
      sampled.samples.size(), sampled.samples.size() == 1 ? "" : "s", s.min_samples, s.timeout.count());
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
  // The wall time of the longest sampling call (flush and any group a
  // backend enqueues included): what the next one, and the check after the
  // timed ones, may take. The warm-up's first call, which may load the
  // kernel, is no measure of it.
  Clock::duration longest{0};
  const auto margin = std::chrono::duration_cast<Clock::duration>(s.timeout * kTimeoutMargin);
  auto start = Clock::now();
  while (samples.size() < max_samples) {
    std::size_t at_most = max_samples - samples.size();
    if (!judged) at_most = std::min(at_most, k - samples.size());
    const auto called = Clock::now();
    samples.push_back(call(at_most));
    const auto now = Clock::now();
    longest = std::max(longest, now - called);
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
    if (samples.size() >= min_samples && (now - start >= s.max_time || noise_met(samples, s.target_noise))) break;
    if (samples.size() < max_samples && s.answer_by && now + 2 * longest + margin >= *s.answer_by) {
      out.out_of_time = true;
      break;
    }
  }
  return out;
}

Sampling collect_samples(const MeasureSettings& s, const std::function<void()>& flush,
                         const std::function<Microseconds()>& sample) {
  return collect_samples(s, flush, [&](std::size_t) { return sample(); });
}

}  // namespace tunekit
