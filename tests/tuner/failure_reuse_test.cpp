#include <gtest/gtest.h>

#include "tuner/detail/failure_reuse.hpp"

namespace tunekit::detail {
namespace {

constexpr const char* kHot = "timeout=10s atol=1e-06 rtol=0 cache=hot";

TEST(FailureReuse, ATimeoutStandsUnderALimitNoLongerThanItsOwn) {
  EXPECT_TRUE(failure_stands(Status::timeout, kHot, kHot));
  EXPECT_TRUE(failure_stands(Status::timeout, kHot, "timeout=2.5s atol=1e-06 rtol=0 cache=hot"));
  EXPECT_FALSE(failure_stands(Status::timeout, kHot, "timeout=60s atol=1e-06 rtol=0 cache=hot"));
  // Tolerances do not make a kernel faster; a cold cache's flushes count
  // against the limit.
  EXPECT_TRUE(failure_stands(Status::timeout, kHot, "timeout=10s atol=0.1 rtol=0.1 cache=hot"));
  EXPECT_FALSE(failure_stands(Status::timeout, kHot, "timeout=10s atol=1e-06 rtol=0 cache=cold"));
}

// The limit covers the warm-up and the sampling: a shorter limit that
// leaves the kernel more of itself (less sampling) might not run out.
TEST(FailureReuse, ATimeoutStandsUnderAShorterLimitOnlyWithTheSameSampling) {
  const char* then = "timeout=10s atol=0 rtol=0 warmup=0.05s max_time=9s min_samples=5 cache=hot";
  EXPECT_TRUE(failure_stands(Status::timeout, then,
                             "timeout=5s atol=0 rtol=0 warmup=0.05s max_time=9s min_samples=5 cache=hot"));
  EXPECT_FALSE(failure_stands(Status::timeout, then,
                              "timeout=5s atol=0 rtol=0 warmup=0.05s max_time=0.1s min_samples=5 cache=hot"));
  EXPECT_FALSE(
      failure_stands(Status::timeout, then, "timeout=5s atol=0 rtol=0 warmup=1s max_time=9s min_samples=5 cache=hot"));
  EXPECT_FALSE(failure_stands(Status::timeout, then,
                              "timeout=5s atol=0 rtol=0 warmup=0.05s max_time=9s min_samples=2 cache=hot"));
  // A crash does not care.
  EXPECT_TRUE(
      failure_stands(Status::crash, then, "timeout=5s atol=0 rtol=0 warmup=1s max_time=0.1s min_samples=2 cache=cold"));
}

TEST(FailureReuse, AProgramsRunLimitCountsLikeTheTimeout) {
  const char* then = "timeout=10s atol=0 rtol=0 run_timeout=30s build_timeout=300s";
  EXPECT_TRUE(failure_stands(Status::timeout, then, "timeout=10s atol=0 rtol=0 run_timeout=20s build_timeout=60s"));
  EXPECT_FALSE(failure_stands(Status::timeout, then, "timeout=10s atol=0 rtol=0 run_timeout=90s build_timeout=300s"));
  // Without run_timeout a run is bounded by the timeout: 10 s, shorter.
  EXPECT_TRUE(failure_stands(Status::timeout, then, "timeout=10s atol=0 rtol=0 build_timeout=300s"));
  EXPECT_FALSE(failure_stands(Status::timeout, then, "timeout=40s atol=0 rtol=0 build_timeout=300s"));
  EXPECT_TRUE(failure_stands(Status::timeout, "timeout=10s atol=0 rtol=0 build_timeout=300s",
                             "timeout=90s atol=0 rtol=0 run_timeout=5s build_timeout=300s"));
}

// Where the spec fixes run_timeout, measure.timeout bounds no run of the
// program: another one (an edit of the spec) leaves its stored timeouts
// standing. (tunekit tune --timeout sets run_timeout too, and is judged by
// it.)
TEST(FailureReuse, AnotherTimeoutUnderAFixedRunLimitKeepsAProgramsTimeouts) {
  const char* then = "timeout=10s atol=0 rtol=0 run_timeout=30s build_timeout=300s";
  EXPECT_TRUE(failure_stands(Status::timeout, then, "timeout=60s atol=0 rtol=0 run_timeout=30s build_timeout=300s"));
  EXPECT_TRUE(failure_stands(Status::timeout, then, "timeout=2s atol=0 rtol=0 run_timeout=30s build_timeout=300s"));
}

TEST(FailureReuse, AFailedBuildDependsOnlyOnTheBuildsLimit) {
  EXPECT_TRUE(failure_stands(Status::compile_error, kHot, "timeout=99s atol=1 rtol=1 cache=cold"));
  EXPECT_TRUE(failure_stands(Status::compile_error, "timeout=10s build_timeout=60s", "timeout=10s build_timeout=30s"));
  EXPECT_FALSE(
      failure_stands(Status::compile_error, "timeout=10s build_timeout=60s", "timeout=10s build_timeout=600s"));
  EXPECT_FALSE(failure_stands(Status::compile_error, kHot, "timeout=10s build_timeout=600s"));
}

TEST(FailureReuse, AWrongResultDependsOnlyOnTheTolerances) {
  EXPECT_TRUE(failure_stands(Status::wrong_result, kHot, "timeout=60s atol=1e-06 rtol=0 cache=cold"));
  EXPECT_FALSE(failure_stands(Status::wrong_result, kHot, "timeout=10s atol=0.01 rtol=0 cache=hot"));
  EXPECT_FALSE(failure_stands(Status::wrong_result, kHot, "timeout=10s atol=1e-06 rtol=0.001 cache=hot"));
}

TEST(FailureReuse, ACrashALaunchErrorAndAResourceLimitDependOnNoSetting) {
  for (Status s : {Status::crash, Status::launch_error, Status::resource_limit})
    EXPECT_TRUE(failure_stands(s, kHot, "timeout=60s atol=0.5 rtol=0.5 cache=cold build_timeout=900s")) << to_string(s);
}

TEST(FailureReuse, SettingsNotKeptOrNotReadStandOnlyForTheSameText) {
  EXPECT_FALSE(failure_stands(Status::crash, "", kHot));  // a store from before settings were kept
  EXPECT_FALSE(failure_stands(Status::crash, "something else", kHot));
  EXPECT_TRUE(failure_stands(Status::crash, "something else", "something else"));
  EXPECT_FALSE(failure_stands(Status::timeout, "timeout=ten atol=0", "timeout=2s atol=0"));
  EXPECT_TRUE(failure_stands(Status::timeout, "timeout=ten atol=0", "timeout=ten atol=0"));
}

}  // namespace
}  // namespace tunekit::detail
