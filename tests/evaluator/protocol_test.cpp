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
