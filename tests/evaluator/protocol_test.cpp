// The worker protocol: what a request carries reaches the worker unchanged.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

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

// The Triton worker (python/tunekit_triton) reads shapes, setup functions,
// `pass: false` and measure.graph; other workers' requests carry none of them,
// so their reference-cache keys stay as they were.
TEST(Protocol, TritonFieldsRoundTripAndStayOutOtherwise) {
  WorkerRequest r;
  ResolvedArgument a;
  a.name = "ids";
  a.type = ElementType::i32;
  a.shape = {4, 8};
  a.count = 32;
  a.setup = "/k/moe.py:moe_setup";
  a.passed = false;
  r.arguments.push_back(a);
  r.measure.graph = true;
  const auto j = to_json(r);
  EXPECT_EQ(j.at("args")[0].at("shape"), nlohmann::json::array({4, 8}));
  EXPECT_EQ(j.at("args")[0].at("pass"), false);
  EXPECT_TRUE(j.at("measure").at("graph").get<bool>());
  const WorkerRequest back = request_from_json(j);
  EXPECT_EQ(back.arguments[0].shape, a.shape);
  EXPECT_EQ(back.arguments[0].setup, a.setup);
  EXPECT_FALSE(back.arguments[0].passed);
  EXPECT_TRUE(back.measure.graph);

  WorkerRequest plain;
  ResolvedArgument b;
  b.name = "x";
  b.count = 16;
  plain.arguments.push_back(b);
  const auto k = to_json(plain);
  for (const char* key : {"shape", "setup", "pass"}) EXPECT_FALSE(k.at("args")[0].contains(key)) << key;
  EXPECT_FALSE(k.at("measure").contains("graph"));
}

// Item 8: only a line with the worker's token is an answer; anything else on
// the channel (a kernel that found the descriptor) or a malformed answer is
// said, never thrown, so it fails one config instead of the run.
TEST(Protocol, OnlyTokenedWellFormedLinesAreAnswers) {
  WorkerAnswer a;
  a.result.status = Status::crash;
  a.result.fault = Fault::environment;
  a.result.error = "x";
  a.result.verify = Microseconds(1500);
  const std::string good = "tk0123 " + to_json(a).dump();
  auto parsed = parse_answer(good, "tk0123");
  ASSERT_TRUE(std::holds_alternative<WorkerAnswer>(parsed));
  EXPECT_EQ(std::get<WorkerAnswer>(parsed).result.status, Status::crash);
  EXPECT_EQ(std::get<WorkerAnswer>(parsed).result.fault, Fault::environment);
  EXPECT_DOUBLE_EQ(std::get<WorkerAnswer>(parsed).result.verify.count(), 0.0015);

  const std::vector<std::string> bad_lines{"garbage",
                                           "tk0123",
                                           "tk0123 ",
                                           "tk0123 {",
                                           "tk0123 [1, 2]",
                                           "tk0123 {\"status\": 7}",
                                           "tk9999 " + to_json(a).dump(),
                                           to_json(a).dump(),
                                           "tk0123 {\"status\": \"ok\", \"samples_us\": \"x\"}"};
  for (const std::string& bad : bad_lines) {
    auto r = parse_answer(bad, "tk0123");
    ASSERT_TRUE(std::holds_alternative<std::string>(r)) << bad;
    EXPECT_FALSE(std::get<std::string>(r).empty());
  }
}

// A worker's first line says it has started: with its token, and nothing
// else passes for it (not an answer, not another worker's line).
TEST(Protocol, TheReadyLineIsTokenedAndNothingElsePassesForIt) {
  EXPECT_EQ(not_ready(ready_line("tk0123"), "tk0123"), std::nullopt);
  EXPECT_EQ(not_ready("tk0123 {\"ready\": true}", "tk0123"), std::nullopt);  // Python's json.dumps
  EXPECT_EQ(not_ready(ready_line(""), ""), std::nullopt);                    // a worker started by hand
  WorkerAnswer a;
  for (const std::string& bad : {ready_line("tk9999"), std::string(R"({"ready":true})"), std::string("tk0123 hello"),
                                 std::string(R"(tk0123 {"ready":false})"), "tk0123 " + to_json(a).dump()}) {
    auto why = not_ready(bad, "tk0123");
    ASSERT_TRUE(why) << bad;
    EXPECT_FALSE(why->empty());
  }
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
