// The worker protocol: what a request carries reaches the worker unchanged.
#include <gtest/gtest.h>

#include <stdexcept>

#include "evaluator/detail/protocol.hpp"

using namespace tunekit;
using namespace tunekit::detail;

// The worker picks its flush by the mode: cold and cold-read must not both
// arrive as "a cold cache".
TEST(Protocol, CacheModeRoundTrips) {
  for (CacheMode mode : {CacheMode::cold, CacheMode::hot, CacheMode::cold_read}) {
    WorkerRequest r;
    r.measure.cache = mode;
    r.flush_bytes = 256'000'000;
    const auto j = to_json(r);
    EXPECT_EQ(j.at("measure").at("cache"), std::string(to_string(mode)));
    const WorkerRequest back = request_from_json(j);
    EXPECT_EQ(back.measure.cache, mode) << to_string(mode);
    EXPECT_EQ(back.flush_bytes, r.flush_bytes);
  }
}

TEST(Protocol, UnknownCacheModeIsRejected) {
  auto j = to_json(WorkerRequest{});
  j["measure"]["cache"] = "warm";
  EXPECT_THROW(request_from_json(j), std::invalid_argument);
}

// The early stop's factor and the best so far reach the worker, whose
// measurement core cuts a loser short; no best (the first config of a size)
// arrives as none.
TEST(Protocol, EarlyStopSettingsRoundTrip) {
  WorkerRequest r;
  r.measure.early_stop = 2.5;
  r.measure.best_so_far = Microseconds(123.25);
  WorkerRequest back = request_from_json(to_json(r));
  EXPECT_DOUBLE_EQ(back.measure.early_stop, 2.5);
  ASSERT_TRUE(back.measure.best_so_far);
  EXPECT_DOUBLE_EQ(back.measure.best_so_far->count(), 123.25);
  r.measure.best_so_far.reset();
  r.measure.early_stop = 0;
  back = request_from_json(to_json(r));
  EXPECT_FALSE(back.measure.best_so_far);
  EXPECT_DOUBLE_EQ(back.measure.early_stop, 0);
}

TEST(Protocol, ASlowerAnswerKeepsItsSamples) {
  WorkerAnswer a;
  a.result.status = Status::slower;
  a.result.samples = {Microseconds(40), Microseconds(41), Microseconds(42)};
  const WorkerAnswer back = answer_from_json(to_json(a));
  EXPECT_EQ(back.result.status, Status::slower);
  EXPECT_EQ(back.result.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(back.result.stats.median.count(), 41);
}
