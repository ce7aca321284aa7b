// A trial and a size report cross from a rank to rank 0 whole: rank 0
// stores and reports exactly what the rank measured.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "distribute/detail/job.hpp"

using namespace tunekit;

namespace {

TrialRecord full_trial() {
  TrialRecord t;
  t.id = 42;
  t.spec_hash = "abc";
  t.hash_without_toolchain = "def";
  t.toolchain = "c++ (Fake 12.2.0) 12.2.0 for x86_64-linux-gnu";
  t.kernel = "gemm";
  t.device = "cpu: test (2 cores)";
  t.size = Bindings{{"M", Value(512)}, {"name", Value("tall")}};
  t.config.set("BM", Value(64));
  t.config.set("RATIO", Value(0.5));
  t.config.set("LAYOUT", Value("row"));
  t.status = Status::slower;
  t.error = "cut short";
  t.stats.median = Microseconds(12.5);
  t.stats.min = Microseconds(11);
  t.stats.max = Microseconds(19.25);
  t.stats.mean = Microseconds(13);
  t.stats.noise = std::numeric_limits<double>::infinity();  // JSON has none: it must survive anyway
  t.stats.spread = 0.125;
  t.stats.bimodal = true;
  t.stats.count = 3;
  t.samples = {Microseconds(11), Microseconds(12.5), Microseconds(19.25)};
  t.verification = {true, false, 0.5, 0.25, "C[7]: 3 != 4"};
  t.build_time = Seconds(1.5);
  t.eval_time = Seconds(0.25);
  t.verify_time = Seconds(0.125);
  t.machine = R"({"device": "x"})";
  t.created_at = "2026-12-04T22:00:00Z";
  t.origin = "transfer";
  t.fault = Fault::environment;
  t.settings = "timeout=60";
  t.slower_than = SlowerThan{3, Microseconds(4)};
  t.confirmed = true;
  t.resources = {{"registers", 168}, {"spills", 3}};
  t.cpu_wait_share = 0.25;
  return t;
}

void expect_same(const TrialRecord& a, const TrialRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.spec_hash, b.spec_hash);
  EXPECT_EQ(a.hash_without_toolchain, b.hash_without_toolchain);
  EXPECT_EQ(a.toolchain, b.toolchain);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(size_key(a.size), size_key(b.size));
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.config.key(), b.config.key());  // the order of its entries too
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.stats.median, b.stats.median);
  EXPECT_EQ(a.stats.min, b.stats.min);
  EXPECT_EQ(a.stats.max, b.stats.max);
  EXPECT_EQ(a.stats.mean, b.stats.mean);
  EXPECT_EQ(a.stats.noise, b.stats.noise);
  EXPECT_EQ(a.stats.spread, b.stats.spread);
  EXPECT_EQ(a.stats.bimodal, b.stats.bimodal);
  EXPECT_EQ(a.stats.count, b.stats.count);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.verification.checked, b.verification.checked);
  EXPECT_EQ(a.verification.passed, b.verification.passed);
  EXPECT_EQ(a.verification.max_abs_diff, b.verification.max_abs_diff);
  EXPECT_EQ(a.verification.max_rel_err, b.verification.max_rel_err);
  EXPECT_EQ(a.verification.detail, b.verification.detail);
  EXPECT_EQ(a.build_time, b.build_time);
  EXPECT_EQ(a.eval_time, b.eval_time);
  EXPECT_EQ(a.verify_time, b.verify_time);
  EXPECT_EQ(a.machine, b.machine);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.fault, b.fault);
  EXPECT_EQ(a.settings, b.settings);
  EXPECT_EQ(a.slower_than, b.slower_than);
  EXPECT_EQ(a.confirmed, b.confirmed);
  EXPECT_EQ(a.resources, b.resources);
  EXPECT_EQ(a.cpu_wait_share, b.cpu_wait_share);
}

}  // namespace

TEST(Wire, ATrialCrossesWhole) {
  const TrialRecord t = full_trial();
  // Through text, as a transport carries it.
  const auto text = detail::trial_to_json(t).dump();
  const TrialRecord back = detail::trial_from_json(nlohmann::ordered_json::parse(text));
  expect_same(t, back);

  TrialRecord plain;  // ok, never cut short: no bar
  plain.stats.noise = std::nan("");
  const TrialRecord plain_back = detail::trial_from_json(detail::trial_to_json(plain));
  EXPECT_FALSE(plain_back.slower_than);
  EXPECT_TRUE(std::isnan(plain_back.stats.noise));
  EXPECT_EQ(plain_back.status, Status::ok);
}

TEST(Wire, ASizeReportCrossesWhole) {
  SizeReport s;
  s.size = Bindings{{"N", Value(4096)}};
  s.trials = {full_trial(), full_trial()};
  s.trials[1].config.set("BM", Value(128));
  s.best = 1;
  s.baseline = 0;
  s.baseline_is_spec_default = true;
  s.error = "";
  s.commands = {{"./app", "--bm", "64"}, {}};
  s.confirmed = {1, 0};
  s.strategy = "auto: bayes";  // the console's and the JSON's search line
  s.stopped_part_way = StoppedPartWay{StoppedPartWay::Cause::time_budget, 2, 180, 1};  // a rank's --max-time ran out
  const SizeReport back =
      detail::size_report_from_json(nlohmann::ordered_json::parse(detail::size_report_to_json(s).dump()));
  EXPECT_EQ(size_key(back.size), size_key(s.size));
  ASSERT_EQ(back.trials.size(), 2u);
  expect_same(s.trials[1], back.trials[1]);
  EXPECT_EQ(back.best, s.best);
  EXPECT_EQ(back.baseline, s.baseline);
  EXPECT_TRUE(back.baseline_is_spec_default);
  EXPECT_EQ(back.commands, s.commands);
  EXPECT_EQ(back.confirmed, s.confirmed);
  EXPECT_EQ(back.strategy, s.strategy);
  ASSERT_TRUE(back.stopped_part_way);
  EXPECT_EQ(back.stopped_part_way->cause, StoppedPartWay::Cause::time_budget);
  EXPECT_EQ(back.stopped_part_way->measured, 2u);
  EXPECT_EQ(back.stopped_part_way->valid, 180u);
  EXPECT_EQ(back.stopped_part_way->resumed, 1u);

  // A rank of a tunekit before the note sends none: its size reads as one
  // not stopped part way, not as an error that ends the job.
  auto without = detail::size_report_to_json(s);
  without.erase("stopped_part_way");
  EXPECT_FALSE(detail::size_report_from_json(without).stopped_part_way);

  SizeReport empty;  // a size with no valid config: no best, no baseline
  empty.error = "no config is valid at this size";
  const SizeReport empty_back = detail::size_report_from_json(detail::size_report_to_json(empty));
  EXPECT_FALSE(empty_back.best);
  EXPECT_FALSE(empty_back.baseline);
  EXPECT_EQ(empty_back.error, empty.error);
  EXPECT_FALSE(empty_back.stopped_part_way);
}
