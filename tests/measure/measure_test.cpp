#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tunekit/measure.hpp"

using namespace tunekit;
using namespace std::chrono_literals;

TEST(Summarize, MedianMinMaxNoise) {
  std::vector<Microseconds> s{Microseconds(4), Microseconds(1), Microseconds(3), Microseconds(2)};
  Statistics st = summarize(s);
  EXPECT_EQ(st.count, 4u);
  EXPECT_DOUBLE_EQ(st.median.count(), 2.5);
  EXPECT_DOUBLE_EQ(st.min.count(), 1);
  EXPECT_DOUBLE_EQ(st.max.count(), 4);
  EXPECT_DOUBLE_EQ(st.mean.count(), 2.5);
  // sample stdev of 1..4 is sqrt(5/3): the spread
  EXPECT_NEAR(st.spread, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  // Four samples bound the median only by their range: (4 - 1) / (2 * 2.5).
  EXPECT_NEAR(st.noise, 3.0 / 5.0, 1e-12);
}

namespace {
std::vector<Microseconds> around(double centre, double step, int n) {
  std::vector<Microseconds> v;
  for (int i = 0; i < n; ++i) v.emplace_back(centre + step * (i - n / 2));
  return v;
}
}  // namespace

TEST(Summarize, NoiseIsTheMediansConfidenceInterval) {
  // 50 samples 100 +- 0.1 k: the 95% interval of the median spans the
  // order statistics 18 and 33 (1-based), 15 steps of 0.1: +-0.75%.
  auto s = around(100, 0.1, 50);
  Statistics st = summarize(s);
  EXPECT_NEAR(st.noise, 1.5 / (2 * st.median.count()), 1e-9);
  // More samples of the same spread narrow it.
  EXPECT_LT(summarize(around(100, 0.1 * 50 / 200.0, 200)).noise, st.noise);
}

// Under 6 samples the interval is clamped to their range, which holds the
// median with probability 1 - 2^(1-n): called 95%, it was 50% at 2. From 6 on
// the ranks n/2 -+ 0.98 sqrt(n) hold it with 95% or more.
TEST(Summarize, TheNoisesIntervalSaysItsLevel) {
  EXPECT_EQ(median_interval_level(0), 0);
  EXPECT_EQ(median_interval_level(1), 0);
  EXPECT_NEAR(median_interval_level(2), 0.5, 1e-12);
  EXPECT_NEAR(median_interval_level(3), 0.75, 1e-12);
  EXPECT_NEAR(median_interval_level(4), 0.875, 1e-12);
  EXPECT_NEAR(median_interval_level(5), 0.9375, 1e-12);
  for (std::size_t n = 6; n <= 3000; ++n) {
    EXPECT_GE(median_interval_level(n), 0.95) << n;
    EXPECT_LE(median_interval_level(n), 1.0) << n;
  }
  EXPECT_NEAR(summarize(around(100, 0.1, 3)).noise_level, 0.75, 1e-12);
  EXPECT_GE(summarize(around(100, 0.1, 50)).noise_level, 0.95);
}

TEST(Summarize, OnePreemptedSampleBarelyMovesTheNoise) {
  auto s = around(100, 0.02, 30);
  const double quiet = summarize(s).noise;
  s.back() = Microseconds(5000);  // a sample that lost the core for 5 ms
  Statistics st = summarize(s);
  EXPECT_LT(st.noise, 2 * quiet + 1e-3);  // one rank at most
  EXPECT_GT(st.spread, 1.0);              // where the standard deviation explodes
  EXPECT_FALSE(st.bimodal);
}

TEST(Summarize, TwoGroupsOfTimesAreBimodal) {
  std::vector<Microseconds> s;
  for (int i = 0; i < 20; ++i) s.emplace_back(100 + 0.1 * (i % 5));
  for (int i = 0; i < 20; ++i) s.emplace_back(130 + 0.1 * (i % 5));
  EXPECT_TRUE(summarize(s).bimodal);
  // One group with a long tail is not: quadratic, and exponential quantiles.
  std::vector<Microseconds> tail, exponential;
  for (int i = 0; i < 40; ++i) tail.emplace_back(100 + 2.0 * i * i / 40);
  EXPECT_FALSE(summarize(tail).bimodal);
  for (int i = 0; i < 40; ++i) exponential.emplace_back(100 - 5 * std::log(1 - (i + 0.5) / 40));
  EXPECT_FALSE(summarize(exponential).bimodal);
  // Nor are samples that barely vary, nor fewer than 10.
  std::vector<Microseconds> flat;
  for (int i = 0; i < 40; ++i) flat.emplace_back(100 + (i % 2) * 0.01);
  EXPECT_FALSE(summarize(flat).bimodal);
  EXPECT_FALSE(summarize(std::vector<Microseconds>(s.begin() + 15, s.begin() + 24)).bimodal);
}

TEST(Summarize, OddCountAndEmpty) {
  std::vector<Microseconds> s{Microseconds(9), Microseconds(1), Microseconds(5)};
  EXPECT_DOUBLE_EQ(summarize(s).median.count(), 5);
  EXPECT_EQ(summarize({}).count, 0u);
}

TEST(CollectSamples, StopsAtMinSamplesWhenQuiet) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 7;
  m.max_samples = 100;
  m.target_noise = 0.01;
  int calls = 0;
  auto samples = collect_samples(m, {}, [&] {
                   ++calls;
                   return Microseconds(10.0);
                 }).samples;
  EXPECT_EQ(samples.size(), 7u);
  EXPECT_EQ(calls, 8);  // one warm-up call, then the samples
}

