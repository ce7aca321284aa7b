#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

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
  // sample stdev of 1..4 is sqrt(5/3)
  EXPECT_NEAR(st.noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
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
  });
  EXPECT_EQ(samples.size(), 7u);
  EXPECT_EQ(calls, 8);  // one warm-up call, then the samples
}

TEST(CollectSamples, NoisyRunsToMaxSamples) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 3;
  m.max_samples = 40;
  m.max_time = 10s;
  m.target_noise = 0.01;
  int i = 0;
  auto samples = collect_samples(m, {}, [&] { return Microseconds(++i % 2 ? 10.0 : 20.0); });
  EXPECT_EQ(samples.size(), 40u);
}

TEST(CollectSamples, TimeCapEndsANoisyKernel) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 2;
  m.max_samples = 1000000;
  m.max_time = 50ms;
  m.target_noise = 0.0;
  auto t0 = std::chrono::steady_clock::now();
  auto samples = collect_samples(m, {}, [] {
    std::this_thread::sleep_for(1ms);
    return Microseconds(1000.0);
  });
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(samples.size(), 2u);
  EXPECT_LT(samples.size(), 200u);
  EXPECT_LT(took, 2s);
}

TEST(CollectSamples, ColdCacheFlushesBeforeEverySample) {
  MeasureSettings m;
  m.warmup = 0us;
  m.min_samples = 5;
  m.max_samples = 5;
  m.cache = CacheMode::cold;
  int flushes = 0, runs = 0;
  collect_samples(m, [&] { ++flushes; }, [&] { ++runs; return Microseconds(1.0); });
  EXPECT_EQ(flushes, runs);
  m.cache = CacheMode::hot;
  flushes = 0;
  collect_samples(m, [&] { ++flushes; }, [&] { return Microseconds(1.0); });
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
  collect_samples(m, [&] { ++flushes; order.push_back("flush"); },
                  [&] { ++runs; order.push_back("run"); return Microseconds(1.0); });
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
  collect_samples(m, {}, [&] {
    ++calls;
    std::this_thread::sleep_for(2ms);
    return Microseconds(2000.0);
  });
  EXPECT_GE(calls, 5);  // ~10 warm-up calls of 2 ms, then one sample
}