// A single sample's noise is 0, which met every target: under
// min_samples: 1 each trial ended at its first sample, reported as known to
// within the target, and a first sample that was an outlier was the median.
TEST(CollectSamples, OneSampleNeverMeetsTheNoiseTarget) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 1;
  m.max_samples = 100;
  m.max_time = 1000s;  // only the noise target ends it
  m.target_noise = 0.02;
  int calls = 0;
  const auto quiet = collect_samples(m, {}, [] { return Microseconds(10.0); }).samples;
  EXPECT_EQ(quiet.size(), 2u);
  const auto outlier_first = collect_samples(m, {}, [&] { return Microseconds(calls++ == 1 ? 30.0 : 10.0); }).samples;
  ASSERT_GT(outlier_first.size(), 2u);
  EXPECT_EQ(summarize(outlier_first).median, Microseconds(10.0));
  EXPECT_LT(outlier_first.size(), 100u);
}

TEST(CollectSamples, NoisyRunsToMaxSamples) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 3;
  m.max_samples = 40;
  m.max_time = 10s;
  m.target_noise = 0.01;
  int i = 0;
  auto samples = collect_samples(m, {}, [&] { return Microseconds(++i % 2 ? 10.0 : 20.0); }).samples;
  EXPECT_EQ(samples.size(), 40u);
}

TEST(CollectSamples, TimeCapEndsANoisyKernel) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 2;
  m.max_samples = 1000000;
  m.max_time = 50ms;
  m.target_noise = 0.0;
  // Each sample takes 1 ms or more: the 50 ms cap ends the run by the 50th
  // of the million allowed, however busy the machine.
  auto samples = collect_samples(m, {}, [] {
                   std::this_thread::sleep_for(1ms);
                   return Microseconds(1000.0);
                 }).samples;
  EXPECT_GE(samples.size(), 2u);
  EXPECT_LE(samples.size(), 50u);
}

// A call long enough that min_samples would outlast the trial's timeout:
// sampling stops with what it has while there is still time to answer,
// instead of the tuner killing a working config as hung.
TEST(CollectSamples, TheDeadlineStopsSamplingShortOfMinSamples) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 50;
  m.max_samples = 100;
  m.max_time = 2s;
  m.target_noise = 0.0;
  m.timeout = 3s;
  m.answer_by = std::chrono::steady_clock::now() + 3s;
  // 50 calls of 100 ms would take 5 s, well past the 3 s deadline.
  const Sampling s = collect_samples(m, {}, [] {
    std::this_thread::sleep_for(100ms);
    return Microseconds(100000.0);
  });
  EXPECT_LT(std::chrono::steady_clock::now(), *m.answer_by);
  EXPECT_TRUE(s.out_of_time);
  EXPECT_FALSE(s.cut_short);
  EXPECT_GE(s.samples.size(), 1u);
  EXPECT_LT(s.samples.size(), 50u);
  EXPECT_EQ(out_of_time_note(s, m),
            fmt::format("sampling stopped after {} samples (min_samples 50) to answer within the trial's timeout (3 "
                        "s: measure.timeout, --timeout)",
                        s.samples.size()));
  // A deadline far off changes nothing.
  m.min_samples = 3;
  m.max_samples = 3;
  m.answer_by = std::chrono::steady_clock::now() + 3600s;
  const Sampling far = collect_samples(m, {}, [] { return Microseconds(10.0); });
  EXPECT_EQ(far.samples.size(), 3u);
  EXPECT_FALSE(far.out_of_time);
  EXPECT_EQ(out_of_time_note(far, m), "");
}

// The warm-up and max_time must fit within the timeout; the defaults do.
TEST(SamplingOutlastsTimeout, WarmupAndMaxTimeMustFitWithinTheTimeout) {
  MeasureSettings m;
  EXPECT_EQ(sampling_outlasts_timeout(m), std::nullopt);
  m.max_time = 3s;
  m.timeout = 2s;
  EXPECT_EQ(sampling_outlasts_timeout(m),
            "the warm-up (0.05 s) and the sampling cap, max_time (3 s), take 3.05 s, which does not fit within the "
            "timeout (2 s) that bounds the whole trial: expected a timeout above 3.05 s, or a shorter max_time");
  m.warmup = 40s;  // the warm-up takes most: it is what to shorten
  m.max_time = 30s;
  m.timeout = 60s;
  EXPECT_EQ(sampling_outlasts_timeout(m),
            "the warm-up (40 s) and the sampling cap, max_time (30 s), take 70 s, which does not fit within the "
            "timeout (60 s) that bounds the whole trial: expected a timeout above 70 s, or a shorter warm-up");
  m.warmup = 0.05s;
  m.timeout = 2s;
  m.max_time = 2s;  // the default timeout's case of the same: 2.05 s
  EXPECT_NE(sampling_outlasts_timeout(m), std::nullopt);
  m.max_time = 1.9s;
  EXPECT_EQ(sampling_outlasts_timeout(m), std::nullopt);
}

TEST(CollectSamples, ColdCacheFlushesBeforeEverySample) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 5;
  m.max_samples = 5;
  m.cache = CacheMode::cold;
  int flushes = 0, runs = 0;
  collect_samples(
      m, [&] { ++flushes; },
      [&] {
        ++runs;
        return Microseconds(1.0);
      });
  EXPECT_EQ(flushes, runs);
  m.cache = CacheMode::hot;
  flushes = 0;
  collect_samples(
      m, [&] { ++flushes; }, [&] { return Microseconds(1.0); });
  EXPECT_EQ(flushes, 0);
}

TEST(CollectSamples, ColdReadFlushesBeforeEverySampleLikeCold) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 5;
  m.max_samples = 5;
  m.cache = CacheMode::cold_read;
  int flushes = 0, runs = 0;
  std::vector<std::string> order;
  collect_samples(
      m,
      [&] {
        ++flushes;
        order.push_back("flush");
      },
      [&] {
        ++runs;
        order.push_back("run");
        return Microseconds(1.0);
      });
  EXPECT_EQ(flushes, runs);
  EXPECT_EQ(runs, 6);  // one warm-up call, five samples
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i % 2 ? "run" : "flush") << i;
}

TEST(CacheModes, NamesRoundTrip) {
  EXPECT_EQ(to_string(CacheMode::cold), "cold");
  EXPECT_EQ(to_string(CacheMode::hot), "hot");
  EXPECT_EQ(to_string(CacheMode::cold_read), "cold-read");
  for (CacheMode c : {CacheMode::cold, CacheMode::hot, CacheMode::cold_read})
    EXPECT_EQ(cache_mode_from_string(to_string(c)), c);
  EXPECT_FALSE(cache_mode_from_string("cold_read"));
  EXPECT_FALSE(cache_mode_from_string("warm"));
  EXPECT_TRUE(is_cold(CacheMode::cold));
  EXPECT_TRUE(is_cold(CacheMode::cold_read));
  EXPECT_FALSE(is_cold(CacheMode::hot));
  EXPECT_EQ(MeasureSettings{}.cache, CacheMode::cold);  // do_bench's flush stays the default
}

TEST(CollectSamples, WarmupRunsUntilItsTimeIsSpent) {
  MeasureSettings m;
  m.warmup = 20ms;
  m.min_samples = 1;
  m.max_samples = 1;
  int calls = 0;
  std::chrono::steady_clock::time_point sampled;
  const auto start = std::chrono::steady_clock::now();
  collect_samples(m, {}, [&] {
    ++calls;
    sampled = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(2ms);
    return Microseconds(2000.0);
  });
  // The last call (the sample) starts only once the warm-up time is spent,
  // however slowly a busy machine runs the calls before it (a lower bound,
  // so no timing can make it fail).
  EXPECT_GE(sampled - start, 20ms);
  EXPECT_GE(calls, 2);
}

// ---- The early stop: a fake kernel whose times are given, so the tests
// count calls and samples, never time.

namespace {

// Settings whose warm-up is one call and whose sampling stops at
// min_samples (a constant kernel has no noise).
MeasureSettings early_stop_settings(double best_us, double factor = 3.0) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 5;
  m.max_samples = 50;
  m.max_time = 1h;
  m.target_noise = 0.01;
  m.early_stop = factor;
  m.best_so_far = Microseconds(best_us);
  return m;
}

// A kernel whose n-th call (from 0) takes times[n], the last one after
// that; it refuses to run forever, so a loop that never ends fails.
struct ScriptedKernel {
  std::vector<double> times;
  std::size_t calls = 0;
  std::vector<std::size_t> at_most;  // the hints, call by call
  Microseconds operator()(std::size_t hint) {
    if (calls > 100000) throw std::runtime_error("the sampling loop does not end");
    at_most.push_back(hint);
    const double t = times[std::min(calls, times.size() - 1)];
    ++calls;
    return Microseconds(t);
  }
};

Sampling run(const MeasureSettings& m, ScriptedKernel& k) {
  return collect_samples(m, {}, [&](std::size_t hint) { return k(hint); });
}

}  // namespace

TEST(EarlyStop, TheBarIsTheFactorTimesTheBest) {
  EXPECT_DOUBLE_EQ(early_stop_bar(early_stop_settings(10.0))->count(), 30.0);
  EXPECT_FALSE(early_stop_bar(early_stop_settings(10.0, 0.0)));  // off
  MeasureSettings none = early_stop_settings(10.0);
  none.best_so_far.reset();  // the first config of a size
  EXPECT_FALSE(early_stop_bar(none));
  EXPECT_FALSE(early_stop_bar(early_stop_settings(0.0)));  // a best of 0 would cut everything
}

TEST(EarlyStop, ALoserIsCutAfterItsFirstSamples) {
  ScriptedKernel k{{40.0}};
  const Sampling s = run(early_stop_settings(10.0), k);
  EXPECT_TRUE(s.cut_short);
  EXPECT_EQ(s.samples.size(), kEarlyStopSamples);
  EXPECT_EQ(k.calls, 1 + kEarlyStopSamples);  // one warm-up call
  for (auto t : s.samples) EXPECT_DOUBLE_EQ(t.count(), 40.0);
}

TEST(EarlyStop, OneSampleAtOrUnderTheBarKeepsItGoing) {
  // 30 is the bar itself: not slower than it.
  for (double under : {30.0, 12.0}) {
    ScriptedKernel k{{40.0, 40.0, under, 40.0}};  // a warm-up call, then the samples
    MeasureSettings m = early_stop_settings(10.0);
    m.target_noise = 1.0;  // stop at min_samples
    const Sampling s = run(m, k);
    EXPECT_FALSE(s.cut_short) << under;
    EXPECT_EQ(s.samples.size(), 5u) << under;
  }
}

TEST(EarlyStop, OffOrWithoutABestEveryConfigIsMeasuredInFull) {
  ScriptedKernel off{{40.0}};
  const Sampling a = run(early_stop_settings(10.0, 0.0), off);
  EXPECT_FALSE(a.cut_short);
  EXPECT_EQ(a.samples.size(), 5u);
  MeasureSettings first = early_stop_settings(10.0);
  first.best_so_far.reset();
  ScriptedKernel k{{40.0}};
  const Sampling b = run(first, k);
  EXPECT_FALSE(b.cut_short);
  EXPECT_EQ(b.samples.size(), 5u);
}

TEST(EarlyStop, FewerSamplesThanTheVerdictNeedsAreNeverCut) {
  MeasureSettings m = early_stop_settings(10.0);
  m.min_samples = 2;
  m.max_samples = 2;
  ScriptedKernel k{{40.0}};
  const Sampling s = run(m, k);
  EXPECT_FALSE(s.cut_short);
  EXPECT_EQ(s.samples.size(), 2u);
}

TEST(EarlyStop, ALoserEndsItsWarmUpEarly) {
  // A warm-up of an hour: only the verdict can end it.
  MeasureSettings m = early_stop_settings(10.0);
  m.warmup = 1h;
  ScriptedKernel k{{1000.0, 40.0}};  // the first call loads the kernel
  const Sampling s = run(m, k);
  EXPECT_TRUE(s.cut_short);
  EXPECT_EQ(s.samples.size(), kEarlyStopSamples);
  // The first call, kEarlyStopSamples judged warm-up calls, the samples.
  EXPECT_EQ(k.calls, 1 + 2 * kEarlyStopSamples);
}

TEST(EarlyStop, SamplesThatDoNotConfirmTheWarmUpStartOver) {
  // Three slow warm-up calls end the warm-up, but the samples after them
  // are fast: the kernel was still warming up. The rest of the warm-up runs
  // (a second: far more than the first calls take), those samples are
  // dropped, and sampling starts over.
  MeasureSettings m = early_stop_settings(10.0);
  m.warmup = 1s;
  ScriptedKernel k{{1000.0, 40.0, 40.0, 40.0, 11.0, 11.0, 11.0, 10.0}};
  const Sampling s = collect_samples(m, {}, [&](std::size_t hint) {
    if (k.calls >= 7) std::this_thread::sleep_for(100us);  // no busy loop while the warm-up finishes
    return k(hint);
  });
  EXPECT_FALSE(s.cut_short);
  ASSERT_EQ(s.samples.size(), 5u);
  for (auto t : s.samples) EXPECT_DOUBLE_EQ(t.count(), 10.0);  // none of the 11s
  EXPECT_GT(k.calls, 1 + 2 * kEarlyStopSamples + 5);
}

TEST(EarlyStop, HintsKeepGroupsNoLargerThanTheVerdictNeeds) {
  // A backend that enqueues samples in groups is told how many calls the
  // loop will make before it next decides: one for the first warm-up call,
  // then up to the verdict, then up to max_samples.
  ScriptedKernel k{{10.0}};
  MeasureSettings m = early_stop_settings(10.0);
  const Sampling s = run(m, k);
  EXPECT_FALSE(s.cut_short);
  const std::vector<std::size_t> expected{1, 3, 2, 1, 47, 46};
  EXPECT_EQ(k.at_most, expected);
  // Without a bar the warm-up is timed, not counted.
  ScriptedKernel plain{{10.0}};
  m.best_so_far.reset();
  (void)run(m, plain);
  const std::vector<std::size_t> unbounded{SIZE_MAX, 50, 49, 48, 47, 46};
  EXPECT_EQ(plain.at_most, unbounded);
}
